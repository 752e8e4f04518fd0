"""The verdict: does B differ from A?  Every command and view asks this module.

Three methods, chosen per pair from what the data are (docs/result-format.md, "Verdicts"):

- **exact** (lab instruction counts, unit instructions/op, and any two sides whose
  samples are each a constant): the figures are compared by value, never given a
  p-value: identical when they differ by less than 1e-9 of their size (below what the
  figures represent), else higher or lower by the difference; instruction counts less than
  one instruction per op apart are the timer's share, no change (:func:`path_changed`).
  Lab counts are compared in the guest clock's ticks converted with one rate
  (:func:`exact_medians`);
- **levels** (timings of several harness processes per side, ``kcross run
  --processes``): the log ratio of the sides' medians with Student's t over the
  processes' medians; between two separate runs the machine's run-to-run noise of the
  benchmark is added when it is known (kcross.judge.noise), and the verdict says when
  it is not: it then cannot see run-to-run variation;
- **samples** (one process per side: old and imported runs, plain numbers):
  Mann-Whitney U on the samples and the ratio's bootstrap interval, as kcross always
  judged them; between two separate runs it sees one process's noise only.

Timings are tested together: Holm-Bonferroni across every pair of one table, and a
difference is shown only when the adjusted p is below alpha and the ratio's interval
excludes 1 (so a verdict never contradicts the interval beside it).  Each pair also
gets its minimum detectable change: the smallest change it would show with 80% power,
so that "no difference" says how large a difference could hide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import fingerprint as fields
from .. import stats
from ..schema import UNIT_INSTRUCTIONS
from ..series import Series
from ..stats import ALPHA, CONFIDENCE, StatsError
from .categories import TIMER_SHARE, Category, label

EXACT = "exact"
LEVELS = "levels"
SAMPLES = "samples"

# Exact figures closer than this (relative) are the same figure: below what a double
# holding an instruction count per operation represents after its arithmetic.
EXACT_RELATIVE = 1e-9

# The rule of a change of exact instruction counts: an operation's own path moves by whole
# instructions on every op, so a move of less than one instruction per operation (real: the
# counts differ) is the batch's timer reads, and the periodic work around them, spread over
# its operations: the timer's share, never a change of the path.  The judge gives such a
# pair its own category (Category.TIMER_SHARE, not ``changed``), so every count of changes,
# every label and every gate reads the rule from the category (:func:`path_changed`).
PATH_STEP = 1.0            # instructions per op
SUB_INSTRUCTION = f"{TIMER_SHARE}, not the op's path"

# The levels of variation a verdict can see.
SEEN_SAMPLES, SEEN_PROCESSES, SEEN_RUNS = "samples", "processes", "runs"


@dataclass(frozen=True)
class RunNoise:
    """A machine's run-to-run noise of one benchmark: the variance of a run's log figure
    beyond what the run's own samples and processes show, with its degrees of freedom."""

    var: float
    df: float
    runs: int
    source: str            # where it comes from, for the verdict's words
    within: float | None = None   # seconds: estimated from runs this close in time
    used: tuple[str, ...] = ()      # the runs it comes from ("run 3"), when they are named
    outliers: tuple[str, ...] = ()  # the runs left out as outliers (kcross.judge.noise)

    @property
    def cv(self) -> float:
        """As a coefficient of variation of the run's figure (about sqrt(var))."""
        return math.sqrt(self.var)


@dataclass(frozen=True)
class Pair:
    """One benchmark on two sides, and what is known about its run-to-run noise."""

    name: str
    base: Series
    new: Series
    noise: RunNoise | None = None


@dataclass(frozen=True)
class Judgement:
    """The verdict on one pair: its category, the figures behind it, and what it saw."""

    name: str
    unit: str
    base: Series
    new: Series
    category: Category
    method: str = ""                    # EXACT, LEVELS, SAMPLES; "" when unjudged
    median_a: float | None = None
    median_b: float | None = None
    ratio: float | None = None          # median_b / median_a (None: a base of 0)
    ratio_low: float | None = None      # None for exact figures
    ratio_high: float | None = None
    confidence: float = CONFIDENCE
    p: float | None = None              # None for exact figures: never a p-value
    p_adjusted: float | None = None
    alpha: float = ALPHA
    detectable: float | None = None     # minimum detectable change (fraction); 0: exact
    se: float | None = None             # of the log ratio (timings)
    df: float | None = None             # its degrees of freedom
    raw: bool = False                   # judged on the raw samples (empty loop included)
    sees: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    noise: RunNoise | None = None
    processes: tuple[int, int] = (1, 1)
    note: str | None = None
    error: str | None = None

    @property
    def delta(self) -> float | None:
        if self.median_a is None or self.median_b is None:
            return None
        return self.median_b - self.median_a

    @property
    def percent(self) -> float | None:
        return None if self.ratio is None else (self.ratio - 1.0) * 100.0

    @property
    def n_a(self) -> int:
        return len(self.base.samples)

    @property
    def n_b(self) -> int:
        return len(self.new.samples)

    @property
    def separate_runs(self) -> bool:
        return separate(self.base, self.new)

    @property
    def exact(self) -> bool:
        return self.method == EXACT

    @property
    def difference(self) -> Category:
        """The category by value alone: higher or lower for a move by the timer's share
        (the counts do differ), as the comparison record keeps it; else :attr:`category`."""
        if self.category is not Category.TIMER_SHARE:
            return self.category
        assert self.median_a is not None and self.median_b is not None
        return Category.HIGHER if self.median_b > self.median_a else Category.LOWER


def below_step(unit: str, a: float, b: float) -> bool:
    """Exact counts ``a`` and ``b`` of instructions per op that differ by less than one
    instruction per op: the timer's share (the one rule: :data:`PATH_STEP`).  A difference
    within :data:`EXACT_RELATIVE` of one whole instruction is one (the arithmetic of two
    figures converted from ticks leaves a whole step some 1e-14 short)."""
    slack = EXACT_RELATIVE * max(abs(a), abs(b))
    return unit == UNIT_INSTRUCTIONS and abs(b - a) < PATH_STEP - slack


def timer_share(j: Judgement) -> bool:
    """B differs from A by less than one instruction per op: the timer's share, never a
    change of the path, and never explained."""
    return j.category is Category.TIMER_SHARE


def path_changed(j: Judgement) -> bool:
    """A change of the path: B differs from A (exact counts: by one instruction per op or
    more; timings: a difference shown)."""
    return j.category.changed


def separate(a: Series, b: Series) -> bool:
    """Two series from two different runs (processes of their own), not one run's."""
    return a.run is not None and b.run is not None and a.run != b.run


def is_exact(a: Series, b: Series) -> bool:
    """Exact data: lab instruction counts, or two sides that are each a constant (of at
    least two samples: one value shows no variation because it has none to show)."""
    if UNIT_INSTRUCTIONS in (a.unit, b.unit):
        return True
    return len(a.samples) >= 2 and len(b.samples) >= 2 and min(a.samples) == max(a.samples) \
        and min(b.samples) == max(b.samples)


def _ticks_median(s: Series) -> float | None:
    """A lab figure in the guest clock's own ticks per operation, by the statistics rule:
    exact (whole ticks over whole iterations), where the figure in ns carries the boot's
    timer calibration."""
    record = s.record
    if record is None or record.get("schema") != 2:
        return None
    ticks, overhead = record.get("ticks"), record.get("overhead")
    if not ticks or len(ticks) != len(record.get("samples") or ()) \
            or not isinstance(overhead, dict) or not overhead.get("ticks"):
        return None
    try:
        return stats.summarize(ticks, overhead["ticks"]).median
    except StatsError:
        return None


def _timer_hz(s: Series) -> float | None:
    hz = fields.TIMER_HZ.of(s.fingerprint)
    return float(hz) if isinstance(hz, (int, float)) and hz > 0 else None


def exact_medians(a: Series, b: Series) -> tuple[float, float]:
    """The two figures an exact comparison compares.  Lab counts are compared in the guest
    clock's ticks, both converted with one rate (the base's): two boots calibrate their
    timer a little differently (about 1e-7 here), which would otherwise move every figure
    of one side by that much and call an unchanged count changed.  Other exact data (two
    constants): their medians as they are."""
    if UNIT_INSTRUCTIONS in (a.unit, b.unit):
        ta, tb, hz = _ticks_median(a), _ticks_median(b), _timer_hz(a) or _timer_hz(b)
        if ta is not None and tb is not None and hz is not None:
            return ta * 1e9 / hz, tb * 1e9 / hz
    return stats.median(a.samples), stats.median(b.samples)


def judge(pairs: Sequence[Pair], *, alpha: float = ALPHA,
          confidence: float = CONFIDENCE) -> list[Judgement]:
    """The verdicts on every pair of one table (Holm across its timings), in order."""
    found: list[Judgement] = []
    for pair in pairs:
        try:
            found.append(_measure(pair, alpha, confidence))
        except StatsError as exc:
            found.append(Judgement(pair.name, _unit(pair), pair.base, pair.new,
                                   Category.UNJUDGED, alpha=alpha, confidence=confidence,
                                   error=str(exc)))
    tested = [i for i, j in enumerate(found) if j.p is not None]
    for i, q in zip(tested, stats.holm([found[i].p for i in tested]),  # type: ignore[misc]
                    strict=True):
        j = found[i]
        found[i] = _decide(replace(j, p_adjusted=q,
                                   detectable=_detectable(j, alpha / len(tested))))
    return found


def _detectable(j: Judgement, alpha: float) -> float | None:
    """The minimum detectable change at ``alpha``: Holm's strictest step (alpha over the
    table's tests), so a table of many benchmarks is not credited with one test's power.
    None when the standard error is unknown or 0 (nothing to size a change against)."""
    if j.se is None or j.df is None:
        return None
    try:
        return stats.detectable(j.se, j.df, alpha=alpha) - 1.0
    except StatsError:
        return None


def _unit(pair: Pair) -> str:
    return pair.base.unit or pair.new.unit


def _measure(pair: Pair, alpha: float, confidence: float) -> Judgement:
    a, b = pair.base, pair.new
    unit = _unit(pair)
    for s in (a, b):
        check_values(s)
    k = (a.process_count, b.process_count)
    common = dict(name=pair.name, unit=unit, alpha=alpha, confidence=confidence, processes=k)
    if is_exact(a, b):
        ma, mb = exact_medians(a, b)
        same = abs(mb - ma) <= EXACT_RELATIVE * max(abs(ma), abs(mb))
        fraction = not same and below_step(unit, ma, mb)
        category = Category.IDENTICAL if same else Category.TIMER_SHARE if fraction else \
            Category.HIGHER if mb > ma else Category.LOWER
        return Judgement(**common, base=a, new=b,  # type: ignore[arg-type]
                         category=category, method=EXACT, median_a=ma, median_b=mb,
                         ratio=(mb / ma) if ma > 0 else (1.0 if same else None),
                         detectable=0.0, sees=("exact",),
                         note=SUB_INSTRUCTION if fraction else None)
    a, b, raw_note = like_for_like(a, b)
    common.update(base=a, new=b, raw=raw_note is not None)
    apart = separate(a, b)
    if max(k) >= 2:
        la, lb = _levels(a, b)
        noise = pair.noise if apart else None
        t = stats.level_test(la, lb, run_var=noise.var if noise else 0.0,
                             run_df=noise.df if noise else math.inf, confidence=confidence)
        sees: tuple[str, ...] = (SEEN_SAMPLES, SEEN_PROCESSES) + ((SEEN_RUNS,) if noise else ())
        misses = (SEEN_RUNS,) if apart and noise is None else ()
        one = [f"{s.source} is one process: its process-to-process variation is taken as "
               f"the other side's ({max(k)} processes)" for s in (a, b) if s.process_count < 2]
        return Judgement(**common, category=Category.SAME, method=LEVELS,  # type: ignore[arg-type]
                         median_a=math.exp(la.log), median_b=math.exp(lb.log), ratio=t.ratio,
                         ratio_low=t.ratio_low, ratio_high=t.ratio_high, p=t.p,
                         se=t.se if t.se > 0 else None, df=t.df,
                         sees=sees, misses=misses, noise=noise,
                         note=_notes(raw_note, *one))
    test = stats.sample_test(a.samples, b.samples, alpha=alpha, confidence=confidence)
    se = stats.log_se_of_interval(test.ratio_low, test.ratio_high, confidence) \
        if 0 < test.ratio_low < test.ratio_high else None
    missed: tuple[str, ...] = (SEEN_PROCESSES, SEEN_RUNS) if apart else ()
    return Judgement(**common, category=Category.SAME, method=SAMPLES,  # type: ignore[arg-type]
                     median_a=test.median_a, median_b=test.median_b, ratio=test.ratio,
                     ratio_low=test.ratio_low, ratio_high=test.ratio_high, p=test.p,
                     se=se, df=math.inf, sees=(SEEN_SAMPLES,), misses=missed,
                     note=_notes(raw_note, "both sides constant: the samples do not vary"
                                 if test.constant else None))


def _notes(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _levels(a: Series, b: Series) -> tuple[stats.Level, stats.Level]:
    """Each side's level; a side of one process against one of several borrows their
    process-to-process variance (the same benchmark on the same machine)."""
    if a.process_count >= 2 and b.process_count >= 2:
        return stats.process_level(a.by_process()), stats.process_level(b.by_process())
    if a.process_count >= 2:
        la = stats.process_level(a.by_process())
        return la, stats.single_process_level(b.samples, la)
    lb = stats.process_level(b.by_process())
    return stats.single_process_level(a.samples, lb), lb


def like_for_like(a: Series, b: Series) -> tuple[Series, Series, str | None]:
    """The two sides as the verdict compares them: as they are, or both raw (the empty
    loop's cost included) when its subtraction would make them measure different things:
    subtracted on one side only, or a sample left at or below 0 by it (a sample faster
    than the empty loop).  The note says which."""
    decided = (a.overhead_subtracted, b.overhead_subtracted)
    if None in decided:
        return a, b, None
    if decided[0] != decided[1]:
        why = "the empty loop subtracted on one side only"
    elif any(s.overhead_subtracted and s.samples and min(s.samples) <= 0 for s in (a, b)):
        why = "a sample at or below the empty loop's median"
    else:
        return a, b, None
    return a.raw(), b.raw(), f"{why}: judged on both sides' raw samples (the loop included)"


def check_values(s: Series) -> None:
    """Refuse what no verdict can take, before any figure: a plain number that is not
    finite or is negative (a harness capture's samples are checked by its schema; after
    the empty loop's subtraction they may fall below 0, which :func:`like_for_like`
    handles)."""
    for i, x in enumerate(s.samples, start=1):
        if not math.isfinite(x):
            raise StatsError(f"{s.source}: value {i} is {x} (not a finite number)")
        if x < 0 and s.record is None:
            raise StatsError(f"{s.source}: value {i} is negative ({x:g}); the verdict takes "
                             "times or counts")


def _decide(j: Judgement) -> Judgement:
    """A timing's category: a difference is shown only when the adjusted p is below alpha
    AND the ratio's interval excludes 1; a note says when the two disagree."""
    assert j.p_adjusted is not None and j.ratio_low is not None and j.ratio_high is not None
    test = j.p_adjusted < j.alpha
    interval = j.ratio_low > 1.0 or j.ratio_high < 1.0
    note = j.note
    if test and interval:
        category = Category.HIGHER if (j.ratio or 1.0) > 1.0 else Category.LOWER
    else:
        category = Category.SAME
        if test:
            note = (f"p < {j.alpha:g} but the ratio's CI includes 1: no difference in the "
                    "medians shown")
    return replace(j, category=category, note=note)


# --- the gate (kcross check) ------------------------------------------------------------------

def gate(j: Judgement, tolerance: float) -> Category:
    """The category of a row of ``kcross check`` at ``tolerance`` (0.05: +5%).

    Exact figures: REGRESSION when higher by more than the tolerance (a move by the
    timer's share never is: it is no change).  Timings that see
    every level between them (one run's benchmarks, or two runs with the machine's
    run-to-run noise known): REGRESSION when shown higher AND the ratio's interval lies
    above 1 + tolerance.  Two separate runs whose run-to-run noise is not known: the
    test cannot see it, so the gate goes by the tolerance alone: REGRESSION when the
    interval (of what it can see) lies above 1 + tolerance.
    """
    if j.category is Category.UNJUDGED:
        return j.category
    limit = 1.0 + tolerance
    if j.exact:
        higher = j.category is Category.HIGHER
        beyond = j.ratio is None or j.ratio > limit
        return Category.REGRESSION if higher and beyond else j.category
    assert j.ratio_low is not None
    if SEEN_RUNS in j.misses:
        return Category.REGRESSION if j.ratio_low > limit else j.category
    if j.category is Category.HIGHER and j.ratio_low > limit:
        return Category.REGRESSION
    return j.category


# --- as a record ----------------------------------------------------------------------------

def run_ids(labels: Sequence[str]) -> list[int | str]:
    """Runs as JSON names them: the stored runs (``run 3``) by their ids in order, then any
    other label (a ``kcross aa`` round not stored) as it is."""
    stored = {x: int(x[4:]) for x in labels if x.startswith("run ") and x[4:].isdigit()}
    return [*sorted(set(stored.values())), *(x for x in labels if x not in stored)]


def noise_runs(noise: RunNoise | None) -> dict[str, list[int | str]]:
    """Which runs a noise estimate came from (``from_runs``) and which it left out as
    outliers (``outliers``; kcross.judge.noise), as every --json names them: check's and
    compare's verdict record, history's noise records (none for no estimate)."""
    if noise is None:
        return {"from_runs": [], "outliers": []}
    return {"from_runs": run_ids(noise.used), "outliers": run_ids(noise.outliers)}


def record(j: Judgement) -> dict[str, object]:
    """A verdict as JSON, with what recomputes it (docs/result-format.md, the comparison
    record's ``verdict``): every --json and the json export write this.  A move by the
    timer's share keeps its direction there (``category`` higher or lower, ``significant``:
    the counts do differ) and its note says it is the timer's share (the format unchanged)."""
    def finite(x: float | None) -> float | None:
        return x if x is not None and math.isfinite(x) else None

    noise = None if j.noise is None else {
        "var": j.noise.var, "cv": j.noise.cv, "df": finite(j.noise.df), "runs": j.noise.runs,
        "source": j.noise.source, "within": j.noise.within, **noise_runs(j.noise)}
    return {"method": j.method, "category": j.difference.value, "n_a": j.n_a, "n_b": j.n_b,
            "median_a": j.median_a, "median_b": j.median_b, "ratio": j.ratio,
            "ratio_low": j.ratio_low, "ratio_high": j.ratio_high, "confidence": j.confidence,
            "p": j.p, "p_adjusted": j.p_adjusted, "alpha": j.alpha,
            "significant": j.difference.changed, "detectable": j.detectable,
            "se": j.se, "df": finite(j.df), "raw": j.raw, "noise": noise,
            "sees": list(j.sees), "misses": list(j.misses), "processes": list(j.processes),
            "note": j.note}


def fails_at(j: Judgement, tolerance: float) -> float | None:
    """The smallest slowdown (a fraction) that fails ``kcross check`` at ``tolerance`` with
    80% power: its interval must lie above 1 + tolerance (:func:`gate`).  None for exact
    counts (any count beyond the tolerance fails) and where the error is unknown."""
    if j.exact or j.se is None or j.df is None:
        return None
    try:
        return stats.beyond_detectable(j.se, j.df, 1.0 + tolerance,
                                       confidence=j.confidence) - 1.0
    except StatsError:
        return None


def geomean(judgements: Sequence[Judgement]) -> float | None:
    """The geometric mean of the judged pairs' ratios (None when there is none)."""
    ratios = [j.ratio for j in judgements
              if j.category is not Category.UNJUDGED and j.ratio is not None and j.ratio > 0]
    if not ratios:
        return None
    try:
        return stats.geomean(ratios)
    except StatsError:
        return None


def verdict_label(j: Judgement, tolerance: float | None = None) -> str:
    """The short label of a row's category (``slower``, ``identical``, ``regression``)."""
    category = gate(j, tolerance) if tolerance is not None else j.category
    return label(category, j.unit)


# --- paired rounds (kcross ab, aa's blocks, crosscheck) ------------------------------------

@dataclass(frozen=True)
class PairedVerdict:
    """B against A over interleaved rounds: the median of the per-round ratios b/a with its
    distribution-free CI for the rounds' effective number (kcross.stats.paired_ratio); a
    difference when the CI reaches the confidence and excludes 1 (a sign test on the
    rounds)."""

    paired: stats.Paired
    unit: str
    category: Category

    @property
    def changed(self) -> bool:
        return self.category.changed


def judge_paired(a: Sequence[float], b: Sequence[float], unit: str,
                 confidence: float = CONFIDENCE) -> PairedVerdict:
    """The paired verdict; :class:`StatsError` when the rounds cannot give one."""
    p = stats.paired_ratio(a, b, confidence)
    category = Category.SAME
    if p.ci.confidence >= confidence:   # else dependent rounds count as too few for it
        if p.ci.low > 1.0:
            category = Category.HIGHER
        elif p.ci.high < 1.0:
            category = Category.LOWER
    return PairedVerdict(p, unit, category)
