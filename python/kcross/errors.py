"""Exceptions the command line turns into one ``kcross: error: ...`` line.

Anything derived from :class:`KcrossError` is an expected failure (bad input,
unusable database, misbehaving harness) and must never produce a traceback;
any other exception reaching ``main`` is a bug in kcross and is allowed to.
"""


EXIT_INTERRUPTED = 130  # the shell's status for "terminated by SIGINT"


class KcrossError(Exception):
    """An expected failure, reported as one line; ``exit_code`` is the process status."""

    exit_code = 2


class UserError(KcrossError):
    """The user asked for something impossible (bad option, unknown benchmark, missing file)."""


class SchemaError(KcrossError):
    """A record does not follow docs/result-format.md; the message names where it was read."""


class HarnessError(KcrossError):
    """The harness crashed, could not be started or wrote something unreadable.

    Exit status 1, not 2: the user's input was fine, the measuring program was not.
    """

    exit_code = 1


class StoreError(KcrossError):
    """The result database cannot be used (read-only, corrupt, unreachable, too new...)."""
