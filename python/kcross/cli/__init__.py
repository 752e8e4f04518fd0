"""The ``kcross`` command line: one command table, one module per subcommand (``cli/X.py``
is ``kcross X``), and the dispatch that turns every expected failure into one line.

Each command module has ``HELP`` (its line in ``kcross --help``), ``arguments(p,
common)`` adding its options to the parser the table made for it, and ``main(args,
out, err) -> int``; optionally ``DESCRIPTION``, ``EPILOG`` and ``PARENTS`` (the
shared option groups it takes: ``db``, ``harness``, ``json``).  Modules whose name
starts with ``_`` are helpers, not commands (a test checks the table and the files
agree).

Every expected failure ends as one ``kcross: error: ...`` line on stderr with
the exit status of :mod:`kcross.errors` (docs/commands.md, "Exit codes"); only bugs in
kcross itself may show a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn, TextIO

from ..errors import (
    EXIT_BROKEN,
    EXIT_USAGE,
    Interrupted,
    KcrossError,
    OutputClosed,
    OutputError,
    ignore_stop_signals,
    interrupted,
    stop_of,
    stop_on_signals,
)
from .options import ENVIRONMENT, EXIT_CODES, Common, Parser, formatter

# Subcommands import their heavy modules when they run: SQLAlchemy, numpy and scipy
# together take most of a second to import, which argument errors, --help, list and
# sysinfo should not pay; `kcross --help` (and a mistyped command) builds the parsers of
# every command, a start naming its command that one's alone, so a
# command module imports nothing heavy at its top (not even rich: Console is only its
# type there).  python/tests/test_startup_imports.py holds the rules, and
# scripts/startup-time measures what each command's start costs.

# The command table: every subcommand, in the order `kcross --help` lists them; the
# module kcross.cli.NAME implements `kcross NAME` (a '-' in NAME is '_' in the module's).
COMMANDS: tuple[str, ...] = (
    "run", "list", "runs", "show", "compare", "check", "history", "report",
    "ab", "aa", "crosscheck", "sysinfo", "import", "tag", "exclude", "mark", "delete",
    "check-store", "push", "pull", "lab", "reproduce", "lava",
)


# Where each command is documented: docs/PAGE in the source tree (README.md is the front
# page; `mkdocs serve` shows docs/ as a site).  Each --help ends by naming its page, and
# each page names the --help it goes with (python/tests/test_docs.py holds both ways).
DOCS: dict[str, str] = {
    "run": "measuring.md", "list": "measuring.md", "runs": "store.md", "show": "measuring.md",
    "compare": "verdicts.md", "check": "verdicts.md", "history": "verdicts.md",
    "report": "report.md", "ab": "verdicts.md", "aa": "verdicts.md", "crosscheck": "verdicts.md",
    "sysinfo": "measuring.md", "import": "store.md", "tag": "store.md",
    "exclude": "verdicts.md", "mark": "store.md",
    "delete": "store.md", "check-store": "store.md", "push": "store.md", "pull": "store.md",
    "lab": "lab.md", "reproduce": "reproduce.md", "lava": "lava.md",
}
DOCUMENTATION = ("documentation: README.md in the kcross source tree, then docs/ (every "
                 "command: docs/commands.md; as a site: mkdocs serve)")


def command(name: str) -> ModuleType:
    """The module of ``kcross NAME`` (kcross.cli.check_store for ``check-store``)."""
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")


class _Version(argparse.Action):
    """``--version``, like argparse's: the version is looked up only when asked for
    (importlib.metadata would cost every start a few tens of milliseconds)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS,
                 help: str = "show program's version number and exit") -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0,
                         help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from .. import __version__

        sys.stdout.write(f"kcross {__version__}\n")
        parser.exit()


def build_parser(only: str | None = None) -> Parser:
    """The parser of every command, or with ``only`` of that command alone: what a start
    naming its command needs (the other 22 command modules not imported, their options
    not built: tens of milliseconds of every ``kcross import`` or ``runs``).  Its
    ``kcross X ...`` parses and ``kcross X --help`` reads exactly as the whole parser's."""
    common = Common.build()
    parser = Parser(prog="kcross", description="Measure the cost of crossing between user "
                    "space and the Linux kernel (syscalls, vDSO, rseq).",
                    epilog=f"{EXIT_CODES}\n\n{ENVIRONMENT}\n\n{DOCUMENTATION}",
                    formatter_class=formatter())
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        module = command(name)
        epilog = "\n\n".join(filter(None, [getattr(module, "EPILOG", None),
                                             f"documentation: docs/{DOCS[name]}"]))
        p = sub.add_parser(name, parents=common[getattr(module, "PARENTS", ())],
                           help=module.HELP,
                           description=getattr(module, "DESCRIPTION", None) or module.HELP,
                           epilog=epilog, formatter_class=formatter())
        module.arguments(p, common)
        p.set_defaults(func=module.main)
    return parser


class _GuardedStdout:
    """sys.stdout whose write errors become kcross errors: :class:`OutputClosed`
    for a reader that went away, :class:`OutputError` for anything else
    (``> /dev/full``), instead of a traceback or Python's complaint at exit."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream  # None when kcross was started with fd 1 closed

    def _fail(self, exc: OSError) -> NoReturn:
        if isinstance(exc, BrokenPipeError):
            raise OutputClosed("") from None
        raise OutputError(f"cannot write to standard output: "
                          f"{exc.strerror or exc}") from None

    def write(self, text: str) -> int:
        if self._stream is None:
            raise OutputError("cannot write to standard output: it is closed")
        try:
            return self._stream.write(text)
        except OSError as exc:
            self._fail(exc)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            self._fail(exc)

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def _failed_import(exc: ImportError) -> str:
    """The module that failed: its name, else the file whose import raised."""
    if exc.name:
        return exc.name
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename if tb is not None else "a module"


def main(argv: Sequence[str] | None = None) -> NoReturn:
    arguments = [*(sys.argv[1:] if argv is None else argv)]  # not list(): cli.list is a command
    try:  # everything: a Ctrl-C while the parser is built (imports) is an interrupt too
        stop_on_signals()  # and SIGTERM, SIGHUP: as Ctrl-C, never a death mid-way
        if not isinstance(sys.stdout, _GuardedStdout):
            sys.stdout = _GuardedStdout(sys.stdout)
        # `kcross NAME ...`: NAME's parser alone; anything else (help, a usage error, a
        # mistyped command and its "did you mean") the whole table's
        parser = build_parser(arguments[0] if arguments and arguments[0] in COMMANDS else None)
        try:
            args = parser.parse_args(arguments)
        except SystemExit:  # --help, --version (or a usage error, on stderr)
            sys.stdout.flush()  # argparse would ignore a failed write
            raise
        if args.command is None:  # `kcross` alone: say what it can do
            parser.print_help(sys.stderr)
            sys.exit(EXIT_USAGE)
        args.argv = arguments
        from ._console import consoles  # rich: not for --help and usage errors

        out, err = consoles()
        status = args.func(args, out, err)
        sys.stdout.flush()
        ignore_stop_signals()  # done: a late one must not kill the exit
    except OutputClosed as exc:
        # Piped into e.g. `head`: stop quietly, like any filter; say only what
        # became of a run in progress.
        _drop_stdout()
        if str(exc):
            sys.stderr.write(f"kcross: {exc}\n")
        sys.exit(exc.exit_code)
    except Interrupted as exc:
        sys.stderr.write(f"kcross: {exc}\n")
        sys.exit(exc.exit_code)
    except KcrossError as exc:
        if isinstance(exc, OutputError):
            _drop_stdout()
        else:
            try:
                sys.stdout.flush()
            except KcrossError:
                _drop_stdout()
        message = " ".join(str(exc).splitlines())  # the contract is one line
        sys.stderr.write(f"kcross: error: {message}\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:  # errors.Stopped too (SIGTERM, SIGHUP)
        interrupted(exc)
    except RuntimeError as exc:  # one Python made of a Ctrl-C (errors.stop_of), or a bug
        stop = stop_of(exc)
        if stop is None:
            raise
        interrupted(stop)
    except ImportError as exc:
        # A dependency that is missing or broken: the installation's fault, not a bug.
        notes = "; ".join(getattr(exc, "__notes__", []))
        sys.stderr.write(f"kcross: error: cannot import {_failed_import(exc)}: "
                         f"{' '.join(str(exc).splitlines())}"
                         f"{'; ' + notes if notes else ''} (the installation is incomplete: "
                         f"reinstall kcross with its dependencies)\n")
        sys.exit(EXIT_BROKEN)
    sys.exit(status)
