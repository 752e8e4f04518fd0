"""Shared helpers: run the kcross CLI as a subprocess against the fake harness and a temp DB."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
PYTHON_DIR = TESTS.parent
FAKE_HARNESS = TESTS / "fake_harness.py"
DATA = TESTS / "data"

Kcross = Callable[..., subprocess.CompletedProcess]


# --- hang guards ---------------------------------------------------------------------------
# How long a test lets a child process, a thread or a wait take is a guard against a hang,
# never a measurement of the machine: a 2-vCPU machine shared with other jobs (load average
# 10) runs a step ten or more times slower than an idle one, and a functional test must pass
# there.  One figure for every such guard, generous; KCROSS_TEST_HANG=SECONDS sets another
# (docs/testing.md).  A time limit that is itself the behaviour under test (kcross's own
# --timeout, a boot that must time out) is no guard and keeps its figure.

def _hang() -> float:
    text = os.environ.get("KCROSS_TEST_HANG") or "1200"
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < 1e6:
        raise pytest.UsageError(f"KCROSS_TEST_HANG={text}: wants seconds above 0")
    return seconds


HANG = _hang()


def terminal_signals() -> None:
    """preexec_fn: the stop signals at their defaults, as a terminal session has them.

    A test that delivers Ctrl-C must not inherit its runner's dispositions: a
    non-interactive shell starts background jobs with SIGINT ignored (CI
    scripts, chroots), and kcross rightly keeps a signal ignored at startup.
    """
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)


def isolated_env(root: Path) -> dict[str, str]:
    """An environment isolated from the user's real database and harness."""
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("KCROSS_", "XDG_"))}
    environ.update(
        KCROSS_HARNESS=str(FAKE_HARNESS),
        XDG_DATA_HOME=str(root / "xdg"),
        HOME=str(root / "home"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(PYTHON_DIR), os.environ.get("PYTHONPATH")])),
        COLUMNS="250",
    )
    return environ


# --- the source tree gains no file -------------------------------------------------------
# Every test runs in a directory of its own (kcross writes relative paths, a default
# database, exports, there), and the session fails if a file git would see (ignored ones,
# build/ and __pycache__/, excepted) appeared in the source tree while it ran: a stray
# `k.db` or `out.txt` in the checkout is a test's defect, found the day it is written.
# (Edits of tracked files are not counted: a developer may edit while the tests run.  A
# held view that KCROSS_UPDATE_VIEWS=1 adds is the switch's purpose, not a stray.)

SOURCE_TREE = PYTHON_DIR.parent
HELD_VIEWS = "python/tests/data/views/"


def _untracked() -> set[str] | None:
    """The files git lists as untracked; None outside a git checkout (an unpacked release)."""
    try:
        proc = subprocess.run(["git", "-C", str(SOURCE_TREE), "status", "--porcelain=v1", "-z",
                               "--untracked-files=all"], capture_output=True, timeout=HANG)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return {entry[3:] for entry in proc.stdout.decode(errors="replace").split("\0")
            if entry.startswith("?? ")}


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_TREE_KEY] = _untracked()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_TREE_KEY, None)
    after = _untracked() if before is not None else None
    if before is None or after is None:
        return
    new = sorted(p for p in after - before
                 if not (os.environ.get("KCROSS_UPDATE_VIEWS") and p.startswith(HELD_VIEWS)))
    if new:
        sys.stderr.write("\nthe tests wrote into the source tree (write under tmp_path "
                         "instead): " + ", ".join(new[:10]) + ("..." if len(new) > 10 else "")
                         + "\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_TREE_KEY = pytest.StashKey[set[str] | None]()


@pytest.fixture(autouse=True)
def _own_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test (and every kcross it starts) runs in its own temporary directory."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return isolated_env(tmp_path)


@pytest.fixture(scope="session")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one complete quick run of syscall/getcpu-* (2 results), made once
    per session."""
    root = tmp_path_factory.mktemp("template")
    path = root / "template.db"
    proc = subprocess.run([sys.executable, "-m", "kcross", "run", "--quick", "--bench", "syscall/getcpu-*",
                           "--db", str(path)], env=isolated_env(root), capture_output=True,
                          text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture
def stored_db(template_db: Path, tmp_path: Path) -> Path:
    """A private copy of the template database (run 1: syscall/getcpu-*, 2 results)."""
    path = tmp_path / "k.db"
    shutil.copyfile(template_db, path)
    return path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the default database lands under the isolated XDG_DATA_HOME."""
    return tmp_path / "xdg" / "kcross" / "kcross.db"


def _limit_file_size(limit: int | None) -> None:
    """In a child about to run kcross: files it writes may grow to ``limit`` bytes, so that
    a longer write fails (EFBIG) as on a full disk.  (Python ignores SIGXFSZ, the signal
    that would otherwise end the process.)"""
    if limit is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def fork_kcross(args: list[str], environ: dict[str, str], out: int, err: int, *,
                own_group: bool = False) -> int:
    """Start ``kcross ARGS`` in a forked child of the test process, its standard output and
    error the file descriptors ``out`` and ``err``; return its pid.  ``own_group``: the
    child leads a process group of its own (a shell's job: a test may signal the group).

    A child process with its own environment, file descriptors, signal
    handlers and exit status, like ``python -m kcross``, minus the interpreter
    start and imports (most of a second each on small machines), which keeps
    the suite fast.  Set KCROSS_TEST_EXEC=1 to use real interpreters instead.
    """
    from kcross import cli  # imported once, in the parent

    # Until kcross's code runs, a stop signal ends the child as one ends an interpreter
    # that is starting (by the signal, nothing said), not as the tests' own handlers would.
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if own_group:
            try:
                os.setpgid(pid, pid)  # now, not when the child gets to it: a test may signal it
            except OSError:
                pass
        return pid
    code = 1  # the child: never returns into pytest
    try:
        terminal_signals()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if own_group:
            os.setpgid(0, 0)
        os.environ.clear()
        os.environ.update(environ)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as Python's start does
        cli.main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        try:  # a signal after kcross's end (a test's, late) must not return into pytest
            signal.pthread_sigmask(signal.SIG_BLOCK, stops)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _forked_kcross(args: list[str], environ: dict[str, str],
                   timeout: float) -> subprocess.CompletedProcess:
    """Run ``kcross ARGS`` in a forked child (:func:`fork_kcross`) to its end."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = fork_kcross(args, environ, out.fileno(), err.fileno())
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["kcross", *args], timeout)
            time.sleep(0.005)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(["kcross", *args], os.waitstatus_to_exitcode(status),
                                           out.read().decode(), err.read().decode())


@pytest.fixture
def kcross(env: dict[str, str]) -> Kcross:
    """Run ``kcross ARGS`` as a separate process; keyword ``extra_env`` adds variables,
    ``file_size_limit`` makes a write of a file beyond that many bytes fail, as on a full
    disk (kcross then runs in its own interpreter, its output captured through pipes,
    which the limit does not concern)."""

    def run(*args: str, extra_env: dict[str, str] | None = None,
            timeout: float = HANG, file_size_limit: int | None = None
            ) -> subprocess.CompletedProcess:
        environ = {**env, **(extra_env or {})}
        if os.environ.get("KCROSS_TEST_EXEC") or file_size_limit is not None:
            return subprocess.run([sys.executable, "-m", "kcross", *args], env=environ,
                                  capture_output=True, text=True, timeout=timeout,
                                  preexec_fn=lambda: _limit_file_size(file_size_limit))
        return _forked_kcross(list(args), environ, timeout)

    return run


def captured(kind: str = "run") -> list[dict]:
    """The records the fake harness serves: python/tests/data/real-{run,list,sysinfo}.jsonl.

    Tests compare with these instead of copying figures, so that a new capture
    (python/tests/data/capture-real-run) needs no test edits.
    """
    with (DATA / f"real-{kind}.jsonl").open() as f:
        return [json.loads(line) for line in f if line.strip() and not line.startswith("#")]


def captured_result(name: str) -> dict:
    """The captured result of ``suite/name``."""
    suite, _, bench = name.partition("/")
    (rec,) = [r for r in captured() if r["type"] == "result"
              and (r["suite"], r["name"]) == (suite, bench)]
    return rec


def fake_capture(*args: str, extra_env: dict[str, str] | None = None) -> str:
    """What ``kcross-harness run --json ARGS`` prints (via the fake harness)."""
    environ = {**os.environ, **(extra_env or {})}
    proc = subprocess.run([sys.executable, str(FAKE_HARNESS), "run", "--json", *args],
                          env=environ, capture_output=True, text=True, timeout=HANG)
    return proc.stdout


def assert_one_line_error(proc: subprocess.CompletedProcess, code: int = 2,
                          contains: str = "", *, after_progress: bool = False) -> str:
    """The CLI contract for expected failures: one error line, the status, no traceback.

    ``after_progress`` allows the per-benchmark progress lines that a run
    prints before its harness fails; the error itself is still one line.
    """
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    if not after_progress:
        assert len(lines) == 1, proc.stderr
    assert lines and lines[-1].startswith("kcross: error: "), proc.stderr
    assert sum(line.startswith("kcross: error:") for line in lines) == 1, proc.stderr
    assert contains in lines[-1], lines[-1]
    return lines[-1]


def ruled_table(text: str, key: Callable[[str], bool] = lambda cell: "/" in cell
                and " " not in cell) -> tuple[list[str], dict[str, list[str]]]:
    """The first table in ``text`` drawn with rules (the run table, compare, check, runs):
    its column headers (a header's lines joined by a space) and its rows by their first
    cell, read by the columns the rule of dashes under the header marks out.  A row starts
    at a line whose first cell ``key`` accepts; the lines under it with an empty first cell
    are its own (a cell's lines joined by a space: ``130.6 [129.4, 133.8]``); the first
    line whose first cell ``key`` refuses (the notes) ends the table."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if re.fullmatch(r"-+( +-+)+ *", line))
    spans = [m.span() for m in re.finditer(r"-+", lines[at])]
    starts = [a for a, _ in spans] + [1 << 20]

    def cells(line: str) -> list[str]:
        return [line[a:starts[i + 1]].strip() for i, (a, _) in enumerate(spans)]

    def inside(line: str) -> bool:   # no text between the columns: a header's line
        return all(c == " " for i, c in enumerate(line)
                   if not any(a <= i < b for a, b in spans))

    top = at - 1   # the header's lines: within the columns, a cell after the first (a
    while top > 0 and inside(lines[top - 1]) and any(cells(lines[top - 1])[1:]):
        top -= 1   # title is a line of its own, from the first column)
    heads = [" ".join(filter(None, parts)) for parts in zip(*map(cells, lines[top:at]),
                                                             strict=True)]
    rows: dict[str, list[str]] = {}
    row: list[str] | None = None
    for line in lines[at + 1:]:
        if not line.strip():
            continue
        found = cells(line)
        if not found[0] and row is not None:
            row[:] = [" ".join(filter(None, pair)) for pair in zip(row, found, strict=True)]
            continue
        if not key(found[0]):
            break
        row = rows[found[0]] = found
    return heads, rows


def runs_rows(text: str) -> dict[str, dict[str, str]]:
    """``kcross runs``'s rows by run id, each its cells by header."""
    heads, rows = ruled_table(text, key=str.isdigit)
    return {k: dict(zip(heads, cells, strict=True)) for k, cells in rows.items()}


def run_table(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The run table in ``text`` (kcross run/show): :func:`ruled_table`."""
    return ruled_table(text)


def opens_for_writing(path: str) -> bool:
    """Whether this process may open ``path`` for writing (``/dev/full`` in a container
    may not be)."""
    try:
        os.close(os.open(path, os.O_WRONLY))
    except OSError:
        return False
    return True


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stored_rows(db: Path, table: str) -> int:
    """Rows of ``table`` stored so far; 0 while the database or its schema is not there yet."""
    if not db.exists():
        return 0
    try:
        return query(db, f"SELECT count(*) FROM {table}")[0][0]
    except sqlite3.OperationalError:
        return 0


def wait_for_rows(proc: subprocess.Popen, db: Path, table: str, count: int,
                  timeout: float = HANG) -> None:
    """Wait until a running kcross has stored ``count`` rows of ``table``; fail if it ends first."""
    deadline = time.monotonic() + timeout
    while stored_rows(db, table) < count:
        assert time.monotonic() < deadline, f"{count} {table} row(s) never arrived"
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.03)


# What store schemas 8 and 9 added, as a test takes a store back to an older schema: runs'
# text copies of three fingerprint fields, the process_levels table and an index of runs
# (kcross.store.migrations).
SCHEMA_8_RUN_COLUMNS = ("host_time", "kcross_build", "lab_kernel_sha256")
SCHEMA_9_TABLE = "process_levels"
SCHEMA_9_INDEX = "ix_runs_machine_started"


def assert_schema_is_tables_py(conn: Any, dialect: Any) -> None:
    """Every table of kcross.store.tables exists in ``conn`` with the same columns and
    indexes."""
    import sqlalchemy as sa
    from kcross.store import tables

    inspector = sa.inspect(conn)
    for table in tables.metadata.sorted_tables:
        got = {c["name"]: (str(c["type"]), c["nullable"]) for c in inspector.get_columns(table.name)}
        want = {c.name: (str(c.type.compile(dialect)), c.nullable) for c in table.columns}
        assert got == want, table.name
        # and its indexes, by name and columns
        got_ix = {ix["name"]: tuple(ix["column_names"]) for ix in inspector.get_indexes(table.name)}
        want_ix = {ix.name: tuple(c.name for c in ix.columns) for ix in table.indexes}
        assert got_ix == want_ix, table.name


def query(db: Path, sql: str, *params: object) -> list[tuple]:
    """Read the database directly, independently of kcross's own code."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=HANG)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A PostgreSQL URL whose tables land in a new, empty schema (dropped afterwards);
    skipped, saying so, without $KCROSS_TEST_POSTGRES_URL."""
    url_text = os.environ.get("KCROSS_TEST_POSTGRES_URL")
    if not url_text:
        pytest.skip("KCROSS_TEST_POSTGRES_URL not set (no PostgreSQL server to test against)")
    import uuid

    import sqlalchemy as sa

    name = f"kc_test_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(url_text)
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {name}"))
    url = sa.make_url(url_text).update_query_dict({"options": f"-csearch_path={name}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {name} CASCADE"))
        engine.dispose()


# --- the real benchstat -------------------------------------------------------------------
# Built from the Go module proxy with ``go install`` into
# ``$XDG_CACHE_HOME/kcross/benchstat/VERSION`` (once; later runs reuse it), at a pinned
# golang.org/x/perf revision that Debian 12's Go 1.19 builds (and newer Go too).  Without
# go, or without the proxy, the tests that need it are skipped and say why;
# ``KCROSS_TEST_BENCHSTAT=PATH`` uses a benchstat that is already there,
# ``KCROSS_TEST_GO=PATH`` another go.

# The last golang.org/x/perf revision whose go.mod says "go 1.15" (from August 2023
# on it needs Go 1.2x, which Debian 12's Go 1.19 cannot build and, having no
# GOTOOLCHAIN, cannot fetch either).  It is already the benchstat with -col/-row/-table
# (January 2023), the one whose format the gobench export targets.
BENCHSTAT = "golang.org/x/perf/cmd/benchstat"
BENCHSTAT_VERSION = "v0.0.0-20230113213139-801c7ef9e5c5"
# What go says when it cannot reach the proxy (or any network).
OFFLINE = re.compile(r"dial tcp|no such host|lookup .* on|connection refused|i/o timeout|"
                     r"TLS handshake|network is unreachable|proxy|Temporary failure|"
                     r"server misbehaving|unexpected EOF|403 Forbidden|404 Not Found|lookup disabled")


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kcross" / "benchstat" / BENCHSTAT_VERSION


@pytest.fixture(scope="session")
def benchstat() -> Path:
    """The real benchstat, built from the Go module proxy (skipped with the reason if it
    cannot be)."""
    given = os.environ.get("KCROSS_TEST_BENCHSTAT")
    if given:
        return Path(given)
    cache = _cache()
    binary = cache / "bin" / "benchstat"
    if binary.exists():
        return binary
    if os.environ.get("KCROSS_TEST_NO_NETWORK"):
        pytest.skip("KCROSS_TEST_NO_NETWORK is set (benchstat is built from the Go module proxy)")
    go = os.environ.get("KCROSS_TEST_GO") or shutil.which("go")
    if not go:
        pytest.skip("no go to build benchstat with (Debian: apt-get install golang-go)")
    environ = {**os.environ, "GOBIN": str(cache / "bin"), "GOPATH": str(cache / "gopath"),
               "GOCACHE": str(cache / "gocache"), "GO111MODULE": "on",
               "GOFLAGS": "-modcacherw -buildvcs=false",  # a module cache rm -rf can remove
               "GOTOOLCHAIN": "local"}  # Go >= 1.21: build with this go, fetch no other
    cache.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([go, "install", f"{BENCHSTAT}@{BENCHSTAT_VERSION}"], env=environ,
                              capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        pytest.skip("go install of benchstat took over 15 minutes (a slow or stalled proxy)")
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        if OFFLINE.search(proc.stderr):
            pytest.skip(f"cannot fetch benchstat from the Go module proxy: {last}")
        pytest.fail(f"go install {BENCHSTAT}@{BENCHSTAT_VERSION} failed: {proc.stderr}")
    assert binary.exists(), proc.stderr
    return binary
