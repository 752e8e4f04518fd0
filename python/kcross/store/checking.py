"""The store's reads for ``kcross check-store`` alone, beyond SQLite's pages (kcross.store.db's
``check_integrity``): kcross's own schema as this kcross made it (every table and column of
kcross.store.tables; the schema version was checked when the store was opened), and every
run's records against the content hash stored with them (kcross.store.writing's
``content_hash``, the one computation of it, recomputed over the run as it reads back).

Here, named for its one reader, as kcross.store.history is for ``kcross history``.  Each
check raises :class:`StoreError`, one line naming what is wrong; a store that passes
gives what was checked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sqlalchemy as sa

from ..errors import StoreError, UserError
from . import tables as t
from .db import guard
from .migrations import LATEST
from .reading import Reading
from .writing import content_hash

# The changed runs one line names by id (the rest are counted).
NAMED_MAX = 20


@dataclass(frozen=True)
class Checked:
    """What a store that passed was checked for: its schema version, the tables and columns
    found as kcross made them, the runs whose content hash was recomputed (a run stored
    before schema 2, or never finished by the process that wrote it, has none)."""

    version: int
    tables: int
    columns: int
    hashed: int = 0


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


def changed_runs(store: Reading) -> tuple[list[int], int]:
    """The runs whose records no longer give the content hash stored with them (a record
    that no longer reads back is one), and how many runs were recomputed."""
    with guard(store.target, "reading the runs' content hashes"), \
            store.engine.connect() as conn:
        stored = conn.execute(sa.select(t.runs.c.id, t.runs.c.content_hash)
                              .where(t.runs.c.content_hash.is_not(None))
                              .order_by(t.runs.c.id)).all()
    changed = []
    for run_id, digest in stored:
        try:
            run = store.load_run(run_id, check=False)
        except StoreError:
            changed.append(run_id)
            continue
        except UserError:  # deleted meanwhile
            continue
        if content_hash([run.fingerprint, run.plan, *run.results, run.end]) != digest:
            changed.append(run_id)
    return changed, len(stored)


def check_runs(store: Reading, checked: Checked) -> Checked:
    """Every run's content hash recomputed; one line naming the runs that no longer match."""
    changed, hashed = changed_runs(store)
    if changed:
        ids = ", ".join(map(str, changed[:NAMED_MAX]))
        more = f" and {len(changed) - NAMED_MAX} more" if len(changed) > NAMED_MAX else ""
        which = f"run {ids} no longer matches the content hash stored with it: its" \
            if len(changed) == 1 else \
            f"runs {ids}{more} no longer match the content hash stored with each: their"
        raise StoreError(f"{store.target.display}: {which} records changed after they were "
                         "stored (a disk error, or the database changed by hand or by another "
                         "program); 'kcross show RUN' reads what is there now")
    return replace(checked, hashed=hashed)
