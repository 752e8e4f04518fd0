"""``kcross aa``: a benchmark against itself; how often each design calls a difference
that is not there (the false-positive rate on this machine)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.console import Console

from ._rounds import (
    ROUNDS_RANGE,
    check_known,
    ci_text,
    describe,
    fmt,
    harness_options,
    line,
    make_side,
    run_options,
    settings,
    write_json,
)
from .options import Common, number

if TYPE_CHECKING:
    from ..ab import AAResult, FalsePositives

AA_ROUNDS, AA_SAMPLES, AA_BLOCK_ROUNDS = 60, 31, 6

HELP = "a benchmark against itself: the false-positive rate here"
DESCRIPTION = ("Run one benchmark against itself in interleaved rounds and report how often a "
               "difference is called: the false-positive rate on this machine of 'kcross ab' "
               "(blocks of rounds) and of Mann-Whitney U on two separate runs (as 'kcross "
               "compare').")
PARENTS = ("harness", "json")
EPILOG = f"""\
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


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("bench", metavar="BENCH", help="NAME or SUITE/NAME")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the runs' environment (repeatable)")
    run_options(p, AA_ROUNDS, AA_SAMPLES, "rounds, two runs each")
    p.add_argument("--block-rounds", type=number(ROUNDS_RANGE[0], 1000, whole=True),
                   default=AA_BLOCK_ROUNDS, metavar="R",
                   help=f"rounds per block of the interleaved design, at least "
                        f"{ROUNDS_RANGE[0]} (default {AA_BLOCK_ROUNDS})")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import harness

    with harness.stop_signals_held():
        from .. import ab

    rounds, block_rounds = int(args.rounds), int(args.block_rounds)
    ab.check_aa_samples(int(args.samples))
    ab.check_aa_rounds(rounds, block_rounds)
    side = make_side(args.bench, args.bench, settings(args.env), args.harness)
    check_known(side)
    options = harness_options(args)
    ready = ab.prepare(side)
    blocks = rounds // block_rounds
    line(err, (f"A/A: {describe(ready)} against itself, {rounds} rounds of two runs "
                f"(A and A', {options.samples} samples each) on CPU {options.cpu}; "
                f"blocks of {block_rounds} rounds"))

    def show_round(r: ab.AARound) -> None:
        unit = r.a.unit
        judged = (f"not judged: {r.error}" if r.verdict is None else
                  f"p={r.verdict.p:.3g}, " + ("DIFFERENCE" if r.called else "no difference"))
        line(err, (f"round {r.number}/{rounds} ({r.first} first): A {fmt(r.a.median, unit)}, "
                    f"A' {fmt(r.a_prime.median, unit)} {unit}, A'/A {r.ratio:.3f}; "
                    f"separate runs (Mann-Whitney U): {judged}"))

    def show_block(b: ab.Block) -> None:
        p = b.paired
        line(err, (f"block {b.number}/{blocks} (rounds {b.first_round}-{b.last_round}): "
                    f"A'/A {p.median:.3f}, {ci_text(p.ci.low, p.ci.high, p.ci.confidence)}: "
                    + ("DIFFERENCE (the CI excludes 1)" if b.called else "no difference")))

    result = ab.run_aa(ready, rounds, options, block_rounds=block_rounds, on_round=show_round,
                       on_block=show_block)
    if args.json:
        write_json(ab.aa_json(result))
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
    line(out, (f"A/A: {describe(result.ready)} against itself on CPU {result.options.cpu}: "
                f"{n} rounds, each one run of copy A and one of copy A' ({result.options.samples} "
                "samples each), alternating which runs first; both copies measure the same "
                "thing, so every difference called is a false positive"))
    leftover = (f"; the last {result.leftover} round(s) make no full block"
                if result.leftover else "")
    line(out, (f"1. interleaved rounds, judged as 'kcross ab' judges (decide with this): "
                f"{one.units} of {result.block_rounds} rounds, each called "
                f"different when the CI of its median ratio A'/A excludes 1: {_rate_text(one)}; "
                f"the block test's level {percent(one.level)} ({percent(1 - one.level)} CI "
                f"coverage; nominal {percent(one.nominal)}){leftover}"))
    line(out, f"   reading: {one.reading}", "yellow" if one.low > one.level else "")
    unjudged = n - two.judged
    line(out, (f"2. separate runs, judged as 'kcross compare' judges two stored runs "
                f"(Mann-Whitney U on their samples, two-sided, alpha {two.level:g}): "
                f"{_rate_text(two)}; nominal {percent(two.level)}"
                + (f"; {unjudged} pair(s) could not be judged" if unjudged else "")))
    line(out, f"   reading: {two.reading}", "yellow" if two.low > two.level else "")
    drift = ("the second run is systematically "
             + ("faster" if o.median < 1 else "slower")
             + " (the CI excludes 1); alternating which copy goes first cancels it in 1."
             if o.significant else "no order effect shown (the CI includes 1)")
    line(out, (f"order: second run / first run, median of {o.n} rounds {o.median:.3f}, "
                f"{ci_text(o.ci.low, o.ci.high, o.ci.confidence)}: {drift}"))


