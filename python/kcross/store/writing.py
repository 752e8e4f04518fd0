"""Writing runs, machines and results, and changing what is stored (mark, delete, tag).

Results of a live run are committed one by one as they arrive, so a run that
is interrupted or whose harness crashes keeps everything it measured.  An
import is one transaction: a file that fails validation stores nothing.

:class:`Writing` builds on the store's reads (kcross.store.reading: a change finds the
run a reference names as a read does); kcross.store.opening's ``Store`` is both.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from .. import fingerprint as fields
from ..errors import SchemaError, UserError, shown
from ..fingerprint import identity as machine_identity
from ..schema import LAB_COUNTING, RunStream
from . import tables as t
from .db import guard, hold
from .liveness import Liveness, Owner, judge
from .location import Target
from .packing import pack
from .reading import Reading, as_utc
from .refs import check_tag_name

RUN_STATUSES = ("running", "complete", "interrupted", "failed")
# What a user may mark a run as: the two outcomes that do not claim a complete run.
MARK_STATUSES = ("failed", "interrupted")
# A running run's heartbeat, also while no result arrives (--interleave reports
# all results at the end): well inside liveness.STALE_AFTER.
HEARTBEAT_EVERY_S = 60.0

# runs.source: how the run came in (at most 8 characters: the column's width)
RUN_SOURCES = ("run", "import", "lab", "remote", "aa", "repro", "lava")

# The columns that copy a fingerprint field, for queries and ``kcross runs`` (the whole
# fingerprint is stored beside them): a machine's; a run's per-run values are
# tables.run_columns.
MACHINE_COLUMNS: dict[str, fields.Field] = {
    "hostname": fields.HOSTNAME, "arch": fields.ARCH, "cpu_model": fields.CPU_MODEL,
    "kernel_release": fields.KERNEL_RELEASE}
def machine_hypervisor(fingerprint: dict[str, Any]) -> str | None:
    """The machines.hypervisor column: what runs the measured system, if anything.

    A lab run says so whatever the guest believes: ``qemu-tcg-icount`` in counting
    mode (the figures are instruction counts), ``qemu-<accel>`` otherwise.
    """
    if fields.lab(fingerprint) is not None:
        accel = str(fields.LAB_ACCEL.of(fingerprint) or "tcg")
        name = f"qemu-{accel}-icount" if fields.LAB_MODE.of(fingerprint) == LAB_COUNTING \
            else f"qemu-{accel}"
        return name[:64]  # the column's width
    return (fields.HYPERVISOR_TYPE.of(fingerprint) or "unknown hypervisor") \
        if fields.HYPERVISOR_FLAG.of(fingerprint) else None


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
    started = parse_time(fields.HOST_TIME.of(fingerprint))
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


def process_levels(run_id: int, fingerprint: dict[str, Any] | None,
                   records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The process_levels rows of a run's result records: one per benchmark with records of
    several harness processes, its merged series' kcross.stats.run_level (log, var: its
    processes' level, or one process's when only one measured it) and design (processes,
    per_process): what kcross.judge.noise's run_point makes of it, computed once.  All four
    NULL where there is no series (not ok, no figures); log and var NULL where the series
    has no level (StatsError)."""
    from ..series import bench_name, series_of_results
    from ..stats import StatsError, run_level  # numpy: only for runs of several processes

    counts: dict[str, int] = {}
    for record in records:
        counts[bench_name(record)] = counts.get(bench_name(record), 0) + 1
    several = [r for r in records if counts[bench_name(r)] > 1]
    if not several:
        return []
    found = {s.name: s for s in series_of_results("", fingerprint, several)}
    rows = []
    for name in dict.fromkeys(bench_name(r) for r in several):
        suite, _, bare = name.partition("/")
        row: dict[str, Any] = {"run_id": run_id, "suite": suite, "name": bare,
                               "processes": None, "per_process": None, "log": None,
                               "var": None}
        series = found.get(name)
        if series is not None:
            row.update(processes=series.process_count, per_process=series.per_process)
            try:
                log, var = run_level(series.by_process())
            except StatsError:
                pass
            else:
                row.update(log=log, var=var)
        rows.append(row)
    return rows


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


class DuplicateImport(UserError):
    """The capture is already stored (same records); ``kcross import --force`` stores it again."""

    def __init__(self, message: str, run_id: int) -> None:
        super().__init__(message)
        self.run_id = run_id


class Writing(Reading):
    """What a kcross invocation writes to its result database, and changes in it.

    A live run's results are committed as they arrive, with its heartbeat; an import is
    one transaction; mark, delete and tag change what is stored.
    """

    def __init__(self, engine: sa.Engine | None, target: Target) -> None:
        super().__init__(engine, target)
        self._owner: Owner | None = None
        self._stored: dict[int, int] = {}          # run id -> results committed
        self._hashes: dict[int, Any] = {}          # run id -> running content hash
        # run id -> (stop flag, thread) of its heartbeat
        self._beating: dict[int, tuple[threading.Event, threading.Thread]] = {}

    def close(self) -> None:
        for run_id in list(self._beating):
            self._stop_heartbeat(run_id)
        super().close()

    # --- writing --------------------------------------------------------------------

    def _machine_id(self, conn: sa.Connection, fingerprint: dict[str, Any]) -> int:
        """The machine row for this fingerprint, created if new (safe against concurrent writers)."""
        digest = machine_identity(fingerprint)  # the store's machine row: kcross.fingerprint
        hypervisor = machine_hypervisor(fingerprint)
        values = {
            "fingerprint_hash": digest,
            **{column: field.of(fingerprint) for column, field in MACHINE_COLUMNS.items()},
            "hypervisor": hypervisor,
            "fingerprint": fingerprint,
            "first_seen": _utcnow(),
        }
        t.insert_new(conn, t.machines, values, "fingerprint_hash")
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
            **t.run_columns(fingerprint),
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
            hold("start_run")
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
            hold("add_result")
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
        # a complete run's levels (only such a run feeds the noise), from its records read back
        levels = self._levels_of(run_id) if status == "complete" else []
        now = _utcnow()
        with guard(self.target, "finishing the run"), self.engine.begin() as conn:
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                status=status, finished_at=now, updated_at=now, end_record=end, error=error,
                content_hash=None if digest is None else digest.hexdigest()))
            if levels:
                conn.execute(sa.insert(t.process_levels), levels)
            hold("finish_run")

    def _levels_of(self, run_id: int) -> list[dict[str, Any]]:
        """The process_levels rows of a stored run (none: a run of one process)."""
        with guard(self.target, "reading the run"), self.engine.connect() as conn:
            several = conn.execute(sa.select(t.results.c.id).where(
                t.results.c.run_id == run_id, t.results.c.process > 0).limit(1)).first()
        if several is None:
            return []
        run = self.load_run(run_id, check=False)
        return process_levels(run_id, run.fingerprint, run.results)

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
        if fields.lab(stream.fingerprint) is not None:
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
            levels = process_levels(run_id, stream.fingerprint, stream.results)
            if levels:
                conn.execute(sa.insert(t.process_levels), levels)
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                finished_at=finished, end_record=stream.end, content_hash=digest,
                error=None if stream.complete else "stream ended without an end record"))
            hold("import")
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
                             owner_id=row.owner_id, updated_at=as_utc(row.updated_at))

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
            hold("mark")
        return live.state

    def delete_run(self, ref: str | int, *, force: bool = False) -> int:
        """Delete a run, its results and its tags; return how many results went with it."""
        with guard(self.target, "deleting the run"), self.engine.begin() as conn:
            run_id, live = self._liveness(conn, self._resolve(conn, ref))
            self._refuse_live(run_id, live, "delete", force)
            conn.execute(sa.delete(t.tags).where(t.tags.c.run_id == run_id))
            conn.execute(sa.delete(t.noise_exclusions)
                         .where(t.noise_exclusions.c.run_id == run_id))
            conn.execute(sa.delete(t.process_levels)
                         .where(t.process_levels.c.run_id == run_id))
            gone = conn.execute(sa.delete(t.results)
                                .where(t.results.c.run_id == run_id)).rowcount
            conn.execute(sa.delete(t.runs).where(t.runs.c.id == run_id))
            hold("delete")
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
            hold("tag")
        return run_id, before

    def exclude_run(self, ref: str | int, reason: str | None) -> tuple[int, bool]:
        """Leave run ``ref`` out of its machine's run-to-run noise (kcross exclude), with the
        user's ``reason``; return its id and whether it was excluded already (its reason
        then replaced when one is given)."""
        x = t.noise_exclusions
        with guard(self.target, "excluding the run"), self.engine.begin() as conn:
            run_id = self._resolve(conn, ref)
            before = conn.execute(sa.select(x.c.run_id).where(x.c.run_id == run_id)
                                  ).scalar_one_or_none()
            if before is None:
                conn.execute(sa.insert(x).values(run_id=run_id, reason=reason,
                                                 excluded_at=_utcnow()))
            elif reason is not None:
                conn.execute(sa.update(x).where(x.c.run_id == run_id).values(reason=reason))
        return run_id, before is not None

    def include_run(self, ref: str | int) -> tuple[int, bool]:
        """Let run ``ref`` feed its machine's noise again; return its id and whether it had
        been excluded."""
        x = t.noise_exclusions
        with guard(self.target, "including the run"), self.engine.begin() as conn:
            run_id = self._resolve(conn, ref)
            gone = conn.execute(sa.delete(x).where(x.c.run_id == run_id)).rowcount
        return run_id, bool(gone)

    def untag(self, name: str) -> int:
        """Delete tag ``name`` (never the run); return the id of the run it named."""
        with guard(self.target, "deleting the tag"), self.engine.begin() as conn:
            run_id = conn.execute(sa.select(t.tags.c.run_id)
                                  .where(t.tags.c.name == name)).scalar_one_or_none()
            if run_id is None:
                raise UserError(f"no tag {shown(name)} in {self.target.display} (see "
                                "'kcross tag')")
            conn.execute(sa.delete(t.tags).where(t.tags.c.name == name))
            hold("untag")
        return int(run_id)

