"""The store's reads for ``kcross history`` alone (kcross.history.trend): the stored
benchmarks' names, the machines' fingerprints, the runs holding a benchmark (through the
results' key, newest first), their results in one query, and the summary columns stored
beside them.  The window's work, not the store's: no query reads every result of a
benchmark.

Here, named for their one reader, because every SQL statement and table name stays in
kcross.store (a change of the schema changes this package alone); not methods of the
store, because no other command reads them.  Each takes the store it reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from .. import fingerprint as fields
from . import records
from . import tables as t
from .db import guard
from .reading import Reading, as_utc, newest_first


@dataclass(frozen=True)
class StoredResults:
    """Some results of one stored run, as a trend reads them (:func:`results_named`): the
    run's machine row and its per-run fingerprint values instead of its whole fingerprint
    (everything else in a fingerprint is the machine's: kcross.fingerprint.identity; a lab
    machine's kernel axis is the run's own, as the trend reads it)."""

    run_id: int
    started_at: dt.datetime
    machine_id: int
    host_time: str | None            # fingerprint.host.time
    timer_hz: float | None           # fingerprint.timer.hz
    results: list[dict[str, Any]]    # in the run's order
    figures: list[dict[str, Any]]    # each result's summary columns (stats.summary_columns)
    kernel_release: str | None = None            # fingerprint.kernel.release
    lab_kernel: dict[str, Any] | None = None     # fingerprint.lab.kernel
    status: str = "complete"                     # the run's stored status


# The summary columns a trend reads beside the records.
_FIGURES = ("median_ns", "ci_low_ns", "ci_high_ns", "ci_confidence", "min_ns", "overhead_ns",
            "subtracted", "overhead_reason")


def result_names(store: Reading, exactly: str | None = None) -> list[str]:
    """Every stored benchmark's ``suite/name``, sorted; ``exactly``: only those it names
    (as ``suite/name`` or the bare name), found through the results' name index."""
    query = sa.select(t.results.c.name, t.results.c.suite).distinct()
    if exactly is not None:
        # the index's range of each name it could be, the suite sorted out here: an OR
        # of the two in SQL is a scan of the whole index on PostgreSQL (0.14 s at 5 million
        # results, against 10 ms)
        suite, slash, name = exactly.partition("/")
        query = query.where(t.results.c.name.in_([exactly, name] if slash else [exactly]))
    with guard(store.target, "listing benchmarks"), store.engine.connect() as conn:
        rows = conn.execute(query).all()
    pairs = [(n, s) for n, s in rows if exactly is None or n == exactly
             or (slash and (n, s) == (name, suite))]
    return sorted(f"{s}/{n}" for n, s in pairs)


def machine_fingerprints(store: Reading) -> dict[int, dict[str, Any]]:
    """Every machine row's fingerprint (as first seen), by machine id."""
    with guard(store.target, "reading machines"), store.engine.connect() as conn:
        rows = conn.execute(sa.select(t.machines.c.id, sa.type_coerce(
            t.machines.c.fingerprint, sa.Text))).all()
    where = f"{store.target.display}: machine"
    return {r[0]: records.stored_record(r[1], f"{where} {r[0]} fingerprint", "fingerprint",
                                        check=False) for r in rows}


def _named(names: Sequence[str]) -> Any:
    """The WHERE clause of results rows of the benchmarks ``names`` (``suite/name``)."""
    wanted = [tuple(n.split("/", 1)) for n in names]
    r = t.results.c
    return sa.tuple_(r.suite, r.name).in_(wanted) if len(wanted) > 1 else \
        sa.and_(r.suite == wanted[0][0], r.name == wanted[0][1])


def _holding(names: Sequence[str], machine_ids: Sequence[int] | None,
             since: tuple[dt.datetime, int] | None = None,
             before: tuple[dt.datetime, int] | None = None,
             ok_only: bool = False) -> sa.Select[Any]:
    """The runs (id, started_at) holding a result of ``names``: from the runs' side, each
    probed through the results' (run_id, suite, name) key, so that a LIMIT on the
    newest reads about that many index entries, not every result of the benchmark."""
    r, run = t.results.c, t.runs.c
    held = sa.select(r.id).where(r.run_id == run.id, _named(names))
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


def runs_holding(store: Reading, names: Sequence[str], *,
                 machine_ids: Sequence[int] | None = None,
                 since: tuple[dt.datetime, int] | None = None,
                 before: tuple[dt.datetime, int] | None = None, ok_only: bool = False,
                 limit: int | None = None, offset: int = 0) -> list[int]:
    """The ids of the runs holding a result of the benchmarks ``names`` (``suite/name``;
    ``ok_only``: a result of status ok), newest first (start, then id): of the machine
    rows ``machine_ids``, whose (start, id) is at least ``since`` and less than
    ``before``, the newest ``limit`` after ``offset``.  One query on the results' name
    index; no record read."""
    query = _holding(names, machine_ids, since, before, ok_only)
    query = newest_first(query, by_start=True)
    if limit is not None:
        query = query.limit(limit)
    if offset:
        query = query.offset(offset)
    with guard(store.target, "listing runs"), store.engine.connect() as conn:
        return [row.run_id for row in conn.execute(query)]


def count_runs_holding(store: Reading, names: Sequence[str], *,
                       machine_ids: Sequence[int] | None = None) -> int:
    """How many runs hold a result of the benchmarks ``names`` (no record read)."""
    query = _holding(names, machine_ids).subquery()
    with guard(store.target, "counting runs"), store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(query)).scalar_one())


def machines_holding(store: Reading, names: Sequence[str]) -> list[int]:
    """The machine rows of the runs holding a result of the benchmarks ``names``."""
    query = (sa.select(t.runs.c.machine_id).distinct()
             .where(t.runs.c.id.in_(_holding(names, None).with_only_columns(
                 t.runs.c.id).scalar_subquery())))
    with guard(store.target, "listing machines"), store.engine.connect() as conn:
        return sorted(conn.execute(query).scalars())


def figures_named(store: Reading, names: Sequence[str], machine_ids: Sequence[int]) -> list[Any]:
    """The summary columns (stats.summary_columns) of the results of the benchmarks
    ``names`` in the runs of the machine rows ``machine_ids``, one row per run and benchmark,
    oldest run first (start, then id), each run's in its order: rows of run_id,
    started_at, machine_id, host_time (fingerprint.host.time), kernel_sha256
    (fingerprint.lab.kernel.sha256: a lab machine's kernel), suite, name, processes (how
    many records: a run of K harness processes has K, whose figures are its records'),
    status, n (the records' samples, summed), median_ns, ci_low_ns, ci_high_ns (of the one
    record).  No result record is read: a machine's noise from its whole history.  The
    results are counted and taken in SQL, a run's fingerprint read once (not once per
    process: ten times the rows)."""
    r, run = t.results.c, t.runs.c
    held = (sa.select(r.run_id, r.suite, r.name, sa.func.count().label("processes"),
                      sa.func.min(r.seq).label("seq"), sa.func.min(r.status).label("status"),
                      sa.func.sum(r.n).label("n"),
                      sa.func.min(r.median_ns).label("median_ns"),
                      sa.func.min(r.ci_low_ns).label("ci_low_ns"),
                      sa.func.min(r.ci_high_ns).label("ci_high_ns"))
            # the machines' runs, then each one's results through the results' key
            .where(r.run_id.in_(sa.select(run.id).where(
                run.machine_id.in_(list(machine_ids))).scalar_subquery()), _named(names))
            .group_by(r.run_id, r.suite, r.name).subquery())
    query = (sa.select(held.c.run_id, run.started_at, run.machine_id, run.host_time,
                       run.lab_kernel_sha256.label("kernel_sha256"),
                       held.c.suite, held.c.name, held.c.processes, held.c.status,
                       held.c.n, held.c.median_ns, held.c.ci_low_ns, held.c.ci_high_ns)
             .join(t.runs, run.id == held.c.run_id)
             .where(run.machine_id.in_(list(machine_ids)))
             .order_by(run.started_at, run.id, held.c.seq))
    with guard(store.target, "reading results"), store.engine.connect() as conn:
        return list(conn.execute(query).all())


def results_named(store: Reading, names: Sequence[str],
                  run_ids: Iterable[int] | None = None) -> list[StoredResults]:
    """The stored results of the benchmarks ``names`` (``suite/name``; of the runs
    ``run_ids`` only, if given), in one query, grouped by run, oldest run first (start,
    then id), each run's in its order.

    Records are taken as validated when they were written (``load_run`` says more).
    """
    r, run = t.results.c, t.runs.c
    query = (sa.select(r.run_id, run.started_at, run.machine_id, run.status,
                       run.host_time, run.timer_hz,
                       run.fingerprint[fields.KERNEL_RELEASE.path].as_string()
                       .label("kernel_release"),
                       sa.type_coerce(run.fingerprint[fields.LAB_KERNEL.path], sa.Text)
                       .label("lab_kernel"), r.seq, r.suite, r.name,
                       sa.type_coerce(r.record, sa.Text).label("record"), r.samples,
                       *(r[name] for name in _FIGURES))
             .join(t.runs, run.id == r.run_id)
             .where(_named(names))
             .order_by(run.started_at, run.id, r.seq))
    if run_ids is not None:
        query = query.where(r.run_id.in_(list(run_ids)))
    found: list[StoredResults] = []
    where = f"{store.target.display}: run"
    with guard(store.target, "reading results"), store.engine.connect() as conn:
        for row in conn.execute(query):
            if not found or found[-1].run_id != row.run_id:
                found.append(StoredResults(
                    run_id=row.run_id, started_at=as_utc(row.started_at),
                    machine_id=row.machine_id, host_time=row.host_time,
                    timer_hz=row.timer_hz, kernel_release=row.kernel_release,
                    lab_kernel=_group(row.lab_kernel), results=[], figures=[],
                    status=row.status))
            found[-1].figures.append({name: row._mapping[name] for name in _FIGURES})
            found[-1].results.append(records.stored_record(
                row.record, f"{where} {row.run_id} result {row.suite}/{row.name} "
                f"(seq {row.seq})", "result", packed=row.samples, check=False))
    return found


def _group(value: Any) -> dict[str, Any] | None:
    """A fingerprint group read by its path (records.decoded), or None when absent or not
    an object."""
    try:
        value = records.decoded(value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
