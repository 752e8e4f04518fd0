"""Reading and writing runs, machines and results.

Results of a live run are committed one by one as they arrive, so a run that
is interrupted or whose harness crashes keeps everything it measured.  An
import is one transaction: a file that fails validation stores nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ..errors import UserError
from ..schema import RunStream
from ..stats import StatsError, describe, median_ci
from . import tables as t
from .db import guard, open_engine
from .location import Target
from ..schema import dig as _get

RUN_STATUSES = ("running", "complete", "interrupted", "failed")

# Fingerprint fields that differ between two runs on the same machine
# configuration and therefore must not split it into two machines.
_VOLATILE = {"kcross": None, "host": ("time",), "timer": ("hz", "calibration")}


def machine_identity(fingerprint: dict[str, Any]) -> str:
    """SHA-256 over the fingerprint without per-run values (time, calibrated timer Hz, kcross build)."""
    ident: dict[str, Any] = {}
    for key, value in fingerprint.items():
        if key in ("type", "schema"):
            continue
        if key in _VOLATILE:
            drop = _VOLATILE[key]
            if drop is None:
                continue
            if isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in drop}
        ident[key] = value
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()



def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """SQLite hands back naive datetimes; everything kcross stores is UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value


def parse_time(text: Any) -> dt.datetime | None:
    """The fingerprint's ISO 8601 ``host.time``, or None if absent or unreadable."""
    if not isinstance(text, str):
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return _as_utc(value)


def _stat_columns(record: dict[str, Any]) -> dict[str, Any]:
    """Queryable summary columns; NULL where the samples do not support a figure."""
    columns: dict[str, Any] = {"median_ns": None, "min_ns": None, "ci_low_ns": None,
                               "ci_high_ns": None, "ci_confidence": None,
                               "n": len(record["samples"])}
    if record["status"] != "ok":
        return columns
    try:
        desc = describe(record["samples"])
    except StatsError:
        return columns
    columns.update(median_ns=desc.median, min_ns=desc.min)
    try:
        ci = median_ci(record["samples"])
    except StatsError:
        return columns
    columns.update(ci_low_ns=ci.low, ci_high_ns=ci.high, ci_confidence=ci.confidence)
    return columns


@dataclass(frozen=True)
class RunSummary:
    """One line of ``kcross runs``."""

    id: int
    started_at: dt.datetime
    status: str
    source: str
    hostname: str | None
    cpu_model: str | None
    kernel_release: str | None
    hypervisor: str | None
    results: int


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


class Store:
    """The result database of one kcross invocation."""

    def __init__(self, engine: sa.Engine, target: Target) -> None:
        self.engine = engine
        self.target = target

    @classmethod
    def open(cls, target: Target, *, write: bool) -> Store | None:
        """Open (and for writing, create/migrate); None if reading and nothing is stored yet."""
        engine = open_engine(target, write=write)
        return None if engine is None else cls(engine, target)

    def close(self) -> None:
        self.engine.dispose()

    # --- writing --------------------------------------------------------------------

    def _machine_id(self, conn: sa.Connection, fingerprint: dict[str, Any]) -> int:
        digest = machine_identity(fingerprint)
        found = conn.execute(sa.select(t.machines.c.id)
                             .where(t.machines.c.fingerprint_hash == digest)).scalar()
        if found is not None:
            return found
        virt = fingerprint.get("virtualization")
        hypervisor = (_get(virt, "hypervisor_type") or "unknown hypervisor") \
            if _get(virt, "hypervisor_flag") else None
        return conn.execute(sa.insert(t.machines).values(
            fingerprint_hash=digest,
            hostname=_get(fingerprint, "host", "hostname"),
            arch=fingerprint.get("arch"),
            cpu_model=_get(fingerprint, "cpu", "model"),
            kernel_release=_get(fingerprint, "kernel", "release"),
            hypervisor=hypervisor,
            fingerprint=fingerprint,
            first_seen=_utcnow(),
        ).returning(t.machines.c.id)).scalar_one()

    def _insert_run(self, conn: sa.Connection, fingerprint: dict[str, Any],
                    plan: dict[str, Any] | None, *, command: Sequence[str], source: str,
                    started_at: dt.datetime, status: str) -> int:
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
        ).returning(t.runs.c.id)).scalar_one()

    @staticmethod
    def _insert_result(conn: sa.Connection, run_id: int, seq: int,
                       record: dict[str, Any]) -> None:
        conn.execute(sa.insert(t.results).values(
            run_id=run_id, seq=seq, suite=record["suite"], name=record["name"],
            status=record["status"], reason=record["reason"], record=record,
            **_stat_columns(record)))

    def start_run(self, fingerprint: dict[str, Any], plan: dict[str, Any], *,
                  command: Sequence[str]) -> int:
        """Record a live run as ``running``; its results follow one by one."""
        with guard(self.target, "recording the run"), self.engine.begin() as conn:
            return self._insert_run(conn, fingerprint, plan, command=command, source="run",
                                    started_at=_utcnow(), status="running")

    def add_result(self, run_id: int, seq: int, record: dict[str, Any]) -> None:
        """Commit one result immediately so that it survives whatever happens next."""
        with guard(self.target, "storing a result"), self.engine.begin() as conn:
            self._insert_result(conn, run_id, seq, record)

    def finish_run(self, run_id: int, status: str, *, end: dict[str, Any] | None = None,
                   error: str | None = None) -> None:
        """Close a live run with its final status (and the harness's end record if any)."""
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        with guard(self.target, "finishing the run"), self.engine.begin() as conn:
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                status=status, finished_at=_utcnow(), end_record=end, error=error))

    def import_stream(self, stream: RunStream, *, command: Sequence[str]) -> int:
        """Store a whole validated stream in one transaction; return the new run id."""
        if stream.fingerprint is None:
            raise UserError("nothing to import: no fingerprint record")
        started = parse_time(_get(stream.fingerprint, "host", "time")) or _utcnow()
        status = "complete" if stream.complete else "interrupted"
        with guard(self.target, "importing"), self.engine.begin() as conn:
            run_id = self._insert_run(conn, stream.fingerprint, stream.plan, command=command,
                                      source="import", started_at=started, status=status)
            for seq, record in enumerate(stream.results):
                self._insert_result(conn, run_id, seq, record)
            finished = None
            if stream.end is not None:
                finished = started + dt.timedelta(seconds=float(stream.end["elapsed_s"]))
            conn.execute(sa.update(t.runs).where(t.runs.c.id == run_id).values(
                finished_at=finished, end_record=stream.end,
                error=None if stream.complete else "stream ended without an end record"))
        return run_id

    # --- reading --------------------------------------------------------------------

    def list_runs(self) -> list[RunSummary]:
        """All runs, newest first."""
        count = (sa.select(sa.func.count(t.results.c.id))
                 .where(t.results.c.run_id == t.runs.c.id).scalar_subquery())
        query = (sa.select(t.runs.c.id, t.runs.c.started_at, t.runs.c.status, t.runs.c.source,
                           t.machines.c.hostname, t.machines.c.cpu_model,
                           t.machines.c.kernel_release, t.machines.c.hypervisor,
                           count.label("results"))
                 .join(t.machines, t.machines.c.id == t.runs.c.machine_id)
                 .order_by(t.runs.c.started_at.desc(), t.runs.c.id.desc()))
        with guard(self.target, "listing runs"), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [RunSummary(id=r.id, started_at=_as_utc(r.started_at), status=r.status,
                           source=r.source, hostname=r.hostname, cpu_model=r.cpu_model,
                           kernel_release=r.kernel_release, hypervisor=r.hypervisor,
                           results=r.results) for r in rows]

    def load_run(self, ref: str) -> StoredRun:
        """A run by id, or the most recently started one for ``latest``."""
        with guard(self.target, "reading the run"), self.engine.connect() as conn:
            query = sa.select(t.runs)
            if ref == "latest":
                query = query.order_by(t.runs.c.started_at.desc(), t.runs.c.id.desc()).limit(1)
            else:
                try:
                    run_id = int(ref)
                except ValueError:
                    raise UserError(f"run must be a number or 'latest', not {ref!r}") from None
                query = query.where(t.runs.c.id == run_id)
            run = conn.execute(query).first()
            if run is None:
                if ref == "latest":
                    raise UserError(f"no runs stored in {self.target.display}")
                raise UserError(f"no run {ref} in {self.target.display} (see 'kcross runs')")
            records = conn.execute(sa.select(t.results.c.record)
                                   .where(t.results.c.run_id == run.id)
                                   .order_by(t.results.c.seq)).scalars().all()
        return StoredRun(id=run.id, started_at=_as_utc(run.started_at),
                         finished_at=_as_utc(run.finished_at), status=run.status,
                         source=run.source, error=run.error, fingerprint=run.fingerprint,
                         plan=run.plan, results=list(records), end=run.end_record)

