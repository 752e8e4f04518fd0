"""``kcross runs``: the stored runs, newest first."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..views.lines import print_json, say
from .options import Common, run_count

if TYPE_CHECKING:
    from rich.console import Console

HELP = "list stored runs, newest stored first"
PARENTS = ("db", "json")


# The newest runs shown by default: a fleet's store holds thousands.
SHOWN = 100



def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--last", type=run_count, metavar="N",
                       help=f"show the newest N runs (default {SHOWN}; with --json, all)")
    group.add_argument("--all", action="store_true", help="show every run")
    p.add_argument("--by-start", action="store_true",
                   help="newest start first (time order; a board whose clock is wrong puts "
                        "its runs out of place) instead of newest stored first, the order "
                        "'latest' and 'latest~N' count in")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores
    from ..views.runs import runs_table
    from ..views.table import terminal

    limit = None if args.all or (args.json and args.last is None) else (args.last or SHOWN)
    with stores(args.db) as opened:
        store = opened.reading_or_none()
        runs = [] if store is None else store.list_runs(limit=limit, by_start=args.by_start)
        if store is None or not runs:
            say(err, f"no runs stored in {opened.target.display}")
            return 0
        total = len(runs) if limit is None or len(runs) < limit else store.count_runs()
    if args.json:
        print_json([_run_json(run) for run in runs])
    else:
        out.print(terminal(runs_table(runs)))
    if total > len(runs):
        say(err, f"the newest {len(runs)} of {total} runs shown; --last N or --all for more")
    return 0


def _run_json(run: Any) -> dict[str, Any]:
    """One line of ``kcross runs --json``: what the table shows, as JSON values."""
    return {"id": run.id, "started_at": run.started_at.isoformat(), "status": run.status,
            "state": run.state or run.status, "live": run.live, "source": run.source,
            "arch": run.arch, "variant": run.variant,
            "unit": run.unit, "hostname": run.hostname, "cpu_model": run.cpu_model,
            "kernel_release": run.kernel_release, "hypervisor": run.hypervisor,
            "results": run.results}
