"""Sample series: one benchmark's samples from one source, the unit every comparison takes;
and a benchmark's result records of several harness processes, merged into one.

A series comes from a stored run, a harness JSON-lines file, a plain file of
numbers or an A/B round; compare, check, report and the exporters all work on
series, so where the samples came from is decided once, here.

A run of several processes (``kcross run --processes K``) holds K result records
per benchmark, each marked with its ``process`` (0..K-1).  :func:`merge_results`
turns them into one record per benchmark, as every reader shows it: the raw samples
(and the empty loop's) of all processes pooled, the per-sample process index kept
in ``process_of_sample``, counters summed, flags gathered.  The statistics rule then
applies to the pooled record (one overhead decision per benchmark, its median of all
samples); the process index gives the verdicts their second level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from . import fingerprint as fields
from .schema import unit_of
from .stats import PROCESS_OF_SAMPLE, StatsError, Summary, raw_samples, summarize_record


@dataclass(frozen=True)
class Series:
    """One benchmark's samples from one source.

    ``samples`` are what the figures are of: for a harness result, the
    overhead-corrected samples ``kcross show`` summarises (the same medians).
    ``unit`` is "ns/op", "instructions/op", or "" for plain numbers.
    ``processes`` gives each sample's harness process (None: one process, or plain
    numbers); ``run`` names the run (or capture) the samples came from, so that two
    series of one run are told from series of two separate runs (None: plain numbers).
    """

    source: str
    name: str
    unit: str
    samples: tuple[float, ...]
    record: Mapping[str, Any] | None = None
    fingerprint: Mapping[str, Any] | None = None
    processes: tuple[int, ...] | None = None
    run: str | None = None
    started: float | None = None     # when its run started (POSIX seconds), when known
    # The record's figures (kcross.stats.summarize_record), computed once, where the series
    # was made: None for plain numbers.
    summary: Summary | None = field(default=None, compare=False, repr=False)

    @cached_property
    def figures(self) -> Summary | None:
        """The record's summary: the one given, else computed once (None: plain numbers, or
        a record without figures)."""
        if self.summary is not None or self.record is None:
            return self.summary
        try:
            return summarize_record(self.record)
        except StatsError:
            return None

    @property
    def overhead_subtracted(self) -> bool | None:
        """Whether the empty loop's cost was subtracted; None for plain numbers."""
        return None if self.figures is None else self.figures.overhead.subtracted

    def raw(self) -> Series:
        """The same series with its samples as measured, the empty loop included (itself
        when nothing was subtracted, or for plain numbers)."""
        if self.record is None or not self.overhead_subtracted:
            return self
        samples = raw_samples(self.record)
        if len(samples) != len(self.samples):
            return self
        return replace(self, samples=tuple(samples))

    @property
    def process_count(self) -> int:
        return 1 if self.processes is None else len(set(self.processes))

    @property
    def per_process(self) -> int:
        """Samples per process: the run's design (its processes measure alike)."""
        return len(self.samples) // self.process_count

    def by_process(self) -> list[Sequence[float]]:
        """The samples of each process, in process order (one group for one process)."""
        if self.processes is None:
            return [self.samples]
        from .stats import groups_of

        return groups_of(self.samples, self.processes)


def bench_name(record: Mapping[str, Any]) -> str:
    return f"{record.get('suite')}/{record.get('name')}"


def matches(pattern: str, name: str) -> bool:
    """``pattern`` (fnmatch) names ``suite/name`` or the bare name, as ``run --bench`` takes it."""
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern) or \
        fnmatch.fnmatchcase(name.partition("/")[2], pattern)


def benchmark_hint(pattern: str, names: Iterable[str]) -> str:
    """The benchmarks closest to a ``pattern`` that named none, as kcross.errors.did_you_mean
    says them: by ``suite/name`` when the pattern has a suite, else by the bare name."""
    from .errors import did_you_mean

    known = set(names)
    return did_you_mean(pattern, known if "/" in pattern else
                        {n.partition("/")[2] or n for n in known})


def series_of_results(source: str, fingerprint: Mapping[str, Any] | None,
                      results: Iterable[Mapping[str, Any]], run: str | None = None) -> list[Series]:
    """The series of a run's ``ok`` results that have figures, in the run's order (the
    records of several processes merged first).  ``run`` names the run (default: the
    source)."""
    merged = merge_results(results)
    unit = unit_of(fingerprint, merged)
    started = run_start(fingerprint)
    found = []
    for record in merged:
        if record.get("status") != "ok":
            continue
        try:
            summary = summarize_record(record)
        except StatsError:
            continue
        processes = record.get(PROCESS_OF_SAMPLE)
        found.append(Series(source=source, name=bench_name(record),
                            unit=str(record.get("unit") or unit), samples=summary.samples,
                            record=record, fingerprint=fingerprint,
                            processes=tuple(processes) if processes else None,
                            run=run or source, started=started, summary=summary))
    return found


def run_start(fingerprint: Mapping[str, Any] | None) -> float | None:
    """When a run started (its fingerprint's ``host.time``, POSIX seconds), or None: unknown,
    or a lab guest's (its clock counts instructions from a fixed date)."""
    if not fingerprint or fields.lab(fingerprint) is not None:
        return None
    return host_time(fields.HOST_TIME.of(fingerprint))


def host_time(text: object) -> float | None:
    """A fingerprint's ``host.time`` in POSIX seconds (run_start of a fingerprint not a lab
    guest's), or None: not a time."""
    import datetime as dt

    if not isinstance(text, str):
        return None
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


# --- several processes ---------------------------------------------------------------------

def process_count(results: Iterable[Mapping[str, Any]]) -> int:
    """How many harness processes a run's results come from (1 for a run of one)."""
    seen = {r.get("process", 0) for r in results}
    return max(1, len(seen))


def merge_results(results: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per benchmark, in the order the benchmarks first appear.

    A benchmark with one record (a run of one process) is that record, unchanged.  The
    records of several processes become one: ok when any process measured it (the
    processes that skipped or failed it are named in its ``reason``... a failed process
    makes the benchmark failed: its check failed there), samples, ticks and the empty
    loop's samples pooled in process order, ``disturbed`` indices shifted into the
    pooled samples, counter totals summed (``per_op`` over all operations), flags
    gathered once per name, ``elapsed_s`` summed; ``process_of_sample`` holds each
    sample's process and ``processes`` their number.
    """
    order: list[str] = []
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in results:
        key = bench_name(record)
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(record)
    return [dict(groups[k][0]) if len(groups[k]) == 1 else _merge(groups[k]) for k in order]


def _merge(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    records = sorted(records, key=lambda r: int(r.get("process", 0)))
    first = records[0]
    merged: dict[str, Any] = dict(first)
    merged.pop("process", None)
    merged["processes"] = len(records)
    failed = [r for r in records if r.get("status") == "failed"]
    ok = [r for r in records if r.get("status") == "ok"]
    if failed:
        bad = failed[0]
        merged.update(status="failed", overhead=None, samples=[], ticks=[], disturbed=[],
                      reason=f"{bad.get('reason')} (process {bad.get('process', 0)} of "
                             f"{len(records)})")
        return merged
    if not ok:
        return merged                                    # skipped everywhere: the first's reason
    samples: list[float] = []
    ticks: list[float] = []
    oh_samples: list[float] = []
    oh_ticks: list[float] = []
    disturbed: list[int] = []
    process_of: list[int] = []
    counters: dict[str, dict[str, Any]] = {}
    operations: dict[str, float] = {}
    flags: dict[str, dict[str, Any]] = {}
    flag_count: dict[str, int] = {}
    elapsed = 0.0
    for r in ok:
        base = len(samples)
        n = len(r["samples"])
        samples += r["samples"]
        ticks += r.get("ticks") or []
        overhead = r.get("overhead") or {}
        oh_samples += overhead.get("samples") or []
        oh_ticks += overhead.get("ticks") or []
        disturbed += [base + i for i in r.get("disturbed") or []]
        process_of += [int(r.get("process", 0))] * n
        ops = float(r.get("iters") or 0) * n
        for event, counter in (r.get("counters") or {}).items():
            total = counter.get("total")
            if total is None:
                continue
            entry = counters.setdefault(event, {"total": 0, "per_op": None, "scaled": False})
            entry["total"] += total
            entry["scaled"] = bool(entry["scaled"] or counter.get("scaled"))
            operations[event] = operations.get(event, 0.0) + ops
        for flag in r.get("flags") or []:
            name = str(flag.get("flag"))
            flags.setdefault(name, dict(flag))
            flag_count[name] = flag_count.get(name, 0) + 1
        elapsed += float(r.get("elapsed_s") or 0.0)
    for event, entry in counters.items():
        ops = operations.get(event, 0.0)
        entry["per_op"] = entry["total"] / ops if ops else None
    if len(ticks) != len(samples):
        ticks = []
    if len(oh_ticks) != len(oh_samples):
        oh_ticks = []
    for name, flag in flags.items():
        if len(records) > 1:
            flag["detail"] = f"{flag.get('detail')} (in {flag_count[name]} of {len(records)} " \
                             "processes)"
    merged.update(samples=samples, ticks=ticks, disturbed=disturbed, counters=counters,
                  flags=list(flags.values()), elapsed_s=elapsed,
                  overhead={**(first.get("overhead") or ok[0].get("overhead") or {}),
                            "samples": oh_samples, "ticks": oh_ticks},
                  status="ok", reason=None, iters=ok[0].get("iters"))
    merged[PROCESS_OF_SAMPLE] = process_of
    if len(ok) < len(records):
        merged["reason"] = f"measured in {len(ok)} of {len(records)} processes"
    return merged
