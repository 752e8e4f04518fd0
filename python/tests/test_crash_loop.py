"""The crash loop (issue 24): every command that writes a store, stopped at random instants
by SIGKILL, SIGTERM or SIGINT, and the stores checked after each instant.

The commands: ``run`` (the fake harness, tagging the run), ``run --processes 3``, ``import``
of a capture and of a LAVA job's log, ``delete``, ``tag``, the schema upgrade of an old store
(data/store-schema3.db; on PostgreSQL, a store taken back to schema 4), ``push`` and
``pull``.  Each instant starts the command on fresh copies of its stores, stops it, and then
these hold, whatever the instant:

- ``kcross check-store`` passes on every store (SQLite's pages, kcross's schema, the content
  hash of every run recomputed);
- every run stored before is byte-identical (its row, its results', its machine's; its tags
  but those the command moves), a store the command only reads is unchanged, and an upgrade
  leaves either the old store as it was or what an uninterrupted upgrade makes of it;
- the cut run is absent, complete or marked (``interrupted``; after SIGKILL, ``running`` with
  its process gone, which every reader shows as dead): never half-written, its results a
  whole prefix of the planned ones; a copied or imported run is there whole or not at all;
- SIGINT and SIGTERM end kcross with "kcross: interrupted" and status 130 or 143 (or the
  command had done its work first: 0), never a traceback.

An instant is timed (a random delay after the start, up to a little beyond what the command
takes uninterrupted) or held: inside the K-th write transaction, every statement made and
its commit not yet (kcross.store.db's ``hold``, test-only: $KCROSS_TEST_STORE_HOLD), which
stops kcross exactly there whatever the machine's load.  A signal goes to kcross, or for
``run`` at random to its process group (a terminal's Ctrl-C, the harness too).

The instants are drawn from a seed, printed with a failure: KCROSS_TEST_CRASH_SEED=SEED
replays them (a held instant exactly; a timed one at the same delay, which a machine's
load moves).  KCROSS_TEST_CRASH_INSTANTS sets how many instants each command gets on each
backend (CI: CI_INSTANTS, one signal after the other; ``./check stress``: many more,
testing.md); KCROSS_TEST_EXEC=1 starts every
kcross in an interpreter of its own (the instants of its start included) rather than a
forked child of the tests.  PostgreSQL too when KCROSS_TEST_POSTGRES_URL is set, every
store in a schema of its own.
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
from conftest import DATA, HANG, fake_capture, fork_kcross, isolated_env, terminal_signals
from kcross.store.db import HOLD_VARIABLE as HOLD

# CI's sample, per command: two instants of each signal on SQLite, one on PostgreSQL (about
# 20 and 20 seconds on an idle 2-CPU machine).
CI_INSTANTS = {"sqlite": 6, "postgresql": 3}
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)


def _instants() -> int | None:
    text = os.environ.get("KCROSS_TEST_CRASH_INSTANTS")
    if not text:
        return None
    if not text.isdigit() or not 0 < int(text) <= 100_000:
        raise pytest.UsageError(f"KCROSS_TEST_CRASH_INSTANTS={text}: wants a count above 0")
    return int(text)


INSTANTS = _instants()  # None: CI_INSTANTS
SEED = os.environ.get("KCROSS_TEST_CRASH_SEED") or secrets.token_hex(4)
EXEC = bool(os.environ.get("KCROSS_TEST_EXEC"))


# --- a kcross started and stopped ----------------------------------------------------------

class Child:
    """A kcross started in a process group of its own: forked from the tests, or (with
    KCROSS_TEST_EXEC) an interpreter of its own, its output kept in temporary files."""

    def __init__(self, args: list[str], environ: dict[str, str]) -> None:
        self.args = args
        self.out: IO[bytes] = tempfile.TemporaryFile()
        self.err: IO[bytes] = tempfile.TemporaryFile()
        self.code: int | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        if EXEC:
            self._popen = subprocess.Popen([sys.executable, "-m", "kcross", *args], env=environ,
                                           stdin=subprocess.DEVNULL, stdout=self.out,
                                           stderr=self.err, start_new_session=True,
                                           preexec_fn=terminal_signals)
            self.pid = self._popen.pid
        else:
            self.pid = fork_kcross(args, environ, self.out.fileno(), self.err.fileno(),
                                   own_group=True)

    def running(self) -> bool:
        if self.code is None:
            if self._popen is not None:
                self.code = self._popen.poll()
            else:
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    self.code = os.waitstatus_to_exitcode(status)
        return self.code is None

    def send(self, signum: int, group: bool) -> None:
        """The signal, to kcross or its whole group; nothing once it has ended (it is not
        reaped before :meth:`running` says so: its pid cannot be another's)."""
        if not self.running():
            return
        try:
            if group:
                os.killpg(self.pid, signum)
            else:
                os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def wait(self) -> subprocess.CompletedProcess[str]:
        deadline = time.monotonic() + HANG
        while self.running():
            if time.monotonic() > deadline:
                self.send(signal.SIGKILL, group=True)
                raise AssertionError(f"kcross {' '.join(self.args)} hung")
            time.sleep(0.002)
        outputs = []
        for f in (self.out, self.err):
            f.seek(0)
            outputs.append(f.read().decode(errors="replace"))
            f.close()
        assert self.code is not None
        return subprocess.CompletedProcess(["kcross", *self.args], self.code, *outputs)

    def kill(self) -> None:
        """Whatever is left of it (a failed test)."""
        if self.running():
            self.send(signal.SIGKILL, group=True)
            self.wait()


@dataclass(frozen=True)
class Instant:
    """Where a command is stopped, and how."""

    signum: int
    held: int | None = None   # inside the held-th write transaction (1 = the first)...
    delay: float = 0.0        # ...else this many seconds after the start
    group: bool = False       # the signal to kcross's process group, not to kcross alone

    def __str__(self) -> str:
        where = f"inside write transaction {self.held}" if self.held is not None else \
            f"{self.delay:.3f} s after the start"
        return f"{signal.Signals(self.signum).name} to {'the group' if self.group else 'kcross'}" \
               f" {where}"


@dataclass
class Ended:
    """A command's end: its process, the write transactions it held at (their points),
    and whether the signal was sent before it had ended."""

    proc: subprocess.CompletedProcess[str]
    points: list[str] = field(default_factory=list)
    sent: bool = False
    seconds: float = 0.0


def stop(args: list[str], environ: dict[str, str], instant: Instant | None,
         holds: Path) -> Ended:
    """Start kcross ARGS and stop it at ``instant`` (None: let it finish, counting its write
    transactions and timing it)."""
    env = dict(environ)
    if instant is None or instant.held is not None:
        holds.mkdir(exist_ok=True)
        env[HOLD] = str(holds)
    started = time.monotonic()
    child = Child(args, env)
    done = Ended(subprocess.CompletedProcess(args, 0))
    held = holds / "held"
    try:
        if instant is not None and instant.held is None:
            at = started + instant.delay
            while child.running() and time.monotonic() < at:
                time.sleep(0.001)
            done.sent = child.running()
            child.send(instant.signum, instant.group)
        else:
            while child.running():
                if not held.exists():
                    time.sleep(0.0005)
                    continue
                done.points.append(held.read_text())
                if instant is not None and len(done.points) == instant.held:
                    done.sent = True
                    child.send(instant.signum, instant.group)
                held.unlink()
        done.proc = child.wait()
        done.seconds = time.monotonic() - started
    finally:
        child.kill()
    return done


def kcross(environ: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """kcross ARGS to its end (a store prepared, a store checked)."""
    child = Child(list(args), environ)
    try:
        return child.wait()
    finally:
        child.kill()


def check_exit(done: Ended, instant: Instant, untouched: bool) -> None:
    """SIGKILL kills; SIGINT and SIGTERM end kcross as an interrupt ("kcross: interrupted",
    128 + the signal), or it had done its work (0); never a traceback.  Death by the signal
    itself only at a timed instant in the start, before kcross's code runs (Python's own
    start, a forked child's set-up): nothing said, nothing touched."""
    proc, signum = done.proc, instant.signum
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode == 0:
        return
    if signum == signal.SIGKILL or proc.returncode == -signum:
        assert proc.returncode == -signum, proc.stderr
        if signum != signal.SIGKILL:
            assert instant.held is None and not proc.stderr and untouched, \
                f"kcross died of {signal.Signals(signum).name}: {proc.stderr}"
        return
    assert proc.returncode == 128 + signum, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("kcross: interrupted"), proc.stderr


# --- the stores -----------------------------------------------------------------------------

TABLES = ("kcross_schema", "machines", "runs", "results", "tags")
Row = dict[str, Any]
Dump = dict[str, dict[Any, Row]]


def is_server(db: str) -> bool:
    return "://" in db


def dump(db: str) -> Dump:
    """Every row of kcross's tables, by its key (the first column), as column -> value:
    SQLite's as sqlite3 reads the file (text, bytes and numbers as stored), PostgreSQL's as
    its driver gives them.  Empty for a store not made."""
    if not is_server(db):
        if not Path(db).exists():
            return {}
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=HANG)
        conn.row_factory = sqlite3.Row
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            return {table: {row[0]: dict(row) for row in conn.execute(f"SELECT * FROM {table}")}
                    for table in TABLES if table in names}
        finally:
            conn.close()
    import sqlalchemy as sa

    engine = sa.create_engine(db)
    try:
        with engine.connect() as conn:
            names = set(sa.inspect(conn).get_table_names())
            return {table: {row[0]: dict(row._mapping)
                            for row in conn.execute(sa.text(f"SELECT * FROM {table}"))}
                    for table in TABLES if table in names}
    finally:
        engine.dispose()


def version(rows: Dump) -> int:
    ((number, _),) = rows["kcross_schema"].items()
    return int(number)


def results_of(rows: Dump, run_id: int) -> list[Row]:
    return sorted((r for r in rows["results"].values() if r["run_id"] == run_id),
                  key=lambda r: r["id"])


def tags_of(rows: Dump) -> dict[str, int]:
    """Tag name -> run id (tagged_at aside: a moved or copied tag's is its moment)."""
    return {name: row["run_id"] for name, row in rows.get("tags", {}).items()}


def without(row: Row, *columns: str) -> Row:
    return {k: v for k, v in row.items() if k not in columns}


def check_kept(before: Dump, after: Dump, *, may_go: frozenset[int] = frozenset()) -> list[int]:
    """Every run stored before as it was (its row, its results' rows), but a run of
    ``may_go``, which may be gone with all its rows and tags; every machine row as it was, a
    new one only with a run on it; no result without its run.  Returns the new runs' ids."""
    for run_id, row in before["runs"].items():
        if run_id in may_go and run_id not in after["runs"]:
            assert not results_of(after, run_id), f"run {run_id} gone, its results left"
            assert run_id not in tags_of(after).values(), f"run {run_id} gone, its tags left"
            continue
        assert after["runs"].get(run_id) == row, f"run {run_id}'s row changed"
        assert results_of(after, run_id) == results_of(before, run_id), \
            f"run {run_id}'s results changed"
    for machine_id, row in before["machines"].items():
        assert after["machines"].get(machine_id) == row, f"machine {machine_id} changed"
    used = {row["machine_id"] for row in after["runs"].values()}
    assert set(after["machines"]) <= used | set(before["machines"]), "a new machine, no run"
    orphans = {r["run_id"] for r in after["results"].values()} - set(after["runs"])
    assert not orphans, f"results of runs {sorted(orphans)}, which are not there"
    return sorted(set(after["runs"]) - set(before["runs"]))


def check_store(env: dict[str, str], db: str) -> None:
    """``kcross check-store``: every page (SQLite), the schema, every run's content hash."""
    proc = kcross(env, "check-store", "--db", db)
    assert proc.returncode == 0 and ": ok (" in proc.stdout, proc.stderr


def load_run(db: str, run_id: int) -> Any:
    """The run as kcross reads it, every record checked (a half-written one fails)."""
    from kcross.store import Store, resolve

    store = Store.open(resolve(db), write=False)
    assert store is not None
    try:
        return store.load_run(run_id)
    finally:
        store.close()


# --- the stores each instant starts from ----------------------------------------------------

@dataclass(frozen=True)
class Bases:
    """Stores and files made once, copied for each instant."""

    env: dict[str, str]
    base: Path      # run 1 (tag base), run 2 imported (tag other), run 3 (--processes 2)
    dest: Path      # base's run 1 pushed (tag base), and an import of its own
    capture: Path   # a capture of the syscall suite, stored nowhere


def ok(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="session")
def bases(tmp_path_factory: pytest.TempPathFactory) -> Bases:
    root = tmp_path_factory.mktemp("crash-loop")
    env = isolated_env(root)
    base, dest = root / "base.db", root / "dest.db"
    getppid, capture = root / "getppid.jsonl", root / "syscall.jsonl"
    getppid.write_text(fake_capture("--quick", "--bench", "syscall/getppid-*"))
    capture.write_text(fake_capture("--quick", "--suite", "syscall"))
    for args in (["run", "--quick", "--bench", "syscall/getcpu-*", "--tag", "base"],
                 ["import", str(getppid)], ["tag", "2", "other"],
                 ["run", "--quick", "--bench", "syscall/getcpu-*", "--processes", "2"]):
        ok(kcross(env, *args, "--db", str(base)))
    ok(kcross(env, "push", str(dest), "1", "--db", str(base)))
    ok(kcross(env, "import", str(DATA / "schema1-syscall.jsonl"), "--db", str(dest)))
    return Bases(env, base, dest, capture)


class Places:
    """Where one instant's stores go: files in a directory of their own, or (PostgreSQL)
    schemas of their own, each dropped at the end."""

    def __init__(self, backend: str, root: Path) -> None:
        self.backend, self.root = backend, root
        self.schemas: list[str] = []
        root.mkdir(parents=True)
        self.server = os.environ.get("KCROSS_TEST_POSTGRES_URL") if backend == "postgresql" \
            else None
        if backend == "postgresql" and not self.server:
            pytest.skip("KCROSS_TEST_POSTGRES_URL not set (no PostgreSQL server to test against)")

    def new(self, name: str) -> str:
        """An empty store of the backend (a file not made yet, an empty schema)."""
        if self.server is None:
            return str(self.root / f"{name}.db")
        import sqlalchemy as sa

        schema = f"kc_crash_{uuid.uuid4().hex[:12]}"
        engine = sa.create_engine(self.server)
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
        finally:
            engine.dispose()
        self.schemas.append(schema)
        url = sa.make_url(self.server).update_query_dict({"options": f"-csearch_path={schema}"})
        return url.render_as_string(hide_password=False)

    def copy(self, base: Path, name: str) -> str:
        """A store holding ``base``'s runs: the file copied, or its runs pushed to a schema."""
        if self.server is None:
            path = self.root / f"{name}.db"
            shutil.copyfile(base, path)
            return str(path)
        from kcross.store import Store, resolve
        from kcross.store.transfer import select_runs, transfer

        url = self.new(name)
        source, dest = Store.open(resolve(str(base)), write=False), \
            Store.open(resolve(url), write=True)
        assert source is not None and dest is not None
        try:  # in the order of their ids: they keep them
            copied = transfer(source, dest, sorted(select_runs(source, [])))
            assert all(c.dest_id == c.source_id for c in copied), copied
        finally:
            source.close()
            dest.close()
        return url

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        if not self.schemas:
            return
        import sqlalchemy as sa

        engine = sa.create_engine(self.server or "")
        try:
            with engine.begin() as conn:
                for schema in self.schemas:
                    conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        finally:
            engine.dispose()

    def __enter__(self) -> Places:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


# --- the commands ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Setup:
    """A command on fresh stores: its arguments, the store it writes, the stores it reads."""

    args: list[str]
    db: str
    read: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)   # kcross's, beyond the bases'


@dataclass(frozen=True)
class Seen:
    """One instant's stores, before and after, and the reference: the written store as the
    same command left it uninterrupted."""

    before: Dump
    after: Dump
    reference: Dump
    instant: Instant
    db: str
    # the write transactions committed when SIGKILL (or, for a command that does not catch
    # them, SIGINT or SIGTERM) came inside the next one; None for another instant
    committed: list[str] | None


def _run_setup(extra: list[str], env: dict[str, str]) -> Callable[[Bases, Places], Setup]:
    def setup(bases: Bases, places: Places) -> Setup:
        db = places.copy(bases.base, "k")
        return Setup(["run", "--quick", *extra, "--db", db], db, env=env)
    return setup


def check_live_run(seen: Seen) -> str:
    """kcross run: no new run, or one that is complete (all planned results, tagged if
    asked), interrupted (a whole prefix of them), or, after SIGKILL, still ``running`` with
    its process gone (a reader shows it dead)."""
    before, after = seen.before, seen.after
    new = check_kept(before, after)
    assert {k: v for k, v in tags_of(after).items() if k != "crash"} == tags_of(before)
    (planned,) = [len(results_of(seen.reference, r)) for r in check_kept(before, seen.reference)]
    assert len(new) <= 1, new
    if seen.committed is not None:
        assert len(new) == ("start_run" in seen.committed)
    if not new:
        assert "crash" not in tags_of(after)
        return "absent"
    run = after["runs"][new[0]]
    results = results_of(after, new[0])
    assert [r["seq"] for r in results] == list(range(len(results))) and len(results) <= planned
    stored = load_run(seen.db, new[0])
    assert len(stored.results) == len(results)
    if seen.committed is not None:
        assert len(results) == seen.committed.count("add_result")
        assert (run["status"] == "complete") == ("finish_run" in seen.committed)
    if "crash" in tags_of(after):
        assert tags_of(after)["crash"] == new[0] and run["status"] == "complete"
    status = run["status"]
    if status == "complete":
        assert len(results) == planned and run["content_hash"] is not None
        return "complete"
    if status == "interrupted":
        assert seen.instant.signum != signal.SIGKILL and \
            run["error"].startswith("interrupted by SIG"), run["error"]
        return "interrupted"
    assert status == "running" and seen.instant.signum == signal.SIGKILL, status
    assert not stored.live and stored.state.startswith("dead"), stored.state
    return "dead"


def check_whole_runs(seen: Seen) -> str:
    """An import, a push, a pull: each new run is one the uninterrupted command stored,
    whole (its row, results and tags), or not there at all."""
    before, after, reference = seen.before, seen.after, seen.reference
    new = check_kept(before, after)
    made = {reference["runs"][r]["content_hash"]: r for r in check_kept(before, reference)}
    assert {k: v for k, v in tags_of(after).items() if v not in new} == tags_of(before)
    if seen.committed is not None:
        assert len(new) == sum(p in ("copy", "import") for p in seen.committed)
    for run_id in new:
        row = after["runs"][run_id]
        assert row["content_hash"] in made, f"run {run_id}: not one the command stores"
        like = made[row["content_hash"]]
        volatile = ("id", "machine_id", "updated_at")  # an import's heartbeat is its moment
        assert without(row, *volatile) == without(reference["runs"][like], *volatile)
        assert [without(r, "id", "run_id") for r in results_of(after, run_id)] == \
            [without(r, "id", "run_id") for r in results_of(reference, like)]
        assert sorted(n for n, r in tags_of(after).items() if r == run_id) == \
            sorted(n for n, r in tags_of(reference).items() if r == like)
    return f"{len(new)} of {len(made)} stored"


def check_delete(seen: Seen) -> str:
    """kcross delete 2: run 2 there as it was (its tag too) or gone with all of it."""
    new = check_kept(seen.before, seen.after, may_go=frozenset({2}))
    assert not new
    gone = 2 not in seen.after["runs"]
    assert tags_of(seen.after) == {k: v for k, v in tags_of(seen.before).items()
                                   if not (gone and v == 2)}
    if seen.committed is not None:
        assert not gone
    return "deleted" if gone else "kept"


def check_tag(seen: Seen) -> str:
    """kcross tag 1 other: the tag names run 2 as before, or run 1; nothing else moves."""
    assert not check_kept(seen.before, seen.after)
    tags = tags_of(seen.after)
    assert tags in (tags_of(seen.before), tags_of(seen.reference)), tags
    assert {k: v for k, v in seen.after["tags"].items() if k != "other"} == \
        {k: v for k, v in seen.before["tags"].items() if k != "other"}
    moved = tags == tags_of(seen.reference)
    if seen.committed is not None:
        assert not moved
    return "moved" if moved else "kept"


def check_upgrade(seen: Seen) -> str:
    """kcross tag 1 upgraded on an old store: the store as it was (its old schema), or as
    the uninterrupted upgrade left it, with or without the new tag."""
    from kcross.store.migrations import LATEST

    after, reference = seen.after, seen.reference
    if version(after) != LATEST:
        assert after == seen.before, "an old store changed, not upgraded"
        assert seen.committed is None or "upgrade" not in seen.committed
        return "old"
    assert {t: rows for t, rows in after.items() if t != "tags"} == \
        {t: rows for t, rows in reference.items() if t != "tags"}, "not the upgrade's store"
    tags = tags_of(after)
    assert tags in ({k: v for k, v in tags_of(reference).items() if k != "upgraded"},
                    tags_of(reference)), tags
    if seen.committed is not None:
        assert seen.committed == ["upgrade"] and "upgraded" not in tags
    return "upgraded, tagged" if "upgraded" in tags else "upgraded"


def _upgrade_setup(bases: Bases, places: Places) -> Setup:
    if places.server is None:
        db = places.copy(DATA / "store-schema3.db", "old")
    else:
        import sqlalchemy as sa
        from test_postgres import back_to_schema_4

        db = places.copy(bases.base, "old")
        engine = sa.create_engine(db)
        try:
            back_to_schema_4(engine)
        finally:
            engine.dispose()
    return Setup(["tag", "1", "upgraded", "--db", db], db)


def _push_setup(bases: Bases, places: Places) -> Setup:
    source, dest = str(bases.base), places.copy(bases.dest, "dest")
    return Setup(["push", dest, "--db", source], dest, read=(source,))


def _pull_setup(bases: Bases, places: Places) -> Setup:
    source, dest = str(bases.base), places.copy(bases.dest, "dest")
    return Setup(["pull", source, "--db", dest], dest, read=(source,))


@dataclass(frozen=True)
class Command:
    """A command of the loop: its stores, what must hold after any instant of it, whether
    its signals may go to the group (it starts the harness), and whether it catches SIGINT
    and SIGTERM to end its work itself (kcross run: they never cut its writes)."""

    name: str
    setup: Callable[[Bases, Places], Setup]
    check: Callable[[Seen], str]
    live: bool = False


COMMANDS = (
    # (the fake harness a little slower than its pipe: a stopped run keeps part of its results)
    Command("run", _run_setup(["--bench", "syscall/get*", "--tag", "crash"],
                              {"KCROSS_FAKE_DELAY": "0.05"}), check_live_run, live=True),
    Command("run-processes", _run_setup(["--bench", "syscall/getcpu-*", "--processes", "3"], {}),
            check_live_run, live=True),
    Command("import", lambda b, p: Setup(["import", str(b.capture), "--db", db := p.copy(
        b.base, "k")], db), check_whole_runs),
    Command("import-lava", lambda b, p: Setup(["import", str(DATA / "lava" / "x86_64-getppid.log"),
                                               "--db", db := p.copy(b.base, "k")], db),
            check_whole_runs),
    Command("delete", lambda b, p: Setup(["delete", "2", "--db", db := p.copy(b.base, "k")], db),
            check_delete),
    Command("tag", lambda b, p: Setup(["tag", "1", "other", "--db", db := p.copy(b.base, "k")],
                                      db), check_tag),
    Command("upgrade", _upgrade_setup, check_upgrade),
    Command("push", _push_setup, check_whole_runs),
    Command("pull", _pull_setup, check_whole_runs),
)


# --- the loop -------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def _imported() -> None:
    """What a forked kcross would import, imported once before the first fork."""
    import kcross.cli
    import kcross.importer
    import kcross.lava.imports
    import kcross.run.runner
    import kcross.stats
    import kcross.store.checking
    import kcross.store.transfer  # noqa: F401


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_stopped_at_random_instants(command: Command, backend: str, bases: Bases,
                                    tmp_path: Path, request: pytest.FixtureRequest) -> None:
    env, holds = bases.env, tmp_path / "holds"
    with Places(backend, tmp_path / "reference") as places:
        setup = command.setup(bases, places)
        whole = stop(setup.args, {**env, **setup.env}, None, holds)
        ok(whole.proc)
        for db in (setup.db, *setup.read):
            check_store(env, db)
        reference = dump(setup.db)
    rng = random.Random(f"{SEED} {command.name} {backend}")
    instants = INSTANTS or CI_INSTANTS[backend]
    seen_outcomes: dict[str, int] = {}
    for i in range(instants):
        signum = SIGNALS[i % len(SIGNALS)]
        held, delay, group = rng.random() < 0.5, rng.uniform(0, 1.2 * whole.seconds), \
            rng.random() < 0.5
        instant = Instant(signum, held=rng.randint(1, len(whole.points)) if held else None,
                          delay=delay, group=group and command.live)
        done: Ended | None = None
        try:
            with Places(backend, tmp_path / str(i)) as places:
                setup = command.setup(bases, places)
                before, read = dump(setup.db), [dump(db) for db in setup.read]
                done = stop(setup.args, {**env, **setup.env}, instant, holds)
                for db in (setup.db, *setup.read):
                    check_store(env, db)
                after = dump(setup.db)
                check_exit(done, instant, after == before)
                assert [dump(db) for db in setup.read] == read, "a store only read changed"
                catches = command.live and signum != signal.SIGKILL
                committed = done.points[:-1] if instant.held is not None and done.sent \
                    and not catches else None
                outcome = command.check(Seen(before, after, reference, instant, setup.db,
                                             committed))
        except AssertionError as exc:
            points = f"; held at: {', '.join(done.points)}" if done and done.points else ""
            stderr = f"; its stderr: {done.proc.stderr[-600:]!r}" if done else ""
            raise AssertionError(
                f"{command.name} on {backend}, instant {i + 1} of {instants}: {instant}"
                f"{points}{stderr}: {exc}\nreplay: KCROSS_TEST_CRASH_SEED={SEED} "
                f"KCROSS_TEST_CRASH_INSTANTS={instants}{' KCROSS_TEST_EXEC=1' if EXEC else ''} "
                f"pytest '{request.node.nodeid}'") from exc
        key = f"{outcome}{'' if done.sent else ' (ended first)'}"
        seen_outcomes[key] = seen_outcomes.get(key, 0) + 1
    print(f"\ncrash loop: {command.name} on {backend}: {instants} instants (seed {SEED}, "
          f"{len(whole.points)} write transactions, {whole.seconds:.2f} s uninterrupted): "
          + ", ".join(f"{n} {k}" for k, n in sorted(seen_outcomes.items())))


# --- the instants the loop found -------------------------------------------------------------
# SIGTERM killed every command but run (and the lab) mid-way, a transaction under way left to
# SQLite's journal or the server; and SIGTERM raised as an ordinary exception inside the
# PostgreSQL driver's wait for a statement left the connection busy, its rollback failed,
# and kcross said "copying run 2 failed: ... another command is already in progress" (status
# 2) instead of "kcross: interrupted".

@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_stop_signal_inside_a_write_is_an_interrupt(bases: Bases, tmp_path: Path,
                                                      backend: str, signum: int) -> None:
    """kcross tag, stopped inside its transaction: "kcross: interrupted", 128 + the signal,
    the tag where it was."""
    with Places(backend, tmp_path / "stores") as places:
        db = places.copy(bases.base, "k")
        before = dump(db)
        done = stop(["tag", "1", "other", "--db", db], bases.env, Instant(signum, held=1),
                    tmp_path / "holds")
        assert (done.proc.returncode, done.proc.stderr) == \
            (128 + signum, "kcross: interrupted\n"), done.proc.stderr
        assert done.points == ["tag"] and dump(db) == before


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_while_the_server_works_is_an_interrupt(bases: Bases, tmp_path: Path,
                                                              signum: int) -> None:
    """kcross delete waiting for the server (a lock another session holds): the statement
    cancelled, "kcross: interrupted", the run still there."""
    import sqlalchemy as sa

    with Places("postgresql", tmp_path / "stores") as places:
        db = places.copy(bases.base, "k")
        before = dump(db)
        engine = sa.create_engine(db)
        try:
            with engine.connect() as locker:
                locker.execute(sa.text("LOCK TABLE tags IN ACCESS EXCLUSIVE MODE"))
                child = Child(["delete", "2", "--db", db], bases.env)
                try:
                    waiting = sa.text("SELECT count(*) FROM pg_locks WHERE NOT granted AND "
                                      "relation = to_regclass(current_schema() || '.tags')")
                    deadline = time.monotonic() + HANG
                    with engine.connect() as watch:
                        while not watch.execute(waiting).scalar_one():
                            assert child.running() and time.monotonic() < deadline, \
                                child.wait().stderr
                            time.sleep(0.01)
                    child.send(signum, group=False)
                    proc = child.wait()
                finally:
                    child.kill()
                locker.rollback()
        finally:
            engine.dispose()
        assert (proc.returncode, proc.stderr) == (128 + signum, "kcross: interrupted\n"), \
            proc.stderr
        assert dump(db) == before
