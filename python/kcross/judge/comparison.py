"""A comparison of sides: the one result object every comparing command shows.

Built once (:func:`compare`): the sides paired (kcross.judge.pairing: benchmark by
benchmark, or one benchmark per side; missing rows listed; mixed units refused), every
pair judged together (Holm across the whole table, kcross.judge.verdict; exact data by
value), each side's median with its interval, the geomean of each side against the base,
the benchmarks missing from a side, and the notes a reader must weigh (the empty loop
subtracted on one side only, the fingerprints that differ).  :func:`compare_together`
judges several comparisons as one family (a trend's changes, an experiment's changes).
``kcross compare`` and ``check``, the HTML report, history, the labs' tables, profile
differences and ``kcross reproduce`` read the result; none of them pairs or judges anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .. import stats
from ..errors import UserError
from ..series import Series
from ..sides import Side
from ..stats import MedianCI, StatsError
from .categories import Category
from .machine import differences
from .pairing import PairedRow, pair
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
class ComparedRow(PairedRow):
    """One benchmark of a comparison: its series on each side (None: missing there) and
    each later side's judgement against the base (None for the base and where missing)."""

    judgements: list[Judgement | None]

    @cached_property
    def cells(self) -> list[Cell | None]:
        """Each side's figure (computed when a view asks: history and the labs never do)."""
        return [None if s is None else cell(s) for s in self.series]


@dataclass
class Comparison:
    sides: list[Side]
    unit: str
    rows: list[ComparedRow]             # the table: benchmarks on the base side and another
    every: list[ComparedRow]            # every benchmark with figures on a side, in order
    missing: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def judgements(self) -> list[Judgement]:
        return [j for row in self.rows for j in row.judgements if j is not None]

    def count(self, category: Category) -> int:
        return sum(j.category is category for j in self.judgements)

    @cached_property
    def notes(self) -> list[str]:
        """Matters to weigh: a side whose run did not complete, the empty loop subtracted on
        one side only."""
        partial = [f"{s.incomplete}: the benchmarks it did not reach are missing from its "
                   "column" for s in self.sides if s.incomplete]
        return partial + [note for row in self.rows
                          for note in overhead_notes(row.name, row.series)]

    @cached_property
    def differences(self) -> list[str]:
        """The fingerprint fields that differ between the sides."""
        return differences([s.fingerprint for s in self.sides])

    @cached_property
    def geomeans(self) -> list[float | None]:
        """Each side's geometric mean of its ratios to the base (None for the base)."""
        return [None, *(_geomean([row.judgements[i] for row in self.rows])
                        for i in range(1, len(self.sides)))]

    @cached_property
    def _geomean_figures(self) -> tuple[list[float | None], str | None]:
        """Each side's geometric mean of the medians of the benchmarks on every side, or
        why there is none."""
        complete = [row.cells for row in self.rows if all(c is not None for c in row.cells)]
        if not complete:
            return [], "no benchmark is on every side"
        try:
            return [stats.geomean([cells[i].median for cells in complete])  # type: ignore[union-attr]
                    for i in range(len(self.sides))], None
        except StatsError as exc:
            return [], str(exc)

    @property
    def geomean_medians(self) -> list[float | None]:
        return self._geomean_figures[0]

    @property
    def geomean_error(self) -> str | None:
        return self._geomean_figures[1]


def compare(sides: Sequence[Side], *, noise: NoiseLookup | None = None,
            alpha: float = stats.ALPHA, refuse_values: bool = True) -> Comparison:
    """Pair the sides, judge every later side against the first, together (Holm across
    the table).

    ``refuse_values``: a value no verdict can take (not finite; a plain number below 0) is
    refused with one line before any figure (a user's numbers), else left to the verdict,
    which calls its pair unjudged and says why (figures kcross made itself)."""
    return compare_together([sides], noise=noise, alpha=alpha, refuse_values=refuse_values)[0]


def compare_together(comparisons: Sequence[Sequence[Side]], *,
                     noise: NoiseLookup | None = None, alpha: float = stats.ALPHA,
                     refuse_values: bool = True) -> list[Comparison]:
    """Several comparisons judged as one family: Holm across every pair of all of them
    (the changes of a trend, an experiment's changes), each paired as :func:`compare`
    pairs its sides."""
    pairings = [pair(sides) for sides in comparisons]
    if refuse_values:   # what no verdict can take: one line, before any figure
        for sides in comparisons:
            for side in sides:
                for series in side.series:
                    try:
                        check_values(series)
                    except StatsError as exc:
                        raise UserError(str(exc)) from None
    found: list[Comparison] = []
    pairs: list[Pair] = []
    where: list[tuple[ComparedRow, int]] = []
    for sides, pairing in zip(comparisons, pairings, strict=True):
        every = []
        for prow in pairing.every:
            row = ComparedRow(prow.name, prow.series, [None] * len(sides))
            base = prow.series[0]
            for i, s in enumerate(prow.series[1:], start=1):
                if s is not None and base is not None:
                    pairs.append(Pair(prow.name, base, s,
                                      noise(prow.name, base, s) if noise else None))
                    where.append((row, i))
            every.append(row)
        found.append(Comparison(sides=list(sides), unit=pairing.unit,
                                rows=[row for row in every if row.compared], every=every,
                                missing=pairing.missing))
    for (row, i), j in zip(where, judge(pairs, alpha=alpha), strict=True):
        row.judgements[i] = j
    return found


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
    from .noise import Config, History, config_of, separation

    compared = list(series)
    runs = {s.run for s in compared if s.run}
    history = History(store, never=frozenset(runs))
    # a side given as a file may be a stored run exported or imported: its start tells
    starts = {s.started for s in compared if s.started is not None}
    names = list(dict.fromkeys(s.name for s in compared))
    cache: dict[tuple[Config, float | None], Mapping[str, RunNoise]] = {}

    def lookup(name: str, base: Series, new: Series) -> RunNoise | None:
        apart = separation(base, new)
        for series in (base, new):
            like = config_of(series)
            if like is None:
                continue
            key = (like, apart)
            if key not in cache:
                cache[key] = history.noise(like, names, exclude=runs, apart=apart,
                                           exclude_started=starts)
            found = cache[key].get(name)
            if found is not None:
                return found
        return None

    return lookup
