"""``kcross check-store``: kcross's own schema (every table, every column, the schema
version) on SQLite and PostgreSQL; every run's content hash recomputed.

Each test damages a sound store the way a hand, a tool or a disk would and expects one
line naming what is wrong, status 2; the PostgreSQL stores are schemas of their own
(conftest's ``pg_schema``), never the database's default schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import Kcross, assert_one_line_error, fake_capture


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, kcross: Kcross, tmp_path: Path) -> Iterator[str]:
    """A sound store of two runs (the fake harness's quick getcpu-* run, imported twice),
    as --db takes it: an SQLite file or a PostgreSQL schema's URL."""
    db = str(tmp_path / "k.db") if request.param == "sqlite" \
        else request.getfixturevalue("pg_schema")
    capture = tmp_path / "c.jsonl"
    capture.write_text(fake_capture("--quick", "--bench", "syscall/getcpu-*"))
    for force in ([], ["--force"]):
        proc = kcross("import", *force, str(capture), "--db", db)
        assert proc.returncode == 0, proc.stderr
    yield db


def change(db: str, *statements: str) -> None:
    """Run SQL on the store directly (not through kcross)."""
    engine = sa.create_engine(db if "://" in db else f"sqlite:///{db}")
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(sa.text(statement))
    finally:
        engine.dispose()


def test_a_sound_store_passes(kcross: Kcross, store: str) -> None:
    proc = kcross("check-store", "--db", store)
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout and "schema 5" in proc.stdout, proc.stdout


@pytest.mark.parametrize(("statements", "named"), [
    (["DROP TABLE tags"], "table tags is missing"),
    (["ALTER TABLE results DROP COLUMN overhead_reason"],
     "column results.overhead_reason is missing"),
    (["ALTER TABLE runs DROP COLUMN owner_pid", "ALTER TABLE runs DROP COLUMN owner_host"],
     "columns runs.owner_host, runs.owner_pid are missing"),
], ids=["table", "column", "columns"])
def test_a_dropped_table_or_column_is_named(kcross: Kcross, store: str,
                                            statements: list[str], named: str) -> None:
    change(store, *statements)
    assert_one_line_error(kcross("check-store", "--db", store), contains=named)


def test_the_schema_version_is_checked(kcross: Kcross, store: str) -> None:
    change(store, "UPDATE kcross_schema SET version = 99")
    assert_one_line_error(kcross("check-store", "--db", store), contains="schema version 99")
    change(store, "DELETE FROM kcross_schema")
    assert_one_line_error(kcross("check-store", "--db", store),
                          contains="damaged kcross_schema table (0 rows")
    change(store, "DROP TABLE kcross_schema")
    assert_one_line_error(kcross("check-store", "--db", store), contains="no kcross_schema table")
