"""One table model for every table kcross shows, written in each dialect from the same
rows (as hyperfine's markup exporter writes one table for every markup):

- :func:`terminal`: a rich table for the terminal (colours, a box; rich draws the box in
  ASCII where the console is not UTF-8: ``kcross ... | cat``);
- :func:`print_plain`: plain text for a CI log or a patch mail: an ASCII box, no colour,
  every sign of the vocabulary spelled in ASCII (kcross.views.text.ascii_text), its title
  and notes never wrapped (but at its width, for a table that ``fits``);
- :func:`markdown`: a GitHub-flavoured Markdown table, every cell escaped by one rule
  (:func:`markdown_cell`).

A :class:`Table` is a title, columns (a header, an alignment, whether its cells may wrap),
rows of cells (a string, or a :class:`Styled` string) and notes (one line each, shown under
the table).  The title and the notes are lines of their own, wrapped at the console's width
(not the table's), never ending in a space.

How a table meets its width, the one rule for every table (:class:`Drawn`, :func:`fitted`):
no line ends in a space (no padding after the last cell), and a table that says it ``fits``
(:data:`FITS`: the run table, runs, compare, check, readiness) takes no more than that,
however wide the console.  A table wider than its width wraps its text columns at spaces
(never narrower than their longest word) or writes a figure's interval under the figure (a
``split`` column), whichever takes fewer lines.  A figure, a name, a word is never cut: a
table that cannot be written so within its limit takes the few columns more a whole word
needs, where the console has them, and folds its text, then its names, where it has not.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .text import ascii_text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

LEFT, RIGHT = "left", "right"
# Columns: the run table, the tables of runs, comparisons, checks and the machine's readiness
# are never wider (Table.fits), piped or in a terminal; a narrower console narrows them.
FITS = 120
# The frames: a box (rich's heavy head, the default), rules (no vertical lines, a rule of
# dashes under the header: the run table, which must fit 120 columns), or none.
BOX, RULES, BARE = "box", "rules", "bare"


@dataclass(frozen=True)
class Column:
    header: str
    align: str = LEFT
    wrap: bool = True        # False: a column of figures, never wrapped
    fold: bool = False       # a word too long for the column: folded onto more lines (else
                             # cut, ending in "…")
    style: str = ""          # the whole column's style (a key of a list of values)
    split: bool = False      # cells of a figure and its interval (text.with_interval): the
                             # interval under the figure when the table does not fit otherwise


@dataclass(frozen=True)
class Styled:
    """A cell's text with a style: a rich style in the terminal (``"yellow"``, ``"bold"``),
    nothing in plain text; ``strong``: bold in Markdown too, ``code``: a code span there."""

    text: str
    style: str = ""
    strong: bool = False
    code: bool = False


Cell = str | Styled


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    style: str = ""          # the whole row's style (a geomean row: bold)


@dataclass
class Table:
    columns: Sequence[Column]
    title: str = ""
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    frame: str = BOX
    header: bool = True
    gap: int = 1             # spaces between columns where the frame has no lines
    fits: int | None = None  # the most columns it takes (FITS), however wide the console

    def add(self, *cells: Cell, style: str = "") -> None:
        assert len(cells) == len(self.columns), (len(cells), [c.header for c in self.columns])
        self.rows.append(Row(tuple(cells), style))


def text_of(cell: Cell) -> str:
    return cell.text if isinstance(cell, Styled) else cell


# ---------------------------------------------------------------- lines

class Lines:
    """Lines of text as they are, each wrapped at the console's width at a space (its
    indentation kept on the lines it wraps onto), none ending in a space."""

    def __init__(self, lines: Iterable[str], style: str = "") -> None:
        self.lines = list(lines)
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        width = max(options.max_width, 20)
        for line in self.lines:
            for part in wrapped(line, width):
                yield Text(part, style=self.style, no_wrap=True, overflow="ignore")


def wrapped(line: str, width: int) -> list[str]:
    """``line`` in lines of at most ``width`` characters, broken at spaces only (a word
    longer than the width stands alone), each continuation indented as the line is."""
    if len(line) <= width:
        return [line.rstrip()]
    indent = line[:len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False, replace_whitespace=False) or [""]


# ---------------------------------------------------------------- dialects

def terminal(t: Table) -> RenderableType:
    """The table for a terminal: its title, the rich table, its notes (all within the
    table's width, when it ``fits``)."""
    from rich.console import Group
    from rich.constrain import Constrain

    parts: list[Any] = []
    if t.title:
        parts.append(Constrain(Lines([t.title], style="bold" if t.frame == BARE and not t.header
                                     else ""), t.fits))
    parts.append(Drawn(t))
    if t.notes:
        parts.append(Constrain(Lines(t.notes), t.fits))
    return Group(*parts)


def print_plain(console: Console, t: Table) -> None:
    """The table for a CI log or a mail: ASCII only, no colour, its title and notes lines
    as they are (never wrapped nor cut: grep-able), or wrapped at its width when it
    ``fits``."""
    from rich.constrain import Constrain

    from .lines import say

    def lines(texts: Sequence[str]) -> None:
        if t.fits is not None:
            console.print(Constrain(Lines([ascii_text(x) for x in texts]), t.fits))
            return
        for text in texts:
            say(console, ascii_text(text))

    if t.title:
        lines([t.title])
    console.print(Drawn(t, ascii_only=True))
    lines(t.notes)


def show(console: Console, t: Table, *, ascii_only: bool = False) -> None:
    """Print ``t`` for a terminal, or (``ascii_only``) for a CI log."""
    if ascii_only:
        print_plain(console, t)
    else:
        console.print(terminal(t))


class Drawn:
    """The table's rows and columns (no title, no notes) drawn within its width: the
    console's, or its ``fits`` when narrower (``natural``: its own width, however wide:
    ``kcross show --wide``).  What does not fit is wrapped, never cut (the module's rule),
    and no line ends in a space."""

    def __init__(self, t: Table, *, ascii_only: bool = False, natural: bool = False) -> None:
        self.t, self.ascii_only, self.natural = t, ascii_only, natural

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        width = options.max_width if self.t.fits is None else min(options.max_width,
                                                                  self.t.fits)
        if self.natural:
            from rich.measure import Measurement

            drawn = rich_table(self.t, ascii_only=self.ascii_only)
            width = max(width, Measurement.get(console, options.update_width(1 << 16),
                                               drawn).maximum)
        else:
            drawn, width = fitted(self.t, console, width, ascii_only=self.ascii_only,
                                  room=options.max_width)
        for line in console.render_lines(drawn, options.update(width=width), pad=False):
            yield from _trimmed(line)
            yield Segment.line()


def _trimmed(line: list[Any]) -> list[Any]:
    """A rendered line without the spaces that end it (a cell's padding)."""
    from rich.segment import Segment

    found = list(line)
    while found and not found[-1].control:
        text = found[-1].text.rstrip(" ")
        if text:
            found[-1] = Segment(text, found[-1].style)
            break
        found.pop()
    return found


def _cell_texts(t: Table, ascii_only: bool) -> list[list[str]]:
    """Each row's cells as they are written (in ASCII where asked)."""
    return [[ascii_text(text_of(c)) if ascii_only else text_of(c) for c in row.cells]
            for row in t.rows]


def _column_texts(t: Table, ascii_only: bool) -> list[list[str]]:
    """Each column's header (empty when the table shows none) and cells, as written."""
    rows = _cell_texts(t, ascii_only)
    return [[(ascii_text(c.header) if ascii_only else c.header) if t.header else "",
             *(r[i] for r in rows)] for i, c in enumerate(t.columns)]


def _least(column: Column, texts: Sequence[str]) -> int:
    """How narrow a column may be without cutting or folding anything: its widest word
    where it wraps, else its widest line; its header's widest word (a header wraps at
    spaces in any column)."""
    header, cells = texts[0], texts[1:]
    return max(_word_width([header]), _word_width(cells) if column.wrap else _texts_width(cells))


def _texts_width(texts: Sequence[str]) -> int:
    """The widest line of ``texts``."""
    from rich.cells import cell_len

    return max((cell_len(line) for text in texts for line in text.split("\n")), default=0)


def _word_width(texts: Sequence[str]) -> int:
    """The widest word of ``texts``: how narrow a wrapped column may be without cutting one."""
    from rich.cells import cell_len

    return max((cell_len(word) for text in texts for word in text.split()), default=0)


def _overhead(drawn: Any, console: Console, natural: int) -> int:
    """What a rich table adds to its columns' contents (edges, rules, padding): its width
    at leisure less its columns' ``natural`` widths in total."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(1 << 16), drawn).maximum \
        - natural


def split_interval(t: Table) -> Table:
    """``t`` with each ``split`` column's cells written on two lines, the figure above its
    interval (``130.6`` over ``[129.4, 133.8]``)."""
    from dataclasses import replace

    from .text import interval_under

    def cell(c: Cell) -> Cell:
        return replace(c, text=interval_under(c.text)) if isinstance(c, Styled) else \
            interval_under(c)

    split = [c.split for c in t.columns]
    rows = [Row(tuple(cell(c) if s else c for c, s in zip(r.cells, split, strict=True)),
                r.style) for r in t.rows]
    return replace(t, rows=rows)


def fitted(t: Table, console: Console, width: int, *, ascii_only: bool = False,
           room: int | None = None) -> tuple[Any, int]:
    """The rich table of ``t`` within ``width`` columns, and the width to draw it at: its
    text columns wrapped at spaces as far as their longest word, or its figures' intervals
    under them, whichever takes fewer lines; a table that cannot be written so within
    ``width`` is written as narrow as it can be so, where ``room`` (the console's width,
    when ``width`` is the table's own limit) holds it, else folded into ``width``: nothing
    is cut."""
    candidates = (t, split_interval(t)) if any(c.split for c in t.columns) else (t,)
    # each layout that fits unfolded: (its rows' lines, its order, the table, its widths)
    layouts: list[tuple[list[int], int, Table, list[int] | None]] = []
    narrowest = []    # the width each candidate takes with nothing folded
    for candidate in candidates:
        texts, natural, least, space = _measured(candidate, console, width, ascii_only)
        narrowest.append(width - space + sum(least))
        if sum(natural) <= space:
            layouts.append((_lines(texts, natural), len(layouts), candidate, None))
            break
        if sum(least) <= space:
            widths = _narrowed(natural, least, space)
            layouts.append((_lines(texts, widths), len(layouts), candidate, widths))
    if layouts:   # the one of fewest lines: wrapped text, or (as many) intervals under
        lines, _, candidate, chosen = min(layouts, key=lambda x: (sum(x[0]), -x[1]))
        return _apart(rich_table(candidate, ascii_only=ascii_only, widths=chosen), lines), width
    if room is not None and width < min(narrowest) <= room:
        # wider than the table's limit by what a whole word needs, not than the console
        return fitted(t, console, min(narrowest), ascii_only=ascii_only)
    # The last resort: the columns of text folded as far as FOLDED columns each, then the
    # names (left-aligned) too; the figures (right-aligned) kept whole where the room allows.
    last = candidates[-1]
    texts, natural, least, space = _measured(last, console, width, ascii_only)
    folding = list(natural)
    for names in (False, True):
        floor = [n if c.align == RIGHT or not (c.wrap or names) else min(n, FOLDED)
                 for c, n in zip(last.columns, least, strict=True)]
        folding = _narrowed(folding, floor, space)
        if sum(folding) <= space:
            return _apart(rich_table(last, ascii_only=ascii_only, fold=True, widths=folding),
                          _lines(texts, folding, fold=True)), width
    return _apart(rich_table(last, ascii_only=ascii_only, fold=True), None), width


def _measured(t: Table, console: Console, width: int, ascii_only: bool
              ) -> tuple[list[list[str]], list[int], list[int], int]:
    """A table's columns' texts, their natural and least widths (:func:`_least`), and the
    room ``width`` leaves its columns."""
    texts = _column_texts(t, ascii_only)
    natural = [_texts_width(x) for x in texts]
    least = [_least(c, x) for c, x in zip(t.columns, texts, strict=True)]
    drawn = rich_table(t, ascii_only=ascii_only)
    return texts, natural, least, width - _overhead(drawn, console, sum(natural))


# A column of text or names is folded no narrower than this, when nothing else fits.
FOLDED = 12


def _apart(drawn: Any, lines: Sequence[int] | None) -> Any:
    """A table whose rows take ``lines`` lines each (None: unknown, folded): its rows apart
    (a blank line between them where the frame draws no lines, a rule where it does) when
    most take several."""
    drawn.show_lines = lines is None or 2 * sum(n > 1 for n in lines) > len(lines)
    return drawn




def _lines(texts: Sequence[Sequence[str]], widths: Sequence[int], fold: bool = False
           ) -> list[int]:
    """How many lines each row of a table takes, its columns' ``texts`` (header first)
    wrapped at ``widths`` (``fold``: a word longer than its column folded)."""
    def count(line: str, width: int) -> int:
        if not fold:
            return len(wrapped(line, width))
        return len(textwrap.wrap(line, max(width, 1), break_on_hyphens=False) or [""])

    rows = zip(*(x[1:] for x in texts), strict=True)
    return [max(sum(count(line, w) for line in cell.split("\n"))
                for cell, w in zip(row, widths, strict=True)) for row in rows]


def _narrowed(widths: Sequence[int], least: Sequence[int], room: int) -> list[int]:
    """``widths`` narrowed to ``room`` in total, the widest column above its ``least``
    first (as far as ``least`` allows)."""
    found = list(widths)
    while sum(found) > room:
        narrower = [k for k in range(len(found)) if found[k] > least[k]]
        if not narrower:
            break
        found[max(narrower, key=lambda k: found[k])] -= 1
    return found


def rich_table(t: Table, *, ascii_only: bool = False, widths: Sequence[int] | None = None,
               fold: bool = False) -> Any:
    """The rich Table of ``t`` alone (no title, no notes); ``widths``: each column's
    width; ``fold``: every cell may wrap and fold (the last resort of :func:`fitted`)."""
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    frames: dict[str, dict[str, Any]] = {
        BOX: {"box": box.ASCII if ascii_only else box.HEAVY_HEAD},
        RULES: {"box": _ruled(), "show_edge": False, "pad_edge": False,
                "padding": (0, t.gap, 0, 0)},
        BARE: {"box": None, "pad_edge": False, "padding": (0, t.gap, 0, 0)},
    }
    out = RichTable(show_header=t.header, header_style="" if ascii_only else "bold",
                    **frames[t.frame])
    for i, c in enumerate(t.columns):
        header = ascii_text(c.header) if ascii_only else c.header
        if widths is not None:   # wrapped at spaces to the column's width
            header = "\n".join(part for line in header.split("\n")
                               for part in wrapped(line, widths[i]))
        out.add_column(header,
                       justify=c.align,  # type: ignore[arg-type]
                       no_wrap=not (c.wrap or fold),
                       overflow="fold" if c.fold or fold else "ellipsis",
                       style="" if ascii_only else c.style,
                       width=None if widths is None else widths[i])
    for row in t.rows:
        cells = []
        for cell in row.cells:
            text = text_of(cell)
            style = cell.style if isinstance(cell, Styled) else ""
            cells.append(Text(ascii_text(text), style="") if ascii_only else
                         Text(text, style=style))
        out.add_row(*cells, style="" if ascii_only else row.style)
    return out


def _ruled() -> Any:
    from rich import box

    # No vertical rules (columns separated by spaces), one rule of dashes under the header;
    # ASCII, so that a piped table and a terminal's look the same.
    return box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)


def markdown_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipe ends the cell, no newline the row,
    a backslash stays a backslash."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def markdown(t: Table) -> str:
    """The table as GitHub Markdown: the title a line of its own, the notes a list."""
    def cell(c: Cell) -> str:
        text = markdown_cell(text_of(c))
        if isinstance(c, Styled) and c.code and text:
            text = f"`{text}`"
        if isinstance(c, Styled) and c.strong and text:
            text = f"**{text}**"
        return text

    marks = {LEFT: ":---", RIGHT: "---:"}
    lines = []
    if t.title:
        lines += [markdown_cell(t.title), ""]
    lines += ["| " + " | ".join(markdown_cell(c.header) for c in t.columns) + " |",
              "|" + "|".join(marks[c.align] for c in t.columns) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row.cells) + " |" for row in t.rows]
    if t.notes:
        lines.append("")
        lines += [f"- {markdown_cell(n)}" for n in t.notes]
    return "\n".join(lines) + "\n"


__all__ = ["BARE", "BOX", "FITS", "LEFT", "RIGHT", "RULES", "Cell", "Column", "Drawn", "Lines",
           "Row", "Styled", "Table", "fitted", "markdown", "markdown_cell", "print_plain",
           "rich_table", "show", "split_interval", "terminal", "wrapped"]
