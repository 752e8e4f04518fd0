"""``kcross tag RUN NAME``: name a run; without arguments list the tags; --delete NAME."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UserError
from ..views.lines import say
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "name a run (kcross tag RUN NAME), or list or delete tags"
DESCRIPTION = ("Name a run so that every command taking a RUN accepts the name: 'kcross tag "
               "latest base', then 'kcross show base'. A tag names one run: tagging another "
               "run with it moves it. Without arguments: list the tags.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("run", nargs="?", metavar="RUN",
                   help="the run: id, latest, latest~N, latest@HOST or a tag")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="the tag: a letter, then letters, digits, '.', '_' or '-'")
    p.add_argument("--delete", metavar="NAME", help="delete tag NAME (the run stays)")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores
    from ..store.refs import check_tag_name

    if args.delete is not None and args.run is not None:
        raise UserError("give either RUN NAME (to tag) or --delete NAME, not both")
    if args.run is not None and args.name is None:
        raise UserError(f"give the tag's NAME after RUN: kcross tag {args.run} NAME")
    if args.name is not None:
        check_tag_name(args.name)  # before opening (and maybe upgrading) the store
    with stores(args.db) as opened:
        store = opened.changing()
        if args.delete is not None:
            run_id = store.untag(args.delete)
            say(out, f"tag {args.delete} deleted (it named run {run_id}, which stays)")
        elif args.run is not None:
            run_id, before = store.tag_run(args.run, args.name)
            if before is None:
                say(out, f"run {run_id} tagged {args.name}")
            elif before == run_id:
                say(out, f"run {run_id} was already tagged {args.name}")
            else:
                say(out, f"tag {args.name} moved from run {before} to run {run_id}")
        else:
            tags = store.tags()
            if not tags:
                say(err, f"no tags in {store.target.display} (kcross tag RUN NAME)")
            for name, run_id in tags:
                say(out, f"{name}\trun {run_id}")
    return 0


