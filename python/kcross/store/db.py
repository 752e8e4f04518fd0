"""Opening the result database safely.

A database that cannot be used must produce one clear line and stay exactly
as it was: a file without write permission is refused for writing (even for
root, who could write it anyway), a file that is not SQLite is refused, and a
damaged one is named corrupt (``guard``) and never made worse.  What is checked,
and when, is proportional to what a command reads or writes, not to the store
(a store of 10,000 runs is over a GB; SQLite's full ``PRAGMA quick_check`` reads
all of it, about a second per GB, which every ``kcross import`` used to pay):

* every open reads the schema version through a read-only connection first:
  SQLite checks the header there (a file cut short of the size its header
  gives is SQLITE_CORRUPT) and parses the schema, so a foreign, too new or
  visibly damaged file is refused before any read-write connection exists;
* a writer's connections run with ``PRAGMA cell_size_check = ON``: every page
  a write loads (the b-tree paths it descends, the siblings it balances) is
  checked cell by cell before SQLite changes anything, so damage on a page the
  write would touch is SQLITE_CORRUPT, ``guard`` names the file, and the
  transaction is rolled back, leaving the file byte-identical (SQLite writes
  the database file at commit, or plays back from its journal what it spilled
  before);
* damage elsewhere is not touched by the write, so it is not made worse; a
  read that meets it names the file corrupt, and ``kcross check-store`` runs the
  full ``quick_check`` on demand;
* the full ``quick_check`` also runs, before anything else, whenever this
  process rolled back a hot journal (below): the previous writer died
  mid-transaction, the one moment when it is worth its second per GB; and in
  ``check_writable``, which commands that measure before they write
  (``kcross run``, ``lab``) call before measuring: there a second per GB is
  small next to the measurement, and a damaged store is refused before the
  measurement is made rather than when its first record is written.

A rollback journal that a writer killed mid-transaction left behind (a "hot
journal") is played back by SQLite through a read-write connection before
anything else, since no read-only connection may read the file until then (the
database is not damaged: the journal holds its pages as they were before the
transaction).  Servers (PostgreSQL) get the same treatment for connection and
driver failures; their pages are the server's to check.

Several kcross processes may write to one database at once (eight ``kcross
run`` in parallel on one machine, or many machines on one server):

* SQLite: every write transaction starts with ``BEGIN IMMEDIATE``, which
  takes the write lock up front and so waits in SQLite's busy handler (the
  connection timeout) for the other writers.  A deferred ``BEGIN`` that reads
  and then writes instead fails at once with "database is locked" when another
  writer got there first (SQLite cannot wait without risking a deadlock).
  The journal stays in the default rollback mode, not WAL: WAL needs shared
  memory that network filesystems (NFS, SMB) do not provide, leaves ``-wal``
  and ``-shm`` files beside the database, and cannot be read through a
  read-only open when those files are absent; our transactions are short (one
  result each), so readers waiting for a writer cost nothing noticeable.
  Migrations run inside the same immediate transaction, so processes opening a
  fresh file together migrate it once, one after the other.
* PostgreSQL: migrations run under a transaction-level advisory lock, so
  concurrent first uses of an empty database create the schema once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import NoSuchModuleError, SQLAlchemyError

from ..errors import StoreError, clipped
from . import migrations
from .location import Target

_SQLITE_MAGIC = b"SQLite format 3\x00"
# A rollback journal's header starts with these 8 bytes (zeroed once its transaction is
# over, in the journal modes that keep the file); SQLite's file format, "The Rollback
# Journal".
_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
# SQLite's unix locks are POSIX locks on bytes from 1 GiB on: PENDING, then RESERVED.
_RESERVED_BYTE = 0x40000000 + 1
BUSY_TIMEOUT_S = 10
# Any constant: it only has to be the same for every kcross process.
_PG_MIGRATION_LOCK = 0x6B63726F7373  # "kcross"


class OldSchema(StoreError):
    """Reading a database an older kcross wrote: opening it for writing upgrades it."""


class NoStore(StoreError):
    """A store named to be read (or checked) that is not there: no such file, or no such
    directory.  Not "no runs stored": a mistyped path must not look like an empty store."""


def absent(path: Path) -> str | None:
    """Why there is no file at ``path``: "no such file", "no such directory D" (the outermost
    directory missing); None when something is there, or what is there is not a directory
    (opening says so)."""
    if os.path.lexists(path):
        return None
    missing = None
    parent = path.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        missing, parent = parent, parent.parent
    if missing is None:
        return "no such file"
    if not parent.is_dir():
        return None
    return f"no such directory {clipped(str(missing))}"


def _refuse_missing_directory(target: Target, path: Path) -> None:
    """A chosen store is made only in a directory that exists (a mistyped directory is not
    made for it); the default location's directories are made on first use."""
    why = absent(path)
    if target.chosen and why is not None and why != "no such file":
        raise StoreError(f"cannot create {clipped(str(path))}: {why}")


def first_line(exc: BaseException) -> str:
    """The driver's own message, without SQLAlchemy's SQL echo and help links."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip() or type(orig).__name__
    return text.splitlines()[0]


def is_busy(exc: BaseException) -> bool:
    """Whether an SQLite failure means another process holds the lock (not damage)."""
    orig = getattr(exc, "orig", None) or exc
    code = getattr(orig, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(orig, sqlite3.OperationalError) and "locked" in str(orig)


def lock_holders(path: Path | None) -> list[str]:
    """Processes holding a POSIX lock on ``path`` per /proc/locks ("pid 12 (cmd)"); [] if unknown."""
    if path is None:
        return []
    try:
        st = path.stat()
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids: list[int] = []
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[5] != inode:
            continue  # "->" marks a waiter, not a holder
        try:
            pid = int(fields[4])
        except ValueError:
            continue
        if pid > 0 and pid != os.getpid() and pid not in pids:
            pids.append(pid)
    shown = []
    for pid in pids[:3]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            cmd = ""
        shown.append(f"pid {pid} ({cmd[:60]})" if cmd else f"pid {pid}")
    return shown


def busy_message(target: Target) -> str:
    """One line for a lock that did not come free: busy, not damaged, and by whom if known."""
    holders = lock_holders(target.path)
    by = f" by {', '.join(holders)}" if holders else " by another process"
    return (f"{target.display} is locked{by} and stayed busy for {BUSY_TIMEOUT_S} s; "
            "try again when it has finished (the database is not damaged)")


@contextlib.contextmanager
def guard(target: Target, doing: str) -> Iterator[None]:
    """Turn any database failure during ``doing`` into one :class:`StoreError` line."""
    try:
        yield
    except SQLAlchemyError as exc:
        if is_busy(exc):
            raise StoreError(f"{doing} failed: {busy_message(target)}") from None
        if is_corrupt(exc):
            raise StoreError(f"{target.display} is corrupt: {doing} failed: {first_line(exc)} "
                             "(left unchanged)") from None
        raise StoreError(f"{target.display}: {doing} failed: {first_line(exc)}") from None


# For tests only: python/tests/test_crash_loop.py stops kcross inside a write transaction.
HOLD_VARIABLE = "KCROSS_TEST_STORE_HOLD"


def hold(point: str) -> None:
    """A write transaction about to commit, every statement made: with
    $KCROSS_TEST_STORE_HOLD=DIR (tests only), write ``point`` into DIR/held and wait until
    that file is gone, so that a test stops kcross at exactly this instant, however busy
    the machine.  Unset (always, outside the tests): nothing."""
    where = os.environ.get(HOLD_VARIABLE)
    if not where:
        return
    held = Path(where, "held")
    ready = Path(where, "held.new")
    ready.write_text(point)
    ready.rename(held)  # whole when the test sees it
    while held.exists():
        time.sleep(0.002)


def is_corrupt(exc: BaseException) -> bool:
    """Whether an SQLite failure means a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB)."""
    orig = getattr(exc, "orig", None) or exc
    code = getattr(orig, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in (sqlite3.SQLITE_CORRUPT,
                                                       sqlite3.SQLITE_NOTADB)


def open_engine(target: Target, *, write: bool) -> sa.Engine | None:
    """Return an engine on a database at the current schema version.

    ``write=False`` never creates or changes anything and returns None when
    there is no kcross database yet; ``write=True`` creates the file and
    directory if needed and applies pending migrations.
    """
    if write and target.memory:
        raise StoreError(f"{target.display} is an in-memory database: it would keep nothing "
                         "after kcross exits; give a file path or a server URL with --db")
    if target.path is not None:
        return _open_sqlite_file(target, target.path, write=write)
    return _prepare(_server_engine(target, write=write), target, write=write)


def _server_engine(target: Target, *, write: bool) -> sa.Engine:
    try:
        engine = sa.create_engine(target.url)
    except NoSuchModuleError:
        raise StoreError(f"{target.display}: unknown database kind "
                         f"{target.url.drivername!r}") from None
    except ImportError as exc:
        raise StoreError(f"{target.display}: database driver not installed ({exc.name or exc}); "
                         "install it with pip") from None
    if target.url.get_backend_name() == "sqlite":
        _sqlite_transactions(engine, immediate=write)
    return engine


def check_writable(target: Target) -> None:
    """Refuse, before anything is measured, a database that opening for writing would refuse.

    Creates nothing: a missing file must merely be creatable; an existing one is
    checked through a read-only connection (kind, integrity, schema version).
    Servers are connected to and their schema version checked, without migrating.
    """
    if target.memory:
        open_engine(target, write=True)  # raises the in-memory refusal
    if target.path is None:
        _check_version(_server_engine(target, write=False), target)
        return
    path = target.path
    if _check_file(path, write=True):
        _roll_back_hot_journal(target, path)
        engine = _sqlite_engine(path, read_only=True)
        try:  # before a measurement: the whole file (the module docstring says why)
            _quick_check(engine, target)
        except StoreError:
            engine.dispose()
            raise
        _check_version(engine, target)
        return
    _refuse_missing_directory(target, path)
    parent = path.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    name, where = clipped(str(path)), clipped(str(parent))
    if not parent.is_dir():
        raise StoreError(f"cannot create {name}: {where} is not a directory")
    if not os.access(parent, os.W_OK):
        raise StoreError(f"cannot create {name}: directory {where} is not writable")


def _check_version(engine: sa.Engine, target: Target) -> None:
    """Refuse a foreign or too new database (an older version is fine: it will be upgraded)."""
    try:
        with engine.connect() as conn:
            migrations.current_version(conn, target.display)
    except SQLAlchemyError as exc:
        if is_busy(exc):
            raise StoreError(busy_message(target)) from None
        raise StoreError(f"cannot use database {target.display}: {first_line(exc)}") from None
    finally:
        engine.dispose()


def _open_sqlite_file(target: Target, path: Path, *, write: bool) -> sa.Engine | None:
    exists = _check_file(path, write=write)
    if not exists:
        if not write:
            return None
        _refuse_missing_directory(target, path)
        _make_parent(path)
    else:
        rolled_back = _roll_back_hot_journal(target, path)
        # Inspect through a read-only connection first: a corrupt, foreign or
        # too-new file must be refused without ever being opened for writing.
        ro = _sqlite_engine(path, read_only=True)
        try:
            if rolled_back:  # the previous writer died mid-transaction: check the whole file
                _quick_check(ro, target)
            with guard(target, "reading the schema version"), ro.connect() as conn:
                version = migrations.current_version(conn, target.display)
        finally:
            ro.dispose()
        if not write:
            if version == 0:
                return None
            return _prepare(_sqlite_engine(path, read_only=True), target, write=False)
    return _prepare(_sqlite_engine(path, read_only=False), target, write=True)


def _check_file(path: Path, *, write: bool) -> bool:
    """Refuse unusable paths before SQLite sees them; return whether the file exists."""
    name = clipped(str(path))
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StoreError(f"{name}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{name} is a directory, not a database file")
    if not stat.S_ISREG(st.st_mode):
        raise StoreError(f"{name} is not a regular file")
    try:
        with open(path, "rb") as fh:
            header = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read {name}: {exc.strerror}") from None
    if header and header != _SQLITE_MAGIC:
        raise StoreError(f"{name} is not an SQLite database (left unchanged)")
    if write and (not st.st_mode & 0o222 or not os.access(path, os.W_OK)):
        raise StoreError(f"{name} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); "
                         "choose a writable database with --db")
    return True


def _roll_back_hot_journal(target: Target, path: Path) -> bool:
    """Let SQLite roll back a transaction that a writer left half done (a "hot journal").

    A writer killed mid-transaction (SIGKILL, a SIGTERM kcross does not catch, a power
    loss) leaves its rollback journal beside the database: the pages as they were before
    the transaction.  The database is not damaged, but until the journal is played back
    SQLite refuses every read-only connection ("attempt to write a readonly database"),
    and kcross inspects a database read-only first.  So, before that: when the journal
    may be hot in SQLite's sense (it exists, is not empty, its header is not zeroed, and
    no process holds the database's RESERVED lock, i.e. no writer is at work), one
    ordinary read through a read-write connection makes SQLite check it itself and roll it
    back.  A database this user may not write is refused in one line saying so.
    Returns whether a hot journal was played back.
    """
    journal = Path(f"{path}-journal")
    try:
        with open(journal, "rb") as fh:
            header = fh.read(len(_JOURNAL_MAGIC))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StoreError(f"cannot read the journal of {target.display}: "
                         f"{exc.strerror or exc}") from None
    if header != _JOURNAL_MAGIC or _writer_at_work(path):
        return False  # no transaction to roll back, or one still being written
    st = path.stat()
    if not st.st_mode & 0o222 or not os.access(path, os.W_OK) \
            or not os.access(path.parent, os.W_OK | os.X_OK):
        raise StoreError(f"{target.display} has a hot journal ({journal.name}): a writer "
                         "stopped mid-transaction, and SQLite must roll that back before the "
                         "database can be read, which needs write access to the file and its "
                         "directory; this user has none: run kcross once as a user who may "
                         "write it (the runs stored before are intact)")
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        if is_busy(exc):
            raise StoreError(busy_message(target)) from None
        raise StoreError(f"{target.display}: rolling back the transaction its hot journal "
                         f"({journal.name}) holds failed: {first_line(exc)}") from None
    finally:
        conn.close()
    return True


def _writer_at_work(path: Path) -> bool:
    """Whether a process holds the database's RESERVED lock (SQLite's unix locking: a
    POSIX write lock on one byte), i.e. a writer is in a transaction right now."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        probe = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, _RESERVED_BYTE, 1, 0)
        found = fcntl.fcntl(fd, fcntl.F_GETLK, probe)
    except OSError:
        return False
    finally:
        os.close(fd)
    return struct.unpack("hhqqi", found)[0] != fcntl.F_UNLCK


def _make_parent(path: Path) -> None:
    name, where = clipped(str(path)), clipped(str(path.parent))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create directory {where} for the database: "
                         f"{exc.strerror or exc}") from None
    if not os.access(path.parent, os.W_OK):
        raise StoreError(f"cannot create {name}: directory {where} is not writable")


def _sqlite_engine(path: Path, *, read_only: bool) -> sa.Engine:
    """An engine whose connections honour transactions for DDL too (migrations)."""
    uri = f"file:{quote(str(path))}?mode=ro" if read_only else None

    def connect() -> sqlite3.Connection:
        if uri is not None:
            return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S,
                                   check_same_thread=False)
        return sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, check_same_thread=False)

    engine = sa.create_engine("sqlite+pysqlite://", creator=connect,
                              json_serializer=_compact_json)
    _sqlite_transactions(engine, immediate=not read_only)
    return engine


def _compact_json(value: object) -> str:
    """JSON columns as SQLite stores them: without the spaces after ',' and ':' (a record
    is mostly punctuation and numbers: 7% of a store)."""
    import json

    return json.dumps(value, separators=(",", ":"))


def _sqlite_transactions(engine: sa.Engine, *, immediate: bool) -> None:
    """Let SQLAlchemy, not the sqlite3 module, decide where transactions begin.

    Python's sqlite3 module would otherwise run CREATE TABLE outside any
    transaction, and a failed migration could leave half a schema behind.
    ``immediate`` (read-write engines) takes the write lock at BEGIN, see the
    module docstring for why.
    """
    begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA foreign_keys = ON")
        if immediate:  # a writer checks every page it loads (the module docstring says why)
            dbapi_conn.execute("PRAGMA cell_size_check = ON")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql(begin)


def check_integrity(target: Target) -> None:
    """SQLite's full ``PRAGMA quick_check`` of the file (``kcross check-store``): it reads
    every page, about a second per GB.  Raises :class:`StoreError` naming the damage."""
    if target.path is None or target.memory:
        return
    if not _check_file(target.path, write=False):
        raise NoStore(f"no store at {target.display}: {absent(target.path) or 'no such file'}")
    _roll_back_hot_journal(target, target.path)
    engine = _sqlite_engine(target.path, read_only=True)
    try:
        _quick_check(engine, target)
    finally:
        engine.dispose()


def _quick_check(engine: sa.Engine, target: Target) -> None:
    try:
        with engine.connect() as conn:
            rows = [r[0] for r in conn.exec_driver_sql("PRAGMA quick_check").fetchall()]
    except SQLAlchemyError as exc:
        if is_busy(exc):
            raise StoreError(busy_message(target)) from None
        raise StoreError(f"{target.display} is corrupt or not a database: "
                         f"{first_line(exc)} (left unchanged)") from None
    if rows != ["ok"]:
        detail = " ".join(" ".join(rows).split())
        raise StoreError(f"{target.display} is corrupt (integrity check: {detail[:200]}; "
                         "left unchanged)")


def _prepare(engine: sa.Engine, target: Target, *, write: bool) -> sa.Engine | None:
    """Connect, then migrate (write) or verify the version (read)."""
    try:
        with engine.connect() as conn:
            if write:
                with conn.begin():
                    if conn.dialect.name == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"),
                                     {"key": _PG_MIGRATION_LOCK})
                    if migrations.upgrade(conn, target.display) != migrations.LATEST:
                        hold("upgrade")
                return engine
            version = migrations.current_version(conn, target.display)
    except StoreError:
        engine.dispose()
        raise
    except SQLAlchemyError as exc:
        engine.dispose()
        if is_busy(exc):
            raise StoreError(busy_message(target)) from None
        raise StoreError(f"cannot use database {target.display}: {first_line(exc)}") from None
    if version == 0:
        engine.dispose()
        return None
    if version < migrations.LATEST:
        engine.dispose()
        raise OldSchema(f"{target.display} has schema version {version}; it is upgraded to "
                        f"{migrations.LATEST} by the next command that writes to it "
                        "('kcross run', 'import', 'tag', 'push' from it, 'pull' into it)")
    return engine
