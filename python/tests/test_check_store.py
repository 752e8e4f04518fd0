"""``kcross check-store``: kcross's own schema (every table, every column, the schema
version) on SQLite and PostgreSQL; every run's content hash recomputed.

Each test damages a sound store the way a hand, a tool or a disk would and expects one
line naming what is wrong, status 2; the PostgreSQL stores are schemas of their own
(conftest's ``pg_schema``), never the database's default schema.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import DATA, Kcross, assert_one_line_error, fake_capture, query
from kcross.store.migrations import LATEST


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
    assert "ok" in proc.stdout and f"schema {LATEST}:" in proc.stdout, proc.stdout


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


# --- every run's content hash, recomputed -----------------------------------------------

def flip_a_bit(db: str, run_id: int) -> None:
    """Flip the lowest bit of the last sample of run ``run_id``'s first result (in its
    packed sample arrays: the record reads back, one figure changed)."""
    engine = sa.create_engine(db if "://" in db else f"sqlite:///{db}")
    try:
        with engine.begin() as conn:
            row_id, samples = conn.execute(sa.text(
                "SELECT id, samples FROM results WHERE run_id = :run ORDER BY seq LIMIT 1"),
                {"run": run_id}).one()
            data = bytearray(samples)
            data[-8] ^= 1
            conn.execute(sa.text("UPDATE results SET samples = :data WHERE id = :id"),
                         {"data": bytes(data), "id": row_id})
    finally:
        engine.dispose()


def test_a_flipped_bit_in_a_sample_array_is_found(kcross: Kcross, store: str) -> None:
    before = kcross("show", "2", "--json", "--db", store).stdout
    flip_a_bit(store, 2)
    assert kcross("show", "2", "--json", "--db", store).stdout != before  # read, changed
    line = assert_one_line_error(kcross("check-store", "--db", store),
                                 contains="run 2 no longer matches")
    assert "run 1" not in line and "runs 1" not in line, line


def test_every_changed_run_is_named(kcross: Kcross, store: str) -> None:
    flip_a_bit(store, 1)
    change(store, "UPDATE runs SET end_record = NULL WHERE id = 2")
    assert_one_line_error(kcross("check-store", "--db", store),
                          contains="runs 1, 2 no longer match")


def test_every_way_a_run_is_stored_matches_its_hash(kcross: Kcross, tmp_path: Path) -> None:
    """No false alarm: runs made live (one process and three), imported, stored by a lab,
    stopped mid-way, and a store upgraded from schema 3, all pass."""
    db = tmp_path / "k.db"
    shutil.copyfile(DATA / "store-schema3.db", db)
    for args in (["run", "--quick", "--bench", "syscall/getcpu-*"],
                 ["run", "--quick", "--bench", "syscall/getcpu-*", "--processes", "3"],
                 ["import", "--force", str(DATA / "lab-ppc64le-sc.jsonl")]):
        proc = kcross(*args, "--db", str(db))
        assert proc.returncode == 0, proc.stderr
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(fake_capture("--quick", "--bench", "syscall/getcpu-*")
                           .splitlines(keepends=True)[:-1]))  # no end record
    assert kcross("import", str(cut), "--db", str(db)).returncode == 0
    hashed = query(db, "SELECT count(*) FROM runs WHERE content_hash IS NOT NULL")[0][0]
    assert hashed >= 5
    proc = kcross("check-store", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert f"the content hash of {hashed} runs recomputed" in proc.stdout, proc.stdout
