"""Interleaved A/B (``kcross ab``) and A/A (``kcross aa``) runs of the harness.

On a machine whose speed drifts (a VM most of all), two benchmarks measured
one after the other can differ by more than the effect looked for, and two
runs of the *same* benchmark can look "significantly" different.  Both
commands here work in rounds of short harness runs, every run pinned to the
same CPU:

- ``ab``: each round runs side A and side B once, the side that goes first
  alternating; a side is a benchmark, the settings of the environment it runs
  under (``KCROSS_SYSCALL``, ``KCROSS_VDSO``...) and the harness binary.  The
  result is the median of the per-round ratios B/A with its distribution-free
  CI (:func:`kcross.stats.paired_ratio`): drift between rounds hits both sides
  of a round alike and cancels in its ratio.
- ``aa``: one side against itself, in rounds of two runs (copies A and A',
  alternating which goes first), judged two ways: blocks of rounds as ``ab``
  judges them (the design kcross recommends for decisions), and each round's
  two runs as ``kcross compare`` judges two stored runs (Mann-Whitney U).  The
  share of blocks, and of pairs, called different is each test's
  false-positive rate on this machine, with an exact binomial CI, next to the
  test's own level.

A round's figure for a side is its run's median by the project's rule
(:func:`kcross.stats.summarize_record`, the median ``kcross show`` reports);
``raw`` takes the median of the raw samples instead (no empty-loop
subtraction), so that both sides are always measured the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import errors, harness, stats
from .errors import (
    ECHO_MAX,
    EXIT_CHECK_FAILED,
    HarnessError,
    KcrossError,
    SchemaError,
    UserError,
    clipped,
)
from .schema import UNIT_NS, dig

# Fewer rounds cannot give a 95% CI of the median ratio (1 - 2 * 0.5**n >= 0.95).
MIN_ROUNDS = stats.min_samples_for()


class CheckFailed(KcrossError):
    """A benchmark failed its own check in a round: a result (exit 1), not a crash."""

    exit_code = EXIT_CHECK_FAILED


def parse_setting(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (an empty VALUE means unset, as the harness reads it)."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise UserError(f"setting {errors.shown(text)}: expected NAME=VALUE, e.g. KCROSS_SYSCALL=libc")
    return name, value


@dataclass(frozen=True)
class Side:
    """What one side of a comparison runs: a benchmark, under settings, with a harness."""

    label: str                              # "A", "B" (ab) or the benchmark (aa)
    bench: str                              # as given: NAME or SUITE/NAME
    harness: tuple[str, ...]                # command prefix (harness.locate)
    harness_shown: str                      # the path, for the table
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def settings_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.settings)

    @property
    def where(self) -> str:
        """How messages name this side (a benchmark as given, cut when long)."""
        return f"side {self.label}" if len(self.label) == 1 else clipped(self.label, ECHO_MAX)

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.settings)
        return env

    def identity(self) -> tuple[Any, ...]:
        return (self.bench, dict(self.settings), self.harness)


@dataclass(frozen=True)
class Ready:
    """A side checked against its harness before anything is measured."""

    side: Side
    bench: str                   # SUITE/NAME, exactly one benchmark
    arch: str
    mechanism: str | None        # the syscall mechanism the harness selects under the settings
    available: tuple[str, ...]   # the mechanisms it offers
    forced: Mapping[str, Any]    # the forcings the harness reads, and their values
    version: str                 # the harness's version and git revision


@dataclass(frozen=True)
class RunOptions:
    """How each short run is made (the harness's own options)."""

    samples: int
    cpu: int
    warmup_ms: float | None = None
    min_batch_ms: float | None = None

    def args(self, bench: str) -> list[str]:
        args = ["run", "--bench", bench, "--samples", str(self.samples), "--cpu", str(self.cpu)]
        if self.warmup_ms is not None:
            args += ["--warmup-ms", f"{self.warmup_ms:g}"]
        if self.min_batch_ms is not None:
            args += ["--min-batch-ms", f"{self.min_batch_ms:g}"]
        return [*args, "--json"]


@dataclass(frozen=True)
class Measured:
    """One short run of one side."""

    median: float                # by the project's rule (empty loop subtracted when it says so)
    raw_median: float            # of the raw samples
    subtracted: bool             # whether the rule subtracted the empty loop
    samples: tuple[float, ...]   # the samples ``median`` is of
    unit: str
    mechanism: str | None        # the syscall mechanism the run reports it used
    forced: Mapping[str, Any]

    def value(self, raw: bool) -> float:
        return self.raw_median if raw else self.median


def _collect(side: Side, args: Sequence[str]) -> list[dict[str, Any]]:
    """The records of one harness command for this side; a refusal names the side."""
    try:
        return harness.collect(side.harness, args, env=side.environ())
    except UserError as exc:
        settings = f" ({clipped(side.settings_text, ECHO_MAX)})" if side.settings else ""
        raise UserError(f"{side.where}{settings}: {exc}") from None


def prepare(side: Side) -> Ready:
    """Check a side against what its harness accepts, before anything runs.

    The harness validates the settings' values itself (``sysinfo`` refuses a bad
    one, exit 2); a setting it does not read at all is refused here, from the
    list of forcings its fingerprint records.  The benchmark must name exactly
    one benchmark this machine can run.
    """
    try:
        records = _collect(side, ["sysinfo", "--json"])
    except UserError as exc:
        raise UserError(f"{exc}{_machine_of(side)}") from None
    if not records or records[0].get("type") != "fingerprint":
        raise SchemaError(f"{side.where}: harness 'sysinfo' wrote no fingerprint")
    fp = records[0]
    forced = fp.get("forced") if isinstance(fp.get("forced"), dict) else {}
    assert isinstance(forced, dict)
    for name, _ in side.settings:
        if name not in forced:
            reads = ", ".join(sorted(forced)) or "none"
            raise UserError(f"{side.where}: {clipped(name, ECHO_MAX)} is not a setting "
                            f"{side.harness_shown} reads (it reads {reads})")
    benches = [r for r in _collect(side, ["list", "--json", "--bench", side.bench])
               if r.get("type") == "bench"]
    names = [f"{b.get('suite')}/{b.get('name')}" for b in benches]
    if len(benches) != 1:
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        raise UserError(f"{side.where}: '{side.bench}' matches {len(benches)} benchmarks "
                        f"({shown}): name one")
    if benches[0].get("available") is False:
        raise UserError(f"{side.where}: {names[0]} cannot run here: "
                        f"{benches[0].get('reason') or 'not available'}")
    version = dig(fp, "kcross", "version") or "?"
    rev = dig(fp, "kcross", "git_rev")
    return Ready(side=side, bench=names[0], arch=str(fp.get("arch") or "?"),
                 mechanism=dig(fp, "syscall", "mechanism"),
                 available=tuple(dig(fp, "syscall", "available") or ()), forced=forced,
                 version=f"{version} ({rev})" if rev else str(version))


def _machine_of(side: Side) -> str:
    """' (on this x86_64 machine)' when the harness runs without the side's settings, else ''."""
    if not side.settings:
        return ""
    try:
        records = harness.collect(side.harness, ["sysinfo", "--json"])
    except KcrossError:
        return ""
    arch = records[0].get("arch") if records else None
    return f" (on this {arch} machine)" if arch else ""


def measure(ready: Ready, options: RunOptions) -> Measured:
    """One short pinned run of a side: its median (and raw median) and the mechanism used."""
    side = ready.side
    records = _collect(side, options.args(ready.bench))
    fp = next((r for r in records if r.get("type") == "fingerprint"), None)
    results = [r for r in records if r.get("type") == "result"]
    if fp is None or len(results) != 1:
        raise HarnessError(f"{side.where}: the harness wrote {len(results)} result(s) for "
                           f"{ready.bench}{'' if fp else ' and no fingerprint'}, expected one")
    rec = results[0]
    status = rec.get("status")
    if status == "failed":
        raise CheckFailed(f"{side.where}: {ready.bench} failed its check: {rec.get('reason')}")
    if status != "ok":
        raise UserError(f"{side.where}: {ready.bench} {status}: {rec.get('reason')}")
    try:
        summary = stats.summarize_record(rec)
        raw = stats.median(stats.raw_samples(rec))
    except stats.StatsError as exc:
        raise HarnessError(f"{side.where}: {ready.bench}: {exc}") from None
    forced = fp.get("forced") if isinstance(fp.get("forced"), dict) else {}
    return Measured(median=summary.median, raw_median=raw,
                    subtracted=summary.overhead.subtracted, samples=summary.samples,
                    unit=str(rec.get("unit") or UNIT_NS),
                    mechanism=rec.get("mechanism") or dig(fp, "syscall", "mechanism"),
                    forced=forced or {})


def lower_is(unit: str) -> str:
    return "faster" if unit == UNIT_NS else "fewer"


def ratio_words(ratio: float, unit: str, b: str = "B", a: str = "A") -> str:
    """'B is 5.7% faster than A' for a ratio b/a of times (or counts)."""
    if ratio < 1:
        return f"{b} is {1 - ratio:.1%} {lower_is(unit)} than {a}"
    return f"{b} is {ratio - 1:.1%} {'slower' if unit == UNIT_NS else 'more'} than {a}"


# --- kcross ab ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Round:
    number: int      # 1-based
    first: str       # "A" or "B": which side ran first
    a: Measured
    b: Measured
    ratio: float     # b / a, of the figures compared (raw or by the rule)


@dataclass(frozen=True)
class ABResult:
    a: Ready
    b: Ready
    options: RunOptions
    raw: bool
    rounds: tuple[Round, ...]
    paired: stats.Paired
    notes: tuple[str, ...]

    @property
    def unit(self) -> str:
        return self.rounds[0].a.unit


def check_sides(a: Side, b: Side) -> None:
    if a.identity() == b.identity():
        raise UserError(f"A and B are the same ({a.bench}"
                        + (f", {a.settings_text}" if a.settings else "")
                        + "): give two benchmarks, --env-a/--env-b or --harness-a/--harness-b; "
                        "for a benchmark against itself use 'kcross aa'")


def run_ab(a: Ready, b: Ready, rounds: int, options: RunOptions, *, raw: bool = False,
           on_round: Callable[[Round], None] | None = None) -> ABResult:
    """``rounds`` rounds of A and B in alternating order; the paired ratio B/A."""
    done: list[Round] = []
    for i in range(rounds):
        first = "A" if i % 2 == 0 else "B"
        if first == "A":
            ma = measure(a, options)
            mb = measure(b, options)
        else:
            mb = measure(b, options)
            ma = measure(a, options)
        va, vb = ma.value(raw), mb.value(raw)
        if va <= 0:
            raise HarnessError(f"round {i + 1}: A's median is {va:g}: no ratio")
        found = Round(number=i + 1, first=first, a=ma, b=mb, ratio=vb / va)
        done.append(found)
        if on_round is not None:
            on_round(found)
    try:
        paired = stats.paired_ratio([r.a.value(raw) for r in done],
                                    [r.b.value(raw) for r in done])
    except stats.StatsError as exc:
        raise UserError(f"no paired ratio: {exc}") from None
    return ABResult(a=a, b=b, options=options, raw=raw, rounds=tuple(done), paired=paired,
                    notes=tuple(_ab_notes(a, b, done, raw)))


def mechanisms(rounds: Sequence[Round], side: str) -> list[str]:
    """The syscall mechanisms a side's runs reported, in order of first use."""
    seen = [(r.a if side == "A" else r.b).mechanism for r in rounds]
    return list(dict.fromkeys(m or "?" for m in seen))


def _ab_notes(a: Ready, b: Ready, rounds: Sequence[Round], raw: bool) -> list[str]:
    notes: list[str] = []
    mech_a, mech_b = mechanisms(rounds, "A"), mechanisms(rounds, "B")
    for ready, mech in ((a, mech_a), (b, mech_b)):
        wanted = dict(ready.side.settings).get("KCROSS_SYSCALL")
        if wanted and wanted != "auto" and mech != [wanted]:
            notes.append(f"side {ready.side.label} asked for KCROSS_SYSCALL={wanted} but its "
                         f"runs report the mechanism {', '.join(mech)}")
        if len(mech) > 1:
            notes.append(f"side {ready.side.label}'s runs reported different mechanisms: "
                         f"{', '.join(mech)}")
    for ready, label in ((a, "A"), (b, "B")):
        for name, value in ready.side.settings:
            recorded = {(r.a if label == "A" else r.b).forced.get(name) for r in rounds}
            if recorded != {value or None}:
                shown = ", ".join(sorted(str(v) for v in recorded))
                notes.append(f"side {label} set {name}={value} but its runs' fingerprints "
                             f"record {name} as {shown}")
    set_a = dict(a.side.settings).get("KCROSS_SYSCALL", os.environ.get("KCROSS_SYSCALL", ""))
    set_b = dict(b.side.settings).get("KCROSS_SYSCALL", os.environ.get("KCROSS_SYSCALL", ""))
    if set_a != set_b and mech_a == mech_b:
        notes.append(f"both sides ran the syscall mechanism {', '.join(mech_a)}: their "
                     f"KCROSS_SYSCALL settings select the same one on this {a.arch} machine "
                     f"(it offers {', '.join(a.available) or '?'})")
    if not raw:
        sub_a = sum(r.a.subtracted for r in rounds)
        sub_b = sum(r.b.subtracted for r in rounds)
        n = len(rounds)
        if {sub_a, sub_b} != {0} and {sub_a, sub_b} != {n}:
            notes.append(f"the empty loop was subtracted from A in {sub_a} of {n} rounds and "
                         f"from B in {sub_b} of {n}: ratios mix corrected and raw medians; "
                         "--raw compares raw medians throughout")
    return notes


def ab_json(result: ABResult) -> dict[str, Any]:
    def side(ready: Ready, label: str) -> dict[str, Any]:
        return {"label": label, "bench": ready.bench, "settings": dict(ready.side.settings),
                "harness": ready.side.harness_shown, "harness_version": ready.version,
                "arch": ready.arch, "mechanisms": mechanisms(result.rounds, label),
                "forced": dict((result.rounds[0].a if label == "A" else result.rounds[0].b).forced)}

    p = result.paired
    return {
        "type": "ab", "a": side(result.a, "A"), "b": side(result.b, "B"),
        "unit": result.unit, "samples": result.options.samples, "cpu": result.options.cpu,
        "figure": "raw median" if result.raw else "median (kcross's overhead rule)",
        "rounds": [{"round": r.number, "first": r.first, "a": r.a.value(result.raw),
                    "b": r.b.value(result.raw), "ratio": r.ratio,
                    "a_mechanism": r.a.mechanism, "b_mechanism": r.b.mechanism,
                    "a_subtracted": r.a.subtracted, "b_subtracted": r.b.subtracted}
                   for r in result.rounds],
        "ratio": p.median, "ci_low": p.ci.low, "ci_high": p.ci.high,
        "ci_confidence": p.ci.confidence, "significant": p.significant,
        "notes": list(result.notes),
    }


# --- kcross aa ---------------------------------------------------------------------------
#
# One set of runs, two ways of judging it.  Each round runs two labelled copies
# of the same side, A and A', once each, the copy that goes first alternating
# round by round (as ``kcross ab`` alternates its sides).
#
# 1. interleaved (the design kcross recommends for decisions): consecutive
#    rounds form blocks of ``block_rounds``; a block is judged as ``kcross ab``
#    judges its rounds, by the median of the per-round ratios A'/A and its
#    distribution-free CI (:func:`kcross.stats.paired_ratio`): a difference is
#    called when the CI excludes 1.  Its false-positive level is 1 minus the
#    CI's achieved coverage (3.1% for 6 rounds: the median's CI is discrete).
# 2. separate: each round's two runs are judged as ``kcross compare`` judges
#    two stored runs, Mann-Whitney U on their samples (:func:`kcross.stats.compare`).
#    When runs of one benchmark differ between processes by more than their
#    samples' spread, this calls differences far more often than its alpha.

COPY_A, COPY_B = "A", "A'"
INTERLEAVED, SEPARATE = "interleaved", "separate"


def percent(value: float) -> str:
    """5% or 3.1%: a level or rate, to one decimal when it has one."""
    text = f"{value * 100:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"


@dataclass(frozen=True)
class AARound:
    """One round: a run of copy A and one of copy A', of the same side."""

    number: int                   # 1-based
    first: str                    # COPY_A or COPY_B: which copy ran first
    a: Measured
    a_prime: Measured
    verdict: stats.Verdict | None  # design 2: A' against A, as ``kcross compare``
    error: str | None             # why design 2 could not judge the round

    @property
    def called(self) -> bool:
        return self.verdict is not None and self.verdict.significant

    @property
    def ratio(self) -> float:
        """A'/A of the two runs' medians (design 1's per-round figure)."""
        return self.a_prime.median / self.a.median

    @property
    def in_order(self) -> tuple[Measured, Measured]:
        """The round's runs in the order they ran."""
        return (self.a, self.a_prime) if self.first == COPY_A else (self.a_prime, self.a)


@dataclass(frozen=True)
class Block:
    """Design 1: consecutive rounds judged together, as ``kcross ab`` judges its rounds."""

    number: int                   # 1-based
    first_round: int
    last_round: int
    paired: stats.Paired          # median A'/A over the block's rounds, its CI

    @property
    def called(self) -> bool:
        return self.paired.significant


@dataclass(frozen=True)
class FalsePositives:
    """How often a test called a difference between runs of one benchmark."""

    design: str       # INTERLEAVED or SEPARATE
    called: int
    judged: int
    level: float      # the test's own false-positive level (its alpha, or 1 - CI coverage)
    low: float        # exact (Clopper-Pearson) CI of the rate
    high: float
    confidence: float
    nominal: float = stats.ALPHA

    @property
    def rate(self) -> float:
        return self.called / self.judged

    @property
    def units(self) -> str:
        """'10 blocks', '1 pair': what was judged, counted."""
        unit = "block" if self.design == INTERLEAVED else "pair"
        return f"{self.judged} {unit}{'' if self.judged == 1 else 's'}"

    @property
    def level_text(self) -> str:
        if self.design == INTERLEAVED:
            return f"the block test's level {percent(self.level)}"
        return f"the nominal {percent(self.level)}"

    @property
    def reading(self) -> str:
        """Where the test's level lies against the rate's CI, in words."""
        if self.low > self.level:
            if self.design == SEPARATE:
                return (f"ABOVE {self.level_text}: separate runs of one benchmark differ here by "
                        "more than their own samples' spread (run-to-run variation: the "
                        "machine drifts between runs, each process gets its own memory "
                        "layout), so comparing two separate runs overstates significance; "
                        "judge a change with 'kcross ab' (interleaved rounds) or with "
                        "'kcross check --max-regression' (a threshold), not by this test")
            return (f"ABOVE {self.level_text}: the per-round ratios of identical runs lean "
                    "one way within blocks here, so the rounds are not independent (a "
                    "disturbance that follows the rounds' rhythm?); look at the rounds "
                    "(--json) and at 'kcross sysinfo --check' before trusting 'kcross ab'")
        if self.high < self.level:
            why = ("a difference needs Mann-Whitney and the ratio's CI to agree; ties or "
                   "coarse timings" if self.design == SEPARATE else
                   "ties, or an order effect that alternation splits evenly")
            return f"below {self.level_text}: the test is conservative here ({why})"
        reading = (f"consistent with {self.level_text} (the CI contains it): not shown to call "
                   "differences more often than advertised on this machine")
        if self.high > 2 * self.level:
            reading += (f"; but {self.units} cannot rule out rates up to "
                        f"{self.high:.0%}: more rounds (--rounds) narrow the CI")
        return reading


def false_positives(called: int, judged: int, level: float = stats.ALPHA, *,
                    design: str = SEPARATE,
                    confidence: float = stats.CONFIDENCE) -> FalsePositives:
    """The rate ``called / judged`` with its exact binomial (Clopper-Pearson) CI."""
    if judged < 1:
        raise stats.StatsError(f"no {'block' if design == INTERLEAVED else 'pair'} "
                               "could be judged")
    low, high = stats.proportion_ci(called, judged, confidence)
    return FalsePositives(design=design, called=called, judged=judged, level=level,
                          low=low, high=high, confidence=confidence)


def block_level(block_rounds: int, confidence: float = stats.CONFIDENCE) -> float:
    """Design 1's false-positive level: 1 - the achieved coverage of the median's CI.

    The coverage depends only on the number of ratios (their ranks), so it is
    taken from the CI :func:`kcross.stats.median_ci` gives for any n values.
    """
    return 1.0 - stats.median_ci(range(1, block_rounds + 1), confidence).confidence


@dataclass(frozen=True)
class AAResult:
    ready: Ready
    options: RunOptions
    block_rounds: int
    rounds: tuple[AARound, ...]
    blocks: tuple[Block, ...]
    interleaved: FalsePositives   # design 1, over blocks
    separate: FalsePositives      # design 2, over rounds (pairs of runs)
    order: stats.Paired           # second run / first run, over all rounds

    @property
    def unit(self) -> str:
        return self.rounds[0].a.unit

    @property
    def leftover(self) -> int:
        """Rounds after the last full block (judged by design 2 only)."""
        return len(self.rounds) - len(self.blocks) * self.block_rounds


def judge(a: Measured, a_prime: Measured, alpha: float) -> tuple[stats.Verdict | None,
                                                                  str | None]:
    """The verdict ``kcross compare`` gives on two runs: A' against A."""
    try:
        return stats.compare(a.samples, a_prime.samples, alpha=alpha), None
    except stats.StatsError as exc:
        return None, str(exc)


def check_aa_samples(samples: int, alpha: float = stats.ALPHA) -> None:
    floor = stats.smallest_p(samples, samples)
    if floor >= alpha:
        raise UserError(f"--samples {samples}: too few for Mann-Whitney U to reach p < "
                        f"{alpha:g} (at best p = {floor:.3g}); take at least 4")


def check_aa_rounds(rounds: int, block_rounds: int) -> None:
    if block_rounds < MIN_ROUNDS:
        raise UserError(f"--block-rounds {block_rounds}: too few for a 95% CI of the median "
                        f"ratio (need {MIN_ROUNDS})")
    if rounds < block_rounds:
        raise UserError(f"--rounds {rounds} makes no block of {block_rounds} rounds "
                        f"(--block-rounds): give at least {block_rounds}")


def run_aa(ready: Ready, rounds: int, options: RunOptions, *, block_rounds: int = MIN_ROUNDS,
           alpha: float = stats.ALPHA, on_round: Callable[[AARound], None] | None = None,
           on_block: Callable[[Block], None] | None = None) -> AAResult:
    """``rounds`` rounds of two copies of one side, judged by both designs."""
    check_aa_rounds(rounds, block_rounds)
    done: list[AARound] = []
    blocks: list[Block] = []
    for i in range(rounds):
        first = COPY_A if i % 2 == 0 else COPY_B
        one, two = measure(ready, options), measure(ready, options)
        a, a_prime = (one, two) if first == COPY_A else (two, one)
        for label, m in ((COPY_A, a), (COPY_B, a_prime)):
            if m.median <= 0:
                raise HarnessError(f"round {i + 1}: {label}'s median is {m.median:g}: no ratio")
        verdict, error = judge(a, a_prime, alpha)
        found = AARound(number=i + 1, first=first, a=a, a_prime=a_prime, verdict=verdict,
                        error=error)
        done.append(found)
        if on_round is not None:
            on_round(found)
        if len(done) % block_rounds == 0:
            part = done[-block_rounds:]
            try:
                paired = stats.paired_ratio([r.a.median for r in part],
                                            [r.a_prime.median for r in part])
            except stats.StatsError as exc:
                raise UserError(f"block {len(blocks) + 1}: no paired ratio: {exc}") from None
            block = Block(number=len(blocks) + 1, first_round=part[0].number,
                          last_round=part[-1].number, paired=paired)
            blocks.append(block)
            if on_block is not None:
                on_block(block)
    judged = [r for r in done if r.verdict is not None]
    try:
        interleaved = false_positives(sum(b.called for b in blocks), len(blocks),
                                      block_level(block_rounds), design=INTERLEAVED)
        separate = false_positives(sum(r.called for r in judged), len(judged), alpha,
                                   design=SEPARATE)
        order = stats.paired_ratio([r.in_order[0].median for r in done],
                                   [r.in_order[1].median for r in done])
    except stats.StatsError as exc:
        raise UserError(f"no A/A figures: {exc}") from None
    return AAResult(ready=ready, options=options, block_rounds=block_rounds, rounds=tuple(done),
                    blocks=tuple(blocks), interleaved=interleaved, separate=separate,
                    order=order)


def _rate_json(rate: FalsePositives) -> dict[str, Any]:
    return {"called": rate.called, "judged": rate.judged, "rate": rate.rate,
            "rate_ci_low": rate.low, "rate_ci_high": rate.high,
            "rate_ci_confidence": rate.confidence,
            "rate_ci_method": "exact binomial (Clopper-Pearson)",
            "level": rate.level, "nominal": rate.nominal, "reading": rate.reading}


def aa_json(result: AAResult) -> dict[str, Any]:
    o = result.order
    return {
        "type": "aa", "bench": result.ready.bench,
        "settings": dict(result.ready.side.settings),
        "harness": result.ready.side.harness_shown, "unit": result.unit,
        "samples": result.options.samples, "cpu": result.options.cpu,
        "figure": "median (kcross's overhead rule)",
        "rounds": [{"round": r.number, "first": r.first, "a": r.a.median,
                    "a_prime": r.a_prime.median, "ratio": r.ratio,
                    "p": r.verdict.p if r.verdict else None, "called": r.called,
                    "error": r.error} for r in result.rounds],
        "interleaved": {
            "test": "median of the per-round ratios A'/A over a block, called when its CI "
                    "excludes 1 (as kcross ab)",
            "block_rounds": result.block_rounds, "leftover_rounds": result.leftover,
            "blocks": [{"block": b.number, "first_round": b.first_round,
                        "last_round": b.last_round, "ratio": b.paired.median,
                        "ci_low": b.paired.ci.low, "ci_high": b.paired.ci.high,
                        "ci_confidence": b.paired.ci.confidence, "called": b.called}
                       for b in result.blocks],
            **_rate_json(result.interleaved)},
        "separate": {
            "test": "Mann-Whitney U on the two runs' samples, two-sided (as kcross compare)",
            "alpha": result.separate.level, **_rate_json(result.separate)},
        "order": {"ratio": o.median, "ci_low": o.ci.low, "ci_high": o.ci.high,
                  "ci_confidence": o.ci.confidence, "significant": o.significant,
                  "what": "second run / first run of each round"},
    }
