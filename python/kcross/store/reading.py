"""Reading runs, tags and machines: what every reading command shares (``kcross runs``,
``show``, ``compare``, ``report``...: the runs' summary lines, a whole run, the run a
reference names, the tags).

:class:`Reading` is the base of the store (kcross.store.opening's ``Store``): the
database of one invocation, opened lazily, and its reads.  kcross.store.writing builds on
it (a change finds the run a reference names as a read does).  Records read back are
checked by kcross.store.records' rules; the reads of one command alone live with it
(kcross.store.history for ``kcross history``, kcross.store.transfer for push and pull).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import sqlalchemy as sa

from .. import fingerprint as fields
from ..errors import UserError, did_you_mean, shown
from ..fingerprint import HASH_SHOWN
from ..schema import UNIT_NS, unit_of
from . import records
from . import tables as t
from .db import guard, open_engine
from .liveness import judge
from .location import Target
from .refs import REF_FORMS, parse_ref


@overload
def as_utc(value: dt.datetime) -> dt.datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A stored time in UTC, as everything kcross stores is.

    SQLite hands back naive datetimes (UTC as written); PostgreSQL aware ones in the
    session's time zone, which need not be UTC (and SQLite, written to, would drop it).
    """
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def newest_first(query: sa.Select[Any], *, by_start: bool = False) -> sa.Select[Any]:
    """What 'latest' means: the newest run stored (the highest id: the order runs were
    stored in, which no clock can upset: a board whose clock is wrong stores a start in the
    future); ``by_start``: in time order, the most recently started first (ties: the higher
    id), as a trend and ``kcross runs --by-start`` show them."""
    if by_start:
        return query.order_by(t.runs.c.started_at.desc(), t.runs.c.id.desc())
    return query.order_by(t.runs.c.id.desc())


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
class LavaJobRun:
    """A run imported from a LAVA job (:meth:`Reading.lava_job_runs`): its id, content hash,
    and what the server said of the job (fingerprint.lava's device and server)."""

    id: int
    content_hash: str | None
    device: str | None
    server: str | None
    log: str | None        # None: imported before kcross kept which log it was


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
class RunFacts:
    """What a stored run's place in its machine's run-to-run noise turns on
    (kcross.judge.noise.left_out decides it from these)."""

    id: int
    machine_hash: str
    status: str
    quick: bool                          # its command asked for --quick (a smoke run)
    harness: tuple[str | None, ...]      # fingerprint kcross.version, .git_rev, .build
    excluded: str | None = None          # kcross exclude's reason ("": none given); None: not


class Reading:
    """The result database of one kcross invocation (its place, and its engine: made when
    first used if the store was opened lazily), and what every command reads of it."""

    def __init__(self, engine: sa.Engine | None, target: Target) -> None:
        self._engine = engine
        self.target = target

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
        if self._engine is not None:
            self._engine.dispose()

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
                hint = did_you_mean(parsed.tag, conn.execute(sa.select(t.tags.c.name)).scalars())
                raise UserError(f"no run or tag {shown(parsed.tag)} in {display} ("
                                f"{hint + ' ' if hint else ''}a RUN is {REF_FORMS}; see "
                                "'kcross runs')")
            return int(found)
        assert parsed.back is not None
        query = sa.select(t.runs.c.id)
        of = ""
        if parsed.host is not None:
            machine_ids, of = self._machines_named(conn, parsed.host)
            query = query.where(t.runs.c.machine_id.in_(machine_ids))
        found = conn.execute(newest_first(query).offset(parsed.back).limit(1)
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
        hint = did_you_mean(host, (h for h in conn.execute(sa.select(m.hostname)).scalars() if h))
        raise UserError(f"no machine {shown(host)} in {self.target.display}: no hostname is "
                        f"that and no machine hash starts with it ({hint + ' ' if hint else ''}"
                        "see 'kcross runs')")

    def count_runs(self) -> int:
        """How many runs are stored."""
        with guard(self.target, "counting runs"), self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count(t.runs.c.id))).scalar_one())

    def lava_job_runs(self, job_id: str) -> list[LavaJobRun]:
        """The runs imported from a LAVA job of this id (runs.source ``lava``), oldest first:
        how kcross.lava.imports finds a job stored by another route."""
        lava = t.runs.c.fingerprint
        query = (sa.select(t.runs.c.id, t.runs.c.content_hash,
                           lava[fields.LAVA_DEVICE.path].as_string().label("device"),
                           lava[fields.LAVA_SERVER.path].as_string().label("server"),
                           lava[fields.LAVA_LOG.path].as_string().label("log"))
                 .where(t.runs.c.source == "lava",
                        lava[fields.LAVA_JOB_ID.path].as_string() == job_id)
                 .order_by(t.runs.c.id))
        with guard(self.target, "reading LAVA runs"), self.engine.connect() as conn:
            return [LavaJobRun(r.id, r.content_hash, r.device, r.server, r.log)
                    for r in conn.execute(query)]

    def list_runs(self, *, ids: Iterable[int] | None = None, machine: str | None = None,
                  status: str | None = None, limit: int | None = None,
                  by_start: bool = False) -> list[RunSummary]:
        """The runs, newest stored first (``by_start``: most recently started first): all,
        or those of ``ids``, of one ``machine`` (its fingerprint hash) or of one stored
        ``status``, the newest ``limit`` of them."""
        # Benchmarks, not result rows: a run of K processes has K rows per benchmark.
        count = (sa.select(sa.func.count(t.results.c.id))
                 .where(t.results.c.run_id == t.runs.c.id, t.results.c.process == 0)
                 .scalar_subquery())
        query: sa.Select[Any] = (sa.select(t.runs.c.id, t.runs.c.started_at, t.runs.c.status,
                                           t.runs.c.source,
                           t.runs.c.owner_host, t.runs.c.owner_pid, t.runs.c.owner_id,
                           t.runs.c.updated_at,
                           t.machines.c.hostname, t.machines.c.cpu_model,
                           # the run's own: a lab machine's runs have kernels of their own
                           t.runs.c.fingerprint[fields.KERNEL_RELEASE.path].as_string()
                           .label("kernel_release"), t.machines.c.hypervisor,
                           t.machines.c.fingerprint_hash, t.machines.c.arch,
                           # JSON path: JSON_EXTRACT on SQLite, #>> on PostgreSQL
                           t.runs.c.fingerprint[fields.LAB_UNIT.path].as_string()
                           .label("lab_unit"),
                           t.runs.c.fingerprint[fields.LAB_VARIANT.path].as_string()
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
            newest = newest_first(sa.select(t.runs.c.id).select_from(
                t.runs.join(t.machines, t.machines.c.id == t.runs.c.machine_id)),
                by_start=by_start)
            for clause in query.whereclause, :
                if clause is not None:
                    newest = newest.where(clause)
            query = query.where(t.runs.c.id.in_(newest.limit(limit).scalar_subquery()))
        query = newest_first(query, by_start=by_start)
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
                         owner_id=r.owner_id, updated_at=as_utc(r.updated_at))
            summaries.append(RunSummary(
                id=r.id, started_at=as_utc(r.started_at), status=r.status, source=r.source,
                hostname=r.hostname, cpu_model=r.cpu_model, kernel_release=r.kernel_release,
                hypervisor=r.hypervisor, results=r.results, state=live.state, live=live.live,
                unit=unit_of(fields.LAB_UNIT.put({}, r.lab_unit) if r.lab_unit else None),
                machine_hash=r.fingerprint_hash, tags=tuple(tagged.get(r.id, ())),
                arch=r.arch, variant=r.lab_variant))
        return summaries

    def result_figures(self, run_ids: Iterable[int]) -> list[Any]:
        """The summary columns stored beside each result of the runs ``run_ids``
        (stats.summary_columns), run by run in the order given, each run's in its order:
        rows of run_id, host_time (fingerprint.host.time), suite, name, process, status,
        n, median_ns, ci_low_ns, ci_high_ns.  No record is read (the run-to-run noise of a
        comparison: kcross.judge.noise)."""
        ids = list(run_ids)
        r, run = t.results.c, t.runs.c
        query = (sa.select(r.run_id, run.host_time, r.suite, r.name, r.process, r.status,
                           r.n, r.median_ns, r.ci_low_ns, r.ci_high_ns)
                 .join(t.runs, run.id == r.run_id)
                 .where(r.run_id.in_(ids)).order_by(r.run_id, r.seq))
        with guard(self.target, "reading results"), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        place = {run_id: i for i, run_id in enumerate(ids)}
        return sorted(rows, key=lambda row: place[row.run_id])   # stable: each run's order

    def process_levels(self, run_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The stored process levels of the runs ``run_ids`` (store/writing.py
        process_levels), by run id, then benchmark (``suite/name``): rows of processes,
        per_process, log, var.  A run absent has none stored (one process, or stored before
        schema 9).  No record is read."""
        ids = list(run_ids)
        if not ids:
            return {}
        c = t.process_levels.c
        with guard(self.target, "reading process levels"), self.engine.connect() as conn:
            rows = conn.execute(sa.select(c.run_id, c.suite, c.name, c.processes,
                                          c.per_process, c.log, c.var)
                                .where(c.run_id.in_(ids))).all()
        found: dict[int, dict[str, Any]] = {}
        for row in rows:
            found.setdefault(row.run_id, {})[f"{row.suite}/{row.name}"] = row
        return found

    def run_facts(self, *, machine: str | None = None,
                  machine_ids: Iterable[int] | None = None,
                  ids: Iterable[int] | None = None) -> list[RunFacts]:
        """The noise facts of the runs of one ``machine`` (its fingerprint hash), of the
        machine rows ``machine_ids`` or of the runs ``ids`` (all: none given), newest stored
        first (the highest id).  No result is read."""
        r, x = t.runs.c, t.noise_exclusions.c
        # fingerprint.HARNESS, as store/writing.py copies it into the runs row
        harness = [r.kcross_version.label("h0"), r.git_rev.label("h1"),
                   r.kcross_build.label("h2")]
        # the command as text on both backends (CAST: PostgreSQL's driver would parse each
        # JSONB value, 10,000 of them, where _asked_quick needs no parse without "--quick")
        query = (sa.select(r.id, r.status, sa.cast(r.command, sa.Text).label("command"),
                           t.machines.c.fingerprint_hash, x.run_id.label("excluded"),
                           x.reason, *harness)
                 .join(t.machines, t.machines.c.id == r.machine_id)
                 .outerjoin(t.noise_exclusions, x.run_id == r.id)
                 .order_by(r.id.desc()))
        if machine is not None:
            query = query.where(t.machines.c.fingerprint_hash == machine)
        if machine_ids is not None:
            query = query.where(r.machine_id.in_(list(machine_ids)))
        if ids is not None:
            query = query.where(r.id.in_(list(ids)))
        with guard(self.target, "listing runs"), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        harnesses: dict[tuple[Any, ...], tuple[str | None, ...]] = {}   # a machine has few

        def harness_of(*stored: Any) -> tuple[str | None, ...]:
            if stored not in harnesses:
                harnesses[stored] = tuple(fields.as_text(v) for v in stored)
            return harnesses[stored]

        return [RunFacts(id=row.id, machine_hash=row.fingerprint_hash, status=row.status,
                         quick=_asked_quick(row.command), harness=harness_of(row.h0, row.h1, row.h2),
                         excluded=None if row.excluded is None else (row.reason or ""))
                for row in rows]

    def exclusions(self) -> list[tuple[int, str]]:
        """The runs left out of the noise (kcross exclude) and the reasons given, by id."""
        x = t.noise_exclusions.c
        with guard(self.target, "listing exclusions"), self.engine.connect() as conn:
            rows = conn.execute(sa.select(x.run_id, x.reason).order_by(x.run_id)).all()
        return [(row.run_id, row.reason or "") for row in rows]

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
        stored = records.stored_record
        fingerprint = stored(run.fingerprint, f"{where} fingerprint", "fingerprint", check=check)
        assert fingerprint is not None
        live = judge(run.status, owner_host=run.owner_host, owner_pid=run.owner_pid,
                     owner_id=run.owner_id, updated_at=as_utc(run.updated_at))
        return StoredRun(
            id=run.id, started_at=as_utc(run.started_at), finished_at=as_utc(run.finished_at),
            status=run.status, source=run.source, error=run.error, fingerprint=fingerprint,
            plan=stored(run.plan, f"{where} plan", "plan", nullable=True, check=check),
            results=[stored(r[3], f"{where} result {r[1]}/{r[2]} (seq {r[0]})", "result",
                            packed=r[4], check=check)
                     for r in rows],
            end=stored(run.end_record, f"{where} end record", "end", nullable=True, check=check),
            state=live.state, live=live.live)


def _asked_quick(command: Any) -> bool:
    """Whether a stored command (JSON text, or parsed by PostgreSQL's driver) has --quick."""
    if isinstance(command, str) and "--quick" not in command:
        return False      # none to find: no text parsed (a machine's 10,000 runs read)
    try:
        words = records.decoded(command)
    except ValueError:
        return False
    return isinstance(words, list) and "--quick" in words


def _common_prefix(texts: Sequence[str]) -> int:
    """Length of the prefix all ``texts`` share."""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n
