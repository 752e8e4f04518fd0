"""``kcross crosscheck``: this harness against ``perf bench``, alternated, with the ratio."""

from __future__ import annotations

import argparse
import functools
from typing import TYPE_CHECKING

from ..errors import stop_signals_held
from ..run.defaults import CPU_RANGE, SAMPLES_RANGE
from ._rounds import (
    ROUNDS_RANGE,
    line,
    write_json,
)
from .options import Common, number

if TYPE_CHECKING:
    from rich.console import Console


CROSSCHECK_ROUNDS = 6

HELP = "this harness against 'perf bench', alternated, with the ratio"
DESCRIPTION = ("Run kcross-harness and 'perf bench' in alternation on one CPU and report each "
               "side's median and the ratio kcross/perf.")
PARENTS = ("harness", "json")
EPILOG = f"""\
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



def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("--check", choices=("syscall", "pipe", "both"), default="both",
                   help="which check (default both)")
    p.add_argument("--threaded", action="store_true",
                   help="pipe check between threads (perf -T, ctxsw/pipe-threads-same-cpu)")
    p.add_argument("--rounds", type=number(1, ROUNDS_RANGE[1], whole=True),
                   default=CROSSCHECK_ROUNDS, metavar="N",
                   help=f"rounds per check (default {CROSSCHECK_ROUNDS}; 6 or more give a CI)")
    p.add_argument("--cpu", type=number(*CPU_RANGE, whole=True), metavar="C",
                   help="the CPU both sides run on (default: the highest CPU kcross may run on)")
    p.add_argument("--loops", type=number(1, 10**9, whole=True), default=100_000,
                   metavar="N", help="perf bench sched pipe's round trips per run (-l; "
                   "default 100000)")
    p.add_argument("--syscall-loops", type=number(1, 10**10, whole=True), metavar="N",
                   help="perf bench syscall basic's calls per run (-l; default perf's own, "
                   "10 million)")
    p.add_argument("--samples", type=number(*SAMPLES_RANGE, whole=True), metavar="S",
                   help="the harness's samples per run (default the harness's, 201)")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..run import harness
    from ..views.rounds import crosscheck_table
    from ..views.table import terminal
    from ..views.text import in_unit, ratio

    with stop_signals_held():
        from ..rounds import ab
        from ..rounds import crosscheck as cc
        from ..run import readiness

    cpu = readiness.measuring_cpu(args.cpu, readiness.sysroot())  # the user's mistake first
    command = harness.locate(args.harness)
    cc.require_tools()
    samples = int(args.samples) if args.samples is not None else None
    chosen = cc.checks(args.check, threaded=args.threaded, pipe_loops=int(args.loops),
                       syscall_loops=int(args.syscall_loops) if args.syscall_loops else None)
    for check in chosen:  # each benchmark can run here, before anything is measured
        ab.prepare(ab.Arm(label="crosscheck", bench=check.bench, harness=tuple(command),
                           harness_shown=command[-1]))
    results = []
    for check in chosen:
        line(err, (f"{check.name}: {check.perf_label} against {check.kcross_label}, "
                    f"{args.rounds} rounds on CPU {cpu}"))

        def show(r: cc.Round) -> None:
            line(err, (f"round {r.number}/{args.rounds} ({r.first} first): perf "
                        f"{in_unit(r.perf_ns, 'ns/op')}, kcross {in_unit(r.kcross_ns, 'ns/op')} "
                        f"ns/op, kcross/perf {ratio(r.ratio)}"))

        results.append(cc.run_check(
            check, int(args.rounds), cpu,
            perf=functools.partial(cc.perf_ns, check, cpu),
            kcross=functools.partial(cc.kcross_ns, check, command, cpu, samples),
            on_round=show))
    if args.json:
        for result in results:
            write_json(cc.result_json(result))
        return 0
    pipe = any(r.check.name == "pipe" for r in results)
    out.print(terminal(crosscheck_table(results, cc.PERF_EVENTS_CAVEAT if pipe else None)))
    return 0
