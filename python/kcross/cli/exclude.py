"""``kcross exclude RUN``: leave a run out of its machine's run-to-run noise; --undo; a list."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UserError
from ..views.lines import say
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "leave a run out of its machine's run-to-run noise (or --undo); list the runs left out"
DESCRIPTION = ("Leave a stored run out of the run-to-run noise every verdict between separate "
               "runs of its machine includes (compare, check, history, sysinfo --readiness): "
               "a run you know was disturbed, or measured something else. The run stays "
               "stored, shown and comparable; only the noise estimates leave it out. "
               "Without RUN: list the runs left out.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("run", nargs="?", metavar="RUN",
                   help="the run: id, latest, latest~N, latest@HOST or a tag")
    p.add_argument("--reason", metavar="TEXT", help="why (shown by the list)")
    p.add_argument("--undo", action="store_true",
                   help="let RUN feed its machine's noise again")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores

    if args.run is None and (args.undo or args.reason is not None):
        raise UserError("give the RUN to exclude (--reason) or to include again (--undo)")
    if args.undo and args.reason is not None:
        raise UserError("--reason goes with excluding a run, not with --undo")
    with stores(args.db) as opened:
        if args.run is None:
            store = opened.reading_or_none()
            listed = [] if store is None else store.exclusions()
            if not listed:
                say(err, f"no run is left out of the noise in {opened.target.display} "
                         "(kcross exclude RUN)")
            for run_id, reason in listed:
                say(out, f"run {run_id}" + (f"\t{reason}" if reason else ""))
            return 0
        store = opened.changing()
        if args.undo:
            run_id, was = store.include_run(args.run)
            say(out, f"run {run_id} feeds its machine's run-to-run noise again" if was else
                f"run {run_id} was not left out of the noise")
        else:
            run_id, was = store.exclude_run(args.run, args.reason)
            say(out, f"run {run_id} {'was already' if was else 'is now'} left out of its "
                     "machine's run-to-run noise")
    return 0
