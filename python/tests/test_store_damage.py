"""A damaged store is named in one line and never made worse, at the cost of what a command
touches, not of the whole file (kcross.store.db's docstring: SQLite checks the pages a write
loads; the full quick_check runs after a hot journal and in ``kcross check-store``)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error, fake_capture, query, sha256
from kcross.store.migrations import LATEST


def _page(db: Path, table: str) -> tuple[int, int]:
    """(offset, size) of ``table``'s root page (a leaf in these small stores)."""
    size = query(db, "PRAGMA page_size")[0][0]
    root = query(db, "SELECT rootpage FROM sqlite_master WHERE name = ?", table)[0][0]
    return (root - 1) * size, size


def _trash(db: Path, table: str) -> bytes:
    """Overwrite the root page of ``table`` past its 8-byte header; return the page as left."""
    offset, size = _page(db, table)
    data = bytearray(db.read_bytes())
    data[offset + 8: offset + size] = b"\xa5" * (size - 8)
    db.write_bytes(bytes(data))
    return bytes(data[offset: offset + size])


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text(fake_capture("--quick", "--bench", "syscall/getcpu-*"))
    return path


@pytest.fixture
def tagged(kcross: Kcross, stored_db: Path) -> Path:
    assert kcross("tag", "1", "base", "--db", str(stored_db)).returncode == 0
    return stored_db


def test_damage_where_an_import_writes_is_named_and_left_alone(
        kcross: Kcross, stored_db: Path, capture: Path) -> None:
    _trash(stored_db, "results")
    before = sha256(stored_db)
    assert_one_line_error(kcross("import", "--force", str(capture), "--db", str(stored_db)),
                          contains="corrupt")
    assert sha256(stored_db) == before
    assert not Path(f"{stored_db}-journal").exists()


def test_damage_elsewhere_is_not_made_worse_and_check_store_names_it(
        kcross: Kcross, tagged: Path, capture: Path) -> None:
    """An import touches neither the tags nor their page: it stores the run, the damaged
    page stays as it was, and the full check (or a read of the tags) names the file."""
    damaged = _trash(tagged, "tags")
    offset, size = _page(tagged, "tags")
    proc = kcross("import", "--force", str(capture), "--db", str(tagged))
    assert proc.returncode == 0, proc.stderr
    assert tagged.read_bytes()[offset: offset + size] == damaged
    before = sha256(tagged)
    assert_one_line_error(kcross("check-store", "--db", str(tagged)), contains="corrupt")
    assert_one_line_error(kcross("tag", "--db", str(tagged)), contains="corrupt")
    assert sha256(tagged) == before


def test_check_store_passes_a_sound_store(kcross: Kcross, stored_db: Path) -> None:
    before = sha256(stored_db)
    proc = kcross("check-store", "--db", str(stored_db))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (f"{stored_db}: ok (every page checked; schema {LATEST}: 7 tables, "
                                   "66 columns; the content hash of 1 run recomputed)")
    assert sha256(stored_db) == before


# Writes into a new table until SQLite has spilled pages into the database file, says so,
# and waits to be killed: a hot journal that touches none of the stored tables.
WRITER = r"""
import sqlite3, sys
db = sys.argv[1]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA cache_size = 8")
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE half_written (x BLOB)")
for _ in range(10_000):
    conn.execute("INSERT INTO half_written VALUES (randomblob(4000))")
    with open(db + "-journal", "rb") as journal:
        if journal.read(8) == bytes.fromhex("d9d505f920a163d7"):
            break
print("spilled", flush=True)
sys.stdin.readline()
"""


def test_after_a_writer_died_the_whole_file_is_checked(kcross: Kcross, tagged: Path,
                                                        capture: Path) -> None:
    _trash(tagged, "tags")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tagged)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "spilled\n"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert Path(f"{tagged}-journal").exists()
    assert_one_line_error(kcross("import", "--force", str(capture), "--db", str(tagged)),
                          contains="corrupt")
    assert query(tagged, "SELECT count(*) FROM runs") == [(1,)]


def test_opening_for_writing_reads_what_it_writes_not_the_whole_file(
        stored_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full check (a second per GB) is not paid by every writer: a writer's connections
    check the pages they load instead."""
    from kcross.store import Store, db, resolve

    def whole_file(*_: object) -> None:
        raise AssertionError("the whole file was checked")

    monkeypatch.setattr(db, "_quick_check", whole_file)
    store = Store.open(resolve(str(stored_db)), write=True)
    assert store is not None
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA cell_size_check").scalar() == 1
    finally:
        store.close()
    reader = Store.open(resolve(str(stored_db)), write=False)
    assert reader is not None
    reader.close()


def test_a_store_cut_short_is_named_and_left_alone(kcross: Kcross, stored_db: Path,
                                                    capture: Path) -> None:
    """A copy or a disk that stopped early: the file is shorter than its header says."""
    size = query(stored_db, "PRAGMA page_size")[0][0]
    data = stored_db.read_bytes()
    assert len(data) >= 4 * size
    stored_db.write_bytes(data[:-size])
    before = sha256(stored_db)
    for args in (["import", "--force", str(capture)], ["runs"]):
        assert_one_line_error(kcross(*args, "--db", str(stored_db)), contains="corrupt")
    assert sha256(stored_db) == before


def test_check_store_of_no_store_is_one_line(kcross: Kcross, tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    assert_one_line_error(kcross("check-store", "--db", str(missing)),
                          contains=f"no store at {missing}: no such file")
    assert not missing.exists()
