"""Sample series: one benchmark's samples from one source, the unit every comparison takes.

A series comes from a stored run, a harness JSON-lines file, a plain file of
numbers or an A/B round; compare, check, report and the exporters all work on
series, so where the samples came from is decided once, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .schema import unit_of
from .stats import StatsError, summarize_record


@dataclass(frozen=True)
class Series:
    """One benchmark's samples from one source.

    ``samples`` are what the figures are of: for a harness result, the
    overhead-corrected samples ``kcross show`` summarises (the same medians).
    ``unit`` is "ns/op", "instructions/op", or "" for plain numbers.
    """

    source: str
    name: str
    unit: str
    samples: tuple[float, ...]
    record: Mapping[str, Any] | None = None
    fingerprint: Mapping[str, Any] | None = None

    @property
    def overhead_subtracted(self) -> bool | None:
        """Whether the empty loop's cost was subtracted; None for plain numbers."""
        if self.record is None:
            return None
        try:
            return summarize_record(self.record).overhead.subtracted
        except StatsError:
            return None


def bench_name(record: Mapping[str, Any]) -> str:
    return f"{record.get('suite')}/{record.get('name')}"


def series_of_results(source: str, fingerprint: Mapping[str, Any] | None,
                      results: Iterable[Mapping[str, Any]]) -> list[Series]:
    """The series of a run's ``ok`` results that have figures, in the run's order."""
    results = list(results)
    unit = unit_of(fingerprint, results)
    found = []
    for record in results:
        if record.get("status") != "ok":
            continue
        try:
            samples = summarize_record(record).samples
        except StatsError:
            continue
        found.append(Series(source=source, name=bench_name(record),
                            unit=str(record.get("unit") or unit), samples=samples,
                            record=record, fingerprint=fingerprint))
    return found
