"""The sides of a comparison: where the samples come from.

A *side* is what one column of a comparison holds: an argument of ``kcross compare`` or
``kcross check`` (a stored run, a harness JSON-lines capture, a plain file of numbers or
standard input, optionally narrowed to one benchmark or one column, ``SOURCE:SELECTOR``),
or the runs, boots and profiles the report, history and the labs compare.  Reading the
arguments is decided once, here; pairing and judging sides is :mod:`kcross.judge`'s.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import fingerprint as fields
from . import numtext
from .errors import SchemaError, UserError, shown
from .schema import unit_of
from .series import Series, bench_name, benchmark_hint, matches, merge_results, series_of_results

if TYPE_CHECKING:  # the store loads SQLAlchemy: only when a run is named
    from .store import Store

JSON_SUFFIXES = (".json", ".jsonl")


# --- sides -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Side:
    """One side of a comparison: its label, its series (the benchmarks with figures), whether
    it names one benchmark, and what is known of the run it comes from."""

    label: str                                # "run 12", "base.jsonl", "latest:getppid-inline"
    series: tuple[Series, ...]
    single: bool                              # a number file, or SOURCE:BENCH picking one
    fingerprint: Mapping[str, Any] | None = None
    unit: str = ""                            # the run's unit ("": its series' own, or none)
    # "suite/name" -> why the run has no figures for it ("skipped: no rseq"): a benchmark
    # it holds but cannot be judged on (kcross check's rows say why)
    unjudged: Mapping[str, str] = field(default_factory=dict)
    when: str | None = None                   # "2026-11-23 18:14 UTC", when known
    state: str = "complete"                   # a stored run's state; "interrupted" for a cut file

    @property
    def host(self) -> str:
        return str(fields.HOSTNAME.of(self.fingerprint) or "?")

    @property
    def incomplete(self) -> str | None:
        """What a side whose run did not complete must say (:func:`not_complete`); None for
        a complete one."""
        return None if self.state == "complete" else not_complete(self.label, self.state)


def not_complete(label: str, state: str) -> str:
    """The words for a run that did not complete, in every command that shows one (check,
    compare, report, history): ``run 2 is not complete (interrupted)``."""
    return f"{label} is not complete ({state})"


def parse_numbers(text: str, name: str, column: int = 1, delimiters: str = " \t") -> list[float]:
    """A column of numbers as ministat reads it.

    Each line is split at any of ``delimiters``; a field starting with ``#`` ends the
    line (a comment); a line without field ``column`` (blank, comment, too short) is
    skipped, as ministat skips it; the field must be a whole number (``12``, ``1.5e3``),
    else the line is refused with its number.
    """
    values = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = []
        for token in _split(line, delimiters):
            if token.startswith("#"):
                break
            fields.append(token)
        if len(fields) < column:
            continue
        token = fields[column - 1]
        try:
            values.append(float(token))
        except ValueError:
            raise UserError(f"{name} line {lineno}: {token[:40]!r} is not a number") from None
    return values


def _split(line: str, delimiters: str) -> list[str]:
    tokens: list[str] = []
    current: list[str] = []
    for ch in line:
        if ch in delimiters:
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        tokens.append("".join(current))
    return tokens


def _is_json(path: Path) -> bool:
    if path.suffix in JSON_SUFFIXES:
        return True
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    return head.lstrip()[:1] == b"{"


def _stdin_is_json() -> bool:
    buffer = sys.stdin.buffer
    peek = getattr(buffer, "peek", None)
    head = peek(64) if peek is not None else b""
    return head.lstrip()[:1] == b"{"


def _select(series: Sequence[Series], selector: str, label: str) -> list[Series]:
    """The series whose suite/name or name matches ``selector`` (a name or an fnmatch glob)."""
    picked = [s for s in series if matches(selector, s.name)]
    if not picked:
        hint = benchmark_hint(selector, [s.name for s in series]) or \
            ("none of its names is close" if series else "it has none with figures")
        raise UserError(f"{label}: no benchmark matches {shown(selector)} ({hint})")
    return picked


def _exists(arg: str) -> bool:
    """Whether ``arg`` names an existing file (a name too long for one names none)."""
    try:
        return Path(arg).exists()
    except OSError:
        return False


def _split_selector(arg: str) -> tuple[str, str | None]:
    """``SOURCE[:SELECTOR]``: an existing path is a file even if it contains ':'."""
    if arg == "-" or _exists(arg):
        return arg, None
    if ":" in arg:
        source, selector = arg.rsplit(":", 1)
        if selector:
            return source, selector
    return arg, None


def load_side(arg: str, open_store: Callable[[], Store], *,
              bench: str | None = None) -> Side:
    """Read one argument of ``kcross compare`` (see ``kcross compare --help`` for the forms)."""
    source, selector = _split_selector(arg)
    if source == "-":
        if _stdin_is_json():
            return _capture_side(Path("-"), "stdin", selector, bench)
        return _numbers_side(sys.stdin.read(), "stdin", selector)
    path = Path(source)
    if _exists(source):
        if path.is_dir():
            raise UserError(f"{source} is a directory, not a file of numbers or a capture")
        if _is_json(path):
            return _capture_side(path, source, selector, bench)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise UserError(f"cannot read {source}: {why}") from None
        return _numbers_side(text, source, selector)
    return _run_side(source, open_store, selector, bench)


def _numbers_side(text: str, name: str, selector: str | None) -> Side:
    column = 1
    if selector is not None:
        found = numtext.whole(selector, 1, math.inf, signed=False)  # not '²' nor '١'
        if found is None:
            raise UserError(f"{name}:{shown(selector)}: after ':' a file of numbers takes a "
                            "column number (1 is the first)")
        column = found
    values = parse_numbers(text, name, column)
    if not values:
        raise UserError(f"{name}: no numbers" + (f" in column {column}" if column > 1 else ""))
    label = name if selector is None else f"{name}:{selector}"
    return Side(label=label, single=True,
                series=(Series(source=label, name=label, unit="", samples=tuple(values)),))


@dataclass(frozen=True)
class Records:
    """A run's records as a comparison reads them, from a capture or from the store."""

    label: str                          # "base.jsonl", "stdin", "run 12", "latest~1 (run 11)"
    run: str                            # the run itself: "run 11", or the capture's label
    fingerprint: Mapping[str, Any]
    results: Sequence[Mapping[str, Any]]
    when: str | None                    # when it started, as shown
    state: str                          # "complete", "interrupted (no end record)", ...


def read_capture(path: Path, name: str) -> Records:
    """A file (or ``-``) of ``kcross-harness run --json`` output, checked as an import is."""
    from .importer import read_stream

    stream, _ = read_stream(path)
    assert stream.fingerprint is not None
    when = fields.HOST_TIME.of(stream.fingerprint)
    return Records(label=name, run=name, fingerprint=stream.fingerprint, results=stream.results,
                   when=str(when) if when else None,
                   state="complete" if stream.complete else "interrupted (no end record)")


def read_run(ref: str, open_store: Callable[[], Store]) -> Records:
    """A stored run, by any reference ``Store.load_run`` takes."""
    try:
        stored = open_store().load_run(ref, check=False)   # validated when written
    except UserError as exc:
        raise UserError(f"{shown(ref)} is neither an existing file nor a stored run: {exc}") \
            from None
    return Records(label=f"run {stored.id}" if ref.isdigit() else f"{ref} (run {stored.id})",
                   run=f"run {stored.id}", fingerprint=stored.fingerprint, results=stored.results,
                   when=stored.started_at.strftime("%Y-%m-%d %H:%M UTC"),
                   state=stored.state or stored.status)


def read_records(ref: str, open_store: Callable[[], Store]) -> Records:
    """A capture (an existing file, or ``-``) or else a stored run: the one rule for telling
    them apart, shared by compare and check.  A file that is not a capture is refused."""
    if ref == "-" or _exists(ref):
        path = Path(ref)
        if path.is_dir():
            raise UserError(f"{ref} is a directory, not a capture")
        if ref != "-" and not _is_json(path):
            raise UserError(f"{ref} is not a capture of 'kcross-harness run --json' output")
        return read_capture(path, "stdin" if ref == "-" else ref)
    if "/" in ref or ref.endswith(JSON_SUFFIXES):  # meant as a file: say that first
        raise UserError(f"no file {shown(ref)} (and a stored run is named by an id, 'latest', "
                        "'latest~N', 'latest@HOST' or a tag)")
    return read_run(ref, open_store)


def run_side(label: str, fingerprint: Mapping[str, Any] | None,
             results: Sequence[Mapping[str, Any]], when: str | None = None,
             state: str = "complete", run: str | None = None) -> Side:
    """A whole run as a side, from its fingerprint and result records (of one or several
    processes), with the benchmarks it holds but has no figures for, and why."""
    from .stats import StatsError, summarize_record

    series = series_of_results(label, fingerprint, results, run=run or label)
    names = {s.name for s in series}
    unjudged: dict[str, str] = {}
    for record in merge_results(results):
        name = bench_name(record)
        if name in names:
            continue
        status = record.get("status")
        if status != "ok":
            reason = record.get("reason")
            unjudged[name] = f"{status}: {reason}" if reason else str(status)
        else:
            unjudged[name] = "no figures"
            try:
                summarize_record(record)
            except StatsError as exc:
                unjudged[name] = f"no figures: {exc}"
    return Side(label=label, series=tuple(series), single=False, fingerprint=fingerprint,
                unit=unit_of(fingerprint, results), unjudged=unjudged, when=when, state=state)


def load_run(ref: str, open_store: Callable[[], Store]) -> Side:
    """The whole run ``ref`` names, as ``kcross check`` reads a side: a harness ``run --json``
    file (an existing file, or ``-``), else a stored run reference (``Store.load_run``: id,
    ``latest``, ``latest~N``, a tag, ``latest@HOST``), told apart as ``kcross compare``
    tells them (:func:`read_records`)."""
    found = read_records(ref, open_store)
    return run_side(found.label, found.fingerprint, found.results, when=found.when,
                    state=found.state, run=found.run)


def _capture_side(path: Path, name: str, selector: str | None, bench: str | None) -> Side:
    return _results_side(read_capture(path, name), selector, bench)


def _run_side(ref: str, open_store: Callable[[], Store], selector: str | None,
              bench: str | None) -> Side:
    return _results_side(read_run(ref, open_store), selector, bench)


def _results_side(found: Records, selector: str | None, bench: str | None) -> Side:
    label, fingerprint = found.label, found.fingerprint
    series = series_of_results(label, fingerprint, found.results, run=found.run)
    if not series:
        raise UserError(f"{label}: no benchmark with figures (none finished ok)")
    if selector is not None:
        series = _select(series, selector, label)
        label = f"{label}:{selector}"
        series = [_relabel(s, label) for s in series]
    elif bench is not None:
        series = _select(series, bench, label)
    return Side(label=label, series=tuple(series), fingerprint=fingerprint,
                unit=unit_of(fingerprint, found.results),
                single=selector is not None and len(series) == 1, when=found.when,
                state=found.state)


def _relabel(s: Series, source: str) -> Series:
    from dataclasses import replace

    return replace(s, source=source)


def load_sides(args: Sequence[str], open_store: Callable[[], Store], *,
               bench: str | None = None) -> list[Side]:
    """Every side, refusing stdin twice and an unreadable capture with one line."""
    if sum(1 for a in args if _split_selector(a)[0] == "-") > 1:
        raise UserError("standard input (-) can be only one side")
    sides = []
    for arg in args:
        try:
            sides.append(load_side(arg, open_store, bench=bench))
        except SchemaError as exc:  # names the file and line already
            raise UserError(str(exc)) from None
    return by_kernel(sides)


def by_kernel(sides: Sequence[Side]) -> list[Side]:
    """Sides holding lab runs of several kernels, each labelled by its kernel too (``run 12
    (sid 7.2.13-1)``): one lab machine's runs differ in their kernel, its axis, which the
    label then says (kcross.fingerprint.kernel_label); a lab machine's sides of several
    kernels, its release series, in their kernels' order (the oldest kernel the first)."""
    from dataclasses import replace

    if len({fields.kernel_label(s.fingerprint) for s in sides} - {None}) < 2:
        return list(sides)
    found = []
    for side in fields.release_series(sides, lambda s: s.fingerprint):
        kernel = fields.kernel_label(side.fingerprint)
        if kernel is None:
            found.append(side)
            continue
        label = f"{side.label} ({kernel})"
        found.append(replace(side, label=label,
                             series=tuple(_relabel(s, label) for s in side.series)))
    return found


