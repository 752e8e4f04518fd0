"""Reading and writing runs, machines and results.

Results of a live run are committed one by one as they arrive, so a run that
is interrupted or whose harness crashes keeps everything it measured.  An
import is one transaction: a file that fails validation stores nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from ..errors import SchemaError, StoreError, UserError, shown
from ..fingerprint import identity as machine_identity
from ..schema import IMPORT_VERSIONS, LAB_COUNTING, UNIT_NS, RunStream, unit_of, validate
from ..schema import dig as _get
from . import tables as t
from .db import OldSchema, check_writable, guard, open_engine
from .liveness import Liveness, Owner, judge
from .location import Target
from .packing import pack, unpack
from .refs import HASH_SHOWN, REF_FORMS, check_tag_name, parse_ref

RUN_STATUSES = ("running", "complete", "interrupted", "failed")
# What a user may mark a run as: the two outcomes that do not claim a complete run.
MARK_STATUSES = ("failed", "interrupted")
# A running run's heartbeat, also while no result arrives (--interleave reports
# all results at the end): well inside liveness.STALE_AFTER.
HEARTBEAT_EVERY_S = 60.0

# runs.source: how the run came in (at most 8 characters: the column's width)
RUN_SOURCES = ("run", "import", "lab", "remote", "aa", "repro", "lava")

def machine_hypervisor(fingerprint: dict[str, Any]) -> str | None:
    """The machines.hypervisor column: what runs the measured system, if anything.

    A lab run says so whatever the guest believes: ``qemu-tcg-icount`` in counting
    mode (the figures are instruction counts), ``qemu-<accel>`` otherwise.
    """
    lab = fingerprint.get("lab")
    if isinstance(lab, dict):
        accel = str(lab.get("accel") or "tcg")
        name = f"qemu-{accel}-icount" if lab.get("mode") == LAB_COUNTING else f"qemu-{accel}"
        return name[:64]  # the column's width
    virt = fingerprint.get("virtualization")
    return (_get(virt, "hypervisor_type") or "unknown hypervisor") \
        if _get(virt, "hypervisor_flag") else None


def _canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode() + b"\n"


def content_hash(records: Iterable[dict[str, Any] | None]) -> str:
    """SHA-256 of a run's records (fingerprint, plan, results, end) in canonical JSON.

    Independent of key order and white space, so a capture and the same run
    written back by ``kcross show --json`` have the same hash.
    """
    digest = hashlib.sha256()
    for record in records:
        if record is not None:
            digest.update(_canonical(record))
    return digest.hexdigest()


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@overload
def _as_utc(value: dt.datetime) -> dt.datetime: ...
@overload
def _as_utc(value: None) -> None: ...
def _as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A stored time in UTC, as everything kcross stores is.

    SQLite hands back naive datetimes (UTC as written); PostgreSQL aware ones in the
    session's time zone, which need not be UTC (and SQLite, written to, would drop it).
    """
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def parse_time(text: Any) -> dt.datetime | None:
    """The fingerprint's ISO 8601 ``host.time`` in UTC, or None if absent or unreadable.

    Normalised to UTC because SQLite stores datetimes without their offset:
    ``02:00+14:00`` kept as written would read back as 02:00 UTC, 14 h off.
    """
    if not isinstance(text, str):
        return None
    try:
        value = dt.datetime.fromisoformat(text)  # Python 3.11 reads "Z" too
    except ValueError:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    try:
        return value.astimezone(dt.UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00-01:00 has no UTC time
        return None


def run_times(fingerprint: dict[str, Any], end: dict[str, Any] | None,
              ) -> tuple[dt.datetime | None, dt.datetime | None]:
    """Start (``host.time``) and finish (start + ``elapsed_s``) of a captured run.

    Raises :class:`SchemaError` (without a location: the caller adds it) when
    the end record's duration is not a duration or the finish is not a date.
    """
    started = parse_time(_get(fingerprint, "host", "time"))
    if end is None:
        return started, None
    elapsed = end.get("elapsed_s")
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) \
            or not math.isfinite(elapsed) or elapsed < 0:
        raise SchemaError(f"end record: elapsed_s {elapsed!r} is not a duration in seconds")
    base = started or _utcnow()
    try:
        finished = base + dt.timedelta(seconds=float(elapsed))
    except OverflowError:
        raise SchemaError(f"end record: elapsed_s {elapsed!r} after the start "
                          f"{base.isoformat()} ends past the year 9999 (host.time or "
                          "elapsed_s is wrong)") from None
    return started, finished


def result_row(run_id: int, seq: int, record: dict[str, Any]) -> dict[str, Any]:
    """The results row of a validated result record: its summary columns (kcross.stats's
    rule, computed once, here; NULL where the samples support no figure), its sample
    arrays packed and the rest of the record (store/packing.py)."""
    from ..stats import summary_columns  # here: numpy, which reading the store does not need

    stripped, packed = pack(record)
    return {"run_id": run_id, "seq": seq, "suite": record["suite"], "name": record["name"],
            "status": record["status"], "reason": record["reason"], "record": stripped,
            "samples": packed, "process": int(record.get("process", 0)),
            "n": len(record["samples"]), **summary_columns(record)}


@dataclass(frozen=True)
class RunSummary:
    """One line of ``kcross runs``.

    ``status`` is what is stored; ``state`` what is true now: a stored
    ``running`` whose process is gone shows as ``dead (pid 123 gone)``.
    """

    id: int
    started_at: dt.datetime
    status: str
    source: str
    hostname: str | None
    cpu_model: str | None
    kernel_release: str | None
    hypervisor: str | None
    results: int
    state: str = ""
    live: bool = False
    unit: str = UNIT_NS  # of the run's figures: instructions/op for a counting-mode lab run
    machine_hash: str = ""  # the machine's fingerprint hash (latest@PREFIX names it)
    tags: tuple[str, ...] = ()  # the tags naming this run, sorted
    arch: str | None = None     # the machine's (a lab run's: the guest's)
    variant: str | None = None  # a lab run's variant (fingerprint.lab.variant: a mitigation)


@dataclass(frozen=True)
class StoredRun:
    """Everything needed to render a run or write it back as harness JSON lines."""

    id: int
    started_at: dt.datetime
    finished_at: dt.datetime | None
    status: str
    source: str
    error: str | None
    fingerprint: dict[str, Any]
    plan: dict[str, Any] | None
    results: list[dict[str, Any]]
    end: dict[str, Any] | None
    state: str = ""
    live: bool = False


@dataclass(frozen=True)
class StoredResults:
    """Some results of one stored run, as a trend reads them (``Store.results_named``): the
    run's machine row and its per-run fingerprint values instead of its whole fingerprint
    (everything else in a fingerprint is the machine's: kcross.fingerprint.identity)."""

    run_id: int
    started_at: dt.datetime
    machine_id: int
    host_time: str | None            # fingerprint.host.time
    timer_hz: float | None           # fingerprint.timer.hz
    results: list[dict[str, Any]]    # in the run's order
    figures: list[dict[str, Any]]    # each result's summary columns (stats.summary_columns)


# The summary columns a trend reads beside the records.
_FIGURES = ("median_ns", "ci_low_ns", "ci_high_ns", "ci_confidence", "min_ns", "overhead_ns",
            "subtracted", "overhead_reason")


class DuplicateImport(UserError):
    """The capture is already stored (same records); ``kcross import --force`` stores it again."""

    def __init__(self, message: str, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id


def _newest_first(query: sa.Select[Any]) -> sa.Select[Any]:
    """What 'latest' means: the most recently started run (ties: the higher id)."""
    return query.order_by(t.runs.c.started_at.desc(), t.runs.c.id.desc())


class Store:
    """The result database of one kcross invocation.

    Opened lazily (``Store.open(target, write=True, lazy=True)``), nothing is
    created until the first write (``start_run`` or ``import_stream``): a run
    refused before its first record leaves no database file behind.
    """

    def __init__(self, engine: sa.Engine | None, target: Target) -> None:
        self._engine = engine
        self.target = target
        self._owner: Owner | None = None
        self._stored: dict[int, int] = {}          # run id -> results committed
        self._hashes: dict[int, Any] = {}          # run id -> running content hash
        # run id -> (stop flag, thread) of its heartbeat
        self._beating: dict[int, tuple[threading.Event, threading.Thread]] = {}

    @classmethod
    def open(cls, target: Target, *, write: bool, lazy: bool = False) -> Store | None:
        """Open (and for writing, create/migrate); None if reading and nothing is stored yet.

        ``lazy`` (writing only): check now that the database could be opened for
        writing, without creating anything; create/migrate it at the first write.
        """
        if lazy:
            if not write:
                raise ValueError("only a store opened for writing can be lazy")
            check_writable(target)
            return cls(None, target)
        engine = open_engine(target, write=write)
        return None if engine is None else cls(engine, target)

    @classmethod
    def open_existing(cls, target: Target) -> Store:
        """Open for changing what is stored; refuse (creating nothing) if nothing is stored."""
        try:
            reader = cls.open(target, write=False)
        except OldSchema:
            pass  # opening it for writing upgrades it
        else:
            if reader is None:
                raise UserError(f"no runs stored in {target.display}")
            reader.close()
        store = cls.open(target, write=True)
        assert store is not None
        return store

    @property
    def engine(self) -> sa.Engine:
        """The engine, creating and migrating the database now if it was opened lazily."""
        if self._engine is None:
            engine = open_engine(self.target, write=True)
            assert engine is not None  # opening for writing creates the database
            self._engine = engine
        return self._engine

    @property
    def opened(self) -> bool:
        """Whether the database has been opened (for a lazy store: whether anything was written)."""
        return self._engine is not None

    def close(self) -> None:
        for run_id in list(self._beating):
            self._stop_heartbeat(run_id)
        if self._engine is not None:
            self._engine.dispose()

    # --- writing --------------------------------------------------------------------

    def _machine_id(self, conn: sa.Connection, fingerprint: dict[str, Any]) -> int:
        """The machine row for this fingerprint, created if new (safe against concurrent writers)."""
        digest = machine_identity(fingerprint)  # the store's machine row: kcross.fingerprint
        hypervisor = machine_hypervisor(fingerprint)
        values = {
            "fingerprint_hash": digest,
            "hostname": _get(fingerprint, "host", "hostname"),
            "arch": fingerprint.get("arch"),
            "cpu_model": _get(fingerprint, "cpu", "model"),
            "kernel_release": _get(fingerprint, "kernel", "release"),
            "hypervisor": hypervisor,
            "fingerprint": fingerprint,
            "first_seen": _utcnow(),
        }
        # INSERT ... ON CONFLICT DO NOTHING, then SELECT: a SELECT-then-INSERT lets
        # two processes both miss the row and one fail on the unique key.
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        conn.execute(insert(t.machines).values(**values)
                     .on_conflict_do_nothing(index_elements=["fingerprint_hash"]))
        return conn.execute(sa.select(t.machines.c.id)
                            .where(t.machines.c.fingerprint_hash == digest)).scalar_one()

    def _insert_run(self, conn: sa.Connection, fingerprint: dict[str, Any],
                    plan: dict[str, Any] | None, *, command: Sequence[str], source: str,
                    started_at: dt.datetime, status: str,
                    owner: Owner | None = None) -> int:
        return conn.execute(sa.insert(t.runs).values(
            started_at=started_at,
            status=status,
            machine_id=self._machine_id(conn, fingerprint),
            kcross_version=_get(fingerprint, "kcross", "version"),
            git_rev=_get(fingerprint, "kcross", "git_rev"),
            mechanism=_get(fingerprint, "syscall", "mechanism"),
            timer=_get(fingerprint, "timer", "source"),
            timer_hz=_get(fingerprint, "timer", "hz"),
            command=list(command),
            source=source,
            fingerprint=fingerprint,
            plan=plan,
            owner_host=owner.host if owner else None,
            owner_pid=owner.pid if owner else None,
            owner_id=owner.ident if owner else None,
            updated_at=_utcnow(),
        ).returning(t.runs.c.id)).scalar_one()

    @staticmethod
    def _insert_result(conn: sa.Connection, run_id: int, seq: int,
                       record: dict[str, Any]) -> None:
        conn.execute(sa.insert(t.results), [result_row(run_id, seq, record)])

    @staticmethod
    def _insert_results(conn: sa.Connection, run_id: int,
                        records: Sequence[dict[str, Any]]) -> None:
        """All of a run's results in one statement (executemany)."""
        if records:
            conn.execute(sa.insert(t.results), [result_row(run_id, seq, record)
                                                for seq, record in enumerate(records)])

    def start_run(self, fingerprint: dict[str, Any], plan: dict[str, Any], *,
                  command: Sequence[str], source: str = "run") -> int:
        """Record a live run as ``running``, owned by this process; its results follow.

        ``source``: ``run`` (the harness ran here) or ``remote`` (``kcross run
        --remote``: it ran on another machine over ssh, streamed back live).

        The first write of a lazily opened store: the database is created here.
        """
        if self._owner is None:
            self._owner = Owner.this_process()
        with guard(self.target, "recording the run"), self.engine.begin() as conn:
            run_id = self._insert_run(conn, fingerprint, plan, command=command, source=source,
                                      started_at=_utcnow(), status="running",
                                      owner=self._owner)
        self._stored[run_id] = 0
        digest = hashlib.sha256()
        for record in (fingerprint, plan):
            digest.update(_canonical(record))
        self._hashes[run_id] = digest
        self._start_heartbeat(run_id)
        return run_id

    def _start_heartbeat(self, run_id: int) -> None:
        """Refresh ``updated_at`` every HEARTBEAT_EVERY_S until the run is finished or closed.

        Advisory only: a failed heartbeat is not an error of the run (the next
        result or finish_run reports a database that stopped working).
        """
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_EVERY_S):
                try:
                    self.heartbeat(run_id)
                except Exception:  # noqa: BLE001, S110  (advisory; never a traceback)
                    pass

        thread = threading.Thread(target=beat, name=f"kcross-heartbeat-{run_id}", daemon=True)
        self._beating[run_id] = (stop, thread)
        thread.start()

    def _stop_heartbeat(self, run_id: int) -> None:
        beating = self._beating.pop(run_id, None)
        if beating is not None:
            beating[0].set()
            beating[1].join(timeout=2)  # let a heartbeat in progress commit, briefly

    def add_result(self, run_id: int, seq: int, record: dict[str, Any]) -> None:
        """Commit one result immediately so that it survives whatever happens next.

        Also the run's heartbeat (``updated_at``).
        """
        with guard(self.target, "storing a result"), self.engine.begin() as conn:
            self._insert_result(conn, run_id, seq, record)
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id)
                         .values(updated_at=_utcnow()))
        self._stored[run_id] = self._stored.get(run_id, 0) + 1
        if run_id in self._hashes:
            self._hashes[run_id].update(_canonical(record))

    def results_stored(self, run_id: int) -> int:
        """How many results of ``run_id`` this process has committed (for "N kept" messages)."""
        return self._stored.get(run_id, 0)

    def heartbeat(self, run_id: int) -> None:
        """Tell readers the run's process is alive (between results, e.g. every minute)."""
        with guard(self.target, "updating the run's heartbeat"), self.engine.begin() as conn:
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id)
                         .values(updated_at=_utcnow()))

    def finish_run(self, run_id: int, status: str, *, end: dict[str, Any] | None = None,
                   error: str | None = None) -> None:
        """Close a live run with its final status (and the harness's end record if any)."""
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        self._stop_heartbeat(run_id)
        digest = self._hashes.pop(run_id, None)
        if digest is not None and end is not None:
            digest.update(_canonical(end))
        now = _utcnow()
        with guard(self.target, "finishing the run"), self.engine.begin() as conn:
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                status=status, finished_at=now, updated_at=now, end_record=end, error=error,
                content_hash=None if digest is None else digest.hexdigest()))

    def import_stream(self, stream: RunStream, *, command: Sequence[str],
                      force: bool = False, source: str = "import",
                      started_at: dt.datetime | None = None,
                      finished_at: dt.datetime | None = None) -> int:
        """Store a whole validated stream in one transaction; return the new run id.

        ``source`` is stored as runs.source: ``import`` (a file), ``lab`` (a
        lab guest's), ``lava`` (a LAVA job's log), ``aa``, ``repro``.  Dated by the fingerprint's
        ``host.time`` and the end record's ``elapsed_s``, unless given; a run with
        a lab object is dated by the host (``started_at``/``finished_at``, else
        now), because the guest's clock counts instructions from a fixed date.
        A stream whose records are already stored as a run raises
        :class:`DuplicateImport` unless ``force``.
        """
        if stream.fingerprint is None:
            raise UserError("nothing to import: no fingerprint record")
        if source not in RUN_SOURCES or source in ("run", "remote"):
            raise ValueError(f"an imported run's source is 'import', 'lab', 'aa', 'repro' or 'lava', "
                             f"not {source!r}")
        started: dt.datetime
        finished: dt.datetime | None
        if isinstance(stream.fingerprint.get("lab"), dict):
            started = started_at or _utcnow()
            finished = (finished_at or started) if stream.complete else finished_at
        else:
            from_stream, finished = run_times(stream.fingerprint, stream.end)
            started = started_at or from_stream or _utcnow()
            finished = finished_at or finished
        status = "complete" if stream.complete else "interrupted"
        digest = content_hash([stream.fingerprint, stream.plan, *stream.results, stream.end])
        with guard(self.target, "importing"), self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                # Two imports of one capture at once: the second waits and sees the first.
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"),
                             {"key": int(digest[:15], 16)})
            if not force:
                same = conn.execute(sa.select(t.runs.c.id, t.runs.c.source)
                                    .where(t.runs.c.content_hash == digest)
                                    .order_by(t.runs.c.id).limit(1)).first()
                if same is not None:
                    how = {"import": "imported", "lab": "stored by kcross lab",
                           "lava": "imported from a LAVA job"}.get(
                        same.source, "recorded")
                    raise DuplicateImport(f"already stored: run {same.id} ({how}) holds the "
                                          "same records; use --force to store it again",
                                          same.id)
            run_id = self._insert_run(conn, stream.fingerprint, stream.plan, command=command,
                                      source=source, started_at=started, status=status)
            self._insert_results(conn, run_id, stream.results)
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                finished_at=finished, end_record=stream.end, content_hash=digest,
                error=None if stream.complete else "stream ended without an end record"))
        return run_id

    # --- managing -------------------------------------------------------------------

    def _liveness(self, conn: sa.Connection, run_id: int) -> tuple[int, Liveness]:
        row = conn.execute(sa.select(t.runs.c.id, t.runs.c.status, t.runs.c.owner_host,
                                     t.runs.c.owner_pid, t.runs.c.owner_id,
                                     t.runs.c.updated_at)
                           .where(t.runs.c.id == run_id)).first()
        if row is None:
            raise UserError(f"no run {run_id} in {self.target.display} (see 'kcross runs')")
        return row.id, judge(row.status, owner_host=row.owner_host, owner_pid=row.owner_pid,
                             owner_id=row.owner_id, updated_at=_as_utc(row.updated_at))

    def _refuse_live(self, run_id: int, live: Liveness, doing: str, force: bool) -> None:
        if live.live and not force:
            raise UserError(f"run {run_id} is {live.state}: it may still be writing; "
                            f"use --force to {doing} it anyway")

    def mark_run(self, ref: str | int, status: str, *, force: bool = False) -> str:
        """Mark a stranded run ``failed`` or ``interrupted``; return its state before.

        Refuses a live run, and a run that is not ``running``, unless ``force``.
        """
        if status not in MARK_STATUSES:
            raise UserError(f"a run can be marked {' or '.join(MARK_STATUSES)}, not {status!r}")
        with guard(self.target, "marking the run"), self.engine.begin() as conn:
            run_id, live = self._liveness(conn, self._resolve(conn, ref))
            self._refuse_live(run_id, live, f"mark {status}", force)
            if live.state in RUN_STATUSES and live.state != "running" and not force:
                raise UserError(f"run {run_id} is already {live.state}; use --force to "
                                f"mark it {status} anyway")
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                status=status, error=f"marked {status} by the user (was {live.state})"))
        return live.state

    def delete_run(self, ref: str | int, *, force: bool = False) -> int:
        """Delete a run, its results and its tags; return how many results went with it."""
        with guard(self.target, "deleting the run"), self.engine.begin() as conn:
            run_id, live = self._liveness(conn, self._resolve(conn, ref))
            self._refuse_live(run_id, live, "delete", force)
            conn.execute(sa.delete(t.tags).where(t.tags.c.run_id == run_id))
            gone = conn.execute(sa.delete(t.results)
                                .where(t.results.c.run_id == run_id)).rowcount
            conn.execute(sa.delete(t.runs).where(t.runs.c.id == run_id))
        return int(gone or 0)

    def tag_run(self, ref: str | int, name: str) -> tuple[int, int | None]:
        """Let tag ``name`` name run ``ref``; return (that run's id, the run it named before).

        A tag names one run: tagging another run moves it (the second value says from where).
        """
        check_tag_name(name)
        with guard(self.target, "tagging the run"), self.engine.begin() as conn:
            run_id = self._resolve(conn, ref)
            before = conn.execute(sa.select(t.tags.c.run_id)
                                  .where(t.tags.c.name == name)).scalar_one_or_none()
            if before is None:
                conn.execute(sa.insert(t.tags).values(name=name, run_id=run_id,
                                                      tagged_at=_utcnow()))
            elif before != run_id:
                conn.execute(sa.update(t.tags).where(t.tags.c.name == name)
                             .values(run_id=run_id, tagged_at=_utcnow()))
        return run_id, before

    def untag(self, name: str) -> int:
        """Delete tag ``name`` (never the run); return the id of the run it named."""
        with guard(self.target, "deleting the tag"), self.engine.begin() as conn:
            run_id = conn.execute(sa.select(t.tags.c.run_id)
                                  .where(t.tags.c.name == name)).scalar_one_or_none()
            if run_id is None:
                raise UserError(f"no tag {shown(name)} in {self.target.display} (see "
                                "'kcross tag')")
            conn.execute(sa.delete(t.tags).where(t.tags.c.name == name))
        return int(run_id)

    # --- reading --------------------------------------------------------------------

    def tags(self) -> list[tuple[str, int]]:
        """Every tag and the run it names, by name."""
        with guard(self.target, "listing tags"), self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.tags.c.name, t.tags.c.run_id)
                                .order_by(t.tags.c.name)).all()
        return [(r.name, r.run_id) for r in rows]

    def resolve(self, ref: str | int) -> int:
        """The id of the run that ``ref`` names (refs.py lists the forms); UserError if none."""
        with guard(self.target, "finding the run"), self.engine.connect() as conn:
            return self._resolve(conn, ref)

    def _resolve(self, conn: sa.Connection, ref: str | int) -> int:
        parsed = parse_ref(ref)
        display = self.target.display
        if parsed.run_id is not None:  # within the ids' range (refs.RUN_ID_MAX)
            found = conn.execute(sa.select(t.runs.c.id)
                                 .where(t.runs.c.id == parsed.run_id)).scalar_one_or_none()
            if found is None:
                raise UserError(f"no run {parsed.run_id} in {display} (see 'kcross runs')")
            return int(found)
        if parsed.tag is not None:
            found = conn.execute(sa.select(t.tags.c.run_id)
                                 .where(t.tags.c.name == parsed.tag)).scalar_one_or_none()
            if found is None:
                raise UserError(f"no run or tag {shown(parsed.tag)} in {display} (a RUN is "
                                f"{REF_FORMS}; see 'kcross runs')")
            return int(found)
        assert parsed.back is not None
        query = sa.select(t.runs.c.id)
        of = ""
        if parsed.host is not None:
            machine_ids, of = self._machines_named(conn, parsed.host)
            query = query.where(t.runs.c.machine_id.in_(machine_ids))
        found = conn.execute(_newest_first(query).offset(parsed.back).limit(1)
                             ).scalar_one_or_none()
        if found is None:
            count = conn.execute(sa.select(sa.func.count()).select_from(query.subquery())
                                 ).scalar_one()
            if not count:
                raise UserError(f"no runs{of} stored in {display}")
            at = f"@{parsed.host}" if parsed.host is not None else ""
            raise UserError(f"no run latest~{parsed.back}{at} in {display}: {count} run(s){of} "
                            f"stored, so latest~{count - 1}{at} is the oldest (see 'kcross "
                            "runs')")
        return int(found)

    def _machines_named(self, conn: sa.Connection, host: str) -> tuple[list[int], str]:
        """The machine rows ``latest@HOST`` means, and " of machine ..." for messages.

        HOST is a hostname (every machine row of that host: its kernels and settings
        are machines of their own) or else a prefix of one machine's hash.
        """
        m = t.machines.c
        by_name = conn.execute(sa.select(m.id).where(m.hostname == host)).scalars().all()
        if by_name:
            return list(by_name), f" of host {host}"
        prefix = host.lower()
        if all(c in "0123456789abcdef" for c in prefix):
            rows = conn.execute(sa.select(m.id, m.fingerprint_hash, m.hostname)
                                .where(m.fingerprint_hash.startswith(prefix))
                                .order_by(m.fingerprint_hash)).all()
            if len(rows) == 1:
                return [rows[0].id], f" of machine {prefix}"
            if rows:
                width = max(HASH_SHOWN, _common_prefix([r.fingerprint_hash for r in rows]) + 1)
                listed = ", ".join(f"{r.fingerprint_hash[:width]} ({r.hostname or '?'})"
                                   for r in rows[:8])
                more = f" and {len(rows) - 8} more" if len(rows) > 8 else ""
                raise UserError(f"latest@{host} is ambiguous in {self.target.display}: "
                                f"{len(rows)} machines' hashes start with {prefix}: "
                                f"{listed}{more}; give more of the hash")
        raise UserError(f"no machine {shown(host)} in {self.target.display}: no hostname is "
                        "that and no machine hash starts with it (see 'kcross runs')")


    def count_runs(self) -> int:
        """How many runs are stored."""
        with guard(self.target, "counting runs"), self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count(t.runs.c.id))).scalar_one())

    def list_runs(self, *, ids: Iterable[int] | None = None, machine: str | None = None,
                  status: str | None = None, limit: int | None = None) -> list[RunSummary]:
        """The runs, newest first: all, or those of ``ids``, of one ``machine`` (its
        fingerprint hash) or of one stored ``status``, the newest ``limit`` of them."""
        # Benchmarks, not result rows: a run of K processes has K rows per benchmark.
        count = (sa.select(sa.func.count(t.results.c.id))
                 .where(t.results.c.run_id == t.runs.c.id, t.results.c.process == 0)
                 .scalar_subquery())
        query: sa.Select[Any] = (sa.select(t.runs.c.id, t.runs.c.started_at, t.runs.c.status,
                                           t.runs.c.source,
                           t.runs.c.owner_host, t.runs.c.owner_pid, t.runs.c.owner_id,
                           t.runs.c.updated_at,
                           t.machines.c.hostname, t.machines.c.cpu_model,
                           t.machines.c.kernel_release, t.machines.c.hypervisor,
                           t.machines.c.fingerprint_hash, t.machines.c.arch,
                           # JSON path: JSON_EXTRACT on SQLite, #>> on PostgreSQL
                           t.runs.c.fingerprint[("lab", "unit")].as_string().label("lab_unit"),
                           t.runs.c.fingerprint[("lab", "variant")].as_string()
                           .label("lab_variant"),
                           count.label("results"))
                 .join(t.machines, t.machines.c.id == t.runs.c.machine_id))
        if ids is not None:
            query = query.where(t.runs.c.id.in_(list(ids)))
        if machine is not None:
            query = query.where(t.machines.c.fingerprint_hash == machine)
        if status is not None:
            query = query.where(t.runs.c.status == status)
        if limit is not None:  # the newest first, then their counts: not every run's
            newest = _newest_first(sa.select(t.runs.c.id).select_from(
                t.runs.join(t.machines, t.machines.c.id == t.runs.c.machine_id)))
            for clause in query.whereclause, :
                if clause is not None:
                    newest = newest.where(clause)
            query = query.where(t.runs.c.id.in_(newest.limit(limit).scalar_subquery()))
        query = _newest_first(query)
        with guard(self.target, "listing runs"), self.engine.connect() as conn:
            rows = conn.execute(query).all()
            tagged: dict[int, list[str]] = {}
            tag_query = sa.select(t.tags.c.name, t.tags.c.run_id).order_by(t.tags.c.name)
            if ids is not None or machine is not None or limit is not None:
                tag_query = tag_query.where(t.tags.c.run_id.in_([r.id for r in rows]))
            for name, run_id in conn.execute(tag_query):
                tagged.setdefault(run_id, []).append(name)
        summaries = []
        for r in rows:
            live = judge(r.status, owner_host=r.owner_host, owner_pid=r.owner_pid,
                         owner_id=r.owner_id, updated_at=_as_utc(r.updated_at))
            summaries.append(RunSummary(
                id=r.id, started_at=_as_utc(r.started_at), status=r.status, source=r.source,
                hostname=r.hostname, cpu_model=r.cpu_model, kernel_release=r.kernel_release,
                hypervisor=r.hypervisor, results=r.results, state=live.state, live=live.live,
                unit=unit_of({"lab": {"unit": r.lab_unit}} if r.lab_unit else None),
                machine_hash=r.fingerprint_hash, tags=tuple(tagged.get(r.id, ())),
                arch=r.arch, variant=r.lab_variant))
        return summaries

    def result_names(self, exactly: str | None = None) -> list[str]:
        """Every stored benchmark's ``suite/name``, sorted; ``exactly``: only those it names
        (as ``suite/name`` or the bare name), found through the results' name index."""
        query = sa.select(t.results.c.name, t.results.c.suite).distinct()
        if exactly is not None:
            suite, _, name = exactly.partition("/")
            query = query.where(sa.or_(t.results.c.name == exactly,
                                       sa.and_(t.results.c.name == name,
                                               t.results.c.suite == suite)))
        with guard(self.target, "listing benchmarks"), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return sorted(f"{suite}/{name}" for name, suite in rows)

    def machine_fingerprints(self) -> dict[int, dict[str, Any]]:
        """Every machine row's fingerprint (as first seen), by machine id."""
        with guard(self.target, "reading machines"), self.engine.connect() as conn:
            rows = conn.execute(sa.select(t.machines.c.id, sa.type_coerce(
                t.machines.c.fingerprint, sa.Text))).all()
        where = f"{self.target.display}: machine"
        return {r[0]: self._record(r[1], f"{where} {r[0]} fingerprint", "fingerprint",
                                   check=False) for r in rows}

    @staticmethod
    def _named(names: Sequence[str]) -> Any:
        """The WHERE clause of results rows of the benchmarks ``names`` (``suite/name``)."""
        wanted = [tuple(n.split("/", 1)) for n in names]
        r = t.results.c
        return sa.tuple_(r.suite, r.name).in_(wanted) if len(wanted) > 1 else \
            sa.and_(r.suite == wanted[0][0], r.name == wanted[0][1])

    def _holding(self, names: Sequence[str], machine_ids: Sequence[int] | None,
                 since: tuple[dt.datetime, int] | None = None,
                 before: tuple[dt.datetime, int] | None = None,
                 ok_only: bool = False) -> sa.Select[Any]:
        """The runs (id, started_at) holding a result of ``names``: from the runs' side, each
        probed through the results' (run_id, suite, name) key, so that a LIMIT on the
        newest reads about that many index entries, not every result of the benchmark."""
        r, run = t.results.c, t.runs.c
        held = sa.select(r.id).where(r.run_id == run.id, self._named(names))
        if ok_only:
            held = held.where(r.status == "ok")
        query = sa.select(run.id.label("run_id"), run.started_at).where(held.exists())
        if machine_ids is not None:
            query = query.where(run.machine_id.in_(list(machine_ids)))
        if since is not None:  # (start, id) >= since
            query = query.where(sa.or_(run.started_at > since[0],
                                       sa.and_(run.started_at == since[0], run.id >= since[1])))
        if before is not None:  # (start, id) < before
            query = query.where(sa.or_(run.started_at < before[0],
                                       sa.and_(run.started_at == before[0], run.id < before[1])))
        return query

    def runs_holding(self, names: Sequence[str], *, machine_ids: Sequence[int] | None = None,
                     since: tuple[dt.datetime, int] | None = None,
                     before: tuple[dt.datetime, int] | None = None, ok_only: bool = False,
                     limit: int | None = None, offset: int = 0) -> list[int]:
        """The ids of the runs holding a result of the benchmarks ``names`` (``suite/name``;
        ``ok_only``: a result of status ok), newest first (start, then id): of the machine
        rows ``machine_ids``, whose (start, id) is at least ``since`` and less than
        ``before``, the newest ``limit`` after ``offset``.  One query on the results' name
        index; no record read."""
        query = self._holding(names, machine_ids, since, before, ok_only)
        query = _newest_first(query)
        if limit is not None:
            query = query.limit(limit)
        if offset:
            query = query.offset(offset)
        with guard(self.target, "listing runs"), self.engine.connect() as conn:
            return [row.run_id for row in conn.execute(query)]

    def count_runs_holding(self, names: Sequence[str], *,
                           machine_ids: Sequence[int] | None = None) -> int:
        """How many runs hold a result of the benchmarks ``names`` (no record read)."""
        query = self._holding(names, machine_ids).subquery()
        with guard(self.target, "counting runs"), self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(query)).scalar_one())

    def machines_holding(self, names: Sequence[str]) -> list[int]:
        """The machine rows of the runs holding a result of the benchmarks ``names``."""
        query = (sa.select(t.runs.c.machine_id).distinct()
                 .where(t.runs.c.id.in_(self._holding(names, None).with_only_columns(
                     t.runs.c.id).scalar_subquery())))
        with guard(self.target, "listing machines"), self.engine.connect() as conn:
            return sorted(conn.execute(query).scalars())

    def figures_named(self, names: Sequence[str], machine_ids: Sequence[int]) -> list[Any]:
        """The summary columns (stats.summary_columns) of the results of the benchmarks
        ``names`` in the runs of the machine rows ``machine_ids``, oldest run first (start,
        then id), each run's in its order: rows of run_id, started_at, machine_id, host_time
        (fingerprint.host.time), suite, name, process, status, median_ns, ci_low_ns,
        ci_high_ns.  No result record is read: a machine's noise from its whole history."""
        r, run = t.results.c, t.runs.c
        query = (sa.select(r.run_id, run.started_at, run.machine_id,
                           run.fingerprint[("host", "time")].as_string().label("host_time"),
                           r.suite, r.name, r.process, r.status, r.median_ns, r.ci_low_ns,
                           r.ci_high_ns)
                 .join(t.runs, run.id == r.run_id)
                 # the machines' runs, then each one's results through the results' key
                 .where(r.run_id.in_(sa.select(run.id).where(
                     run.machine_id.in_(list(machine_ids))).scalar_subquery()),
                     self._named(names), run.machine_id.in_(list(machine_ids)))
                 .order_by(run.started_at, run.id, r.seq))
        with guard(self.target, "reading results"), self.engine.connect() as conn:
            return list(conn.execute(query).all())

    def results_named(self, names: Sequence[str],
                      run_ids: Iterable[int] | None = None) -> list[StoredResults]:
        """The stored results of the benchmarks ``names`` (``suite/name``; of the runs
        ``run_ids`` only, if given), in one query, grouped by run, oldest run first (start,
        then id), each run's in its order.

        Records are taken as validated when they were written (``load_run`` says more).
        """
        r, run = t.results.c, t.runs.c
        query = (sa.select(r.run_id, run.started_at, run.machine_id,
                           run.fingerprint[("host", "time")].as_string().label("host_time"),
                           run.timer_hz, r.seq, r.suite, r.name,
                           sa.type_coerce(r.record, sa.Text).label("record"), r.samples,
                           *(r[name] for name in _FIGURES))
                 .join(t.runs, run.id == r.run_id)
                 .where(self._named(names))
                 .order_by(run.started_at, run.id, r.seq))
        if run_ids is not None:
            query = query.where(r.run_id.in_(list(run_ids)))
        found: list[StoredResults] = []
        where = f"{self.target.display}: run"
        with guard(self.target, "reading results"), self.engine.connect() as conn:
            for row in conn.execute(query):
                if not found or found[-1].run_id != row.run_id:
                    found.append(StoredResults(
                        run_id=row.run_id, started_at=_as_utc(row.started_at),
                        machine_id=row.machine_id, host_time=row.host_time,
                        timer_hz=row.timer_hz, results=[], figures=[]))
                found[-1].figures.append({name: row._mapping[name] for name in _FIGURES})
                found[-1].results.append(self._record(
                    row.record, f"{where} {row.run_id} result {row.suite}/{row.name} "
                    f"(seq {row.seq})", "result", packed=row.samples, check=False))
        return found

    def load_run(self, ref: str | int, *, check: bool = True) -> StoredRun:
        """The run ``ref`` names: an id, latest, latest~N, latest@HOST or a tag (refs.py).

        ``check``: validate every record again against the schema (``kcross show``, exports:
        a database edited by hand is refused in one line).  Otherwise the records are
        taken as validated when they were written (only their JSON and type are checked):
        the readers that show figures (compare, report, push) need not pay for it again.
        """
        # JSON columns are read as text and checked here: a database edited by
        # hand must give one line naming the run and record, not a traceback.
        raw = {name: sa.type_coerce(t.runs.c[name], sa.Text).label(name)
               for name in ("fingerprint", "plan", "end_record")}
        query = sa.select(t.runs.c.id, t.runs.c.started_at, t.runs.c.finished_at,
                          t.runs.c.status, t.runs.c.source, t.runs.c.error,
                          t.runs.c.owner_host, t.runs.c.owner_pid, t.runs.c.owner_id,
                          t.runs.c.updated_at, *raw.values())
        with guard(self.target, "reading the run"), self.engine.connect() as conn:
            run = conn.execute(query.where(t.runs.c.id == self._resolve(conn, ref))).first()
            if run is None:  # deleted between the two statements
                raise UserError(f"no run {ref} in {self.target.display} (see 'kcross runs')")
            rows = conn.execute(sa.select(t.results.c.seq, t.results.c.suite, t.results.c.name,
                                          sa.type_coerce(t.results.c.record, sa.Text),
                                          t.results.c.samples)
                                .where(t.results.c.run_id == run.id)
                                .order_by(t.results.c.seq)).all()
        where = f"{self.target.display}: run {run.id}"
        fingerprint = self._record(run.fingerprint, f"{where} fingerprint", "fingerprint",
                                   check=check)
        assert fingerprint is not None
        live = judge(run.status, owner_host=run.owner_host, owner_pid=run.owner_pid,
                     owner_id=run.owner_id, updated_at=_as_utc(run.updated_at))
        return StoredRun(
            id=run.id, started_at=_as_utc(run.started_at), finished_at=_as_utc(run.finished_at),
            status=run.status, source=run.source, error=run.error, fingerprint=fingerprint,
            plan=self._record(run.plan, f"{where} plan", "plan", nullable=True, check=check),
            results=[self._record(r[3], f"{where} result {r[1]}/{r[2]} (seq {r[0]})", "result",
                                  packed=r[4], check=check)
                     for r in rows],
            end=self._record(run.end_record, f"{where} end record", "end", nullable=True,
                             check=check),
            state=live.state, live=live.live)

    @staticmethod
    def _record(value: Any, where: str, rtype: str, *, nullable: bool = False,
                packed: bytes | None = None, check: bool = True) -> Any:
        """A stored JSON record (its packed arrays put back), checked like harness output
        when ``check``: one line if damaged."""
        if value is None:
            if nullable:
                return None
            raise StoreError(f"{where} is missing (was the database edited by hand?)")
        if isinstance(value, str):  # SQLite: the text as stored
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise StoreError(f"{where} is not readable JSON ({exc}); was the database "
                                 "edited by hand?") from None
        if value is None and nullable:  # JSON null stored as text
            return None
        if not isinstance(value, dict) or value.get("type") != rtype:
            raise StoreError(f"{where} is not a {rtype} record (was the database edited "
                             "by hand?)")
        try:
            unpack(value, bytes(packed) if packed is not None else None)
        except ValueError as exc:
            if check:  # what the schema says of the record is the better line
                Store._validate(value, where)
            raise StoreError(f"{where}: {exc} (was the database edited by hand?)") from None
        if check:
            Store._validate(value, where)
        return value

    @staticmethod
    def _validate(value: dict[str, Any], where: str) -> None:
        try:
            validate(value, where, IMPORT_VERSIONS)
        except SchemaError as exc:
            raise StoreError(f"{exc} (was the database edited by hand?)") from None


def _common_prefix(texts: Sequence[str]) -> int:
    """Length of the prefix all ``texts`` share."""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n
