"""Interleaved A/B runs of the harness (``kcross ab``), and the sides they measure (also
``kcross aa``'s and ``crosscheck``'s).

A side's :class:`Arm` is a benchmark, the settings of the environment it runs under
(``KCROSS_SYSCALL``, ``KCROSS_VDSO``...) and the harness binary; :func:`prepare`
checks it against its harness before anything is measured, :func:`measure` makes one
short pinned run of it.  ``ab`` runs sides A and B in interleaved rounds
(kcross.rounds.engine: the side that goes first alternates) and judges the per-round ratios
B/A (kcross.judge.verdict.judge_paired: their median with its distribution-free CI):
drift between rounds hits both sides of a round alike and cancels in its ratio.

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

from .. import errors, forcings, stats
from .. import fingerprint as fields
from ..errors import ECHO_MAX, EXIT_CHECK_FAILED, HarnessError, KcrossError, SchemaError, UserError, clipped
from ..judge.verdict import PairedVerdict, judge_paired
from ..run import harness
from ..schema import UNIT_NS
from ..views.verdict import paired_warnings, paired_words

# Fewer rounds cannot give a 95% CI of the median ratio (1 - 2 * 0.5**n >= 0.95).
MIN_ROUNDS = stats.min_samples_for()


class CheckFailed(KcrossError):
    """A benchmark failed its own check in a round: a result (exit 1), not a crash."""

    exit_code = EXIT_CHECK_FAILED


def parse_setting(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (an empty VALUE means unset, as the harness reads it)."""
    pair = forcings.assignment(text)
    if pair is None:
        raise UserError(f"setting {errors.shown(text)}: expected NAME=VALUE, e.g. KCROSS_SYSCALL=libc")
    return pair


@dataclass(frozen=True)
class Arm:
    """What one side of an interleaved comparison (side A or B of ``kcross ab``, ``aa``'s
    benchmark, ``crosscheck``'s kcross) runs: a benchmark, under settings, with a
    harness.  Not a :class:`kcross.sides.Side` (samples to compare): what makes them."""

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

    side: Arm
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


def _collect(side: Arm, args: Sequence[str]) -> list[dict[str, Any]]:
    """The records of one harness command for this side; a refusal names the side."""
    try:
        return harness.collect(side.harness, args, env=side.environ())
    except UserError as exc:
        settings = f" ({clipped(side.settings_text, ECHO_MAX)})" if side.settings else ""
        raise UserError(f"{side.where}{settings}: {exc}") from None


def prepare(side: Arm) -> Ready:
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
    forced = fields.FORCED.members(fp)
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
    version = fields.KCROSS_VERSION.of(fp) or "?"
    rev = fields.KCROSS_REVISION.of(fp)
    return Ready(side=side, bench=names[0], arch=str(fields.ARCH.of(fp) or "?"),
                 mechanism=fields.SYSCALL_MECHANISM.of(fp),
                 available=tuple(fields.SYSCALL_AVAILABLE.of(fp) or ()), forced=dict(forced),
                 version=f"{version} ({rev})" if rev else str(version))


def _machine_of(side: Arm) -> str:
    """' (on this x86_64 machine)' when the harness runs without the side's settings, else ''."""
    if not side.settings:
        return ""
    try:
        records = harness.collect(side.harness, ["sysinfo", "--json"])
    except KcrossError:
        return ""
    arch = fields.ARCH.of(records[0]) if records else None
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
    forced = dict(fields.FORCED.members(fp))
    return Measured(median=summary.median, raw_median=raw,
                    subtracted=summary.overhead.subtracted, samples=summary.samples,
                    unit=str(rec.get("unit") or UNIT_NS),
                    mechanism=rec.get("mechanism") or fields.SYSCALL_MECHANISM.of(fp),
                    forced=forced or {})


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
    verdict: PairedVerdict
    notes: tuple[str, ...]

    @property
    def unit(self) -> str:
        return self.rounds[0].a.unit

    @property
    def paired(self) -> stats.Paired:
        return self.verdict.paired

    def median(self, side: str) -> float:
        """Side ``side`` ("A" or "B")'s median over the rounds (of its rounds' figures)."""
        return stats.median([(r.a if side == "A" else r.b).value(self.raw) for r in self.rounds])

    def mechanisms(self, side: str) -> list[str]:
        """The syscall mechanisms side ``side`` ("A" or "B")'s runs reported."""
        return mechanisms(self.rounds, side)


def check_sides(a: Arm, b: Arm) -> None:
    if a.identity() == b.identity():
        raise UserError(f"A and B are the same ({a.bench}"
                        + (f", {a.settings_text}" if a.settings else "")
                        + "): give two benchmarks, --env-a/--env-b or --harness-a/--harness-b; "
                        "for a benchmark against itself use 'kcross aa'")


def run_ab(a: Ready, b: Ready, rounds: int, options: RunOptions, *, raw: bool = False,
           on_round: Callable[[Round], None] | None = None) -> ABResult:
    """``rounds`` rounds of A and B in alternating order (kcross.rounds.engine); the paired ratio B/A
    judged by kcross.judge."""
    from .engine import interleave

    done: list[Round] = []

    def record(r: Any) -> None:
        ma, mb = r["A"], r["B"]
        va, vb = ma.value(raw), mb.value(raw)
        if va <= 0:
            raise HarnessError(f"round {r.number}: A's median is {va:g}: no ratio")
        found = Round(number=r.number, first=r.first, a=ma, b=mb, ratio=vb / va)
        done.append(found)
        if on_round is not None:
            on_round(found)

    interleave([("A", lambda: measure(a, options)), ("B", lambda: measure(b, options))],
               rounds, on_round=record)
    try:
        verdict = judge_paired([r.a.value(raw) for r in done], [r.b.value(raw) for r in done],
                               done[0].a.unit)
    except stats.StatsError as exc:
        raise UserError(f"no paired ratio: {exc}") from None
    return ABResult(a=a, b=b, options=options, raw=raw, rounds=tuple(done), verdict=verdict,
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
        "ci_confidence": p.ci.confidence, "significant": result.verdict.changed,
        "verdict": paired_words(result.verdict),
        "effective_rounds": p.effective, "dependence": p.dependence,
        "spread": p.spread, "outlying": p.outlying,
        "warnings": paired_warnings(result.verdict),
        "notes": list(result.notes),
    }
