"""The verdict in words: what kcross.judge decided, as every table, CI log, pull-request
comment and the HTML report word it (the vocabulary's rules: kcross.views.text)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..judge.categories import Category, amount, higher_word, lower_word
from ..judge.verdict import (
    SAMPLES,
    SEEN_PROCESSES,
    SEEN_RUNS,
    TIMER_SHARE,
    Judgement,
    PairedVerdict,
    fails_at,
    gate,
    timer_share,
)
from ..stats import CONFIDENCE, OUTLYING
from .text import (
    NONE,
    change_words,
    counted,
    percent,
    plus_minus,
    runs_listed,
    share,
    signed,
    significant_digits,
)


def percent_text(ratio: float | None) -> str:
    """The change a ratio is, signed: ``+10.0%``; nothing without a ratio."""
    return "" if ratio is None else percent((ratio - 1.0) * 100.0)


def exact_change(j: Judgement) -> str:
    """``+124.6 instructions (+36.0%)``, ``+0.0051 instructions (+0.00079%)``: an exact
    difference in the unit's amount, small ones to two significant digits."""
    delta = j.delta or 0.0
    what = amount(j.unit)
    change = None if j.ratio is None else (j.ratio - 1) * 100
    pct = "" if change is None else percent(change, significant_digits(change))
    return f"{signed(delta, significant_digits(delta))}{' ' + what if what else ''}" + \
        (f" ({pct})" if pct else "")


def exact_delta(j: Judgement | None) -> str:
    """B − A of exact counts as the judge words it: ``0`` for identical, else the signed
    difference (``+12.0``); a dash without one."""
    if j is None or j.delta is None:
        return NONE
    if j.category is Category.IDENTICAL:
        return "0"
    return exact_change(j).split(" ")[0]


def exact_percent(j: Judgement) -> str:
    """(B − A)/A of exact counts: ``0`` for identical, else the signed percentage."""
    if j.category is Category.IDENTICAL:
        return "0"
    if j.ratio is None:
        return NONE
    return exact_change(j).split("(")[-1].rstrip(")")


def words(j: Judgement, tolerance: float | None = None) -> str:
    """The verdict in words, as a table's verdict cell shows it (the gate's, with a
    tolerance): ``10.0% slower``, ``3.0% faster``, ``~``, ``identical``, an exact change."""
    category = gate(j, tolerance) if tolerance is not None else j.category
    if category is Category.UNJUDGED:
        return j.error or "not judged"
    if category is Category.IDENTICAL:
        return "identical"
    beyond = "" if tolerance is None else f"beyond {signed(tolerance * 100, 0)}%"
    if j.exact:
        text = exact_change(j)
        return f"{text}: {beyond}" if category is Category.REGRESSION else text
    if category is Category.SAME or j.ratio is None:
        return "~"
    said = change_words(j.ratio, higher_word(j.unit), lower_word(j.unit))
    if category is Category.REGRESSION:
        return f"{said}, {beyond}"
    if tolerance is not None and category is Category.HIGHER:
        return f"{said}, not shown {beyond} (CI from {percent_text(j.ratio_low)})"
    return said


def detectable_text(j: Judgement, tolerance: float | None = None) -> str:
    """The minimum detectable change of a pair: ``±2.1%``, ``exact`` or a dash; with a
    tolerance, the slowdown that fails the check: ``+9.4%``."""
    if j.exact:
        return "exact"
    value = j.detectable if tolerance is None else fails_at(j, tolerance)
    if value is None:
        return NONE
    return plus_minus(f"{value * 100:.1f}%") if tolerance is None else f"+{value * 100:.1f}%"


def sees_text(j: Judgement) -> str:
    """What a verdict could see: ``samples, 8+8 processes, runs (7 earlier runs)``."""
    if j.exact:
        return "exact counts, by value"
    if not j.method:
        return NONE
    parts = ["samples"]
    if SEEN_PROCESSES in j.sees:
        parts.append(f"{j.processes[0]}+{j.processes[1]} processes")
    if SEEN_RUNS in j.sees and j.noise is not None:
        near = f", runs within {_duration(j.noise.within)} of each other" \
            if j.noise.within is not None else ""
        far = j.noise.outliers
        outliers = f"; outlier {runs_listed(far)} left out" if far else ""
        parts.append(f"run-to-run noise ({j.noise.runs} {j.noise.source}{near}{outliers})")
    text = ", ".join(parts)
    if j.misses:
        text += "; cannot see " + " or ".join(
            {SEEN_PROCESSES: "process-to-process", SEEN_RUNS: "run-to-run"}[m]
            for m in j.misses) + " variation"
    return text


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def seeing_lines(judgements: Sequence[Judgement]) -> list[str]:
    """One line per kind of verdict in a table: what it saw and could not see, and what
    would let it see more."""
    kinds: dict[str, list[str]] = {}
    for j in judgements:
        if j.method:
            kinds.setdefault(sees_text(j), []).append(j.name)
    lines = []
    for text, names in kinds.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        lines.append(f"{len(names)} judged on {text}: {shown}")
    if any(SEEN_RUNS in j.misses for j in judgements):
        lines.append("run-to-run variation is measured by repeating runs of one machine: "
                     "'kcross aa BENCH', or keep storing runs (every run of a machine adds to "
                     "its history); until then 'kcross check' gates on its tolerance alone")
    if any(j.method == SAMPLES and SEEN_PROCESSES in j.misses for j in judgements):
        lines.append("one process per side: 'kcross run --processes K' gives each run the "
                     "process level")
    return lines


def timer_share_note(names: Sequence[str]) -> str:
    """The line that says which rows moved by the timer's share only (not a change of the
    path: kcross.judge.verdict's rule), under every table that judges exact counts."""
    return (f"{len(names)} row{'' if len(names) == 1 else 's'} moved by {TIMER_SHARE} (not a "
            f"change of the path, not explained): {', '.join(names)}")


def timer_share_lines(judgements: Sequence[Judgement]) -> list[str]:
    """:func:`timer_share_note` of the judgements that moved by the timer's share; none
    when no row did."""
    names = [j.name for j in judgements if timer_share(j)]
    return [timer_share_note(names)] if names else []


def paired_warnings(v: PairedVerdict, b: str = "B", a: str = "A") -> list[str]:
    """What the rounds show that the interval does not assume (kcross.stats.paired_ratio):
    a scatter beyond one steady machine's, rounds that depend on each other; none when
    they behave."""
    p = v.paired
    found = []
    if p.scattered:
        found.append(
            f"the rounds scatter: {b}/{a} from {min(p.ratios):.3f} to "
            f"{max(p.ratios):.3f}, {p.outlying} of {p.n} rounds beyond {OUTLYING:g} robust "
            f"sds (±{share(math.expm1(OUTLYING * p.spread))}) of the median: other work "
            "disturbed the runs (see 'kcross sysinfo --readiness'); the CI, distribution-free, "
            "holds only while such rounds come independently: repeat on a quiet CPU or with "
            "more rounds")
    if p.dependent:
        found.append(
            f"consecutive rounds fell on the same side of the median more often than chance "
            f"(lag-1 correlation {p.dependence:.2f}): the {p.n} rounds count as "
            f"{counted(p.effective, 'independent round')}, and the CI is theirs (coverage "
            f"{share(p.ci.confidence)})")
    return found


def paired_words(v: PairedVerdict, b: str = "B", a: str = "A") -> str:
    """'B is 5.7% faster than A (the CI excludes 1)', or that no difference is shown (the
    words of a JSON record too: unchanged)."""
    ratio = v.paired.median
    if v.category is Category.SAME:
        p = v.paired
        if p.ci.confidence < CONFIDENCE:
            return (f"no difference shown (the {p.n} rounds count as "
                    f"{counted(p.effective, 'independent round')}: too few for a "
                    f"{CONFIDENCE:.0%} CI)")
        return "no difference shown (the CI includes 1)"
    if ratio < 1:
        return f"{b} is {1 - ratio:.1%} {lower_word(v.unit)} than {a} (the CI excludes 1)"
    return f"{b} is {ratio - 1:.1%} {higher_word(v.unit)} than {a} (the CI excludes 1)"
