"""A comparison of sides: the one result object that compare, check and the report show.

Built once (:func:`compare`): the sides paired, every pair judged together (Holm across
the whole table, kcross.judge.verdict), each side's median with its interval, the
geomean of each side against the base, the benchmarks missing from a side, and the
notes a reader must weigh (the empty loop subtracted on one side only, the
fingerprints that differ).  The terminal table, the exports and the HTML report read it;
none of them judges anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import stats
from ..errors import UserError
from ..series import Series
from ..sides import Side
from ..stats import MedianCI, StatsError
from .categories import Category
from .machine import differences, identity
from .pairing import pair
from .verdict import Judgement, Pair, RunNoise, check_values, judge

# Given (benchmark name, base series, new series): the run-to-run noise the pair may use.
NoiseLookup = Callable[[str, Series, Series], RunNoise | None]


@dataclass
class Cell:
    """One side of one row: its median with the median's CI (or why there is none)."""

    series: Series
    median: float
    ci: MedianCI | None
    ci_error: str | None


def cell(series: Series) -> Cell:
    """A series' figure as every view shows it: the rule's median, and its interval (over
    the processes for a run of several, else of the samples)."""
    summary = series.figures
    if summary is not None:
        try:
            return Cell(series, summary.median, summary.ci, None)
        except StatsError as exc:
            return Cell(series, summary.median, None, str(exc))
    median = stats.median(series.samples)
    try:
        return Cell(series, median, stats.median_ci(series.samples), None)
    except StatsError as exc:
        return Cell(series, median, None, str(exc))


@dataclass
class Row:
    """One benchmark: its cell on each side (None: missing there) and each later side's
    judgement against the base (None for the base and where missing)."""

    name: str
    cells: list[Cell | None]
    judgements: list[Judgement | None]


@dataclass
class Comparison:
    sides: list[Side]
    unit: str
    rows: list[Row]
    missing: list[tuple[str, list[str]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)          # per-row matters to weigh
    differences: list[str] = field(default_factory=list)    # fingerprint fields that differ
    geomeans: list[float | None] = field(default_factory=list)   # each side / base
    geomean_medians: list[float | None] = field(default_factory=list)   # per side
    geomean_error: str | None = None        # why there are no geomean medians

    @property
    def judgements(self) -> list[Judgement]:
        return [j for row in self.rows for j in row.judgements if j is not None]

    def count(self, category: Category) -> int:
        return sum(j.category is category for j in self.judgements)


def compare(sides: Sequence[Side], *, noise: NoiseLookup | None = None,
            alpha: float = stats.ALPHA) -> Comparison:
    """Pair the sides, judge every later side against the first, together."""
    pairing = pair(sides)
    for side in sides:   # what no verdict can take: one line, before any figure
        for series in side.series:
            try:
                check_values(series)
            except StatsError as exc:
                raise UserError(str(exc)) from None
    rows: list[Row] = []
    pairs: list[Pair] = []
    where: list[tuple[int, int]] = []
    for r, prow in enumerate(pairing.rows):
        cells = [None if s is None else cell(s) for s in prow.series]
        base = prow.series[0]
        for i, s in enumerate(prow.series[1:], start=1):
            if s is not None and base is not None:
                pairs.append(Pair(prow.name, base, s,
                                  noise(prow.name, base, s) if noise else None))
                where.append((r, i))
        rows.append(Row(prow.name, cells, [None] * len(sides)))
    for (r, i), j in zip(where, judge(pairs, alpha=alpha), strict=True):
        rows[r].judgements[i] = j
    comparison = Comparison(sides=list(sides), unit=pairing.unit, rows=rows,
                            missing=pairing.missing,
                            differences=differences([s.fingerprint for s in sides]))
    for row in rows:
        comparison.notes += overhead_notes(row.name, [c.series if c else None for c in row.cells])
    comparison.geomeans = [None, *(_geomean([row.judgements[i] for row in rows])
                                   for i in range(1, len(sides)))]
    _geomean_medians(comparison)
    return comparison


def _geomean_medians(comparison: Comparison) -> None:
    """Each side's geometric mean of the medians of the benchmarks on every side."""
    complete = [row.cells for row in comparison.rows if all(c is not None for c in row.cells)]
    if not complete:
        comparison.geomean_error = "no benchmark is on every side"
        return
    try:
        comparison.geomean_medians = [
            stats.geomean([cells[i].median for cells in complete])  # type: ignore[union-attr]
            for i in range(len(comparison.sides))]
    except StatsError as exc:
        comparison.geomean_error = str(exc)


def _geomean(judgements: Sequence[Judgement | None]) -> float | None:
    from .verdict import geomean

    return geomean([j for j in judgements if j is not None])


def overhead_notes(name: str, series: Sequence[Series | None]) -> list[str]:
    """Say when the sides' overhead decisions differ: their medians then measure different things."""
    decided = [(s.source, s.overhead_subtracted) for s in series
               if s is not None and s.overhead_subtracted is not None]
    if len({d for _, d in decided}) < 2:
        return []
    parts = [f"{'subtracted' if d else 'not subtracted'} in {src}" for src, d in decided]
    return [f"{name}: the empty loop's overhead was {', '.join(parts)}; those medians are "
            "not of the same thing, so the verdict compares both sides' raw samples (see "
            "'kcross show' for why)"]


def history_noise(store: Any, series: Iterable[Series]) -> NoiseLookup | None:
    """The noise lookup for the series compared, from a store: each benchmark's run-to-run
    noise on the base side's machine (else the new side's), from the machine's other
    stored runs (the runs compared left out)."""
    if store is None:
        return None
    from .noise import History, separation

    history = History(store)
    compared = list(series)
    runs = {s.run for s in compared if s.run}
    # a side given as a file may be a stored run exported or imported: its start tells
    starts = {s.started for s in compared if s.started is not None}
    names = list(dict.fromkeys(s.name for s in compared))
    cache: dict[tuple[str, float | None], Mapping[str, RunNoise]] = {}

    def lookup(name: str, base: Series, new: Series) -> RunNoise | None:
        apart = separation(base, new)
        for series in (base, new):
            if series.fingerprint is None:
                continue
            key = (identity(series.fingerprint), apart)
            if key not in cache:
                cache[key] = history.noise(series.fingerprint, names, exclude=runs,
                                           apart=apart, exclude_started=starts)
            found = cache[key].get(name)
            if found is not None:
                return found
        return None

    return lookup
