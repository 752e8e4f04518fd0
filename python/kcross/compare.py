"""``kcross compare``: where the samples come from, how sides pair up, and the table's figures.

A *side* is one argument of ``kcross compare``: a stored run, a harness
JSON-lines capture, a plain file of numbers or standard input, optionally
narrowed to one benchmark or one column (``SOURCE:SELECTOR``).  The sides are
paired benchmark by benchmark (suite/name); a benchmark missing from a side is
listed, never dropped in silence.  The figures follow the verdict rule of
:mod:`kcross.stats` (Mann-Whitney U, Holm across the whole table, the ratio of
medians with its interval, a geomean row); ``--format ministat`` gives
ministat's own numbers instead (:func:`kcross.stats.vitals`,
:func:`kcross.stats.student_t`).  The renderings are at the end of this module.
"""

from __future__ import annotations

import fnmatch
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import numtext
from .errors import SchemaError, UserError, shown
from .schema import UNIT_NS, dig
from .series import Series, series_of_results
from .stats import MedianCI, StatsError, Verdict

if TYPE_CHECKING:  # the store loads SQLAlchemy: only when a run is named
    from .store import Store

JSON_SUFFIXES = (".json", ".jsonl")


# --- sides -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Side:
    """One argument: its label, the series it gave, and whether it names one benchmark."""

    label: str
    series: tuple[Series, ...]
    single: bool                              # a number file, or SOURCE:BENCH picking one
    fingerprint: Mapping[str, Any] | None = None


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
    picked = [s for s in series
              if fnmatch.fnmatchcase(s.name, selector)
              or fnmatch.fnmatchcase(s.name.split("/", 1)[-1], selector)]
    if not picked:
        names = ", ".join(s.name for s in series[:6]) + (", ..." if len(series) > 6 else "")
        raise UserError(f"{label}: no benchmark matches {shown(selector)} (it has "
                        f"{names or 'none'})")
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
    fingerprint: Mapping[str, Any]
    results: Sequence[Mapping[str, Any]]
    when: str | None                    # when it started, as shown
    state: str                          # "complete", "interrupted (no end record)", ...


def read_capture(path: Path, name: str) -> Records:
    """A file (or ``-``) of ``kcross-harness run --json`` output, checked as an import is."""
    from .importer import read_stream

    stream, _ = read_stream(path)
    assert stream.fingerprint is not None
    when = dig(stream.fingerprint, "host", "time")
    return Records(label=name, fingerprint=stream.fingerprint, results=stream.results,
                   when=str(when) if when else None,
                   state="complete" if stream.complete else "interrupted (no end record)")


def read_run(ref: str, open_store: Callable[[], Store]) -> Records:
    """A stored run, by any reference ``Store.load_run`` takes."""
    try:
        stored = open_store().load_run(ref)
    except UserError as exc:
        raise UserError(f"{shown(ref)} is neither an existing file nor a stored run: {exc}") \
            from None
    return Records(label=f"run {stored.id}" if ref.isdigit() else f"{ref} (run {stored.id})",
                   fingerprint=stored.fingerprint, results=stored.results,
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


def _capture_side(path: Path, name: str, selector: str | None, bench: str | None) -> Side:
    found = read_capture(path, name)
    return _results_side(name, found.fingerprint, found.results, selector, bench)


def _run_side(ref: str, open_store: Callable[[], Store], selector: str | None,
              bench: str | None) -> Side:
    found = read_run(ref, open_store)
    return _results_side(found.label, found.fingerprint, found.results, selector, bench)


def _results_side(label: str, fingerprint: Mapping[str, Any],
                  results: Sequence[Mapping[str, Any]], selector: str | None,
                  bench: str | None) -> Side:
    series = series_of_results(label, fingerprint, results)
    if not series:
        raise UserError(f"{label}: no benchmark with figures (none finished ok)")
    if selector is not None:
        series = _select(series, selector, label)
        label = f"{label}:{selector}"
        series = [_relabel(s, label) for s in series]
    elif bench is not None:
        series = _select(series, bench, label)
    return Side(label=label, series=tuple(series), fingerprint=fingerprint,
                single=selector is not None and len(series) == 1)


def _relabel(s: Series, source: str) -> Series:
    return Series(source=source, name=s.name, unit=s.unit, samples=s.samples, record=s.record,
                  fingerprint=s.fingerprint)


# --- pairing -----------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the table: a benchmark and its series on each side (None: missing there)."""

    name: str
    series: list[Series | None]


@dataclass
class Pairing:
    rows: list[Row]
    unit: str
    missing: list[tuple[str, list[str]]] = field(default_factory=list)  # name, sides lacking it


def pair(sides: Sequence[Side]) -> Pairing:
    """Match the sides benchmark by benchmark; one benchmark per side is compared as it is."""
    if all(s.single for s in sides):
        names = [s.series[0].name for s in sides]
        name = names[0] if len(set(names)) == 1 else " vs ".join(dict.fromkeys(names))
        rows = [Row(name, [s.series[0] for s in sides])]
    else:
        single = [s.label for s in sides if s.single]
        if single:
            raise UserError(f"{single[0]} is one benchmark but another side is a whole run: "
                            "name one benchmark on every side (RUN:BENCH), or use --bench")
        order: list[str] = []
        by_side: list[dict[str, Series]] = []
        for side in sides:
            found = {}
            for s in side.series:
                found[s.name] = s
                if s.name not in order:
                    order.append(s.name)
            by_side.append(found)
        rows = [Row(n, [found.get(n) for found in by_side]) for n in order]
    pairing = Pairing(rows=[], unit=_common_unit(sides))
    for row in rows:
        lacking = [side.label for side, s in zip(sides, row.series, strict=True) if s is None]
        if lacking:
            pairing.missing.append((row.name, lacking))
        if row.series[0] is not None and len(lacking) < len(sides) - 1:
            pairing.rows.append(row)
    if not pairing.rows:
        raise UserError("no benchmark is on the base side and another side: nothing to compare"
                        + (f" ({_missing_text(pairing.missing)})" if pairing.missing else ""))
    return pairing


def _missing_text(missing: Sequence[tuple[str, list[str]]]) -> str:
    return "; ".join(f"{name} not in {', '.join(lacking)}" for name, lacking in missing[:5]) \
        + ("; ..." if len(missing) > 5 else "")


def _common_unit(sides: Sequence[Side]) -> str:
    """The unit of every side; plain numbers (no unit) go with any unit, two units never."""
    units: dict[str, str] = {}
    for side in sides:
        for s in side.series:
            if s.unit:
                units.setdefault(s.unit, side.label)
    if len(units) > 1:
        (u1, l1), (u2, l2) = list(units.items())[:2]
        raise UserError(f"different units: {l1} is in {u1}, {l2} in {u2}; kcross never "
                        "compares time with instruction counts")
    return next(iter(units), "")


# --- the figures -------------------------------------------------------------------------

@dataclass
class Cell:
    """One side of one row: its median with the median's CI (or why there is none)."""

    series: Series
    ci: MedianCI | None
    ci_error: str | None
    verdict: Verdict | None = None   # against the base (not for the base itself)
    error: str | None = None         # why there is no verdict

    @property
    def median(self) -> float:
        from .stats import median

        return median(self.series.samples)


@dataclass
class Table:
    sides: list[Side]
    unit: str
    rows: list[tuple[str, list[Cell | None]]]
    geomean: list[float | None]            # per side, over rows present on every side
    geomean_ratio: list[float | None]      # per side (None for the base)
    geomean_error: str | None
    missing: list[tuple[str, list[str]]]
    notes: list[str]                       # overhead decisions that differ, per row


def build_table(sides: Sequence[Side], *, alpha: float = 0.05,
                confidence: float = 0.95) -> Table:
    """Every verdict of the table at once: Holm-Bonferroni across all its comparisons."""
    from . import stats

    pairing = pair(sides)
    for side in sides:
        for series in side.series:
            _check_values(series)
    cells: list[list[Cell | None]] = []
    pairs: list[tuple[Sequence[float], Sequence[float]]] = []
    where: list[tuple[int, int]] = []
    for r, row in enumerate(pairing.rows):
        line: list[Cell | None] = []
        for i, s in enumerate(row.series):
            if s is None:
                line.append(None)
                continue
            try:
                ci: MedianCI | None = stats.median_ci(s.samples, confidence)
                why = None
            except StatsError as exc:
                ci, why = None, str(exc)
            line.append(Cell(series=s, ci=ci, ci_error=why))
            base = row.series[0]
            if i > 0 and base is not None:
                pairs.append((base.samples, s.samples))
                where.append((r, i))
        cells.append(line)
    for (r, i), verdict in zip(where, stats.compare_many(pairs, alpha=alpha,
                                                         confidence=confidence), strict=True):
        cell = cells[r][i]
        assert cell is not None
        if isinstance(verdict, StatsError):
            cell.error = str(verdict)
        else:
            cell.verdict = verdict
    notes = []
    for row, line in zip(pairing.rows, cells, strict=True):
        notes += _overhead_notes(row.name, [c.series if c else None for c in line])
    table = Table(sides=list(sides), unit=pairing.unit,
                  rows=[(row.name, line) for row, line in zip(pairing.rows, cells, strict=True)],
                  geomean=[None] * len(sides), geomean_ratio=[None] * len(sides),
                  geomean_error=None, missing=pairing.missing, notes=notes)
    if len(table.rows) > 1:
        _geomean(table)
    return table


def _check_values(s: Series) -> None:
    """Refuse what the verdict cannot take, before any figure: a plain number that is not
    finite or is negative (a harness capture's samples are checked by the schema)."""
    import math

    for i, x in enumerate(s.samples, start=1):
        if not math.isfinite(x):
            raise UserError(f"{s.source}: value {i} is {x} (not a finite number)")
        if x < 0:
            raise UserError(f"{s.source}: value {i} is negative ({x:g}); the verdict takes "
                            "times or counts (--format ministat takes any numbers)")


def _geomean(table: Table) -> None:
    from . import stats

    complete = [line for _, line in table.rows if all(c is not None for c in line)]
    if not complete:
        table.geomean_error = "no benchmark is on every side"
        return
    try:
        means = [stats.geomean([line[i].median for line in complete])  # type: ignore[union-attr]
                 for i in range(len(table.sides))]
    except StatsError as exc:
        table.geomean_error = str(exc)
        return
    table.geomean = list(means)
    table.geomean_ratio = [None] + [m / means[0] for m in means[1:]]


def _overhead_notes(name: str, series: Sequence[Series | None]) -> list[str]:
    """Say when the sides' overhead decisions differ: their medians then measure different things."""
    decided = [(s.source, s.overhead_subtracted) for s in series
               if s is not None and s.overhead_subtracted is not None]
    if len({d for _, d in decided}) < 2:
        return []
    parts = [f"{'subtracted' if d else 'not subtracted'} in {src}" for src, d in decided]
    return [f"{name}: the empty loop's overhead was {', '.join(parts)}; those medians are "
            "not of the same thing (see 'kcross show' for why)"]


# --- fingerprints ------------------------------------------------------------------------

# The fields that make two runs' figures incomparable, in the order they are named.
FINGERPRINT_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hostname", ("host", "hostname")),
    ("arch", ("arch",)),
    ("CPU model", ("cpu", "model")),
    ("microcode", ("cpu", "microcode")),
    ("kernel release", ("kernel", "release")),
    ("kernel command line", ("kernel", "cmdline")),
    ("hypervisor", ("virtualization", "hypervisor_flag")),
    ("hypervisor type", ("virtualization", "hypervisor_type")),
    ("syscall mechanism", ("syscall", "mechanism")),
    ("timer", ("timer", "source")),
    ("frequency governor", ("power", "governor")),
    ("SMT", ("smt", "active")),
    ("isolated CPUs", ("isolation", "isolcpus")),
    ("nohz_full", ("isolation", "nohz_full")),
    ("lab", ("lab",)),
)


def fingerprint_differences(sides: Sequence[Side]) -> list[str]:
    """Names of the fingerprint fields that differ between the sides that have one."""
    prints = [s.fingerprint for s in sides if s.fingerprint is not None]
    if len(prints) < 2:
        return []
    differ = []
    for label, path in FINGERPRINT_FIELDS:
        if len({_canon(dig(fp, *path)) for fp in prints}) > 1:
            differ.append(label)
    vulns = sorted({k for fp in prints for k in (fp.get("vulnerabilities") or {})})
    changed = [k for k in vulns
               if len({_canon(dig(fp, "vulnerabilities", k)) for fp in prints}) > 1]
    if changed:
        differ.append("mitigations (" + ", ".join(changed) + ")")
    forced = sorted({k for fp in prints for k in (fp.get("forced") or {})})
    differ += [f"forced {k}" for k in forced
               if len({_canon(dig(fp, "forced", k)) for fp in prints}) > 1]
    return differ


def _canon(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)


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
    return sides


# --- renderings --------------------------------------------------------------------------

def format_value(value: float, unit: str) -> str:
    """A median in its unit (times and counts as ``kcross show`` prints them); plain numbers
    with six significant digits."""
    from .render import format_value as in_unit

    if unit:
        return in_unit(value, unit)
    return f"{value:.6g}"


def _median_text(cell: Cell, unit: str, notes: list[str]) -> str:
    """The median [CI]; where there is no CI, a footnote mark (its reason under the table)."""
    text = format_value(cell.median, unit)
    if cell.ci is None:
        why = f"no CI: {cell.ci_error}"
        if why not in notes:
            notes.append(why)
        return f"{text} {_mark(notes.index(why) + 1)}"
    return f"{text} [{format_value(cell.ci.low, unit)}, {format_value(cell.ci.high, unit)}]"


def _pct(ratio: float) -> str:
    return f"{(ratio - 1.0) * 100:+.2f}%"


def _vs_base(cell: Cell) -> tuple[str, str]:
    """The ratio with its interval, and benchstat's verdict: ``+12.30% (p=0.002 n=11+11)``
    or ``~ (p=0.446 n=10+10)``; p is the Holm-adjusted one."""
    v = cell.verdict
    if v is None:
        return "", cell.error or ""
    ratio = f"{v.ratio:.3f} [{v.ratio_low:.3f}, {v.ratio_high:.3f}]"
    stat = f"(p={v.p_adjusted:.3f} n={v.n_a}+{v.n_b})"
    verdict = f"{_pct(v.ratio)} {stat}" if v.significant else f"~ {stat}"
    if v.note:
        verdict += f" ({v.note})"
    return ratio, verdict


def default_table(table: Table) -> Any:
    """The default rendering: a rich table, the base first, each later side against it,
    then the footnotes."""
    from rich.console import Group
    from rich.table import Table as RichTable
    from rich.text import Text

    notes: list[str] = []

    unit = f" ({table.unit})" if table.unit else ""
    tests = sum(1 for _, line in table.rows for c in line[1:] if c is not None and c.verdict)
    legend = (f"median [95% CI]{unit}; ratio of medians new/base [95% CI]; vs base: "
              f"Mann-Whitney U, p Holm-adjusted over the {tests} test(s) of this table; "
              "~ no difference shown")
    out = RichTable()
    out.add_column("benchmark")
    out.add_column(f"{table.sides[0].label} (base)", justify="right")
    for side in table.sides[1:]:
        out.add_column(side.label, justify="right")
        out.add_column("ratio", justify="right")
        out.add_column("vs base")
    for name, line in table.rows:
        cells: list[str] = [name]
        base = line[0]
        assert base is not None
        cells.append(_median_text(base, table.unit, notes))
        for cell in line[1:]:
            if cell is None:
                cells += ["(missing)", "", ""]
                continue
            cells.append(_median_text(cell, table.unit, notes))
            cells += list(_vs_base(cell))
        out.add_row(*(Text(c) for c in cells))
    if len(table.rows) > 1:
        cells = ["geomean"]
        if table.geomean_error is not None:
            cells += [table.geomean_error] + ["", "", ""] * (len(table.sides) - 1)
        else:
            for i, (g, r) in enumerate(zip(table.geomean, table.geomean_ratio, strict=True)):
                assert g is not None
                cells.append(format_value(g, table.unit))
                if i > 0:
                    assert r is not None
                    cells += [f"{r:.3f}", _pct(r)]
        out.add_row(*(Text(c) for c in cells), style="bold")
    lines = [Text(f"{_mark(i)} {note}") for i, note in enumerate(notes, start=1)]
    lines.append(Text(legend))
    if separate_runs(table):
        lines.append(Text(SEPARATE_RUNS_CAVEAT))
    return Group(out, *lines)


# Measured with `kcross aa` (docs/result-format.md, "Verdicts"): on a VM, two runs of one
# benchmark differ by more than either run's own noise, which this test cannot see.
SEPARATE_RUNS_CAVEAT = (
    "separate runs: the test sees each run's own noise, not run-to-run variation (on a VM "
    "it called 54-62% of A/A run pairs different); 'kcross aa BENCH' measures this machine, "
    "'kcross ab' decides a change in interleaved rounds")


def separate_runs(table: Table) -> bool:
    """Timings from two different runs (processes): the caveat applies.  Not to instruction
    counts (exact under icount) nor to two benchmarks of one run or plain numbers."""
    if table.unit != UNIT_NS:
        return False
    import json

    runs = {json.dumps(s.fingerprint, sort_keys=True) for side in table.sides
            for s in side.series if s.record is not None}
    return len(runs) > 1


def _mark(number: int) -> str:
    return str(number).translate(_SUPERSCRIPTS)


def missing_lines(table: Table) -> list[str]:
    return [f"{name}: not in {', '.join(lacking)}" for name, lacking in table.missing]


MINISTAT_SYMBOLS = "x+*%#@O"


def ministat_text(sides: Sequence[Side], level: float = 95.0) -> tuple[str, list[str]]:
    """What ``ministat -A`` prints for each benchmark's samples (the plot left out), and
    the benchmarks that could not be shown (their reason).

    One block per benchmark; a block is preceded by the benchmark's name when the sides
    are whole runs.  Raises :class:`UserError` when no block could be printed.
    """
    from . import stats

    if len(sides) > len(MINISTAT_SYMBOLS):
        raise UserError(f"ministat compares at most {len(MINISTAT_SYMBOLS)} data sets, "
                        f"got {len(sides)}")
    pairing = pair(sides)
    blocks, errors = [], []
    for row in pairing.rows:
        present = [(i, s) for i, s in enumerate(row.series) if s is not None]
        try:
            vit = [(i, s, stats.vitals(s.samples)) for i, s in present]
        except StatsError as exc:
            errors.append(f"{row.name}: {exc}")
            continue
        lines = [] if all(s.single for s in sides) else [f"== {row.name}"]
        for i, s, _ in vit:
            lines.append(f"{MINISTAT_SYMBOLS[i]} {s.source}")
        lines.append("    N           Min           Max        Median           Avg        "
                     "Stddev")
        base = vit[0][2]
        for k, (i, _, v) in enumerate(vit):
            lines.append(f"{MINISTAT_SYMBOLS[i]} {v.n:3d} {v.min:13.8g} {v.max:13.8g} "
                         f"{v.median:13.8g} {v.avg:13.8g} {v.stddev:13.8g}")
            if k > 0:
                lines += _relative(stats.student_t(base, v, level))
        blocks.append("\n".join(lines))
    if not blocks:
        raise UserError(errors[0] if len(errors) == 1 else "; ".join(errors))
    return "\n\n".join(blocks) + "\n", errors


def _relative(t: Any) -> list[str]:
    if not t.significant:
        return [f"No difference proven at {t.level:.1f}% confidence"]
    return [f"Difference at {t.level:.1f}% confidence",
            f"\t{t.difference:g} +/- {t.error:g}",
            f"\t{t.percent:g}% +/- {t.percent_error:g}%",
            f"\t(Student's t, pooled s = {t.pooled_s:g})"]


# benchstat (golang.org/x/perf/cmd/benchstat, v2) -----------------------------------------
#
# The layout: a label column, then per side a group of three columns (center, "± range",
# footnotes) and, for every side after the base, three more (delta, "(p=... n=...)",
# footnotes).  Two header rows: the sources centred over their groups, then the unit over
# each center group and "vs base" over each delta group, boxed by "│".  Column widths grow
# to fit their cells; a header wider than its group widens the group's columns, the
# widest first, the interior columns of a group never (they stay as narrow as their
# contents).  Numbers in a row share one SI prefix and precision, chosen so that the
# smallest value has four significant digits.

_SI_PREFIXES = ("T", "G", "M", "k", "", "m", "µ", "n")


def _scaler(values: Sequence[float]) -> tuple[int, float, str]:
    """(decimals, factor, prefix) for a row: four significant digits on its smallest value."""
    nonzero = [abs(v) for v in values if v != 0]
    if not nonzero:
        return 3, 1.0, ""
    low = min(nonzero)
    exp = 12
    for prefix in _SI_PREFIXES:
        for decimals, threshold in ((1, f"99.995e{exp}"), (2, f"9.9995e{exp}"),
                                    (3, f".99995e{exp}")):
            if low >= float(threshold):
                return decimals, 10.0 ** exp, prefix
        exp -= 3
    exp += 3  # the smallest prefix, more decimals
    value = low / 10.0 ** exp
    for i, e in enumerate(range(-1, -9, -1)):
        if value >= float(f"9.9995e{e}") or i == 7:
            return i + 3, 10.0 ** exp, "n"
    raise AssertionError("unreachable")


def _scaled(value: float, scale: tuple[int, float, str]) -> str:
    decimals, factor, prefix = scale
    return f"{value / factor:.{decimals}f}{prefix}"


@dataclass
class _TextCell:
    row: int
    col: int
    span: int
    value: str
    margin: str
    align: str  # "<", "^", ">"


class _TextTable:
    """Column layout for a fixed-width font (benchstat's rules, see above)."""

    def __init__(self) -> None:
        self.cells: list[_TextCell] = []
        self.cols = 0
        self.shrink: set[int] = set()
        self.row = -1
        self.col = 0

    def new_row(self) -> None:
        self.row += 1
        self.col = 0

    def at(self, col: int) -> _TextTable:
        self.col = col
        return self

    def cell(self, value: str, *, span: int = 1, align: str = "<",
             margin: str | None = None) -> _TextTable:
        if margin is None:
            margin = "" if self.col == 0 or not value else " "
        self.cells.append(_TextCell(self.row, self.col, span, value, margin, align))
        self.col += span
        self.cols = max(self.cols, self.col)
        return self

    def text(self) -> str:
        lmargin = [0] * self.cols
        for c in self.cells:
            lmargin[c.col] = max(lmargin[c.col], len(c.margin))
        widths = [0] * self.cols
        for c in sorted(self.cells, key=lambda c: c.span):  # stable: rows in order
            need = len(c.value) + lmargin[c.col]
            cols = range(c.col, c.col + c.span)
            if c.span == 1:
                widths[c.col] = max(widths[c.col], need)
                continue
            if sum(widths[i] for i in cols) >= need:
                continue
            grow = [i for i in cols if i not in self.shrink]
            need -= sum(widths[i] for i in cols if i in self.shrink)
            grow.sort(key=lambda i: -widths[i])
            left = len(grow)
            for i in grow:
                widths[i] = max(widths[i], -(-need // left))
                need -= widths[i]
                left -= 1
        offsets = [0]
        for w in widths:
            offsets.append(offsets[-1] + w)
        lines: list[str] = []
        for c in sorted(self.cells, key=lambda c: (c.row, c.col)):
            if not c.value.strip() and not c.margin.strip():
                continue
            while len(lines) <= c.row:
                lines.append("")
            line = lines[c.row]
            line += " " * (offsets[c.col] - len(line)) + c.margin.rjust(lmargin[c.col])
            room = offsets[c.col + c.span] - offsets[c.col] - lmargin[c.col]
            if c.align == ">":
                line += c.value.rjust(room)
            elif c.align == "^":
                line += " " * ((room - len(c.value)) // 2) + c.value
            else:
                line += c.value
            lines[c.row] = line
        return "".join(line + "\n" for line in lines)


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def benchstat_text(table: Table) -> str:
    """The table in benchstat's layout: the sources and unit boxed by '│', each row's
    center ± its CI's relative half-width, the delta (or '~') with p and n, the geomean,
    footnotes for what could not be computed.  The figures are kcross's (its verdict
    rule: p is Holm-adjusted); only the layout is benchstat's."""
    seconds = table.unit == "ns/op"
    to_unit = 1e-9 if seconds else 1.0
    unit = "sec/op" if seconds else (table.unit or "value")
    k = len(table.sides)
    notes: list[str] = []

    def footnote(*messages: str | None) -> str:
        marks = []
        for m in messages:
            if m:
                if m not in notes:
                    notes.append(m)
                marks.append(_mark(notes.index(m) + 1))
        return " ".join(marks)

    def start(i: int) -> int:
        return 1 if i == 0 else 4 + (i - 1) * 6

    t = _TextTable()
    t.new_row()
    for i, side in enumerate(table.sides):
        t.at(start(i)).cell(side.label, span=start(i + 1) - start(i), align="^", margin=" │ ")
    t.at(start(k + 1)).cell("", margin=" │")
    t.new_row()
    for i in range(k):
        t.at(start(i)).cell(unit, span=3, align="^", margin=" │ ")
        if i > 0:
            t.cell("vs base", span=3, margin="  ")
        t.shrink.update(range(start(i) + 1, t.col))
    t.at(start(k + 1)).cell("", margin=" │")
    for name, line in table.rows:
        t.new_row()
        t.cell(name)
        scale = _scaler([c.median * to_unit for c in line if c is not None])
        for i, c in enumerate(line):
            if c is None:
                continue
            t.at(start(i)).cell(_scaled(c.median * to_unit, scale), align=">")
            t.cell(_pct_range(c), align=">", margin=" ± ")
            t.cell(footnote(c.ci_error))
            if i > 0:
                v = c.verdict
                if v is None:
                    n = len(c.series.samples)
                    base_n = len(line[0].series.samples) if line[0] else 0
                    t.cell("?", align=">").cell(f"({_n_text(base_n, n)})")
                    t.cell(footnote(c.error))
                else:
                    delta = "~" if not v.significant else (
                        "0.00%" if v.ratio == 1.0 else f"{(v.ratio - 1) * 100:+.2f}%")
                    p = f"p={v.p_adjusted:.3f} " if v.p_adjusted != 0 else ""
                    t.cell(delta, align=">").cell(f"({p}{_n_text(v.n_a, v.n_b)})")
                    t.cell(footnote(v.note))
    if len(table.rows) > 1:
        t.new_row()
        t.cell("geomean")
        for i in range(k):
            g, r = table.geomean[i], table.geomean_ratio[i]
            if g is not None:
                t.at(start(i)).cell(_scaled(g * to_unit, _scaler([g * to_unit])), align=">")
            if i > 0:
                t.at(start(i) + 3)
                if r is not None:
                    t.cell(f"{(r - 1) * 100:+.2f}%", align=">")
                else:
                    t.cell("?")
            t.at(start(i + 1) - 1).cell(footnote(table.geomean_error))
    text = t.text()
    for i, note in enumerate(notes, start=1):
        text += f"{_mark(i)} {note}\n"
    return text


def _n_text(n_a: int, n_b: int) -> str:
    return f"n={n_a}" if n_a == n_b else f"n={n_a}+{n_b}"


def _pct_range(c: Cell) -> str:
    if c.ci is None:
        return "∞"
    center, low, high = c.median, c.ci.low, c.ci.high
    sign = (center > 0) - (center < 0)
    if sign != (low > 0) - (low < 0) or sign != (high > 0) - (high < 0):
        return "?"
    if center == 0:
        return "0%"
    return f"{100 * max(high / center - 1, 1 - low / center):.0f}%"
