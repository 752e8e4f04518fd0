"""Versioned schema migrations of the result database.

The ``kcross_schema`` table holds one row with the schema version.  ``STEPS[i]``
brings a database from version ``i`` to ``i + 1``; each step is frozen once
released (it describes history, so it must not import the current tables)
and all pending steps run in one transaction.  A database whose version is
newer than ``LATEST`` was written by a newer kcross and is refused rather than
misread.

History:
  1 (kcross 0.1.0): machines, runs, results.
  2: runs.owner_host/owner_pid/owner_id/updated_at (who writes a running run,
     its heartbeat) and runs.content_hash (duplicate imports).
  3: tags (name -> run id): a tag names one run (kcross tag, run --tag, push/pull).
  4: results.process (which harness process of a run measured a result: kcross run
     --processes K stores K results per benchmark); the results' unique key becomes
     (run_id, suite, name, process).  Existing results are process 0.
  5: results.samples (a record's sample arrays packed as binary, store/packing.py; the
     record keeps the rest) and results.overhead_ns/subtracted/overhead_reason (the rest
     of the summary, computed when a result is written so reads need not; the stored
     figures are computed again with them, by kcross.stats.summary_columns); indexes on
     results (name, suite) and runs.machine_id.  Every stored result is converted: its
     record reads back equal, number for number.
  6: a lab machine's kernel is its axis, not its identity (issue 23): every lab machine
     row's fingerprint_hash becomes kcross.fingerprint.identity of its fingerprint (the
     rule of this version: a later change of the rule is a step of its own), the rows that
     then share one merged into the first (its runs moved to it, the earliest first_seen
     kept).  Real machines' rows are left as they are (their kernel stays their identity).
  7: noise_exclusions (run id -> the user's reason): the runs left out of their machine's
     run-to-run noise (kcross exclude).
  8: runs.host_time, kcross_build and lab_kernel_sha256: the fingerprint fields the
     run-to-run noise reads of every run of a machine, as text (store/tables.py
     RUN_TEXT_COLUMNS), filled from each stored run's fingerprint.
  9: process_levels (run, benchmark -> the level of a benchmark measured in several
     harness processes, and the run's design): written with each run from this version on;
     a run stored before has none (its records are read where its level is needed).  An
     index on runs (machine_id, started_at, id): a machine's runs in start order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import sqlalchemy as sa

from ..errors import StoreError
from .tables import json_type

VERSION_TABLE = "kcross_schema"


def _v1_result_columns() -> list[sa.Column]:
    """The results table's columns as version 1 made them (new objects at each call: a
    column belongs to one table); version 4 rebuilds the table with them on SQLite."""
    return [
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("suite", sa.String(64), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("median_ns", sa.Float),
        sa.Column("ci_low_ns", sa.Float),
        sa.Column("ci_high_ns", sa.Float),
        sa.Column("ci_confidence", sa.Float),
        sa.Column("min_ns", sa.Float),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("record", json_type(), nullable=False),
    ]


def _v1_initial(conn: sa.Connection) -> None:
    """Version 1: machines, runs and results."""
    md = sa.MetaData()
    sa.Table(
        "machines", md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("fingerprint_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("hostname", sa.String(255)),
        sa.Column("arch", sa.String(32)),
        sa.Column("cpu_model", sa.String(255)),
        sa.Column("kernel_release", sa.String(255)),
        sa.Column("hypervisor", sa.String(64)),
        sa.Column("fingerprint", json_type(), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "runs", md,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("machine_id", sa.Integer, sa.ForeignKey("machines.id"), nullable=False),
        sa.Column("kcross_version", sa.String(64)),
        sa.Column("git_rev", sa.String(64)),
        sa.Column("mechanism", sa.String(32)),
        sa.Column("timer", sa.String(32)),
        sa.Column("timer_hz", sa.Float),
        sa.Column("command", json_type()),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("fingerprint", json_type(), nullable=False),
        sa.Column("plan", json_type()),
        sa.Column("end_record", json_type()),
    )
    sa.Table("results", md, *_v1_result_columns(), sa.UniqueConstraint("run_id", "suite", "name"))
    md.create_all(conn)


def _v2_run_owner(conn: sa.Connection) -> None:
    """Version 2: owner and heartbeat of running runs, content hash of every run."""
    columns = (("owner_host", sa.String(255)), ("owner_pid", sa.Integer()),
               ("owner_id", sa.String(128)), ("updated_at", sa.DateTime(timezone=True)),
               ("content_hash", sa.String(64)))
    for name, type_ in columns:
        conn.execute(sa.text(f"ALTER TABLE runs ADD COLUMN {name} "
                             f"{type_.compile(conn.dialect)}"))
    conn.execute(sa.text("CREATE INDEX ix_runs_content_hash ON runs (content_hash)"))
    # The last sign of life known for older runs: a stranded one shows as stale.
    conn.execute(sa.text("UPDATE runs SET updated_at = COALESCE(finished_at, started_at)"))


def _v3_tags(conn: sa.Connection) -> None:
    """Version 3: the tags table (a name unique in the store -> one run)."""
    md = sa.MetaData()
    sa.Table("runs", md, sa.Column("id", sa.Integer, primary_key=True))  # for the key only
    tags = sa.Table(
        "tags", md,
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  nullable=False, index=True),
        sa.Column("tagged_at", sa.DateTime(timezone=True), nullable=False),
    )
    tags.create(conn)


def _v4_result_process(conn: sa.Connection) -> None:
    """Version 4: results.process, in the results' unique key."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("ALTER TABLE results ADD COLUMN process INTEGER NOT NULL DEFAULT 0"))
        for unique in sa.inspect(conn).get_unique_constraints("results"):
            if sorted(unique["column_names"]) == ["name", "run_id", "suite"]:
                conn.execute(sa.text(f'ALTER TABLE results DROP CONSTRAINT "{unique["name"]}"'))
        conn.execute(sa.text("ALTER TABLE results ADD CONSTRAINT uq_results_process "
                             "UNIQUE (run_id, suite, name, process)"))
        return
    # SQLite cannot change a table's constraints: the table is rebuilt, rows copied as they
    # are (the same transaction: a failure leaves the old table).
    md = sa.MetaData()
    sa.Table("runs", md, sa.Column("id", sa.Integer, primary_key=True))  # for the key only
    old = _v1_result_columns()
    columns = [column.name for column in old]
    new = sa.Table(
        "results_v4", md, *old,
        sa.Column("process", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.UniqueConstraint("run_id", "suite", "name", "process", name="uq_results_process"),
    )
    new.create(conn)
    listed = ", ".join(columns)
    conn.execute(sa.text(f"INSERT INTO results_v4 ({listed}, process) "
                         f"SELECT {listed}, 0 FROM results"))
    conn.execute(sa.text("DROP TABLE results"))
    conn.execute(sa.text("ALTER TABLE results_v4 RENAME TO results"))


def _json_rows(conn: sa.Connection, table: sa.Table, column: str
               ) -> Iterator[list[tuple[int, Any]]]:
    """The (id, value) of every row of ``table``, its JSON ``column`` parsed (None where it
    is not readable JSON: a value edited by hand), in batches of ids: memory stays small
    whatever the store's size.  SQLite gives the text; PostgreSQL's driver the JSONB already
    parsed."""
    import json

    raw = sa.type_coerce(table.c[column], sa.Text)
    last = 0
    while True:
        rows = conn.execute(sa.select(table.c.id, raw).where(table.c.id > last)
                            .order_by(table.c.id).limit(2000)).all()
        if not rows:
            return
        last = rows[-1][0]
        batch = []
        for row_id, text in rows:
            try:
                value = text if isinstance(text, dict) else json.loads(text)
            except (TypeError, ValueError):
                value = None
            batch.append((row_id, value))
        yield batch


def _v5_packed_samples(conn: sa.Connection) -> None:
    """Version 5: packed sample arrays and the summary's overhead decision, per result."""
    from ..stats import summary_columns
    from .packing import pack

    columns = (("samples", sa.LargeBinary()), ("overhead_ns", sa.Float()),
               ("subtracted", sa.Boolean()), ("overhead_reason", sa.Text()))
    for name, type_ in columns:
        conn.execute(sa.text(f"ALTER TABLE results ADD COLUMN {name} "
                             f"{type_.compile(conn.dialect)}"))
    conn.execute(sa.text("CREATE INDEX ix_results_name ON results (name, suite)"))
    conn.execute(sa.text("CREATE INDEX ix_runs_machine_id ON runs (machine_id)"))
    md = sa.MetaData()
    figures = ("median_ns", "ci_low_ns", "ci_high_ns", "ci_confidence", "min_ns")
    results = sa.Table("results", md, sa.Column("id", sa.Integer, primary_key=True),
                       sa.Column("record", json_type()), *(sa.Column(n, t) for n, t in columns),
                       *(sa.Column(n, sa.Float()) for n in figures))
    for rows in _json_rows(conn, results, "record"):
        updates = []
        for row_id, record in rows:
            if not isinstance(record, dict):
                continue  # a record edited by hand: kept as it is, reads say what is wrong
            stripped, packed = pack(record)
            if record.get("type") != "result":
                continue
            # every figure by today's rule: the stored ones and the decision beside them agree
            updates.append({"row_id": row_id, "record": stripped, "samples": packed,
                            **summary_columns(record)})
        if updates:
            # The keys that are columns become the SET clause (SQLAlchemy's executemany).
            conn.execute(sa.update(results).where(results.c.id == sa.bindparam("row_id")),
                         updates)


def _v6_lab_kernel_axis(conn: sa.Connection) -> None:
    """Version 6: lab machines' rows keyed by the identity without their kernel, merged."""
    import json

    from .. import fingerprint as fields

    md = sa.MetaData()
    machines = sa.Table("machines", md, sa.Column("id", sa.Integer, primary_key=True),
                        sa.Column("fingerprint_hash", sa.String(64)),
                        sa.Column("fingerprint", json_type()),
                        sa.Column("first_seen", sa.DateTime(timezone=True)))
    runs = sa.Table("runs", md, sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("machine_id", sa.Integer))
    raw = sa.type_coerce(machines.c.fingerprint, sa.Text)
    rows = conn.execute(sa.select(machines.c.id, machines.c.fingerprint_hash, raw,
                                  machines.c.first_seen).order_by(machines.c.id)).all()
    merged: dict[str, list[tuple[int, str, Any]]] = {}
    for row_id, digest, text, first_seen in rows:
        try:  # SQLite gives the text; PostgreSQL's driver the JSONB already parsed
            fp = text if isinstance(text, dict) else json.loads(text)
        except (TypeError, ValueError):
            continue  # a row edited by hand: kept as it is
        if not isinstance(fp, dict) or fields.lab(fp) is None:
            continue
        merged.setdefault(fields.identity(fp), []).append((row_id, digest, first_seen))
    for digest, group in merged.items():
        keep, others = group[0][0], [row_id for row_id, _, _ in group[1:]]
        if others:
            conn.execute(sa.update(runs).where(runs.c.machine_id.in_(others))
                         .values(machine_id=keep))
            conn.execute(sa.delete(machines).where(machines.c.id.in_(others)))
        seen = [first for _, _, first in group if first is not None]
        values: dict[str, Any] = {}
        if group[0][1] != digest:
            values["fingerprint_hash"] = digest
        if seen and min(seen) != group[0][2]:
            values["first_seen"] = min(seen)
        if values:
            conn.execute(sa.update(machines).where(machines.c.id == keep).values(**values))


def _v7_noise_exclusions(conn: sa.Connection) -> None:
    """Version 7: the noise_exclusions table (a run the user left out of the noise)."""
    md = sa.MetaData()
    sa.Table("runs", md, sa.Column("id", sa.Integer, primary_key=True))  # for the key only
    sa.Table(
        "noise_exclusions", md,
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("reason", sa.Text),
        sa.Column("excluded_at", sa.DateTime(timezone=True), nullable=False),
    ).create(conn)


def _v8_run_text_columns(conn: sa.Connection) -> None:
    """Version 8: three fingerprint fields of each run as text columns (by today's rule,
    store/tables.py run_columns: the columns and what a new run's row holds agree)."""
    from .tables import run_columns

    names = ("host_time", "kcross_build", "lab_kernel_sha256")   # version 8's, frozen
    for name in names:
        conn.execute(sa.text(f"ALTER TABLE runs ADD COLUMN {name} "
                             f"{sa.Text().compile(conn.dialect)}"))
    runs = sa.Table("runs", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("fingerprint", json_type()),
                    *(sa.Column(name, sa.Text) for name in names))
    for rows in _json_rows(conn, runs, "fingerprint"):
        updates = []
        for row_id, fingerprint in rows:
            if isinstance(fingerprint, dict):  # else edited by hand: NULL, as a field unknown
                columns = run_columns(fingerprint)
                updates.append({"row_id": row_id,
                                **{name: columns[name] for name in names}})
        if updates:
            conn.execute(sa.update(runs).where(runs.c.id == sa.bindparam("row_id")), updates)


def _v9_process_levels(conn: sa.Connection) -> None:
    """Version 9: the process_levels table (empty: the runs stored before have none), and
    an index of each machine's runs in start order."""
    conn.execute(sa.text("CREATE INDEX ix_runs_machine_started ON runs "
                         "(machine_id, started_at, id)"))
    md = sa.MetaData()
    sa.Table("runs", md, sa.Column("id", sa.Integer, primary_key=True))  # for the key only
    sa.Table(
        "process_levels", md,
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("suite", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("processes", sa.Integer),
        sa.Column("per_process", sa.Integer),
        sa.Column("log", sa.Float),
        sa.Column("var", sa.Float),
    ).create(conn)


STEPS: tuple[Callable[[sa.Connection], None], ...] = (_v1_initial, _v2_run_owner, _v3_tags,
                                                      _v4_result_process, _v5_packed_samples,
                                                      _v6_lab_kernel_axis,
                                                      _v7_noise_exclusions,
                                                      _v8_run_text_columns,
                                                      _v9_process_levels)
LATEST = len(STEPS)

_version_table = sa.Table(VERSION_TABLE, sa.MetaData(),
                          sa.Column("version", sa.Integer, nullable=False))


def current_version(conn: sa.Connection, display: str) -> int:
    """Schema version of the database; 0 for an empty one.

    Refuses databases that belong to something else or that this kcross is
    too old to understand, before anything is written to them.
    """
    names = set(sa.inspect(conn).get_table_names())
    if VERSION_TABLE not in names:
        if names:
            shown = ", ".join(sorted(names)[:5])
            raise StoreError(f"{display} is not a kcross database (it holds tables {shown} "
                             f"but no {VERSION_TABLE} table)")
        return 0
    rows = conn.execute(sa.select(_version_table.c.version)).scalars().all()
    if len(rows) != 1:
        raise StoreError(f"{display}: damaged {VERSION_TABLE} table ({len(rows)} rows, "
                         "expected 1)")
    version = rows[0]
    if version > LATEST:
        raise StoreError(f"{display} has schema version {version}, this kcross supports up to "
                         f"{LATEST}: it was written by a newer kcross; upgrade kcross")
    return version


def upgrade(conn: sa.Connection, display: str) -> int:
    """Apply the pending steps inside the caller's transaction; return the old version."""
    version = current_version(conn, display)
    if version == LATEST:
        return version
    if version == 0:
        _version_table.create(conn)
        conn.execute(sa.insert(_version_table).values(version=0))
    for step in STEPS[version:]:
        step(conn)
    conn.execute(sa.update(_version_table).values(version=LATEST))
    return version
