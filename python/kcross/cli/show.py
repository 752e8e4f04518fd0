"""``kcross show [RUN]``: one stored run, as its table, its JSON lines or an export."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .options import Common, export_option, wide_option
from .run import write_exports

if TYPE_CHECKING:
    from rich.console import Console

HELP = "show a stored run"
PARENTS = ("db", "json")


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("run", nargs="?", default="latest", metavar="RUN",
                   help="run id or 'latest' (default)")
    export_option(p, "the run shown")
    wide_option(p)


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.text import Text

    from .. import export
    from ..fingerprint import HOSTNAME
    from ..store import stores
    from ..views.run import print_run

    exports = export.requested(args.export, db=args.db, json_output=args.json)
    with stores(args.db) as opened:
        stored = opened.reading().load_run(args.run)
    write_exports(exports, stored)
    if args.json:
        # The harness's own format, so that a shown run can be imported elsewhere.
        export.write("json", export.STDOUT, export.ExportData(runs=[stored]))
        return 0
    if any(path == export.STDOUT for _, path in exports):
        return 0  # the export took standard output
    when = stored.started_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    host = HOSTNAME.of(stored.fingerprint) or "?"
    title = f"run {stored.id} · {stored.state or stored.status} · {stored.source} · {when} · {host}"
    from ..series import merge_results  # here: the statistics (numpy), which --json needs not

    # one row per benchmark, its processes pooled
    print_run(out, merge_results(stored.results), stored.fingerprint, title=title,
              wide=args.wide, run_id=stored.id)
    if stored.status != "complete":
        planned = len(stored.plan["benchmarks"]) if stored.plan else 0
        note = f"{stored.status}: {len(stored.results)} of {planned} benchmark(s) stored"
        if stored.error:
            note += f" ({stored.error})"
        out.print(Text(note, style="yellow"))
    return 0
