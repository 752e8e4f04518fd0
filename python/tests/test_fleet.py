"""kcross push / pull between stores of any backend (SQLite file, PostgreSQL), and their errors.

Each copy test runs for every pair of backends (sqlite->sqlite, sqlite->postgresql,
postgresql->sqlite, postgresql->postgresql); the PostgreSQL ones are skipped, saying
so, without KCROSS_TEST_POSTGRES_URL.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import HANG, Kcross, assert_one_line_error, sha256
from kcross.store import Store, migrations, resolve
from kcross.store import transfer as transfer_module
from test_store_refs import KEPT, fill, opened

N = KEPT  # results of each run fill() stores
PAIRS = [("sqlite", "sqlite"), ("sqlite", "postgresql"), ("postgresql", "sqlite"),
         ("postgresql", "postgresql")]


@pytest.fixture
def pg_url() -> Iterator[Any]:
    """Make fresh PostgreSQL schemas on demand (dropped afterwards); skips without a server."""
    base = os.environ.get("KCROSS_TEST_POSTGRES_URL")
    engine = sa.create_engine(base) if base else None
    made: list[str] = []

    def make() -> str:
        if engine is None:
            pytest.skip("KCROSS_TEST_POSTGRES_URL not set (no PostgreSQL server to test against)")
        name = f"kc_fleet_{uuid.uuid4().hex[:12]}"
        with engine.begin() as conn:
            conn.execute(sa.text(f"CREATE SCHEMA {name}"))
        made.append(name)
        # A session time zone far from UTC: a naive datetime would land hours off.
        url = sa.make_url(base).update_query_dict(
            {"options": f"-csearch_path={name} -ctimezone=Pacific/Chatham"})
        return url.render_as_string(hide_password=False)

    yield make
    if engine is not None:
        with engine.begin() as conn:
            for name in made:
                conn.execute(sa.text(f"DROP SCHEMA {name} CASCADE"))
        engine.dispose()


@pytest.fixture(params=PAIRS, ids=["->".join(p) for p in PAIRS])
def stores(request: pytest.FixtureRequest, tmp_path: Path, pg_url: Any) -> tuple[str, str]:
    """(source, destination): two empty stores of the pair's backends."""
    def one(kind: str, name: str) -> str:
        return str(tmp_path / f"{name}.db") if kind == "sqlite" else pg_url()

    src_kind, dst_kind = request.param
    return one(src_kind, "src"), one(dst_kind, "dst")


def engine_of(url: str) -> sa.Engine:
    return sa.create_engine(url if "://" in url else f"sqlite:///{url}")


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    engine = engine_of(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql))]
    finally:
        engine.dispose()


def execute(url: str, sql: str) -> None:
    engine = engine_of(url)
    with engine.begin() as conn:
        conn.execute(sa.text(sql))
    engine.dispose()


def stored_runs(url: str) -> list[tuple[Any, ...]]:
    """What identifies each run and its machine, with times in UTC whatever the backend."""
    from kcross.store import tables as t

    count = (sa.select(sa.func.count(t.results.c.id))
             .where(t.results.c.run_id == t.runs.c.id).scalar_subquery())
    query = (sa.select(t.runs.c.started_at, t.runs.c.finished_at, t.runs.c.status,
                       t.runs.c.source, t.runs.c.content_hash, t.runs.c.command,
                       t.machines.c.fingerprint_hash, t.machines.c.hostname, count)
             .join(t.machines, t.machines.c.id == t.runs.c.machine_id).order_by(t.runs.c.id))
    engine = engine_of(url)
    try:
        with engine.connect() as conn:
            got = [tuple(r) for r in conn.execute(query)]
    finally:
        engine.dispose()
    return [tuple(v.replace(tzinfo=dt.UTC) if isinstance(v, dt.datetime) and v.tzinfo is None
                  else v.astimezone(dt.UTC) if isinstance(v, dt.datetime) else v for v in r)
            for r in got]


def untouched(url: str) -> bool:
    """Nothing was created: no file, or no table in the PostgreSQL schema."""
    if "://" not in url:
        return not Path(url).exists()
    engine = engine_of(url)
    try:
        with engine.connect() as conn:
            return not sa.inspect(conn).get_table_names()
    finally:
        engine.dispose()


def records(url: str, ref: str) -> list[dict[str, Any]]:
    """A run as 'kcross show --json' writes it, parsed (JSONB reorders keys; the records stay)."""
    store = opened(url)
    try:
        run = store.load_run(ref)
    finally:
        store.close()
    return [r for r in (run.fingerprint, run.plan, *run.results, run.end) if r is not None]


def test_push_copies_runs_with_machines_results_tags_and_hash(kcross: Kcross,
                                                              stores: tuple[str, str]) -> None:
    src, dst = stores
    a, b, c = fill(src, ("alpha", 1), ("beta", 2), ("alpha", 3))
    assert kcross("tag", str(a), "base", "--db", src).returncode == 0
    proc = kcross("push", dst, "--db", src)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == [f"copied run {a} -> run 1 (complete, {N} result(s)); tagged base",
                         f"copied run {b} -> run 2 (complete, {N} result(s))",
                         f"copied run {c} -> run 3 (complete, {N} result(s))"]
    assert lines[3].startswith("pushed 3 run(s) to ") and lines[3].endswith(
        "; 0 already there (skipped)") and len(lines) == 4
    for ref in ("1", "2", "3", "base", "latest@alpha", "latest@beta"):
        assert records(dst, ref) == records(src, ref), ref
    assert stored_runs(dst) == stored_runs(src)
    assert rows(dst, "SELECT count(*) FROM machines") == [(2,)]
    assert rows(dst, "SELECT name, run_id FROM tags") == [("base", 1)]
    # Again: everything is there already; nothing is stored twice.
    again = kcross("push", dst, "--db", src)
    assert again.stdout.splitlines()[:3] == [f"skipped run {i}: already there as run {i}"
                                            for i in (a, b, c)]
    assert "pushed 0 run(s)" in again.stdout and "; 3 already there (skipped)" in again.stdout
    assert rows(dst, "SELECT count(*) FROM runs") == [(3,)]
    assert rows(dst, "SELECT count(*) FROM results") == rows(src, "SELECT count(*) FROM results")


def test_pull_named_runs_and_new_tags_on_runs_already_there(kcross: Kcross,
                                                            stores: tuple[str, str]) -> None:
    remote, local = stores
    fill(remote, ("alpha", 1), ("beta", 2), ("alpha", 3))
    kcross("tag", "2", "base", "--db", remote)
    proc = kcross("pull", "--db", local, remote, "base", "latest@alpha", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        f"copied run 2 -> run 1 (complete, {N} result(s)); tagged base",
        f"copied run 3 -> run 2 (complete, {N} result(s))"]
    assert "pulled 2 run(s) from " in proc.stdout
    assert records(local, "latest") == records(remote, "latest")
    assert records(local, "base") == records(remote, "base")
    # A tag added at the source later follows the run; a tag taken here stays.
    kcross("tag", "3", "new", "--db", remote)
    kcross("tag", "3", "mine", "--db", remote)
    kcross("tag", "1", "mine", "--db", local)
    proc = kcross("pull", "--db", local, remote)
    assert proc.stdout.splitlines()[:3] == [
        f"copied run 1 -> run 3 (complete, {N} result(s))",
        "skipped run 2: already there as run 1",
        "skipped run 3: already there as run 2; tag mine not copied: it names run 1 there; "
        "tagged new"]
    assert rows(local, "SELECT name, run_id FROM tags ORDER BY name") == [
        ("base", 1), ("mine", 1), ("new", 2)]


def test_the_same_run_without_content_hash_is_still_recognised(kcross: Kcross,
                                                               stores: tuple[str, str]) -> None:
    """Runs of older stores may have no content hash: machine, source and start decide."""
    src, dst = stores
    fill(src, ("alpha", 1))
    assert kcross("push", dst, "--db", src).returncode == 0
    execute(dst, "UPDATE runs SET content_hash = NULL")
    execute(src, "UPDATE runs SET content_hash = NULL")
    proc = kcross("push", dst, "--db", src)
    assert proc.stdout.startswith("skipped run 1: already there as run 1\n"), proc.stdout
    execute(src, "UPDATE runs SET status = 'interrupted'")
    proc = kcross("push", dst, "--db", src)
    assert f"differs there (complete, {N} result(s); here interrupted, {N}): delete run 1 there " \
           "to copy it again" in proc.stdout
    assert rows(dst, "SELECT count(*) FROM runs") == [(1,)]


def test_running_run_is_refused_unless_forced(kcross: Kcross, stores: tuple[str, str]) -> None:
    src, dst = stores
    fill(src, ("alpha", 1), ("beta", 2))
    execute(src, "UPDATE runs SET status = 'running', owner_host = 'elsewhere', "
                 "updated_at = started_at WHERE id = 2")
    line = assert_one_line_error(kcross("push", dst, "--db", src), contains="run 2 (stale")
    assert "still running in" in line and "nothing copied" in line and "--force" in line
    assert untouched(dst)
    assert kcross("push", dst, "1", "--db", src).returncode == 0  # the others are fine
    proc = kcross("push", dst, "--force", "--db", src)
    assert proc.returncode == 0, proc.stderr
    assert f"copied run 2 -> run 2 (interrupted, {N} result(s)); copied while still running: " \
           "marked interrupted there" in proc.stdout
    (error,) = rows(dst, "SELECT error FROM runs WHERE id = 2")[0]
    assert error.startswith("copied from ") and f"while still running ({N} result(s) then)" in error


def test_interrupted_push_leaves_no_half_run(stores: tuple[str, str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    src, dst = stores
    fill(src, ("alpha", 1), ("beta", 2))
    calls = {"n": 0}
    copy_tags = transfer_module._copy_tags

    def failing(conn: sa.Connection, names: Any, dest_id: int) -> list[str]:
        calls["n"] += 1
        if calls["n"] == 2:  # the second run's results are in, its transaction is not over
            assert conn.execute(sa.text("SELECT count(*) FROM results WHERE run_id = :r"),
                                {"r": dest_id}).scalar_one() == N
            raise KeyboardInterrupt
        return copy_tags(conn, names, dest_id)

    monkeypatch.setattr(transfer_module, "_copy_tags", failing)
    source = opened(src)
    dest = Store.open(resolve(dst), write=True)
    assert dest is not None
    seen: list[transfer_module.Copied] = []
    with pytest.raises(KeyboardInterrupt):
        transfer_module.transfer(source, dest, [1, 2], each=seen.append)
    source.close()
    dest.close()
    assert [(o.source_id, o.copied) for o in seen] == [(1, True)]
    assert rows(dst, "SELECT id FROM runs") == [(1,)]
    assert rows(dst, "SELECT count(*) FROM results") == [(N,)]
    assert rows(dst, "SELECT hostname FROM machines") == [("alpha",)]
    monkeypatch.undo()
    source, dest = opened(src), Store.open(resolve(dst), write=True)
    assert dest is not None
    done = transfer_module.transfer(source, dest, [1, 2])
    source.close()
    dest.close()
    assert [(o.source_id, o.copied) for o in done] == [(1, False), (2, True)]
    assert rows(dst, "SELECT count(*) FROM results") == [(2 * N,)]


def test_push_errors_are_one_line_and_change_nothing(kcross: Kcross, tmp_path: Path,
                                                     stored_db: Path) -> None:
    src = ["--db", str(stored_db)]
    before = sha256(stored_db)
    # the same store, however it is spelled
    for same in (str(stored_db), f"sqlite:///{stored_db}",
                 os.path.relpath(stored_db), str(stored_db.parent / "." / stored_db.name)):
        assert_one_line_error(kcross("push", same, *src), contains="is both source and destination")
    # unreachable server: one line naming it, password hidden
    line = assert_one_line_error(kcross("push", "postgresql+psycopg://kc:secret@127.0.0.1:1/kc",
                                        *src), contains="127.0.0.1:1/kc")
    assert "secret" not in line
    # unknown runs: refused before the destination is created
    dest = tmp_path / "new.db"
    assert_one_line_error(kcross("push", str(dest), "nosuch", *src), contains="no run or tag 'nosuch'")
    assert_one_line_error(kcross("push", str(dest), "7", *src), contains="no run 7")
    assert_one_line_error(kcross("push", str(dest), "latest~1", *src),
                          contains="latest~0 is the oldest")
    assert not dest.exists()
    # nothing to push from
    assert_one_line_error(kcross("pull", str(tmp_path / "none.db"), "--db", str(dest)),
                          contains="none.db: no such file")
    assert not dest.exists()
    # a destination written by a newer kcross is refused and left as it was
    newer = tmp_path / "newer.db"
    assert kcross("push", str(newer), *src).returncode == 0
    execute(str(newer), f"UPDATE kcross_schema SET version = {migrations.LATEST + 1}")
    newer_sum = sha256(newer)
    assert_one_line_error(kcross("push", str(newer), *src),
                          contains=f"schema version {migrations.LATEST + 1}, this kcross")
    assert_one_line_error(kcross("pull", str(newer), *src),
                          contains=f"schema version {migrations.LATEST + 1}, this kcross")
    assert sha256(newer) == newer_sum and sha256(stored_db) == before


def test_newer_schema_on_postgres_is_refused(kcross: Kcross, stored_db: Path,
                                             pg_schema: str) -> None:
    assert kcross("push", pg_schema, "--db", str(stored_db)).returncode == 0
    assert_one_line_error(kcross("pull", pg_schema, "--db", pg_schema),
                          contains="is both source and destination")
    execute(pg_schema, f"UPDATE kcross_schema SET version = {migrations.LATEST + 1}")
    assert_one_line_error(kcross("push", pg_schema, "--db", str(stored_db)),
                          contains=f"has schema version {migrations.LATEST + 1}")
    assert rows(pg_schema, "SELECT count(*) FROM runs") == [(1,)]


def test_kcross_db_names_the_local_store(kcross: Kcross, tmp_path: Path, stored_db: Path) -> None:
    """push/pull/tag use --db, else $KCROSS_DB, like every command touching the store."""
    env = {"KCROSS_DB": str(stored_db)}
    assert kcross("tag", "1", "base", extra_env=env).returncode == 0
    out = tmp_path / "out.db"
    assert kcross("push", str(out), "base", extra_env=env).returncode == 0
    # options anywhere among the positionals
    proc = kcross("push", str(out), "--db", str(stored_db), "1", "--force")
    assert proc.stdout.startswith("skipped run 1: already there as run 1\n"), proc.stderr
    assert_one_line_error(kcross("push", extra_env=env), contains="give the store to push to")
    assert_one_line_error(kcross("pull", extra_env=env), contains="give the store to pull from")
    local = tmp_path / "local.db"
    proc = kcross("pull", str(out), extra_env={"KCROSS_DB": str(local)})
    assert proc.returncode == 0, proc.stderr
    assert records(str(local), "base") == records(str(stored_db), "1")


def test_push_from_a_schema_2_store_upgrades_it(kcross: Kcross, tmp_path: Path,
                                                stored_db: Path) -> None:
    from test_store_refs import _as_v2

    _as_v2(stored_db)
    dest = tmp_path / "d.db"
    proc = kcross("push", str(dest), "--db", str(stored_db))
    assert proc.returncode == 0, proc.stderr
    assert rows(str(stored_db), "SELECT version FROM kcross_schema") == [(migrations.LATEST,)]
    assert json.dumps(records(str(dest), "1")) == json.dumps(records(str(stored_db), "1"))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_pushes_at_once_store_each_run_once(backend: str, tmp_path: Path,
                                                pg_url: Any) -> None:
    """Two machines pushing the same runs at the same moment: each run lands once."""
    import threading

    src = str(tmp_path / "src.db")
    dst = str(tmp_path / "dst.db") if backend == "sqlite" else pg_url()
    fill(src, ("alpha", 1), ("beta", 2), ("gamma", 3))
    Store.open(resolve(dst), write=True).close()  # type: ignore[union-attr]
    failures: list[BaseException] = []
    start = threading.Barrier(2)

    def push() -> None:
        source, dest = opened(src), Store.open(resolve(dst), write=True)
        assert dest is not None
        try:
            start.wait()
            transfer_module.transfer(source, dest, [1, 2, 3])
        except BaseException as exc:  # noqa: BLE001  (reported below)
            failures.append(exc)
        finally:
            source.close()
            dest.close()

    threads = [threading.Thread(target=push) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=HANG)
    assert not failures, failures
    assert rows(dst, "SELECT count(*) FROM runs") == [(3,)]
    assert rows(dst, "SELECT count(*) FROM results") == [(3 * N,)]
    assert rows(dst, "SELECT count(*) FROM machines") == [(3,)]


def test_times_read_back_in_utc_whatever_the_session_time_zone(kcross: Kcross,
                                                              pg_url: Any) -> None:
    """PostgreSQL hands times back in the session's zone; `kcross runs` says UTC and means it."""
    url = pg_url()  # a session in Pacific/Chatham (UTC+13:45 in January)
    fill(url, ("alpha", 1))
    store = opened(url)
    try:
        (run,) = store.list_runs()
        started = store.load_run("latest").started_at
    finally:
        store.close()
    utc = dt.datetime(2026, 1, 1, 0, 1, tzinfo=dt.UTC)
    assert run.started_at == started == utc
    assert run.started_at.utcoffset() == started.utcoffset() == dt.timedelta(0)
    assert "2026-01-01 00:01 " in kcross("runs", "--db", url).stdout   # (to the minute)
