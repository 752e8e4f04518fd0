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

from ..errors import (
    EXIT_CHECK_FAILED,
    EXIT_OK,
    HarnessError,
    KcrossError,
    OutputClosed,
    OutputError,
    SchemaError,
    StoreError,
    exit_for_signal,
    ignore_stop_signals,
    signal_name,
    stop_signals_held,
)
from ..schema import RunStream
from ..series import merge_results
from ..store import Store
from ..views.lines import say
from ..views.run import print_run
from ..views.table import FITS, Lines
from .harness import STOP_SIGNALS, HarnessProcess, Received
from .processes import check_machine, check_plan, combined_end, plan_of, result_of
from .progress import RunProgress


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
        """Once the run is marked, a late signal of a burst has nothing left to stop
        (:func:`kcross.errors.ignore_stop_signals` says why ignored, not blocked)."""
        ignore_stop_signals()


def _describe(exc: BaseException) -> str:
    """One line for the run's ``error`` column."""
    text = " ".join(str(exc).splitlines())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run(store: Store, request: RunRequest, out: Console, err: Console) -> int:
    """Run the benchmarks; return the exit status (see the module docstring)."""
    stop = StopSignals().install()
    try:
        return _Run(store, request, out, err, stop).execute()
    finally:
        stop.ignore()


class _Run:
    """One run in progress: the harness processes one after another, each record stored as
    it arrives and shown as the request says, then the run marked (complete, interrupted
    or failed) and reported."""

    def __init__(self, store: Store, request: RunRequest, out: Console, err: Console,
                 stop: StopSignals) -> None:
        self.store, self.request, self.out, self.err, self.stop = store, request, out, err, stop
        self.stream = RunStream()          # the run's records: what is stored
        self.run_id: int | None = None     # once the plan has arrived
        self.progress = RunProgress(err)
        self.closed: OutputClosed | None = None   # standard output's reader went away
        self.ends: list[dict[str, Any]] = []      # each process's end record
        self.warnings: list[str] = []             # the harness's stderr lines, once each
        self.stopped_by: int | None = None        # the signal that ended a harness
        self.notice: str | None = None            # printed once the harness has started

    def execute(self) -> int:
        """Every process, then the run marked and reported; the exit status."""
        request = self.request
        self.notice = request.notice() if request.notice is not None else None
        for process in range(request.processes):
            if not self._process(process):
                break
        signum = self.stop.signum if self.stop.signum is not None else self.stopped_by
        if not self.stream.complete and (signum is not None or self.closed is not None):
            return self._interrupted(signum)
        self._complete()
        return self._report()

    # --- the harness's records ---------------------------------------------------------

    def _process(self, process: int) -> bool:
        """Harness process number ``process``, its records taken as they arrive; False when
        the run stops after it (a signal, standard output closed)."""
        processes = self.request.processes
        own = RunStream()   # this process's own records, in the harness's order
        with HarnessProcess(self.request.harness,
                            ["run", "--json", *self.request.harness_args]) as proc:
            self.stop.on_stop = proc.interrupt
            if self.stop.signum is not None:  # arrived while the harness was being started
                proc.interrupt()
            try:
                for line in proc.records():
                    self._take(line, own, process)
                if not own.complete and not proc.interrupted and proc.stopped_by is None:
                    raise HarnessError(f"harness stopped without an end record after "
                                       f"{len(own.results)} result(s)"
                                       + (f" (process {process})" if processes > 1 else ""))
            except OutputClosed as exc:
                proc.interrupt()  # nobody reads the results any more: stop measuring
                self.closed = exc
            except KcrossError as exc:
                self.progress.stop()
                self.stop.on_stop = None
                if self.run_id is None:
                    raise
                raise type(exc)(f"{exc}; {self._mark_failed(exc)}") from None
            except BaseException as exc:  # a bug, or e.g. a module that cannot be imported
                self.progress.stop()
                self.stop.on_stop = None
                if self.run_id is not None:
                    note = self._mark_failed(exc)
                    if isinstance(exc, ImportError):
                        exc.add_note(note)  # cli turns an ImportError into one line
                raise
            finally:
                if process == processes - 1 or self.closed is not None:
                    self.progress.stop()
                self.stop.on_stop = None
            self.warnings += [w for w in proc.stderr_lines if w not in self.warnings]
            self.stopped_by = proc.stopped_by
        if self.closed is not None or self.stop.signum is not None \
                or self.stopped_by is not None or proc.interrupted:
            self.progress.stop()
            return False
        return True

    def _take(self, line: Received, own: RunStream, process: int) -> None:
        """One line of the harness: checked in its process's order, stored, shown."""
        try:
            own.add(line.record, line.where)
        except SchemaError as exc:
            raise HarnessError(f"harness broke the stream order: {exc}") from None
        text: str | None = line.text if self.request.processes == 1 else None
        if self.notice is not None:
            self.err.print(self.notice, style="yellow", highlight=False, markup=False,
                           soft_wrap=True)
            self.notice = None
        with stop_signals_held():  # threads started here must not take them
            record = self._store(line.record, line.where, process)
        if record is None:
            return
        self._emit(record, text)
        with stop_signals_held():
            if record["type"] == "plan":
                self.progress.start(record)
            elif record["type"] == "result":
                self.progress.advance(record)

    def _store(self, record: dict[str, Any], where: str,
               process: int) -> dict[str, Any] | None:
        """The run's record made of a harness record, added to the run and stored; None for
        a record only checked (a later process's fingerprint and plan) or kept for later (an
        end record before the last process's)."""
        stream, processes = self.stream, self.request.processes
        rtype = record["type"]
        if rtype == "fingerprint":
            if process > 0:
                assert stream.fingerprint is not None
                check_machine(stream.fingerprint, record, process)
                return None
            stream.add(record, where)
        elif rtype == "plan":
            if process > 0:
                assert stream.plan is not None
                check_plan(stream.plan, record, process)
                return None
            record = plan_of(record, processes)
            stream.add(record, where)
            assert stream.fingerprint is not None  # RunStream enforces the order
            self.run_id = self.store.start_run(stream.fingerprint, record,
                                               command=self.request.command,
                                               source=self.request.source)
        elif rtype == "result":
            record = result_of(record, process, processes)
            stream.add(record, where)
            assert self.run_id is not None
            self.store.add_result(self.run_id, len(stream.results) - 1, record)
        elif rtype == "end":
            self.ends.append(record)
            if process < processes - 1:
                return None
            record = combined_end(self.ends) if processes > 1 else record
            stream.add(record, where)
        return record

    def _emit(self, record: dict[str, Any], text: str | None) -> None:
        """--json: the record on standard output (after storing: a result is kept whatever
        the output)."""
        if self.request.json_output:
            sys.stdout.write((text if text is not None else json.dumps(record)) + "\n")
            sys.stdout.flush()

    # --- the end -----------------------------------------------------------------------

    def _mark_failed(self, exc: BaseException) -> str:
        """Close the run as failed; return what to tell the user about it."""
        run_id = self.run_id
        assert run_id is not None
        try:
            self.store.finish_run(run_id, "failed", error=_describe(exc))
        except StoreError as store_exc:
            return f"run {run_id} could not be marked failed: {store_exc}"
        return f"{self.store.results_stored(run_id)} result(s) kept in run {run_id} (marked failed)"

    def _interrupted(self, signum: int | None) -> int:
        """A run stopped by a signal or by standard output's reader: what was received kept,
        the run marked interrupted; the exit status (OutputClosed when nobody reads)."""
        store, stream, processes, run_id = self.store, self.stream, self.request.processes, \
            self.run_id
        why = "standard output closed" if self.closed is not None else \
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
            message = f"{why}; {message}, marked interrupted" if self.closed is not None \
                else f"interrupted; {message}"
        if self.request.on_end is not None and run_id is not None:
            self.request.on_end(run_id)  # an interrupted run's results so far
        if self.closed is not None:
            raise OutputClosed(message)
        say(self.err, f"kcross: {message}")
        return exit_for_signal(signum or 0)

    def _complete(self) -> None:
        """The run marked complete, tagged if asked, handed to ``on_end``."""
        request, store, run_id = self.request, self.store, self.run_id
        assert run_id is not None and self.stream.end is not None
        store.finish_run(run_id, "complete", end=self.stream.end)
        if request.tag is not None:
            try:
                _, before = store.tag_run(run_id, request.tag)
            except StoreError as exc:
                raise StoreError(f"{exc}; run {run_id} is stored complete, untagged") from None
            moved = f" (moved from run {before})" if before not in (None, run_id) else ""
            say(self.err, f"kcross: run {run_id} tagged {request.tag}{moved}")
        if request.on_end is not None:
            request.on_end(run_id)

    def _report(self) -> int:
        """The harness's warnings, the table (unless --json or an export takes standard
        output), the failed checks; the exit status."""
        request, stream, run_id, err = self.request, self.stream, self.run_id, self.err
        assert stream.end is not None and stream.fingerprint is not None
        for warning in self.warnings:
            say(err, f"harness: {warning}", "yellow")
        end = stream.end
        benchmarks = merge_results(stream.results)
        failed = sum(r["status"] == "failed" for r in benchmarks)
        if request.print_table and not request.json_output:
            counts = {s: sum(r["status"] == s for r in benchmarks)
                      for s in ("ok", "skipped", "failed")}
            each = f" ({request.processes} processes each)" if request.processes > 1 else ""
            try:
                print_run(self.out, benchmarks, stream.fingerprint, title=f"run {run_id}",
                          wide=request.wide, run_id=run_id)
                self.out.print(Lines([f"run {run_id}: {counts['ok']} ok, {counts['skipped']} "
                                      f"skipped, {counts['failed']} failed{each} in "
                                      f"{end['elapsed_s']:.1f} s; stored in "
                                      f"{self.store.target.display}"]),
                               width=min(self.out.width, FITS))
                sys.stdout.flush()
            except (OutputClosed, OutputError) as exc:
                what = str(exc) or "standard output closed"
                raise type(exc)(f"{what}; run {run_id} is stored complete "
                                f"(see 'kcross show {run_id}')") from None
        if failed:
            say(err, f"kcross: {failed} benchmark(s) failed their check; run {run_id} is "
                     "complete (exit status 1)", "red")
            return EXIT_CHECK_FAILED
        return EXIT_OK
