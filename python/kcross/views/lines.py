"""Plain output lines: a line as it is (no markup, not wrapped: grep-able in a log) and
JSON lines (one record a line on standard output).  What every command and job prints
that is not a table."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def print_json(records: Sequence[dict[str, Any]]) -> None:
    """Each record as one JSON line on standard output."""
    for record in records:
        sys.stdout.write(json.dumps(record) + "\n")


def say(console: Console, line: str, style: str = "") -> None:
    """One line as it is: no markup, no highlighting, not wrapped (a round's progress, a
    path, a URL): grep-able in a log."""
    from rich.text import Text

    console.print(Text(line, style=style), soft_wrap=True, highlight=False)
