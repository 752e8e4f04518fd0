"""``kcross history``: one benchmark's trend over the stored runs, a table and a plot."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..views.lines import print_json, say
from .options import run_count

if TYPE_CHECKING:
    from rich.console import Console

EPILOG = """\
Each stored run holding the benchmark is one row, oldest first: its median with
the 95% distribution-free CI, and the change against the previous run of the
same host (hostname, architecture and CPU model: a new kernel on the same box is
compared with the old one; the machine column's hash, the store's machine
identity, changes with kernel, command line or forced settings). Changes are
judged like 'kcross compare': Mann-Whitney U, Holm-adjusted across the changes
shown (the family is the rows shown: --last and --machine change it), the ratio
of medians with its bootstrap CI. The newest 50 runs holding the benchmark are
shown (--last N, --all); stderr says how many were left out. The first row of a
host is still compared with that host's previous run, shown or not.

examples:
  kcross history syscall/getppid-inline
  kcross history 'getppid-*' --machine myhost --last 10
  kcross history clock_gettime-vdso --plot trend.svg"""



HELP = "one benchmark's trend over the stored runs (table, plot)"
DESCRIPTION = ("The trend of one benchmark over the stored runs: its median with CI,\nand "
               "the change against the previous run of the same host.")
PARENTS = ("db", "json")

# The newest runs holding the benchmark shown by default (--last N, --all): a trend of
# thousands of runs is neither a readable table nor judged in a second (about 6 ms a change).
SHOWN = 50


def arguments(p: argparse.ArgumentParser, common: Any) -> None:
    p.add_argument("bench", metavar="BENCH",
                   help="suite/name or name; a GLOB (fnmatch: *, ?, [...]) shows each match")
    p.add_argument("--machine", metavar="FP",
                   help="only show runs of this hostname or machine hash prefix (4+ hex "
                        "digits, as in the machine column); each is still compared with its "
                        "host's previous run")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--last", type=run_count, metavar="N",
                       help=f"show the newest N runs holding it (default {SHOWN})")
    group.add_argument("--all", action="store_true",
                       help="show every run holding it (each change judged: about 6 ms each)")
    p.add_argument("--plot", type=Path, metavar="FILE",
                   help="also draw the trend into FILE (.svg or .png): median with CI error "
                        "bars over time, one line per host")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import outfile
    from ..history import trend as history
    from ..store import stores
    from ..views import history as view
    from ..views.lines import say
    from ..views.table import show

    if args.plot is not None:  # refused before anything is read
        view.check_plot_path(args.plot)
        outfile.check(args.plot, "--plot", db=args.db)
    with stores(args.db) as opened:
        t = history.trend(opened.reading(), args.bench, machine=args.machine,
                          last=None if args.all else (args.last or SHOWN))
    if args.json:
        print_json(view.json_records(t))
        if args.plot is not None:
            view.plot(t, args.plot)
        _left_out(t, err)
        return 0
    for table in view.tables(t):
        show(out, table, ascii_only=not out.is_terminal)
    say(out, view.legend(t))
    if args.plot is not None:
        view.plot(t, args.plot)
        say(err, f"plot written to {args.plot}")
    _left_out(t, err)
    return 0


def _left_out(t: Any, err: Console) -> None:
    """On stderr, as ``kcross runs`` says it: how many runs the window left out."""
    if t.total_runs > t.runs:
        say(err, f"the newest {t.runs} of {t.total_runs} runs holding {t.pattern} shown; "
                 "--last N or --all for more")
