"""The verdict's categories and their words, defined once for every command and view.

A category says what happened; the words depend on the unit: a higher figure is
"slower" for a time (ns/op), "more instructions" for a lab count (instructions/op)
and "higher" for plain numbers.  A table, a CI log, a pull-request comment and the
HTML report all word a row the same way (:func:`words`).
"""

from __future__ import annotations

from enum import Enum

from ..schema import UNIT_INSTRUCTIONS, UNIT_NS


class Category(Enum):
    """What a comparison of B with A found (``kcross check`` adds REGRESSION, MISSING and
    NEW: a row of a gate, not of a comparison)."""

    IDENTICAL = "identical"      # exact data, the same value (below 1e-9 relative)
    HIGHER = "higher"            # exact: a higher value; timings: shown higher (test and CI)
    LOWER = "lower"              # the same, lower
    TIMER_SHARE = "timer-share"  # exact counts, under 1 instruction per op apart: no change
    SAME = "same"                # timings: no difference shown
    UNJUDGED = "unjudged"        # on both sides but cannot be judged (the reason says why)
    REGRESSION = "regression"    # check: higher beyond the tolerance (fails the gate)
    MISSING = "missing"          # check: in the baseline, not judged in the current run
    NEW = "new"                  # check: only in the current run

    @property
    def changed(self) -> bool:
        """A difference was found (exact or shown); of instruction counts, a change of the
        path (the timer's share is none: kcross.judge.verdict.path_changed)."""
        return self in (Category.HIGHER, Category.LOWER, Category.REGRESSION)


# The timer's share in words (kcross.judge.verdict's rule of a change: exact counts that
# moved by less than one instruction per op): a row's short label, and the notes' words.
SHARE_LABEL = "timer's share"
TIMER_SHARE = f"under 1 instruction per op: the {SHARE_LABEL}"


def higher_word(unit: str) -> str:
    """What a higher figure means in ``unit``."""
    return {UNIT_NS: "slower", UNIT_INSTRUCTIONS: "more instructions"}.get(unit, "higher")


def lower_word(unit: str) -> str:
    return {UNIT_NS: "faster", UNIT_INSTRUCTIONS: "fewer instructions"}.get(unit, "lower")


def amount(unit: str) -> str:
    """What the difference of two figures counts: ``instructions``, ``ns``, or nothing."""
    return {UNIT_NS: "ns", UNIT_INSTRUCTIONS: "instructions"}.get(unit, "")


# The short label of each category in a table's verdict column, per unit.
def label(category: Category, unit: str) -> str:
    return {
        Category.IDENTICAL: "identical",
        Category.HIGHER: higher_word(unit),
        Category.LOWER: lower_word(unit),
        Category.TIMER_SHARE: SHARE_LABEL,
        Category.SAME: "~",
        Category.UNJUDGED: "not judged",
        Category.REGRESSION: "regression",
        Category.MISSING: "missing",
        Category.NEW: "new",
    }[category]


# The rule in words, for legends and help texts (kcross.judge.verdict is the rule itself).
TIMING_RULE = ("timings: p Holm-adjusted over the table's tests, a difference shown when p < "
               "0.05 and the ratio's CI excludes 1, ~ none shown")
EXACT_RULE = "exact counts: compared by value, identical below 1e-9 of the figure, never a p"
DETECTABLE_RULE = ("detectable: the smallest change the comparison shows with 80% power "
                   "(at Holm's strictest step over its tests)")
FAILS_AT_RULE = ("fails at: the smallest slowdown this check fails with 80% power (its CI "
                 "wholly above the tolerance)")

# What kcross check does with a baseline benchmark it cannot judge: list it, or fail.
MISSING_POLICIES = ("warn", "fail")

# Counted in a summary line, in this order: "2 regressions, 1 slower, 40 unchanged...".
SUMMARY_ORDER = (Category.REGRESSION, Category.HIGHER, Category.LOWER, Category.TIMER_SHARE,
                 Category.SAME, Category.IDENTICAL, Category.UNJUDGED, Category.MISSING,
                 Category.NEW)


def counted(category: Category, n: int, unit: str) -> str:
    """``3 regressions``, ``1 slower``, ``12 identical``, ``4 not judged``."""
    nouns = {Category.REGRESSION: ("regression", "regressions"),
             Category.SAME: ("without a difference shown", "without a difference shown"),
             Category.TIMER_SHARE: (f"moved by the {SHARE_LABEL}", f"moved by the {SHARE_LABEL}"),
             Category.MISSING: ("missing", "missing"), Category.NEW: ("new", "new")}
    if category in nouns:
        one, many = nouns[category]
        return f"{n} {one if n == 1 else many}"
    return f"{n} {label(category, unit)}"


# Styles of the terminal tables and the report's classes, per category.
STYLE = {Category.REGRESSION: "bold red", Category.HIGHER: "red", Category.LOWER: "green",
         Category.TIMER_SHARE: "dim", Category.UNJUDGED: "yellow", Category.MISSING: "yellow",
         Category.NEW: "cyan"}
CSS_CLASS = {Category.REGRESSION: "slower", Category.HIGHER: "slower",
             Category.LOWER: "faster", Category.TIMER_SHARE: "same", Category.SAME: "same",
             Category.IDENTICAL: "same",
             Category.UNJUDGED: "none", Category.MISSING: "none", Category.NEW: "none"}
