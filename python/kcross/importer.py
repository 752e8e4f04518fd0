"""``kcross import``: store a ``kcross-harness run --json`` capture from another machine.

The harness can run where Python cannot (a static binary in an initramfs,
a minimal container); its output file is brought back and imported here.
The whole file is validated before anything is stored, and stored in one
transaction, so a bad file leaves the database untouched.  Captures of schema
1 (kcross 0.1.0) are read too and stored as they are: their samples were
corrected by the harness, and kcross.stats summarises them by their own
overhead decision.  A capture that
stops early (no ``end`` record, possibly cut mid-line) is a normal outcome
of a crash or power cycle and is imported as an interrupted run.

:func:`import_stream` stores records that are already in memory (``kcross
lab``: the guest harness's lines taken from the console, with the lab's
``fingerprint.lab`` added and every unit set to instructions/op); they are
checked exactly like a file's.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import fingerprint as fields
from . import infile
from .errors import SchemaError, UserError
from .schema import IMPORT_VERSIONS, MalformedLine, RunStream, parse_line, validate
from .store import DuplicateImport, Store, run_times


@dataclass(frozen=True)
class Imported:
    """What an import stored, for the confirmation message."""

    run_id: int
    complete: bool
    results: int
    planned: int
    dropped_partial_line: int | None
    future: dt.datetime | None = None   # its start, when later than now (a wrong clock)


# A capture's start this far past the importing machine's clock is in the future: more than
# two clocks' everyday disagreement, less than any wrong RTC's.
FUTURE_SLACK = dt.timedelta(minutes=5)


def read_stream(path: Path, data: bytes | None = None) -> tuple[RunStream, int | None]:
    """Validate a capture; return it and the number of a cut-off last line, if any.
    ``data``: the file's bytes, already read (standard input, read once by the caller)."""
    name, data = infile.read(path, data)
    stream = RunStream()
    lines = data.split(b"\n")
    partial: int | None = None
    for index, raw in enumerate(lines):
        lineno = index + 1
        where = f"{name} line {lineno}"
        if not raw.strip():
            continue
        is_last_unterminated = index == len(lines) - 1  # no newline after it
        try:
            record = parse_line(raw.decode("utf-8"), where, IMPORT_VERSIONS)
        except (UnicodeDecodeError, SchemaError) as exc:
            if is_last_unterminated and stream.end is None and _looks_cut(exc):
                partial = lineno
                break
            if isinstance(exc, UnicodeDecodeError):
                raise SchemaError(f"{where}: not UTF-8 text") from None
            raise
        stream.add(record, where)
    if stream.fingerprint is None:
        raise SchemaError(f"{name}: no fingerprint record (is it 'kcross-harness run --json' "
                          "output?)")
    if stream.plan is None:
        raise SchemaError(f"{name}: no plan record; 'kcross import' takes the output of "
                          "'kcross-harness run --json', not 'sysinfo'")
    return stream, partial


def _looks_cut(exc: Exception) -> bool:
    """A final line that is not JSON at all (not a valid-but-wrong record) was cut off."""
    return isinstance(exc, (UnicodeDecodeError, MalformedLine))


def import_file(store_factory: Callable[[], Store], path: Path, *,
                force: bool = False, data: bytes | None = None) -> Imported:
    """Validate ``path`` (``-`` for stdin), then store it as one run with source ``import``.

    The store is opened only once the file is known to be good, so a bad file
    does not even create a database.  A capture already stored (same records)
    is refused unless ``force``.
    """
    stream, partial = read_stream(path, data)
    name = infile.name_of(path)
    try:
        return _stored(store_factory, stream, name, partial, command=["import", str(path)],
                       force=force)
    except DuplicateImport as exc:
        raise UserError(f"{name}: {exc}") from None


def stream_of(records: Iterable[Mapping[str, Any]], name: str) -> RunStream:
    """Validate records held in memory as one ``run --json`` stream, like a file's lines.

    ``name`` says where they came from in errors ("lab ppc64le record 3: ...").
    Each record is checked as it would be read from JSON text (a copy goes
    through JSON, so a value JSON cannot hold is refused, not stored).
    """
    stream = RunStream()
    for number, given in enumerate(records, start=1):
        where = f"{name} record {number}"
        if not isinstance(given, Mapping):
            raise SchemaError(f"{where}: expected a JSON object, got {type(given).__name__}")
        try:
            record = json.loads(json.dumps(given, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"{where}: not a JSON record ({exc})") from None
        validate(record, where, IMPORT_VERSIONS)
        stream.add(record, where)
    if stream.fingerprint is None:
        raise SchemaError(f"{name}: no fingerprint record")
    if stream.plan is None:
        raise SchemaError(f"{name}: no plan record (not the output of "
                          "'kcross-harness run --json')")
    return stream


def import_stream(store_factory: Callable[[], Store],
                  stream: RunStream | Iterable[Mapping[str, Any]], *,
                  command: Sequence[str], source: str = "lab", force: bool = False,
                  name: str = "stream", started_at: dt.datetime | None = None,
                  finished_at: dt.datetime | None = None) -> Imported:
    """Validate a run held in memory, then store it as one run with ``source``.

    ``stream``: the records (fingerprint, plan, results, end; the end may be
    missing: an interrupted run), or a :class:`RunStream` built from them,
    which is checked again record by record.  Errors are :class:`SchemaError`
    (one line naming ``name`` and the record) before the store is opened, so
    a bad stream stores nothing and creates no database.  A run already stored
    with the same records raises :class:`DuplicateImport` (a :class:`UserError`
    carrying ``run_id``) unless ``force``.  ``started_at``/``finished_at``:
    the host's times of the run (a lab run is dated by them, else by now).
    """
    if isinstance(stream, RunStream):
        stream = [r for r in (stream.fingerprint, stream.plan, *stream.results, stream.end)
                  if r is not None]
    checked = stream_of(stream, name)
    if source == "lab" and fields.lab(checked.fingerprint) is None:
        raise SchemaError(f"{name}: fingerprint record has no lab object, so it cannot be "
                          "stored as a lab run (the lab adds fingerprint.lab)")
    return _stored(store_factory, checked, name, None, command=command, force=force,
                   source=source, started_at=started_at, finished_at=finished_at)


def _stored(store_factory: Callable[[], Store], stream: RunStream, name: str,
            partial: int | None, **how: Any) -> Imported:
    """Store a checked stream as one run (``how``: Store.import_stream's options), the store
    opened only once its dates are known to be ones the database can hold (a run dated by
    its fingerprint: a lab run is dated by the host).  Its start, as the store dates it (the
    ``started_at`` given, e.g. a LAVA job's by its log, else the fingerprint's), when in the
    future: every import's warning (kcross import of a capture or of a LAVA job)."""
    assert stream.fingerprint is not None and stream.plan is not None  # checked
    started = how.get("started_at")
    if fields.lab(stream.fingerprint) is None:
        try:
            from_stream, _ = run_times(stream.fingerprint, stream.end)
        except SchemaError as exc:
            raise SchemaError(f"{name}: {exc}") from None
        started = started or from_stream
    store = store_factory()
    try:
        run_id = store.import_stream(stream, **how)
    finally:
        store.close()
    now = dt.datetime.now(dt.UTC)
    future = started if started is not None and started > now + FUTURE_SLACK else None
    return Imported(run_id=run_id, complete=stream.complete, results=len(stream.results),
                    planned=len(stream.plan["benchmarks"]), dropped_partial_line=partial,
                    future=future)
