"""The database is never damaged: unusable ones give one line, exit 2, and stay byte-identical."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import Kcross, assert_one_line_error, assert_schema_is_tables_py, query, sha256
from kcross.store import migrations


def test_read_only_database_is_readable_but_never_written(kcross: Kcross, stored_db: Path,
                                                           tmp_path: Path) -> None:
    stored_db.chmod(0o444)
    before = sha256(stored_db)
    assert_one_line_error(kcross("run", "--quick", "--db", str(stored_db)), contains="read-only")
    capture = tmp_path / "c.jsonl"
    capture.write_text(kcross("show", "--json", "--db", str(stored_db)).stdout)
    assert_one_line_error(kcross("import", str(capture), "--db", str(stored_db)),
                          contains="read-only")
    runs = kcross("runs", "--db", str(stored_db))
    assert runs.returncode == 0 and "complete" in runs.stdout
    assert sha256(stored_db) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("k.db")) == ["k.db"]


def test_not_a_database_is_left_alone(kcross: Kcross, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my precious notes\n" * 100)
    before = sha256(path)
    for args in (["run", "--quick"], ["runs"], ["show"]):
        assert_one_line_error(kcross(*args, "--db", str(path)),
                              contains="is not an SQLite database")
    assert sha256(path) == before


def test_corrupt_database_is_left_alone(kcross: Kcross, stored_db: Path) -> None:
    data = bytearray(stored_db.read_bytes())
    page = 4096
    assert len(data) >= 3 * page
    data[2 * page + 8: 3 * page] = b"\xa5" * (page - 8)  # trash a b-tree page, keep header
    stored_db.write_bytes(bytes(data))
    before = sha256(stored_db)
    for args in (["run", "--quick"], ["runs"]):
        assert_one_line_error(kcross(*args, "--db", str(stored_db)), contains="corrupt")
    assert sha256(stored_db) == before


def test_newer_schema_is_refused(kcross: Kcross, stored_db: Path) -> None:
    with sqlite3.connect(stored_db) as conn:
        conn.execute("UPDATE kcross_schema SET version = ?", (migrations.LATEST + 1,))
    conn.close()
    before = sha256(stored_db)
    for args in (["run", "--quick"], ["runs"]):
        assert_one_line_error(kcross(*args, "--db", str(stored_db)),
                              contains=f"schema version {migrations.LATEST + 1}, this kcross "
                                       f"supports up to {migrations.LATEST}")
    assert sha256(stored_db) == before


def test_foreign_sqlite_database_is_refused(kcross: Kcross, tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.close()
    before = sha256(path)
    assert_one_line_error(kcross("run", "--db", str(path)), contains="not a kcross database")
    assert sha256(path) == before


def test_uncreatable_directory(kcross: Kcross, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_one_line_error(kcross("run", "--db", str(blocker / "sub" / "k.db")))
    assert_one_line_error(kcross("run", "--db", str(tmp_path)), contains="is a directory")


def test_unreachable_server(kcross: Kcross) -> None:
    # Whether or not a PostgreSQL driver is installed, the answer is one line.
    line = assert_one_line_error(kcross("runs", "--db", "postgresql://kc:secret@127.0.0.1:1/kc"))
    assert "secret" not in line
    assert_one_line_error(kcross("runs", "--db", "nosuchdb://x/y"), contains="unknown database")


def test_env_and_option_choose_the_database(kcross: Kcross, tmp_path: Path,
                                            db_path: Path) -> None:
    env_db = tmp_path / "env.db"
    assert kcross("run", "--quick", "--suite", "cpuid",
                  extra_env={"KCROSS_DB": str(env_db)}).returncode == 0
    url_db = tmp_path / "url.db"
    assert kcross("run", "--quick", "--suite", "cpuid", "--db", f"sqlite:///{url_db}",
                  extra_env={"KCROSS_DB": str(env_db)}).returncode == 0
    assert query(env_db, "SELECT count(*) FROM runs") == [(1,)]
    assert query(url_db, "SELECT count(*) FROM runs") == [(1,)]
    assert not db_path.exists()


def test_migrations_produce_the_tables_the_code_queries(tmp_path: Path) -> None:
    """The frozen migration steps and tables.py must describe the same schema."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as conn:
        assert migrations.upgrade(conn, "m.db") == 0
        assert migrations.current_version(conn, "m.db") == migrations.LATEST
        assert_schema_is_tables_py(conn, engine.dialect)
    engine.dispose()


def test_a_schema_3_store_upgrades_and_loses_nothing(kcross: Kcross, tmp_path: Path) -> None:
    """data/store-schema3.db was written by kcross at schema 3 (two runs of the fake harness,
    one tagged, and an imported lab run).  Upgraded by the next write (to schema 4: results'
    process; to 5: packed samples and the summary's overhead columns; to 6: lab machines
    keyed without their kernel; to 8: three fingerprint fields copied as text; to 9: no
    process levels, a run of one process has none), every stored row and figure is as it
    was (but the lab machine's identity, now kcross.fingerprint's), each result is process
    0, and the runs read back record for record, byte for byte as the records were stored,
    with their content hashes unchanged."""
    import shutil
    import sqlite3

    from conftest import PYTHON_DIR
    from kcross.stats import summary_columns
    from kcross.store.writing import content_hash

    db = tmp_path / "old.db"
    shutil.copy(PYTHON_DIR / "tests" / "data" / "store-schema3.db", db)
    figures = "id, run_id, seq, suite, name, status, reason, median_ns, ci_low_ns, ci_high_ns, " \
              "ci_confidence, min_ns, n"

    def rows() -> dict[str, list[tuple]]:
        conn = sqlite3.connect(db)
        try:
            return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                    for table in ("machines", "runs", "tags")} | {
                "results": conn.execute(f"SELECT {figures} FROM results ORDER BY id").fetchall(),
                "records": conn.execute("SELECT run_id, record FROM results ORDER BY id")
                .fetchall()}
        finally:
            conn.close()

    before = rows()
    assert query(db, "SELECT version FROM kcross_schema") == [(3,)]
    shown_before = kcross("show", "1", "--db", str(db))
    assert shown_before.returncode == 2 and f"upgraded to {migrations.LATEST}" in \
        shown_before.stderr
    assert kcross("tag", "latest", "after", "--db", str(db)).returncode == 0   # a write
    assert query(db, "SELECT version FROM kcross_schema") == [(migrations.LATEST,)]
    after = rows()
    assert after["results"] == before["results"]
    from kcross.fingerprint import identity, lab

    # (id, fingerprint_hash, hostname, arch, cpu_model, kernel_release, hypervisor,
    # fingerprint, first_seen): the lab machine's hash is its identity without its kernel
    relabelled = [(m[0], identity(json.loads(m[7])), *m[2:]) if lab(json.loads(m[7])) else m
                  for m in before["machines"]]
    assert after["machines"] == relabelled and relabelled != before["machines"]
    # schema 8's three text copies follow each run's columns; the rest is as it was
    width = len(before["runs"][0])
    assert [r[:width] for r in after["runs"]] == before["runs"]
    from kcross.store.tables import RUN_TEXT_COLUMNS

    fingerprints = [json.loads(r[13]) for r in before["runs"]]
    assert [r[width:] for r in after["runs"]] == \
        [tuple(f.text(fp) for f in RUN_TEXT_COLUMNS.values()) for fp in fingerprints]
    assert any(r[width] for r in after["runs"]) and any(r[-1] for r in after["runs"])
    assert set(after["tags"]) - set(before["tags"]) == {t for t in after["tags"] if t[0] == "after"}
    assert query(db, "SELECT DISTINCT process FROM results") == [(0,)]
    # the samples left the JSON for the packed column, and the new figures are stats.py's
    packed = query(db, "SELECT record, samples, overhead_ns, subtracted, overhead_reason "
                       "FROM results ORDER BY id")
    assert all(json.loads(r[0])["samples"] is None and r[1] for r in packed)
    for (_, text), (_, _, oh, sub, why) in zip(before["records"], packed, strict=True):
        want = summary_columns(json.loads(text))
        assert (oh, None if sub is None else bool(sub), why) == \
            (want["overhead_ns"], want["subtracted"], want["overhead_reason"])
    # the unique key is (run, suite, name, process): a second process of a result is welcome
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO results (run_id, seq, suite, name, status, n, record, process)"
                     " SELECT run_id, seq + 1000, suite, name, status, n, record, 1 FROM results"
                     " WHERE id = (SELECT min(id) FROM results)")
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO results (run_id, seq, suite, name, status, n, record,"
                         " process) SELECT run_id, seq, suite, name, status, n, record, 0 "
                         "FROM results WHERE id = (SELECT min(id) FROM results)")
    finally:
        conn.rollback()
        conn.close()
    for run in ("1", "2", "3"):
        proc = kcross("show", run, "--db", str(db), "--json")
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        records = [json.loads(line) for line in lines]
        stored = [text for run_id, text in before["records"] if str(run_id) == run]
        shown = [line for line, r in zip(lines, records, strict=True) if r["type"] == "result"]
        assert shown == [json.dumps(json.loads(text)) for text in stored]   # byte for byte
        (digest,) = [r[-1] for r in before["runs"] if str(r[0]) == run]
        assert content_hash(records) == digest
