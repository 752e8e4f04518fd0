"""Runs stranded in "running": owner, heartbeat, live vs dead in ``kcross runs``, mark and delete."""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import (
    HANG,
    Kcross,
    assert_one_line_error,
    assert_schema_is_tables_py,
    query,
    runs_rows,
    wait_for_rows,
)
from kcross.store import Store, migrations, resolve, tables
from kcross.store.liveness import process_start


def _set(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, params)
    conn.close()


def _runs_line(kcross: Kcross, db: Path, run_id: int) -> str:
    """The run's row of ``kcross runs``, its cells as ``| cell |``."""
    proc = kcross("runs", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    row = runs_rows(proc.stdout)[str(run_id)]
    return "| " + " | ".join(row.values()) + " |"


def _strand(db: Path, run_id: int = 1, *, owner_id: str | None, pid: int | None = None,
            host: str | None = "elsewhere", heartbeat_age: dt.timedelta = dt.timedelta(0),
            ) -> None:
    """Make a stored run look like one still being written by the given owner."""
    beat = dt.datetime.now(dt.UTC).replace(tzinfo=None) - heartbeat_age
    _set(db, "UPDATE runs SET status='running', finished_at=NULL, owner_host=?, owner_pid=?, "
             "owner_id=?, updated_at=? WHERE id=?", host, pid, owner_id, str(beat), run_id)


def _our_ident(start: str) -> str:
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    pidns = os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]")
    return f"boot={boot} pidns={pidns} start={start}"


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="no /proc: a run's process cannot be checked here")


@needs_proc
def test_sigkilled_run_is_recognisable_and_can_be_marked(env: dict[str, str], kcross: Kcross,
                                                         tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    proc = subprocess.Popen([sys.executable, "-m", "kcross", "run", "--quick", "--suite",
                             "syscall", "--db", str(db)],
                            # slow enough to check the live run before it ends
                            env={**env, "KCROSS_FAKE_DELAY": "5"}, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_rows(proc, db, "results", 1)
        assert query(db, "SELECT owner_pid FROM runs") == [(proc.pid,)]
        line = _runs_line(kcross, db, 1)
        assert "| running " in line, line
        assert_one_line_error(kcross("delete", "1", "--db", str(db)),
                              contains="run 1 is running: it may still be writing; use --force")
        assert_one_line_error(kcross("mark", "1", "failed", "--db", str(db)), contains="--force")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    line = _runs_line(kcross, db, 1)
    assert f"dead (pid {proc.pid} gone)" in line, line
    marked = kcross("mark", "1", "failed", "--db", str(db))
    assert marked.returncode == 0, marked.stderr
    assert "marked failed" in marked.stdout
    assert query(db, "SELECT status, error FROM runs") == \
        [("failed", f"marked failed by the user (was dead (pid {proc.pid} gone))")]
    assert "| failed " in _runs_line(kcross, db, 1)


@needs_proc
def test_reused_pid_is_not_taken_for_the_owner(kcross: Kcross, stored_db: Path) -> None:
    # Our own (live) pid, but a different start time: the owner is gone.
    start = process_start(os.getpid())
    assert start is not None
    _strand(stored_db, owner_id=_our_ident(str(int(start) + 1)), pid=os.getpid(),
            host=os.uname().nodename)
    line = _runs_line(kcross, stored_db, 1)
    assert f"dead (pid {os.getpid()} gone, its number reused)" in line, line


def test_other_host_is_judged_by_heartbeat(kcross: Kcross, stored_db: Path) -> None:
    other = "boot=00000000-0000-0000-0000-000000000000 pidns=1 start=1"
    _strand(stored_db, owner_id=other, pid=1, heartbeat_age=dt.timedelta(minutes=1))
    line = _runs_line(kcross, stored_db, 1)
    assert re.search(r"running \(elsewhere, heartbeat \d+ s ago\)", line), line
    assert_one_line_error(kcross("delete", "1", "--db", str(stored_db)), contains="--force")
    _strand(stored_db, owner_id=other, pid=1, heartbeat_age=dt.timedelta(hours=2, minutes=1))
    line = _runs_line(kcross, stored_db, 1)
    assert "stale (no heartbeat for 2 h, other host)" in line, line
    # A stale run may be deleted without --force; its results go with it.
    deleted = kcross("delete", "1", "--db", str(stored_db))
    assert deleted.returncode == 0, deleted.stderr
    assert "run 1 deleted with its 2 result(s)" in deleted.stdout
    assert query(stored_db, "SELECT count(*) FROM runs") == [(0,)]
    assert query(stored_db, "SELECT count(*) FROM results") == [(0,)]


def test_force_touches_a_live_run(kcross: Kcross, stored_db: Path) -> None:
    _strand(stored_db, owner_id=None, pid=None, heartbeat_age=dt.timedelta(seconds=5))
    assert_one_line_error(kcross("mark", "1", "interrupted", "--db", str(stored_db)),
                          contains="--force")
    assert kcross("mark", "1", "interrupted", "--force", "--db", str(stored_db)).returncode == 0
    assert query(stored_db, "SELECT status FROM runs") == [("interrupted",)]


def test_mark_and_delete_errors_are_one_line(kcross: Kcross, stored_db: Path,
                                             tmp_path: Path) -> None:
    db = ["--db", str(stored_db)]
    assert_one_line_error(kcross("mark", "1", "failed", *db), contains="already complete")
    assert_one_line_error(kcross("delete", "424242", *db), contains="no run 424242")
    assert_one_line_error(kcross("mark", "99999999999999999999999", "failed", *db),
                          contains="no run 99999999999999999999999")
    assert_one_line_error(kcross("delete", "abc", *db), contains="no run or tag 'abc'")
    assert_one_line_error(kcross("mark", "1", "complete", *db),
                          contains="'complete' is not one of failed, interrupted")
    empty = tmp_path / "none.db"
    assert_one_line_error(kcross("delete", "1", "--db", str(empty)),
                          contains=f"no store at {empty}: no such file")
    assert not empty.exists()
    assert query(stored_db, "SELECT status FROM runs") == [("complete",)]


def test_heartbeat_with_each_result_and_on_request(tmp_path: Path) -> None:
    store = Store.open(resolve(str(tmp_path / "h.db")), write=True)
    assert store is not None
    fingerprint = {"type": "fingerprint", "schema": 1, "host": {"hostname": "h"}}
    run_id = store.start_run(fingerprint, {"type": "plan", "benchmarks": []}, command=["t"])

    def beat() -> str:
        return query(tmp_path / "h.db", "SELECT updated_at FROM runs WHERE id=?", run_id)[0][0]

    first = beat()
    owner = query(tmp_path / "h.db", "SELECT owner_host, owner_pid, owner_id FROM runs")[0]
    assert owner[1] == os.getpid() and owner[0]
    if Path("/proc/self/stat").exists():
        assert f"start={process_start(os.getpid())}" in owner[2]
    time.sleep(0.01)
    store.heartbeat(run_id)
    assert beat() > first
    second = beat()
    time.sleep(0.01)
    record = {"suite": "s", "name": "n", "status": "skipped", "reason": "r", "samples": []}
    store.add_result(run_id, 0, record)
    assert beat() > second
    assert store.results_stored(run_id) == 1
    store.close()


def test_heartbeat_between_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No result for a while (--interleave): the store's own heartbeat keeps the run fresh."""
    from kcross.store import writing

    monkeypatch.setattr(writing, "HEARTBEAT_EVERY_S", 0.05)
    store = Store.open(resolve(str(tmp_path / "h.db")), write=True)
    assert store is not None
    fingerprint = {"type": "fingerprint", "schema": 1, "host": {"hostname": "h"}}
    run_id = store.start_run(fingerprint, {"type": "plan", "benchmarks": []}, command=["t"])
    first = query(tmp_path / "h.db", "SELECT updated_at FROM runs")[0][0]
    deadline = time.monotonic() + HANG
    while query(tmp_path / "h.db", "SELECT updated_at FROM runs")[0][0] == first:
        assert time.monotonic() < deadline, "no heartbeat"
        time.sleep(0.02)
    store.finish_run(run_id, "complete")
    assert not [t for t in threading.enumerate()
                if t.name == f"kcross-heartbeat-{run_id}"]
    store.close()


def test_v1_database_is_migrated_to_the_current_shape(tmp_path: Path) -> None:
    """A database written by schema 1 gets the new columns; old runs show as stale, not live."""
    path = _v1_database(tmp_path / "v1.db")
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        assert migrations.upgrade(conn, "v1.db") == 1
        assert_schema_is_tables_py(conn, engine.dialect)
        inspector = sa.inspect(conn)
        indexes = {i["name"] for i in inspector.get_indexes("runs")}
        assert {i.name for i in tables.runs.indexes} <= indexes
    engine.dispose()
    store = Store.open(resolve(str(path)), write=False)
    assert store is not None
    (run,) = store.list_runs()
    store.close()
    assert run.id == 7 and run.status == "running" and not run.live
    assert run.state.startswith("stale (no heartbeat for ")


def _v1_database(path: Path) -> Path:
    """A database as schema 1 left it, holding run 7, stranded in 'running' long ago."""
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE kcross_schema (version INTEGER NOT NULL)"))
        conn.execute(sa.text("INSERT INTO kcross_schema VALUES (0)"))
        migrations.STEPS[0](conn)
        conn.execute(sa.text("UPDATE kcross_schema SET version = 1"))
        conn.execute(sa.text("INSERT INTO machines (id, fingerprint_hash, fingerprint, first_seen)"
                             " VALUES (1, 'x', '{}', '2024-01-01 00:00:00')"))
        conn.execute(sa.text("INSERT INTO runs (id, started_at, status, machine_id, source, "
                             "fingerprint) VALUES (7, '2024-01-01 00:00:00', 'running', 1, "
                             "'run', '{}')"))
    engine.dispose()
    return path


def test_run_upgrades_a_v1_database(kcross: Kcross, tmp_path: Path) -> None:
    path = _v1_database(tmp_path / "v1.db")
    proc = kcross("run", "--quick", "--suite", "syscall", "--bench", "getppid*", "--db", str(path))
    assert proc.returncode == 0, proc.stderr
    assert query(path, "SELECT version FROM kcross_schema") == [(migrations.LATEST,)]
    assert query(path, "SELECT id, status FROM runs ORDER BY id") == [(7, "running"),
                                                                      (8, "complete")]
