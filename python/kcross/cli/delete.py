"""``kcross delete RUN``: delete a run and its results."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..views.lines import say
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "delete a run and its results"
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("run", metavar="RUN", help="run id (see 'kcross runs')")
    p.add_argument("--force", action="store_true", help="also a run that looks alive")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores

    with stores(args.db) as opened:
        gone = opened.changing().delete_run(args.run, force=args.force)
    say(out, f"run {args.run} deleted with its {gone} result(s)")
    return 0
