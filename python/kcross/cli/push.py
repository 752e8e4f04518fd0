"""``kcross push DEST [RUN...]``: copy runs from this store (--db) to another."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from . import _transfer
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "copy runs from this store (--db) to another store"
DESCRIPTION = ("Copy runs, with their machine, results and tags, from the store --db names "
               "(default: this machine's) to DEST: an SQLite file or a database URL such as "
               "postgresql+psycopg://user@host/kcross. Each run is copied in one transaction; "
               "a run already at DEST (same records, or same machine, source and start) is "
               "skipped, never stored twice.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    _transfer.arguments(p, _transfer.PUSH)


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    return _transfer.main(args, out, _transfer.PUSH)
