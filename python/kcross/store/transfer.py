"""Copying runs between two stores (``kcross push`` and ``kcross pull``).

Any backend to any backend (an SQLite file, a PostgreSQL server).  A run goes with its
machine row, its results, its process levels, its tags, its exclusion from the noise
(kcross exclude) and its content hash, in one transaction of the destination: an
interrupted copy leaves the run there whole or not at all.  A run already at the destination (the same content
hash, or the same machine, source and start time) is skipped, never stored
twice: the same push can be repeated, and two machines can pull each other's
runs back and forth.  A run still being written is refused unless forced
(its copy is then marked interrupted: the rest of it will not follow).

Results are copied as they are stored: their records (validated when they were written),
packed samples and summary figures (computed then, by kcross.stats), in one statement.
Tags go along unless the destination has a tag of that name on another run: then the
destination's tag is kept and the copy says so.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ..errors import StoreError, UserError
from . import packing, records
from . import tables as t
from .db import guard, hold
from .location import Target
from .opening import Store
from .reading import as_utc

# Columns of runs copied as they are (the id is the destination's, machine_id its own row).
_RUN_COLUMNS = tuple(c.name for c in t.runs.columns if c.name not in ("id", "machine_id"))
_MACHINE_COLUMNS = tuple(c.name for c in t.machines.columns if c.name != "id")
_RESULT_COLUMNS = tuple(c.name for c in t.results.columns if c.name not in ("id", "run_id"))
_LEVEL_COLUMNS = tuple(c.name for c in t.process_levels.columns if c.name != "run_id")


@dataclass(frozen=True)
class Copied:
    """What became of one run: copied (``dest_id`` is new) or already there (skipped)."""

    source_id: int
    dest_id: int
    copied: bool
    results: int
    status: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def same_store(a: Target, b: Target) -> bool:
    """Whether two locations are one database (same file, or same server, database and options)."""
    if a.path is not None or b.path is not None:
        if a.path is None or b.path is None:
            return False
        try:
            return os.path.samefile(a.path, b.path)
        except OSError:
            return a.path == b.path

    def key(target: Target) -> tuple[Any, ...]:
        url = target.url
        return (url.get_backend_name(), (url.host or "localhost").lower(), url.port,
                url.database, url.username, sorted(url.query.items()))

    return key(a) == key(b)


def select_runs(src: Store, refs: Sequence[str]) -> list[int]:
    """The ids of the runs ``refs`` name in ``src`` (each once, in order); all, oldest first,
    when ``refs`` is empty."""
    if refs:
        ids: list[int] = []
        for ref in refs:
            run_id = src.resolve(ref)
            if run_id not in ids:
                ids.append(run_id)
        return ids
    return [run.id for run in reversed(src.list_runs())]


def refuse_running(src: Store, ids: Sequence[int], *, force: bool) -> None:
    """Refuse, before anything is copied, runs whose stored status is still ``running``."""
    if force:
        return
    running = [r for r in src.list_runs(status="running") if r.id in set(ids)]
    if running:
        shown = ", ".join(f"{r.id} ({r.state})" for r in running[:5])
        raise UserError(f"run {shown} still running in {src.target.display}: nothing copied; "
                        "copy it when it has finished, mark it ('kcross mark RUN "
                        "interrupted') if its process is gone, or use --force")


def transfer(src: Store, dst: Store, ids: Sequence[int], *, force: bool = False,
             each: Callable[[Copied], None] | None = None) -> list[Copied]:
    """Copy runs ``ids`` of ``src`` to ``dst``, one transaction each; ``each`` sees every outcome."""
    outcomes = []
    for run_id in ids:
        outcome = _copy_one(src, dst, run_id, force=force)
        outcomes.append(outcome)
        if each is not None:
            each(outcome)
    return outcomes


@dataclass(frozen=True)
class _Source:
    row: dict[str, Any]             # runs columns but id and machine_id
    machine: dict[str, Any]         # machines columns but id
    results: list[dict[str, Any]]   # results columns but id and run_id, in seq order
    tags: list[str]
    excluded: str | None = None     # left out of the noise (kcross exclude): its reason
    levels: tuple[dict[str, Any], ...] = ()   # process_levels columns but run_id


def _read(src: Store, run_id: int) -> _Source:
    """A run's rows as stored.  Its records were validated when they were written, their
    figures computed then (kcross.stats): they are copied as they are, not computed again.
    A damaged row (JSON, record type, packed samples) is refused in one line."""
    damaged = f"{src.target.display}: run {run_id}"
    with guard(src.target, f"reading run {run_id}"), src.engine.connect() as conn:
        try:
            row = conn.execute(sa.select(*(t.runs.c[n] for n in _RUN_COLUMNS))
                               .where(t.runs.c.id == run_id)).one()
            machine = conn.execute(
                sa.select(*(t.machines.c[n] for n in _MACHINE_COLUMNS))
                .join(t.runs, t.runs.c.machine_id == t.machines.c.id)
                .where(t.runs.c.id == run_id)).one()
            results = [r._asdict() for r in conn.execute(
                sa.select(*(t.results.c[n] for n in _RESULT_COLUMNS))
                .where(t.results.c.run_id == run_id).order_by(t.results.c.seq))]
        except (ValueError, TypeError) as exc:  # a JSON column edited by hand
            raise StoreError(f"{damaged} or its machine row is damaged ({exc}); was the "
                             "database edited by hand?") from None
        tags = list(conn.execute(sa.select(t.tags.c.name).where(t.tags.c.run_id == run_id)
                                 .order_by(t.tags.c.name)).scalars())
        x = t.noise_exclusions.c
        excluded = conn.execute(sa.select(x.run_id, x.reason).where(x.run_id == run_id)).first()
        levels = tuple(r._asdict() for r in conn.execute(
            sa.select(*(t.process_levels.c[n] for n in _LEVEL_COLUMNS))
            .where(t.process_levels.c.run_id == run_id)))
    for what, value, rtype in (("fingerprint", row.fingerprint, "fingerprint"),
                               ("plan", row.plan, "plan"), ("end record", row.end_record, "end")):
        if not (value is None and what != "fingerprint"):
            records.of_type(value, f"{damaged} {what}", rtype)
    for seq, result in enumerate(results):
        where = f"{damaged} result {result['suite']}/{result['name']}"
        records.of_type(result["record"], where, "result")
        try:
            packing.check(result["record"], result["samples"])
        except ValueError as exc:
            raise records.damaged(f"{where}: {exc}") from None
        result["seq"] = seq
    return _Source(row=_utc(row._asdict()), machine=_utc(machine._asdict()), results=results,
                   tags=tags, excluded=None if excluded is None else excluded.reason or "",
                   levels=levels)


def _utc(values: dict[str, Any]) -> dict[str, Any]:
    """SQLite hands back naive UTC datetimes; PostgreSQL would read them as its local time."""
    return {k: as_utc(v) if isinstance(v, dt.datetime) else v for k, v in values.items()}


def _copy_one(src: Store, dst: Store, run_id: int, *, force: bool) -> Copied:
    source = _read(src, run_id)
    row, machine = dict(source.row), source.machine
    notes: list[str] = []
    if row["status"] == "running":
        if not force:  # refuse_running says so for all of them before anything is copied
            raise UserError(f"run {run_id} is still running in {src.target.display}; "
                            "use --force to copy it anyway")
        row.update(status="interrupted", owner_host=None, owner_pid=None, owner_id=None,
                   error=f"copied from {src.target.display} while still running "
                         f"({len(source.results)} result(s) then)")
        notes.append("copied while still running: marked interrupted there")
    with guard(dst.target, f"copying run {run_id}"), dst.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Two pushes of one run at once: the second waits, then finds it there.
            key = f"{machine['fingerprint_hash']} {row['source']} {row['started_at']}"
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": key})
        present = _present(conn, row, machine["fingerprint_hash"])
        if present is not None:
            dest_id, there_status, there_results = present
            if (there_status, there_results) != (row["status"], len(source.results)):
                notes.append(f"differs there ({there_status}, {there_results} result(s); "
                             f"here {row['status']}, {len(source.results)}): delete run "
                             f"{dest_id} there to copy it again")
            notes += _copy_tags(conn, source.tags, dest_id)
            notes += _copy_exclusion(conn, source.excluded, dest_id)
            hold("copy: already there")
            return Copied(run_id, dest_id, False, len(source.results), row["status"],
                          tuple(notes))
        t.insert_new(conn, t.machines, machine, "fingerprint_hash")
        machine_id = conn.execute(sa.select(t.machines.c.id).where(
            t.machines.c.fingerprint_hash == machine["fingerprint_hash"])).scalar_one()
        dest_id = conn.execute(sa.insert(t.runs).values(machine_id=machine_id, **row)
                               .returning(t.runs.c.id)).scalar_one()
        if source.results:
            conn.execute(sa.insert(t.results), [{**r, "run_id": dest_id}
                                                for r in source.results])
        if source.levels:   # as computed when the run was stored (a run stored before
            # schema 9 has none, here as there: its records are read where they are needed)
            conn.execute(sa.insert(t.process_levels), [{**r, "run_id": dest_id}
                                                       for r in source.levels])
        notes += _copy_tags(conn, source.tags, dest_id)
        notes += _copy_exclusion(conn, source.excluded, dest_id)
        hold("copy")
    return Copied(run_id, dest_id, True, len(source.results), row["status"], tuple(notes))


def _present(conn: sa.Connection, row: dict[str, Any],
             machine_hash: str) -> tuple[int, str, int] | None:
    """The destination's copy of this run, if any: (id, status, results)."""
    count = (sa.select(sa.func.count(t.results.c.id))
             .where(t.results.c.run_id == t.runs.c.id).scalar_subquery())
    query = sa.select(t.runs.c.id, t.runs.c.status, count.label("results"))
    if row["content_hash"] is not None:
        same = conn.execute(query.where(t.runs.c.content_hash == row["content_hash"])
                            .order_by(t.runs.c.id).limit(1)).first()
        if same is not None:
            return same.id, same.status, same.results
    # Same machine, source and start: compared here, not in SQL, to the microsecond
    # whatever each backend does with time zones.
    candidates = conn.execute(query.add_columns(t.runs.c.started_at)
                              .join(t.machines, t.machines.c.id == t.runs.c.machine_id)
                              .where(t.machines.c.fingerprint_hash == machine_hash,
                                     t.runs.c.source == row["source"])
                              .order_by(t.runs.c.id)).all()
    for c in candidates:
        if as_utc(c.started_at) == row["started_at"]:
            return c.id, c.status, c.results
    return None


def _copy_tags(conn: sa.Connection, names: Sequence[str], dest_id: int) -> list[str]:
    """Give the destination's run the source run's tags; a name taken there stays as it is."""
    notes = []
    for name in names:
        there = conn.execute(sa.select(t.tags.c.run_id)
                             .where(t.tags.c.name == name)).scalar_one_or_none()
        if there is None:
            conn.execute(sa.insert(t.tags).values(name=name, run_id=dest_id,
                                                  tagged_at=dt.datetime.now(dt.UTC)))
            notes.append(f"tagged {name}")
        elif there != dest_id:
            notes.append(f"tag {name} not copied: it names run {there} there")
    return notes


def _copy_exclusion(conn: sa.Connection, reason: str | None, dest_id: int) -> list[str]:
    """Leave the destination's run out of the noise too when the source's is (kcross
    exclude); one there already stays as it is."""
    x = t.noise_exclusions
    if reason is None or conn.execute(sa.select(x.c.run_id).where(x.c.run_id == dest_id)
                                      ).first() is not None:
        return []
    conn.execute(sa.insert(x).values(run_id=dest_id, reason=reason or None,
                                     excluded_at=dt.datetime.now(dt.UTC)))
    return ["left out of the noise (kcross exclude)"]


def describe(outcome: Copied) -> str:
    """One line for a run's outcome."""
    if outcome.copied:
        text = (f"copied run {outcome.source_id} -> run {outcome.dest_id} "
                f"({outcome.status}, {outcome.results} result(s))")
    else:
        text = f"skipped run {outcome.source_id}: already there as run {outcome.dest_id}"
    return text + "".join(f"; {note}" for note in outcome.notes)

