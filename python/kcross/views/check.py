"""The views of ``kcross check``'s outcome: one table (kcross.views.table) for a terminal,
a CI log (plain ASCII) or a pull request (GitHub Markdown); the one-line summary last in
each."""

from __future__ import annotations

from typing import Any

from ..judge.categories import (
    EXACT_RULE,
    FAILS_AT_RULE,
    STYLE,
    TIMING_RULE,
    Category,
    higher_word,
    label,
)
from ..judge.comparison import cell
from ..judge.gate import CheckRow, Outcome
from ..judge.verdict import EXACT, SEEN_RUNS, fails_at, record
from ..stats import StatsError
from . import table as tables
from .table import FITS, LEFT, RIGHT, RULES, Column, Lines, Styled, Table
from .text import NONE, arrow, counted, in_unit, interval, p_text, ratio
from .verdict import detectable_text, sees_text, words

COLUMNS = ("benchmark", "base", "current", "ratio", "CI of ratio", "p", "fails at",
           "verdict", "note")
_LEFT = (0, 7, 8)
VERDICT, NOTE = 7, 8


def cells(row: CheckRow, outcome: Outcome) -> list[str]:
    """A row's cells, plain text.  The base's and the current's figures are each side's
    median as compare and show give it (kcross.judge.comparison.cell); where the verdict
    judged other figures (both sides' raw samples: the empty loop subtracted on one side
    only), the note says so and gives them."""
    unit = outcome.unit

    def figure(series: Any) -> str:
        if series is None:
            return NONE
        try:
            return in_unit(cell(series).median, unit)
        except StatsError:
            return NONE   # no figure: the note says why

    j = row.judgement
    verdict = label(row.category, unit)
    if j is None or j.error is not None:
        return [row.name, figure(row.base), figure(row.current), NONE, NONE, NONE, NONE,
                verdict, row.note or ""]
    assert j.median_a is not None and j.median_b is not None
    ci = NONE if j.method == EXACT or j.ratio_low is None or j.ratio_high is None else \
        interval(ratio(j.ratio_low), ratio(j.ratio_high))
    described = words(j, outcome.max_regression)
    judged = f"the raw medians {arrow(in_unit(j.median_a, unit), in_unit(j.median_b, unit))}" \
        if j.raw else None
    note = "; ".join(x for x in (described if described not in ("~", "identical", verdict)
                                 else None, row.note, judged) if x)
    return [row.name, figure(row.base), figure(row.current),
            NONE if j.ratio is None else ratio(j.ratio), ci,
            NONE if j.p_adjusted is None else p_text(j.p_adjusted),
            detectable_text(j, outcome.max_regression), verdict, note]


def headers(outcome: Outcome) -> list[str]:
    conf = next((r.judgement.confidence for r in outcome.rows if r.judgement), 0.95)
    names = list(COLUMNS)
    names[4] = f"{conf:.0%} CI\nof ratio"
    names[6] = "fails\nat"
    return names


def title(outcome: Outcome) -> str:
    def side(s: Any) -> str:
        return f"{s.label} on {s.host}{' at ' + s.when if s.when else ''}"

    return (f"kcross check: {side(outcome.current)} against baseline {side(outcome.base)}; "
            f"fails on a change shown beyond +{outcome.max_regression * 100:g}%")


def legend(outcome: Outcome) -> list[str]:
    """What the columns mean, what the verdicts saw, and the notes: one line each."""
    tested = sum(j.p is not None for j in outcome.judgements)
    lines = [f"base, current: the medians ({outcome.unit}); ratio = current/base median "
             f"(>1: {higher_word(outcome.unit)}); {TIMING_RULE} "
             f"({counted(tested, 'test')}); {EXACT_RULE}; {FAILS_AT_RULE}",
             f"regression: beyond +{outcome.max_regression * 100:g}% (exact counts: by value; "
             "timings: the CI's low end above it)"]
    kinds: dict[str, int] = {}
    for j in outcome.judgements:
        if j.method:
            kinds[sees_text(j)] = kinds.get(sees_text(j), 0) + 1
    lines += [f"{n} judged on {text}" for text, n in kinds.items()]
    blind = outcome.blind_to_runs
    if blind:
        lines.append(f"{counted(blind, 'benchmark')} between separate runs whose run-to-run "
                     "noise is not known here: gated on the tolerance alone (their verdicts "
                     "cannot see run-to-run variation; 'kcross aa BENCH' or more stored runs "
                     "of this machine measure it)")
    lines += outcome.notes
    return lines


def table(outcome: Outcome) -> Table:
    """The check's table: its title, the rows, the legend as its notes; within
    :data:`FITS` columns, as the run table (only the note wraps)."""
    out = Table([Column(name, LEFT if i in _LEFT else RIGHT, wrap=i == NOTE)
                 for i, name in enumerate(headers(outcome))], title=title(outcome),
                frame=RULES, fits=FITS)
    for row in outcome.rows:
        texts: list[str | Styled] = list(cells(row, outcome))
        texts[VERDICT] = Styled(str(texts[VERDICT]), STYLE.get(row.category, ""),
                                strong=row.fails)
        out.add(*texts)
    out.notes = legend(outcome)
    return out


def markdown(outcome: Outcome) -> str:
    """The check as GitHub-flavoured Markdown: a pull request comment, its summary last as
    in the terminal's."""
    return tables.markdown(table(outcome)) + f"\n**{tables.markdown_cell(outcome.summary())}**\n"


def summary_style(outcome: Outcome) -> str:
    return "bold red" if outcome.failed else "green"


def summary(outcome: Outcome, ascii_only: bool = False) -> Any:
    """The check's last line (PASS or FAIL, what it counted), within the table's width;
    coloured unless ``ascii_only``."""
    from rich.constrain import Constrain

    return Constrain(Lines([outcome.summary()], "" if ascii_only else summary_style(outcome)),
                     FITS)


def json_record(outcome: Outcome) -> dict[str, Any]:
    """``kcross check --json``: the outcome as one JSON object."""
    rows = []
    for row in outcome.rows:
        j = row.judgement
        # a move by the timer's share passes as no change, and is recorded as the verdict
        # record keeps it: by its direction (kcross.judge.verdict.record; format unchanged)
        category = j.difference if j is not None and row.category is Category.TIMER_SHARE \
            else row.category
        entry: dict[str, Any] = {"benchmark": row.name, "category": category.value,
                                 "fails": row.fails, "note": row.note}
        if j is not None and j.error is None:
            entry.update(base_median=j.median_a, current_median=j.median_b,
                         fails_at=fails_at(j, outcome.max_regression), verdict=record(j))
        rows.append(entry)
    return {"passed": not outcome.failed, "summary": outcome.summary(),
            "base": outcome.base.label, "current": outcome.current.label,
            "unit": outcome.unit, "max_regression": outcome.max_regression,
            "blind_to_runs": outcome.blind_to_runs, "rows": rows, "notes": outcome.notes}


__all__ = ["Category", "SEEN_RUNS", "cells", "headers", "json_record", "legend", "markdown",
           "summary", "table", "title"]
