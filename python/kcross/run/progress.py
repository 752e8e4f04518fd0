"""Progress display for a live run.

The ETA starts from the plan record (warm-up plus samples times the minimum
batch time, per benchmark) because no benchmark has finished yet when the
user most wants it, and then switches to the measured time per benchmark.
On a terminal it is a rich progress bar on stderr; otherwise (logs, CI) at
most one line per benchmark: a run of one process, a line per finished
benchmark (its median); a run of several, a line per finished process (what
it measured, what is left), fewer where the processes outnumber the
benchmarks.  The lines say what the records say, nothing of the clock: a log
of two runs of one harness reads alike.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from ..stats import StatsError, summarize_record
from ..views.lines import say
from ..views.text import counted, in_unit


def plan_estimate_s(plan: dict[str, Any]) -> float:
    """Lower-bound seconds per benchmark implied by the plan (calibration not included)."""
    return (float(plan["warmup_ms"]) + int(plan["samples"]) * float(plan["min_batch_ms"])) / 1000


class _EtaColumn(ProgressColumn):
    """Remaining time = benchmarks left × seconds per benchmark − time into the current one."""

    def render(self, task: Task) -> Text:
        per_bench = task.fields.get("per_bench_s")
        if per_bench is None or task.total is None:
            return Text("ETA ?", style="progress.remaining")
        left = (task.total - task.completed) * per_bench \
            - (time.monotonic() - task.fields["last_done"])
        if task.finished:
            left = 0.0
        minutes, seconds = divmod(max(0, int(left + 0.5)), 60)
        return Text(f"ETA {minutes}:{seconds:02d}", style="progress.remaining")


class RunProgress:
    """Shows how far a run is; call :meth:`start` with the plan, :meth:`advance` per result."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._total = 0
        self._done = 0
        self._plan_per_bench = 0.0
        self._measured: list[float] = []
        self._benchmarks = 0
        self._processes = 1
        self._process: dict[int, list[dict[str, Any]]] = {}   # a process's results so far
        self._said = 0                                         # process lines written

    def start(self, plan: dict[str, Any]) -> None:
        processes = int(plan.get("processes", 1))
        self._benchmarks, self._processes = len(plan["benchmarks"]), processes
        self._total = self._benchmarks * processes
        self._plan_per_bench = plan_estimate_s(plan)
        # Interleaved runs write every result at the end: say so, since the
        # bar cannot move before then.
        how = "interleaved, results at the end" if plan.get("interleave") else "one after another"
        if not self.live:
            each = f"{plan['samples']} samples each" + \
                (f" in each of {processes} processes" if processes > 1 else "")
            say(self.console, f"running {counted(self._benchmarks, 'benchmark')}, {each} "
                              f"({how}), ≥{self._total * self._plan_per_bench:.1f} s")
            return
        if processes > 1:
            how += f"; {processes} processes"
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(), _EtaColumn(),
                                  console=self.console, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(f"measuring ({how})", total=self._total,
                                             per_bench_s=self._plan_per_bench,
                                             last_done=time.monotonic())

    def advance(self, record: dict[str, Any]) -> None:
        self._done += 1
        label = f"{record['suite']}/{record['name']}"
        if "process" in record:
            label += f" (process {record['process']})"
        if record["status"] == "ok" and record.get("elapsed_s"):
            self._measured.append(float(record["elapsed_s"]))
        if self._progress is not None and self._task is not None:
            per_bench = (sum(self._measured) / len(self._measured)) if self._measured \
                else self._plan_per_bench
            self._progress.update(self._task, advance=1, description=label,
                                  per_bench_s=per_bench, last_done=time.monotonic())
            return
        if self._processes > 1:
            self._process_line(record)
            return
        if record["status"] != "ok":
            outcome = f"{record['status']}: {record['reason']}"
        else:
            try:
                unit = record.get("unit") or "ns/op"
                outcome = f"{in_unit(summarize_record(record).median, unit)} {unit}"
            except StatsError as exc:
                outcome = str(exc)
        say(self.console, f"[{self._done}/{self._total}] {label}: {outcome}")

    def _process_line(self, record: dict[str, Any]) -> None:
        """A run of several processes: a line when a process has measured every benchmark,
        as many lines as the run has benchmarks at most (spread over the processes)."""
        process = int(record.get("process", 0))
        results = self._process.setdefault(process, [])
        results.append(record)
        if len(results) < self._benchmarks:
            return
        finished = process + 1           # the processes run one after another
        lines = min(self._processes, self._benchmarks)     # the lines the run may write
        if finished * lines // self._processes <= self._said:
            return
        self._said += 1
        count = {s: sum(r["status"] == s for r in results) for s in ("ok", "skipped", "failed")}
        found = ", ".join(f"{n} {s}" for s, n in count.items() if n)
        failed = [f"{r['suite']}/{r['name']}" for r in results if r["status"] == "failed"]
        if failed:
            found += f" ({', '.join(failed[:3])}{', ...' if len(failed) > 3 else ''})"
        spent = sum(float(r.get("elapsed_s") or 0.0) for r in results)
        left = spent * (self._processes - finished)
        after = f"; about {left:.{0 if left >= 10 else 1}f} s to go" if left else ""
        say(self.console, f"[process {finished}/{self._processes}] "
                          f"{counted(len(results), 'benchmark')}: {found} in {spent:.1f} s{after}")

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
