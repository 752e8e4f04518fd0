"""``kcross run``: drive the harness, store each result as it arrives, report.

Ctrl-C is handled by a signal handler rather than KeyboardInterrupt so that
it can never land in the middle of a database commit: the handler only asks
the harness to stop; the loop then sees the harness's output end, keeps what
was received and marks the run ``interrupted``.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType

from rich.console import Console

from . import render
from .errors import EXIT_INTERRUPTED, HarnessError, KcrossError, SchemaError, StoreError
from .harness import HarnessProcess
from .progress import RunProgress
from .schema import RunStream
from .store import Store


@dataclass(frozen=True)
class RunRequest:
    """What to run and how to report it."""

    harness: Sequence[str]
    harness_args: Sequence[str]
    command: Sequence[str]
    json_output: bool


def run(store: Store, request: RunRequest, out: Console, err: Console) -> int:
    """Run the benchmarks; return the exit status (0, or 130 when interrupted)."""
    stream = RunStream()
    run_id: int | None = None
    progress = RunProgress(err)
    with HarnessProcess(request.harness, ["run", "--json", *request.harness_args]) as proc:

        def on_sigint(_signum: int, _frame: FrameType | None) -> None:
            proc.interrupt()

        # A SIGINT ignored at startup (background job, nohup) stays ignored.
        previous = signal.getsignal(signal.SIGINT)
        if previous is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, on_sigint)
        try:
            for line in proc.records():
                try:
                    stream.add(line.record, line.where)
                except SchemaError as exc:
                    raise HarnessError(f"harness broke the stream order: {exc}") from None
                if request.json_output:
                    sys.stdout.write(line.text + "\n")
                    sys.stdout.flush()
                rtype = line.record["type"]
                if rtype == "plan":
                    assert stream.fingerprint is not None  # RunStream enforces the order
                    run_id = store.start_run(stream.fingerprint, line.record,
                                             command=request.command)
                    progress.start(line.record)
                elif rtype == "result":
                    assert run_id is not None
                    store.add_result(run_id, len(stream.results) - 1, line.record)
                    progress.advance(line.record)
            if not proc.interrupted and not stream.complete:
                raise HarnessError(f"harness stopped without an end record after "
                                   f"{len(stream.results)} result(s)")
        except KcrossError as exc:
            if run_id is None:
                raise
            note = f"{store.results_stored(run_id)} result(s) kept in run {run_id} (marked failed)"
            try:
                store.finish_run(run_id, "failed", error=str(exc))
            except StoreError as store_exc:
                note = f"run {run_id} could not be marked failed: {store_exc}"
            raise type(exc)(f"{exc}; {note}") from None
        finally:
            progress.stop()
            signal.signal(signal.SIGINT, previous)
        warnings = list(proc.stderr_lines)

    if proc.interrupted and not stream.complete:
        if run_id is None:
            err.print("kcross: interrupted before the run started; nothing stored",
                      highlight=False, markup=False)
        else:
            store.finish_run(run_id, "interrupted", error="interrupted by the user")
            planned = len(stream.plan["benchmarks"]) if stream.plan else 0
            err.print(f"kcross: interrupted; kept {len(stream.results)} of {planned} "
                      f"benchmark(s) in run {run_id} (see 'kcross show {run_id}')",
                      highlight=False, markup=False)
        return EXIT_INTERRUPTED

    assert run_id is not None and stream.end is not None and stream.fingerprint is not None
    store.finish_run(run_id, "complete", end=stream.end)
    for warning in warnings:
        err.print(f"harness: {warning}", style="yellow", highlight=False, markup=False)
    if not request.json_output:
        out.print(render.results_table(stream.results, title=f"run {run_id}"))
        out.print(render.run_footer(stream.fingerprint, stream.results))
        end = stream.end
        out.print(f"run {run_id}: {end['ok']} ok, {end['skipped']} skipped, {end['failed']} "
                  f"failed in {end['elapsed_s']:.1f} s; stored in {store.target.display}",
                  highlight=False, markup=False)
    return 0
