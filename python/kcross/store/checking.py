"""The store's reads for ``kcross check-store`` alone, beyond SQLite's pages (kcross.store.db's
``check_integrity``): kcross's own schema as this kcross made it (every table and column of
kcross.store.tables; the schema version was checked when the store was opened).

Here, named for its one reader, as kcross.store.history is for ``kcross history``.  Each
check raises :class:`StoreError`, one line naming what is wrong; a store that passes
gives what was checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from ..errors import StoreError
from . import tables as t
from .db import guard
from .migrations import LATEST
from .reading import Reading


@dataclass(frozen=True)
class Checked:
    """What a store that passed was checked for: its schema version, the tables and columns
    found as kcross made them."""

    version: int
    tables: int
    columns: int


def missing_from_schema(conn: sa.Connection) -> list[str]:
    """What of kcross's tables and columns the database lacks, in the tables' order:
    "table tags", "column runs.owner_id"..."""
    inspector = sa.inspect(conn)
    present = set(inspector.get_table_names())
    missing = []
    for table in t.metadata.sorted_tables:
        if table.name not in present:
            missing.append(f"table {table.name}")
            continue
        have = {column["name"] for column in inspector.get_columns(table.name)}
        missing += [f"column {table.name}.{column.name}" for column in table.columns
                    if column.name not in have]
    return missing


def _listed(missing: list[str]) -> str:
    """'table tags is missing; columns runs.a, runs.b are missing'."""
    parts = []
    for kind in ("table", "column"):
        names = [m.split(" ", 1)[1] for m in missing if m.startswith(kind + " ")]
        if names:
            parts.append(f"{kind} {names[0]} is missing" if len(names) == 1
                         else f"{kind}s {', '.join(names)} are missing")
    return "; ".join(parts)


def check_schema(store: Reading) -> Checked:
    """Every table and column of kcross's schema is there (a store opened for reading is
    at this kcross's schema version, ``LATEST``); else one line naming what is not."""
    with guard(store.target, "reading the schema"), store.engine.connect() as conn:
        missing = missing_from_schema(conn)
    if missing:
        raise StoreError(f"{store.target.display}: {_listed(missing)} (kcross's schema "
                         f"{LATEST}; was the database changed by hand or by another "
                         "program?)")
    return Checked(LATEST, len(t.metadata.tables),
                   sum(len(table.columns) for table in t.metadata.tables.values()))
