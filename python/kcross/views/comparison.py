"""The terminal table of a comparison (``kcross compare``'s default format): the base
first, each later side against it, then what the verdicts saw and the footnotes."""

from __future__ import annotations

from ..judge.categories import DETECTABLE_RULE, EXACT_RULE, TIMING_RULE
from ..judge.comparison import Cell, Comparison
from ..judge.verdict import EXACT, Judgement
from .table import FITS, RIGHT, RULES, Column, Table
from .text import NONE, change_percent, in_unit, mark, p_text, ratio, with_interval
from .verdict import detectable_text, seeing_lines, timer_share_lines, words


def median_text(cell: Cell, unit: str, notes: list[str]) -> str:
    """The median [CI]; where there is no CI, a footnote mark (its reason under the table)."""
    text = in_unit(cell.median, unit)
    if cell.ci is None:
        why = f"no CI: {cell.ci_error}"
        if why not in notes:
            notes.append(why)
        return f"{text} {mark(notes.index(why) + 1)}"
    return with_interval(text, in_unit(cell.ci.low, unit), in_unit(cell.ci.high, unit))


def ratio_text(j: Judgement) -> str:
    if j.ratio is None:
        return ""
    if j.method == EXACT or j.ratio_low is None or j.ratio_high is None:
        return ratio(j.ratio)
    return with_interval(ratio(j.ratio), ratio(j.ratio_low), ratio(j.ratio_high))


def verdict_text(j: Judgement) -> str:
    """The verdict cell: its words, with p (timings) and the note."""
    text = words(j)
    if j.p_adjusted is not None:
        text += f" ({p_text(j.p_adjusted)}, n={j.n_a}+{j.n_b})"
    if j.note:
        text += f"; {j.note}"
    return text


def legend(comparison: Comparison) -> str:
    unit = f" ({comparison.unit})" if comparison.unit else ""
    tests = sum(1 for j in comparison.judgements if j.p is not None)
    exact = sum(1 for j in comparison.judgements if j.method == EXACT)
    parts = [f"median [95% CI]{unit}; ratio of medians new/base [95% CI]"]
    if tests:
        parts.append(f"{TIMING_RULE} ({tests} test{'s' * (tests != 1)})")
    if exact:
        parts.append(EXACT_RULE)
    parts.append(DETECTABLE_RULE)
    return "; ".join(parts)


def table(comparison: Comparison) -> Table:
    """The comparison's table, its footnotes and legend as its notes."""
    notes: list[str] = []

    def figures(header: str) -> Column:  # a figure and its interval, never wrapped
        return Column(header, RIGHT, wrap=False, split=True)

    columns = [Column("benchmark", wrap=False), figures(f"{comparison.sides[0].label} (base)")]
    for side in comparison.sides[1:]:
        columns += [figures(side.label), figures("ratio"), Column("vs base"),
                    Column("detectable", RIGHT, wrap=False)]
    out = Table(columns, frame=RULES, fits=FITS)
    for row in comparison.rows:
        base = row.cells[0]
        assert base is not None
        cells: list[str] = [row.name, median_text(base, comparison.unit, notes)]
        for c, j in zip(row.cells[1:], row.judgements[1:], strict=True):
            if c is None or j is None:
                cells += ["missing", NONE, NONE, NONE]
                continue
            cells += [median_text(c, comparison.unit, notes), ratio_text(j), verdict_text(j),
                      detectable_text(j)]
        out.add(*cells)
    if len(comparison.rows) > 1:
        cells = ["geomean"]
        for i in range(len(comparison.sides)):
            g = comparison.geomean_medians[i] if comparison.geomean_medians else None
            cells.append(in_unit(g, comparison.unit) if g is not None
                         else (comparison.geomean_error or "") if i == 0 else "")
            if i > 0:
                r = comparison.geomeans[i]
                cells += [ratio(r) if r is not None else "",
                          change_percent(r) if r is not None else "", ""]
        out.add(*cells, style="bold")
    out.notes = [f"{mark(i)} {note}" for i, note in enumerate(notes, start=1)]
    out.notes += timer_share_lines(comparison.judgements)
    out.notes.append(legend(comparison))
    out.notes += seeing_lines(comparison.judgements)
    return out


def missing_lines(comparison: Comparison) -> list[str]:
    return [f"{name}: not in {', '.join(lacking)}" for name, lacking in comparison.missing]
