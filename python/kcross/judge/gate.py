"""``kcross check``: the regression gate, a run against a baseline, benchmark by benchmark.

The two sides are compared as every comparison is (:func:`kcross.judge.comparison.compare`:
exact counts by value; timings of several processes with the machine's run-to-run noise
when the store knows it; one-process timings by their samples; Holm across the
benchmarks), and each pair is gated at the tolerance by :func:`kcross.judge.verdict.gate`:

- exact counts fail when higher by more than the tolerance;
- timings that see every level between the two runs fail when shown higher AND the
  low end of the ratio's interval lies above 1 + tolerance: the data show, at the
  interval's confidence, a slowdown larger than the tolerance.  The point ratio alone
  is not used: a gate that fails on noise teaches people to ignore it;
- two separate runs whose run-to-run noise is not known: the test cannot see that
  variation, so the gate goes by the tolerance alone (the interval's low end above
  1 + tolerance); the output says so.

A higher figure not shown beyond the tolerance is reported ("+83% slower, not shown
beyond +5%"), never called within tolerance.  Lower is better in every unit.  A baseline
benchmark the current run lacks (or cannot be judged on) fails the check only under the
``fail`` missing policy.  What is shown is kcross.views.check's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UserError
from ..fingerprint import HASH_SHOWN, identity
from ..series import Series
from ..sides import Side
from ..stats import ALPHA
from .categories import MISSING_POLICIES, SUMMARY_ORDER, Category, counted
from .comparison import Comparison, NoiseLookup, compare
from .pairing import NothingToCompare
from .verdict import SEEN_RUNS, Judgement, gate


@dataclass(frozen=True)
class CheckRow:
    """One benchmark of the check: its category at the tolerance and why."""

    name: str
    category: Category                  # the gate's: REGRESSION ... NEW
    base: Series | None
    current: Series | None
    judgement: Judgement | None = None  # when the benchmark is on both sides
    note: str | None = None             # why it cannot be judged, or what to weigh

    @property
    def fails(self) -> bool:
        return self.category is Category.REGRESSION


@dataclass(frozen=True)
class Outcome:
    """The check of ``current`` against ``base``."""

    base: Side
    current: Side
    unit: str
    rows: list[CheckRow]
    max_regression: float               # fraction: 0.05 for 5%
    alpha: float
    missing: str                        # "warn" or "fail"
    notes: list[str] = field(default_factory=list)

    @property
    def judgements(self) -> list[Judgement]:
        return [r.judgement for r in self.rows if r.judgement is not None]

    def count(self, category: Category) -> int:
        return sum(row.category is category for row in self.rows)

    @property
    def failed(self) -> bool:
        """Any regression; with ``missing == "fail"`` also a baseline benchmark not judged."""
        if any(row.fails for row in self.rows):
            return True
        return self.missing == "fail" and any(
            row.category in (Category.MISSING, Category.UNJUDGED) for row in self.rows)

    @property
    def blind_to_runs(self) -> int:
        """Rows judged between separate runs whose run-to-run noise is unknown."""
        return sum(1 for j in self.judgements if SEEN_RUNS in j.misses)

    def summary(self) -> str:
        """The one-line result: what failed, or that nothing did."""
        tolerance = f"+{self.max_regression * 100:g}%"
        judged = len(self.judgements)
        counts = [counted(c, self.count(c), self.unit) for c in SUMMARY_ORDER if self.count(c)]
        tail = f" ({', '.join(counts)}; {judged} compared)" if counts else ""
        if not self.failed:
            return f"PASS: no benchmark shown beyond {tolerance}{tail}"
        why = []
        if self.count(Category.REGRESSION):
            why.append(f"{self.count(Category.REGRESSION)} benchmark(s) beyond {tolerance}")
        unjudged = self.count(Category.MISSING) + self.count(Category.UNJUDGED)
        if self.missing == "fail" and unjudged:
            why.append(f"{unjudged} baseline benchmark(s) not judged (--missing fail)")
        return f"FAIL: {'; '.join(why)}{tail}"


def check(base: Side, current: Side, *, max_regression: float, missing: str = "warn",
          alpha: float = ALPHA, noise: NoiseLookup | None = None) -> Outcome:
    """Judge every benchmark of ``base`` and ``current``; :class:`UserError` when nothing can be."""
    if missing not in MISSING_POLICIES:
        raise UserError(f"--missing must be one of {', '.join(MISSING_POLICIES)}, not {missing!r}")
    try:
        comparison = compare([base, current], noise=noise, alpha=alpha, refuse_values=False)
    except NothingToCompare:
        raise UserError(f"{base.label} and {current.label} have no benchmark with figures in "
                        "common: nothing to check") from None
    rows = []
    for row in comparison.every:
        b, c = row.series
        j = row.judgements[1]
        if j is not None:
            rows.append(CheckRow(row.name, gate(j, max_regression), b, c, j, j.error or j.note))
        elif c is None:
            why = current.unjudged.get(row.name)
            rows.append(CheckRow(row.name, Category.MISSING, b, None,
                                 note=f"{current.label}: {why}" if why else
                                 f"not in {current.label}"))
        else:
            why = base.unjudged.get(row.name)
            rows.append(CheckRow(row.name, Category.NEW, None, c,
                                 note=f"{base.label}: {why}" if why else f"not in {base.label}"))
    notes = [n for n in [_machines_note(comparison)] if n]
    notes += [f"{s.incomplete}: the benchmarks it did not reach are "
              f"{'missing' if s is current else 'new'}" for s in (base, current)
              if s.incomplete]
    return Outcome(base=base, current=current, unit=comparison.unit, rows=rows,
                   max_regression=max_regression, alpha=alpha, missing=missing, notes=notes)


def _machines_note(comparison: Comparison) -> str | None:
    """A note when the two sides were measured on different machines or configurations,
    naming each (host and machine hash) and the fingerprint fields that differ."""
    base, current = comparison.sides
    if not comparison.differences or base.fingerprint is None or current.fingerprint is None:
        return None
    return (f"measured on different machines or configurations ({base.host} "
            f"{identity(base.fingerprint)[:HASH_SHOWN]}, {current.host} "
            f"{identity(current.fingerprint)[:HASH_SHOWN]}); differing: "
            f"{', '.join(comparison.differences)}")
