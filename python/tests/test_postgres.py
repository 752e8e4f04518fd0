"""The same code against PostgreSQL, when a server is provided.

Set KCROSS_TEST_POSTGRES_URL (e.g. postgresql+psycopg://postgres@127.0.0.1:5432/kcross_test)
to run it.  Every test gets a new, empty schema of its own (``pg_schema``): the database
is shared (with other checkouts, other kcross versions, a CI run beside a developer's), so
no test reads or writes its default schema, whose kcross schema version may be another's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    SCHEMA_8_RUN_COLUMNS,
    SCHEMA_9_INDEX,
    SCHEMA_9_TABLE,
    Kcross,
    assert_one_line_error,
    runs_rows,
)

URL = os.environ.get("KCROSS_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not URL, reason="KCROSS_TEST_POSTGRES_URL not set")


def test_run_show_import_on_postgres(kcross: Kcross, tmp_path: Path, pg_schema: str) -> None:
    db = ["--db", pg_schema]
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--json", *db)
    assert proc.returncode == 0, proc.stderr
    shown = kcross("show", "--json", *db)
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [r["type"] for r in records] == ["fingerprint", "plan", "result", "result", "end"]
    assert records == [json.loads(line) for line in proc.stdout.splitlines()]
    capture = tmp_path / "c.jsonl"
    capture.write_text(shown.stdout)
    assert_one_line_error(kcross("import", str(capture), *db), contains="already stored: run")
    imported = kcross("import", "--force", str(capture), *db)
    assert imported.returncode == 0, imported.stderr
    runs = kcross("runs", *db).stdout
    assert "import" in runs and "complete" in runs


def test_run_ids_beyond_integer_range_on_postgres(kcross: Kcross, pg_schema: str) -> None:
    assert kcross("run", "--quick", "--suite", "syscall", "--bench", "getppid*",
                  "--db", pg_schema).returncode == 0
    for ref in ("99999999999999999999999", "2147483648"):
        assert_one_line_error(kcross("show", ref, "--db", pg_schema), contains=f"no run {ref}")
        assert_one_line_error(kcross("delete", ref, "--db", pg_schema), contains=f"no run {ref}")


def test_hand_edited_record_on_postgres(kcross: Kcross, pg_schema: str) -> None:
    import sqlalchemy as sa

    assert kcross("run", "--quick", "--suite", "syscall", "--bench", "getppid*",
                  "--db", pg_schema).returncode == 0
    engine = sa.create_engine(pg_schema)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE results SET record = '[1, 2]'::jsonb"))
    engine.dispose()
    assert_one_line_error(kcross("show", "--db", pg_schema), contains="is not a result record")


def test_mark_and_delete_on_postgres(kcross: Kcross, pg_schema: str) -> None:
    import sqlalchemy as sa

    for _ in range(2):
        assert kcross("run", "--quick", "--suite", "syscall", "--bench", "getppid*",
                      "--db", pg_schema).returncode == 0
    engine = sa.create_engine(pg_schema)
    with engine.begin() as conn:  # run 1: stranded by a process on another host, long ago
        conn.execute(sa.text("UPDATE runs SET status = 'running', owner_host = 'elsewhere', "
                             "owner_id = 'boot=x pidns=1 start=1', owner_pid = 1, "
                             "updated_at = now() - interval '3 hours' WHERE id = 1"))
    engine.dispose()
    stale = runs_rows(kcross("runs", "--db", pg_schema).stdout)["1"]["status"]
    assert stale == "stale (no heartbeat for 3 h, other host)", stale
    assert kcross("mark", "1", "interrupted", "--db", pg_schema).returncode == 0
    deleted = kcross("delete", "2", "--db", pg_schema)
    assert deleted.returncode == 0, deleted.stderr
    runs = kcross("runs", "--db", pg_schema).stdout
    assert list(runs_rows(runs)) == ["1"] and runs_rows(runs)["1"]["status"] == "interrupted"


def test_v1_schema_is_migrated_on_postgres(pg_schema: str) -> None:
    """Schema 1 as released, upgraded: the shape tables.py describes."""
    import sqlalchemy as sa
    from kcross.store import migrations, tables

    engine = sa.create_engine(pg_schema)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE kcross_schema (version INTEGER NOT NULL)"))
        conn.execute(sa.text("INSERT INTO kcross_schema VALUES (1)"))
        migrations.STEPS[0](conn)
    with engine.begin() as conn:
        assert migrations.upgrade(conn, "pg") == 1
        inspector = sa.inspect(conn)
        for table in tables.metadata.sorted_tables:
            got = {c["name"]: (c["type"].compile(engine.dialect), c["nullable"])
                   for c in inspector.get_columns(table.name)}
            want = {c.name: (_PG_SAME.get(t := c.type.compile(engine.dialect), t), c.nullable)
                    for c in table.columns}
            assert got == want, table.name
    engine.dispose()


_PG_SAME = {"FLOAT": "DOUBLE PRECISION"}  # PostgreSQL's FLOAT is DOUBLE PRECISION


def back_to_schema_4(engine: Any) -> None:
    """A PostgreSQL store of this kcross's schema taken back to what schema 4 left: the
    samples inside the JSONB records, no schema 5 columns (none of schema 6's lab machines
    to merge again: it is given none)."""
    import sqlalchemy as sa
    from kcross.store.packing import unpack

    with engine.begin() as conn:
        for row_id, record, packed in conn.execute(sa.text(
                "SELECT id, record, samples FROM results")).all():
            conn.execute(sa.text("UPDATE results SET record = CAST(:r AS jsonb) WHERE id = :i"),
                         {"r": json.dumps(unpack(record, packed)), "i": row_id})
        conn.execute(sa.text("DROP INDEX ix_results_name"))
        conn.execute(sa.text("DROP INDEX ix_runs_machine_id"))
        conn.execute(sa.text("ALTER TABLE results DROP COLUMN samples, DROP COLUMN overhead_ns, "
                             "DROP COLUMN subtracted, DROP COLUMN overhead_reason"))
        conn.execute(sa.text("DROP TABLE noise_exclusions"))   # schema 7's
        conn.execute(sa.text(f"DROP TABLE {SCHEMA_9_TABLE}"))
        conn.execute(sa.text(f"DROP INDEX {SCHEMA_9_INDEX}"))
        for column in SCHEMA_8_RUN_COLUMNS:
            conn.execute(sa.text(f"ALTER TABLE runs DROP COLUMN {column}"))
        conn.execute(sa.text("UPDATE kcross_schema SET version = 4"))
        assert conn.execute(sa.text("SELECT count(*) FROM results WHERE record->'samples' "
                                    "= 'null'::jsonb")).scalar_one() == 0


def test_a_schema_4_store_upgrades_to_5_on_postgres(kcross: Kcross, tmp_path: Path,
                                                    pg_schema: str) -> None:
    """A store as schema 4 left it (samples inside the JSONB records), upgraded by the next
    write: every run reads back as before, its records equal number for number, its content
    hash the same, its figures (history, compare) the same."""
    import sqlalchemy as sa
    from kcross.store import migrations
    from kcross.store.writing import content_hash
    from test_history import QUIET, store_runs

    store_runs(tmp_path, pg_schema)
    db = ["--db", pg_schema]
    shown = {run: kcross("show", run, "--json", *db).stdout for run in ("1", "3", "5")}
    history = kcross("history", QUIET, *db).stdout
    compared = kcross("compare", "1", "2", *db).stdout
    engine = sa.create_engine(pg_schema)
    back_to_schema_4(engine)
    assert_one_line_error(kcross("show", *db), contains=f"upgraded to {migrations.LATEST}")
    assert kcross("tag", "1", "first", *db).returncode == 0   # a write: upgraded
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT version FROM kcross_schema")).scalar_one() == \
            migrations.LATEST
        assert conn.execute(sa.text("SELECT count(*) FROM results WHERE samples IS NULL "
                                    "AND status = 'ok'")).scalar_one() == 0
        hashes = dict(conn.execute(sa.text("SELECT id, content_hash FROM runs")).all())
        copies = conn.execute(sa.text("SELECT fingerprint, host_time, kcross_build, "
                                      "lab_kernel_sha256 FROM runs")).all()
    engine.dispose()
    from kcross.store.tables import RUN_TEXT_COLUMNS  # schema 8's, filled from each run's

    assert [tuple(c[1:]) for c in copies] == \
        [tuple(f.text(c[0]) for f in RUN_TEXT_COLUMNS.values()) for c in copies]
    assert all(c[1] and c[2] for c in copies)
    for run, before in shown.items():
        after = kcross("show", run, "--json", *db).stdout
        assert after == before
        assert content_hash(json.loads(line) for line in after.splitlines()) == hashes[int(run)]
    assert kcross("history", QUIET, *db).stdout == history
    assert kcross("compare", "1", "2", *db).stdout == compared


def test_schema_6_merges_a_lab_machines_rows_on_postgres(kcross: Kcross, tmp_path: Path,
                                                         pg_schema: str) -> None:
    """A lab machine stored as two rows (one per kernel, schema 5's rule), upgraded by the
    next write: one row, keyed by the identity without the kernel, the earliest first_seen,
    both runs on it (issue 23)."""
    import sqlalchemy as sa
    from kcross.fingerprint import identity
    from kcross.store import migrations
    from test_lab_releases import stored_series, unmerge

    stored_series(kcross, tmp_path, pg_schema)
    unmerge(pg_schema)
    assert kcross("tag", "1", "trixie", "--db", pg_schema).returncode == 0
    engine = sa.create_engine(pg_schema)
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT version FROM kcross_schema")).scalar_one() == \
            migrations.LATEST
        machines = conn.execute(sa.text("SELECT id, fingerprint_hash, first_seen FROM machines"
                                        )).all()
        fp = conn.execute(sa.text("SELECT fingerprint FROM runs WHERE id = 1")).scalar_one()
        runs = conn.execute(sa.text("SELECT id, machine_id FROM runs ORDER BY id")).all()
    engine.dispose()
    assert [(m[0], m[1]) for m in machines] == [(1, identity(fp))]
    assert machines[0][2].year == 2000 and [tuple(r) for r in runs] == [(1, 1), (2, 1)]
