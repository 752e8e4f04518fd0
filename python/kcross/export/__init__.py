"""Exports: stored runs and comparisons written in formats other tools read.

One exporter per format, each a module of this package with the same
interface (:class:`Exporter`), found through :data:`FORMATS`; callers use
:func:`write` only::

    export.write("gobench", Path("new.txt"), export.ExportData(runs=[stored]))

``run`` and ``show`` pass the run (``runs``); ``compare`` passes its series
and its rows (the judgements of kcross.judge, one per compared pair).  What a format makes of each:

========  =====================================================================
json      the result format (docs/result-format.md): a run as the harness's JSON
          lines (what ``kcross show --json`` writes and ``kcross import`` reads);
          a comparison as one ``comparison`` record
csv       one line per benchmark (a run) or per compared pair, figures at full
          precision
markdown  a GitHub table, figures as kcross prints them
gobench   the Go benchmark format, one line per sample, for ``benchstat``; the
          sides of a comparison differ in the configuration key ``side``
numbers   one number per line, as ministat reads them; with several series, one
          file per series named from FILE (the names go to stderr); ``ministat``,
          its old name, is taken too
========  =====================================================================

The exporters import numpy (kcross.stats) when they run, not here: ``kcross show
--json`` goes through this package too.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import OutputClosed, UserError, did_you_mean, shown

if TYPE_CHECKING:  # types only: the store would load SQLAlchemy, stats numpy
    from ..judge.verdict import Judgement
    from ..series import Series
    from ..store import StoredRun

STDOUT = "-"

# format name -> (module in this package, one line for --help)
FORMATS: dict[str, tuple[str, str]] = {
    "json": ("json_lines", "the versioned result format (a run: 'kcross import' reads it back)"),
    "csv": ("csv_table", "one line per benchmark or compared pair"),
    "markdown": ("markdown", "a GitHub table"),
    "gobench": ("gobench", "the Go benchmark format, for benchstat"),
    "numbers": ("numbers", "numbers one per line, as ministat reads them; one file per series"),
}
# Old names still taken (scripts use them), never listed: old name -> format.
ALIASES = {"ministat": "numbers"}


def canonical(fmt: str) -> str:
    """The format an export name means (an old name: its format's)."""
    return ALIASES.get(fmt, fmt)


def geomeans(rows: Sequence[Judgement]) -> list[tuple[str, str, float | None]]:
    """The geometric mean of the verdicts' ratios for each pair of sources (base, new), in
    the rows' order: with three sides, C/A is never averaged with B/A.  None for a pair
    with no verdict."""
    from ..judge.verdict import geomean

    by_pair: dict[tuple[str, str], list[Judgement]] = {}
    for row in rows:
        by_pair.setdefault((row.base.source, row.new.source), []).append(row)
    return [(base, new, geomean(found)) for (base, new), found in by_pair.items()]


@dataclass(frozen=True)
class ExportData:
    """What to export: stored runs, or a comparison's series and rows (either may be empty)."""

    runs: Sequence[StoredRun] = field(default_factory=tuple)
    series: Sequence[Series] = field(default_factory=tuple)
    rows: Sequence[Judgement] = field(default_factory=tuple)


@dataclass(frozen=True)
class Output:
    """One file of an export.

    ``part`` is None for the export's only file (written to FILE itself);
    an export of several files names each by its ``part`` (FILE's stem, a dot,
    the part, FILE's suffix) and says what it holds in ``label``.
    """

    text: str
    part: str | None = None
    label: str = ""


class Exporter(Protocol):
    """A format module: ``render`` turns the data into the file(s) to write.

    It raises :class:`kcross.errors.UserError` for data the format cannot
    hold (one line saying what would do instead).
    """

    def render(self, data: ExportData) -> list[Output]: ...


def exporter(fmt: str) -> Exporter:
    """The exporter of format ``fmt``; :class:`UserError` naming the formats for another."""
    if canonical(fmt) not in FORMATS:
        hint = did_you_mean(fmt, FORMATS)
        raise UserError(f"unknown export format {shown(fmt)} ({hint + ' ' if hint else ''}"
                        f"formats: {', '.join(FORMATS)})")
    module: Exporter = importlib.import_module(f"{__name__}.{FORMATS[canonical(fmt)][0]}")
    return module


def requested(pairs: Sequence[Sequence[str]] | None, *, db: str | None,
              json_output: bool = False, reads: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The ``--export FORMAT FILE`` pairs (``pairs``: as given, None for none), checked
    before any work is done: known formats, FILEs that may be written (kcross.outfile: not
    the store ``db`` names, nor a file in ``reads``), at most one of them (and not
    ``--json`` too: ``json_output``) on stdout."""
    checked = [(canonical(fmt), path) for fmt, path in pairs or []]
    for fmt, path in checked:
        check_path(fmt, path, db=db, reads=reads)
    to_stdout = [fmt for fmt, path in checked if path == STDOUT]
    if len(to_stdout) > 1:
        raise UserError(f"--export {to_stdout[0]} - and --export {to_stdout[1]} - both write "
                        "to standard output: give one of them a FILE")
    if to_stdout and json_output:
        raise UserError(f"--export {to_stdout[0]} - and --json both write to standard output: "
                        "give the export a FILE")
    return checked


def check_path(fmt: str, path: str | Path, *, db: str | None,
               reads: Sequence[str] = ()) -> None:
    """Refuse, before any work is done, an export that could not be written: an unknown
    format, or a FILE kcross.outfile refuses (a directory, in a missing directory, the
    store ``db`` names...).  (The file itself is written only at the end, e.g. when a run
    finishes.)"""
    from .. import outfile

    exporter(fmt)
    if str(path) != STDOUT:
        outfile.check(path, f"--export {fmt}", db=db, reads=reads)


def write(fmt: str, path: str | Path, data: ExportData) -> list[str]:
    """Write ``data`` in format ``fmt`` to ``path`` (``-``: standard output); return the
    files written.

    A format that writes several files (numbers with several series) names them
    from ``path`` and lists them on stderr, one ``kcross: wrote FILE: WHAT`` line
    each; it cannot write them to standard output.  Every file is checked (kcross.outfile)
    before the first is written.  Errors: :class:`UserError` (exit 2) for an unknown
    format, data the format cannot hold or a file that must not be written,
    :class:`OutputError` (exit 3) when a file cannot be written.
    """
    from .. import outfile

    outputs = exporter(fmt).render(data)
    name = str(path)
    several = len(outputs) != 1 or outputs[0].part is not None
    if name == STDOUT:
        if several:
            raise UserError(f"the {fmt} export of this data is {len(outputs)} files (one per "
                            "series): give a FILE name to derive theirs from, not -")
        try:
            sys.stdout.write(outputs[0].text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise OutputClosed("") from None
        return [STDOUT]
    base = Path(path)
    files = [(base if not several else _part_path(base, out.part or str(i)), out)
             for i, out in enumerate(outputs, start=1)]
    clash = len({f for f, _ in files}) != len(files)
    if clash:  # two parts that sanitize alike: number them instead
        files = [(_part_path(base, f"{i}-{out.part}"), out) for i, (_, out) in
                 enumerate(files, start=1)]
    outfile.write_all([(file, out.text) for file, out in files], f"--export {fmt}")
    if several:
        for file, out in files:
            sys.stderr.write(f"kcross: wrote {file}: {out.label}\n")
    return [str(file) for file, _ in files]


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_part(text: str) -> str:
    """``text`` as a piece of a file name: runs of other characters become one ``-``."""
    return _UNSAFE.sub("-", text).strip("-.") or "x"


def _part_path(base: Path, part: str) -> Path:
    """``out.txt`` + ``syscall-getppid`` -> ``out.syscall-getppid.txt`` (no suffix: appended)."""
    return base.with_name(f"{base.stem}.{safe_part(part)}{base.suffix}")


# --- what several formats share -----------------------------------------------------------

def run_label(run: StoredRun) -> str:
    return f"run {run.id}"


def series_of_runs(runs: Sequence[StoredRun]) -> list[Series]:
    """The series of the runs' ``ok`` results that have figures, each labelled ``run N``."""
    from ..series import series_of_results

    found: list[Series] = []
    for run in runs:
        found += series_of_results(run_label(run), run.fingerprint, run.results)
    return found


def series_of(data: ExportData) -> list[Series]:
    """Every series the data holds, once each, in order: the rows' sides (base before new),
    then series given on their own, then the runs'."""
    found: list[Series] = []
    seen: set[tuple[str, str]] = set()
    candidates = [s for row in data.rows for s in (row.base, row.new)]
    for series in [*candidates, *data.series, *series_of_runs(data.runs)]:
        key = (series.source, series.name)
        if key not in seen:
            seen.add(key)
            found.append(series)
    return found
