"""What the subcommands' parsers share: the one-line argparse, option types, the option
groups (``--db``, ``--harness``, ``--json``), the options of several commands, and the
help texts of the exit status and the environment.  Command-line things only: what a
command does below its parsing lives outside kcross.cli (opening the store:
kcross.store.opening; plain lines: kcross.views.lines; the run defaults:
kcross.run.defaults).

Nothing here imports numpy, scipy or SQLAlchemy at module level: building the
parser (``kcross --help``, a usage error) must stay fast.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .. import forcings, numtext
from ..errors import ECHO_MAX, EXIT_USAGE, clipped, did_you_mean, shown

if TYPE_CHECKING:
    from ..lab.request import GuestOptions

EXIT_CODES = """\
exit status:
  0    every benchmark ok or skipped
  1    a benchmark failed its own check (a result: the run is complete and stored,
       the table shows the failed row and its reason)
  2    bad input: options, files, database (one line on stderr); an output path
       refused before any work (a directory, the store itself, any database)
  3    the harness failed (crashed, wrote garbage, could not write its output),
       kcross could not write its output (a file, a report, a plot, standard
       output: a full disk, an I/O error), or a module it needs cannot be
       imported
  130  interrupted by SIGINT (Ctrl-C); 143 SIGTERM, 129 SIGHUP: results so far are
       kept, the run is marked interrupted
  141  standard output closed by its reader (e.g. `kcross run --json | head`)"""

ENVIRONMENT = """\
environment:
  KCROSS_DB         the database (SQLAlchemy URL or SQLite path); default
                    $XDG_DATA_HOME/kcross/kcross.db
  KCROSS_HARNESS    the kcross-harness to run; default the installed one
""" + "".join(  # the harness's settings, kcross.forcings' table
    f"  {f.name:<17} {f.help[0]}\n" + "".join(f"{'':20}{line}\n" for line in f.help[1:])
    for f in forcings.FORCINGS if f.set_by is None) + """\
  KCROSS_TEST_SYSROOT  a directory holding a copy of /proc and /sys that the
                    readiness checks read instead of the machine's (for tests)
  An empty variable counts as unset; a bad value is refused (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """argparse that reports mistakes in one line (no usage dump) and exits 2; a name that
    is not one of its choices (a command, a --format) with the closest, not argparse's
    list of every choice (cut at the line's length for the commands)."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        hint = did_you_mean(str(value), names)
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(None, f"no command {shown(str(value))}"
                                               f"{': ' + hint if hint else ''}")
        raise argparse.ArgumentError(action, f"{shown(str(value))} is not one of "
                                             f"{', '.join(names)}{': ' + hint if hint else ''}")

    def error(self, message: str) -> NoReturn:
        message = clipped(message, 4 * ECHO_MAX)  # not an argument of 10,000 characters
        sys.stderr.write(f"kcross: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def number(lo: float, hi: float, *, whole: bool) -> Callable[[str], float]:
    """An argparse type: a number in [lo, hi] (whole numbers only if ``whole``), as
    kcross.numtext reads it: ASCII digits only."""
    kind = "whole number" if whole else "number"

    def convert(text: str) -> float:
        value = numtext.whole(text, lo, hi) if whole else numtext.decimal(text, lo, hi)
        if value is None:
            raise argparse.ArgumentTypeError(f"must be a {kind} from {lo:g} to {hi:g}, "
                                             f"not {shown(text)}")
        return value

    return convert


def run_count(text: str) -> int:
    """An argparse type: how many runs to show (``--last N``), a whole number, 1 or more."""
    value = numtext.whole(text, 1, math.inf)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be a whole number of runs, 1 or more, not "
                                         f"{shown(text)}")
    return value


def benchmark_glob(text: str) -> str:
    """An argparse type: a glob of benchmark names (``--bench``, ``--trace``), not empty: an
    empty one names nothing (``--trace ''`` would otherwise be no trace at all)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name a benchmark, or a glob of them "
                                         "(kcross list names them)")
    return text


class Once(argparse.Action):
    """Store an option's value, refusing a second one: the harness takes one of each."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        previous = getattr(namespace, self.dest, None)
        if previous is not None:
            hint = "one GLOB that matches both, or " if self.metavar == "GLOB" else ""
            parser.error(f"{option_string} given twice ({previous!r} and {values!r}): the "
                         f"harness takes one {'GLOB' if hint else self.dest}; use {hint}one "
                         "run for each")
        setattr(namespace, self.dest, values)


@dataclass(frozen=True)
class Common:
    """The option groups shared by subcommands (argparse parents), by name."""

    groups: dict[str, Parser] = field(default_factory=dict)

    @classmethod
    def build(cls) -> Common:
        db = Parser(add_help=False)
        db.add_argument("--db", metavar="URL",
                        help="SQLAlchemy URL or SQLite file path (default: $KCROSS_DB, else "
                             "$XDG_DATA_HOME/kcross/kcross.db)")
        hp = Parser(add_help=False)
        hp.add_argument("--harness", metavar="PATH",
                        help="kcross-harness to use (default: $KCROSS_HARNESS, else the "
                             "installed one)")
        js = Parser(add_help=False)
        js.add_argument("--json", action="store_true",
                        help="write JSON lines instead of a table")
        return cls({"db": db, "harness": hp, "json": js})

    def __getitem__(self, names: Sequence[str]) -> list[Parser]:
        return [self.groups[n] for n in names]


def wide_option(parser: argparse.ArgumentParser) -> None:
    """``--wide``: the run's full table (``kcross run`` and ``kcross show``)."""
    parser.add_argument("--wide", action="store_true",
                        help="the full table: also the minimum, the counters per op and the "
                             "reasons of skipped benchmarks, and the footer's details (at its "
                             "natural width: pipe it into 'less -S'); by default the table "
                             "fits 120 columns")


def readiness_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--no-readiness``: no line naming what is not tuned for measuring (``kcross run``,
    ``ab``, ``aa``; the line is kcross.run.readiness.not_tuned's).  ``what``: what the
    check never stops, and anything more the help says."""
    parser.add_argument("--no-readiness", action="store_true",
                        help="do not check the machine's readiness first (by default one "
                             "stderr line names what is not tuned for measuring: see 'kcross "
                             f"sysinfo --readiness'; it never stops {what})")


def lab_guest_options(parser: argparse.ArgumentParser, guest: str) -> None:
    """``--source``, ``--no-store`` and ``--timeout``: the options of every command that
    builds and boots lab guests (``kcross lab``, ``kcross reproduce``)."""
    parser.add_argument("--source", metavar="DIR", type=Path,
                        help=f"kcross source tree to build the {guest}s' programs from")
    parser.add_argument("--no-store", action="store_true", help="print, do not store")
    parser.add_argument("--timeout", metavar="S", type=float, default=600.0,
                        help=f"host seconds one {guest} may run (default 600)")


def lab_machine_options(parser: argparse.ArgumentParser) -> None:
    """``--append``, ``--cpu``, ``--machine-opt``, ``--suite``, ``--bench`` and ``--env``:
    the lab guest's configuration, what it counts and the settings its harness gets
    (``kcross lab``, ``kcross lava job``)."""
    from ..lab.machines import DEFAULT_SUITES

    parser.add_argument("--append", metavar="ARGS", default="",
                        help="add ARGS to the kernel command line (after 'console=... quiet "
                             "loglevel=1 panic=-1')")
    parser.add_argument("--cpu", metavar="MODEL", help="QEMU -cpu model (default: the arch's)")
    parser.add_argument("--machine-opt", metavar="K=V", action="append", default=[],
                        help="add K=V to QEMU's -M (e.g. cap-cfpc=broken on pseries); "
                             "repeatable")
    parser.add_argument("--suite", metavar="S[,S...]",
                        help=f"harness suites to count (default: {','.join(DEFAULT_SUITES)})")
    parser.add_argument("--bench", metavar="GLOB", type=benchmark_glob,
                        help="only benchmarks matching GLOB")
    parser.add_argument("--env", metavar="NAME=VALUE", action="append", default=[],
                        help="a setting of the guest's harness (e.g. KCROSS_RSEQ=off; the "
                             "names: kcross --help, environment), recorded in the runs' "
                             "fingerprints; repeatable")


def lab_release_option(parser: argparse.ArgumentParser) -> None:
    """``--release NAME``: which Debian release's kernel the guest boots (``kcross lab``,
    ``kcross lava job``)."""
    from ..lab.releases import DEFAULT, NAMES

    parser.add_argument("--release", metavar="NAME",
                        help=f"boot the current kernel of this Debian release ({', '.join(NAMES)}; "
                             f"default {DEFAULT}), fetched and cached as the default's is")


def guest_options(args: argparse.Namespace) -> GuestOptions:
    """What :func:`lab_machine_options` parsed, as the lab's jobs take it."""
    from ..lab.request import GuestOptions

    return GuestOptions(append=args.append, cpu=args.cpu, machine_opts=tuple(args.machine_opt),
                        suite=args.suite, bench=args.bench, env=tuple(args.env))


def export_option(parser: argparse.ArgumentParser, when: str) -> None:
    """``--export FORMAT FILE`` (repeatable; light: the exporters load when they write);
    ``when`` says what is written and when ("the run shown").  :func:`kcross.export.requested`
    checks the pairs."""
    from ..export import FORMATS

    formats = "; ".join(f"{name}: {summary}" for name, (_, summary) in FORMATS.items())
    parser.add_argument("--export", nargs=2, action="append", metavar=("FORMAT", "FILE"),
                        help=f"also write the results to FILE ({when}; - for standard output, "
                             f"instead of the table); may be given several times. {formats}")


def formatter() -> type[argparse.HelpFormatter]:
    return argparse.RawDescriptionHelpFormatter
