"""One judgement core (issue 15): kcross.judge owns pairing, the verdict, its categories and
their words, the geomean and the "same machine / what differs" rule.  The question "does B
differ from A?" was answered in six places and "is this the same machine?" by five rules;
these tests fail when a module outside kcross.judge answers either again (the machine identity
the judge asks is kcross.fingerprint's, beneath the store and the judge)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import PYTHON_DIR

PACKAGE = PYTHON_DIR / "kcross"
JUDGE = PACKAGE / "judge"

# The comparison statistics of kcross.stats: measuring a difference is deciding one.
VERDICT_CALLS = re.compile(r"\b(sample_test|level_test|holm|paired_ratio|between_runs|"
                           r"between_runs_pooled|between_runs_near|detectable|compare_many)\s*\(")
# Deciding a verdict or a category by hand.
DECISIONS = re.compile(r"\.significant\b|ratio_low\s*>\s*1(\.0)?\b|ratio_high\s*<\s*1(\.0)?\b|"
                       r"\bp(_adjusted)?\s*<\s*[\w.]*(alpha|ALPHA)\b|\.ci\.(low|high)\s*[<>]\s*1")
# The words of a verdict, written out.
WORDS = re.compile(r"""["'](slower|faster|improvement|regression|more instructions|"""
                   r"""fewer instructions)["']""")
# "Is it the same machine?": a fingerprint hash or the host key computed by hand.
MACHINE = re.compile(r"hashlib\.sha256\(canonical|def (machine_identity|host_key|"
                     r"fingerprint_differences)\b|FINGERPRINT_FIELDS\s*=")


def sources() -> list[Path]:
    # (_result_format_check.py: the schema compiled to Python, whose key names it checks)
    return [p for p in PACKAGE.rglob("*.py") if JUDGE not in p.parents
            and p.name != "_result_format_check.py"]


def offenders(pattern: re.Pattern[str], allowed: dict[str, set[str]] | None = None) -> list[str]:
    found = []
    for path in sources():
        rel = str(path.relative_to(PACKAGE))
        for lineno, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#", 1)[0]
            for m in pattern.finditer(code):
                if m.group(0).strip() in (allowed or {}).get(rel, set()):
                    continue
                found.append(f"{rel}:{lineno}: {m.group(0)}")
    return found


def test_only_the_judge_calls_the_comparison_statistics() -> None:
    # stats.py defines them; rounds/aa.py takes the between-run variance of its own rounds
    # through the judge's noise estimate (kcross.judge.noise), never by itself.
    found = [o for o in offenders(VERDICT_CALLS) if not o.startswith("stats.py:")]
    assert found == []


def test_no_module_decides_a_verdict_by_hand() -> None:
    # --format ministat prints ministat's own Student's t line ("Difference at 95.0%
    # confidence"): ministat's method reproduced as a format, not kcross's verdict.
    found = [o for o in offenders(DECISIONS)
             if not o.startswith("views/ministat_report.py:")]
    assert found == []


def test_no_module_words_a_verdict_by_hand() -> None:
    """Categories and their words are kcross.judge.categories'; a view may style by
    category, never spell one (the report's CSS classes are the judge's too)."""
    assert offenders(WORDS) == []


def test_one_same_machine_rule() -> None:
    # The machine identity stands below the store and the judge (kcross/fingerprint.py):
    # the store keys its machine rows by it, kcross.judge.machine asks it.
    assert offenders(MACHINE, {"fingerprint.py": {"hashlib.sha256(canonical"}}) == []


def test_the_judge_is_what_every_comparing_command_uses() -> None:
    users = {p.relative_to(PACKAGE).as_posix() for p in sources()
             if re.search(r"from \.+judge(\.\w+)? import|import kcross\.judge|"
                          r"from kcross\.judge", p.read_text())}
    for module in ("cli/compare.py", "cli/check.py", "history/trend.py", "report/model.py",
                   "rounds/ab.py", "rounds/aa.py", "rounds/crosscheck.py", "lab/report.py",
                   "lab/profile_diff.py", "reproduce/outcome.py"):
        assert module in users, module
