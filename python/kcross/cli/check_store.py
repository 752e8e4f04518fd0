"""``kcross check-store``: SQLite's full integrity check of the store (``PRAGMA quick_check``).

Commands check only what they read or write (kcross.store.db says how); this reads every
page, about a second per GB, for when a store is suspect (a disk error, a copy cut
short) or before backing it up.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..views.lines import say
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = "check every page of an SQLite store (SQLite's quick_check; about 1 s per GB)"
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    pass


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores
    from ..store.db import check_integrity

    with stores(args.db) as opened:
        target = opened.target
        if target.path is None:
            say(out, f"{target.display}: a server's pages are its own to check (PostgreSQL: "
                     "data checksums, amcheck); nothing for kcross to check")
            return 0
        check_integrity(target)
    say(out, f"{target.display}: ok (every page checked)")
    return 0
