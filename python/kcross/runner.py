"""``kcross run``: drive the harness, store each result as it arrives, report.

A run recorded as ``running`` is always closed, whatever ends it:

- the harness's end record: ``complete``, also when benchmarks failed their
  checks (a result: the table shows the failed rows, exit status 1);
- SIGINT (Ctrl-C), SIGTERM (``timeout``, ``kill``) or SIGHUP (the terminal
  went away), to kcross or to the harness, once or in a burst: ``interrupted``,
  exit status 128 + the signal's number (130 for SIGINT);
- standard output's reader going away (``kcross run --json | head``):
  ``interrupted``, one line on stderr, exit status 141;
- a misbehaving harness or unwritable output: ``failed``, one line;
- any other exception (a bug): ``failed``, then the traceback.

The signals are caught for the whole command, the final write to the store
included, by a handler that only asks the harness to stop (a second signal
kills it): a signal can therefore never land in the middle of a database
commit, and the loop sees the harness's output end, keeps what was received
and marks the run.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

from rich.console import Console

from . import render
from .errors import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    HarnessError,
    KcrossError,
    OutputClosed,
    OutputError,
    SchemaError,
    StoreError,
    exit_for_signal,
    signal_name,
)
from .harness import STOP_SIGNALS, HarnessProcess, stop_signals_held
from .processes import check_machine, check_plan, combined_end, plan_of, result_of
from .progress import RunProgress
from .schema import RunStream
from .series import merge_results
from .store import Store


@dataclass(frozen=True)
class RunRequest:
    """What to run and how to report it."""

    harness: Sequence[str]
    harness_args: Sequence[str]
    command: Sequence[str]
    json_output: bool
    source: str = "run"  # runs.source: "remote" when ``harness`` runs it over ssh
    print_table: bool = True  # False: an export takes standard output
    wide: bool = False  # the full table (kcross run --wide)
    on_end: Callable[[int], None] | None = None  # called with the run id once it is marked
    # Called just before the harness starts (kcross's readiness checks); the line it returns
    # is printed on stderr once the harness has started, i.e. when its first record arrives.
    notice: Callable[[], str | None] | None = None
    tag: str | None = None  # given to the run once it is stored complete
    processes: int = 1  # fresh harness executions, one after another, each all benchmarks


class StopSignals:
    """Catch SIGINT, SIGTERM and SIGHUP: remember the first, call ``on_stop`` for each.

    Installed for good (:func:`run` then ignores them): ``kcross run`` is the
    process's last act, and a late signal of a burst must find this handler,
    not the default one, or it would interrupt the final write to the store
    or the exit itself.  A
    signal ignored when kcross started (``nohup``, a background job without
    job control) stays ignored.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.on_stop: Callable[[], None] | None = None

    def _handler(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if self.on_stop is not None:
            self.on_stop()

    def install(self) -> StopSignals:
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, self._handler)
        return self

    def ignore(self) -> None:
        """Once the run is marked, a late signal of a burst has nothing left to stop.

        Ignored, not blocked: other threads (numpy's BLAS pool) do not share
        the main thread's mask, and Python restores the default handlers
        while it finalizes, so a late SIGINT would otherwise kill the exit
        with a status saying the run was not handled.
        """
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


def _describe(exc: BaseException) -> str:
    """One line for the run's ``error`` column."""
    text = " ".join(str(exc).splitlines())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run(store: Store, request: RunRequest, out: Console, err: Console) -> int:
    """Run the benchmarks; return the exit status (see the module docstring)."""
    stop = StopSignals().install()
    try:
        return _run(store, request, out, err, stop)
    finally:
        stop.ignore()


def _run(store: Store, request: RunRequest, out: Console, err: Console,
         stop: StopSignals) -> int:
    stream = RunStream()
    run_id: int | None = None
    progress = RunProgress(err)
    closed: OutputClosed | None = None
    processes = request.processes
    ends: list[dict[str, Any]] = []
    warnings: list[str] = []
    stopped_by: int | None = None

    def mark_failed(exc: BaseException) -> str:
        """Close the run as failed; return what to tell the user about it."""
        assert run_id is not None
        try:
            store.finish_run(run_id, "failed", error=_describe(exc))
        except StoreError as store_exc:
            return f"run {run_id} could not be marked failed: {store_exc}"
        return f"{store.results_stored(run_id)} result(s) kept in run {run_id} (marked failed)"

    def emit(record: dict[str, Any], text: str | None) -> None:
        if request.json_output:  # after storing: a result is kept whatever the output
            sys.stdout.write((text if text is not None else json.dumps(record)) + "\n")
            sys.stdout.flush()

    notice = request.notice() if request.notice is not None else None
    for process in range(processes):
        own = RunStream()   # this process's own records, in the harness's order
        with HarnessProcess(request.harness, ["run", "--json", *request.harness_args]) as proc:
            stop.on_stop = proc.interrupt
            if stop.signum is not None:  # arrived while the harness was being started
                proc.interrupt()
            try:
                for line in proc.records():
                    try:
                        own.add(line.record, line.where)
                    except SchemaError as exc:
                        raise HarnessError(f"harness broke the stream order: {exc}") from None
                    record = line.record
                    rtype = record["type"]
                    text: str | None = line.text if processes == 1 else None
                    if notice is not None:
                        err.print(notice, style="yellow", highlight=False, markup=False,
                                  soft_wrap=True)
                        notice = None
                    with stop_signals_held():  # threads started here must not take them
                        if rtype == "fingerprint":
                            if process > 0:
                                assert stream.fingerprint is not None
                                check_machine(stream.fingerprint, record, process)
                                continue
                            stream.add(record, line.where)
                        elif rtype == "plan":
                            if process > 0:
                                assert stream.plan is not None
                                check_plan(stream.plan, record, process)
                                continue
                            record = plan_of(record, processes)
                            stream.add(record, line.where)
                            assert stream.fingerprint is not None  # RunStream enforces the order
                            run_id = store.start_run(stream.fingerprint, record,
                                                     command=request.command,
                                                     source=request.source)
                        elif rtype == "result":
                            record = result_of(record, process, processes)
                            stream.add(record, line.where)
                            assert run_id is not None
                            store.add_result(run_id, len(stream.results) - 1, record)
                        elif rtype == "end":
                            ends.append(record)
                            if process < processes - 1:
                                continue
                            record = combined_end(ends) if processes > 1 else record
                            stream.add(record, line.where)
                    emit(record, text)
                    with stop_signals_held():
                        if rtype == "plan":
                            progress.start(record)
                        elif rtype == "result":
                            progress.advance(record)
                if not own.complete and not proc.interrupted and proc.stopped_by is None:
                    raise HarnessError(f"harness stopped without an end record after "
                                       f"{len(own.results)} result(s)"
                                       + (f" (process {process})" if processes > 1 else ""))
            except OutputClosed as exc:
                proc.interrupt()  # nobody reads the results any more: stop measuring
                closed = exc
            except KcrossError as exc:
                progress.stop()
                stop.on_stop = None
                if run_id is None:
                    raise
                raise type(exc)(f"{exc}; {mark_failed(exc)}") from None
            except BaseException as exc:  # a bug, or e.g. a module that cannot be imported
                progress.stop()
                stop.on_stop = None
                if run_id is not None:
                    note = mark_failed(exc)
                    if isinstance(exc, ImportError):
                        exc.add_note(note)  # cli turns an ImportError into one line
                raise
            finally:
                if process == processes - 1 or closed is not None:
                    progress.stop()
                stop.on_stop = None
            warnings += [w for w in proc.stderr_lines if w not in warnings]
            stopped_by = proc.stopped_by
        if closed is not None or stop.signum is not None or stopped_by is not None \
                or proc.interrupted:
            progress.stop()
            break

    signum = stop.signum if stop.signum is not None else stopped_by
    if not stream.complete and (signum is not None or closed is not None):
        why = "standard output closed" if closed is not None else \
            f"interrupted by {signal_name(signum or 0)}"
        if run_id is None:
            message = f"{why} before the run started; nothing stored"
        else:
            store.finish_run(run_id, "interrupted", error=why)
            planned = len(stream.plan["benchmarks"]) * processes if stream.plan else 0
            what = "benchmark(s)" if processes == 1 else \
                f"results ({processes} processes of {planned // processes} benchmark(s))"
            message = (f"kept {store.results_stored(run_id)} of {planned} {what} in run "
                       f"{run_id} (see 'kcross show {run_id}')")
            message = f"{why}; {message}, marked interrupted" if closed is not None \
                else f"interrupted; {message}"
        if request.on_end is not None and run_id is not None:
            request.on_end(run_id)  # an interrupted run's results so far
        if closed is not None:
            raise OutputClosed(message)
        err.print(f"kcross: {message}", highlight=False, markup=False)
        return exit_for_signal(signum or 0)

    assert run_id is not None and stream.end is not None and stream.fingerprint is not None
    store.finish_run(run_id, "complete", end=stream.end)
    if request.tag is not None:
        try:
            _, before = store.tag_run(run_id, request.tag)
        except StoreError as exc:
            raise StoreError(f"{exc}; run {run_id} is stored complete, untagged") from None
        moved = f" (moved from run {before})" if before not in (None, run_id) else ""
        err.print(f"kcross: run {run_id} tagged {request.tag}{moved}", highlight=False,
                  markup=False)
    if request.on_end is not None:
        request.on_end(run_id)
    for warning in warnings:
        err.print(f"harness: {warning}", style="yellow", highlight=False, markup=False)
    end = stream.end
    benchmarks = merge_results(stream.results)
    failed = sum(r["status"] == "failed" for r in benchmarks)
    if request.print_table and not request.json_output:
        counts = {s: sum(r["status"] == s for r in benchmarks) for s in ("ok", "skipped", "failed")}
        each = f" ({processes} processes each)" if processes > 1 else ""
        try:
            render.print_run(out, benchmarks, stream.fingerprint, title=f"run {run_id}",
                             wide=request.wide, run_id=run_id)
            out.print(f"run {run_id}: {counts['ok']} ok, {counts['skipped']} skipped, "
                      f"{counts['failed']} failed{each} in {end['elapsed_s']:.1f} s; stored in "
                      f"{store.target.display}", highlight=False, markup=False)
            sys.stdout.flush()
        except (OutputClosed, OutputError) as exc:
            what = str(exc) or "standard output closed"
            raise type(exc)(f"{what}; run {run_id} is stored complete "
                            f"(see 'kcross show {run_id}')") from None
    if failed:
        err.print(f"kcross: {failed} benchmark(s) failed their check; run {run_id} is "
                  f"complete (exit status 1)", style="red", highlight=False, markup=False)
        return EXIT_CHECK_FAILED
    return EXIT_OK

