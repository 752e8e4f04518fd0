"""``kcross ab``, ``kcross aa`` and ``kcross crosscheck``: interleaved comparisons of live runs.

The logic is in :mod:`kcross.ab` and :mod:`kcross.crosscheck`; this module
parses the command lines and prints: each round on stderr as it finishes, the
summary on stdout (a table and its reading, or one JSON line with ``--json``).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..cli import (
    CPU_RANGE,
    MIN_BATCH_MS_RANGE,
    SAMPLES_RANGE,
    WARMUP_MS_RANGE,
    _number,
)
from ..errors import UserError

if TYPE_CHECKING:
    from ..ab import AAResult, ABResult, FalsePositives, Ready, Side
    from ..crosscheck import CheckResult

AB_ROUNDS, AB_SAMPLES = 10, 41
AA_ROUNDS, AA_SAMPLES, AA_BLOCK_ROUNDS = 60, 31, 6
CROSSCHECK_ROUNDS = 6
ROUNDS_RANGE = (6, 10_000)  # 6: the fewest whose per-round ratios give a 95% CI of their median

AB_EPILOG = f"""\
sides:
  kcross ab getppid-inline getppid-dispatch                  two benchmarks
  kcross ab --env-a KCROSS_SYSCALL=libc --env-b KCROSS_SYSCALL=syscall getppid-dispatch
  kcross ab --env-a KCROSS_VDSO=0 --env-b KCROSS_VDSO=1 clock_gettime-kc
  kcross ab --harness-a old/kcross-harness --harness-b new/kcross-harness getppid-inline
  (any mix: a side is a benchmark, its settings and its harness; B defaults to A's benchmark)

method: {AB_ROUNDS} rounds (--rounds) of one short run of each side ({AB_SAMPLES} samples,
  --samples), all pinned to one CPU, the side that runs first alternating. Each
  round gives a ratio B/A of the two runs' medians (kcross's overhead rule, as
  'kcross show'; --raw: raw medians); the result is the median of those ratios
  with its distribution-free 95% CI. Drift between rounds hits both sides of a
  round alike, so the ratio stays honest where two separate runs would not. A
  difference is shown when the CI excludes 1 (a sign test on the rounds).

settings are checked by the harness before anything runs (a value it refuses,
e.g. KCROSS_SYSCALL=scv on x86-64, is one line, exit 2); the syscall mechanism
each side's runs report is shown with the result."""

AA_EPILOG = f"""\
method: {AA_ROUNDS} rounds (--rounds); each round runs the benchmark twice, as two
  labelled copies A and A' ({AA_SAMPLES} samples each, --samples), pinned to one CPU,
  the copy that runs first alternating round by round. Both copies measure the
  same thing, so every difference called is a false positive. The same runs are
  judged two ways:

  1. interleaved rounds, as 'kcross ab' judges (the design to decide with):
     blocks of {AA_BLOCK_ROUNDS} consecutive rounds (--block-rounds); a block calls a
     difference when the 95% CI of its median per-round ratio A'/A excludes 1.
     Its false-positive level is 1 - that CI's achieved coverage (3.1% for 6
     rounds: the median's CI is discrete), next to the nominal 5%.
  2. separate runs, as 'kcross compare' judges two stored runs: each round's two
     runs by Mann-Whitney U on their samples (two-sided, alpha 0.05). A rate far
     above 5% means run-to-run variation here exceeds the noise within a run:
     comparing two separate runs overstates significance; judge a change with
     'kcross ab' (or 'kcross check --max-regression').

  Each false-positive rate comes with its exact binomial 95% CI; the order line
  (second run / first run) shows whether the run that goes second is
  systematically faster or slower, which alternation cancels in 1.

cost: 2 x --rounds harness runs ({2 * AA_ROUNDS} by default), each about its warm-up
  (200 ms) plus its samples: about a minute for getppid-inline by default."""

CROSSCHECK_EPILOG = f"""\
checks:
  syscall  'perf bench syscall basic' (getppid through glibc) against
           syscall/getppid-glibc
  pipe     'perf bench sched pipe' (round trip between two processes; --threaded:
           -T, two threads) against ctxsw/pipe-procs-same-cpu
           (ctxsw/pipe-threads-same-cpu), both on the one CPU (perf under taskset)

method: {CROSSCHECK_ROUNDS} rounds (--rounds), the two programs alternating which runs
  first; each side's median ns/op over the rounds and the ratio kcross/perf. The
  kcross figure is the median of the raw samples (no empty-loop subtraction), as
  perf's loops include their own loop. With 6 rounds or more, the per-round
  ratios' median gets its distribution-free 95% CI too.

perf events: any per-task perf event open meanwhile (perf record/stat, a profiler)
  slows every context switch through perf's scheduler hooks; keep other perf
  users off the machine during a crosscheck.

needs perf (Debian: apt-get install linux-perf) and taskset (util-linux)."""


def _run_options(p: argparse.ArgumentParser, rounds: int, samples: int, what: str) -> None:
    p.add_argument("--rounds", type=_number(*ROUNDS_RANGE, whole=True), default=rounds,
                   metavar="N", help=f"{what}, {ROUNDS_RANGE[0]} to {ROUNDS_RANGE[1]} "
                   f"(default {rounds})")
    p.add_argument("--samples", type=_number(*SAMPLES_RANGE, whole=True), default=samples,
                   metavar="S", help=f"samples per run (default {samples})")
    p.add_argument("--cpu", type=_number(*CPU_RANGE, whole=True), metavar="C",
                   help="pin every run to CPU C (default: the highest CPU kcross may run on)")
    p.add_argument("--warmup-ms", type=_number(*WARMUP_MS_RANGE, whole=False), metavar="MS",
                   help="warm-up of each run (default: the harness's, 200 ms)")
    p.add_argument("--min-batch-ms", type=_number(*MIN_BATCH_MS_RANGE, whole=False),
                   metavar="MS", help="shortest timed batch (default: the harness's, 2 ms)")


def add_parser(sub: Any, parents: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser(
        "ab", parents=[parents.harness, parents.json], formatter_class=fmt,
        help="interleaved A/B of two benchmarks, settings or harnesses",
        description="Run two sides in alternating rounds on one CPU and report the median "
                    "per-round ratio B/A with its 95% CI.", epilog=AB_EPILOG)
    p.add_argument("benches", nargs="+", metavar="BENCH",
                   help="A's benchmark, then B's (default: the same), NAME or SUITE/NAME")
    p.add_argument("--env-a", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of side A's environment (repeatable)")
    p.add_argument("--env-b", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of side B's environment (repeatable)")
    p.add_argument("--harness-a", metavar="PATH", help="side A's kcross-harness")
    p.add_argument("--harness-b", metavar="PATH", help="side B's kcross-harness")
    p.add_argument("--raw", action="store_true",
                   help="compare raw medians (no empty-loop subtraction on either side)")
    _run_options(p, AB_ROUNDS, AB_SAMPLES, "rounds")
    p.set_defaults(func=cmd_ab)

    p = sub.add_parser(
        "aa", parents=[parents.harness, parents.json], formatter_class=fmt,
        help="a benchmark against itself: the false-positive rate here",
        description="Run one benchmark against itself in interleaved rounds and report how "
                    "often a difference is called: the false-positive rate on this machine "
                    "of 'kcross ab' (blocks of rounds) and of Mann-Whitney U on two separate "
                    "runs (as 'kcross compare').", epilog=AA_EPILOG)
    p.add_argument("bench", metavar="BENCH", help="NAME or SUITE/NAME")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the runs' environment (repeatable)")
    _run_options(p, AA_ROUNDS, AA_SAMPLES, "rounds, two runs each")
    p.add_argument("--block-rounds", type=_number(ROUNDS_RANGE[0], 1000, whole=True),
                   default=AA_BLOCK_ROUNDS, metavar="R",
                   help=f"rounds per block of the interleaved design, at least "
                        f"{ROUNDS_RANGE[0]} (default {AA_BLOCK_ROUNDS})")
    p.set_defaults(func=cmd_aa)

    p = sub.add_parser(
        "crosscheck", parents=[parents.harness, parents.json], formatter_class=fmt,
        help="this harness against 'perf bench', alternated, with the ratio",
        description="Run kcross-harness and 'perf bench' in alternation on one CPU and "
                    "report each side's median and the ratio kcross/perf.",
        epilog=CROSSCHECK_EPILOG)
    p.add_argument("--check", choices=("syscall", "pipe", "both"), default="both",
                   help="which check (default both)")
    p.add_argument("--threaded", action="store_true",
                   help="pipe check between threads (perf -T, ctxsw/pipe-threads-same-cpu)")
    p.add_argument("--rounds", type=_number(1, ROUNDS_RANGE[1], whole=True),
                   default=CROSSCHECK_ROUNDS, metavar="N",
                   help=f"rounds per check (default {CROSSCHECK_ROUNDS}; 6 or more give a CI)")
    p.add_argument("--cpu", type=_number(*CPU_RANGE, whole=True), metavar="C",
                   help="the CPU both sides run on (default: the highest CPU kcross may run on)")
    p.add_argument("--loops", type=_number(1, 10**9, whole=True), default=100_000,
                   metavar="N", help="perf bench sched pipe's round trips per run (-l; "
                   "default 100000)")
    p.add_argument("--syscall-loops", type=_number(1, 10**10, whole=True), metavar="N",
                   help="perf bench syscall basic's calls per run (-l; default perf's own, "
                   "10 million)")
    p.add_argument("--samples", type=_number(*SAMPLES_RANGE, whole=True), metavar="S",
                   help="the harness's samples per run (default the harness's, 201)")
    p.set_defaults(func=cmd_crosscheck)


# --- helpers -----------------------------------------------------------------------------

def _settings(texts: list[str]) -> tuple[tuple[str, str], ...]:
    from ..ab import parse_setting

    found: dict[str, str] = {}
    for text in texts:
        name, value = parse_setting(text)
        if name in found and found[name] != value:
            raise UserError(f"{name} given twice for one side ({name}={found[name]} and "
                            f"{text})")
        found[name] = value
    return tuple(found.items())


def _side(label: str, bench: str, settings: tuple[tuple[str, str], ...],
          harness_option: str | None) -> Side:
    from .. import harness
    from ..ab import Side

    command = harness.locate(harness_option)
    return Side(label=label, bench=bench, harness=tuple(command), harness_shown=command[-1],
                settings=settings)


def _options(args: argparse.Namespace) -> Any:
    from ..ab import RunOptions, default_cpu

    return RunOptions(samples=int(args.samples),
                      cpu=int(args.cpu) if args.cpu is not None else default_cpu(),
                      warmup_ms=args.warmup_ms, min_batch_ms=args.min_batch_ms)


def _fmt(value: float, unit: str) -> str:
    from ..render import format_value

    return format_value(value, unit)


def _describe(ready: Ready) -> str:
    settings = f" with {ready.side.settings_text}" if ready.side.settings else ""
    return f"{ready.bench}{settings}"


def _line(console: Console, text: str, style: str = "") -> None:
    """One line of text, never wrapped (a round's progress, a reading): grep-able in a log."""
    console.print(Text(text, style=style), soft_wrap=True)


def _write_json(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")


def _ci_text(low: float, high: float, achieved: float) -> str:
    return f"95% CI {low:.3f}–{high:.3f} (coverage {achieved:.1%})"


# --- kcross ab ---------------------------------------------------------------------------

def cmd_ab(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import harness

    with harness.stop_signals_held():  # numpy's threads leave the stop signals to this one
        from .. import ab

    if len(args.benches) > 2:
        raise UserError(f"ab takes one or two benchmarks (A's, then B's), got "
                        f"{len(args.benches)}: {' '.join(args.benches)}")
    bench_a = args.benches[0]
    bench_b = args.benches[-1]
    side_a = _side("A", bench_a, _settings(args.env_a), args.harness_a or args.harness)
    side_b = _side("B", bench_b, _settings(args.env_b), args.harness_b or args.harness)
    ab.check_sides(side_a, side_b)
    options = _options(args)
    ready_a, ready_b = ab.prepare(side_a), ab.prepare(side_b)
    _line(err, (f"A: {_describe(ready_a)} (mechanism {ready_a.mechanism}), "
                f"B: {_describe(ready_b)} (mechanism {ready_b.mechanism}); "
                f"{args.rounds} rounds of {options.samples} samples on CPU {options.cpu}"))

    def show(r: ab.Round) -> None:
        unit = r.a.unit
        _line(err, (f"round {r.number}/{args.rounds} ({r.first} first): "
                    f"A {_fmt(r.a.value(args.raw), unit)}, B {_fmt(r.b.value(args.raw), unit)} "
                    f"{unit}, B/A {r.ratio:.3f}"))

    result = ab.run_ab(ready_a, ready_b, int(args.rounds), options, raw=args.raw, on_round=show)
    if args.json:
        _write_json(ab.ab_json(result))
    else:
        _print_ab(result, out)
    return 0


def _print_ab(result: ABResult, out: Console) -> None:
    from .. import stats
    from ..ab import mechanisms, ratio_words

    unit = result.unit
    table = Table(title=f"A/B: {len(result.rounds)} rounds, {result.options.samples} samples "
                        f"per run, CPU {result.options.cpu}", title_justify="left")
    for column in ("side", "benchmark", "settings", "syscall mechanism", "harness"):
        table.add_column(column)
    table.add_column(f"median {unit}", justify="right")
    for label, ready in (("A", result.a), ("B", result.b)):
        values = [(r.a if label == "A" else r.b).value(result.raw) for r in result.rounds]
        table.add_row(*(Text(c) for c in (
            label, ready.bench, ready.side.settings_text or "–",
            ", ".join(mechanisms(result.rounds, label)),
            f"{ready.side.harness_shown} {ready.version}", _fmt(stats.median(values), unit))))
    out.print(table)
    p = result.paired
    verdict = (f"{ratio_words(p.median, unit)} (the CI excludes 1)" if p.significant
               else "no difference shown (the CI includes 1)")
    _line(out, (f"B/A {p.median:.3f}: median of {p.n} per-round ratios, "
                f"{_ci_text(p.ci.low, p.ci.high, p.ci.confidence)}: {verdict}"))
    figure = ("raw medians (no empty-loop subtraction)" if result.raw else
              "medians by kcross's overhead rule (as 'kcross show')")
    _line(out, (f"each round: one run of each side, alternating which runs first; its "
                f"figures are the runs' {figure}; the table's median is over the rounds"))
    for note in result.notes:
        _line(out, f"note: {note}", "yellow")


# --- kcross aa ---------------------------------------------------------------------------

def cmd_aa(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import harness

    with harness.stop_signals_held():
        from .. import ab

    rounds, block_rounds = int(args.rounds), int(args.block_rounds)
    ab.check_aa_samples(int(args.samples))
    ab.check_aa_rounds(rounds, block_rounds)
    side = _side(args.bench, args.bench, _settings(args.env), args.harness)
    options = _options(args)
    ready = ab.prepare(side)
    blocks = rounds // block_rounds
    _line(err, (f"A/A: {_describe(ready)} against itself, {rounds} rounds of two runs "
                f"(A and A', {options.samples} samples each) on CPU {options.cpu}; "
                f"blocks of {block_rounds} rounds"))

    def show_round(r: ab.AARound) -> None:
        unit = r.a.unit
        judged = (f"not judged: {r.error}" if r.verdict is None else
                  f"p={r.verdict.p:.3g}, " + ("DIFFERENCE" if r.called else "no difference"))
        _line(err, (f"round {r.number}/{rounds} ({r.first} first): A {_fmt(r.a.median, unit)}, "
                    f"A' {_fmt(r.a_prime.median, unit)} {unit}, A'/A {r.ratio:.3f}; "
                    f"separate runs (Mann-Whitney U): {judged}"))

    def show_block(b: ab.Block) -> None:
        p = b.paired
        _line(err, (f"block {b.number}/{blocks} (rounds {b.first_round}-{b.last_round}): "
                    f"A'/A {p.median:.3f}, {_ci_text(p.ci.low, p.ci.high, p.ci.confidence)}: "
                    + ("DIFFERENCE (the CI excludes 1)" if b.called else "no difference")))

    result = ab.run_aa(ready, rounds, options, block_rounds=block_rounds, on_round=show_round,
                       on_block=show_block)
    if args.json:
        _write_json(ab.aa_json(result))
    else:
        _print_aa(result, out)
    return 0


def _rate_text(r: FalsePositives) -> str:
    return (f"a difference called in {r.called} of {r.units}: {r.rate:.1%} "
            f"(95% CI {r.low:.1%}–{r.high:.1%}, exact binomial)")


def _print_aa(result: AAResult, out: Console) -> None:
    from ..ab import percent

    n = len(result.rounds)
    one, two, o = result.interleaved, result.separate, result.order
    _line(out, (f"A/A: {_describe(result.ready)} against itself on CPU {result.options.cpu}: "
                f"{n} rounds, each one run of copy A and one of copy A' ({result.options.samples} "
                "samples each), alternating which runs first; both copies measure the same "
                "thing, so every difference called is a false positive"))
    leftover = (f"; the last {result.leftover} round(s) make no full block"
                if result.leftover else "")
    _line(out, (f"1. interleaved rounds, judged as 'kcross ab' judges (decide with this): "
                f"{one.units} of {result.block_rounds} rounds, each called "
                f"different when the CI of its median ratio A'/A excludes 1: {_rate_text(one)}; "
                f"the block test's level {percent(one.level)} ({percent(1 - one.level)} CI "
                f"coverage; nominal {percent(one.nominal)}){leftover}"))
    _line(out, f"   reading: {one.reading}", "yellow" if one.low > one.level else "")
    unjudged = n - two.judged
    _line(out, (f"2. separate runs, judged as 'kcross compare' judges two stored runs "
                f"(Mann-Whitney U on their samples, two-sided, alpha {two.level:g}): "
                f"{_rate_text(two)}; nominal {percent(two.level)}"
                + (f"; {unjudged} pair(s) could not be judged" if unjudged else "")))
    _line(out, f"   reading: {two.reading}", "yellow" if two.low > two.level else "")
    drift = ("the second run is systematically "
             + ("faster" if o.median < 1 else "slower")
             + " (the CI excludes 1); alternating which copy goes first cancels it in 1."
             if o.significant else "no order effect shown (the CI includes 1)")
    _line(out, (f"order: second run / first run, median of {o.n} rounds {o.median:.3f}, "
                f"{_ci_text(o.ci.low, o.ci.high, o.ci.confidence)}: {drift}"))


# --- kcross crosscheck -------------------------------------------------------------------

def cmd_crosscheck(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import harness

    with harness.stop_signals_held():
        from .. import ab
        from .. import crosscheck as cc

    command = harness.locate(args.harness)
    cc.require_tools()
    cpu = int(args.cpu) if args.cpu is not None else ab.default_cpu()
    samples = int(args.samples) if args.samples is not None else None
    chosen = cc.checks(args.check, threaded=args.threaded, pipe_loops=int(args.loops),
                       syscall_loops=int(args.syscall_loops) if args.syscall_loops else None)
    for check in chosen:  # each benchmark can run here, before anything is measured
        ab.prepare(ab.Side(label="crosscheck", bench=check.bench, harness=tuple(command),
                           harness_shown=command[-1]))
    results = []
    for check in chosen:
        _line(err, (f"{check.name}: {check.perf_label} against {check.kcross_label}, "
                    f"{args.rounds} rounds on CPU {cpu}"))

        def show(r: cc.Round) -> None:
            _line(err, (f"round {r.number}/{args.rounds} ({r.first} first): perf "
                        f"{_fmt(r.perf_ns, 'ns/op')}, kcross {_fmt(r.kcross_ns, 'ns/op')} "
                        f"ns/op, kcross/perf {r.ratio:.3f}"))

        results.append(cc.run_check(
            check, int(args.rounds), cpu,
            perf=functools.partial(cc.perf_ns, check, cpu),
            kcross=functools.partial(cc.kcross_ns, check, command, cpu, samples),
            on_round=show))
    if args.json:
        for result in results:
            _write_json(cc.result_json(result))
        return 0
    for result in results:
        _print_check(result, out)
    if any(r.check.name == "pipe" for r in results):
        _line(out, f"note: {cc.PERF_EVENTS_CAVEAT}", "yellow")
    return 0


def _print_check(result: CheckResult, out: Console) -> None:
    check = result.check
    _line(out, (f"{check.name}: median over {len(result.rounds)} rounds on CPU {result.cpu}: "
                f"{check.perf_label} {_fmt(result.perf_median, 'ns/op')} ns/op, "
                f"{check.kcross_label} {_fmt(result.kcross_median, 'ns/op')} ns/op (raw), "
                f"ratio kcross/perf = {result.ratio:.3f}"))
    p = result.paired
    if p is not None:
        _line(out, (f"  per-round ratios kcross/perf: median {p.median:.3f}, "
                    f"{_ci_text(p.ci.low, p.ci.high, p.ci.confidence)}"))
