"""What ``kcross push`` and ``kcross pull`` share: the same options (the other store named
DEST or SRC), opening the two stores in the right order (the source first, so that a
mistake in the runs named creates nothing at the destination) and one line per run.

Copying is store/transfer.py's.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..views.lines import say

if TYPE_CHECKING:
    from rich.console import Console

    from ..store import Store, Target

RUNS_HELP = ("runs to copy: ids, latest, latest~N, latest@HOST or tags (default: every run); "
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


def intermixed(parser: argparse.ArgumentParser) -> None:
    parser.__class__ = type("Intermixed" + type(parser).__name__,
                            (_Intermixed, type(parser)), {})


@dataclass(frozen=True)
class Direction:
    """``push`` or ``pull``: the other store's argument, and which way the runs go."""

    name: str          # the command
    other: str         # its argument naming the other store
    metavar: str
    help: str
    away: bool         # from --db's store to the other (push), or back (pull)

    def stores(self, args: argparse.Namespace) -> tuple[Target, Target]:
        """(source, destination), the source resolved first."""
        from ..store import resolve

        other = getattr(args, self.other)
        if not other:
            raise UserError(f"give the store to {self.name} {'to' if self.away else 'from'}: "
                            f"kcross {self.name} {self.metavar} [RUN...] (a file or URL)")
        if self.away:
            here = resolve(args.db)
            return here, resolve(other)
        there = resolve(other)
        return there, resolve(args.db)


PUSH = Direction("push", "dest", "DEST", "the store to copy to (file path or URL)", away=True)
PULL = Direction("pull", "src", "SRC", "the store to copy from (file path or URL)", away=False)


def arguments(p: argparse.ArgumentParser, way: Direction) -> None:
    """``push`` and ``pull``: the same options, the other store named DEST or SRC."""
    p.usage = f"kcross {way.name} [-h] [--db URL] [--force] {way.metavar} [RUN ...]"
    p.add_argument(way.other, metavar=way.metavar, nargs="?",  # checked in main: a better line
                   help=way.help)
    p.add_argument("runs", nargs="*", metavar="RUN", help=RUNS_HELP)
    p.add_argument("--force", action="store_true",
                   help="also copy runs still running (the copy is marked interrupted)")
    intermixed(p)


def _open_source(target: Target) -> Store:
    from ..store import Store
    from ..store.db import OldSchema
    from ..store.opening import nothing_stored

    try:
        store = Store.open(target, write=False)
    except OldSchema:  # written by an older kcross: upgraded, like any other write would
        store = Store.open(target, write=True)
    if store is None:
        raise nothing_stored(target)
    return store


def main(args: argparse.Namespace, out: Console, way: Direction) -> int:
    """Copy the runs named (every run) between --db's store and the other one."""
    from ..store import Store
    from ..store.transfer import describe, refuse_running, same_store, select_runs, transfer

    src_target, dst_target = way.stores(args)
    refs: Sequence[str] = args.runs
    force: bool = args.force

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
                                each=lambda o: say(out, describe(o)))
        finally:
            dst.close()
    finally:
        src.close()
    copied = sum(o.copied for o in outcomes)
    where = f"to {dst_target.display}" if way.away else f"from {src_target.display}"
    say(out, f"{way.name}ed {copied} run(s) {where}; {len(outcomes) - copied} already there "
              "(skipped)")
    return 0


