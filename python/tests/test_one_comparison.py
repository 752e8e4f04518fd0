"""One comparison (issue 22): kcross.judge.comparison.compare() is the only place that
pairs sides and judges them, and kcross.judge.pairing the only place that refuses sides
in different units.  check, the HTML report, history, the labs' tables, profile
differences and reproduce each paired their sides and refused mixed units their own way
(the refusal was worded three ways); these tests fail when a module outside kcross.judge
does either again.  They read the source (``ast``), so a comment or a docstring never
trips them."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from conftest import PYTHON_DIR

PACKAGE = PYTHON_DIR / "kcross"
JUDGE = PACKAGE / "judge"

# rounds/aa.py's A/A experiment judges the same pairs of one benchmark under three designs
# (samples pooled, processes, processes with the noise it measures) to show what each
# design would conclude: it builds its Pairs and calls the verdict on them on purpose,
# one design at a time, which no comparison of sides expresses.  It pairs nothing: its
# two copies come from one run of one benchmark.
EXEMPT = {"rounds/aa.py": "the A/A experiment judges one pair under three designs on purpose"}

# --format ministat prints ministat's own arithmetic (a mean, Student's t) for each paired
# benchmark, never kcross's verdict: it takes kcross.judge.pairing's rows (the one pairing,
# mixed units refused there) without judging them, so it calls pair() and not compare().
PAIRING_READERS = {"views/ministat_report.py": "ministat's method on the judge's pairing"}

# A refusal's words: an error raised about units, outside the one refusal.
REFUSAL = re.compile(r"\bunits\b|cannot be compared|never compares?\b")


def sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if JUDGE in path.parents:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in EXEMPT:
            continue
        yield rel, ast.parse(path.read_text(), str(path))


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _strings(node: ast.AST) -> str:
    """The text of every string constant under ``node`` (f-strings' literal parts too)."""
    return " ".join(n.value for n in ast.walk(node)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str))


def offences(rel: str, tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            called = _name(node.func)
            if called == "Pair":
                found.append(f"{where}: builds a Pair (call kcross.judge.comparison.compare)")
            if called is not None and called.endswith("Error") and REFUSAL.search(
                    _strings(node)):
                found.append(f"{where}: refuses units itself (kcross.judge.pairing does)")
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names = {a.name for a in node.names}
            if node.module.endswith("judge.verdict") and names & {"Pair", "judge"}:
                found.append(f"{where}: imports {sorted(names & {'Pair', 'judge'})} from "
                             "kcross.judge.verdict (compare() judges)")
            if node.module.endswith("judge.pairing") and "pair" in names \
                    and rel not in PAIRING_READERS:
                found.append(f"{where}: pairs sides itself (compare() pairs)")
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            sides = [node.left, *node.comparators]
            if all(isinstance(s, ast.Attribute) and s.attr == "unit" for s in sides):
                found.append(f"{where}: compares two sides' units itself "
                             "(kcross.judge.pairing refuses mixed units)")
    return found


def test_only_the_judge_pairs_judges_and_refuses_mixed_units() -> None:
    found = [o for rel, tree in sources() for o in offences(rel, tree)]
    assert found == []


def test_the_checker_sees_a_planted_violation() -> None:
    """The checker itself: each kind of private comparison it must catch."""
    planted = ast.parse(
        "from .judge.verdict import Pair, judge\n"
        "from .judge.pairing import pair\n"
        "def f(a, b):\n"
        "    if a.unit != b.unit:\n"
        "        raise UserError(f'{a.label} is in {a.unit}: different units')\n"
        "    return judge([Pair('x', a, b)])\n")
    found = sorted(offences("planted.py", planted))
    assert [o.split(": ", 1)[0] for o in found] == [
        "planted.py:1", "planted.py:2", "planted.py:4", "planted.py:5", "planted.py:6"], found


def test_exemptions_are_real() -> None:
    """An exempt module still exists and still needs its exemption."""
    for rel in EXEMPT:
        path = PACKAGE / rel
        assert path.exists(), rel
        assert offences(rel, ast.parse(path.read_text())), f"{rel} no longer needs exempting"
    for rel in PAIRING_READERS:
        assert "from ..judge.pairing import pair" in (PACKAGE / rel).read_text(), rel


def test_every_comparing_module_calls_compare() -> None:
    """The callers ask kcross.judge.comparison (check through kcross.judge.gate)."""
    callers = {"cli/compare.py": "compare", "report/model.py": "compare",
               "history/trend.py": "compare_together", "lab/report.py": "compare",
               "lab/profile_diff.py": "compare", "reproduce/outcome.py": "compare_together",
               "cli/check.py": "check"}
    for rel, function in callers.items():
        tree = ast.parse((PACKAGE / rel).read_text())
        imported = {(node.module or "").rsplit(".", 1)[-1] + "." + a.name
                    for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    for a in node.names}
        wanted = "gate.check" if function == "check" else f"comparison.{function}"
        assert wanted in imported, (rel, wanted)


def test_one_side_type() -> None:
    """"Side" means one thing: kcross.sides.Side, the samples a comparison's column holds."""
    defined = [f"{p.relative_to(PACKAGE).as_posix()}" for p in PACKAGE.rglob("*.py")
               if re.search(r"^class Side\b", p.read_text(), re.M)]
    assert defined == ["sides.py"]


def test_the_mixed_unit_refusal_is_worded_once() -> None:
    """One wording, kcross.judge.pairing's; kcross check and compare both say it."""
    texts = [p for p in PACKAGE.rglob("*.py") if "compares time with instruction counts"
             in p.read_text()]
    assert [p.relative_to(PACKAGE).as_posix() for p in texts] == ["judge/pairing.py"]
