"""The files kcross reads whole (``kcross import``'s captures and LAVA job logs): a path,
or ``-`` for standard input, read once into bytes, with the name messages give it."""

from __future__ import annotations

import sys
from pathlib import Path

from .errors import UserError, clipped

STDIN = "-"


def name_of(path: Path) -> str:
    """How messages name the input: ``stdin``, or the path (clipped)."""
    return "stdin" if str(path) == STDIN else clipped(str(path))


def read(path: Path, data: bytes | None = None, *, empty: str = "") -> tuple[str, bytes]:
    """The input's name and bytes (``data``: already read, e.g. standard input read once by
    the caller to tell a capture from a LAVA log); UserError (one line) if it cannot be read
    or holds nothing but white space (said so, with ``empty``: what the reader adds)."""
    name = name_of(path)
    if data is None:
        try:
            data = sys.stdin.buffer.read() if str(path) == STDIN else path.read_bytes()
        except OSError as exc:
            raise UserError(f"cannot read {name}: {exc.strerror or exc}") from None
    if not data.strip():  # said as it is, not blamed on the format
        raise UserError(f"{name}: {'empty' if str(path) == STDIN else 'empty file'}"
                        + (f" ({empty})" if empty else ""))
    return name, data
