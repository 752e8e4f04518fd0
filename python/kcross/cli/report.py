"""``kcross report [RUN...] -o FILE``: stored runs as one self-contained static HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_OUTPUT = "report.html"


HELP = "write stored runs as one self-contained HTML page (tables, plots, comparisons)"
DESCRIPTION = ("Write one static HTML page of stored runs: the fingerprints, a table and the "
               "samples' distribution per suite, the comparisons of each run with the first, "
               "thread-scaling curves, and lab instruction counts by arch. The page has no "
               "script and loads nothing from elsewhere.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Any) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="run id, latest, latest~N, a tag or latest@HOST (default: latest); "
                        "the first is the base the others are compared with")
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT, metavar="FILE",
                   help=f"where to write the page (default: {DEFAULT_OUTPUT}; - for stdout)")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import outfile, report
    from ..judge.comparison import history_noise
    from ..series import series_of_results
    from ..store import stores
    from ..views.lines import say

    to_stdout = args.output == "-"
    path = Path(args.output)
    if not to_stdout:
        outfile.check(path, "-o", db=args.db)  # not a store, not in a missing directory...
    refs = list(dict.fromkeys(args.runs or ["latest"]))   # a run named twice is shown once
    with stores(args.db) as opened:
        store = opened.reading()
        # validated when they were written: read as they are (kcross show checks them)
        runs = [store.load_run(ref, check=False) for ref in refs]
        unique = list({run.id: run for run in runs}.values())  # latest and its id: one run
        tags = {s.id: s.tags for s in store.list_runs(ids=[run.id for run in unique])}
        noise = history_noise(store, [s for run in unique for s in series_of_results(
            f"run {run.id}", run.fingerprint, run.results)])
        page = report.html(unique, tags=tags, noise=noise)
    if to_stdout:
        sys.stdout.write(page)
        return 0
    outfile.write(path, page, "-o")
    size = len(page.encode())
    what = ", ".join(f"run {r.id}" for r in unique)
    say(err, f"wrote {path} ({what}; {size / 1024:,.0f} KiB)")
    return 0
