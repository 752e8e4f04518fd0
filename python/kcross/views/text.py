"""The output vocabulary: how every figure, interval, sign and word kcross shows a person is
written, each in one way, for the terminal views, the Markdown export and the HTML report.

One rule each:

- a time (ns) has four significant digits at most and thousands separators: ``0.267``,
  ``21.96``, ``635.0``, ``5,006`` (:func:`ns`);
- an instruction count per op has one decimal and thousands separators: ``346.0``,
  ``3,895.0`` (:func:`count`); a figure in its unit: :func:`in_unit`;
- a rare count per op (a counter) keeps two significant digits, never rounded to zero:
  ``812.2``, ``3.5e-5``, ``0`` (:func:`per_op`);
- a percentage is signed with one decimal (none from 100 up), and a figure that rounds to
  zero has no sign: ``+2.5%``, ``-0.9%``, ``0.0%``, ``+4689%`` (:func:`percent`); a share of
  a whole (coverage, a rate, a spread) is unsigned: ``98.8%`` (:func:`share`);
- a ratio has three decimals: ``1.000`` (:func:`ratio`);
- a p-value is ``p=0.003``, ``p<0.001`` (:func:`p_text`; in a column headed p, the same);
- an interval (a CI, a range of values) is ``[a, b]``, and one value when its ends are
  written alike (:func:`interval`); a figure with its CI ``130.6 [129.4, 133.8]``
  (:func:`with_interval`);
- plus or minus is ``±``, an arrow ``→``, "no value" one dash ``–`` (:data:`PLUS_MINUS`,
  :data:`ARROW`, :data:`NONE`); where the output is ASCII (a CI log, a patch mail, a
  terminal that is not UTF-8) they are spelled ``+/-``, ``->``, ``-`` (:func:`ascii_text`);
- a change in words carries its direction in the word, never in a sign: ``10.0% faster``,
  ``3.0% slower``, ``2.1% more instructions`` (:func:`change_words`); a change without a
  word is a signed figure (``+124.6 instructions (+36.0%)``);
- a fingerprint's value is written by its kind (kcross.fingerprint's registry): no value as
  the dash, a flag ``yes``/``no``, a list its items, a frequency in GHz or MHz
  (:func:`shown_value`);
- a machine is named by the first hex digits of its hash (kcross.fingerprint.HASH_SHOWN),
  as ``latest@PREFIX`` takes them
  (:func:`machine_hash`);
- a text too long for its cell is cut at a word and ends in ``…`` (:func:`clip_words`);
- a count of things agrees with its noun: ``1 test``, ``6 tests`` (:func:`counted`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..fingerprint import BOOL, HASH_SHOWN, HZ, LIST, MAP
from ..schema import UNIT_INSTRUCTIONS

NONE = "–"          # no value: one dash, everywhere
PLUS_MINUS = "±"
ARROW = "→"
ELLIPSIS = "…"
OVERHEAD_MARK = "†"  # marks a median from which the empty-loop overhead was subtracted

_ASCII = str.maketrans({"±": "+/-", "−": "-", "–": "-", "—": "-", "…": "...", "→": "->",
                        "│": "|", "≥": ">=", "≤": "<=", "÷": "/"})
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def ascii_text(text: str) -> str:
    """Plain ASCII for a CI log or a patch mail: the few signs the vocabulary uses, spelled."""
    return text.translate(_ASCII)


def mark(number: int) -> str:
    """A footnote's mark: ¹ ² ³ ..."""
    return str(number).translate(_SUPERSCRIPTS)


# ---------------------------------------------------------------- figures

def ns(value: float) -> str:
    """Four significant digits at most, never scientific notation (ns/op range 0.1..1e6)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    if abs(value) >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def count(value: float) -> str:
    """An instruction count per op: one decimal (a median of an even count may be ``.5``,
    periodic kernel work a fraction), thousands separators: ``3,895.0``."""
    return f"{value:,.1f}"


def in_unit(value: float, unit: str) -> str:
    """A figure in its unit: instruction counts as :func:`count`, times (and plain numbers
    with a unit of their own) as :func:`ns`; without a unit, six significant digits."""
    if unit == UNIT_INSTRUCTIONS:
        return count(value)
    if not unit:
        return f"{value:.6g}"
    return ns(value)


def per_op(value: float) -> str:
    """A count per operation: ``812.2``, ``0``, and a rare event as ``3.5e-5`` (a context
    switch every 28,000 operations), never rounded to zero."""
    if value == 0:
        return "0"
    if abs(value) >= 0.01:
        return f"{value:.4g}"
    mantissa, _, exponent = f"{value:.2g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def plain(value: float) -> str:
    """A small figure as short as it is exact to two decimals: ``404``, ``2.5``, ``0.25``."""
    if value != value:
        return NONE
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def percent(value: float, digits: int = 1) -> str:
    """A signed percentage (``value`` in percent): one decimal (``digits``), none from 100
    up; a figure that rounds to zero has no sign."""
    places = 0 if abs(value) >= 100 else digits
    text = f"{value:+.{places}f}%"
    if float(text[:-1]) == 0:
        return text[1:]
    return text


def change_percent(ratio: float) -> str:
    """The change a ratio new/base is, as a signed percentage: 1.1 → ``+10.0%``."""
    return percent((ratio - 1.0) * 100.0)


def share(fraction: float, digits: int = 1) -> str:
    """A part of a whole (a fraction) as an unsigned percentage: ``98.8%``."""
    return f"{fraction * 100:.{digits}f}%"


def ratio(value: float) -> str:
    return f"{value:.3f}"


def p_text(p: float) -> str:
    """``p=0.003``, ``p<0.001``."""
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def interval(low: str, high: str) -> str:
    """An interval of two figures already written: ``[a, b]``; one value, ``a``, when its
    ends are written alike."""
    return low if low == high else f"[{low}, {high}]"


def with_interval(figure: str, low: str, high: str) -> str:
    """A figure and its interval: ``130.6 [129.4, 133.8]``; the figure alone when the
    interval is one value (then the figure's own)."""
    return figure if low == high else f"{figure} {interval(low, high)}"


def interval_under(text: str) -> str:
    """A figure with its interval (:func:`with_interval`) on two lines, the interval under
    the figure (a table too narrow for both on one line); other text as it is."""
    figure, sep, rest = text.partition(" [")
    return f"{figure}\n[{rest}" if sep and rest.endswith("]") else text


def plus_minus(value: str) -> str:
    return f"{PLUS_MINUS}{value}"


def arrow(a: str, b: str) -> str:
    return f"{a} {ARROW} {b}"


def machine_hash(digest: str) -> str:
    """The machine hash as shown: what ``latest@PREFIX`` takes besides a hostname."""
    return digest[:HASH_SHOWN]


def frequency(hz: float) -> str:
    """``2.5961 GHz``, ``512 MHz``: six significant digits."""
    return f"{hz / 1e9:.6g} GHz" if hz >= 1e8 else f"{hz / 1e6:.6g} MHz"


def shown_value(value: Any, kind: str | None = None) -> str:
    """A fingerprint's value for people, by its kind (kcross.fingerprint.Field.kind; a field
    it does not know by what the value is): null or empty as the dash, a flag yes/no, a
    list its items, a frequency in GHz or MHz, a map its ``name: value`` pairs."""
    if value is None or value == "":
        return NONE
    if isinstance(value, bool) and kind in (None, BOOL):
        return "yes" if value else "no"
    if isinstance(value, list) and kind in (None, LIST):
        return " ".join(str(v) for v in value) or NONE
    if kind == HZ and isinstance(value, (int, float)) and not isinstance(value, bool):
        return frequency(value)
    if isinstance(value, Mapping) and kind in (None, MAP):
        return "; ".join(f"{k}: {shown_value(v)}" for k, v in value.items()) or NONE
    return str(value)


def runs_listed(labels: Iterable[str]) -> str:
    """Stored runs' labels (``run 3``) as one phrase, ids in order and spans joined: ``runs
    2-6, 9``, ``run 4``; any other label as it is, after them."""
    labels = list(dict.fromkeys(labels))
    stored = {x: int(x[4:]) for x in labels if x.startswith("run ") and x[4:].isdigit()}
    spans: list[list[int]] = []
    for i in sorted(set(stored.values())):
        if spans and i == spans[-1][-1] + 1:
            spans[-1][-1:] = [i] if len(spans[-1]) > 1 else [spans[-1][0], i]
        else:
            spans.append([i])
    named = ", ".join("-".join(str(i) for i in span) for span in spans)
    named = f"run{'s' if len(stored) > 1 else ''} {named}" if stored else ""
    return ", ".join(x for x in (named, *(x for x in labels if x not in stored)) if x)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 test``, ``6 tests``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def change_words(ratio_value: float, higher: str, lower: str) -> str:
    """A shown change in words, its direction in the word (``higher`` or ``lower``, the
    unit's words: kcross.judge.categories): 1.1 → ``10.0% slower``, 0.9 → ``10.0% faster``."""
    pct = (ratio_value - 1.0) * 100.0
    return f"{percent(abs(pct)).lstrip('+')} {higher if pct >= 0 else lower}"


def clip_words(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary and ended with "…"
    when it is longer (a reason in a table cell is never cut mid-word; a first word longer
    than ``limit`` alone is cut, it has no boundary)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)          # text[:cut] ends a word and leaves room for "…"
    head = text[:cut].rstrip(" ,;:") if cut > 0 else ""
    return (head or text[:limit - 1]) + ELLIPSIS


def significant_digits(value: float) -> int:
    """Decimals that show a small figure with two significant digits (one for 0.05 up)."""
    if value == 0 or abs(value) >= 0.05:
        return 1
    return max(1, 1 - int(math.floor(math.log10(abs(value)))))


def signed(value: float, digits: int = 1) -> str:
    """A signed figure with thousands separators: ``+1,200.0``; one that rounds to zero has
    no sign."""
    text = f"{value:+,.{digits}f}"
    return text[1:] if float(text.replace(",", "")) == 0 else text
