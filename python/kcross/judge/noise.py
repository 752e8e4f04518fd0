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

Only repetitions of one measurement feed an estimate (:func:`select`, the one rule, which
kcross history and sysinfo call too): runs of one :class:`Config` (the machine identity, its
forced settings included; the harness's version, revision and build; the design, processes
x samples), each complete, not a ``--quick`` smoke run, without a forcing that plants a
change or an instrument (kcross.forcings' ``plants``) and not excluded by the user
(``kcross exclude``): :func:`left_out` says why a run is not.  Exact counts (a lab's
instructions/op) have no run-to-run noise: a change of a count is a change.

The estimate is robust to an absurd run (a capture imported with wrong figures, a run
disturbed throughout): a run whose log figure lies more than OUTLIER_SDS robust standard
deviations (1.4826 x the median absolute deviation, at least the runs' own noise) from the
median of its group is left out and named (RunNoise.outliers).

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

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import fingerprint as fields
from .. import stats
from ..fingerprint import identity
from ..forcings import PLANTING
from ..schema import UNIT_INSTRUCTIONS, unit_of
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
# A run further than this many robust standard deviations from its group's median is an
# outlier.  Far: the rule is for absurd runs (x100 figures), and with few runs the median
# absolute deviation is itself uncertain (5 normal runs: one beyond 10 in about 3% of draws).
OUTLIER_SDS = 10.0


@dataclass(frozen=True)
class RunPoint:
    """One run's figure of one benchmark on the log scale, and its own noise (the
    variance of that log figure as the run's processes, or its samples, show it)."""

    run: str
    log: float
    var: float
    started: float | None = None     # POSIX seconds


def run_point(series: Series) -> RunPoint:
    """A run's point (kcross.stats.run_level): its processes' level, or for one process its
    median's CI as a variance."""
    log, var = stats.run_level(series.by_process())
    return RunPoint(str(series.run), log, var, series.started)


def single_point(run: str, median: float, low: float, high: float,
                 started: float | None) -> RunPoint:
    """The point of a run of one process from its median and the median's CI (also as the
    store keeps them beside a result: kcross.stats.summary_columns)."""
    log, var = stats.single_level(median, low, high)
    return RunPoint(run, log, var, started)


def stored_point(run: str, level: Any, started: float | None) -> RunPoint | None:
    """The point of a run from the process level stored with it (a store process_levels
    row: what run_point made of it); None where it has none (no figures, or no level)."""
    if level is None or level.log is None:
        return None
    return RunPoint(run, level.log, level.var, started)


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
    pairs within a group only.  Each group's outliers (:func:`outliers`) are left out and
    named."""
    return Runs(groups).estimate(source, apart=apart)


def outliers(points: Sequence[RunPoint]) -> list[RunPoint]:
    """The points further than OUTLIER_SDS robust standard deviations from the points'
    median log figure: the median absolute deviation as a normal sample's sd, at least the
    runs' own noise (the median of their within-run sds); none among fewer than MIN_RUNS."""
    return [points[i] for i in _outlying([p.log for p in points], [p.var for p in points])]


def _outlying(logs: Sequence[float] | np.ndarray, var: Sequence[float] | np.ndarray
              ) -> list[int]:
    """The places of :func:`outliers` among runs of these log figures and variances."""
    if len(logs) < MIN_RUNS:
        return []
    return stats.outlying(logs, var, OUTLIER_SDS)


def _label_order(label: str) -> tuple[int, str]:
    """Run labels in their runs' order ("run 9" before "run 10")."""
    number = label.rpartition(" ")[2]
    return (int(number), label) if number.isdigit() else (0, label)


class Runs:
    """The points of separate runs of one configuration, in groups that may differ by a
    constant, ready for many estimates (kcross history makes one per change shown, over the
    machine's whole history): each for two runs some time apart, with the runs compared left
    out.  The near pairs are summed by kcross.stats.NearRuns (runs sorted by start once:
    thousands of runs started close together cost their number, not their pairs)."""

    def __init__(self, groups: Sequence[Sequence[RunPoint]]) -> None:
        self.groups = [list(g) for g in groups]
        self.size = sum(len(g) for g in self.groups)
        self._labels = [p.run for g in self.groups for p in g]
        self._label_array = np.asarray(self._labels, dtype=object)
        self._all_used = tuple(dict.fromkeys(self._labels))
        self._log = np.asarray([p.log for g in self.groups for p in g], dtype=np.float64)
        self._var = np.asarray([p.var for g in self.groups for p in g], dtype=np.float64)
        self._near: stats.NearRuns | None = None

    def estimate(self, source: str, *, apart: float | None = None,
                 leave_out: Collection[int] = ()) -> RunNoise:
        """The noise for two runs taken ``apart`` seconds apart (None: at any time), the
        points at the places ``leave_out`` (counted through the groups one after the other)
        left out, then each group's outliers among the rest (:func:`outliers`: their runs
        left out of every group, and named): the near pairs' estimate when there are
        MIN_PAIRS of them within the window, else the spread of all the runs."""
        out = set(leave_out)
        far: set[str] = set()
        first = 0
        for g in self.groups:
            places = np.arange(first, first + len(g))
            places = places[np.isin(places, list(out), invert=True)] if out else places
            far.update(self._labels[int(places[j])] for j in _outlying(self._log[places],
                                                                        self._var[places]))
            first += len(g)
        if far:
            out |= {i for i, label in enumerate(self._labels) if label in far}
        runs = self.size - len(out)
        if out:   # the labels at the places kept, each once (10,000 runs, 50 estimates)
            keep = np.ones(self.size, dtype=bool)
            keep[list(out)] = False
            used = tuple(dict.fromkeys(self._label_array[keep].tolist()))
        else:
            used = self._all_used
        named = tuple(sorted(far, key=_label_order))
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
                                within=window, used=used, outliers=named)
        kept, first = [], 0
        for g in self.groups:
            kept.append([p for i, p in enumerate(g, start=first) if i not in out])
            first += len(g)
        var, df = stats.between_runs_pooled([([p.log for p in g], [p.var for p in g])
                                             for g in kept])
        return RunNoise(var=var, df=df, runs=runs, source=source, used=used, outliers=named)


@dataclass(frozen=True)
class Config:
    """What runs of one benchmark must share to be repetitions of one measurement: the
    machine identity (its forced settings included: kcross.fingerprint.identity), the
    harness that measured (version, revision, build) and the design (processes x samples of
    each)."""

    machine: str
    harness: tuple[str | None, ...]
    processes: int
    samples: int


def harness_of(fingerprint: Mapping[str, object] | None) -> tuple[str | None, ...]:
    """The harness that measured, as a Config names it (version, revision, build)."""
    return tuple(f.text(fingerprint) for f in fields.HARNESS)


def config_of(series: Series, machine: str | None = None,
              harness: tuple[str | None, ...] | None = None) -> Config | None:
    """The configuration of a series' run (None: plain numbers, no fingerprint); ``machine``
    and ``harness``: its fingerprint's identity and harness_of, when the caller knows them
    (a hash of the fingerprint a series is worth saving for a run's fifty)."""
    if series.fingerprint is None:
        return None
    return Config(machine or identity(series.fingerprint),
                  harness or harness_of(series.fingerprint), series.process_count,
                  series.per_process)


def exact_counts(fingerprint: Mapping[str, object] | None) -> bool:
    """Whether a machine's figures are exact counts (a lab's instructions/op): no run-to-run
    noise there, a change of a count is a change (the judge compares them by value)."""
    return fingerprint is not None and unit_of(fingerprint) == UNIT_INSTRUCTIONS


def left_out(*, status: str, quick: bool = False, excluded: str | None = None,
             fingerprint: Mapping[str, object] | None = None) -> str | None:
    """Why a stored run feeds no estimate of its machine's run-to-run noise, whatever the
    configuration compared (None: it may): not complete, a ``--quick`` smoke run, a forcing
    that plants a change or an instrument, excluded by the user (kcross exclude), or its
    figures exact counts."""
    if exact_counts(fingerprint):
        return "exact counts"
    if status != "complete":
        return f"not complete ({status})"
    if quick:
        return "--quick"
    planted = [n for n in PLANTING if fields.FORCED.members(fingerprint).get(n)]
    if planted:
        return f"forced {', '.join(planted)}"
    if excluded is not None:
        return f"excluded ({excluded})" if excluded else "excluded"
    return None


@dataclass(frozen=True)
class Candidate:
    """A stored run's point of one benchmark offered to an estimate: its configuration, why
    its run may feed none (:func:`left_out`), and its place in the store (the run's id)."""

    point: RunPoint
    config: Config
    left_out: str | None = None
    stored: int = 0


def select(candidates: Iterable[Candidate], like: Config | None = None, *,
           exclude: Iterable[str] = (), exclude_started: Iterable[float] = ()
           ) -> list[RunPoint]:
    """The points that feed the run-to-run noise for runs of configuration ``like`` (None:
    the newest stored candidate's that may feed one): the candidates of that configuration
    not left out, but the runs ``exclude`` (labels ``run N``) and those started at a time in
    ``exclude_started`` (the runs compared: a real change between them is no noise).  The
    one rule: every estimate of a machine's noise takes its runs from here."""
    runs, starts = set(exclude), set(exclude_started)
    fit = [c for c in candidates if c.left_out is None and c.point.run not in runs
           and (c.point.started is None or c.point.started not in starts)]
    if like is None:
        if not fit:
            return []
        like = max(fit, key=lambda c: c.stored).config
    return [c.point for c in fit if c.config == like]


# (run label, benchmark) -> its point, or None when it has none: reused across the noise
# estimates of one command (kcross history estimates one per change shown).
PointCache = dict[tuple[str, str], RunPoint | None]


@dataclass
class History:
    """The stored runs of machines, read once per command, for noise estimates: each run's
    point of a benchmark of one process from the summary columns stored beside its result
    (its median and CI, as single_point takes them: no record read), of a benchmark of
    several processes from its stored process level (the level run_point makes of its
    pooled samples, computed when the run was stored), or from its records for a run
    stored before there were levels."""

    store: Store
    limit: int = HISTORY_RUNS
    # runs (by label, "run N") that no estimate of this History takes: the runs a comparison
    # compares, whose records it need not read again (every noise() call leaves them out)
    never: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._runs: dict[str, dict[str, list[Candidate]]] = {}

    def candidates(self, machine: str) -> dict[str, list[Candidate]]:
        """The candidates of the newest ``limit`` runs of one machine identity that may feed
        an estimate (:func:`left_out`), by benchmark: a run's point of a benchmark of one
        process from the summary columns stored beside its result, of several processes
        from its stored level (else its records)."""
        from ..store.history import machine_fingerprints

        if machine in self._runs:
            return self._runs[machine]
        # the machine's fingerprint as first seen: what left_out and run_start read of a
        # run's are the machine's (its forced settings, its lab; kcross.fingerprint.identity)
        fingerprint = next((fp for fp in machine_fingerprints(self.store).values()
                            if identity(fp) == machine), None)
        kept = [f for f in self.store.run_facts(machine=machine)
                if left_out(status=f.status, quick=f.quick, excluded=f.excluded,
                            fingerprint=fingerprint) is None][:self.limit]
        rows: dict[int, dict[str, list[Any]]] = {f.id: {} for f in kept}
        for row in self.store.result_figures(rows):
            rows[row.run_id].setdefault(f"{row.suite}/{row.name}", []).append(row)
        wanted = [f.id for f in kept if f"run {f.id}" not in self.never]
        levels = self.store.process_levels(wanted)
        lab = fields.lab(fingerprint) is not None
        found: dict[str, list[Candidate]] = {}
        for fact in kept:
            held, label = rows[fact.id], f"run {fact.id}"
            if label in self.never:
                continue
            stored = levels.get(fact.id)
            several: dict[str, Series] = {}
            if stored is None and any(len(rs) > 1 for rs in held.values()):
                # a run stored before schema 9: its records, their samples pooled
                run = self.store.load_run(str(fact.id), check=False)
                several = {s.name: s for s in series_of_results(
                    label, run.fingerprint, [r for r in run.results
                                             if len(held[bench_name(r)]) > 1])}
            for name, (row, *more) in held.items():
                try:
                    if more and stored is not None:   # its level, as run_point makes it
                        level: Any = stored.get(name)
                        found_point = stored_point(label, level,
                                                   None if lab else host_time(row.host_time))
                        if found_point is None:
                            continue
                        point = found_point
                        config: Config | None = Config(machine, fact.harness,
                                                       level.processes, level.per_process)
                    elif more:
                        if name not in several:
                            continue
                        point = run_point(several[name])
                        config = config_of(several[name], machine, fact.harness)
                    elif row.status != "ok" or row.median_ns is None or row.ci_low_ns is None:
                        continue
                    else:
                        point = single_point(label, row.median_ns, row.ci_low_ns,
                                             row.ci_high_ns,
                                             None if lab else host_time(row.host_time))
                        config = Config(machine, fact.harness, 1, int(row.n))
                except StatsError:
                    continue
                assert config is not None
                found.setdefault(name, []).append(Candidate(point, config, stored=fact.id))
        self._runs[machine] = found
        return found

    def noise(self, like: Config | None, names: Iterable[str], exclude: Iterable[str] = (),
              apart: float | None = None,
              exclude_started: Iterable[float] = ()) -> dict[str, RunNoise]:
        """The noise of the benchmarks on a machine from its stored runs of configuration
        ``like`` (:func:`select`; the compared runs left out: ``exclude``, ``run N``, and
        those started at a time in ``exclude_started``), for two runs ``apart`` seconds
        apart (None: at any time)."""
        if like is None:
            return {}
        found: dict[str, RunNoise] = {}
        for name in names:
            points = select(self.candidates(like.machine).get(name, ()), like,
                            exclude=exclude, exclude_started=exclude_started)
            try:
                found[name] = estimate(points, HISTORY, apart=apart)
            except StatsError:
                continue
        return found


def of_machine(store: Store, fingerprint: Mapping[str, object]
               ) -> tuple[dict[str, RunNoise], int]:
    """The run-to-run noise of every benchmark the store's runs of this machine hold, each
    from the runs of its newest stored configuration (:func:`select`; of the last
    HISTORY_RUNS runs that may feed one), and how many such runs there are; none for exact
    counts."""
    if exact_counts(fingerprint):
        return {}, 0
    found: dict[str, RunNoise] = {}
    candidates = History(store).candidates(identity(fingerprint))
    for name, offered in candidates.items():
        try:
            found[name] = estimate(select(offered), HISTORY)
        except StatsError:
            continue
    return found, len({c.stored for offered in candidates.values() for c in offered})
