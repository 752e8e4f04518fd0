"""``kcross check-store``: the whole store checked, for when it is suspect (a disk error, a
copy cut short, a hand or another program at work in it) or before backing it up.

SQLite's full integrity check (``PRAGMA quick_check``: every page, about a second per GB;
commands check only what they read or write, kcross.store.db says how), then kcross's own
schema, on SQLite and PostgreSQL alike (kcross.store.checking): the schema version, every
table and every column; and every run's records against the content hash stored with them.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..views.lines import say
from ..views.text import counted
from .options import Common

if TYPE_CHECKING:
    from rich.console import Console

HELP = ("check a store: every page of an SQLite store (SQLite's quick_check), kcross's "
        "tables and columns, every run's content hash")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    pass


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..store import stores
    from ..store.checking import check_runs, check_schema
    from ..store.db import OldSchema, check_integrity

    with stores(args.db) as opened:
        target = opened.target
        pages = "every page checked" if target.path is not None else \
            "a server's pages are its own to check (PostgreSQL: data checksums, amcheck)"
        check_integrity(target)
        try:
            store = opened.reading()
        except OldSchema as exc:
            say(out, f"{target.display}: ok ({pages}); {exc}; its tables are checked then")
            return 0
        checked = check_runs(store, check_schema(store))
    say(out, f"{target.display}: ok ({pages}; schema {checked.version}: {checked.tables} "
             f"tables, {checked.columns} columns; the content hash of "
             f"{counted(checked.hashed, 'run')} recomputed)")
    return 0
