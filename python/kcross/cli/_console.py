"""The consoles a command writes to: stdout for results, stderr for progress and messages."""

from __future__ import annotations

import os

from rich.console import Console

from .. import numtext


class _PlainConsole(Console):
    """Standard output that is not a terminal (a file, a pipe, a mail): plain text.

    It says its encoding is ASCII, so rich draws every table's box with ASCII
    characters (``+ - |``: rich substitutes box.ASCII for any other box when the
    output is ASCII-only), and it writes no colour or style codes.  The text in
    the cells is written as it is (UTF-8).
    """

    @property
    def encoding(self) -> str:
        return "ascii"


def consoles() -> tuple[Console, Console]:
    """stdout for results, stderr for progress and messages; wide plain tables when piped."""
    out = Console()
    if not out.is_terminal:
        # The shell's COLUMNS when it is a width (rich ignores anything else too)
        width = numtext.whole(os.environ.get("COLUMNS", ""), 1, 100_000, signed=False)
        out = _PlainConsole(width=width or 200, color_system=None)
    return out, Console(stderr=True)
