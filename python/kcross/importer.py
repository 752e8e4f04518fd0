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
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import SchemaError, UserError
from .schema import IMPORT_VERSIONS, MalformedLine, RunStream, parse_line
from .store import DuplicateImport, Store, run_times


@dataclass(frozen=True)
class Imported:
    """What an import stored, for the confirmation message."""

    run_id: int
    complete: bool
    results: int
    planned: int
    dropped_partial_line: int | None


def read_stream(path: Path) -> tuple[RunStream, int | None]:
    """Validate a capture; return it and the number of a cut-off last line, if any."""
    name = "stdin" if str(path) == "-" else str(path)
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
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
                force: bool = False) -> Imported:
    """Validate ``path`` (``-`` for stdin), then store it as one run with source ``import``.

    The store is opened only once the file is known to be good, so a bad file
    does not even create a database.  A capture already stored (same records)
    is refused unless ``force``.
    """
    stream, partial = read_stream(path)
    name = "stdin" if str(path) == "-" else str(path)
    assert stream.fingerprint is not None  # read_stream refuses captures without one
    try:
        run_times(stream.fingerprint, stream.end)  # dates the database can hold
    except SchemaError as exc:
        raise SchemaError(f"{name}: {exc}") from None
    store = store_factory()
    try:
        run_id = store.import_stream(stream, command=["import", str(path)], force=force)
    except DuplicateImport as exc:
        raise UserError(f"{name}: {exc}") from None
    finally:
        store.close()
    assert stream.plan is not None  # read_stream refuses captures without one
    return Imported(run_id=run_id, complete=stream.complete, results=len(stream.results),
                    planned=len(stream.plan["benchmarks"]), dropped_partial_line=partial)
