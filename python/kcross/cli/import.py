"""``kcross import FILE``: store a capture of ``kcross-harness run --json`` from elsewhere."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .options import Common, say, stores

if TYPE_CHECKING:
    from rich.console import Console

HELP = "store the output of 'kcross-harness run --json' from elsewhere"
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("file", type=Path, metavar="FILE", help="a JSON-lines capture, or - for stdin")
    p.add_argument("--force", action="store_true",
                   help="store it even if the same records are already stored")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..importer import import_file

    with stores(args.db) as opened:
        done = import_file(opened.writing, args.file, force=args.force)
    name = "stdin" if str(args.file) == "-" else str(args.file)
    if done.dropped_partial_line is not None:
        say(err, f"kcross: {name} line {done.dropped_partial_line} was cut off mid-record "
                 "and is ignored")
    state = "complete" if done.complete else "interrupted (no end record)"
    say(out, f"imported {name} as run {done.run_id}: {state}, "
             f"{done.results} of {done.planned} benchmark(s)")
    return 0
