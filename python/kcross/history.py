"""``kcross history``: one benchmark's trend over the stored runs, as a table and a plot.

Each stored run holding the benchmark gives a point: its median with the
distribution-free CI, and the change against the previous point of the same
host, judged by the verdict rule of :mod:`kcross.stats` (Mann-Whitney U,
Holm-Bonferroni across the changes shown at once, the ratio's bootstrap CI).

"The same host" is the hostname, architecture and CPU model (a lab run: also
the emulated machine and CPU), not the store's machine identity: that identity
covers the kernel, its command line and the forced settings, and a change of
kernel on one box is exactly what a trend is for.  Each point shows the store's
machine hash, so a changed configuration is visible, and its note says what
changed (the kernel release) against the previous point.

Only the store's public reading API is used (``result_names``, ``results_named``,
``machine_fingerprints``): one query for the benchmark's results, none per run.
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import UserError
from .judge.categories import Category
from .judge.machine import host as host_key
from .judge.machine import identity
from .judge.noise import PointCache, RunPoint, of_series, single_point
from .judge.verdict import Judgement, Pair, RunNoise, judge
from .schema import dig, unit_of
from .series import Series, bench_name, merge_results, run_start, series_of_results
from .stats import ALPHA, MedianCI, StatsError, Summary, stored_samples

if TYPE_CHECKING:
    from .store import Store
    from .store.repo import StoredResults



@dataclass(frozen=True)
class Point:
    """One benchmark in one stored run."""

    run_id: int
    started_at: dt.datetime
    name: str                      # suite/name
    hostname: str
    machine: str                   # the store's machine identity (SHA-256 hex)
    host_key: tuple[str, ...]      # what "the same host" means (module docstring)
    kernel: str
    unit: str
    series: Series | None          # None: the result has no figures (skipped, failed...)
    status: str                    # "ok", or why there are no figures ("skipped: no rseq")

    @property
    def host_label(self) -> str:
        """hostname and short machine hash: ``vm 1a2b3c4d``."""
        return f"{self.hostname} {self.machine[:8]}"

    def _summary(self) -> Summary | None:
        if self.series is None or self.series.record is None:
            return None
        return self.series.figures

    @property
    def median(self) -> float | None:
        summary = self._summary()
        return None if summary is None else summary.median

    @property
    def ci(self) -> MedianCI | StatsError | None:
        summary = self._summary()
        if summary is None:
            return None
        try:
            return summary.ci
        except StatsError as exc:
            return exc


@dataclass(frozen=True)
class Row:
    """A point of the trend and its change against the previous point of the same host."""

    point: Point
    previous: Point | None
    change: Judgement | None
    note: str | None

    @property
    def category(self) -> Category | None:
        """The change's category; None for a point without figures or a first point."""
        if self.point.series is None or self.change is None:
            return None
        return self.change.category

    @property
    def verdict(self) -> str:
        from .judge.verdict import verdict_label

        if self.point.series is None:
            return self.point.status
        if self.previous is None:
            return "first"
        assert self.change is not None
        return verdict_label(self.change)


@dataclass(frozen=True)
class MachineNoise:
    """The run-to-run noise of one benchmark on one machine identity, from its points."""

    name: str
    hostname: str
    machine: str
    noise: RunNoise | None      # None: too few runs
    runs: int


@dataclass(frozen=True)
class Trend:
    pattern: str
    rows: list[Row]
    compared: int                  # changes tested together (Holm across them)
    noise: list[MachineNoise]

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(r.point.name for r in self.rows))

    @property
    def units(self) -> list[str]:
        return list(dict.fromkeys(r.point.unit for r in self.rows))


def matches(pattern: str, name: str) -> bool:
    """``pattern`` (fnmatch) names ``suite/name`` or the bare name, as ``run --bench`` takes it."""
    return fnmatch.fnmatchcase(name, pattern) or \
        fnmatch.fnmatchcase(name.partition("/")[2], pattern)


def closest_names(pattern: str, names: Iterable[str]) -> list[str]:
    """The three names (``suite/name`` or bare) closest to a ``pattern`` that named none."""
    known = set(names)
    return difflib.get_close_matches(pattern, sorted(known | {n.partition("/")[2] for n in known}),
                                     n=3)


def _machine_matches(spec: str, hostname: str, machine: str) -> bool:
    return spec == hostname or (len(spec) >= 4 and machine.startswith(spec.lower()))


def _series(label: str, fp: dict[str, Any], run: StoredResults, wanted: list[dict[str, Any]],
            cache: PointCache | None) -> dict[str, Series]:
    """The series of a run's wanted benchmarks.  A benchmark of one harness process is made
    from the figures the store kept beside it (kcross.stats.summary_columns): its samples
    from the stored overhead decision, its noise point from the stored median and CI (into
    ``cache``), its summary left to be computed if it is shown.  Several processes' records
    are merged and summarised (series_of_results)."""
    counts: dict[str, int] = {}
    for record in run.results:
        counts[bench_name(record)] = counts.get(bench_name(record), 0) + 1
    merged = [r for r in wanted if counts[bench_name(r)] > 1]
    found = {s.name: s for s in series_of_results(label, fp, merged)} if merged else {}
    unit = unit_of(fp, wanted)
    started = run_start(fp)
    for record, figures in zip(run.results, run.figures, strict=True):
        name = bench_name(record)
        if counts[name] > 1 or record.get("status") != "ok" or figures["median_ns"] is None:
            continue
        found[name] = Series(source=label, name=name, unit=str(record.get("unit") or unit),
                             samples=stored_samples(record, figures), record=record,
                             fingerprint=fp, run=label, started=started)
        if cache is not None:
            try:
                if figures["ci_low_ns"] is None:
                    raise StatsError("no CI")
                point: RunPoint | None = single_point(label, figures["median_ns"],
                                                      figures["ci_low_ns"],
                                                      figures["ci_high_ns"], started)
            except StatsError:
                point = None
            cache[(label, name)] = point
    return found


def points(store: Store, pattern: str, cache: PointCache | None = None) -> list[Point]:
    """Every stored point of the benchmarks ``pattern`` names, oldest first.

    One query for their results (no other result is read, nothing validated again: the
    store did that when it wrote them); the machine rows give what the fingerprints say
    but for their per-run values (judge.machine.identity).  :class:`UserError` when no
    stored run holds such a benchmark (naming the closest stored names).
    """
    known = store.result_names()
    names = [n for n in known if matches(pattern, n)]
    if not names:
        close = closest_names(pattern, known)
        hint = f" (closest: {', '.join(close)})" if close else \
            (" (no runs stored)" if not known else " (see 'kcross list')")
        raise UserError(f"no stored run has a benchmark matching {errors.shown(pattern)}{hint}")
    machines = store.machine_fingerprints()
    about = {mid: (str(dig(fp, "host", "hostname") or "?"), identity(fp), host_key(fp),
                   str(dig(fp, "kernel", "release") or "?")) for mid, fp in machines.items()}
    found: list[Point] = []
    for run in store.results_named(names):
        machine_fp = machines[run.machine_id]
        fp = {**machine_fp, "host": {**(machine_fp.get("host") or {}), "time": run.host_time},
              "timer": {**(machine_fp.get("timer") or {}), "hz": run.timer_hz}}
        hostname, ident, key, kernel = about[run.machine_id]
        wanted = merge_results(run.results)
        unit = unit_of(fp, run.results)
        with_figures = _series(f"run {run.run_id}", fp, run, wanted, cache)
        for record in wanted:
            name = bench_name(record)
            status = "ok"
            if name not in with_figures:
                status = str(record.get("status"))
                reason = record.get("reason")
                status = f"{status}: {reason}" if reason and status != "ok" else \
                    (status if status != "ok" else "ok but no figures")
            found.append(Point(run_id=run.run_id, started_at=run.started_at, name=name,
                               hostname=hostname, machine=ident, host_key=key, kernel=kernel,
                               unit=unit, series=with_figures.get(name), status=status))
    return found


def trend(store: Store, pattern: str, *, machine: str | None = None, last: int | None = None,
          alpha: float = ALPHA) -> Trend:
    """The trend of ``pattern``: the last ``last`` runs holding it (all by default) of
    ``machine`` (a hostname or machine hash prefix; all by default), oldest first, each point
    with its change against the previous point of its host, shown or not."""
    cache: PointCache = {}
    every = points(store, pattern, cache)
    shown = list(range(len(every)))
    if machine is not None:
        shown = [i for i in shown if _machine_matches(machine, every[i].hostname,
                                                      every[i].machine)]
        if not shown:
            hosts = sorted({p.host_label for p in every})
            raise UserError(f"no stored run of {errors.shown(pattern)} on machine "
                            f"{errors.shown(machine)} (a hostname or a machine hash prefix of "
                            f"4+ digits; stored: {', '.join(hosts)})")
    if last is not None:
        keep = set(list(dict.fromkeys(every[i].run_id for i in shown))[-last:])
        shown = [i for i in shown if every[i].run_id in keep]
    # The previous point with figures of the same benchmark on the same host (shown or not).
    previous: dict[int, int] = {}
    latest: dict[tuple[str, tuple[str, ...]], int] = {}
    for i, p in enumerate(every):
        if p.series is not None:
            key = (p.name, p.host_key)
            if key in latest:
                previous[i] = latest[key]
            latest[key] = i
    pairs = [(previous[i], i) for i in shown if i in previous]
    by_machine = _series_by_machine(every)
    judged = judge([Pair(every[b].name, every[a].series, every[b].series,  # type: ignore[arg-type]
                         _noise(by_machine, every[a], every[b], cache))
                    for a, b in pairs], alpha=alpha)
    changes = {b: (every[a], j) for (a, b), j in zip(pairs, judged, strict=True)}
    rows = []
    for i in shown:
        p = every[i]
        before, change = changes.get(i, (None, None))
        note = None
        if before is not None:
            what = []
            if before.kernel != p.kernel:
                what.append(f"kernel {before.kernel} -> {p.kernel}")
            elif before.machine != p.machine:
                what.append(f"configuration {before.machine[:8]} -> {p.machine[:8]}")
            if change is not None and (change.note or change.error):
                what.append(str(change.error or change.note))
            note = "; ".join(what) or None
        rows.append(Row(point=p, previous=before, change=change, note=note))
    shown_points = [every[i] for i in shown]
    return Trend(pattern=pattern, rows=rows, compared=len(pairs),
                 noise=_machine_noise(by_machine, shown_points, cache))


def _series_by_machine(every: list[Point]) -> dict[tuple[str, str], dict[str, dict[str, Series]]]:
    """(benchmark, machine identity) -> run label -> {benchmark: series}: the repetitions of
    one configuration the run-to-run noise is estimated from."""
    found: dict[tuple[str, str], dict[str, dict[str, Series]]] = {}
    for p in every:
        if p.series is not None:
            found.setdefault((p.name, p.machine), {})[f"run {p.run_id}"] = {p.name: p.series}
    return found


def _noise(by_machine: dict[tuple[str, str], dict[str, dict[str, Series]]], a: Point,
           b: Point, cache: PointCache) -> RunNoise | None:
    """The run-to-run noise for the change from ``a`` to ``b``: from the other runs of
    a's machine identity (else b's), both runs left out."""
    apart = abs((b.started_at - a.started_at).total_seconds())
    for p in (a, b):
        runs = by_machine.get((p.name, p.machine), {})
        found = of_series(runs, [p.name], exclude=[f"run {a.run_id}", f"run {b.run_id}"],
                          apart=apart, cache=cache)
        if p.name in found:
            return found[p.name]
    return None


def _machine_noise(by_machine: dict[tuple[str, str], dict[str, dict[str, Series]]],
                   shown: list[Point], cache: PointCache) -> list[MachineNoise]:
    """The run-to-run noise of each benchmark on each machine identity shown (all its runs)."""
    found = []
    for name, machine in dict.fromkeys((p.name, p.machine) for p in shown if p.series):
        runs = by_machine.get((name, machine), {})
        hostname = next(p.hostname for p in shown if p.machine == machine)
        noise = of_series(runs, [name], cache=cache).get(name)
        found.append(MachineNoise(name, hostname, machine, noise, len(runs)))
    return found
