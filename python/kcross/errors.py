"""Exit statuses, and the exceptions the command line turns into one line on stderr.

Anything derived from :class:`KcrossError` is an expected failure (bad input,
unusable database, misbehaving harness, unwritable output) and must never
produce a traceback; any other exception reaching ``main`` is a bug in kcross
and is allowed to.  The exit statuses are kcross's and kcross-harness's
alike (docs/commands.md, "Exit codes").
"""

import contextlib
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import NoReturn

EXIT_OK = 0               # every benchmark ok or skipped
EXIT_CHECK_FAILED = 1     # a benchmark failed its own check: a result (run complete, stored)
EXIT_USAGE = 2            # bad input: options, files, database (one line on stderr)
EXIT_BROKEN = 3           # the harness crashed or wrote garbage, output could not be written,
#                           or a module kcross needs cannot be imported (one line on stderr)
EXIT_INTERRUPTED = 130    # the shell's status for "terminated by SIGINT"
EXIT_PIPE_CLOSED = 128 + signal.SIGPIPE  # 141: stdout's reader went away (e.g. `| head`)

# The signals that mean "stop" (to kcross, and when they end the harness): Ctrl-C, kill
# and timeout, the terminal gone; the user's or a supervisor's.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP in this thread for a while.

    A thread started meanwhile (a BLAS pool at numpy's import, wherever kcross.stats first
    uses it; the store's heartbeat) inherits the block and so leaves the stop signals to the
    main thread, where they interrupt its read of the harness's output at once.  A signal
    that arrives meanwhile is delivered at the end, not lost.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# The longest piece of user input an error line repeats (a 10,000-character tag is cut),
# and of a path or URL (cut only beyond any sensible length).
ECHO_MAX = 60
PATH_ECHO_MAX = 240


def shown(text: str, limit: int = ECHO_MAX) -> str:
    """User input as an error line repeats it: quoted, and cut when it is long."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text)} characters)"


def clipped(text: str, limit: int = PATH_ECHO_MAX) -> str:
    """Text an error line repeats as it is (a path, a URL, another program's message): cut
    when it is long."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... ({len(text)} characters)"


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """The one way kcross suggests a name a user mistyped (a command, a benchmark, an arch,
    a release, a tag...): ``did you mean X?``, ``did you mean X or Y?``, ``did you mean X,
    Y or Z?``: at most three of ``known``, the closest and those nearly as close (difflib's
    similarity, 0.6 at the least, within 0.15 of the closest's); empty when none is close."""
    import difflib

    scored = []
    for name in sorted(set(known)):
        matcher = difflib.SequenceMatcher(None, typed, name)
        if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and \
                (score := matcher.ratio()) >= 0.6:
            scored.append((score, name))
    scored.sort(key=lambda x: (-x[0], x[1]))
    close = [name for score, name in scored[:3] if score >= scored[0][0] - 0.15]
    if not close:
        return ""
    listed = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    return f"did you mean {listed}?"


def exit_for_signal(signum: int) -> int:
    """The status a shell reports for a job ended by ``signum`` (SIGINT: 130, SIGTERM: 143)."""
    return 128 + signum


def interrupted(stop: KeyboardInterrupt | None = None) -> NoReturn:
    """How kcross ends on a Ctrl-C that nothing under way had to answer for (a start, a
    command between its steps), or a SIGTERM or SIGHUP (``stop`` a :class:`Stopped`):
    "kcross: interrupted" on stderr, status 128 + the signal's number (130 for Ctrl-C)."""
    sys.stderr.write("kcross: interrupted\n")
    if not isinstance(stop, Stopped):
        # CPython marks a KeyboardInterrupt that left a string's exec() (a dataclass made,
        # scipy's "from numpy import *") as unhandled, caught or not, and `python -m kcross`
        # then kills itself with SIGINT on its way out; an exec() that completes unmarks it.
        exec("")
    sys.exit(exit_for_signal(stop.signum) if isinstance(stop, Stopped) else EXIT_INTERRUPTED)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class KcrossError(Exception):
    """An expected failure, reported as one line; ``exit_code`` is the process status."""

    exit_code = EXIT_USAGE


class UserError(KcrossError):
    """The user asked for something impossible (bad option, unknown benchmark, missing file)."""


class SchemaError(KcrossError):
    """A record does not follow docs/result-format.md; the message names where it was read."""


class HarnessError(KcrossError):
    """The harness crashed, could not be started, could not write its output or
    wrote something unreadable.

    Exit status 3, not 2 (the user's input was fine) nor 1 (that is a
    benchmark's failed check, a result): the measuring program failed.
    """

    exit_code = EXIT_BROKEN


class StoreError(KcrossError):
    """The result database cannot be used (read-only, corrupt, unreachable, too new...)."""


class OutputError(KcrossError):
    """kcross's output could not be written: standard output (``> /dev/full``, an I/O
    error) or a file it was writing (a report, an export, a plot: a full disk).  A path
    refused before any work (a directory, the store itself) is a :class:`UserError`."""

    exit_code = EXIT_BROKEN


class OutputClosed(KcrossError):
    """Standard output's reader went away (broken pipe, e.g. ``kcross run --json | head``).

    Not an error of kcross's: it stops quietly with status 141, the shell's
    status for a writer ended by SIGPIPE.  The message, when not empty, is the
    one line worth saying (what became of a run in progress).
    """

    exit_code = EXIT_PIPE_CLOSED


class Interrupted(KcrossError):
    """Stopped by a signal (SIGINT, SIGTERM, SIGHUP): status 128 + the signal's number."""

    def __init__(self, signum: int, message: str = "interrupted") -> None:
        super().__init__(message)
        self.signum = signum
        self.exit_code = exit_for_signal(signum)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where kcross is as Ctrl-C raises KeyboardInterrupt, and
    taken as one by everything that must let Ctrl-C through (a database driver cancels the
    query under way, SQLAlchemy drops the connection): "kcross: interrupted", status 128 +
    the signal's number (:func:`interrupted`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum


def stop_on_signals(raised: Callable[[int], BaseException] = Stopped) -> None:
    """SIGTERM and SIGHUP stop kcross as Ctrl-C does, rather than kill it mid-way (a
    transaction under way is rolled back, nothing is left half done): their handler raises
    ``raised(signum)``.  Every command starts with it (kcross.__main__, kcross.cli.main);
    one that answers for the signals itself installs its own handlers (kcross run: its run
    marked interrupted) or its own exception (the lab's :class:`Interrupted`).  A signal
    the caller set to be ignored (nohup) stays ignored."""
    def stop(signum: int, _frame: object) -> None:
        raise raised(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, stop)


def ignore_stop_signals() -> None:
    """A command's work is done (a run marked, every output written): a late stop signal
    has nothing left to stop, and is ignored.  Ignored, not blocked: other threads (numpy's
    BLAS pool) do not share the main thread's mask; and Python restores the default
    handlers while it finalizes, so a late SIGINT or SIGTERM would otherwise kill kcross on
    its way out, its work done, with a status saying it was not."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def stop_of(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM, SIGHUP: a :class:`Stopped`) that ``exc`` is, or that Python
    wrapped into it: CPython 3.11 makes anything raised in a ``__set_name__`` (a dataclass's
    field, as its class is made) a RuntimeError caused by it, so a Ctrl-C while a module of
    dataclasses is imported arrives as one.  None for any other exception."""
    while isinstance(exc, RuntimeError) and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc if isinstance(exc, KeyboardInterrupt) else None


class LabError(KcrossError):
    """A QEMU lab cannot get what it needs from this machine (apt-get or dpkg missing, no
    bookworm entry in the apt sources, the package registry unreachable, a package without
    the expected kernel file); the message says which and what to do about it."""


class GuestError(KcrossError):
    """QEMU or the lab's guest failed: QEMU crashed, or the guest panicked, hung or never
    powered off (the message quotes the console's last lines).  Exit status 3, like a
    harness that crashed: the user's input was fine."""

    exit_code = EXIT_BROKEN
