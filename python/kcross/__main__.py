"""``python -m kcross`` and the ``kcross`` command (pyproject.toml's entry point): the same.

:func:`entry` is the entry point rather than :func:`kcross.cli.main` because importing
kcross.cli is most of a start (the command table imports every command module), and a
Ctrl-C there must end as one anywhere else does: "kcross: interrupted", status 130, not
a traceback and death by the signal; SIGTERM and SIGHUP too, with 143 and 129.  Nothing is
imported here before the guard.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: nothing may be imported before the guard
if TYPE_CHECKING:
    from typing import NoReturn


def entry() -> NoReturn:
    """Import the command line and run it; a Ctrl-C (SIGTERM, SIGHUP) while it is imported
    is an interrupt."""
    try:
        from .errors import stop_on_signals  # tiny: SIGTERM and SIGHUP as Ctrl-C from here

        stop_on_signals()
        from .cli import main
    except KeyboardInterrupt as exc:  # errors.Stopped too
        from .errors import interrupted  # tiny; imported again if it was what was cut short

        interrupted(exc)
    main()


if __name__ == "__main__":
    entry()
