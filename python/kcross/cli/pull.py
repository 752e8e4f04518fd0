"""``kcross pull SRC [RUN...]``: copy runs from another store into this one (--db)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

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
    _transfer.arguments(p, _transfer.PULL)


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    return _transfer.main(args, out, _transfer.PULL)
