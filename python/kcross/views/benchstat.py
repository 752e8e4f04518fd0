"""``kcross compare --format benchstat``: benchstat's table layout (golang.org/x/perf
cmd/benchstat, v2) with kcross's verdicts (kcross.judge).  Its figures are written as
benchstat writes them (``± 2%``, ``+10.00%``, ``p=0.000``), not in kcross's vocabulary:
the point of the format is that it reads as benchstat's, and test_compare.py holds it to
the real one.  Its own text table too, not kcross.views.table's model: benchstat's layout
spans header cells over groups of columns, which the model (a header per column) has not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..judge.categories import Category
from ..judge.comparison import Cell, Comparison
from ..judge.verdict import EXACT
from .text import mark

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


def benchstat_text(comparison: Comparison, *, ascii_box: bool = False) -> str:
    """The comparison in benchstat's layout: the sources and unit boxed by '│', each row's
    center ± its CI's relative half-width, the delta (or '~') with p and n, the geomean,
    footnotes for what could not be computed.  The figures and verdicts are kcross's (p is
    Holm-adjusted; exact counts have no p, their delta is the exact change); only the
    layout is benchstat's.  ``ascii_box``: the box drawn with '|' (a pipe, a log), as every
    other table is there."""
    seconds = comparison.unit == "ns/op"
    to_unit = 1e-9 if seconds else 1.0
    unit = "sec/op" if seconds else (comparison.unit or "value")
    k = len(comparison.sides)
    notes: list[str] = []

    def footnote(*messages: str | None) -> str:
        marks = []
        for m in messages:
            if m:
                if m not in notes:
                    notes.append(m)
                marks.append(mark(notes.index(m) + 1))
        return " ".join(marks)

    def start(i: int) -> int:
        return 1 if i == 0 else 4 + (i - 1) * 6

    t = _TextTable()
    t.new_row()
    for i, side in enumerate(comparison.sides):
        t.at(start(i)).cell(side.label, span=start(i + 1) - start(i), align="^", margin=" │ ")
    t.at(start(k + 1)).cell("", margin=" │")
    t.new_row()
    for i in range(k):
        t.at(start(i)).cell(unit, span=3, align="^", margin=" │ ")
        if i > 0:
            t.cell("vs base", span=3, margin="  ")
        t.shrink.update(range(start(i) + 1, t.col))
    t.at(start(k + 1)).cell("", margin=" │")
    for row in comparison.rows:
        t.new_row()
        t.cell(row.name)
        scale = _scaler([c.median * to_unit for c in row.cells if c is not None])
        for i, c in enumerate(row.cells):
            if c is None:
                continue
            t.at(start(i)).cell(_scaled(c.median * to_unit, scale), align=">")
            t.cell(_pct_range(c), align=">", margin=" ± ")
            t.cell(footnote(c.ci_error))
            if i > 0:
                j = row.judgements[i]
                base = row.cells[0]
                n = _n_text(len(base.series.samples) if base else 0, len(c.series.samples))
                if j is None or j.error is not None:
                    t.cell("?", align=">").cell(f"({n})")
                    t.cell(footnote(j.error if j else None))
                elif j.method == EXACT:   # the timer's share is no change: ~ (its note says)
                    delta = "identical" if j.category is Category.IDENTICAL else "~" \
                        if not j.category.changed else \
                        (_delta(j.ratio) if j.ratio is not None else "?")
                    t.cell(delta, align=">").cell(f"(exact {n})")
                    t.cell(footnote(j.note))
                else:
                    assert j.ratio is not None and j.p_adjusted is not None
                    delta = "~" if not j.category.changed else (
                        "0.00%" if j.ratio == 1.0 else _delta(j.ratio))
                    p = f"p={j.p_adjusted:.3f} " if j.p_adjusted != 0 else ""
                    t.cell(delta, align=">").cell(f"({p}{n})")
                    t.cell(footnote(j.note))
    if len(comparison.rows) > 1:
        t.new_row()
        t.cell("geomean")
        for i in range(k):
            g = comparison.geomean_medians[i] if comparison.geomean_medians else None
            r = comparison.geomeans[i] if i < len(comparison.geomeans) else None
            if g is not None:
                t.at(start(i)).cell(_scaled(g * to_unit, _scaler([g * to_unit])), align=">")
            if i > 0:
                t.at(start(i) + 3)
                if r is not None:
                    t.cell(_delta(r), align=">")
                else:
                    t.cell("?")
            t.at(start(i + 1) - 1).cell(footnote(comparison.geomean_error))
    text = t.text()
    if ascii_box:
        text = text.replace("│", "|")
    for i, note in enumerate(notes, start=1):
        text += f"{mark(i)} {note}\n"
    return text


def _delta(ratio: float) -> str:
    """A change as benchstat writes it: ``+3.77%``."""
    return f"{(ratio - 1) * 100:+.2f}%"


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
