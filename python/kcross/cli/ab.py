"""``kcross ab``: two sides (benchmarks, settings, harnesses) in alternating rounds; the
median per-round ratio B/A with its CI.  The rounds are :mod:`kcross.rounds.ab`'s."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UserError, stop_signals_held
from ._rounds import (
    check_known,
    describe,
    harness_options,
    line,
    make_side,
    readiness_line,
    run_options,
    settings,
    write_json,
)
from .options import Common, readiness_option

if TYPE_CHECKING:
    from rich.console import Console


AB_ROUNDS, AB_SAMPLES = 10, 41

HELP = "interleaved A/B of two benchmarks, settings or harnesses"
DESCRIPTION = ("Run two sides in alternating rounds on one CPU and report the median per-round "
               "ratio B/A with its 95% CI.")
PARENTS = ("harness", "json")
EPILOG = f"""\
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
  Rounds that follow each other on one side of the median more than chance
  allows count as fewer (the CI widens to theirs); a warning names rounds that
  scatter far (a busy machine) and rounds counted as fewer.

settings are checked by the harness before anything runs (a value it refuses,
e.g. KCROSS_SYSCALL=scv on x86-64, is one line, exit 2); the syscall mechanism
each side's runs report is shown with the result."""


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
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
    run_options(p, AB_ROUNDS, AB_SAMPLES, "rounds")
    readiness_option(p, "the rounds")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..views.rounds import ab_table
    from ..views.table import terminal

    with stop_signals_held():  # numpy's threads leave the stop signals to this one
        from ..rounds import ab

    if len(args.benches) > 2:
        raise UserError(f"ab takes one or two benchmarks (A's, then B's), got "
                        f"{len(args.benches)}: {' '.join(args.benches)}")
    bench_a = args.benches[0]
    bench_b = args.benches[-1]
    side_a = make_side("A", bench_a, settings(args.env_a), args.harness_a or args.harness)
    side_b = make_side("B", bench_b, settings(args.env_b), args.harness_b or args.harness)
    check_known(side_a, side_b)
    ab.check_sides(side_a, side_b)
    options = harness_options(args)
    ready_a, ready_b = ab.prepare(side_a), ab.prepare(side_b)
    readiness_line(err, args)
    line(err, (f"A: {describe(ready_a)} (mechanism {ready_a.mechanism}), "
                f"B: {describe(ready_b)} (mechanism {ready_b.mechanism}); "
                f"{args.rounds} rounds of {options.samples} samples on CPU {options.cpu}"))

    from ..views.text import in_unit, ratio

    def show(r: ab.Round) -> None:
        unit = r.a.unit
        line(err, (f"round {r.number}/{args.rounds} ({r.first} first): "
                    f"A {in_unit(r.a.value(args.raw), unit)}, B {in_unit(r.b.value(args.raw), unit)} "
                    f"{unit}, B/A {ratio(r.ratio)}"))

    result = ab.run_ab(ready_a, ready_b, int(args.rounds), options, raw=args.raw, on_round=show)
    if args.json:
        write_json(ab.ab_json(result))
    else:
        out.print(terminal(ab_table(result)))
    return 0
