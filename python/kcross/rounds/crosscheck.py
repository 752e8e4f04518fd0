"""``kcross crosscheck``: kcross-harness against ``perf bench``, alternated and pinned.

Two checks:

- ``syscall``: perf's getppid loop (``perf bench syscall basic``) against the
  harness's ``syscall/getppid-glibc`` (both call getppid through glibc);
- ``pipe``: perf's pipe round trip between two processes (``perf bench sched
  pipe``; threaded: its ``-T``, two threads) against the harness's
  ``ctxsw/pipe-procs-same-cpu`` (``ctxsw/pipe-threads-same-cpu``).  Both
  programs time a one-byte round trip over two pipes, two context switches,
  with both tasks on the one CPU: perf's under ``taskset``, the harness's
  pinned by ``--cpu``.

Each check runs ROUNDS times, the two programs in alternation (the first to
run swaps every round), so the machine's slow drifts spread over both instead
of biasing whichever always ran second.  The figures are each side's median
ns/op over the rounds and their ratio kcross/perf; the kcross figure of a
round is the median of the harness's *raw* samples (no empty-loop
subtraction), as perf's loops include their own loop.  With enough rounds the
per-round ratios also get their distribution-free CI
(:func:`kcross.stats.paired_ratio`).

Perf events: any per-task perf event open on the system while a check runs (a
``perf record`` or ``perf stat`` elsewhere, a profiler) slows every context
switch through perf's scheduler hooks (``perf bench sched pipe`` 4.40 -> 4.69
µs on the project's VM).  perf bench opens none, and the harness's ``ctxsw``
suite closes its own before timing, so both sides run without them: keep other
perf users off the machine during a crosscheck.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import stats
from ..environment import measured
from ..errors import EXIT_BROKEN, HarnessError, KcrossError, UserError
from ..run import harness

PERF_PACKAGE = "linux-perf"  # Debian's package of the perf tool
PERF_EVENTS_CAVEAT = (
    "perf events: any per-task perf event open meanwhile (perf record/stat, a profiler) "
    "slows every context switch through perf's scheduler hooks (sched pipe 4.40 -> 4.69 us "
    "on the project's VM); perf bench opens none and the ctxsw suite closes the harness's "
    "own, so keep other perf users off the machine during a crosscheck")
DEFAULT_PIPE_LOOPS = 100_000
_USECS = re.compile(r"([0-9]+(?:\.[0-9]+)?) usecs/op")


class PerfError(KcrossError):
    """``perf`` (or ``taskset``) failed or wrote something unreadable: the measuring
    program failed, exit status 3 as for the harness."""

    exit_code = EXIT_BROKEN


@dataclass(frozen=True)
class Check:
    name: str                     # "syscall" or "pipe"
    perf_args: tuple[str, ...]    # after "perf bench"
    bench: str                    # the harness's SUITE/NAME

    @property
    def perf_label(self) -> str:
        return f"perf bench {' '.join(self.perf_args)}"

    @property
    def kcross_label(self) -> str:
        return f"kcross {self.bench}"


def checks(which: str, *, threaded: bool = False, pipe_loops: int = DEFAULT_PIPE_LOOPS,
           syscall_loops: int | None = None) -> list[Check]:
    """The checks ``--check`` names (syscall, pipe or both), in that order."""
    found = []
    if which in ("syscall", "both"):
        loops = ("-l", str(syscall_loops)) if syscall_loops is not None else ()
        found.append(Check("syscall", ("syscall", "basic", *loops), "syscall/getppid-glibc"))
    if which in ("pipe", "both"):
        bench = "ctxsw/pipe-threads-same-cpu" if threaded else "ctxsw/pipe-procs-same-cpu"
        found.append(Check("pipe", ("sched", "pipe", "-l", str(pipe_loops),
                                    *(("-T",) if threaded else ())), bench))
    return found


def require_tools() -> None:
    """perf and taskset must be there before anything runs: one line naming the package."""
    if not shutil.which("perf"):
        raise UserError(f"perf not found: nothing to compare with (Debian: apt-get install "
                        f"{PERF_PACKAGE})")
    if not shutil.which("taskset"):
        raise UserError("taskset not found: it pins perf's processes (Debian: apt-get install "
                        "util-linux)")


def _run(cmd: Sequence[str]) -> str:
    """stdout of ``cmd``; a failure is one line naming the command and its last error line."""
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL, env=measured())  # perf: as the harness
    except OSError as exc:
        raise PerfError(f"cannot run {cmd[0]}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise PerfError(f"'{' '.join(cmd)}' exited {proc.returncode}: "
                        f"{lines[-1] if lines else 'no output'}")
    return proc.stdout


def perf_ns(check: Check, cpu: int) -> float:
    """One ``perf bench`` run pinned to ``cpu``: its ns/op (perf prints usecs/op)."""
    out = _run(["taskset", "-c", str(cpu), "perf", "bench", *check.perf_args])
    found = _USECS.search(out)
    if not found:
        last = out.strip().splitlines()[-1:] or ["no output"]
        raise PerfError(f"cannot read the usecs/op of '{check.perf_label}' (last line: "
                        f"{last[0].strip()!r})")
    ns = float(found.group(1)) * 1000.0
    if ns <= 0:
        raise PerfError(f"'{check.perf_label}' reported {found.group(0)}: no ratio to take")
    return ns


def kcross_ns(check: Check, command: Sequence[str], cpu: int,
              samples: int | None = None) -> float:
    """One harness run of the check's benchmark pinned to ``cpu``: its raw median ns/op."""
    args = ["run", "--bench", check.bench, "--cpu", str(cpu), "--json"]
    if samples is not None:
        args[3:3] = ["--samples", str(samples)]
    records = harness.collect(command, args)
    results = [r for r in records if r.get("type") == "result"]
    if len(results) != 1:
        raise HarnessError(f"the harness wrote {len(results)} result(s) for {check.bench}, "
                           "expected one")
    rec = results[0]
    if rec.get("status") != "ok":
        raise UserError(f"{check.bench} {rec.get('status')}: {rec.get('reason')}")
    try:
        return stats.median(stats.raw_samples(rec))  # raw, as perf's loop is
    except stats.StatsError as exc:
        raise HarnessError(f"{check.bench}: {exc}") from None


@dataclass(frozen=True)
class Round:
    number: int
    first: str        # "perf" or "kcross"
    perf_ns: float
    kcross_ns: float

    @property
    def ratio(self) -> float:
        return self.kcross_ns / self.perf_ns


@dataclass(frozen=True)
class CheckResult:
    check: Check
    cpu: int
    rounds: tuple[Round, ...]
    perf_median: float
    kcross_median: float
    paired: stats.Paired | None    # None with fewer rounds than a CI needs

    @property
    def ratio(self) -> float:
        """kcross/perf, of the two medians over the rounds (the script's figure)."""
        return self.kcross_median / self.perf_median


def run_check(check: Check, rounds: int, cpu: int, perf: Callable[[], float],
              kcross: Callable[[], float],
              on_round: Callable[[Round], None] | None = None) -> CheckResult:
    """``rounds`` rounds of perf and kcross in alternation (kcross.rounds.engine: perf first in odd
    rounds)."""
    from .engine import interleave

    done: list[Round] = []

    def record(r: Any) -> None:
        found = Round(r.number, r.first, r["perf"], r["kcross"])
        done.append(found)
        if on_round is not None:
            on_round(found)

    interleave([("perf", perf), ("kcross", kcross)], rounds, on_round=record)
    perf_values = [r.perf_ns for r in done]
    kcross_values = [r.kcross_ns for r in done]
    paired = None
    if rounds >= stats.min_samples_for():
        from ..judge.verdict import judge_paired

        paired = judge_paired(perf_values, kcross_values, "ns/op").paired
    return CheckResult(check=check, cpu=cpu, rounds=tuple(done),
                       perf_median=stats.median(perf_values),
                       kcross_median=stats.median(kcross_values), paired=paired)


def result_json(result: CheckResult) -> dict[str, Any]:
    p = result.paired
    return {
        "type": "crosscheck", "check": result.check.name, "cpu": result.cpu,
        "perf": result.check.perf_label, "kcross": result.check.bench, "unit": "ns/op",
        "rounds": [{"round": r.number, "first": r.first, "perf": r.perf_ns,
                    "kcross": r.kcross_ns, "ratio": r.ratio} for r in result.rounds],
        "perf_median": result.perf_median, "kcross_median": result.kcross_median,
        "ratio": result.ratio,
        "paired_ratio": p.median if p else None, "paired_ci_low": p.ci.low if p else None,
        "paired_ci_high": p.ci.high if p else None,
        "paired_ci_confidence": p.ci.confidence if p else None,
    }
