"""The terminal table of a comparison (``kcross compare``'s default format): the base
first, each later side against it, then what the verdicts saw and the footnotes."""

from __future__ import annotations

from typing import Any

from ..judge.categories import DETECTABLE_RULE, EXACT_RULE, TIMING_RULE
from ..judge.comparison import Cell, Comparison
from ..judge.verdict import EXACT, Judgement, detectable_text, seeing_lines, words
from .marks import mark


def format_value(value: float, unit: str) -> str:
    """A median in its unit (times and counts as ``kcross show`` prints them); plain numbers
    with six significant digits."""
    from ..render import format_value as in_unit

    if unit:
        return in_unit(value, unit)
    return f"{value:.6g}"


def median_text(cell: Cell, unit: str, notes: list[str]) -> str:
    """The median [CI]; where there is no CI, a footnote mark (its reason under the table)."""
    text = format_value(cell.median, unit)
    if cell.ci is None:
        why = f"no CI: {cell.ci_error}"
        if why not in notes:
            notes.append(why)
        return f"{text} {mark(notes.index(why) + 1)}"
    return f"{text} [{format_value(cell.ci.low, unit)}, {format_value(cell.ci.high, unit)}]"


def ratio_text(j: Judgement) -> str:
    if j.ratio is None:
        return ""
    if j.method == EXACT or j.ratio_low is None or j.ratio_high is None:
        return f"{j.ratio:.4f}"
    return f"{j.ratio:.3f} [{j.ratio_low:.3f}, {j.ratio_high:.3f}]"


def verdict_text(j: Judgement) -> str:
    """The verdict cell: its words, with p (timings) and the note."""
    text = words(j)
    if j.p_adjusted is not None:
        text += f" (p={j.p_adjusted:.3f} n={j.n_a}+{j.n_b})"
    if j.note:
        text += f" ({j.note})"
    return text


def legend(comparison: Comparison) -> str:
    unit = f" ({comparison.unit})" if comparison.unit else ""
    tests = sum(1 for j in comparison.judgements if j.p is not None)
    exact = sum(1 for j in comparison.judgements if j.method == EXACT)
    parts = [f"median [95% CI]{unit}; ratio of medians new/base [95% CI]"]
    if tests:
        parts.append(f"{TIMING_RULE} ({tests} test(s))")
    if exact:
        parts.append(EXACT_RULE)
    parts.append(DETECTABLE_RULE)
    return "; ".join(parts)


def table(comparison: Comparison) -> Any:
    """A rich table and its footer lines."""
    from rich.console import Group
    from rich.table import Table as RichTable
    from rich.text import Text

    notes: list[str] = []
    out = RichTable()
    out.add_column("benchmark")
    out.add_column(f"{comparison.sides[0].label} (base)", justify="right")
    for side in comparison.sides[1:]:
        out.add_column(side.label, justify="right")
        out.add_column("ratio", justify="right")
        out.add_column("vs base")
        out.add_column("detectable", justify="right")
    for row in comparison.rows:
        base = row.cells[0]
        assert base is not None
        cells: list[str] = [row.name, median_text(base, comparison.unit, notes)]
        for c, j in zip(row.cells[1:], row.judgements[1:], strict=True):
            if c is None or j is None:
                cells += ["(missing)", "", "", ""]
                continue
            cells += [median_text(c, comparison.unit, notes), ratio_text(j), verdict_text(j),
                      detectable_text(j)]
        out.add_row(*(Text(x) for x in cells))
    if len(comparison.rows) > 1:
        cells = ["geomean"]
        for i in range(len(comparison.sides)):
            g = comparison.geomean_medians[i] if comparison.geomean_medians else None
            cells.append(format_value(g, comparison.unit) if g is not None
                         else (comparison.geomean_error or "") if i == 0 else "")
            if i > 0:
                r = comparison.geomeans[i]
                cells += [f"{r:.3f}" if r is not None else "",
                          f"{(r - 1) * 100:+.2f}%" if r is not None else "", ""]
        out.add_row(*(Text(x) for x in cells), style="bold")
    lines = [Text(f"{mark(i)} {note}") for i, note in enumerate(notes, start=1)]
    lines.append(Text(legend(comparison)))
    lines += [Text(line) for line in seeing_lines(comparison.judgements)]
    return Group(out, *lines)


def missing_lines(comparison: Comparison) -> list[str]:
    return [f"{name}: not in {', '.join(lacking)}" for name, lacking in comparison.missing]
