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

import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType

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
    source: str = "run"  # runs.source: "remote" when ``harness`` runs it over ssh
    print_table: bool = True  # False: an export takes standard output
    wide: bool = False  # the full table (kcross run --wide)
    on_end: Callable[[int], None] | None = None  # called with the run id once it is marked
    # Called just before the harness starts (kcross's readiness checks); the line it returns
    # is printed on stderr once the harness has started, i.e. when its first record arrives.
    notice: Callable[[], str | None] | None = None
    tag: str | None = None  # given to the run once it is stored complete


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

    def mark_failed(exc: BaseException) -> str:
        """Close the run as failed; return what to tell the user about it."""
        assert run_id is not None
        try:
            store.finish_run(run_id, "failed", error=_describe(exc))
        except StoreError as store_exc:
            return f"run {run_id} could not be marked failed: {store_exc}"
        return f"{store.results_stored(run_id)} result(s) kept in run {run_id} (marked failed)"

    notice = request.notice() if request.notice is not None else None
    with HarnessProcess(request.harness, ["run", "--json", *request.harness_args]) as proc:
        stop.on_stop = proc.interrupt
        if stop.signum is not None:  # arrived while the harness was being started
            proc.interrupt()
        try:
            for line in proc.records():
                try:
                    stream.add(line.record, line.where)
                except SchemaError as exc:
                    raise HarnessError(f"harness broke the stream order: {exc}") from None
                rtype = line.record["type"]
                if notice is not None:
                    err.print(notice, style="yellow", highlight=False, markup=False,
                              soft_wrap=True)
                    notice = None
                with stop_signals_held():  # threads started here must not take them
                    if rtype == "plan":
                        assert stream.fingerprint is not None  # RunStream enforces the order
                        run_id = store.start_run(stream.fingerprint, line.record,
                                                 command=request.command,
                                                 source=request.source)
                    elif rtype == "result":
                        assert run_id is not None
                        store.add_result(run_id, len(stream.results) - 1, line.record)
                if request.json_output:  # after storing: a result is kept whatever the output
                    sys.stdout.write(line.text + "\n")
                    sys.stdout.flush()
                with stop_signals_held():
                    if rtype == "plan":
                        progress.start(line.record)
                    elif rtype == "result":
                        progress.advance(line.record)
            if not stream.complete and not proc.interrupted and proc.stopped_by is None:
                raise HarnessError(f"harness stopped without an end record after "
                                   f"{len(stream.results)} result(s)")
        except OutputClosed as exc:
            proc.interrupt()  # nobody reads the results any more: stop measuring
            closed = exc
        except KcrossError as exc:
            if run_id is None:
                raise
            raise type(exc)(f"{exc}; {mark_failed(exc)}") from None
        except BaseException as exc:  # a bug, or e.g. a module that cannot be imported
            if run_id is not None:
                note = mark_failed(exc)
                if isinstance(exc, ImportError):
                    exc.add_note(note)  # cli turns an ImportError into one line
            raise
        finally:
            progress.stop()
            stop.on_stop = None
        warnings = list(proc.stderr_lines)

    signum = stop.signum if stop.signum is not None else proc.stopped_by
    if not stream.complete and (signum is not None or closed is not None):
        why = "standard output closed" if closed is not None else \
            f"interrupted by {signal_name(signum or 0)}"
        if run_id is None:
            message = f"{why} before the run started; nothing stored"
        else:
            store.finish_run(run_id, "interrupted", error=why)
            planned = len(stream.plan["benchmarks"]) if stream.plan else 0
            message = (f"kept {store.results_stored(run_id)} of {planned} benchmark(s) in run "
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
    failed = int(end["failed"]) or sum(r["status"] == "failed" for r in stream.results)
    if request.print_table and not request.json_output:
        try:
            render.print_run(out, stream.results, stream.fingerprint, title=f"run {run_id}",
                             wide=request.wide, run_id=run_id)
            out.print(f"run {run_id}: {end['ok']} ok, {end['skipped']} skipped, "
                      f"{end['failed']} failed in {end['elapsed_s']:.1f} s; stored in "
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

