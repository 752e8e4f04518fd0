"""Numbers as a user types them: ASCII digits, within a range, or nothing.

Python's ``int()`` and ``float()`` take more than a command line should: ``1_0`` (10),
other scripts' digits (Arabic-Indic ``١`` is 1, fullwidth ``１`` too), and ``int()``
refuses more than 4300 digits with an exception of its own.  Every option, argument
and reference that kcross reads as a number goes through :func:`whole` or
:func:`decimal`, which accept only ASCII digits (an optional sign, and for decimals a
point and an exponent) and return None for anything else, out of range included; the
caller says what it wanted in its own words.
"""

from __future__ import annotations

import math
import re

_WHOLE = re.compile(r"[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")
# Longer than any number in any of kcross's ranges (leading zeros aside): not converted.
_MAX_DIGITS = 30


def whole(text: str, lo: float, hi: float, *, signed: bool = True) -> int | None:
    """``text`` (surrounding spaces aside) as a whole number from ``lo`` to ``hi``; None if it
    is not one (``signed=False``: no ``+`` or ``-`` either)."""
    text = text.strip()
    if not (_WHOLE if signed else _UNSIGNED).fullmatch(text):
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > _MAX_DIGITS:
        return None
    value = -int(digits) if text.startswith("-") else int(digits)
    return value if lo <= value <= hi else None


def decimal(text: str, lo: float, hi: float) -> float | None:
    """``text`` (surrounding spaces aside) as a finite number from ``lo`` to ``hi``; None if it
    is not one."""
    text = text.strip()
    if not _DECIMAL.fullmatch(text) or len(text) > 2 * _MAX_DIGITS:
        return None
    value = float(text)
    return value if math.isfinite(value) and lo <= value <= hi else None
