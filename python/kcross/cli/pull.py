"""``kcross pull SRC [RUN...]``: copy runs from another store into this one (--db)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UserError
from . import _transfer
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "copy runs from another store into this one (--db)"
DESCRIPTION = ("Copy runs, with their machine, results and tags, from SRC (an SQLite file or "
               "a database URL) into the store --db names (default: this machine's). The same "
               "rules as 'kcross push'.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    _transfer.arguments(p, "pull", "src", "SRC", "the store to copy from (file path or URL)")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import resolve

    if not args.src:
        raise UserError("give the store to pull from: kcross pull SRC [RUN...] (a file or URL)")
    return _transfer.copy(resolve(args.src), resolve(args.db), args.runs, "pulled",
                          args.force, out)
