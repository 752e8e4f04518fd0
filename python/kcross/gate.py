"""``kcross check``: the regression gate, a run against a baseline, benchmark by benchmark.

Every benchmark present on both sides is judged by kcross.judge (exact counts by
value; timings of several processes with the machine's run-to-run noise when the store
knows it; one-process timings by their samples), all together (Holm across the
benchmarks), and gated at the tolerance by kcross.judge.verdict.gate:

- exact counts fail when higher by more than the tolerance;
- timings that see every level between the two runs fail when shown higher AND the
  low end of the ratio's interval lies above 1 + tolerance: the data show, at the
  interval's confidence, a slowdown larger than the tolerance.  The point ratio alone
  is not used: a gate that fails on noise teaches people to ignore it;
- two separate runs whose run-to-run noise is not known: the test cannot see that
  variation, so the gate goes by the tolerance alone (the interval's low end above
  1 + tolerance); the output says so.

A higher figure not shown beyond the tolerance is reported ("+83% slower, not shown
beyond +5%"), never called within tolerance.  Lower is better in every unit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .judge.categories import MISSING_POLICIES, Category, counted
from .judge.verdict import Judgement, Pair, RunNoise, gate, judge
from .schema import dig, unit_of
from .series import Series, bench_name, merge_results, series_of_results
from .stats import ALPHA, StatsError, summarize_record

if TYPE_CHECKING:  # the store loads SQLAlchemy: only when a run reference is given
    from .store import Store

@dataclass(frozen=True)
class Side:
    """One side of a check: a stored run or a harness JSON-lines file."""

    label: str                          # "run 12", "base.jsonl"
    fingerprint: Mapping[str, Any] | None
    unit: str
    series: dict[str, Series]           # "suite/name" -> the ok results with figures
    unjudged: dict[str, str]            # "suite/name" -> why it has no figures ("skipped: ...")
    when: str | None = None             # "2026-11-23 18:14 UTC", when known
    state: str = "complete"             # a stored run's state; "interrupted" for a cut file
    run: str | None = None              # the run itself ("run 12"), for the noise history

    @property
    def host(self) -> str:
        return str(dig(self.fingerprint, "host", "hostname") or "?")


def side_of(label: str, fingerprint: Mapping[str, Any] | None,
            results: Sequence[Mapping[str, Any]], when: str | None = None,
            state: str = "complete", run: str | None = None) -> Side:
    """A side from a run's fingerprint and result records (of one or several processes)."""
    series = {s.name: s for s in series_of_results(label, fingerprint, results,
                                                   run=run or label)}
    unjudged: dict[str, str] = {}
    for record in merge_results(results):
        name = bench_name(record)
        if name in series:
            continue
        status = record.get("status")
        if status != "ok":
            reason = record.get("reason")
            unjudged[name] = f"{status}: {reason}" if reason else str(status)
        else:
            unjudged[name] = "no figures"
            try:
                summarize_record(record)
            except StatsError as exc:
                unjudged[name] = f"no figures: {exc}"
    return Side(label=label, fingerprint=fingerprint, unit=unit_of(fingerprint, results),
                series=series, unjudged=unjudged, when=when, state=state, run=run or label)


def load_side(ref: str, open_store: Callable[[], Store]) -> Side:
    """The side ``ref`` names: a harness ``run --json`` file (an existing file, or ``-``),
    else a stored run reference (``Store.load_run``: id, ``latest``, ``latest~N``, a tag,
    ``latest@HOST``), told apart as ``kcross compare`` tells them."""
    from .sides import read_records

    found = read_records(ref, open_store)
    return side_of(found.label, found.fingerprint, found.results, when=found.when,
                   state=found.state, run=found.run)


@dataclass(frozen=True)
class Row:
    """One benchmark of the check."""

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
    rows: list[Row]
    max_regression: float               # fraction: 0.05 for 5%
    alpha: float
    missing: str                        # "warn" or "fail"
    notes: list[str] = field(default_factory=list)

    @property
    def unit(self) -> str:
        return self.base.unit

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
        from .judge.verdict import SEEN_RUNS

        return sum(1 for j in self.judgements if SEEN_RUNS in j.misses)

    def summary(self) -> str:
        """The one-line result: what failed, or that nothing did."""
        from .judge.categories import SUMMARY_ORDER

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
          alpha: float = ALPHA,
          noise: Callable[[str, Series, Series], RunNoise | None] | None = None) -> Outcome:
    """Judge every benchmark of ``base`` and ``current``; :class:`UserError` when nothing can be."""
    if missing not in MISSING_POLICIES:
        raise UserError(f"--missing must be one of {', '.join(MISSING_POLICIES)}, not {missing!r}")
    if base.unit != current.unit:
        raise UserError(f"{base.label} is in {base.unit} and {current.label} in {current.unit}: "
                        "a lab's instruction counts and wall-clock times cannot be compared")
    names = list(base.series) + [n for n in base.unjudged if n not in base.series]
    names += [n for n in (*current.series, *current.unjudged) if n not in names]
    both = [n for n in names if n in base.series and n in current.series]
    if not both:
        raise UserError(f"{base.label} and {current.label} have no benchmark with figures in "
                        "common: nothing to check")
    judged = dict(zip(both, judge([
        Pair(n, base.series[n], current.series[n],
             noise(n, base.series[n], current.series[n]) if noise else None) for n in both],
        alpha=alpha), strict=True))
    rows = []
    for name in names:
        b, c = base.series.get(name), current.series.get(name)
        if b is not None and c is not None:
            j = judged[name]
            note = j.error or j.note
            rows.append(Row(name, gate(j, max_regression), b, c, j, note))
        elif b is None and c is None:
            continue  # neither side has figures: not a benchmark this check is about
        elif c is None:
            why = current.unjudged.get(name)
            rows.append(Row(name, Category.MISSING, b, None,
                            note=f"{current.label}: {why}" if why else
                            f"not in {current.label}"))
        else:
            why = base.unjudged.get(name)
            rows.append(Row(name, Category.NEW, None, c,
                            note=f"{base.label}: {why}" if why else f"not in {base.label}"))
    notes = [n for n in [_machines_note(base, current)] if n]
    notes += [f"{s.label} is not complete ({s.state}): the benchmarks it did not reach are "
              f"{'missing' if s is current else 'new'}" for s in (base, current)
              if s.state != "complete"]
    return Outcome(base=base, current=current, rows=rows, max_regression=max_regression,
                   alpha=alpha, missing=missing, notes=notes)


def _machines_note(base: Side, current: Side) -> str | None:
    """A note when the two sides were measured on different machines or configurations,
    naming each (host and machine hash) and the fingerprint fields that differ."""
    from .judge.machine import differences, identity

    if base.fingerprint is None or current.fingerprint is None:
        return None
    a, b = identity(base.fingerprint), identity(current.fingerprint)
    if a == b:
        return None
    fields = ", ".join(differences([base.fingerprint, current.fingerprint]))
    return (f"measured on different machines or configurations ({base.host} {a[:8]}, "
            f"{current.host} {b[:8]}); differing: {fields}")
