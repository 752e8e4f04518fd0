"""A writer killed mid-transaction leaves a "hot journal": kcross rolls it back and goes on.

SIGTERM to ``kcross push`` while it writes a large run, or SIGKILL, a power loss: SQLite's
rollback journal stays beside the database, holding the pages as they were before.  The
database is not damaged, but a read-only connection cannot play the journal back, and
kcross used to call the store "corrupt or not a database" forever.  Here a real writer is
killed mid-way through a transaction big enough to spill into the database file.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG, Kcross, assert_one_line_error, query, runs_rows, sha256

JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")

# Changes every stored row, then writes until SQLite has spilled pages into the database
# file (it syncs the journal, header and magic included, first), and says so.
WRITER = r"""
import sqlite3, sys
db = sys.argv[1]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA cache_size = 8")          # pages: spill early
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE runs SET status = 'failed', error = 'half written'")
conn.execute("DELETE FROM tags")
conn.execute("DELETE FROM results")
conn.execute("CREATE TABLE half_written (x BLOB)")
for _ in range(10_000):
    conn.execute("INSERT INTO half_written VALUES (randomblob(4000))")
    with open(db + "-journal", "rb") as journal:
        if journal.read(8) == bytes.fromhex("d9d505f920a163d7"):
            break
print("spilled", flush=True)
if sys.stdin.readline() == "commit\n":        # else killed here, mid-transaction
    conn.execute("COMMIT")
"""


def _snapshot(db: Path) -> list[list[tuple]]:
    return [query(db, f"SELECT * FROM {table} ORDER BY 1") for table in
            ("machines", "runs", "results", "tags")]


def _leave_hot_journal(db: Path) -> None:
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "spilled\n"
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    journal = Path(f"{db}-journal")
    assert journal.read_bytes()[:8] == JOURNAL_MAGIC   # a hot journal, as SQLite defines it


@pytest.fixture
def two_runs(stored_db: Path, kcross: Kcross) -> Path:
    """Two complete runs (1 tagged base) in a store."""
    assert kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db", str(stored_db),
                  "--tag", "base").returncode == 0
    return stored_db


def test_a_hot_journal_is_rolled_back_and_every_run_is_intact(kcross: Kcross, two_runs: Path,
                                                               tmp_path: Path) -> None:
    db = two_runs
    before = _snapshot(db)
    _leave_hot_journal(db)
    runs = kcross("runs", "--db", str(db))
    assert runs.returncode == 0, runs.stderr
    assert not Path(f"{db}-journal").exists()         # played back, then removed
    assert _snapshot(db) == before                     # nothing of the killed writer's
    assert query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'half_written'") == [(0,)]
    assert list(runs_rows(runs.stdout)) == ["2", "1"]
    for args in (["show", "1"], ["show", "base"], ["compare", "1", "2"]):
        proc = kcross(*args, "--db", str(db))
        assert proc.returncode == 0, (args, proc.stderr)
    copy = tmp_path / "copy.db"
    proc = kcross("push", str(copy), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("pushed 2 run(s)")
    assert query(copy, "SELECT status FROM runs") == [("complete",), ("complete",)]
    assert query(copy, "SELECT suite, name, record FROM results ORDER BY run_id, seq") == \
        query(db, "SELECT suite, name, record FROM results ORDER BY run_id, seq")


@pytest.mark.parametrize("command", [["runs"], ["run", "--quick", "--bench", "syscall/getcpu-*"],
                                     ["push", "DEST"]])
def test_every_kind_of_opening_recovers(kcross: Kcross, two_runs: Path, tmp_path: Path,
                                        command: list[str]) -> None:
    """Read-only (runs), lazily for writing (run), and a hot journal at the destination of
    a push."""
    db = two_runs
    before = _snapshot(db)
    if command[0] == "push":
        source = tmp_path / "source.db"
        db.rename(source)
        db = tmp_path / "dest.db"
        assert kcross("push", str(db), "1", "--db", str(source)).returncode == 0
        before = _snapshot(db)
        command = ["push", str(db), "--db", str(source)]
    else:
        command = [*command, "--db", str(db)]
    _leave_hot_journal(db)
    proc = kcross(*command)
    assert proc.returncode == 0, proc.stderr
    after = _snapshot(db)
    kept = {row[0] for row in before[1][:2]}   # the runs stored before (push: run 1)
    assert [row for row in after[1] if row[0] in kept] == before[1][:2]
    assert all(row in after[2] for row in before[2])


def test_a_store_this_user_may_not_write_says_so(kcross: Kcross, two_runs: Path) -> None:
    db = two_runs
    _leave_hot_journal(db)
    journal = Path(f"{db}-journal")
    kept = sha256(db), sha256(journal)
    db.chmod(0o444)
    try:
        proc = kcross("runs", "--db", str(db))
        assert_one_line_error(proc, 2, "has a hot journal (k.db-journal): a writer stopped "
                                       "mid-transaction")
        assert "write access" in proc.stderr and "corrupt" not in proc.stderr
        assert (sha256(db), sha256(journal)) == kept   # left exactly as it was
    finally:
        db.chmod(0o644)
    assert kcross("runs", "--db", str(db)).returncode == 0


def test_a_writer_at_work_is_left_alone(kcross: Kcross, two_runs: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal whose writer is alive (it holds the RESERVED lock) is not hot, even with
    its header written: a reader waits for the writer (here: gives up, saying who holds the
    lock), whether or not it may write the file, and the writer commits afterwards."""
    import os

    if os.environ.get("KCROSS_TEST_EXEC"):
        pytest.skip("needs the forked kcross to inherit a short busy timeout")
    from kcross.store import db as store_db

    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_S", 0.3)
    db = two_runs
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "spilled\n"
        assert Path(f"{db}-journal").read_bytes()[:8] == JOURNAL_MAGIC
        for mode in (0o644, 0o444):
            db.chmod(mode)
            line = assert_one_line_error(kcross("runs", "--db", str(db)), 2, "is locked by")
            assert "hot journal" not in line and "corrupt" not in line
        db.chmod(0o644)
    finally:
        writer.communicate("commit\n", timeout=HANG)
    assert writer.returncode == 0
    assert query(db, "SELECT DISTINCT error FROM runs") == [("half written",)]
