"""The database tables as this version of kcross queries them (schema version in migrations.py).

Portable SQLAlchemy Core types only, so the same code serves SQLite and
PostgreSQL; JSON columns become JSONB on PostgreSQL so they can be queried.
Whenever these definitions change, add a migration step that brings an older
database to exactly this shape (tests compare the two).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .. import fingerprint as fields


class Json(sa.types.TypeDecorator[Any]):
    """JSON stored as text on SQLite, JSONB on PostgreSQL; Python None is SQL NULL.

    PostgreSQL's type is looked up when a PostgreSQL connection asks for it: importing
    SQLAlchemy's PostgreSQL dialect costs every start a fiftieth of a second, which a
    ``kcross import`` into an SQLite file should not pay."""

    impl = sa.JSON
    cache_ok = True
    hashable = False   # as sa.JSON: a dict or list is no hashable value

    def __init__(self) -> None:
        super().__init__(none_as_null=True)

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB(none_as_null=True))
        return dialect.type_descriptor(sa.JSON(none_as_null=True))


def json_type() -> sa.types.TypeEngine[Any]:
    """The type of a JSON column (:class:`Json`)."""
    return Json()


metadata = sa.MetaData()

schema_version = sa.Table(
    "kcross_schema", metadata,
    sa.Column("version", sa.Integer, nullable=False),
)

# One row per distinct machine configuration: the hash covers only the
# fingerprint fields that change what is measured (kcross.fingerprint.identity).
machines = sa.Table(
    "machines", metadata,
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

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    sa.Column("status", sa.String(16), nullable=False),  # running/complete/interrupted/failed
    sa.Column("machine_id", sa.Integer, sa.ForeignKey("machines.id"), nullable=False,
              index=True),  # since schema 5
    sa.Column("kcross_version", sa.String(64)),
    sa.Column("git_rev", sa.String(64)),
    sa.Column("mechanism", sa.String(32)),
    sa.Column("timer", sa.String(32)),
    sa.Column("timer_hz", sa.Float),
    sa.Column("command", json_type()),
    sa.Column("source", sa.String(8), nullable=False),  # run/import/lab (writing.RUN_SOURCES)
    sa.Column("error", sa.Text),
    sa.Column("fingerprint", json_type(), nullable=False),  # as received, incl. host.time
    sa.Column("plan", json_type()),
    sa.Column("end_record", json_type()),
    # Since schema 2: who writes a running run, and its heartbeat (store/liveness.py).
    sa.Column("owner_host", sa.String(255)),
    sa.Column("owner_pid", sa.Integer),
    sa.Column("owner_id", sa.String(128)),
    sa.Column("updated_at", sa.DateTime(timezone=True)),
    # SHA-256 of the run's records in canonical form: the same capture imported twice.
    sa.Column("content_hash", sa.String(64), index=True),
    # Since schema 8: fingerprint fields as text (RUN_TEXT_COLUMNS below).
    sa.Column("host_time", sa.Text),
    sa.Column("kcross_build", sa.Text),
    sa.Column("lab_kernel_sha256", sa.Text),
    # Since schema 9: a machine's runs in start order, for "its newest run before this
    # start" (history's run before the page: 68 ms at 10,000 runs of one machine without it,
    # every run of the machine probed, then sorted; 1 ms with it)
    sa.Index("ix_runs_machine_started", "machine_id", "started_at", "id"),
)

results = sa.Table(
    "results", metadata,
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
    # Since schema 5: without its sample arrays, which are in ``samples`` (store/packing.py).
    sa.Column("record", json_type(), nullable=False),
    # Since schema 4: which harness process of the run measured it (kcross run --processes).
    sa.Column("process", sa.Integer, nullable=False, server_default=sa.text("0")),
    # Since schema 5: the record's sample arrays, packed (store/packing.py), and the rest of
    # its summary (kcross.stats.summary_columns): the empty loop's median and decision.
    sa.Column("samples", sa.LargeBinary),
    sa.Column("overhead_ns", sa.Float),
    sa.Column("subtracted", sa.Boolean),
    sa.Column("overhead_reason", sa.Text),
    sa.UniqueConstraint("run_id", "suite", "name", "process", name="uq_results_process"),
    sa.Index("ix_results_name", "name", "suite"),
)

# Since schema 3: a tag names one run (kcross tag, kcross run --tag); a run may have several.
tags = sa.Table(
    "tags", metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              nullable=False, index=True),
    sa.Column("tagged_at", sa.DateTime(timezone=True), nullable=False),
)

# Since schema 7: the runs a user left out of their machine's run-to-run noise (kcross
# exclude): a run in it feeds no estimate (kcross.judge.noise), whatever reads the store.
noise_exclusions = sa.Table(
    "noise_exclusions", metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("reason", sa.Text),
    sa.Column("excluded_at", sa.DateTime(timezone=True), nullable=False),
)

# Since schema 9: the level of each benchmark a run measured in several harness processes
# (kcross.stats.run_level of its merged series: the log of its pooled median and the
# variance of that log its processes show, or one process's median CI when only one
# measured it; NULL where there is none, all four where the benchmark has no figures), and
# its design
# (processes, samples per process), computed once when the run is stored (store/writing.py
# process_levels) so that the run-to-run noise need not read the records of the newest runs
# of a machine again (kcross.judge.noise).  A run stored before has no rows: its records are
# read.
process_levels = sa.Table(
    "process_levels", metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("suite", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("processes", sa.Integer),
    sa.Column("per_process", sa.Integer),
    sa.Column("log", sa.Float),
    sa.Column("var", sa.Float),
)


# A runs row's copies of fingerprint fields (the whole fingerprint is stored beside them),
# for queries and ``kcross runs``.
RUN_COLUMNS: dict[str, fields.Field] = {
    "kcross_version": fields.KCROSS_VERSION, "git_rev": fields.KCROSS_REVISION,
    "mechanism": fields.SYSCALL_MECHANISM, "timer": fields.TIMER_SOURCE,
    "timer_hz": fields.TIMER_HZ}
# Since schema 8, as text: what the run-to-run noise reads of every stored run of a machine
# (its start, its harness's build, a lab run's kernel), so that no query opens the whole
# fingerprint of thousands of runs (PostgreSQL decompresses a JSONB value once for each
# path read from it: 0.06 s per path at 10,000 runs).
RUN_TEXT_COLUMNS: dict[str, fields.Field] = {
    "host_time": fields.HOST_TIME, "kcross_build": fields.KCROSS_BUILD,
    "lab_kernel_sha256": fields.LAB_KERNEL_SHA256}


def run_columns(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """A runs row's copies of its fingerprint's fields: RUN_COLUMNS' as they are,
    RUN_TEXT_COLUMNS' as text (Field.text)."""
    return {**{column: field.of(fingerprint) for column, field in RUN_COLUMNS.items()},
            **{column: field.text(fingerprint) for column, field in RUN_TEXT_COLUMNS.items()}}


def insert_new(conn: sa.Connection, table: sa.Table, values: dict[str, Any], key: str) -> None:
    """``INSERT ... ON CONFLICT (key) DO NOTHING``: a row another writer may have added
    first (a SELECT, then an INSERT, lets two processes both miss it and one fail on the
    unique key).  Each dialect's own INSERT; PostgreSQL's imported only on PostgreSQL."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        conn.execute(postgresql.insert(table).values(**values)
                     .on_conflict_do_nothing(index_elements=[key]))
    else:
        from sqlalchemy.dialects import sqlite

        conn.execute(sqlite.insert(table).values(**values)
                     .on_conflict_do_nothing(index_elements=[key]))
