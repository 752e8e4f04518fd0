"""``json``: the versioned result format (docs/result-format.md).

A run is written as the harness wrote it, one record per line (fingerprint,
plan, results, end; no end for an interrupted run): ``kcross import`` reads it
back as the same run.  A comparison is one ``comparison`` record holding both
sides' samples and the verdicts, checked against the schema file before it is
written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from . import ExportData, Output

if TYPE_CHECKING:
    from ..judge.verdict import Judgement
    from ..series import Series
    from ..store import StoredRun


def run_records(run: StoredRun) -> list[dict[str, Any]]:
    """The run's records in stream order, as ``kcross-harness run --json`` wrote them."""
    return [r for r in (run.fingerprint, run.plan, *run.results, run.end) if r is not None]


def _lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def render(data: ExportData) -> list[Output]:
    if data.rows:
        return [Output(_lines([comparison_record(data.rows)]))]
    if len(data.runs) == 1 and not data.series:
        return [Output(_lines(run_records(data.runs[0])))]
    if data.runs and not data.series:
        raise UserError(f"the json export holds one run per file, not {len(data.runs)} "
                        "(export each run on its own)")
    raise UserError("the json export holds a run or a comparison; these samples are neither "
                    "(export them as csv, gobench or ministat)")


def _side(series: Series) -> dict[str, Any]:
    from ..stats import StatsError, median

    try:
        mid: float | None = median(series.samples)
    except StatsError:
        mid = None
    return {"source": series.source, "name": series.name, "n": len(series.samples),
            "median": mid, "overhead_subtracted": series.overhead_subtracted,
            "samples": [float(x) for x in series.samples],
            "processes": list(series.processes) if series.processes else None}


def _verdict(j: Judgement) -> dict[str, Any] | None:
    from ..judge.verdict import record

    return None if j.error is not None else record(j)


def comparison_record(rows: Sequence[Judgement]) -> dict[str, Any]:
    """The ``comparison`` record of ``rows`` (docs/result-format.md), validated."""
    from ..schema import SCHEMA_VERSION, validate
    from . import geomeans

    sources: dict[str, Mapping[str, Any] | None] = {}
    for row in rows:
        for series in (row.base, row.new):
            if sources.get(series.source) is None:
                sources[series.source] = series.fingerprint
    pairs = geomeans(rows)
    record = {
        "type": "comparison", "schema": SCHEMA_VERSION,
        "sources": [{"source": name, "fingerprint": dict(fp) if fp is not None else None}
                    for name, fp in sources.items()],
        "rows": [{"name": row.name, "unit": row.base.unit or row.new.unit,
                  "base": _side(row.base), "new": _side(row.new),
                  "verdict": _verdict(row),
                  "error": row.error}
                 for row in rows],
        # one figure when all rows compare the same two sources; else per pair only
        "geomean_ratio": pairs[0][2] if len(pairs) == 1 else None,
        "geomeans": [{"base": b, "new": n, "ratio": g} for b, n, g in pairs],
    }
    # Through JSON once: the record is checked as a reader will see it.
    record = json.loads(json.dumps(record))
    validate(record, "comparison export", (SCHEMA_VERSION,))
    return record
