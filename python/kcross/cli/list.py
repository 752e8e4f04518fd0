"""``kcross list``: the benchmarks the harness knows, and what this machine cannot run."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import SchemaError, UserError
from ..views.lines import print_json
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "list the benchmarks the harness knows"
PARENTS = ("harness", "json")


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("--suite", help="only this suite")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..run import harness
    from ..views.runs import bench_table
    from ..views.table import terminal

    extra = ["--suite", args.suite] if args.suite else []
    command = harness.locate(args.harness)
    try:
        records = harness.collect(command, ["list", "--json", *extra])
    except UserError:   # the harness refused the suite: say the closest
        said = harness.selection_error(command, args.suite, None)
        if said is None:
            raise
        raise UserError(said) from None
    wrong = [r["type"] for r in records if r["type"] != "bench"]
    if wrong:
        raise SchemaError(f"harness 'list' wrote a {wrong[0]} record, expected bench records")
    if args.json:
        print_json(records)
    else:
        out.print(terminal(bench_table(records)))
    return 0
