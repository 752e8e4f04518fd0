"""``kcross runs``: the stored runs, newest first."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .options import Common, print_json, say, stores

if TYPE_CHECKING:
    from rich.console import Console

HELP = "list stored runs, newest first"
PARENTS = ("db", "json")


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    pass


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import render

    with stores(args.db) as opened:
        store = opened.reading_or_none()
        runs = [] if store is None else store.list_runs()
        if not runs:
            say(err, f"no runs stored in {opened.target.display}")
            return 0
    if args.json:
        print_json([_run_json(run) for run in runs])
        return 0
    out.print(render.runs_table(runs))
    return 0


def _run_json(run: Any) -> dict[str, Any]:
    """One line of ``kcross runs --json``: what the table shows, as JSON values."""
    return {"id": run.id, "started_at": run.started_at.isoformat(), "status": run.status,
            "state": run.state or run.status, "live": run.live, "source": run.source,
            "arch": run.arch, "variant": run.variant,
            "unit": run.unit, "hostname": run.hostname, "cpu_model": run.cpu_model,
            "kernel_release": run.kernel_release, "hypervisor": run.hypervisor,
            "results": run.results}
