"""``csv``: one line per benchmark (runs, series) or per compared pair (a comparison).

Figures are written at full precision (Python's shortest exact form); a figure
that cannot be computed is an empty field, and the ``note`` column says why.
The first line names the columns.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from . import ExportData, Output, series_of

RUN_COLUMNS = ("run", "run_source", "benchmark", "unit", "status", "n", "median", "ci_low",
               "ci_high", "ci_confidence", "min", "q1", "q3", "spread", "overhead",
               "overhead_subtracted", "disturbed", "iters", "mechanism", "reason", "note")
SERIES_COLUMNS = ("source", "benchmark", "unit", "n", "median", "ci_low", "ci_high",
                  "ci_confidence", "min", "q1", "q3", "spread", "note")
ROW_COLUMNS = ("benchmark", "unit", "base_source", "base_name", "base_n", "base_median",
               "new_source", "new_name", "new_n", "new_median", "method", "category", "ratio",
               "ratio_low", "ratio_high", "confidence", "p", "p_adjusted", "alpha",
               "significant", "detectable", "note", "error")
VERDICT_COLUMNS = ROW_COLUMNS[ROW_COLUMNS.index("method"):ROW_COLUMNS.index("error")]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _table(columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def _figures(summary: Any) -> dict[str, Any]:
    """The figures of a :class:`kcross.stats.Summary`; what cannot be computed goes to note."""
    from ..stats import StatsError

    row: dict[str, Any] = {"n": summary.n, "median": summary.median, "min": summary.min,
                           "q1": summary.q1, "q3": summary.q3}
    notes = []
    try:
        ci = summary.ci
        row.update(ci_low=ci.low, ci_high=ci.high, ci_confidence=ci.confidence)
    except StatsError as exc:
        notes.append(f"no CI: {exc}")
    try:
        row["spread"] = summary.spread
    except StatsError as exc:
        notes.append(f"no spread: {exc}")
    row["note"] = "; ".join(notes) or None
    return row


def _run_rows(data: ExportData) -> Iterable[dict[str, Any]]:
    from ..schema import unit_of
    from ..stats import StatsError, summarize_record

    for run in data.runs:
        unit = unit_of(run.fingerprint, run.results)
        for rec in run.results:
            row: dict[str, Any] = {
                "run": run.id, "run_source": run.source, "benchmark": f"{rec['suite']}/{rec['name']}",
                "unit": rec.get("unit") or unit, "status": rec["status"],
                "n": len(rec["samples"]), "disturbed": len(rec["disturbed"]),
                "iters": rec["iters"], "mechanism": rec.get("mechanism"),
                "reason": rec.get("reason")}
            if rec["status"] == "ok":
                try:
                    summary = summarize_record(rec)
                except StatsError as exc:
                    row["note"] = str(exc)
                else:
                    row.update(_figures(summary), overhead=summary.overhead.median,
                               overhead_subtracted=summary.overhead.subtracted)
            yield row


def _series_rows(data: ExportData) -> Iterable[dict[str, Any]]:
    from ..stats import StatsError, summarize

    for series in series_of(data):
        row: dict[str, Any] = {"source": series.source, "benchmark": series.name,
                               "unit": series.unit, "n": len(series.samples)}
        try:
            row.update(_figures(summarize(series.samples)))
        except StatsError as exc:
            row["note"] = str(exc)
        yield row


def _comparison_rows(data: ExportData) -> Iterable[dict[str, Any]]:
    from ..judge.verdict import record
    from ..stats import StatsError, median

    def mid(samples: Sequence[float]) -> float | None:
        try:
            return median(samples)
        except StatsError:
            return None

    for r in data.rows:
        row: dict[str, Any] = {
            "benchmark": r.name, "unit": r.base.unit or r.new.unit,
            "base_source": r.base.source, "base_name": r.base.name, "base_n": len(r.base.samples),
            "base_median": mid(r.base.samples), "new_source": r.new.source,
            "new_name": r.new.name, "new_n": len(r.new.samples), "new_median": mid(r.new.samples),
            "error": r.error}
        if r.error is None:   # the comparison record's verdict (kcross.judge.verdict.record)
            verdict = record(r)
            row.update({k: verdict[k] for k in VERDICT_COLUMNS})
        yield row


def render(data: ExportData) -> list[Output]:
    if data.rows:
        return [Output(_table(ROW_COLUMNS, _comparison_rows(data)))]
    if data.runs and not data.series:
        return [Output(_table(RUN_COLUMNS, _run_rows(data)))]
    return [Output(_table(SERIES_COLUMNS, _series_rows(data)))]

