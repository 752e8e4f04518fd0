"""The rule of a change of exact counts in every view (issue 24): a row that moved by less
than one instruction per op is the timer's share, never a change, and is said apart.

A lab pair made from the captured ppc64le sc run (data/lab-ppc64le-sc.jsonl): B is A with
three rows moved by 0.3 instruction per op (SHARE: kc_cpu 4.0 -> 4.3 is +7.5%, beyond
check's +5%) and two by 5 (PATH).  compare (table, benchstat, markdown), check, history,
the report (its opening, its table and its forest plot), reproduce's changes and the
lab's table all count the PATH rows only and name the SHARE rows apart; the comparison
record (compare --json, the json and csv exports, check --json) keeps its fields as they
were: the direction of the counts, "significant", and the note that says it.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import PYTHON_DIR, Kcross
from kcross.judge.categories import Category
from kcross.judge.verdict import SUB_INSTRUCTION, TIMER_SHARE, Judgement

SC = PYTHON_DIR / "tests" / "data" / "lab-ppc64le-sc.jsonl"

SHARE = {"cpuid/kc_cpu": 0.3, "percpu/inc-plain": 0.3, "syscall/getppid-glibc": -0.3}
PATH = {"syscall/getppid-inline": 5.0, "syscall/write-devnull": -5.0}
LATER = "2026-11-24T18:14:48Z"


def records(shift: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The captured sc run; with ``shift``, a day later and those rows moved by that many
    instructions per op (each sample, and the guest clock's ticks it comes from)."""
    found = [json.loads(line) for line in SC.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    if shift is None:
        return found
    found = copy.deepcopy(found)
    found[0]["host"]["time"] = LATER
    hz = found[0]["timer"]["hz"]
    for r in found:
        delta = shift.get(f"{r.get('suite')}/{r.get('name')}")
        if r["type"] == "result" and delta:
            r["samples"] = [x + delta for x in r["samples"]]
            r["ticks"] = [x + delta * hz / 1e9 for x in r["ticks"]]
    return found


def write(path: Path, found: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in found))
    return path


@pytest.fixture
def db(kcross: Kcross, tmp_path: Path) -> str:
    """A store of A (run 1) and B (run 2)."""
    path = str(tmp_path / "k.db")
    for name, found in (("a.jsonl", records()), ("b.jsonl", records({**SHARE, **PATH}))):
        proc = kcross("import", str(write(tmp_path / name, found)), "--db", path)
        assert proc.returncode == 0, proc.stderr
    return path


def share_line(names: list[str]) -> str:
    return f"{len(names)} rows moved by {TIMER_SHARE} (not a change of the path"


def test_the_judge_gives_the_timer_share_its_own_category() -> None:
    """One owner: the judge's category says it, so nothing that counts, labels or gates
    a change re-implements the rule."""
    found = judged()
    assert {n for n, j in found.items() if j.category.changed} == set(PATH)
    assert {n for n, j in found.items() if j.category is Category.TIMER_SHARE} == set(SHARE)
    assert all(j.note == SUB_INSTRUCTION for n, j in found.items() if n in SHARE)


def test_compare_names_the_timer_share_apart(kcross: Kcross, db: str) -> None:
    proc = kcross("compare", "1", "2", "--db", db)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.splitlines())   # the note, wrapped at 120 columns
    line = text[text.index("rows moved by") - 2:text.index("median [95% CI]")]
    assert line.startswith(share_line(list(SHARE))), line
    assert all(n in line for n in SHARE) and not any(n in line for n in PATH)


def test_benchstat_shows_no_change_for_the_timer_share(kcross: Kcross, db: str) -> None:
    proc = kcross("compare", "1", "2", "--db", db, "--format", "benchstat")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.split()}
    for name in SHARE:
        assert " ~ " in rows[name] and "% (exact" not in rows[name], rows[name]
    for name in PATH:
        assert "% (exact" in rows[name], rows[name]


def test_the_comparison_record_keeps_its_fields(kcross: Kcross, db: str,
                                                tmp_path: Path) -> None:
    """compare --json and the csv export: category by direction, significant (the counts
    differ), the note saying the timer's share: as before (the format unchanged)."""
    proc = kcross("compare", "1", "2", "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(line) for line in proc.stdout.splitlines()]
    verdicts = {r["name"]: r["verdict"] for r in record["rows"]}
    out = tmp_path / "c.csv"
    proc = kcross("compare", "1", "2", "--db", db, "--export", "csv", str(out))
    assert proc.returncode == 0, proc.stderr
    table = {r["benchmark"]: r for r in csv.DictReader(io.StringIO(out.read_text()))}
    for name, delta in {**SHARE, **PATH}.items():
        direction = "higher" if delta > 0 else "lower"
        assert verdicts[name]["category"] == direction and verdicts[name]["significant"]
        assert table[name]["category"] == direction and table[name]["significant"] == "true"
        note = SUB_INSTRUCTION if name in SHARE else None
        assert verdicts[name]["note"] == note and table[name]["note"] == (note or "")
    assert {n for n, v in verdicts.items() if v["significant"]} == set(SHARE) | set(PATH)


def test_the_markdown_export_names_the_timer_share_apart(kcross: Kcross, db: str,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "c.md"
    proc = kcross("compare", "1", "2", "--db", db, "--export", "markdown", str(out))
    assert proc.returncode == 0, proc.stderr
    assert share_line(list(SHARE)) in out.read_text()


def test_check_does_not_fail_on_the_timer_share(kcross: Kcross, db: str) -> None:
    """kc_cpu 4.0 -> 4.3 is +7.5%, beyond the default +5%: the timer's share, no change,
    and no regression; the summary counts the two changes of the path."""
    proc = kcross("check", "--baseline", "1", "2", "--db", db)
    assert proc.returncode == 0, proc.stdout
    out = proc.stdout
    summary = " ".join(out[out.index("PASS: "):].split())   # wrapped at 120 columns
    assert summary == ("PASS: no benchmark shown beyond +5% (1 more instructions, 1 fewer "
                       "instructions, 3 moved by the timer's share, 31 identical; 36 "
                       "compared)"), summary
    proc = kcross("check", "--baseline", "1", "2", "--db", db, "--json")
    (outcome,) = [json.loads(line) for line in proc.stdout.splitlines()]
    rows = {r["benchmark"]: r for r in outcome["rows"]}
    assert outcome["passed"] and not any(r["fails"] for r in rows.values())
    for name, delta in SHARE.items():   # the record's category, as before
        assert rows[name]["category"] == ("higher" if delta > 0 else "lower")
    # a tolerance of 0: the 5-instruction rise fails, the timer's share never does
    proc = kcross("check", "--baseline", "1", "2", "--db", db, "--max-regression", "0",
                  "--json")
    assert proc.returncode == 1
    (outcome,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {r["benchmark"] for r in outcome["rows"] if r["fails"]} == {"syscall/getppid-inline"}


def test_history_calls_the_timer_share_no_change(kcross: Kcross, db: str) -> None:
    proc = kcross("history", "*", "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    second = {p["benchmark"]: p for p in map(json.loads, proc.stdout.splitlines())
              if p.get("type") == "history" and p["run"] == 2}
    assert {n for n, p in second.items() if p["verdict"] == "timer's share"} == set(SHARE)
    assert {n for n, p in second.items()
            if p["verdict"] in ("more instructions", "fewer instructions")} == set(PATH)
    proc = kcross("history", "kc_cpu", "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert "timer's share" in proc.stdout and "more instructions" not in proc.stdout


def stored_runs(db: str) -> list[Any]:
    from kcross.store import Store, resolve

    store = Store.open(resolve(db), write=False)
    assert store is not None
    try:
        return [store.load_run("1"), store.load_run("2")]
    finally:
        store.close()


def test_the_report_counts_changes_of_the_path(db: str) -> None:
    """The report's "What changed": its counts, its list of changes and a line naming the
    timer's share; its table's classes; its forest plot colours only the changes."""
    from kcross import report
    from kcross.report import plots
    from markupsafe import escape

    built = report.build(stored_runs(db))
    (section,) = built.comparisons
    assert section.counts == ("1 more instructions, 1 fewer instructions, 3 moved by the "
                              "timer's share, 31 identical")
    assert {line.split(":")[0] for line in section.changed} == set(PATH)
    assert len(section.shares) == 1 and section.shares[0].startswith(share_line(list(SHARE)))
    classes = {row.bench: row.verdict_class for row in section.rows}
    assert {n for n, c in classes.items() if c != "same"} == set(PATH)
    assert str(escape(section.shares[0])) in report.render(built)
    # the forest plot: the timer's share drawn as no change, as if its rows were identical
    def colours(svg: str | None) -> list[int]:
        assert svg is not None
        return [svg.lower().count(c.lower()) for c in (plots.SLOWER, plots.FASTER)]

    drawn = colours(plots.forest(section))
    assert all(drawn)
    rows = [row if row.bench in PATH or row.value is None else
            replace(row, value=replace(row.value, category=Category.IDENTICAL))
            for row in section.rows]
    assert colours(plots.forest(replace(section, rows=rows))) == drawn


def pair() -> tuple[Any, Any]:
    """A and B as the lab's counting runs (kcross.lab.session.Counted)."""
    from kcross.importer import stream_of
    from kcross.lab.kernel import Kernel
    from kcross.lab.machines import Guest, arch
    from kcross.lab.session import Counted

    kernel = Path("/lab/vmlinux")     # never read: nothing here shows a kernel file
    a, b = (Counted(guest=Guest(arch("ppc64le"), kernel), kernel=Kernel("ppc64le", kernel),
                    variant=None, stream=stream_of(found, name))
            for name, found in (("a", records()), ("b", records({**SHARE, **PATH}))))
    return a, b


def judged() -> dict[str, Judgement]:
    from kcross.lab.report import judged as lab_judged

    return lab_judged(*pair(), "A", "B")


def test_reproduce_says_the_timer_share() -> None:
    from kcross.reproduce.outcome import ChangeRow
    from kcross.views.reproduce import change_text

    found = judged()
    share = change_text(ChangeRow("A", "B", "-", found["cpuid/kc_cpu"]))
    assert share == f"B/A 1.075: +0.3 instructions (+7.5%); {SUB_INSTRUCTION}", share
    path = change_text(ChangeRow("A", "B", "-", found["syscall/getppid-inline"]))
    assert TIMER_SHARE not in path and "+5.0 instructions" in path


def test_the_lab_table_counts_changes_of_the_path() -> None:
    from kcross.lab.report import compare_table

    table = compare_table(*pair(), "A", "B")
    assert table.title is not None and "(counting mode; 2 of 36 changed)" in table.title
    assert any(n.startswith(share_line(["getppid-glibc", "kc_cpu", "inc-plain"]))
               for n in table.notes), table.notes
