"""What the text views share: footnote marks (¹ ² ³ ...) and plain ASCII for logs."""

from __future__ import annotations

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def mark(number: int) -> str:
    return str(number).translate(_SUPERSCRIPTS)


_ASCII = str.maketrans({"±": "+/-", "−": "-", "–": "-", "…": "..."})


def ascii_text(text: str) -> str:
    """Plain ASCII for a CI log or a patch mail: the few signs the figures use, spelled."""
    return text.translate(_ASCII)
