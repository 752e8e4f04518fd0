"""``kcross aa``: benchmarks against themselves: how often each design calls a difference
that is not there (and, with --plant, how often it finds one that is); the runs are
stored as the machine's history of run-to-run noise."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ..errors import UserError, shown, stop_signals_held
from ..run.defaults import (
    CPU_RANGE,
    DEFAULT_PROCESSES,
    MIN_BATCH_MS_RANGE,
    PROCESS_SAMPLES,
    PROCESS_WARMUP_MS,
    PROCESSES_RANGE,
    SAMPLES_RANGE,
    WARMUP_MS_RANGE,
)
from ._rounds import line, readiness_line, settings, write_json
from .options import Common, number, readiness_option

if TYPE_CHECKING:
    from rich.console import Console


AA_ROUNDS, AA_BLOCK_ROUNDS = 12, 6
# The fewest rounds per block (a 95% CI of a median: kcross.stats.min_samples_for), and so
# the fewest rounds: the rounds make at least one block (kcross.rounds.aa.check_options).
AA_MIN_BLOCK = 6

HELP = "benchmarks against themselves: false positives, power and the machine's run-to-run noise"
DESCRIPTION = ("Run the benchmarks BENCH names against themselves, in rounds of two separate "
               "runs of several processes each, and report how often each way of judging two "
               "runs calls a difference that is not there (with --plant: finds a planted "
               "one). The runs are stored: they are this machine's history, from which "
               "compare, check and history take its run-to-run noise.")
PARENTS = ("db", "harness", "json")
EPILOG = f"""\
method: {AA_ROUNDS} rounds (--rounds); each round runs the benchmarks twice, as two separate
  runs A and A', the run that goes first alternating round by round; each run is
  --processes fresh harness processes of --samples samples, as 'kcross run' makes
  them, pinned to one CPU.  Both runs measure the same thing, so every difference
  called is a false positive.  The same runs are judged by:

  samples             each run as one process (Mann-Whitney U on the pooled samples):
                      how two separate runs were judged before runs had processes
  processes           the runs' processes, without the machine's run-to-run noise:
                      what a verdict sees when the store has no history of the machine
  processes + noise   the same with the run-to-run noise of the other rounds' runs:
                      what compare and check do once the store has a history
  blocks              {AA_BLOCK_ROUNDS} consecutive rounds (--block-rounds) as 'kcross ab'
                      judges rounds: the median per-round ratio A'/A and its CI
  check               'kcross check' at +5% (--max-regression) on each round's two runs,
                      all benchmarks together, with and without the noise

  Each rate comes with its exact binomial 95% CI next to the design's own level
  (5%; the blocks' level is 1 - their CI's achieved coverage).

--plant PCT: run A' with a slowdown of PCT percent planted in the benchmark's loop
  (KCROSS_TEST_DELAY, recorded in the runs' fingerprints; one benchmark only): the
  rates are then each design's power, and check's failures its detections.

the runs are stored (source aa; --no-store: not): they are this machine's history.  The
  A' runs of --plant are another configuration (their fingerprint records the plant) and
  never count as its noise.

cost: 2 x --rounds runs of --processes processes; each process takes about its warm-up
  plus samples x 2 ms per benchmark: about a minute for one benchmark by default."""


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"must be a percentage above 0 and at most 100, "
                                         f"not {text!r}")
    return value


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("bench", metavar="BENCH",
                   help="NAME, SUITE/NAME or a GLOB (fnmatch) of the benchmarks to run")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the runs' environment (repeatable)")
    p.add_argument("--rounds", type=number(AA_MIN_BLOCK, 10_000, whole=True), default=AA_ROUNDS,
                   metavar="N", help=f"rounds of two runs, at least one block's (--block-rounds) "
                                     f"(default {AA_ROUNDS})")
    p.add_argument("--processes", type=number(2, PROCESSES_RANGE[1], whole=True),
                   default=DEFAULT_PROCESSES, metavar="K",
                   help=f"harness processes per run, 2 or more (default {DEFAULT_PROCESSES}, "
                        "as 'kcross run')")
    p.add_argument("--samples", type=number(*SAMPLES_RANGE, whole=True),
                   default=PROCESS_SAMPLES, metavar="S",
                   help=f"samples per benchmark and process (default {PROCESS_SAMPLES})")
    p.add_argument("--warmup-ms", type=number(*WARMUP_MS_RANGE, whole=False),
                   default=PROCESS_WARMUP_MS, metavar="MS",
                   help=f"warm-up of each process (default {PROCESS_WARMUP_MS} ms)")
    p.add_argument("--min-batch-ms", type=number(*MIN_BATCH_MS_RANGE, whole=False),
                   metavar="MS", help="shortest timed batch (default: the harness's, 2 ms)")
    p.add_argument("--cpu", type=number(*CPU_RANGE, whole=True), metavar="C",
                   help="pin every run to CPU C (default: the highest CPU kcross may run on)")
    p.add_argument("--block-rounds", type=number(AA_MIN_BLOCK, 1000, whole=True),
                   default=AA_BLOCK_ROUNDS, metavar="R",
                   help=f"rounds per block of the blocks design, at least {AA_MIN_BLOCK} "
                        f"(default {AA_BLOCK_ROUNDS})")
    p.add_argument("--plant", type=_percent, metavar="PCT",
                   help="plant a slowdown of PCT percent in A' (one benchmark): measure power")
    p.add_argument("--max-regression", type=_percent, default=5.0, metavar="PCT",
                   help="the check design's tolerance (default 5, as 'kcross check')")
    p.add_argument("--no-store", action="store_true", help="do not store the runs")
    readiness_option(p, "the rounds")


def _benchmarks(command: list[str], glob: str, env: dict[str, str]) -> list[str]:
    """The benchmarks GLOB names that can run here; one line naming close ones if none."""
    from ..run import harness
    from ..series import benchmark_hint, matches

    records = harness.collect(command, ["list", "--json"], env=env)
    names = [f"{r['suite']}/{r['name']}" for r in records]
    matched = [r for r, n in zip(records, names, strict=True) if matches(glob, n)]
    if not matched:
        hint = benchmark_hint(glob, names) or "see 'kcross list'"
        raise UserError(f"no benchmark matches {shown(glob)} ({hint})")
    available = [f"{r['suite']}/{r['name']}" for r in matched if r.get("available")]
    if not available:
        first = matched[0]
        raise UserError(f"{first['suite']}/{first['name']} cannot run here: "
                        f"{first.get('reason') or 'not available'}")
    return available


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..run import harness
    from ..store import stores
    from ..views.rounds import aa_table
    from ..views.table import terminal
    from ..views.text import counted, ratio

    with stop_signals_held():
        from ..rounds import aa
        from ..run.readiness import measuring_cpu, sysroot
        from ..stats import median

    command = harness.locate(args.harness)
    env = dict(os.environ)
    env.update(settings(args.env))
    harness.collect(command, ["sysinfo", "--json"], env=env)   # refuses a bad setting
    names = _benchmarks(command, args.bench, env)
    if args.plant is not None and len(names) != 1:
        raise UserError(f"--plant slows one benchmark; {args.bench!r} names {len(names)} "
                        f"({', '.join(names[:4])}{', ...' if len(names) > 4 else ''})")
    cpu = measuring_cpu(args.cpu, sysroot())
    options = aa.Options(bench=args.bench, processes=int(args.processes),
                         samples=int(args.samples), rounds=int(args.rounds),
                         block_rounds=int(args.block_rounds), cpu=cpu,
                         warmup_ms=args.warmup_ms, min_batch_ms=args.min_batch_ms,
                         plant=None if args.plant is None else args.plant / 100,
                         tolerance=args.max_regression / 100)
    aa.check_options(options)
    planted_ns: dict[str, float] = {}

    def planted(first: dict[str, Any]) -> dict[str, str]:
        name = names[0]
        ns = median(first[name].samples) * (options.plant or 0.0)
        planted_ns[name] = ns
        line(err, f"planting {ns:.3f} ns per operation in {name} for A' "
                  f"({args.plant:g}% of A's first median)")
        return {**env, "KCROSS_TEST_DELAY": f"{name}:{ns:.6f}"}

    readiness_line(err, args)
    copies = "A and A', A' with the plant" if args.plant else "A and A'"
    line(err, f"A/A: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''} "
              f"({counted(len(names), 'benchmark')}) on CPU {cpu}: {options.rounds} rounds of "
              f"two separate runs ({copies}), each {options.processes} processes x "
              f"{options.samples} samples")

    def show(p: Any) -> None:
        parts = []
        for n in names[:2]:
            a, b = median(p.a.series[n].samples), median(p.b.series[n].samples)
            parts.append(f"{n} A'/A {ratio(b / a)}")
        line(err, f"round {p.number}/{options.rounds} ({p.first} first; {p.a.run}, {p.b.run}): "
                  + "; ".join(parts))

    with stores(args.db) as opened:
        result = aa.run(command, options, store=None if args.no_store else opened.writing,
                        env_a=env, planted=planted if args.plant else None, on_round=show)
    result.planted_ns = planted_ns
    if args.json:
        write_json(aa.result_json(result))
    else:
        out.print(terminal(aa_table(result)))
    return 0
