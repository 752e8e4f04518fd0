"""``kcross aa``: benchmarks against themselves, to calibrate and validate the verdicts.

Rounds of two separate runs of the same benchmarks, copies A and A' (kcross.rounds.engine: the
copy that runs first alternates), each run K fresh harness processes as ``kcross run
--processes K`` makes it.  Both copies measure the same thing, so every difference a
verdict calls between them is a false positive; with ``--plant PCT`` copy A' runs with a
planted slowdown of PCT percent (KCROSS_TEST_DELAY) and the same counts are the
verdicts' power.  The runs are stored (source ``aa``): the store's history of this
machine, from which compare, check and history take its run-to-run noise.

The designs judged on the same runs (kcross.judge does every judging):

- ``samples``: each round's two runs as one process each, Mann-Whitney U on their
  pooled samples: how kcross judged two separate runs before it had processes;
- ``processes``: the two runs' processes (levels), without the machine's run-to-run
  noise: what a verdict between separate runs sees when the store has no history;
- ``processes + noise``: the same with the run-to-run noise estimated from the other
  rounds' runs (leave-one-round-out, within each copy: a planted difference between
  the copies is never taken for noise): what compare and check do once the store has
  a history of the machine;
- ``blocks``: blocks of rounds, as ``kcross ab`` judges rounds (the median of the
  per-round ratios A'/A and its distribution-free CI);
- the gate: ``kcross check`` at its default tolerance on each round's two runs (all
  benchmarks together), with and without the noise.

Each rate comes with its exact binomial CI.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import stats
from ..errors import UserError
from ..importer import stream_of
from ..judge.categories import Category
from ..judge.noise import CALIBRATION, RunPoint, estimate_pooled, run_point, separation
from ..judge.verdict import Pair, RunNoise, gate, judge, judge_paired
from ..run import harness
from ..run.processes import combine
from ..series import Series, series_of_results
from ..stats import StatsError

if TYPE_CHECKING:
    from ..store import Store

COPY_A, COPY_B = "A", "A'"
SAMPLES, PROCESSES, WITH_NOISE, BLOCKS = "samples", "processes", "processes + noise", "blocks"
DESIGNS = (SAMPLES, PROCESSES, WITH_NOISE, BLOCKS)
GATE_NOISE, GATE_BLIND = "check with noise", "check without noise"
DEFAULT_TOLERANCE = 0.05     # kcross check's default --max-regression


@dataclass(frozen=True)
class Options:
    bench: str                       # a GLOB of benchmarks
    processes: int
    samples: int
    rounds: int
    block_rounds: int
    cpu: int
    warmup_ms: float | None = None
    min_batch_ms: float | None = None
    plant: float | None = None       # fraction: 0.05 plants +5% on copy A'
    tolerance: float = DEFAULT_TOLERANCE

    def args(self) -> list[str]:
        args = ["run", "--json", "--bench", self.bench, "--samples", str(self.samples),
                "--cpu", str(self.cpu)]
        if self.warmup_ms is not None:
            args += ["--warmup-ms", f"{self.warmup_ms:g}"]
        if self.min_batch_ms is not None:
            args += ["--min-batch-ms", f"{self.min_batch_ms:g}"]
        return args


@dataclass(frozen=True)
class Run:
    """One run of a copy: K processes, stored (or not) and read back as series."""

    copy: str
    run: str                         # "run 12", or "A 3" when not stored
    series: dict[str, Series]
    records: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class RoundPair:
    number: int
    first: str
    a: Run
    b: Run


@dataclass(frozen=True)
class Rate:
    """How often a design called a difference: with its exact binomial CI."""

    design: str
    called: int
    judged: int
    low: float
    high: float
    level: float                     # the design's own nominal level

    @property
    def rate(self) -> float:
        return self.called / self.judged if self.judged else math.nan


def rate(design: str, called: int, judged: int, level: float) -> Rate:
    if judged < 1:
        return Rate(design, 0, 0, math.nan, math.nan, level)
    low, high = stats.proportion_ci(called, judged)
    return Rate(design, called, judged, low, high, level)


@dataclass
class Result:
    options: Options
    rounds: list[RoundPair]
    names: list[str]
    planted_ns: dict[str, float] = field(default_factory=dict)
    rates: dict[str, Rate] = field(default_factory=dict)
    gates: dict[str, Rate] = field(default_factory=dict)    # rounds whose check failed
    noise: dict[str, RunNoise] = field(default_factory=dict)   # from all rounds
    # blocks whose rounds scattered, and whose rounds counted as fewer (ab's warnings)
    scattered_blocks: int = 0
    dependent_blocks: int = 0
    stored: list[str] = field(default_factory=list)

    @property
    def planted(self) -> bool:
        return self.options.plant is not None

    @property
    def blocks(self) -> Rate | None:
        """The blocks design's rate (ab's judging), once judged."""
        return self.rates.get(BLOCKS)

    def described(self, design: str) -> str:
        """What a design of :data:`rates` is, in a few words."""
        return {SAMPLES: "samples (one process each, Mann-Whitney)",
                PROCESSES: "processes, no run-to-run noise",
                WITH_NOISE: "processes + run-to-run noise (leave-one-round-out)",
                BLOCKS: f"interleaved blocks of {self.options.block_rounds} rounds"}[design]

    def with_noise(self, gate: str) -> bool:
        """Whether the check design ``gate`` (a key of :data:`gates`) had the noise."""
        return gate == GATE_NOISE


def block_level(block_rounds: int) -> float:
    """The block design's false-positive level: 1 - the achieved coverage of the CI of the
    median of ``block_rounds`` ratios (it depends on their number only)."""
    return 1.0 - stats.median_ci(range(1, block_rounds + 1)).confidence


def check_options(o: Options) -> None:
    """Refuse, before anything is measured, options some design could judge nothing with."""
    if o.rounds < 3:
        raise UserError(f"--rounds {o.rounds}: at least 3 (the run-to-run noise of a round "
                        "is estimated from the others)")
    if o.block_rounds < stats.min_samples_for():
        raise UserError(f"--block-rounds {o.block_rounds}: too few for a 95% CI of the median "
                        f"ratio (need {stats.min_samples_for()})")
    if o.rounds < o.block_rounds:  # evaluate() judges whole blocks only
        fewer = f", or --block-rounds {o.rounds} or fewer" \
            if o.rounds >= stats.min_samples_for() else ""
        raise UserError(f"--rounds {o.rounds} make no block of {o.block_rounds} rounds for the "
                        "blocks design to judge: the rounds must make at least one block "
                        f"(--rounds {o.block_rounds} or more{fewer})")
    if o.plant is not None and not 0 < o.plant <= 1:
        raise UserError(f"--plant {o.plant * 100:g}: a slowdown of more than 0 and at most "
                        "100 percent")


def measure(command: Sequence[str], options: Options, env: dict[str, str] | None,
            label: str) -> tuple[list[dict[str, Any]], list[Series]]:
    """One run of K processes; its combined records and its series."""
    streams = []
    for _ in range(options.processes):
        records = harness.collect(command, options.args(), env=env)
        streams.append(records)
    combined = combine(streams)
    checked = stream_of(combined, label)    # validated as a stored run is
    return combined, series_of_results(label, checked.fingerprint, checked.results, run=label)


def run(command: Sequence[str], options: Options, *, store: Callable[[], Store] | None,
        env_a: dict[str, str], planted: Callable[[dict[str, Series]], dict[str, str]] | None,
        on_round: Callable[[RoundPair], None] | None = None) -> Result:
    """The rounds, stored as they finish; judged at the end."""
    from ..importer import import_stream
    from .engine import interleave

    check_options(options)
    made = {COPY_A: 0, COPY_B: 0}
    stored: list[str] = []
    env_b: dict[str, str] | None = None if planted is not None else env_a
    first_a: dict[str, Series] = {}

    def one(copy: str) -> Run:
        nonlocal env_b
        made[copy] += 1
        label = f"{copy} {made[copy]}"
        if copy == COPY_B and env_b is None:
            assert planted is not None
            env_b = planted(first_a)
        env = env_a if copy == COPY_A else env_b
        records, series = measure(command, options, env, label)
        if copy == COPY_A and not first_a:
            first_a.update({s.name: s for s in series})
        name = label
        if store is not None:
            done = import_stream(store, records, command=["aa", options.bench], source="aa",
                                 force=True,  # a new measurement, even if identical
                                 name=f"aa {label}")
            name = f"run {done.run_id}"
            stored.append(name)
            series = [_relabel(s, name) for s in series]
        return Run(copy, name, {s.name: s for s in series}, tuple(records))

    pairs: list[RoundPair] = []

    def record(r: Any) -> None:
        pair = RoundPair(r.number, r.first, r[COPY_A], r[COPY_B])
        pairs.append(pair)
        if on_round is not None:
            on_round(pair)

    interleave([(COPY_A, lambda: one(COPY_A)), (COPY_B, lambda: one(COPY_B))],
               options.rounds, on_round=record)
    names = [n for n in pairs[0].a.series if all(n in p.a.series and n in p.b.series
                                                  for p in pairs)]
    if not names:
        raise UserError("no benchmark has figures in every run: nothing to judge")
    result = Result(options=options, rounds=pairs, names=names, stored=stored)
    evaluate(result)
    return result


def _relabel(s: Series, run: str) -> Series:
    from dataclasses import replace

    return replace(s, source=run, run=run)


def noise_without(pairs: Sequence[RoundPair], name: str, skip: int | None,
                  points: dict[tuple[int, int, str], RunPoint | None] | None = None
                  ) -> RunNoise | None:
    """The run-to-run noise of ``name`` from the rounds other than ``skip``, pooled within
    each copy (a planted difference between the copies is not noise), for the two runs of
    round ``skip`` (their separation in time: kcross.judge.noise), or for runs at any
    time (``skip`` None).  ``points``: the runs' points as far as known (filled in here),
    so that judging every round costs each run's point once."""
    groups: list[list[RunPoint]] = [[], []]
    apart = None
    known = {} if points is None else points
    for p in pairs:
        if p.number == skip:
            if name in p.a.series and name in p.b.series:
                apart = separation(p.a.series[name], p.b.series[name])
            continue
        for i, run_ in enumerate((p.a, p.b)):
            key = (p.number, i, name)
            if key not in known:
                try:
                    known[key] = run_point(run_.series[name])
                except (StatsError, KeyError):
                    known[key] = None
            point = known[key]
            if point is not None:
                groups[i].append(point)
    try:
        return estimate_pooled(groups, CALIBRATION, apart=apart)
    except StatsError:
        return None


def evaluate(result: Result) -> None:
    """Every design's rate, on every benchmark and round."""
    o = result.options
    called = {d: 0 for d in DESIGNS}
    judged = {d: 0 for d in DESIGNS}
    gate_failed = {GATE_NOISE: 0, GATE_BLIND: 0}
    points: dict[tuple[int, int, str], RunPoint | None] = {}
    for p in result.rounds:
        with_noise, blind = [], []
        for name in result.names:
            a, b = p.a.series[name], p.b.series[name]
            flat_a = Series(a.source, a.name, a.unit, a.samples, run=a.run)
            flat_b = Series(b.source, b.name, b.unit, b.samples, run=b.run)
            noise = noise_without(result.rounds, name, p.number, points)
            for design, pair in ((SAMPLES, Pair(name, flat_a, flat_b)),
                                 (PROCESSES, Pair(name, a, b)),
                                 (WITH_NOISE, Pair(name, a, b, noise))):
                if design == WITH_NOISE and noise is None:
                    continue
                j = judge([pair])[0]            # one comparison: no Holm across benchmarks
                if j.error is None:
                    judged[design] += 1
                    called[design] += j.category.changed
            blind.append(Pair(name, a, b))
            # as kcross check: the noise where it is known, the tolerance alone elsewhere
            with_noise.append(Pair(name, a, b, noise))
        for label, found in ((GATE_NOISE, with_noise), (GATE_BLIND, blind)):
            verdicts = judge(found)                 # as kcross check: Holm across benchmarks
            gate_failed[label] += any(gate(j, o.tolerance) is Category.REGRESSION
                                      for j in verdicts)
    blocks = len(result.rounds) // o.block_rounds
    for name in result.names:
        for k in range(blocks):
            part = result.rounds[k * o.block_rounds:(k + 1) * o.block_rounds]
            try:
                v = judge_paired([stats.median(p.a.series[name].samples) for p in part],
                                 [stats.median(p.b.series[name].samples) for p in part],
                                 part[0].a.series[name].unit)
            except StatsError:
                continue
            judged[BLOCKS] += 1
            called[BLOCKS] += v.changed
            result.scattered_blocks += v.paired.scattered
            result.dependent_blocks += v.paired.dependent
    levels = {SAMPLES: stats.ALPHA, PROCESSES: stats.ALPHA, WITH_NOISE: stats.ALPHA,
              BLOCKS: block_level(o.block_rounds)}
    result.rates = {d: rate(d, called[d], judged[d], levels[d]) for d in DESIGNS}
    n = len(result.rounds)
    result.gates = {g: rate(g, gate_failed[g], n, 0.0) for g in gate_failed}
    for name in result.names:
        noise = noise_without(result.rounds, name, None, points)
        if noise is not None:
            result.noise[name] = noise


def result_json(result: Result) -> dict[str, Any]:
    def rate_json(r: Rate) -> dict[str, Any]:
        return {"called": r.called, "judged": r.judged, "rate": r.rate if r.judged else None,
                "ci_low": r.low if r.judged else None, "ci_high": r.high if r.judged else None,
                "ci_method": "exact binomial (Clopper-Pearson), 95%", "level": r.level}

    o = result.options
    return {
        "type": "aa", "bench": o.bench, "benchmarks": result.names, "processes": o.processes,
        "samples": o.samples, "rounds": len(result.rounds), "block_rounds": o.block_rounds,
        "cpu": o.cpu, "plant": o.plant, "planted_ns": result.planted_ns,
        "tolerance": o.tolerance, "stored": result.stored,
        "designs": {d: rate_json(r) for d, r in result.rates.items()},
        "check_failed": {g: rate_json(r) for g, r in result.gates.items()},
        "blocks_scattered": result.scattered_blocks,
        "blocks_dependent": result.dependent_blocks,
        "run_to_run": {n: {"cv": v.cv, "runs": v.runs, "df": v.df}
                       for n, v in result.noise.items()},
        "runs": [{"round": p.number, "first": p.first, "a": p.a.run, "b": p.b.run,
                  "a_medians": {n: stats.median(p.a.series[n].samples) for n in result.names},
                  "b_medians": {n: stats.median(p.b.series[n].samples) for n in result.names}}
                 for p in result.rounds],
    }
