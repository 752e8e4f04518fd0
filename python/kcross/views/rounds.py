"""The views of the interleaved rounds: ``kcross ab`` (two sides, the per-round ratio),
``kcross aa`` (each design's rate of differences called) and ``kcross crosscheck``
(this harness beside ``perf bench``).  Their figures are kcross.rounds's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..stats import CONFIDENCE
from .table import LEFT, RIGHT, Column, Table
from .text import NONE, counted, in_unit, interval, ratio, share
from .verdict import paired_warnings, paired_words

if TYPE_CHECKING:  # the results' types, defined with their computation
    from ..rounds.aa import Rate, Result
    from ..rounds.ab import ABResult
    from ..rounds.crosscheck import CheckResult
    from ..stats import Paired


def ratio_ci(p: Paired) -> str:
    """The CI of a median of per-round ratios, with its achieved coverage (below 95%
    when dependent rounds count as too few for a 95% one)."""
    level = "95% CI" if p.ci.confidence >= CONFIDENCE else "CI"
    return (f"{level} {interval(ratio(p.ci.low), ratio(p.ci.high))} "
            f"(coverage {share(p.ci.confidence)})")


def ab_table(result: ABResult) -> Table:
    """Each side's benchmark, settings, mechanism, harness and median over the rounds; the
    ratio B/A with its CI and verdict, and how the figures were made, as notes."""
    unit = result.unit
    table = Table([*(Column(c) for c in ("side", "benchmark", "settings", "syscall mechanism",
                                         "harness")), Column(f"median {unit}", RIGHT)],
                  title=f"A/B: {len(result.rounds)} rounds, {result.options.samples} samples "
                        f"per run, CPU {result.options.cpu}")
    for label, ready in (("A", result.a), ("B", result.b)):
        table.add(label, ready.bench, ready.side.settings_text or NONE,
                  ", ".join(result.mechanisms(label)),
                  f"{ready.side.harness_shown} {ready.version}",
                  in_unit(result.median(label), unit))
    p = result.paired
    figure = ("raw medians (no empty-loop subtraction)" if result.raw else
              "medians by kcross's overhead rule (as 'kcross show')")
    table.notes = [f"B/A {ratio(p.median)}: median of {p.n} per-round ratios, {ratio_ci(p)}: "
                   f"{paired_words(result.verdict)}",
                   f"each round: one run of each side, alternating which runs first; its "
                   f"figures are the runs' {figure}; the table's median is over the rounds",
                   *(f"warning: {w}" for w in paired_warnings(result.verdict)),
                   *(f"note: {note}" for note in result.notes)]
    return table


def _rate_cells(r: Rate) -> list[str]:
    if not r.judged:
        return [NONE, "0", NONE, NONE]
    return [str(r.called), str(r.judged), share(r.rate), interval(share(r.low), share(r.high))]


def aa_table(result: Result) -> Table:
    """Each design's rate of differences called (or, with a plant, found) with its exact
    binomial CI beside its own level; the check design's rounds and the run-to-run noise
    the runs showed, as notes."""
    o = result.options
    word = "detected" if result.planted else "called"
    what = (f"power against a planted +{o.plant * 100:g}%" if result.planted and o.plant
            else "false positives (both runs measure the same thing)")
    table = Table([Column("design", LEFT),
                   *(Column(c, RIGHT) for c in (word, "of", "rate", "95% CI (exact binomial)",
                                                "level"))],
                  title=f"{counted(len(result.names), 'benchmark')} x "
                        f"{len(result.rounds)} rounds, {o.processes} processes x {o.samples} "
                        f"samples per run: {what}")
    for design, r in result.rates.items():
        table.add(result.described(design), *_rate_cells(r), share(r.level))
    for gate, r in result.gates.items():
        check = f"kcross check at +{o.tolerance * 100:g}% " + (
            "with the run-to-run noise" if result.with_noise(gate) else
            "without it (tolerance alone)")
        verdict = "failed" if not result.planted else "failed (detected)"
        if r.judged:
            table.notes.append(f"{check}: {verdict} {r.called} of {r.judged} round pairs "
                               f"({share(r.rate)}, 95% CI {interval(share(r.low), share(r.high))}"
                               f"); passed {r.judged - r.called}")
    blocks = result.blocks
    if blocks is not None and blocks.judged:
        table.notes.append(f"blocks whose rounds scattered (the warning 'kcross ab' prints): "
                           f"{result.scattered_blocks} of {blocks.judged}; whose rounds "
                           f"counted as fewer (dependent): {result.dependent_blocks}")
    if result.noise:
        shown = sorted(result.noise.items(), key=lambda kv: -kv[1].cv)
        table.notes.append("run-to-run noise here (beyond each run's own noise, from these "
                           "runs): " + ", ".join(f"{n} {share(v.cv, 2)}" for n, v in shown[:6])
                           + (f" and {len(shown) - 6} more" if len(shown) > 6 else ""))
    if result.stored:
        table.notes.append(f"stored as {result.stored[0]} to {result.stored[-1]} (source aa): "
                           "this machine's history for these benchmarks")
    return table


def crosscheck_table(results: Sequence[CheckResult], caveat: str | None) -> Table:
    """Each check: perf's figure and kcross's (medians over the rounds, ns/op) and the ratio
    kcross/perf; the per-round ratios' median with its CI where there are enough rounds."""
    table = Table([Column("check"), Column("rounds", RIGHT), Column("perf bench"),
                   Column("ns/op", RIGHT), Column("kcross (raw)"), Column("ns/op", RIGHT),
                   Column("kcross/perf", RIGHT), Column("per-round kcross/perf", RIGHT)],
                  title="kcross against perf bench: medians over the rounds, on one CPU")
    for r in results:
        p = r.paired
        table.add(f"{r.check.name} (CPU {r.cpu})", str(len(r.rounds)), r.check.perf_label,
                  in_unit(r.perf_median, "ns/op"), r.check.kcross_label,
                  in_unit(r.kcross_median, "ns/op"), ratio(r.ratio),
                  NONE if p is None else f"{ratio(p.median)} {ratio_ci(p)}")
    if caveat:
        table.notes.append(f"note: {caveat}")
    return table
