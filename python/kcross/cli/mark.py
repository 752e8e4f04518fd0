"""``kcross mark RUN STATUS``: close a run stranded in 'running' (its process is gone)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..views.lines import say
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "mark a run stranded in 'running' (its process is gone) as failed or interrupted"
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("run", metavar="RUN", help="run id (see 'kcross runs')")
    p.add_argument("status", choices=("failed", "interrupted"), metavar="STATUS",
                   help="failed or interrupted")
    p.add_argument("--force", action="store_true",
                   help="also a run that looks alive or has already finished")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores

    with stores(args.db) as opened:
        was = opened.changing().mark_run(args.run, args.status, force=args.force)
    say(out, f"run {args.run} marked {args.status} (was {was})")
    return 0
