"""One table model for every table kcross shows, written in each dialect from the same
rows (as hyperfine's markup exporter writes one table for every markup):

- :func:`terminal`: a rich table for the terminal (colours, a box; rich draws the box in
  ASCII where the console is not UTF-8: ``kcross ... | cat``);
- :func:`print_plain`: plain text for a CI log or a patch mail: an ASCII box, no colour,
  every sign of the vocabulary spelled in ASCII (kcross.views.text.ascii_text), its title
  and notes never wrapped;
- :func:`markdown`: a GitHub-flavoured Markdown table, every cell escaped by one rule
  (:func:`markdown_cell`).

A :class:`Table` is a title, columns (a header, an alignment, whether its cells may wrap),
rows of cells (a string, or a :class:`Styled` string) and notes (one line each, shown under
the table).  The title and the notes are lines of their own, wrapped at the console's width
(not the table's), never ending in a space.
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
    """The table for a terminal: its title, the rich table, its notes."""
    from rich.console import Group

    parts: list[Any] = []
    if t.title:
        parts.append(Lines([t.title], style="bold" if t.frame == BARE and not t.header else ""))
    parts.append(rich_table(t))
    if t.notes:
        parts.append(Lines(t.notes))
    return Group(*parts)


def print_plain(console: Console, t: Table) -> None:
    """The table for a CI log or a mail: ASCII only, no colour, its title and notes lines
    as they are (never wrapped nor cut: grep-able)."""
    from .lines import say

    if t.title:
        say(console, ascii_text(t.title))
    console.print(rich_table(t, ascii_only=True))
    for note in t.notes:
        say(console, ascii_text(note))


def show(console: Console, t: Table, *, ascii_only: bool = False) -> None:
    """Print ``t`` for a terminal, or (``ascii_only``) for a CI log."""
    if ascii_only:
        print_plain(console, t)
    else:
        console.print(terminal(t))


def rich_table(t: Table, *, ascii_only: bool = False) -> Any:
    """The rich Table of ``t`` alone (no title, no notes)."""
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
    for c in t.columns:
        out.add_column(ascii_text(c.header) if ascii_only else c.header,
                       justify=c.align,  # type: ignore[arg-type]
                       no_wrap=not c.wrap, overflow="fold" if c.fold else "ellipsis",
                       style="" if ascii_only else c.style)
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


__all__ = ["BARE", "BOX", "LEFT", "RIGHT", "RULES", "Cell", "Column", "Lines", "Row",
           "Styled", "Table", "markdown", "markdown_cell", "print_plain", "rich_table", "show",
           "terminal", "wrapped"]
