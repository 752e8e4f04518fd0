"""What ``kcross ab``, ``aa`` and ``crosscheck`` share: their run options and sides, and
their one-line progress (a round on stderr as it finishes)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import UserError, shown
from ..run.defaults import CPU_RANGE, MIN_BATCH_MS_RANGE, SAMPLES_RANGE, WARMUP_MS_RANGE
from ..views.lines import say
from .options import number

if TYPE_CHECKING:
    from rich.console import Console

    from ..rounds.ab import Arm, Ready

ROUNDS_RANGE = (6, 10_000)  # 6: the fewest whose per-round ratios give a 95% CI of their median


def run_options(p: argparse.ArgumentParser, rounds: int, samples: int, what: str) -> None:
    p.add_argument("--rounds", type=number(*ROUNDS_RANGE, whole=True), default=rounds,
                   metavar="N", help=f"{what}, {ROUNDS_RANGE[0]} to {ROUNDS_RANGE[1]} "
                   f"(default {rounds})")
    p.add_argument("--samples", type=number(*SAMPLES_RANGE, whole=True), default=samples,
                   metavar="S", help=f"samples per run (default {samples})")
    p.add_argument("--cpu", type=number(*CPU_RANGE, whole=True), metavar="C",
                   help="pin every run to CPU C (default: the highest CPU kcross may run on)")
    p.add_argument("--warmup-ms", type=number(*WARMUP_MS_RANGE, whole=False), metavar="MS",
                   help="warm-up of each run (default: the harness's, 200 ms)")
    p.add_argument("--min-batch-ms", type=number(*MIN_BATCH_MS_RANGE, whole=False),
                   metavar="MS", help="shortest timed batch (default: the harness's, 2 ms)")


def settings(texts: list[str]) -> tuple[tuple[str, str], ...]:
    from ..rounds.ab import parse_setting

    found: dict[str, str] = {}
    for text in texts:
        name, value = parse_setting(text)
        if name in found and found[name] != value:
            raise UserError(f"{name} given twice for one side ({name}={found[name]} and "
                            f"{text})")
        found[name] = value
    return tuple(found.items())


def make_side(label: str, bench: str, settings: tuple[tuple[str, str], ...],
          harness_option: str | None) -> Arm:
    from ..rounds.ab import Arm
    from ..run import harness

    command = harness.locate(harness_option)
    return Arm(label=label, bench=bench, harness=tuple(command), harness_shown=command[-1],
                settings=settings)


def check_known(*sides: Arm) -> None:
    """Each side's BENCH names a benchmark its harness has, or one line saying it is unknown
    (with the closest names), before any other check: ``kcross ab nosuch`` is about the
    name, not about A and B being the same."""
    from ..run import harness
    from ..series import benchmark_hint, matches

    checked: set[tuple[str, tuple[str, ...]]] = set()
    for side in sides:
        if (side.bench, side.harness) in checked:
            continue
        checked.add((side.bench, side.harness))
        names = [f"{r.get('suite')}/{r.get('name')}"
                 for r in harness.collect(side.harness, ["list", "--json"])
                 if r.get("type") == "bench"]
        if not any(matches(side.bench, name) for name in names):
            where = f"{side.where}: " if len({s.bench for s in sides}) > 1 else ""
            hint = benchmark_hint(side.bench, names) or "see 'kcross list'"
            raise UserError(f"{where}unknown benchmark {shown(side.bench)} ({hint})")


def harness_options(args: argparse.Namespace) -> Any:
    from ..rounds.ab import RunOptions
    from ..run.readiness import measuring_cpu, sysroot

    return RunOptions(samples=int(args.samples), cpu=measuring_cpu(args.cpu, sysroot()),
                      warmup_ms=args.warmup_ms, min_batch_ms=args.min_batch_ms)


def describe(ready: Ready) -> str:
    settings = f" with {ready.side.settings_text}" if ready.side.settings else ""
    return f"{ready.bench}{settings}"


def line(console: Console, text: str, style: str = "") -> None:
    """One line of text, never wrapped (a round's progress, a reading): grep-able in a log."""
    say(console, text, style)


def readiness_line(err: Console, args: argparse.Namespace) -> None:
    """Unless ``--no-readiness``: the line naming what is not tuned for measuring
    (kcross.run.readiness.not_tuned, as ``kcross run`` prints it), before the first
    round; it never stops the rounds."""
    if args.no_readiness:
        return
    from ..run.readiness import not_tuned

    notice = not_tuned(args.cpu)
    if notice is not None:
        line(err, notice, "yellow")


def write_json(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")



