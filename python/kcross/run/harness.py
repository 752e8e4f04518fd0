"""Finding and driving the ``kcross-harness`` program.

The harness does the measuring; this module only starts it, turns its stdout
into validated records *as they arrive* (so results are stored and shown while
later benchmarks still run) and translates its exit into kcross's terms:

- 0, or 1 after an end record that counts failed results (a benchmark's
  check failed: that is a result, not a crash): a normal end;
- death by SIGINT, SIGTERM or SIGHUP: somebody stopped it (Ctrl-C reaches
  the whole process group, and the harness may die of it before kcross's own
  handler runs): :attr:`HarnessProcess.stopped_by` says which signal;
- 2 with one stderr line before any output: the user's mistake;
- anything else (3: it could not write its output; a crash, another signal,
  unparsable output): the harness's failure.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from ..environment import measured
from ..errors import (
    ECHO_MAX,
    STOP_SIGNALS,
    HarnessError,
    Interrupted,
    KcrossError,
    SchemaError,
    UserError,
    clipped,
    did_you_mean,
    shown,
    signal_name,
)
from ..schema import parse_line

HARNESS_NAME = "kcross-harness"
ENV_VAR = "KCROSS_HARNESS"
_STDERR_KEEP = 50  # lines of harness stderr kept for messages
EXIT_CHECK_FAILED = 1  # the harness's status when a benchmark's check failed
EXIT_OUTPUT = 3        # the harness's status when it could not write its output


class Received(NamedTuple):
    """One validated output line: the record, where it was read, and its exact text."""

    record: dict[str, Any]
    where: str
    text: str


def locate(option: str | None = None) -> list[str]:
    """Return the command prefix that runs the harness.

    Precedence: ``--harness`` option, then ``$KCROSS_HARNESS``, then the binary
    installed inside the package (``kcross/_bin/kcross-harness``).  A ``.py``
    path is run with the current interpreter, which is how tests substitute a
    fake harness.
    """
    if option:
        return _command_for(Path(option), "--harness")
    env = os.environ.get(ENV_VAR)
    if env:
        return _command_for(Path(env), f"${ENV_VAR}")
    bundled = Path(str(resources.files("kcross"))) / "_bin" / HARNESS_NAME
    if not bundled.exists():
        raise UserError(f"{HARNESS_NAME} not found at {bundled} (the C part was not built "
                        f"into this installation); point --harness or ${ENV_VAR} at one")
    return _command_for(bundled, "installed harness")


def _command_for(path: Path, origin: str) -> list[str]:
    path = path.expanduser()
    try:
        is_file = path.is_file()
    except OSError:  # a name too long
        is_file = False
    if not is_file:
        raise UserError(f"{origin}: {clipped(str(path))} is not a file")
    if path.suffix == ".py":
        return [sys.executable, str(path)]
    if not os.access(path, os.X_OK):
        raise UserError(f"{origin}: {clipped(str(path))} is not executable")
    return [str(path)]


class HarnessProcess:
    """One running harness whose records are read with :meth:`records`.

    Use as a context manager: leaving it (normally or through an exception)
    makes sure the child does not outlive kcross.
    """

    def __init__(self, command: Sequence[str], args: Sequence[str],
                 env: Mapping[str, str] | None = None) -> None:
        self.argv = [*command, *args]
        self.interrupted = False              # we asked it to stop
        self.stopped_by: int | None = None    # it died of a stop signal we did not send
        self.returncode: int | None = None
        self._failed_results = 0              # as counted by its end record
        self.stderr_lines: list[str] = []
        try:
            # the environment the user gave, without kcross's own additions
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=measured(env))
        except OSError as exc:
            raise HarnessError(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def __enter__(self) -> HarnessProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._stderr_thread.join(timeout=5)
        # A drain thread still reading (a grandchild holds the pipe, or a very
        # slow machine) keeps its stream: closing a file another thread reads
        # would end that thread with a traceback on kcross's stderr.
        streams = [self._proc.stdout]
        if not self._stderr_thread.is_alive():
            streams.append(self._proc.stderr)
        for stream in streams:
            if stream is not None:
                stream.close()

    def _drain_stderr(self) -> None:
        """Read stderr concurrently so a chatty harness never blocks on a full pipe."""
        assert self._proc.stderr is not None
        # Leave the stop signals to the main thread: there they interrupt its
        # read of the harness's output at once (see kcross.run.runner).
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            for raw in self._proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self.stderr_lines.append(line)
                    del self.stderr_lines[:-_STDERR_KEEP]
        except (OSError, ValueError):  # the stream was closed under us: nothing more to keep
            return

    def interrupt(self) -> None:
        """Ask the harness to stop (SIGTERM); a second call kills it.

        SIGTERM, not SIGINT: a harness started by a kcross that ignores SIGINT
        (``nohup``, a background job) inherits that and would not stop.  Safe
        to call from a signal handler: it only sends signals.
        """
        if self.interrupted:
            self._proc.kill()
        else:
            self.interrupted = True
            self._proc.send_signal(signal.SIGTERM)  # a no-op once it has exited

    def records(self) -> Iterator[Received]:
        """Yield each output line as a :class:`Received`, as soon as it is written.

        Ends quietly at end of output if the harness ended normally (see the
        module's docstring) or was stopped; otherwise raises after the last
        good record, so that the caller has already handled everything received.
        """
        assert self._proc.stdout is not None
        lineno = 0
        while True:
            raw = self._proc.stdout.readline()
            if not raw:
                break
            lineno += 1
            where = f"harness output line {lineno}"
            try:
                text = raw.decode("utf-8")
                record = parse_line(text, where)
            except (UnicodeDecodeError, SchemaError) as exc:
                if not raw.endswith(b"\n"):
                    break  # cut off mid-record: the exit status below says why
                self._proc.kill()
                if self.interrupted:
                    return
                detail = str(exc) if isinstance(exc, SchemaError) else f"{where}: not UTF-8"
                raise HarnessError(f"harness wrote an invalid record: {detail}") from None
            if record.get("type") == "end" and isinstance(record.get("failed"), int):
                self._failed_results = record["failed"]
            yield Received(record, where, text.rstrip("\n"))
        self._finish(lineno)

    def _finish(self, lines: int) -> None:
        """Turn the exit status into an error unless it was a normal or requested end."""
        rc = self.returncode = self._proc.wait()
        self._stderr_thread.join(timeout=5)
        if rc == 0 or self.interrupted:
            return
        if rc == EXIT_CHECK_FAILED and self._failed_results > 0:
            return  # the end record counted the failed checks: a result, not a crash
        if -rc in STOP_SIGNALS:
            self.stopped_by = -rc
            return
        last = self.stderr_lines[-1] if self.stderr_lines else ""
        prefix = f"{HARNESS_NAME}: "
        last = clipped(last.removeprefix(prefix), 4 * ECHO_MAX)  # it may repeat a GLOB
        if rc == 2 and lines == 0:
            raise UserError(last or f"{HARNESS_NAME} rejected its arguments (exit status 2)")
        if rc < 0:
            how = f"was killed by {signal_name(-rc)}"
        elif rc == EXIT_OUTPUT:
            how = "could not write its output (exit status 3)"
        else:
            how = f"exited with status {rc}"
        raise HarnessError(f"{HARNESS_NAME} {how} after {lines} output line(s)"
                           + (f": {last}" if last else ""))


def selection_error(command: Sequence[str], suite: str | None, bench: str | None) -> str | None:
    """What is wrong with ``--suite`` (a suite, or several joined by commas) and ``--bench``
    (a glob), with the closest names the harness lists (the harness itself says only that
    nothing matches); None when they name what it has, or it cannot list.  Asked once the
    harness has refused a selection: a run that starts costs no listing."""
    from ..series import bench_name, benchmark_hint, matches

    if suite is None and bench is None:
        return None
    try:
        records = [r for r in collect(command, ["list", "--json"]) if r.get("type") == "bench"]
    except (KcrossError, OSError):
        return None
    suites = list(dict.fromkeys(str(r.get("suite")) for r in records))
    chosen = suites if suite is None else suite.split(",")
    for name in chosen:
        if name not in suites:
            hint = did_you_mean(name, suites)
            return (f"unknown suite {shown(name)} ({hint + ' ' if hint else ''}suites: "
                    f"{', '.join(suites)})")
    names = [bench_name(r) for r in records if r.get("suite") in chosen]
    if bench is not None and not any(matches(bench, n) for n in names):
        where = f" in suite {suite}" if suite is not None else ""
        return (f"no benchmark matches {shown(bench)}{where} "
                f"({benchmark_hint(bench, names) or 'see ' + repr('kcross list')})")
    return None


def collect(command: Sequence[str], args: Sequence[str],
            env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Run a short harness command (``list``, ``sysinfo``) and return all its records.

    ``env``, when given, is the harness's whole environment (default: kcross's own).
    """
    with HarnessProcess(command, args, env) as proc:
        records = [line.record for line in proc.records()]
    if proc.stopped_by is not None:
        raise Interrupted(proc.stopped_by)
    return records
