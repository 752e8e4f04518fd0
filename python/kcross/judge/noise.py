"""A machine's run-to-run noise, per benchmark: how much two separate runs of one
configuration differ beyond what each run's own samples and processes show.

On a VM the speed drifts on a scale longer than one run (measured on the development
VM: run medians of getppid-dispatch vary 2.9% where their processes predict 1.1%), so
a verdict between two separate runs that ignores this level calls A/A pairs different
most of the time.  The noise is estimated from repetitions of one configuration (the
runs of one machine identity, kcross.fingerprint.identity), one-way random effects
by the method of moments (kcross.stats.between_runs): the variance of the runs' log
figures less the mean of their within-run variances.  Sources:

- the store's own history: the last runs of the same machine identity holding the
  benchmark (the two runs being compared left out, so that a real change between them
  is not taken for noise: by their label, and by their start, for a side given as a
  file that is also stored);
- a calibration ``kcross aa`` runs and stores (the same estimate from its runs).

At least MIN_RUNS runs are needed; with few runs the estimate is uncertain, which its
degrees of freedom carry into the verdict's t interval.

A VM's speed drifts slowly: on the development VM two runs taken back to back differed by
about 1.9% (getppid-inline, as a per-run sd) where runs five minutes apart differed by
3.0%.  So the noise a comparison needs depends on how far apart its two runs were taken:
given that separation, the estimate uses the pairs of stored runs no further apart than
twice it (at least NEAR_WINDOW_S), half their mean squared difference (the drift's
variogram there), when there are at least MIN_PAIRS such pairs; otherwise the spread of
all the runs (the noise of runs taken at any time: the larger, the safe side).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import fingerprint as fields
from .. import stats
from ..fingerprint import identity
from ..series import Series, bench_name, host_time, series_of_results
from ..stats import StatsError
from .verdict import RunNoise

if TYPE_CHECKING:
    from ..store import Store

HISTORY = "stored runs of this machine"   # RunNoise.source: the store's own history
CALIBRATION = "kcross aa calibration"     # RunNoise.source: runs kcross aa made for it
NEAR_WINDOW_S = 30.0  # the narrowest window of the near estimate (seconds between runs)
MIN_PAIRS = 3         # pairs of runs within the window the near estimate needs
MIN_RUNS = 3          # fewer runs give no estimate worth a verdict (2 degrees of freedom)
HISTORY_RUNS = 20     # the most recent runs of a machine taken into an estimate


@dataclass(frozen=True)
class RunPoint:
    """One run's figure of one benchmark on the log scale, and its own noise (the
    variance of that log figure as the run's processes, or its samples, show it)."""

    run: str
    log: float
    var: float
    started: float | None = None     # POSIX seconds


def run_point(series: Series) -> RunPoint:
    """A run's point: its processes' level, or for one process its median's CI as a
    variance."""
    if series.process_count >= 2:
        level = stats.process_level(series.by_process())
        return RunPoint(str(series.run), level.log, level.var, series.started)
    median = stats.median(series.samples)
    if median <= 0:
        raise StatsError("median is 0: no log figure")
    ci = stats.median_ci(series.samples)
    return single_point(str(series.run), median, ci.low, ci.high, series.started)


def single_point(run: str, median: float, low: float, high: float,
                 started: float | None) -> RunPoint:
    """The point of a run of one process from its median and the median's CI (also as the
    store keeps them beside a result: kcross.stats.summary_columns)."""
    if median <= 0:
        raise StatsError("median is 0: no log figure")
    se = stats.log_se_of_interval(max(low, median * 1e-12), high)
    return RunPoint(run, math.log(median), se * se, started)


def separation(a: Series, b: Series) -> float | None:
    """Seconds between the starts of two series' runs, when both are known."""
    if a.started is None or b.started is None:
        return None
    return abs(b.started - a.started)


def estimate(points: Sequence[RunPoint], source: str, *,
             apart: float | None = None) -> RunNoise:
    """The run-to-run noise from the points of separate runs of one configuration, for two
    runs taken ``apart`` seconds apart (None: at any time)."""
    return estimate_pooled([points], source, apart=apart)


def estimate_pooled(groups: Sequence[Sequence[RunPoint]], source: str, *,
                    apart: float | None = None) -> RunNoise:
    """The run-to-run noise from groups of runs that may differ by a constant (two copies of
    one benchmark, one with a planted change): each run about its own group's mean; near
    pairs within a group only."""
    return Runs(groups).estimate(source, apart=apart)


class Runs:
    """The points of separate runs of one configuration, in groups that may differ by a
    constant, ready for many estimates (kcross history makes one per change shown, over the
    machine's whole history): each for two runs some time apart, with the runs compared left
    out.  The near pairs are summed by kcross.stats.NearRuns (runs sorted by start once:
    thousands of runs started close together cost their number, not their pairs)."""

    def __init__(self, groups: Sequence[Sequence[RunPoint]]) -> None:
        self.groups = [list(g) for g in groups]
        self.size = sum(len(g) for g in self.groups)
        self._near: stats.NearRuns | None = None

    def estimate(self, source: str, *, apart: float | None = None,
                 leave_out: Collection[int] = ()) -> RunNoise:
        """The noise for two runs taken ``apart`` seconds apart (None: at any time), the
        points at the places ``leave_out`` (counted through the groups one after the other)
        left out: the near pairs' estimate when there are MIN_PAIRS of them within the window,
        else the spread of all the runs."""
        out = set(leave_out)
        runs = self.size - len(out)
        if runs < MIN_RUNS:
            raise StatsError(f"{runs} run(s) of this machine: the run-to-run noise needs "
                             f"{MIN_RUNS}")
        if apart is not None:
            window = max(2.0 * apart, NEAR_WINDOW_S)
            if self._near is None:
                self._near = stats.NearRuns([([p.log for p in g], [p.var for p in g],
                                              [p.started for p in g]) for g in self.groups])
            pairs, near = self._near.pairs_and_variance(window, out)
            if pairs >= MIN_PAIRS and near is not None:
                return RunNoise(var=near[0], df=near[1], runs=runs, source=source,
                                within=window)
        kept, first = [], 0
        for g in self.groups:
            kept.append([p for i, p in enumerate(g, start=first) if i not in out])
            first += len(g)
        var, df = stats.between_runs_pooled([([p.log for p in g], [p.var for p in g])
                                             for g in kept])
        return RunNoise(var=var, df=df, runs=runs, source=source)


# (run label, benchmark) -> its point, or None when it has none: reused across the noise
# estimates of one command (kcross history estimates one per change shown).
PointCache = dict[tuple[str, str], RunPoint | None]


def of_points(by_run: Mapping[str, Mapping[str, RunPoint | None]], names: Iterable[str],
              exclude: Iterable[str] = (), source: str = HISTORY,
              apart: float | None = None,
              exclude_started: Iterable[float] = ()) -> dict[str, RunNoise]:
    """The noise of each benchmark named, from the points of separate runs (run label ->
    benchmark -> its point, None: the run has figures but no point), leaving out the runs
    in ``exclude`` and those that started at a time in ``exclude_started`` (the runs
    compared, given as files), for two runs ``apart`` seconds apart (None: at any time)."""
    left_out = set(exclude)
    starts = set(exclude_started)
    found: dict[str, RunNoise] = {}
    for name in names:
        points = [p for run, held in by_run.items() if run not in left_out
                  for p in [held.get(name)] if p is not None and p.started not in starts]
        try:
            found[name] = estimate(points, source, apart=apart)
        except StatsError:
            continue
    return found


@dataclass
class History:
    """The stored runs of machines, read once per command, for noise estimates: each run's
    point of a benchmark of one process from the summary columns stored beside its result
    (its median and CI, as single_point takes them: no record read), of a benchmark of
    several processes from its records (their pooled samples)."""

    store: Store
    limit: int = HISTORY_RUNS

    def __post_init__(self) -> None:
        self._points: dict[str, dict[str, dict[str, RunPoint | None]]] = {}

    def points_of(self, fingerprint: Mapping[str, object]) -> dict[str, dict[str, RunPoint | None]]:
        """The last complete runs of the machine identity of ``fingerprint``, newest first:
        run label -> benchmark with figures -> its point (None: none)."""
        machine = identity(fingerprint)
        if machine in self._points:
            return self._points[machine]
        summaries = self.store.list_runs(machine=machine, status="complete", limit=self.limit)
        rows: dict[int, dict[str, list[Any]]] = {s.id: {} for s in summaries}
        for row in self.store.result_figures(rows):
            rows[row.run_id].setdefault(f"{row.suite}/{row.name}", []).append(row)
        # run_start of the run's fingerprint: its host.time, none for a lab guest's
        lab = fields.lab(fingerprint) is not None
        found: dict[str, dict[str, RunPoint | None]] = {}
        for run_id, held in rows.items():
            label = f"run {run_id}"
            several: dict[str, Series] = {}
            if any(len(rs) > 1 for rs in held.values()):   # their records: samples pooled
                run = self.store.load_run(str(run_id), check=False)
                several = {s.name: s for s in series_of_results(
                    label, run.fingerprint, [r for r in run.results
                                             if len(held[bench_name(r)]) > 1])}
            points: dict[str, RunPoint | None] = {}
            found[label] = points
            for name, (row, *more) in held.items():
                figures = name in several if more else \
                    row.status == "ok" and row.median_ns is not None
                if not figures:
                    continue
                try:
                    if more:
                        points[name] = run_point(several[name])
                    elif row.ci_low_ns is None:
                        raise StatsError("no CI")
                    else:
                        points[name] = single_point(label, row.median_ns, row.ci_low_ns,
                                                    row.ci_high_ns,
                                                    None if lab else host_time(row.host_time))
                except StatsError:
                    points[name] = None
        self._points[machine] = found
        return found

    def noise(self, fingerprint: Mapping[str, object] | None, names: Iterable[str],
              exclude: Iterable[str] = (), apart: float | None = None,
              exclude_started: Iterable[float] = ()) -> dict[str, RunNoise]:
        """The noise of the benchmarks on the machine of ``fingerprint`` from its stored
        runs, the runs in ``exclude`` (labels ``run N``) and those started at a time in
        ``exclude_started`` left out, for two runs ``apart`` seconds apart."""
        if fingerprint is None:
            return {}
        return of_points(self.points_of(fingerprint), names, exclude, apart=apart,
                         exclude_started=exclude_started)


def of_machine(store: Store, fingerprint: Mapping[str, object]) -> tuple[dict[str, RunNoise], int]:
    """The run-to-run noise of every benchmark the store's runs of this machine
    configuration hold, and how many such runs there are (the last HISTORY_RUNS)."""
    runs = History(store).points_of(fingerprint)
    names = list(dict.fromkeys(n for held in runs.values() for n in held))
    return of_points(runs, names), len(runs)
