"""``markdown``: GitHub tables (a pull request, an issue, a wiki page).

Figures are written in kcross's vocabulary (kcross.views.text) and the tables in the
Markdown dialect of kcross's one table model (kcross.views.table); a run gets one table
under a line naming it, a comparison one table with benchstat's ``~`` where no
difference is shown and a geomean row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import fingerprint as fields
from ..views.table import LEFT, RIGHT, Cell, Column, Styled, Table, markdown, markdown_cell
from ..views.text import NONE
from . import ExportData, Output, series_of

if TYPE_CHECKING:
    from ..judge.verdict import Judgement
    from ..store import StoredRun

def _run(run: StoredRun) -> str:
    from ..schema import unit_of
    from ..stats import StatsError, summarize_record
    from ..views.run import relative_interval, subtracted
    from ..views.text import OVERHEAD_MARK, in_unit, share

    unit = unit_of(run.fingerprint, run.results)
    host = fields.HOSTNAME.of(run.fingerprint) or "?"
    when = run.started_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    table = Table([Column("benchmark"), Column(f"median {unit}", RIGHT),
                   Column("CI95 of median, %", RIGHT),
                   Column("min", RIGHT), Column("spread", RIGHT), Column("N", RIGHT), Column("status")])
    marked = False
    for rec in run.results:
        name = Styled(f"{rec['suite']}/{rec['name']}", code=True)
        n = str(len(rec["samples"]))
        if rec["status"] != "ok":
            table.add(name, NONE, NONE, NONE, NONE, n, f"{rec['status']}: {rec['reason']}")
            continue
        own = rec.get("unit") or unit
        suffix = "" if own == unit else f" {own}"
        try:
            s = summarize_record(rec)
        except StatsError as exc:
            table.add(name, str(exc), NONE, NONE, NONE, n, "ok")
            continue
        median = subtracted(in_unit(s.median, own), s.overhead.subtracted)
        marked |= s.overhead.subtracted
        try:
            ci = relative_interval(s.ci.low, s.median, s.ci.high)
        except StatsError as exc:
            ci = str(exc)
        try:
            spread = share(s.spread)
        except StatsError as exc:
            spread = str(exc)
        flags = "".join(f" ⚑{f.get('flag', '?')}" for f in rec.get("flags") or [])
        table.add(name, median + suffix, ci, in_unit(s.min, own) + suffix, spread, str(s.n),
                  "ok" + flags)
    if marked:
        table.notes.append(f"{OVERHEAD_MARK} empty-loop overhead subtracted "
                           "(docs/result-format.md, Statistics)")
    title = (f"**run {run.id}** · {run.state or run.status} · {run.source} · {when} · "
             f"{markdown_cell(host)}")
    return title + "\n\n" + markdown(table)


def _common(values: Sequence[str]) -> str | None:
    return values[0] if values and all(v == values[0] for v in values) else None


def _comparison(rows: Sequence[Judgement]) -> str:
    from ..judge.categories import DETECTABLE_RULE, EXACT_RULE, TIMING_RULE
    from ..stats import StatsError, median
    from ..views.text import ARROW, in_unit, p_text, ratio, with_interval
    from ..views.verdict import detectable_text, timer_share_lines, words
    from . import geomeans

    def side(samples: Sequence[float], unit: str, show_unit: bool) -> str:
        try:
            text = in_unit(median(samples), unit)
        except StatsError as exc:
            return str(exc)
        return f"{text}{' ' + unit if show_unit and unit else ''} (n={len(samples)})"

    units = [r.base.unit for r in rows]
    unit = _common(units)
    base = _common([r.base.source for r in rows])
    new = _common([r.new.source for r in rows])
    header = ["benchmark", f"base{f': {base}' if base else ''}", f"new{f': {new}' if new else ''}",
              "ratio [95% CI]", "p (Holm)", "verdict", "detectable"]
    if unit:
        header[1] += f", median {unit}"
        header[2] += f", median {unit}"
    table = Table([Column(h, LEFT if i in (0, 5) else RIGHT) for i, h in enumerate(header)])
    for r in rows:
        u = r.base.unit or r.new.unit
        name = r.name if base and new else f"{r.name} ({r.base.source} {ARROW} {r.new.source})"
        cells: list[Cell] = [Styled(name, code=True), side(r.base.samples, u, not unit),
                             side(r.new.samples, u, not unit)]
        if r.error is not None:
            cells += [NONE, NONE, f"error: {r.error}", NONE]
        else:
            shown = NONE if r.ratio is None else (
                ratio(r.ratio) if r.ratio_low is None or r.ratio_high is None else
                with_interval(ratio(r.ratio), ratio(r.ratio_low), ratio(r.ratio_high)))
            verdict = words(r) + (f"; {r.note}" if r.note else "")
            cells += [shown, NONE if r.p_adjusted is None else p_text(r.p_adjusted), verdict,
                      detectable_text(r)]
        table.add(*cells)
    pairs = geomeans(rows)
    for b, n, g in pairs:
        if g is not None:
            label = "geomean" if len(pairs) == 1 else f"geomean ({b} {ARROW} {n})"
            table.add(label, "", "", ratio(g), "", "", "")
    table.notes += timer_share_lines(rows)
    table.notes.append(f"~: no difference shown ({TIMING_RULE}; {EXACT_RULE}); ratio = median "
                       f"new / median base; {DETECTABLE_RULE}")
    return markdown(table)


def _series(data: ExportData) -> str:
    from ..stats import StatsError, summarize
    from ..views.run import relative_interval
    from ..views.text import in_unit

    table = Table([Column("source"), Column("benchmark"), Column("median", RIGHT),
                   Column("CI95 of median, %", RIGHT), Column("min", RIGHT),
                   Column("N", RIGHT)])
    for s in series_of(data):
        name = Styled(s.name, code=True)
        try:
            summary = summarize(s.samples)
        except StatsError as exc:
            table.add(s.source, name, str(exc), NONE, NONE, str(len(s.samples)))
            continue
        try:
            ci = relative_interval(summary.ci.low, summary.median, summary.ci.high)
        except StatsError as exc:
            ci = str(exc)
        table.add(s.source, name,
                  in_unit(summary.median, s.unit) + (f" {s.unit}" if s.unit else ""), ci,
                  in_unit(summary.min, s.unit), str(summary.n))
    return markdown(table)


def render(data: ExportData) -> list[Output]:
    if data.rows:
        return [Output(_comparison(data.rows))]
    if data.runs and not data.series:
        return [Output("\n".join(_run(run) for run in data.runs))]
    return [Output(_series(data))]
