"""Exit statuses, and the exceptions the command line turns into one line on stderr.

Anything derived from :class:`KcrossError` is an expected failure (bad input,
unusable database, misbehaving harness, unwritable output) and must never
produce a traceback; any other exception reaching ``main`` is a bug in kcross
and is allowed to.  The exit statuses are kcross's and kcross-harness's
alike (docs/commands.md, "Exit codes").
"""

import signal
import sys
from collections.abc import Iterable
from typing import NoReturn

EXIT_OK = 0               # every benchmark ok or skipped
EXIT_CHECK_FAILED = 1     # a benchmark failed its own check: a result (run complete, stored)
EXIT_USAGE = 2            # bad input: options, files, database (one line on stderr)
EXIT_BROKEN = 3           # the harness crashed or wrote garbage, output could not be written,
#                           or a module kcross needs cannot be imported (one line on stderr)
EXIT_INTERRUPTED = 130    # the shell's status for "terminated by SIGINT"
EXIT_PIPE_CLOSED = 128 + signal.SIGPIPE  # 141: stdout's reader went away (e.g. `| head`)


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


def interrupted() -> NoReturn:
    """How kcross ends on a Ctrl-C that nothing under way had to answer for (a start, a
    command between its steps): "kcross: interrupted" on stderr, status 130."""
    sys.stderr.write("kcross: interrupted\n")
    sys.exit(EXIT_INTERRUPTED)


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


class LabError(KcrossError):
    """A QEMU lab cannot get what it needs from this machine (apt-get or dpkg missing, no
    bookworm entry in the apt sources, the package registry unreachable, a package without
    the expected kernel file); the message says which and what to do about it."""


class GuestError(KcrossError):
    """QEMU or the lab's guest failed: QEMU crashed, or the guest panicked, hung or never
    powered off (the message quotes the console's last lines).  Exit status 3, like a
    harness that crashed: the user's input was fine."""

    exit_code = EXIT_BROKEN
