"""``kcross push``, ``kcross pull`` and ``kcross tag``: share runs between stores, name runs.

A team keeps one store (a PostgreSQL server, or a shared SQLite file) and each
machine its own; ``push`` copies runs from this machine's store (``--db``) to
another, ``pull`` the other way.  Copying is store/transfer.py's; this module
parses, opens the two stores in the right order (the source first, so that a
mistake in the runs named creates nothing at the destination) and reports one
line per run and a total.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from ..errors import UserError

if TYPE_CHECKING:
    from ..store import Store, Target

_RUNS_HELP = ("runs to copy: ids, latest, latest~N, latest@HOST or tags (default: every run); "
              "runs already there are skipped")


class _Intermixed(argparse.ArgumentParser):
    """Options anywhere among the positionals: ``kcross pull SRC --db X RUN`` too.

    argparse takes a run of positionals in one go, so a RUN after an option would be
    "unrecognized"; its intermixed parsing (which calls parse_known_args itself) is not.
    """

    _inside = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


def _intermixed(parser: argparse.ArgumentParser) -> None:
    parser.__class__ = type("Intermixed" + type(parser).__name__,
                            (_Intermixed, type(parser)), {})


def _transfer_parser(sub: Any, db: list[argparse.ArgumentParser], name: str, dest: str,
                     metavar: str, func: Any, *, help: str, where: str,
                     description: str) -> None:
    """``push`` and ``pull``: the same options, the other store named DEST or SRC."""
    p = sub.add_parser(name, parents=db, help=help, description=description,
                       usage=f"kcross {name} [-h] [--db URL] [--force] {metavar} [RUN ...]")
    p.add_argument(dest, metavar=metavar, nargs="?",  # checked in cmd_*: a better line
                   help=where)
    p.add_argument("runs", nargs="*", metavar="RUN", help=_RUNS_HELP)
    p.add_argument("--force", action="store_true",
                   help="also copy runs still running (the copy is marked interrupted)")
    p.set_defaults(func=func)
    _intermixed(p)


def add_parser(sub: Any, parents: Any) -> None:
    db = [parents.db]
    _transfer_parser(
        sub, db, "push", "dest", "DEST", cmd_push,
        help="copy runs from this store (--db) to another store",
        where="the store to copy to (file path or URL)",
        description="Copy runs, with their machine, results and tags, from the store --db "
        "names (default: this machine's) to DEST: an SQLite file or a database URL such as "
        "postgresql+psycopg://user@host/kcross. Each run is copied in one transaction; a run "
        "already at DEST (same records, or same machine, source and start) is skipped, never "
        "stored twice.")
    _transfer_parser(
        sub, db, "pull", "src", "SRC", cmd_pull,
        help="copy runs from another store into this one (--db)",
        where="the store to copy from (file path or URL)",
        description="Copy runs, with their machine, results and tags, from SRC (an SQLite "
        "file or a database URL) into the store --db names (default: this machine's). The "
        "same rules as 'kcross push'.")

    p = sub.add_parser(
        "tag", parents=db, help="name a run (kcross tag RUN NAME), or list or delete tags",
        description="Name a run so that every command taking a RUN accepts the name: "
        "'kcross tag latest base', then 'kcross show base'. A tag names one run: tagging "
        "another run with it moves it. Without arguments: list the tags.")
    p.add_argument("run", nargs="?", metavar="RUN",
                   help="the run: id, latest, latest~N, latest@HOST or a tag")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="the tag: a letter, then letters, digits, '.', '_' or '-'")
    p.add_argument("--delete", metavar="NAME", help="delete tag NAME (the run stays)")
    p.set_defaults(func=cmd_tag)


def cmd_push(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import resolve

    if not args.dest:
        raise UserError("give the store to push to: kcross push DEST [RUN...] (a file or URL)")
    return _copy(resolve(args.db), resolve(args.dest), args.runs, "pushed", args.force, out)


def cmd_pull(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import resolve

    if not args.src:
        raise UserError("give the store to pull from: kcross pull SRC [RUN...] (a file or URL)")
    return _copy(resolve(args.src), resolve(args.db), args.runs, "pulled", args.force, out)


def _open_source(target: Target) -> Store:
    from ..store import Store
    from ..store.db import OldSchema

    try:
        store = Store.open(target, write=False)
    except OldSchema:  # written by an older kcross: upgraded, like any other write would
        store = Store.open(target, write=True)
    if store is None:
        raise UserError(f"no runs stored in {target.display}")
    return store


def _copy(src_target: Target, dst_target: Target, refs: Sequence[str], verb: str,
          force: bool, out: Console) -> int:
    from ..store import Store
    from ..store.transfer import describe, refuse_running, same_store, select_runs, transfer

    if same_store(src_target, dst_target):
        raise UserError(f"{src_target.display} is both source and destination: nothing to copy")
    src = _open_source(src_target)
    try:
        ids = select_runs(src, refs)
        refuse_running(src, ids, force=force)
        dst = Store.open(dst_target, write=True)  # created or upgraded only now
        assert dst is not None  # opening for writing creates the database
        try:
            outcomes = transfer(src, dst, ids, force=force,
                                each=lambda o: _say(out, describe(o)))
        finally:
            dst.close()
    finally:
        src.close()
    copied = sum(o.copied for o in outcomes)
    where = f"to {dst_target.display}" if verb == "pushed" else f"from {src_target.display}"
    _say(out, f"{verb} {copied} run(s) {where}; {len(outcomes) - copied} already there "
              "(skipped)")
    return 0


def cmd_tag(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import Store, resolve
    from ..store.refs import check_tag_name

    if args.delete is not None and args.run is not None:
        raise UserError("give either RUN NAME (to tag) or --delete NAME, not both")
    if args.run is not None and args.name is None:
        raise UserError(f"give the tag's NAME after RUN: kcross tag {args.run} NAME")
    if args.name is not None:
        check_tag_name(args.name)  # before opening (and maybe upgrading) the store
    store = Store.open_existing(resolve(args.db))
    try:
        if args.delete is not None:
            run_id = store.untag(args.delete)
            _say(out, f"tag {args.delete} deleted (it named run {run_id}, which stays)")
        elif args.run is not None:
            run_id, before = store.tag_run(args.run, args.name)
            if before is None:
                _say(out, f"run {run_id} tagged {args.name}")
            elif before == run_id:
                _say(out, f"run {run_id} was already tagged {args.name}")
            else:
                _say(out, f"tag {args.name} moved from run {before} to run {run_id}")
        else:
            tags = store.tags()
            if not tags:
                _say(err, f"no tags in {store.target.display} (kcross tag RUN NAME)")
            for name, run_id in tags:
                _say(out, f"{name}\trun {run_id}")
    finally:
        store.close()
    return 0


def _say(console: Console, line: str) -> None:
    """One line as it is: no markup, no highlighting, not wrapped (paths and URLs are long)."""
    console.print(Text(line), soft_wrap=True, highlight=False)
