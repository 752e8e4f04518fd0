"""``markdown``: GitHub tables (a pull request, an issue, a wiki page).

Figures are formatted as kcross prints them (kcross.render); a run gets one
table under a line naming it, a comparison one table with benchstat's ``~``
where no difference is shown and a geomean row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import ExportData, Output, series_of

if TYPE_CHECKING:
    from ..judge.verdict import Judgement
    from ..store import StoredRun

DASH = "–"


def cell(text: str) -> str:
    """Text safe inside a table cell: no pipe ends the cell, no newline the row."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def code(text: str) -> str:
    return f"`{cell(text)}`"


def table(header: Sequence[str], align: str, rows: Sequence[Sequence[str]]) -> str:
    """``align``: one letter per column, l or r."""
    marks = {"l": ":--", "r": "--:"}
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _pct(low: float, mid: float, high: float) -> str:
    if not mid:
        return DASH
    return f"{(low - mid) / mid * 100:+.1f}% {(high - mid) / mid * 100:+.1f}%"


def _run(run: StoredRun) -> str:
    from ..render import OVERHEAD_MARK, format_value
    from ..schema import unit_of
    from ..stats import StatsError, summarize_record

    unit = unit_of(run.fingerprint, run.results)
    host = (run.fingerprint.get("host") or {}).get("hostname") or "?"
    when = run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    title = f"**run {run.id}** · {run.state or run.status} · {run.source} · {when} · {cell(host)}"
    rows = []
    marked = False
    for rec in run.results:
        name = code(f"{rec['suite']}/{rec['name']}")
        n = str(len(rec["samples"]))
        if rec["status"] != "ok":
            rows.append([name, DASH, DASH, DASH, DASH, n, cell(f"{rec['status']}: {rec['reason']}")])
            continue
        own = rec.get("unit") or unit
        suffix = "" if own == unit else f" {own}"
        try:
            s = summarize_record(rec)
        except StatsError as exc:
            rows.append([name, cell(str(exc)), DASH, DASH, DASH, n, "ok"])
            continue
        median = format_value(s.median, own) + (OVERHEAD_MARK if s.overhead.subtracted else "")
        marked |= s.overhead.subtracted
        try:
            ci = _pct(s.ci.low, s.median, s.ci.high)
        except StatsError as exc:
            ci = cell(str(exc))
        try:
            spread = f"{s.spread:.1%}"
        except StatsError as exc:
            spread = cell(str(exc))
        flags = "".join(f" ⚑{f.get('flag', '?')}" for f in rec.get("flags") or [])
        rows.append([name, median + suffix, ci, format_value(s.min, own) + suffix, spread,
                     str(s.n), cell("ok" + flags)])
    text = title + "\n\n" + table(
        ["benchmark", f"median {unit}", "CI95 of median", "min", "spread", "N", "status"],
        "lrrrrrl", rows)
    if marked:
        text += f"\n{OVERHEAD_MARK} empty-loop overhead subtracted (docs/result-format.md, " \
                "Statistics)\n"
    return text


def _common(values: Sequence[str]) -> str | None:
    return values[0] if values and all(v == values[0] for v in values) else None


def _comparison(rows: Sequence[Judgement]) -> str:
    from ..judge.categories import DETECTABLE_RULE, EXACT_RULE, TIMING_RULE
    from ..judge.verdict import detectable_text, words
    from ..render import format_value
    from ..stats import StatsError, median
    from . import geomeans

    def side(samples: Sequence[float], unit: str, show_unit: bool) -> str:
        try:
            text = format_value(median(samples), unit)
        except StatsError as exc:
            return cell(str(exc))
        return f"{text}{' ' + unit if show_unit and unit else ''} (n={len(samples)})"

    units = [r.base.unit for r in rows]
    unit = _common(units)
    base = _common([r.base.source for r in rows])
    new = _common([r.new.source for r in rows])
    header = ["benchmark", f"base{f': {base}' if base else ''}", f"new{f': {new}' if new else ''}",
              "ratio (CI)", "p (Holm)", "verdict", "detectable"]
    if unit:
        header[1] += f", median {unit}"
        header[2] += f", median {unit}"
    body = []
    for r in rows:
        u = r.base.unit or r.new.unit
        name = r.name if base and new else f"{r.name} ({r.base.source} → {r.new.source})"
        cells = [code(name), side(r.base.samples, u, not unit), side(r.new.samples, u, not unit)]
        if r.error is not None:
            cells += [DASH, DASH, cell(f"error: {r.error}"), DASH]
        else:
            pct = f"{r.confidence:.0%}"
            ratio = DASH if r.ratio is None else (
                f"{r.ratio:.4f}" if r.ratio_low is None or r.ratio_high is None else
                f"{r.ratio:.3f} ({pct}: {r.ratio_low:.3f}–{r.ratio_high:.3f})")
            cells += [ratio, DASH if r.p_adjusted is None else f"{r.p_adjusted:.3g}",
                      cell(words(r)), detectable_text(r)]
            if r.note:
                cells[-2] += " " + cell(f"({r.note})")
        body.append(cells)
    pairs = geomeans(rows)
    for b, n, g in pairs:
        if g is not None:
            label = "geomean" if len(pairs) == 1 else f"geomean ({b} → {n})"
            body.append([cell(label), "", "", f"{g:.3f}", "", "", ""])
    text = table(header, "lrrrrlr", body)
    return text + f"\n`~`: no difference shown ({TIMING_RULE}; {EXACT_RULE}); ratio = median " \
                  f"new / median base; {DETECTABLE_RULE}\n"


def _series(data: ExportData) -> str:
    from ..render import format_value
    from ..stats import StatsError, summarize

    rows = []
    for s in series_of(data):
        try:
            summary = summarize(s.samples)
        except StatsError as exc:
            rows.append([cell(s.source), code(s.name), cell(str(exc)), DASH, DASH,
                         str(len(s.samples))])
            continue
        try:
            ci = _pct(summary.ci.low, summary.median, summary.ci.high)
        except StatsError as exc:
            ci = cell(str(exc))
        rows.append([cell(s.source), code(s.name),
                     format_value(summary.median, s.unit) + (f" {s.unit}" if s.unit else ""), ci,
                     format_value(summary.min, s.unit), str(summary.n)])
    return table(["source", "benchmark", "median", "CI95 of median", "min", "N"], "llrrrr", rows)


def render(data: ExportData) -> list[Output]:
    if data.rows:
        return [Output(_comparison(data.rows))]
    if data.runs and not data.series:
        return [Output("\n".join(_run(run) for run in data.runs))]
    return [Output(_series(data))]
