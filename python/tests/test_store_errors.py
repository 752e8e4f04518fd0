"""One line instead of a traceback, and nothing lost or guessed, on the store side (issue 7)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error, fake_capture, query
from kcross.errors import StoreError
from kcross.store import Store
from kcross.store import db as store_db


@pytest.fixture(scope="module")
def capture() -> str:
    return fake_capture("--quick", "--suite", "syscall")


def _edited(capture: str, tmp_path: Path, *, fingerprint: dict | None = None,
            end: dict | None = None) -> Path:
    records = [json.loads(line) for line in capture.splitlines()]
    for key, value in (fingerprint or {}).items():
        records[0]["host"][key] = value
    assert records[-1]["type"] == "end"
    records[-1].update(end or {})
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- tracebacks -----------------------------------------------------------------------

def test_huge_run_id_is_not_found(kcross: Kcross, stored_db: Path) -> None:
    for ref in ("99999999999999999999999", "2147483648", "0"):
        assert_one_line_error(kcross("show", ref, "--db", str(stored_db)),
                              contains=f"no run {ref}: a run id is a whole number from 1 to "
                                       "2147483647")
    assert_one_line_error(kcross("show", "-1", "--db", str(stored_db)),
                          contains="run must be a run id, 'latest', 'latest~N', 'latest@HOST' "
                                   "or a tag, not '-1'")


def test_sqlite_url_with_two_slashes_is_explained(kcross: Kcross, tmp_path: Path) -> None:
    for command in (["run", "--quick", "--suite", "syscall"], ["runs"]):
        line = assert_one_line_error(kcross(*command, "--db", "sqlite://x.db"),
                                     contains="names a host ('x.db')")
        assert "sqlite:///x.db" in line
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("stored, message", [
    ("{this is not json", "is not readable JSON"),
    ("[1, 2, 3]", "is not a result record"),
    ('{"type": "result", "schema": 1, "suite": "syscall"}', "result record"),
])
def test_hand_edited_record_gives_one_line(kcross: Kcross, stored_db: Path, stored: str,
                                           message: str) -> None:
    seq, suite, name = query(stored_db, "SELECT seq, suite, name FROM results ORDER BY seq")[0]
    conn = sqlite3.connect(stored_db)
    with conn:
        conn.execute("UPDATE results SET record = ? WHERE seq = ?", (stored, seq))
    conn.close()
    for args in (["show", "1"], ["show", "--json"]):
        line = assert_one_line_error(kcross(*args, "--db", str(stored_db)), contains=message)
        assert f"run 1 result {suite}/{name}" in line, line


def test_hand_edited_fingerprint_gives_one_line(kcross: Kcross, stored_db: Path) -> None:
    conn = sqlite3.connect(stored_db)
    with conn:
        conn.execute("UPDATE runs SET fingerprint = '\"oops\"'")
    conn.close()
    assert_one_line_error(kcross("show", "--db", str(stored_db)),
                          contains="run 1 fingerprint is not a fingerprint record")


@pytest.mark.parametrize("fingerprint, end, message", [
    (None, {"elapsed_s": 1e300}, "elapsed_s 1e+300 after the start"),
    ({"time": "9999-12-31T23:59:59Z"}, {"elapsed_s": 5.0}, "past the year 9999"),
    (None, {"elapsed_s": -3.0}, "$.elapsed_s: must be >= 0, got -3.0"),
])
def test_impossible_times_are_refused(kcross: Kcross, tmp_path: Path, db_path: Path,
                                      capture: str, fingerprint: dict | None, end: dict,
                                      message: str) -> None:
    path = _edited(capture, tmp_path, fingerprint=fingerprint, end=end)
    line = assert_one_line_error(kcross("import", str(path)), contains=message)
    assert str(path) in line
    assert not db_path.exists()


def test_host_time_offset_is_stored_as_utc(kcross: Kcross, tmp_path: Path, db_path: Path,
                                           capture: str) -> None:
    path = _edited(capture, tmp_path, fingerprint={"time": "2024-03-02T02:00:00+14:00"},
                   end={"elapsed_s": 60.0})
    proc = kcross("import", str(path))
    assert proc.returncode == 0, proc.stderr
    started, finished = query(db_path, "SELECT started_at, finished_at FROM runs")[0]
    assert started.startswith("2024-03-01 12:00:00"), started
    assert finished.startswith("2024-03-01 12:01:00"), finished
    assert "2024-03-01 12:00 " in kcross("runs").stdout   # to the minute


# --- smaller --------------------------------------------------------------------------

def test_locked_database_is_busy_not_corrupt(kcross: Kcross, stored_db: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if os.environ.get("KCROSS_TEST_EXEC"):
        pytest.skip("needs the forked kcross to inherit a short busy timeout")
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_S", 0.3)
    holder = sqlite3.connect(stored_db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for args in (["runs"], ["show"], ["run", "--quick", "--suite", "syscall"]):
            line = assert_one_line_error(kcross(*args, "--db", str(stored_db)),
                                         contains="is locked by")
            assert "corrupt" not in line
            if Path("/proc/locks").exists():
                assert f"pid {os.getpid()}" in line, line
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert query(stored_db, "SELECT count(*) FROM runs") == [(1,)]


def test_full_disk_counts_what_was_committed(kcross: Kcross, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if os.environ.get("KCROSS_TEST_EXEC"):
        pytest.skip("needs the forked kcross to inherit the failing add_result")
    real = Store.add_result
    calls = []

    def failing(self: Store, run_id: int, seq: int, record: dict) -> None:
        calls.append(seq)
        if len(calls) == 2:
            raise StoreError(f"{self.target.display}: storing a result failed: "
                             "database or disk is full")
        real(self, run_id, seq, record)

    monkeypatch.setattr(Store, "add_result", failing)
    db = tmp_path / "k.db"
    line = assert_one_line_error(kcross("run", "--quick", "--suite", "syscall", "--db", str(db)),
                                 after_progress=True)
    assert "disk is full" in line and "1 result(s) kept in run 1 (marked failed)" in line, line
    assert query(db, "SELECT count(*) FROM results") == [(1,)]
    assert query(db, "SELECT status FROM runs") == [("failed",)]


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://"])
def test_in_memory_store_is_refused_for_writing(kcross: Kcross, tmp_path: Path, url: str,
                                                capture: str) -> None:
    assert_one_line_error(kcross("run", "--quick", "--suite", "syscall", "--db", url),
                          contains="in-memory database: it would keep nothing")
    path = tmp_path / "c.jsonl"
    path.write_text(capture)
    assert_one_line_error(kcross("import", str(path), "--db", url), contains="in-memory")


def test_importing_twice_is_refused_unless_forced(kcross: Kcross, tmp_path: Path,
                                                  db_path: Path, capture: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(capture)
    assert kcross("import", str(path)).returncode == 0
    # The same records with other white space and key order are the same capture.
    again = tmp_path / "again.jsonl"
    again.write_text("".join(json.dumps(json.loads(line), indent=None, sort_keys=True) + "\n"
                             for line in capture.splitlines()))
    line = assert_one_line_error(kcross("import", str(again)),
                                 contains="already stored: run 1 (imported)")
    assert "--force" in line and str(again) in line
    assert query(db_path, "SELECT count(*) FROM runs") == [(1,)]
    forced = kcross("import", "--force", str(again))
    assert forced.returncode == 0, forced.stderr
    assert "as run 2" in forced.stdout
    # A recorded run written back by `show --json` is recognised too.
    assert kcross("run", "--quick", "--suite", "syscall", "--bench", "getppid*").returncode == 0
    shown = tmp_path / "shown.jsonl"
    shown.write_text(kcross("show", "--json").stdout)
    assert_one_line_error(kcross("import", str(shown)), contains="already stored: run 3 (recorded)")


@pytest.mark.parametrize("args", [["--suite", "nosuch"], ["--bench", "no-such-bench*"]])
def test_refused_run_creates_no_database(kcross: Kcross, tmp_path: Path, args: list[str],
                                         db_path: Path) -> None:
    db = tmp_path / "new" / "k.db"
    proc = kcross("run", *args, "--db", str(db))
    assert proc.returncode == 2, proc.stderr
    assert not db.exists() and not db.parent.exists()
    assert kcross("run", *args).returncode == 2
    assert not db_path.exists()


def test_unwritable_store_is_refused_before_measuring(kcross: Kcross, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = kcross("run", "--quick", "--suite", "syscall", "--db", str(blocker / "sub" / "k.db"))
    assert_one_line_error(proc, contains="Not a directory")
    assert "running" not in proc.stderr  # refused before the harness started


# --- a store that is not there ------------------------------------------------------------
# A store named (--db, $KCROSS_DB) that does not exist is an error naming it, for every
# command that reads: a mistyped path must not look like an empty store.  The default
# store not made yet is what it says, nothing stored (test_cli_run).  Writers make a new
# store where its directory exists; a named store's missing directory is one line.

READERS = [
    ["runs"], ["runs", "--json"], ["show"], ["show", "1", "--json"], ["compare", "1", "2"],
    ["compare", "{capture}", "{capture}"], ["check", "--baseline", "1"],
    ["check", "--baseline", "{capture}", "{capture}"], ["history", "getppid-inline"],
    ["report", "-o", "r.html"], ["tag"], ["tag", "1", "base"], ["mark", "1", "failed"],
    ["delete", "1"], ["push", "{dest}"], ["check-store"], ["sysinfo", "--readiness"],
]


@pytest.mark.parametrize("where", ["no/such/dir/k.db", "none.db"])
@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_reading_a_store_that_is_not_there(kcross: Kcross, tmp_path: Path, capture: str,
                                           args: list[str], where: str) -> None:
    db = tmp_path / where
    captured = tmp_path / "c.jsonl"
    captured.write_text(capture)
    given = [a.format(capture=captured, dest=tmp_path / "dest.db") for a in args]
    line = assert_one_line_error(kcross(*given, "--db", str(db)),
                                 contains=f"no store at {db}: ")
    assert not db.exists() and not (tmp_path / "no").exists()
    assert not (tmp_path / "dest.db").exists()
    assert ("no such directory" if "/" in where else "no such file") in line, line


def test_pull_from_a_store_that_is_not_there(kcross: Kcross, tmp_path: Path) -> None:
    source = tmp_path / "none.db"
    assert_one_line_error(kcross("pull", str(source), "--db", str(tmp_path / "k.db")),
                          contains=f"no store at {source}: no such file")
    assert not (tmp_path / "k.db").exists()


def test_kcross_db_names_a_store_as_db_does(kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    assert_one_line_error(kcross("runs", extra_env={"KCROSS_DB": str(db)}),
                          contains=f"no store at {db}: no such file")


def test_writers_make_a_store_where_its_directory_is(kcross: Kcross, tmp_path: Path,
                                                     capture: str, db_path: Path) -> None:
    captured = tmp_path / "c.jsonl"
    captured.write_text(capture)
    missing = tmp_path / "no" / "such" / "k.db"
    for args in (["import", str(captured)], ["run", "--quick", "--bench", "syscall/getcpu-*"]):
        proc = kcross(*args, "--db", str(missing))
        assert_one_line_error(proc, contains=f"cannot create {missing}: no such directory "
                                             f"{tmp_path / 'no'}")
        assert "running" not in proc.stderr
        assert not (tmp_path / "no").exists()
    made = tmp_path / "k.db"
    assert kcross("import", str(captured), "--db", str(made)).returncode == 0
    assert kcross("run", "--quick", "--bench", "syscall/getcpu-*",
                  "--db", str(tmp_path / "r.db")).returncode == 0
    assert made.exists() and (tmp_path / "r.db").exists()
    # the default store's directory is made on first use
    assert not db_path.parent.exists()
    assert kcross("import", str(captured)).returncode == 0
    assert db_path.exists()
