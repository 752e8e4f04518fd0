"""The views of ``kcross check``'s outcome: a table for a terminal or a CI log (ASCII,
no colour when not a terminal) and GitHub Markdown for a pull request."""

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
from ..judge.gate import CheckRow, Outcome
from ..judge.verdict import (
    EXACT,
    SEEN_RUNS,
    detectable_text,
    fails_at,
    record,
    sees_text,
    words,
)
from ..render import format_value
from ..stats import StatsError, median
from .marks import ascii_text

COLUMNS = ("benchmark", "base", "current", "ratio", "CI of ratio", "p", "fails at",
           "verdict", "note")
_LEFT = (0, 7, 8)


def format_p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def cells(row: CheckRow, outcome: Outcome) -> list[str]:
    """A row's cells, plain text (CI logs and patch mail)."""
    unit = outcome.unit

    def figure(series: Any) -> str:
        if series is None:
            return "-"
        try:
            return format_value(median(series.samples), unit)
        except StatsError:
            return "-"   # no figure: the note says why

    j = row.judgement
    verdict = label(row.category, unit)
    if j is None or j.error is not None:
        return [row.name, figure(row.base), figure(row.current), "-", "-", "-", "-", verdict,
                row.note or ""]
    assert j.median_a is not None and j.median_b is not None
    ci = "-" if j.method == EXACT or j.ratio_low is None or j.ratio_high is None else \
        f"{j.ratio_low:.3f}-{j.ratio_high:.3f}"
    ratio = "-" if j.ratio is None else f"{j.ratio:.3f}"
    described = words(j, outcome.max_regression)
    note = "; ".join(x for x in (described if described not in ("~", "identical", verdict)
                                 else None, row.note) if x)
    return [row.name, format_value(j.median_a, unit), format_value(j.median_b, unit), ratio,
            ci, format_p(j.p_adjusted), detectable_text(j, outcome.max_regression), verdict,
            note]


def headers(outcome: Outcome) -> list[str]:
    conf = next((r.judgement.confidence for r in outcome.rows if r.judgement), 0.95)
    names = list(COLUMNS)
    names[1], names[2] = f"base {outcome.unit}", f"current {outcome.unit}"
    names[4] = f"{conf:.0%} CI of ratio"
    return names


def title(outcome: Outcome) -> str:
    def side(s: Any) -> str:
        return f"{s.label} ({s.host}{', ' + s.when if s.when else ''})"

    return (f"kcross check: {side(outcome.current)} against baseline {side(outcome.base)}; "
            f"fails on a change shown beyond +{outcome.max_regression * 100:g}%")


def legend(outcome: Outcome) -> list[str]:
    """What the columns mean, what the verdicts saw, and the notes: one line each."""
    tested = sum(j.p is not None for j in outcome.judgements)
    lines = [f"ratio = current/base median (>1: {higher_word(outcome.unit)}); {TIMING_RULE} "
             f"({tested} test(s)); {EXACT_RULE}; {FAILS_AT_RULE}",
             f"regression: beyond +{outcome.max_regression * 100:g}% (exact counts: by value; "
             "timings: the CI's low end above it)"]
    kinds: dict[str, int] = {}
    for j in outcome.judgements:
        if j.method:
            kinds[sees_text(j)] = kinds.get(sees_text(j), 0) + 1
    lines += [f"{n} judged on {text}" for text, n in kinds.items()]
    blind = outcome.blind_to_runs
    if blind:
        lines.append(f"{blind} benchmark(s) between separate runs whose run-to-run noise is "
                     "not known here: gated on the tolerance alone (their verdicts cannot see "
                     "run-to-run variation; 'kcross aa BENCH' or more stored runs of this "
                     "machine measure it)")
    lines += outcome.notes
    return lines


def markdown(outcome: Outcome) -> str:
    """The check as GitHub-flavoured Markdown: a pull request comment."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    heads = headers(outcome)
    lines = [f"**{esc(outcome.summary())}**", "", esc(title(outcome)), "",
             "| " + " | ".join(heads) + " |",
             "|" + "|".join(":---" if i in _LEFT else "---:" for i in range(len(heads))) + "|"]
    for row in outcome.rows:
        texts = [esc(c) for c in cells(row, outcome)]
        if row.fails:
            texts[7] = f"**{texts[7]}**"
        lines.append("| " + " | ".join(texts) + " |")
    lines.append("")
    lines += [f"- {esc(line)}" for line in legend(outcome)]
    return "\n".join(lines) + "\n"


def table(outcome: Outcome, *, ascii_only: bool) -> Any:
    """The check as a rich table: ASCII borders and no colour for a log or a mail."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out = Table(box=box.ASCII if ascii_only else box.HEAVY_HEAD,
                header_style="" if ascii_only else "bold")
    for i, name in enumerate(headers(outcome)):
        out.add_column(name, justify="left" if i in _LEFT else "right", overflow="fold")
    for row in outcome.rows:
        texts = [ascii_text(t) for t in cells(row, outcome)] if ascii_only else cells(row, outcome)
        style = "" if ascii_only else STYLE.get(row.category, "")
        out.add_row(*(Text(t, style=style if i == 7 else "") for i, t in enumerate(texts)))
    return out


def json_record(outcome: Outcome) -> dict[str, Any]:
    """``kcross check --json``: the outcome as one JSON object."""
    rows = []
    for row in outcome.rows:
        j = row.judgement
        entry: dict[str, Any] = {"benchmark": row.name, "category": row.category.value,
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
           "table", "title"]
