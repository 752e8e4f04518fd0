"""``python -m kcross`` and the ``kcross`` command (pyproject.toml's entry point): the same.

:func:`entry` is the entry point rather than :func:`kcross.cli.main` because importing
kcross.cli is most of a start (the CLI, and the module of the command it names), and a
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
    import gc  # built in

    # The collector's first generation at 10,000 allocations, not 700: a start imports
    # hundreds of modules (SQLAlchemy, numpy, rich), whose objects all live to the end, and
    # each 700 of them set off a pass that finds nothing to free (0.02-0.07 s of a command).
    gc.set_threshold(10_000, 50, 50)
    try:
        from .errors import stop_on_signals  # tiny: SIGTERM and SIGHUP as Ctrl-C from here

        stop_on_signals()
        from .environment import quiet_numpy  # tiny: os alone

        quiet_numpy()  # one OpenBLAS thread for kcross's numpy, never for what it measures
        from .cli import main
    except (KeyboardInterrupt, RuntimeError) as exc:  # errors.Stopped too; errors.stop_of
        from .errors import interrupted, stop_of  # tiny; imported again if it was cut short

        stop = stop_of(exc)
        if stop is None:
            raise
        interrupted(stop)
    try:
        main()
    finally:
        # Whatever the exit: everything is written and flushed by now (the store commits
        # before it returns, main flushes stdout), so the interpreter's shutdown need not
        # walk every object once more to find cycles to free (0.05 s).
        gc.freeze()


if __name__ == "__main__":
    entry()
