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

A lab machine's runs are a release series: its kernel is the machine's axis
(kcross.fingerprint.kernel_label), so its points are shown in its kernels' order
(kcross.fingerprint.kernel_order: oldest kernel first, then by time), at the places its
points take in the time order, each step judged against the previous kernel's point
(exactly: instruction counts); its run-to-run noise is its points' of one kernel.

The work is the window's (``trend``'s ``last``: the CLI shows the newest 50 runs), not the
store's: only the store's reads for a trend are used (kcross.store.history: ``runs_holding``
finds the window's runs newest first through the results' key, ``results_named`` reads their
records in one query,
a walk back per host and benchmark finds the previous point before the window, and
``figures_named`` gives the machines' run-to-run noise from the summary columns stored beside
every result, reading no record).  Holm-Bonferroni's family is the changes shown.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import errors
from .. import fingerprint as fields
from ..errors import UserError
from ..fingerprint import HASH_SHOWN, along_kernels, identity
from ..judge.categories import Category
from ..judge.machine import host as host_key
from ..judge.noise import (
    HISTORY,
    HISTORY_RUNS,
    Candidate,
    Config,
    PointCache,
    RunPoint,
    Runs,
    exact_counts,
    left_out,
    run_point,
    select,
    single_point,
    stored_point,
)
from ..judge.verdict import Judgement, RunNoise
from ..schema import unit_of
from ..series import (
    Series,
    bench_name,
    benchmark_hint,
    host_time,
    matches,
    merge_results,
    run_start,
    series_of_results,
)
from ..sides import not_complete
from ..stats import ALPHA, MedianCI, StatsError, Summary, stored_samples

if TYPE_CHECKING:
    from ..store import Store
    from ..store.history import StoredResults
    from ..store.reading import RunFacts



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
    # A lab machine's kernel (its axis): its label, its place in the kernels' order and its
    # SHA-256; None for a real machine's point.
    axis: str | None = None
    axis_order: tuple[Any, ...] = ()
    axis_sha: str | None = None
    run_status: str = "complete"   # the stored status of its run

    @property
    def host_label(self) -> str:
        """hostname and short machine hash: ``vm 1a2b3c4d``."""
        return f"{self.hostname} {self.machine[:HASH_SHOWN]}"

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
class TrendRow:
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
        from ..judge.verdict import verdict_label

        if self.point.series is None:
            return self.point.status
        if self.previous is None:
            return "first"
        assert self.change is not None
        return verdict_label(self.change)


@dataclass(frozen=True)
class MachineNoise:
    """The run-to-run noise of one benchmark on one machine identity (a lab machine's: of
    one kernel), from its points."""

    name: str
    hostname: str
    machine: str
    noise: RunNoise | None      # None: too few runs, or exact counts
    runs: int
    kernel: str | None = None   # the lab machine's kernel, when it shows several
    exact: bool = False         # exact counts: no run-to-run noise (a change is a change)


@dataclass(frozen=True)
class Trend:
    pattern: str
    rows: list[TrendRow]
    compared: int                  # changes tested together (Holm across them): those shown
    noise: list[MachineNoise]
    runs: int = 0                  # runs shown
    total_runs: int = 0            # runs holding the benchmark (of --machine)

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(r.point.name for r in self.rows))

    @property
    def release_series(self) -> bool:
        """Whether a lab host is shown with several kernels (its points in their order)."""
        kernels: dict[tuple[str, ...], set[str]] = {}
        for r in self.rows:
            if r.point.axis is not None:
                kernels.setdefault(r.point.host_key, set()).add(r.point.axis)
        return any(len(k) > 1 for k in kernels.values())

    @property
    def units(self) -> list[str]:
        return list(dict.fromkeys(r.point.unit for r in self.rows))


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


def _names(store: Store, pattern: str) -> list[str]:
    """The stored benchmarks ``pattern`` names; :class:`UserError` naming the closest if none."""
    from ..store import history as queries

    # A pattern without wildcards names a benchmark exactly: looked up, not every name listed.
    exact = not any(c in pattern for c in "*?[")
    names = [n for n in queries.result_names(store, pattern if exact else None)
             if matches(pattern, n)]
    if not names:
        known = queries.result_names(store)
        close = benchmark_hint(pattern, known)
        hint = f" ({close})" if close else \
            (" (no runs stored)" if not known else " (see 'kcross list')")
        raise UserError(f"no stored run has a benchmark matching {errors.shown(pattern)}{hint}")
    return names


About = dict[int, tuple[str, str, tuple[str, ...], str]]


def _about(machines: dict[int, dict[str, Any]]) -> About:
    """machine id -> (hostname, machine identity, host key, kernel release)."""
    return {mid: (str(fields.HOSTNAME.of(fp) or "?"), identity(fp), host_key(fp),
                  str(fields.KERNEL_RELEASE.of(fp) or "?")) for mid, fp in machines.items()}


def _points_of(store: Store, names: list[str], run_ids: Iterable[int] | None,
               machines: dict[int, dict[str, Any]], about: About,
               cache: PointCache | None) -> dict[int, list[Point]]:
    """The points of the benchmarks ``names`` in the runs ``run_ids`` (all: None), by run
    (oldest first), in one query (nothing validated again: the store did that when it wrote
    them); the machine rows give what the fingerprints say but for their per-run values
    (kcross.fingerprint.identity)."""
    from ..store import history as queries

    found: dict[int, list[Point]] = {}
    for run in queries.results_named(store, names, run_ids):
        machine_fp = machines[run.machine_id]
        fp = fields.TIMER_HZ.put(fields.HOST_TIME.put(machine_fp, run.host_time), run.timer_hz)
        # the run's own kernel: a lab machine's runs have kernels of their own (its axis)
        fp = fields.KERNEL_RELEASE.put(fp, run.kernel_release)
        if fields.lab(fp) is not None and run.lab_kernel is not None:
            fp = fields.LAB_KERNEL.put(fp, run.lab_kernel)
        hostname, ident, key, _ = about[run.machine_id]
        kernel = str(run.kernel_release or "?")
        axis = fields.kernel_label(fp)
        axis_sha = fields.LAB_KERNEL_SHA256.of(fp) if axis is not None else None
        wanted = merge_results(run.results)
        unit = unit_of(fp, run.results)
        with_figures = _series(f"run {run.run_id}", fp, run, wanted, cache)
        here = found.setdefault(run.run_id, [])
        for record in wanted:
            name = bench_name(record)
            status = "ok"
            if name not in with_figures:
                status = str(record.get("status"))
                reason = record.get("reason")
                status = f"{status}: {reason}" if reason and status != "ok" else \
                    (status if status != "ok" else "ok but no figures")
            here.append(Point(run_id=run.run_id, started_at=run.started_at, name=name,
                              hostname=hostname, machine=ident, host_key=key, kernel=kernel,
                              unit=unit, series=with_figures.get(name), status=status,
                              axis=axis, axis_order=fields.kernel_order(fp) if axis else (),
                              axis_sha=str(axis_sha) if axis_sha else None,
                              run_status=run.status))
    return found


def _context(store: Store, names: list[str], shown: list[Point], about: About,
             machine_ids: list[int] | None, loaded: dict[int, list[Point]],
             load: Any) -> None:
    """Load into ``loaded`` the points a change of a shown point may be measured against
    that are not shown: for each host and benchmark, the newest point with figures before
    its first shown one; and with ``--machine`` a hash prefix, the host's other machines'
    points among the shown ones.  A few queries per host, a few runs read."""
    from ..store import history as queries

    groups: dict[tuple[str, ...], list[Point]] = {}
    for p in shown:
        groups.setdefault(p.host_key, []).append(p)
    for key, pts in groups.items():
        host_ids = [mid for mid, a in about.items() if a[2] == key]
        if machine_ids is not None and set(host_ids) - set(machine_ids):
            last = (pts[-1].started_at, pts[-1].run_id + 1)
            load(names, queries.runs_holding(store, names, machine_ids=host_ids,
                                             since=(pts[0].started_at, pts[0].run_id),
                                             before=last))
        # Walk back from the host's first shown point, newest first, a page of runs at a
        # time, until each benchmark has its point with figures (or the history ends).
        pending = list(dict.fromkeys(p.name for p in pts))
        before, page = (pts[0].started_at, pts[0].run_id), 1
        while pending:
            ids = queries.runs_holding(store, pending, machine_ids=host_ids, before=before,
                                       ok_only=True, limit=page)
            load(pending, ids)
            found = [p for i in ids for p in loaded.get(i, ())]
            pending = [n for n in pending
                       if not any(p.name == n and p.series is not None for p in found)]
            if len(ids) < page:
                break
            before = min((p.started_at, p.run_id) for p in found)
            page *= 2


def trend(store: Store, pattern: str, *, machine: str | None = None,
          last: int | None = None, alpha: float = ALPHA) -> Trend:
    """The trend of ``pattern``: the last ``last`` runs holding it (None: all) of ``machine``
    (a hostname or machine hash prefix; all by default), oldest first, each point with its
    change against the previous point of its host, shown or not.

    The work is the window's: its runs' results are read (one query), and for each host and
    benchmark the newest point with figures before the window; the machines' run-to-run
    noise comes from the summary columns of their stored results (no record read; for runs
    of several processes, the records of the newest HISTORY_RUNS of them)."""
    from ..store import history as queries

    cache: PointCache = {}
    names = _names(store, pattern)
    machines = queries.machine_fingerprints(store)
    about = _about(machines)
    machine_ids = None
    if machine is not None:
        machine_ids = [mid for mid, (hostname, ident, _, _) in about.items()
                       if _machine_matches(machine, hostname, ident)]
        if not machine_ids or not queries.runs_holding(store, names, machine_ids=machine_ids,
                                                       limit=1):
            hosts = sorted({f"{about[mid][0]} {about[mid][1][:HASH_SHOWN]}"
                            for mid in queries.machines_holding(store, names)})
            raise UserError(f"no stored run of {errors.shown(pattern)} on machine "
                            f"{errors.shown(machine)} (a hostname or a machine hash prefix of "
                            f"4+ digits; stored: {', '.join(hosts)})")
    window = queries.runs_holding(store, names, machine_ids=machine_ids, limit=last)
    total = len(window) if last is None or len(window) < last else \
        queries.count_runs_holding(store, names, machine_ids=machine_ids)
    loaded: dict[int, list[Point]] = {}
    have: set[tuple[int, str]] = set()

    def load(wanted: list[str], ids: Iterable[int]) -> None:
        ids = [i for i in ids if any((i, n) not in have for n in wanted)]
        if not ids:
            return
        for run_id, pts in _points_of(store, wanted, ids, machines, about, cache).items():
            for p in pts:
                if (run_id, p.name) not in have:
                    loaded.setdefault(run_id, []).append(p)
        have.update((i, n) for i in ids for n in wanted)

    def order(pts: Iterable[Point]) -> list[Point]:
        return sorted(pts, key=lambda p: (p.started_at, p.run_id))  # stable: a run's order

    load(names, window)
    in_window = set(window)
    _context(store, names, order(p for i in window for p in loaded.get(i, ())), about,
             machine_ids, loaded, load)
    # a lab host's points in its kernels' order: its release series
    every = along_kernels(order(p for pts in loaded.values() for p in pts),
                          lambda p: p.host_key if p.axis is not None else None,
                          lambda p: (p.axis_order, p.started_at, p.run_id))
    shown = [i for i, p in enumerate(every) if p.run_id in in_window]
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
    noise = _NoiseHistory(store, machines, about, cache)
    changes = {b: (every[a], j) for (a, b), j in zip(pairs, _changes(every, pairs, noise, alpha),
                                                     strict=True)}
    rows = []
    for i in shown:
        p = every[i]
        before, change = changes.get(i, (None, None))
        what = [] if p.run_status == "complete" else \
            [not_complete(f"run {p.run_id}", p.run_status)]
        if before is not None:
            if before.axis is not None and p.axis is not None and before.axis != p.axis:
                what.append(f"kernel {before.axis} -> {p.axis}")
            elif before.kernel != p.kernel:
                what.append(f"kernel {before.kernel} -> {p.kernel}")
            elif before.machine != p.machine:
                what.append(f"configuration {before.machine[:HASH_SHOWN]} -> "
                            f"{p.machine[:HASH_SHOWN]}")
            if change is not None and (change.note or change.error):
                what.append(str(change.error or change.note))
        note = "; ".join(what) or None
        rows.append(TrendRow(point=p, previous=before, change=change, note=note))
    return Trend(pattern=pattern, rows=rows, compared=len(pairs),
                 noise=noise.of_machines([every[i] for i in shown]),
                 runs=len(window), total_runs=total)


def _changes(every: list[Point], pairs: list[tuple[int, int]], noise: _NoiseHistory,
             alpha: float) -> list[Judgement]:
    """Each change (previous point, point) judged by kcross.judge, all together (Holm across
    the changes shown), with the run-to-run noise of the points' machines."""
    from ..judge.comparison import compare_together
    from ..sides import Side

    point_of = {id(p.series): p for p in every if p.series is not None}

    def side(p: Point) -> Side:
        assert p.series is not None
        return Side(label=p.series.source, series=(p.series,), single=True)

    def lookup(name: str, a: Series, b: Series) -> RunNoise | None:
        return noise.of_change(point_of[id(a)], point_of[id(b)])

    compared = compare_together([[side(every[a]), side(every[b])] for a, b in pairs],
                                noise=lookup, alpha=alpha, refuse_values=False)
    return [c.rows[0].judgements[1] for c in compared]  # type: ignore[misc]


class _NoiseHistory:
    """The run-to-run noise of benchmarks on machine identities, from the whole stored
    history: a run's point from its stored summary columns (one process: its median and CI,
    as judge.noise.single_point takes them; no record read) or, for a run of several
    processes, from its records (the newest HISTORY_RUNS such runs of the machine that may
    feed an estimate: their point needs their pooled samples).  Which runs feed an estimate
    is judge.noise.select's rule (the configuration, the runs left out)."""

    def __init__(self, store: Store, machines: dict[int, dict[str, Any]], about: About,
                 cache: PointCache) -> None:
        self.store, self.machines, self.about, self.cache = store, machines, about, cache
        self.ids = {ident: mid for mid, (_, ident, _, _) in about.items()}
        self._lab: dict[int, bool] = {}     # machine id -> whether a lab guest's
        self._points: dict[tuple[str, str, str | None], dict[str, Candidate]] = {}
        self._counted: dict[tuple[str, str, str | None], int] = {}
        self._facts: dict[int, RunFacts] = {}
        # select's points for a configuration (None: the newest's) as one estimate's runs,
        # and each run label's place among them
        self._runs: dict[tuple[str, str, str | None, Config | None],
                         tuple[Runs, dict[str, int]]] = {}

    def facts(self, run_id: int, machine: str) -> RunFacts | None:
        """The noise facts of a run (those of its machine's runs read at once)."""
        if run_id not in self._facts:
            for f in self.store.run_facts(machine_ids=[self.ids[machine]]):
                self._facts[f.id] = f
        return self._facts.get(run_id)

    def config(self, p: Point) -> Config | None:
        """The configuration of a point's run (judge.noise.Config)."""
        facts = self.facts(p.run_id, p.machine)
        if p.series is None or facts is None:
            return None
        return Config(p.machine, facts.harness, p.series.process_count, p.series.per_process)

    def points(self, name: str, machine: str, kernel: str | None = None) -> dict[str, Candidate]:
        """run label -> candidate point of ``name`` on the machine identity ``machine`` (a
        lab machine's: with the kernel whose SHA-256 is ``kernel``), oldest first: the
        runs that may feed an estimate (judge.noise.left_out)."""
        from ..store import history as queries

        key = (name, machine, kernel)
        if key in self._points:
            return self._points[key]
        fp = self.machines[self.ids[machine]]
        # left_out of the machine's runs by what it reads of each (10,000 runs, a few kinds)
        why: dict[tuple[str, bool, str | None], str | None] = {}
        runs: dict[int, Any] = {}
        for row in queries.figures_named(self.store, [name], [self.ids[machine]]):
            facts = self.facts(row.run_id, machine)
            if facts is None:
                continue
            told = (facts.status, facts.quick, facts.excluded)
            if told not in why:
                why[told] = left_out(status=facts.status, quick=facts.quick,
                                     excluded=facts.excluded, fingerprint=fp)
            if why[told] is not None:
                continue
            if kernel is None or row.kernel_sha256 == kernel:
                runs[row.run_id] = row
        several = [i for i, row in runs.items() if row.processes > 1][-HISTORY_RUNS:]
        todo = [i for i in several if (f"run {i}", name) not in self.cache]
        levels = self.store.process_levels(todo) if todo else {}
        for run_id, stored in levels.items():   # as stored with the run: run_point's level
            level = stored.get(name)
            if level is not None and level.processes is not None:  # else no figures: no point
                self.cache[(f"run {run_id}", name)] = stored_point(
                    f"run {run_id}", level, self._started(runs[run_id]))
        todo = [i for i in todo if i not in levels]   # stored before schema 9: the records
        if todo:
            for run_id, pts in _points_of(self.store, [name], todo, self.machines, self.about,
                                          None).items():
                for p in pts:
                    if p.series is not None:  # without figures: no point, not counted
                        try:
                            point: RunPoint | None = run_point(p.series)
                        except StatsError:
                            point = None
                        self.cache[(f"run {run_id}", name)] = point
        kept = set(several)
        found: dict[str, Candidate] = {}
        counted = 0    # the runs with figures, with a point or not
        for run_id, row in runs.items():
            label = f"run {run_id}"
            if row.processes > 1:
                if run_id not in kept or (label, name) not in self.cache:
                    continue
            elif row.status != "ok" or row.median_ns is None:
                continue
            elif (label, name) not in self.cache:
                self.cache[(label, name)] = self._single(row)
            counted += 1
            point = self.cache[(label, name)]
            facts = self.facts(run_id, machine)
            if point is not None and facts is not None:
                found[label] = Candidate(point, Config(machine, facts.harness, row.processes,
                                                       int(row.n) // row.processes),
                                         stored=run_id)
        self._points[key] = found
        self._counted[key] = counted
        return found

    def _started(self, row: Any) -> float | None:
        """run_start of the machine's fingerprint with the run's host.time: a lab guest's
        none."""
        if row.machine_id not in self._lab:
            self._lab[row.machine_id] = fields.lab(self.machines[row.machine_id]) is not None
        return None if self._lab[row.machine_id] else host_time(row.host_time)

    def _single(self, row: Any) -> RunPoint | None:
        started = self._started(row)
        try:
            if row.ci_low_ns is None:
                raise StatsError("no CI")
            return single_point(f"run {row.run_id}", row.median_ns, row.ci_low_ns,
                                row.ci_high_ns, started)
        except StatsError:
            return None

    def _estimate(self, name: str, machine: str, kernel: str | None, like: Config | None,
                  apart: float | None, exclude: Iterable[str] = ()) -> RunNoise | None:
        """The noise of the points judge.noise.select takes of ``points(name, machine,
        kernel)`` for runs of configuration ``like`` (None: the newest's), the runs labelled
        ``exclude`` left out: select's points made ready once (a noise.Runs) for all the
        changes shown, the runs compared left out by their places (as select's ``exclude``
        leaves them out: its points but them)."""
        key = (name, machine, kernel, like)
        if key not in self._runs:
            chosen = select(self.points(name, machine, kernel).values(), like)
            self._runs[key] = (Runs([chosen]), {p.run: i for i, p in enumerate(chosen)})
        runs, place = self._runs[key]
        leave = {place[x] for x in exclude if x in place}
        try:
            return runs.estimate(HISTORY, apart=apart, leave_out=leave)
        except StatsError:
            return None

    def of_change(self, a: Point, b: Point) -> RunNoise | None:
        """The run-to-run noise for the change from ``a`` to ``b``: from the other runs of
        a's configuration (else b's; a lab machine's: of the point's kernel), both runs left
        out."""
        apart = abs((b.started_at - a.started_at).total_seconds())
        left = {f"run {a.run_id}", f"run {b.run_id}"}
        for p in (a, b):
            like = self.config(p)
            if like is None:
                continue
            found = self._estimate(p.name, p.machine, p.axis_sha, like, apart, left)
            if found is not None:
                return found
        return None

    def of_machines(self, shown: list[Point]) -> list[MachineNoise]:
        """The run-to-run noise of each benchmark on each machine identity shown (a lab
        machine's: with each kernel it is shown with, named when there are several), from
        the runs of its newest configuration; none for exact counts."""
        found = []
        kernels: dict[tuple[str, str], set[str | None]] = {}
        for p in shown:
            if p.series:
                kernels.setdefault((p.name, p.machine), set()).add(p.axis_sha)
        for name, machine, sha in dict.fromkeys((p.name, p.machine, p.axis_sha)
                                                for p in shown if p.series):
            first = next(p for p in shown if p.machine == machine and p.axis_sha == sha)
            several = len(kernels[(name, machine)]) > 1
            if exact_counts(self.machines[self.ids[machine]]):
                found.append(MachineNoise(name, first.hostname, machine, None, 0,
                                          kernel=first.axis if several else None, exact=True))
                continue
            found.append(MachineNoise(name, first.hostname, machine,
                                      self._estimate(name, machine, sha, None, None),
                                      self._counted[(name, machine, sha)],
                                      kernel=first.axis if several else None))
        return found
