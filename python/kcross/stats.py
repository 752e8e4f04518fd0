"""The statistics rule of kcross: the one place figures are computed from samples.

Timings of kernel crossings are skewed and occasionally disturbed by
interrupts, so kcross reports the median with a distribution-free confidence
interval (order statistics, exact binomial coverage) instead of a mean and a
normal-theory interval.  The rule (docs/result-format.md, "Statistics"; the
harness's own table follows it in harness/stats.c, and a test checks both
agree on the same samples):

- quantiles are Hyndman-Fan type 7 (linear interpolation, numpy's default):
  for sorted x[0..n-1], h = (n-1)p, q = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]);
  median = q(0.5), quartiles q(0.25) and q(0.75);
- overhead: o = median of the empty loop's samples, m = median of the samples,
  noise = (q3 - q1)/2 of the samples.  Subtract o from every sample when
  o > noise and 2o < m, then every figure is of the corrected samples;
  otherwise nothing is subtracted.  Reasons: "within the noise" (o <= noise,
  checked first), "half the median or more", "subtracted";
- CI of the median: [x(l), x(n+1-l)], l the largest rank with
  1 - 2 BinomCDF(l-1; n, 1/2) >= 0.95 (the achieved coverage is reported);
- spread = (q3 - q1) / median.

Schema-1 records were corrected by the harness itself: their samples are taken
as given and the decision is the record's own ``overhead.subtracted``/``why``.

Every function refuses input it cannot summarise honestly by raising
:class:`StatsError`; callers show that message where the number would have
been, so a meaningless figure is never printed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast


class _Numpy:
    """numpy, imported where first used (then bound to ``np`` in this one's place): the
    summary of a record (its median, quartiles, minimum, CI and overhead decision) takes the
    values as a list and needs none of it, so that ``kcross import`` of a capture of one
    process, which summarises each record, does not pay numpy's import (a fifth of that
    command: 0.03-0.07 s)."""

    def __getattr__(self, name: str) -> Any:
        from .errors import stop_signals_held

        # its BLAS threads (OPENBLAS_NUM_THREADS > 1) leave the stop signals to the main
        # thread, wherever numpy is first used
        with stop_signals_held():
            import numpy

        globals()["np"] = numpy
        return getattr(numpy, name)


if TYPE_CHECKING:
    import numpy as np
else:
    np = _Numpy()

CONFIDENCE = 0.95

# The overhead decisions (the wording is part of the rule: the harness uses it too).
SUBTRACTED = "subtracted"
WITHIN_NOISE = "within the noise"
HALF_MEDIAN = "half the median or more"


class StatsError(ValueError):
    """The samples cannot be summarised; the message is short enough for a table cell."""


@dataclass(frozen=True)
class Description:
    """Location of one benchmark's samples (ns/op)."""

    n: int
    median: float
    min: float


@dataclass(frozen=True)
class MedianCI:
    """Confidence interval of the median from order statistics.

    ``low``/``high`` are the sample values of ranks ``low_rank``/``high_rank``
    (1-based, in sorted order); ``confidence`` is the exact coverage achieved,
    which is at least the requested level and usually above it because the
    binomial distribution is discrete.
    """

    low: float
    high: float
    low_rank: int
    high_rank: int
    confidence: float
    processes: int = 1    # >1: Student's t over that many processes' medians (no ranks)


@dataclass(frozen=True)
class Overhead:
    """The overhead decision for one benchmark.

    ``median`` is the empty loop's cost (ns/op; None when not measured),
    ``reason`` one of :data:`SUBTRACTED`, :data:`WITHIN_NOISE`,
    :data:`HALF_MEDIAN` (schema 1: the harness's own ``why`` text), or None
    when no empty-loop figures were given.
    """

    median: float | None
    subtracted: bool
    reason: str | None


@dataclass(frozen=True)
class Summary:
    """Every figure of one benchmark, of the corrected samples when the overhead was subtracted.

    The median, quartiles and minimum always exist (n >= 1).  ``spread`` and
    ``ci`` may not: reading them then raises :class:`StatsError` with the reason.
    """

    n: int
    median: float
    q1: float
    q3: float
    min: float
    overhead: Overhead
    samples: tuple[float, ...]          # the samples the figures are of (corrected if subtracted)
    _spread: float | str                # the figure, or why there is none
    # the interval, or why there is none; or how to make it when first read (a run of several
    # processes: the noise of a history reads thousands of summaries and none of their CIs).
    # Not compared: two summaries of the same samples are equal whatever their CI's state
    _ci: MedianCI | str | Callable[[], MedianCI] = field(compare=False)

    @property
    def spread(self) -> float:
        """(q3 - q1) / median, a scale-free noise figure."""
        if isinstance(self._spread, str):
            raise StatsError(self._spread)
        return self._spread

    def _interval(self) -> MedianCI | str:
        if callable(self._ci):
            made: MedianCI | str
            try:
                made = self._ci()
            except StatsError as exc:
                made = str(exc)
            object.__setattr__(self, "_ci", made)   # made once: a pure function of the data
        assert not callable(self._ci)
        return self._ci

    @property
    def ci(self) -> MedianCI:
        """The 95% confidence interval of the median."""
        ci = self._interval()
        if isinstance(ci, str):
            raise StatsError(ci)
        return ci

    def as_dict(self) -> dict[str, Any]:
        """The figures under the names ``kcross-harness summarize --json`` uses; null where none."""
        made = self._interval()
        ci = made if isinstance(made, MedianCI) else None
        return {
            "n": self.n, "median": self.median, "q1": self.q1, "q3": self.q3, "min": self.min,
            "spread": None if isinstance(self._spread, str) else self._spread,
            "ci_low": ci.low if ci else None, "ci_high": ci.high if ci else None,
            "ci_low_rank": ci.low_rank if ci else 0, "ci_high_rank": ci.high_rank if ci else 0,
            "ci_confidence": ci.confidence if ci else None,
            "overhead_median": self.overhead.median, "subtracted": self.overhead.subtracted,
            "overhead_reason": self.overhead.reason,
        }


# --- the rule's building blocks ----------------------------------------------------------

def _as_array(samples: Sequence[float], what: str) -> np.ndarray:
    """The samples as a flat float64 array, or :class:`StatsError` saying what they are not."""
    try:
        data = np.asarray(samples, dtype=np.float64)
    except (TypeError, ValueError):
        raise StatsError(f"{what}s are not numbers") from None
    if data.ndim != 1:
        raise StatsError(f"{what}s must be a flat list")
    return data


# Up to this many samples a list or tuple of Python numbers is summarised as a list, without
# numpy (one harness process's: 201 by default); beyond (a run of several processes, pooled),
# numpy's sort is the faster by far (0.6 ms against 0.2 ms at 2,000 samples).
LIST_VALUES_UP_TO = 1024
_NUMBERS = {float, int}     # not bool (numpy's path takes it as 1.0), nor numpy's scalars


def _less(data: list[float] | np.ndarray, o: float) -> list[float] | np.ndarray:
    """Each value less ``o`` (the overhead subtracted), as a list or an array as given."""
    return [x - o for x in data] if isinstance(data, list) else data - o


def _least(data: list[float] | np.ndarray) -> float:
    """The smallest value, as a list or an array gives it (numpy's min for an array)."""
    return min(data) if isinstance(data, list) else float(data.min())


def _values(samples: Sequence[float], what: str = "sample") -> list[float] | np.ndarray:
    """The samples, checked as :func:`_clean` checks them: a list or tuple of at most
    LIST_VALUES_UP_TO Python numbers (what a record of one process holds) as a list of
    floats, here, without numpy; anything else as :func:`_clean`'s array.  The same values
    and the same refusals (test_stats.py)."""
    if type(samples) not in (list, tuple) or len(samples) > LIST_VALUES_UP_TO or \
            not set(map(type, samples)) <= _NUMBERS:
        return _clean(samples, what)
    data = list(map(float, samples))
    # what _clean refuses, refused by _clean (its words); -0.0 beside 0.0 too: numpy's sort
    # and min order the two
    if not data or not all(map(math.isfinite, data)) or min(data) < 0 or \
            (0.0 in data and any(math.copysign(1.0, x) < 0 for x in data if x == 0.0)):
        return _clean(samples, what)
    return data


def _clean(samples: Sequence[float], what: str = "sample") -> np.ndarray:
    """Return the samples as float64, or raise for empty, non-finite or negative input."""
    data = _as_array(samples, what)
    if data.size == 0:
        raise StatsError(f"no {what}s")
    bad = np.flatnonzero(~np.isfinite(data))
    if bad.size:
        raise StatsError(f"{what} {bad[0]} is {data[bad[0]]} (not a finite number)")
    negative = np.flatnonzero(data < 0)
    if negative.size:
        i = negative[0]
        raise StatsError(f"{what} {i} is negative ({data[i]:.3g}): overhead subtraction "
                         "exceeded the measurement" if what == "sample" else
                         f"{what} {i} is negative ({data[i]:.3g})")
    return data


# Up to this many values the quantiles are taken from the values sorted, here; beyond,
# from numpy.quantile's partition.  The same figures to the bit (test_stats.py).
SORTED_QUANTILES_UP_TO = 4096


def _quantiles(data: np.ndarray | list[float], probs: Sequence[float]) -> list[float]:
    """Type-7 quantiles of clean data: numpy's "linear" method (named so it cannot drift),
    and for the short series kcross mostly has (11 samples a process) the same arithmetic
    on the values sorted: for p, h = (n - 1) p, x[floor h] + (h - floor h)(x[floor h + 1] -
    x[floor h]), from the upper value when h - floor h >= 1/2 (numpy's lerp), the largest
    value when h >= n - 1.  A call of numpy.quantile costs twenty times the sort: its
    thousands a comparison were most of a verdict's work.  A list (:func:`_values`) is
    sorted here whatever its length: no numpy."""
    n = len(data)
    if isinstance(data, list):
        ordered = sorted(data)
    elif n > SORTED_QUANTILES_UP_TO:
        return [float(q) for q in np.quantile(data, probs, method="linear")]
    else:
        ordered = np.sort(data).tolist()
    found = []
    for p in probs:
        h = (n - 1) * float(p)
        if h >= n - 1:                      # numpy: the last value, lerped with itself
            low = high = n - 1
            t = h + 1.0
        else:
            low = math.floor(h)
            high, t = low + 1, h - low
        a, b = ordered[low], ordered[high]
        d = b - a
        found.append(b - d * (1.0 - t) if t >= 0.5 else a + d * t)
    return found


def quantile(samples: Sequence[float], p: float) -> float:
    """The type-7 quantile ``p`` (0..1) of the samples: the project's only quantile definition."""
    if not 0.0 <= p <= 1.0:
        raise StatsError(f"quantile must be between 0 and 1, got {p}")
    return _quantiles(_values(samples), [p])[0]


def median(samples: Sequence[float]) -> float:
    return quantile(samples, 0.5)


def describe(samples: Sequence[float]) -> Description:
    """Median, minimum and count of the samples as given; needs at least one valid sample."""
    data = _values(samples)
    return Description(n=len(data), median=_quantiles(data, [0.5])[0], min=_least(data))


def relative_spread(samples: Sequence[float]) -> float:
    """Interquartile range divided by the median: a scale-free noise figure."""
    q1, med, q3 = _quantiles(_values(samples), [0.25, 0.5, 0.75])
    return _spread_of(q1, med, q3)


def _spread_of(q1: float, med: float, q3: float) -> float:
    if med == 0.0:
        raise StatsError("median is 0: relative spread undefined")
    return (q3 - q1) / med


def min_samples_for(confidence: float = CONFIDENCE) -> int:
    """Smallest n whose widest interval (minimum to maximum) reaches ``confidence``."""
    _check_level(confidence)
    n = 1
    while 1.0 - 2.0 * 0.5 ** n < confidence:
        n += 1
    return n


def median_ci(samples: Sequence[float], confidence: float = CONFIDENCE) -> MedianCI:
    """Distribution-free confidence interval of the median (one process's samples).

    The number of samples below the true median is Binomial(n, 1/2), so the
    interval [x_(l), x_(n+1-l)] covers the median with probability
    1 - 2 * P(B <= l - 1).  The narrowest symmetric interval whose coverage
    still reaches ``confidence`` is chosen; that coverage is reported.
    """
    _check_level(confidence)
    return _median_ci(_values(samples), confidence)


def _median_ci(data: np.ndarray | list[float], confidence: float) -> MedianCI:
    n = len(data)
    need = min_samples_for(confidence)
    if n < need:
        raise StatsError(f"n={n}: too few for a {confidence:.0%} CI (need {need})")
    low_rank, coverage = _median_ranks(n, confidence)
    high_rank = n + 1 - low_rank
    ordered = sorted(data) if isinstance(data, list) else np.sort(data)
    return MedianCI(low=float(ordered[low_rank - 1]), high=float(ordered[high_rank - 1]),
                    low_rank=low_rank, high_rank=high_rank, confidence=coverage)


# Up to this many samples the median's coverage is counted exactly in integers; beyond, it
# is the binomial distribution of kcross.special (the sums grow with n: 100,000 samples would
# take a second in integers).
EXACT_COVERAGE_UP_TO = 2000


@functools.lru_cache(maxsize=1024)  # a pure function of n: a run's benchmarks share it
def _median_ranks(n: int, confidence: float) -> tuple[int, float]:
    """The largest lower rank l (1 <= l <= n // 2) whose interval covers the median with
    1 - 2 P(B <= l - 1) >= ``confidence``, B ~ Binomial(n, 1/2), and that coverage.  Up to
    EXACT_COVERAGE_UP_TO samples the binomial sums are counted in integers, each coverage
    rounded once; beyond, :func:`_covering_rank`.  The caller checked that l = 1 reaches
    ``confidence``."""
    if n > EXACT_COVERAGE_UP_TO:
        return _covering_rank(n, confidence)
    total = 1 << n
    below, ways = 0, 1                  # 2^n P(B <= l - 1), and C(n, l - 1)
    found = (1, 1.0)
    for rank in range(1, n // 2 + 1):
        below += ways
        coverage = (total - 2 * below) / total
        if coverage < confidence:
            break
        found = (rank, coverage)
        ways = ways * (n - rank + 1) // rank
    return found


def _covering_rank(n: int, confidence: float) -> tuple[int, float]:
    """The largest rank l (1 <= l <= n // 2) whose interval [x_(l), x_(n+1-l)] of n values
    covers their median with 1 - 2 P(B <= l - 1) >= ``confidence``, B ~ Binomial(n, 1/2),
    and that coverage; rank 1 and its coverage when none reaches ``confidence``.  The
    coverage falls as l grows: found by bisection, log2(n) binomial CDFs."""
    from .special import bdtr

    found, coverage = 0, math.nan     # the largest rank known to reach confidence
    beyond = n // 2 + 1               # the smallest known not to (or past the last)
    while beyond - found > 1:
        rank = (found + beyond) // 2
        covers = 1.0 - 2.0 * bdtr(rank - 1, n, 0.5)
        if covers >= confidence:
            found, coverage = rank, covers
        else:
            beyond = rank
    if found == 0:
        return 1, 1.0 - 2.0 * bdtr(0, n, 0.5)
    return found, coverage


def _check_level(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence}")


# --- whole summaries ---------------------------------------------------------------------

def decide_overhead(samples: Sequence[float], overhead: Sequence[float]) -> Overhead:
    """The overhead decision of the rule for raw samples and the empty loop's samples."""
    data = _values(samples)
    o = _quantiles(_values(overhead, "overhead sample"), [0.5])[0]
    return _decide(data, o)


def _decide(data: list[float] | np.ndarray, o: float) -> Overhead:
    q1, m, q3 = _quantiles(data, [0.25, 0.5, 0.75])
    if not o > (q3 - q1) / 2:
        return Overhead(o, False, WITHIN_NOISE)
    if not 2 * o < m:
        return Overhead(o, False, HALF_MEDIAN)
    return Overhead(o, True, SUBTRACTED)


def summarize(samples: Sequence[float], overhead: Sequence[float] | None = None,
              confidence: float = CONFIDENCE,
              processes: Sequence[int] | None = None) -> Summary:
    """All figures of raw ``samples``, applying the overhead rule when ``overhead`` is given;
    ``processes``: each sample's harness process, when they are several (the median's CI is
    then the processes' interval, :func:`_process_ci`)."""
    data = _values(samples)
    if overhead is None:
        decision = Overhead(None, False, None)
    else:
        decision = _decide(data, _quantiles(_values(overhead, "overhead sample"), [0.5])[0])
    if decision.subtracted:
        assert decision.median is not None
        data = _less(data, decision.median)
    return _summary(data, decision, confidence, processes)


def _summary(data: list[float] | np.ndarray, decision: Overhead, confidence: float,
             processes: Sequence[int] | None = None) -> Summary:
    q1, med, q3 = _quantiles(data, [0.25, 0.5, 0.75])
    spread: float | str
    try:
        spread = _spread_of(q1, med, q3)
    except StatsError as exc:
        spread = str(exc)
    samples = tuple(data) if isinstance(data, list) else tuple(data.tolist())
    ci: MedianCI | str | Callable[[], MedianCI]
    if processes is not None and len(set(processes)) > 1:   # made when first read
        ci = functools.partial(_process_ci, samples, med, tuple(processes), confidence)
    else:
        try:
            ci = _median_ci(data, confidence)
        except StatsError as exc:
            ci = str(exc)
    return Summary(n=len(data), median=med, q1=q1, q3=q3, min=_least(data),
                   overhead=decision, samples=samples, _spread=spread, _ci=ci)


def summarize_record(record: Mapping[str, Any], confidence: float = CONFIDENCE) -> Summary:
    """The figures of one validated ``result`` record of either schema.

    Schema 2: raw samples and the empty loop's samples, the overhead decision
    computed here.  Schema 1: the samples as the harness gave them (already
    corrected when it subtracted) and its own decision.  A result that is not
    ``ok`` has no figures: :class:`StatsError` says so.
    """
    status = record.get("status")
    if status != "ok":
        raise StatsError(f"{status}: no figures")
    samples = record.get("samples")
    overhead = record.get("overhead")
    if record.get("schema") == 1:
        data = _values(samples)  # type: ignore[arg-type]
        oh = overhead if isinstance(overhead, Mapping) else {}
        ns = oh.get("ns")
        decision = Overhead(float(ns) if isinstance(ns, (int, float)) else None,
                            bool(oh.get("subtracted")), oh.get("why"))
        return _summary(data, decision, confidence)
    if not isinstance(overhead, Mapping) or overhead.get("samples") is None:
        raise StatsError("no empty-loop samples: overhead cannot be judged")
    processes = record.get(PROCESS_OF_SAMPLE)
    return summarize(samples, overhead["samples"], confidence,  # type: ignore[arg-type]
                     processes if isinstance(processes, list) else None)


# The key of a merged result record (kcross.series.merge_results) that gives each pooled
# sample's harness process: a run of several processes.
PROCESS_OF_SAMPLE = "process_of_sample"


def groups_of(samples: Sequence[float], processes: Sequence[int]) -> list[Sequence[float]]:
    """The samples of each process (float64), in process order, each in its order."""
    if len(samples) != len(processes):
        raise StatsError(f"{len(processes)} process marks for {len(samples)} samples")
    data = np.asarray(samples, dtype=np.float64)
    if data.size == 0:
        return []
    marks = np.asarray(processes).astype(np.int64)
    order = np.argsort(marks, kind="stable")     # stable: a process's samples in their order
    cuts = np.flatnonzero(np.diff(marks[order])) + 1
    return cast(list[Sequence[float]], np.split(data[order], cuts))   # float64 arrays


def _process_ci(samples: Sequence[float], median: float, processes: Sequence[int],
                confidence: float) -> MedianCI:
    """The interval of a run's median over its processes (their medians' spread, Student's
    t with K - 1 degrees of freedom on the log scale), centred on the pooled ``median``."""
    level = process_level(groups_of(samples, processes), median)
    half = _t_ppf(1.0 - (1.0 - confidence) / 2.0, level.df) * float(np.sqrt(level.var))
    return MedianCI(low=float(np.exp(level.log - half)), high=float(np.exp(level.log + half)),
                    low_rank=0, high_rank=0, confidence=confidence,
                    processes=level.processes)


def raw_samples(record: Mapping[str, Any]) -> list[float]:
    """The samples as measured, before any overhead subtraction (schema 1: added back)."""
    samples = [float(x) for x in record.get("samples") or []]
    overhead = record.get("overhead")
    if record.get("schema") == 1 and isinstance(overhead, Mapping) and overhead.get("subtracted"):
        return [x + float(overhead["ns"]) for x in samples]
    return samples


def summary_columns(record: Mapping[str, Any]) -> dict[str, Any]:
    """The store's summary figures of a result record, kept beside it when it is written so
    that reads need not compute them again; None where there is none.  The overhead
    decision: its median (``overhead_ns``), ``subtracted``, ``overhead_reason``."""
    columns: dict[str, Any] = {"median_ns": None, "min_ns": None, "ci_low_ns": None,
                               "ci_high_ns": None, "ci_confidence": None, "overhead_ns": None,
                               "subtracted": None, "overhead_reason": None}
    try:
        summary = summarize_record(record)
    except StatsError:
        return columns
    columns.update(median_ns=summary.median, min_ns=summary.min,
                   overhead_ns=summary.overhead.median, subtracted=summary.overhead.subtracted,
                   overhead_reason=summary.overhead.reason)
    try:
        ci = summary.ci
    except StatsError:
        return columns
    columns.update(ci_low_ns=ci.low, ci_high_ns=ci.high, ci_confidence=ci.confidence)
    return columns


def stored_samples(record: Mapping[str, Any], columns: Mapping[str, Any]) -> tuple[float, ...]:
    """The samples a record's summary is of (``Summary.samples``), from the decision its
    stored :func:`summary_columns` hold, without deciding again: schema 1's as the harness
    gave them, schema 2's less the empty loop's median when it was subtracted (the same
    arithmetic as :func:`summarize`).  For a record of one harness process."""
    data = _values(record.get("samples"))  # type: ignore[arg-type]
    if record.get("schema") != 1 and columns.get("subtracted"):
        data = _less(data, float(columns["overhead_ns"]))
    return tuple(data) if isinstance(data, list) else tuple(data.tolist())


# --- comparisons: the statistics behind a verdict ------------------------------------------
#
# What is measured when B is compared with A; kcross.judge decides what it means (the
# verdict, its category and words) and is the only caller.  Three tools:
#
# - sample level (one harness process per side): Mann-Whitney U, two-sided (no
#   assumption of normality: timings are skewed), with the exact permutation p for tied
#   small samples and never below what complete separation allows; the ratio of the
#   medians with a bootstrap percentile interval (fixed seed: the same samples give the
#   same interval).  Its noise is one process's: it cannot see what differs between
#   processes or runs;
# - levels (several processes per side, Kalibera and Jones): each process's median is one
#   observation of its run; a side's estimate is the log of its pooled median with the
#   variance of its process medians' logs over K (K - 1 degrees of freedom); a known
#   run-to-run variance adds the level above (each separate run has its own run effect).
#   The log ratio's interval and p come from Student's t with Welch-Satterthwaite's
#   degrees of freedom, so interval and test always agree;
# - Holm-Bonferroni across the comparisons of one table, the geometric mean, exact
#   binomial intervals of proportions, and paired per-round ratios (ab).

ALPHA = 0.05
POWER = 0.80              # of the minimum detectable change
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20261123


@dataclass(frozen=True)
class SampleTest:
    """The sample-level comparison of ``b`` (new) with ``a`` (base)."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float          # median_b / median_a
    ratio_low: float      # bootstrap percentile interval of the ratio
    ratio_high: float
    confidence: float     # of that interval
    p: float              # Mann-Whitney U, two-sided (1.0 for two equal constants)
    constant: bool        # both sides are constants (nothing varies)


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p Mann-Whitney U can give for sizes n_a, n_b (complete
    separation): 2 / C(n_a + n_b, n_a), in log space so that any n works (C(1200, 600)
    is beyond a double)."""
    log_comb = math.lgamma(n_a + n_b + 1) - math.lgamma(n_a + 1) - math.lgamma(n_b + 1)
    return float(min(1.0, np.exp(np.log(2.0) - log_comb)))


# Resamples are drawn in chunks so that memory stays near CHUNK_VALUES doubles whatever n.
_CHUNK_VALUES = 4_000_000


def _ratio_interval(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Bootstrap percentile interval of median(b) / median(a), resampling each side on its own."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    rows = max(1, _CHUNK_VALUES // max(a.size, b.size))
    ratios = np.empty(BOOTSTRAP_RESAMPLES)
    for start in range(0, BOOTSTRAP_RESAMPLES, rows):
        k = min(rows, BOOTSTRAP_RESAMPLES - start)
        ma = _row_medians(a[rng.integers(0, a.size, size=(k, a.size))])
        mb = _row_medians(b[rng.integers(0, b.size, size=(k, b.size))])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios[start:start + k] = mb / ma
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size < BOOTSTRAP_RESAMPLES * 0.99:
        raise StatsError("base median is 0 in resamples: ratio undefined")
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail], method="linear")
    return float(low), float(high)


def _row_medians(data: np.ndarray) -> np.ndarray:
    """The median of each row (numpy's ``median(data, axis=1)``, to the bit: the middle
    value, or the two middle ones' sum halved), from the rows sorted: three times faster
    than numpy's for the bootstrap's thousands of short rows."""
    ordered = np.sort(data, axis=1)
    n = data.shape[1]
    if n % 2:
        return ordered[:, n // 2]
    return (ordered[:, n // 2 - 1] + ordered[:, n // 2]) / 2.0


# With ties, Mann-Whitney's normal approximation can go below what any arrangement of
# small samples allows; up to this many samples in all the p-value is the exact
# permutation one instead.
EXACT_TIES_UP_TO = 20
# Without ties, the exact null distribution of U when either side has this many samples
# or fewer (scipy.stats.mannwhitneyu's "auto" choice); the normal approximation otherwise.
EXACT_U_UP_TO = 8


def _mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Mann-Whitney U's two-sided p-value of ``a`` against ``b``: for tied samples of
    EXACT_TIES_UP_TO or fewer in all, the exact permutation p of U; without ties, when a side
    has EXACT_U_UP_TO samples or fewer, U's exact null distribution; otherwise the normal
    approximation with the tie correction and the continuity correction.  The same figures
    as scipy.stats' ``mannwhitneyu(a, b, method="auto")`` and, for the tied small samples,
    its ``permutation_test`` of U (test_stats.py holds them to it on many random samples);
    computed here because importing scipy.stats costs half a second a command."""
    n1, n2 = int(a.size), int(b.size)
    _, where, counts = np.unique(np.concatenate([a, b]), return_inverse=True,
                                 return_counts=True)
    # twice each sample's rank (ties: their mean rank), an integer
    twice = (2 * np.cumsum(counts) - counts + 1)[where.reshape(-1)]
    ties = bool(np.any(counts > 1))
    if ties and n1 + n2 <= EXACT_TIES_UP_TO:
        return _u_permutation_p(twice, n1)
    u1 = float(np.sum(twice[:n1])) / 2.0 - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)     # the larger of U1 and U2: the upper tail, doubled
    if ties or (n1 > EXACT_U_UP_TO and n2 > EXACT_U_UP_TO):
        from .special import ndtr

        n = n1 + n2
        tie_term = float(np.sum(counts.astype(np.float64) ** 3 - counts))
        s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.float64(u - n1 * n2 / 2 - 0.5) / np.float64(s)
        return float(min(1.0, max(0.0, 2.0 * float(ndtr(-z)))))
    return min(1.0, 2.0 * _u_exact_cdf(n1 * n2 - int(u), n1, n2))


def _u_exact_cdf(k: int, n1: int, n2: int) -> float:
    """P(U <= k) for samples of n1 and n2 without ties, under the null hypothesis: the
    arrangements with U = 0..k counted exactly (the coefficients of the Gaussian binomial
    coefficient, prod over i = 1..m of (1 - q^(n+i)) / (1 - q^i), m <= n the sizes), each
    over their total, summed in order."""
    m, n = min(n1, n2), max(n1, n2)
    ways = [1] + [0] * k
    for i in range(1, m + 1):
        for j in range(k, n + i - 1, -1):     # times (1 - q^(n+i))
            ways[j] -= ways[j - n - i]
        for j in range(i, k + 1):             # over (1 - q^i)
            ways[j] += ways[j - i]
    total = float(math.comb(n1 + n2, m))
    cdf = 0.0
    for w in ways:
        cdf += float(w) / total
    return cdf


def _u_permutation_p(twice: np.ndarray, n1: int) -> float:
    """The exact two-sided permutation p of U for the first ``n1`` of the pooled samples
    whose ranks (doubled) are ``twice``: over every choice of n1 of them, the share whose
    rank sum is at most the observed one and the share at least it, the smaller doubled.
    U moves with the rank sum, so the sums are counted (subsets of each size by their sum),
    not the choices enumerated."""
    ranks = [int(r) for r in twice]
    top = sum(ranks)
    ways = np.zeros((n1 + 1, top + 1), dtype=np.int64)
    ways[0, 0] = 1
    for r in ranks:
        ways[1:, r:] += ways[:-1, :top + 1 - r].copy()
    sums = ways[n1]
    observed = sum(ranks[:n1])
    total = float(sums.sum())
    below = float(sums[:observed + 1].sum()) / total
    above = float(sums[observed:].sum()) / total
    return min(1.0, 2.0 * min(below, above))


def sample_test(a: Sequence[float], b: Sequence[float], *, alpha: float = ALPHA,
                confidence: float = CONFIDENCE) -> SampleTest:
    """Mann-Whitney U and the ratio's bootstrap interval; :class:`StatsError` for samples
    that cannot be compared honestly (too few to ever reach ``alpha``, a base median of
    0, bad numbers)."""
    _check_level(confidence)
    if not 0.0 < alpha < 1.0:
        raise StatsError(f"alpha must be between 0 and 1, got {alpha}")
    da, db = _clean(a, "base sample"), _clean(b, "new sample")
    floor = smallest_p(da.size, db.size)
    if floor >= alpha:
        raise StatsError(f"n={da.size} and n={db.size}: too few for Mann-Whitney U to reach "
                         f"p < {alpha:g} (at best p = {floor:.3g}); take more samples")
    ma, mb = _quantiles(da, [0.5])[0], _quantiles(db, [0.5])[0]
    if ma == 0.0:
        raise StatsError("base median is 0: ratio undefined")
    constant = bool(da.min() == da.max() and db.min() == db.max())
    if constant and ma == mb:  # nothing varies: the test has no spread to work with
        return SampleTest(int(da.size), int(db.size), ma, mb, 1.0, 1.0, 1.0, confidence,
                          1.0, True)
    p = _mann_whitney_p(da, db)
    if not np.isfinite(p):
        raise StatsError("Mann-Whitney U gave no p-value")
    p = max(p, floor)  # no approximation may claim more than complete separation gives
    low, high = _ratio_interval(da, db, confidence)
    return SampleTest(int(da.size), int(db.size), ma, mb, mb / ma, low, high, confidence, p,
                      constant)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1), in input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.size == 0:
        return []
    if not np.all((p >= 0) & (p <= 1)):
        raise StatsError("p-values must be between 0 and 1")
    order = np.argsort(p, kind="stable")
    m = p.size
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return [float(x) for x in adjusted]


# --- levels: processes and runs -------------------------------------------------------------

@dataclass(frozen=True)
class Level:
    """A side's estimate on the log scale: log of its figure, the variance of that log
    (the noise the side's own data show) and its degrees of freedom."""

    log: float
    var: float
    df: float
    processes: int


def process_medians(groups: Sequence[Sequence[float]]) -> list[float]:
    """The median of each process's samples (the rule's quantile).  Processes of as many
    samples each (a run's usual design) are sorted as one block, each row's median taken
    with :func:`_quantiles`' arithmetic: the same figures to the bit, without a numpy call
    per process."""
    sizes = {len(g) for g in groups}
    n = sizes.pop() if len(sizes) == 1 else 0
    if 0 < n <= SORTED_QUANTILES_UP_TO and len(groups) > 1:
        try:
            block = np.asarray(groups, dtype=np.float64)
        except (TypeError, ValueError):
            block = np.empty(0)             # not numbers: the rule below says so
        if block.ndim == 2 and bool(np.all(np.isfinite(block))) and not bool(np.any(block < 0)):
            rows = np.sort(block, axis=1)
            if n % 2:   # h = (n - 1) / 2 whole: the middle value (as a + 0 d gives it: a -0.0
                middle = rows[:, n // 2]   # made +0.0, but for one sample, b - 0 d: kept)
                return [float(x) for x in (middle if n == 1 else middle + 0.0)]
            a, b = rows[:, n // 2 - 1], rows[:, n // 2]
            return [float(x) for x in b - (b - a) * 0.5]    # h - floor h = 1/2: numpy's lerp
    return [_quantiles(_clean(g), [0.5])[0] for g in groups]  # also: what is wrong, said


def process_level(groups: Sequence[Sequence[float]], center: float | None = None) -> Level:
    """A side of several processes: log of ``center`` (default: the median of all the
    samples), with the variance of its process medians' logs over their number."""
    k = len(groups)
    if k < 2:
        raise StatsError(f"{k} process: the process level needs at least 2")
    medians = np.asarray(process_medians(groups))
    if np.any(medians <= 0):
        raise StatsError("a process's median is 0 or less: no log ratio")
    if center is None:
        pooled = np.concatenate([np.asarray(g, dtype=np.float64) for g in groups])
        center = _quantiles(_clean(cast(Sequence[float], pooled)), [0.5])[0]
    if not center > 0:
        raise StatsError("median is 0: ratio undefined")
    logs = np.log(medians)
    return Level(log=float(np.log(center)), var=float(np.var(logs, ddof=1)) / k,
                 df=float(k - 1), processes=k)


def single_process_level(samples: Sequence[float], like: Level) -> Level:
    """A side of one process judged against a side of several: log of its median, with
    the variance of one process's median taken from ``like`` (the other side's processes,
    of the same benchmark on the same machine) and its degrees of freedom."""
    m = _quantiles(_clean(samples), [0.5])[0]
    if not m > 0:
        raise StatsError("median is 0: ratio undefined")
    return Level(log=float(np.log(m)), var=like.var * like.processes, df=like.df, processes=1)


@functools.lru_cache(maxsize=4096)  # a pure function, asked the same thing thousands of times
def _t_ppf(q: float, df: float) -> float:
    from .special import ndtri, stdtrit

    return float(ndtri(q)) if not np.isfinite(df) else float(stdtrit(df, q))


def _t_sf(x: float, df: float) -> float:
    from .special import ndtr, stdtr

    return float(1.0 - ndtr(x)) if not np.isfinite(df) else float(1.0 - stdtr(df, x))


def welch_df(parts: Sequence[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variances (variance, its df)."""
    total = sum(v for v, _ in parts)
    denominator = sum(v * v / df for v, df in parts if v > 0 and np.isfinite(df))
    if total <= 0:
        return float("inf")
    return float("inf") if denominator == 0 else total * total / denominator


@dataclass(frozen=True)
class LevelTest:
    """B against A on the log scale, from levels (processes, and runs when known)."""

    ratio: float          # exp(log_b - log_a): the ratio of the sides' figures
    ratio_low: float
    ratio_high: float
    confidence: float
    p: float              # two-sided, Student's t with df
    se: float             # of the log ratio
    df: float


def level_test(a: Level, b: Level, *, run_var: float = 0.0, run_df: float = float("inf"),
               confidence: float = CONFIDENCE) -> LevelTest:
    """The log ratio b/a with t's interval and p; ``run_var`` is the variance of one run's
    run effect (added twice: each side is a run of its own), with its degrees of freedom."""
    _check_level(confidence)
    parts = [(a.var, a.df), (b.var, b.df), (2.0 * run_var, run_df)]
    var = sum(v for v, _ in parts)
    d = b.log - a.log
    if var <= 0:
        if d == 0:
            return LevelTest(1.0, 1.0, 1.0, confidence, 1.0, 0.0, float("inf"))
        raise StatsError("no variation between processes on either side: no interval "
                         "(the figures are constant; compare them by value)")
    se = float(np.sqrt(var))
    df = welch_df(parts)
    half = _t_ppf(1.0 - (1.0 - confidence) / 2.0, df) * se
    p = min(1.0, 2.0 * _t_sf(abs(d) / se, df))
    return LevelTest(float(np.exp(d)), float(np.exp(d - half)), float(np.exp(d + half)),
                     confidence, p, se, df)


def between_runs(logs: Sequence[float], within: Sequence[float]) -> tuple[float, float]:
    """The run-to-run variance of a benchmark (one-way random effects, method of moments):
    the variance of the runs' log figures less what their own noise explains (the mean of
    their within-run variances), at least 0; with its degrees of freedom (runs - 1)."""
    if len(logs) < 2 or len(logs) != len(within):
        raise StatsError(f"{len(logs)} run(s): run-to-run variation needs at least 2")
    total = float(np.var(np.asarray(logs, dtype=np.float64), ddof=1))
    return max(0.0, total - float(np.mean(within))), float(len(logs) - 1)


def between_runs_pooled(groups: Sequence[tuple[Sequence[float], Sequence[float]]]
                        ) -> tuple[float, float]:
    """:func:`between_runs` from several groups of runs that may differ by a constant (two
    copies of one benchmark, one with a planted change): the runs' variance about their own
    group's mean, pooled, less the mean within-run variance; degrees of freedom the sum of
    (runs - 1) over the groups."""
    squares, df, within = 0.0, 0, []
    for logs, var in groups:
        if len(logs) != len(var):
            raise StatsError("each run needs its within-run variance")
        if len(logs) < 2:
            continue
        data = np.asarray(logs, dtype=np.float64)
        squares += float(np.sum((data - data.mean()) ** 2))
        df += len(logs) - 1
        within += list(var)
    if df < 2:
        raise StatsError(f"{df + 1} run(s) in a group: run-to-run variation needs more")
    return max(0.0, squares / df - float(np.mean(within))), float(df)


# The median absolute deviation of a normal sample, in its standard deviation.
MAD_SD = 1.4826


def outlying(values: Sequence[float] | np.ndarray, own_var: Sequence[float] | np.ndarray,
             limit: float) -> list[int]:
    """The indices of the values further than ``limit`` robust standard deviations from
    their median: the median absolute deviation as a normal sample's sd (MAD_SD), at least
    the values' own noise (the median of ``own_var``, as an sd).  A robust rule: one absurd
    value moves neither the median nor the deviation."""
    if len(values) != len(own_var):
        raise StatsError("each value needs its own variance")
    if not len(values):
        return []
    data = np.asarray(values, dtype=np.float64)
    off = np.abs(data - np.median(data))
    scale = max(MAD_SD * float(np.median(off)),
                float(np.sqrt(max(0.0, float(np.median(np.asarray(own_var, dtype=np.float64)))))))
    return [int(i) for i in np.flatnonzero(off > limit * scale)]


def between_runs_near(pairs: Sequence[tuple[float, float, float, float]]) -> tuple[float, float]:
    """:func:`between_runs` from pairs of runs close in time, ``(log_i, log_j, var_i,
    var_j)``: half the mean squared difference of the pairs' figures less what the runs' own
    noise explains, at least 0 (a drifting machine's variogram at that separation); its
    degrees of freedom: the pairs, at most the runs involved less one."""
    if len(pairs) < 2:
        raise StatsError(f"{len(pairs)} pair(s) of runs: their variation needs at least 2")
    half = [((a - b) ** 2 - va - vb) / 2.0 for a, b, va, vb in pairs]
    runs = len({(a, va) for a, _, va, _ in pairs} | {(b, vb) for _, b, _, vb in pairs})
    return _near_variance(len(pairs), float(np.mean(half)), runs)


def _near_variance(pairs: int, mean_half: float, runs: int) -> tuple[float, float]:
    """:func:`between_runs_near`'s figure from its pairs' number, the mean of their halves
    and the runs involved."""
    return max(0.0, float(mean_half)), float(min(pairs, max(1, runs - 1)))


class NearRuns:
    """:func:`between_runs_near` over every pair of runs started at most a window apart,
    for many windows and with a few runs left out each time (the two runs a comparison
    judges), at a cost that does not grow with the pairs: thousands of runs started within
    minutes of each other have millions.  The runs come in groups that may differ by a
    constant (pairs within a group only), each run its log figure, its within-run variance
    and its start (seconds; None: unknown, in no pair); a run is named by its place in the
    groups, one after the other.  Each group's runs are sorted by start once; a window's
    pairs are each run's with the runs before it no further back (a range of the sorted
    runs: the same subtraction as the pairs' test, so the same pairs), their sums taken
    from running sums (the figures centred on a run's, for precision); a left-out run's pairs
    are summed directly and taken off."""

    def __init__(self, groups: Sequence[tuple[Sequence[float], Sequence[float],
                                              Sequence[float | None]]]) -> None:
        logs = [float(x) for g in groups for x in g[0]]
        var = [float(v) for g in groups for v in g[1]]
        starts = [t for g in groups for t in g[2]]
        if not len(logs) == len(var) == len(starts):
            raise StatsError("each run needs its within-run variance and its start")
        self.size = len(logs)
        # a run's value, (log, var), as between_runs_near tells runs apart
        _, key = np.unique(np.asarray([logs, var], dtype=np.float64).reshape(2, -1).T,
                           axis=0, return_inverse=True)
        self._keys = int(key.max()) + 1 if logs else 0
        self._groups: list[_SortedRuns] = []
        self._where: dict[int, tuple[int, int]] = {}   # run -> (its group, sorted place)
        first = 0
        for g in groups:
            timed = [(float(t), i) for i, t in enumerate(g[2], start=first) if t is not None]
            timed.sort()
            order = np.asarray([i for _, i in timed], dtype=np.int64)
            for place, i in enumerate(order.tolist()):
                self._where[i] = (len(self._groups), place)
            # centred on one of them: runs of one figure stay exactly 0 apart (no noise)
            x = np.asarray(logs, dtype=np.float64)[order]
            self._groups.append(_SortedRuns(
                np.asarray([t for t, _ in timed], dtype=np.float64), x - x[:1].sum(),
                np.asarray(var, dtype=np.float64)[order], key.reshape(-1)[order]))
            first += len(g[0])

    def pairs_and_variance(self, window: float, leave_out: Iterable[int] = ()
                           ) -> tuple[int, tuple[float, float] | None]:
        """The number of pairs no further apart than ``window`` seconds once the runs
        ``leave_out`` are left out, and :func:`between_runs_near` of them (None: fewer than
        2 pairs)."""
        gone: dict[int, list[int]] = {}
        for i in set(leave_out):
            if not 0 <= i < self.size:
                raise StatsError(f"no run {i} to leave out")
            if i in self._where:
                group, place = self._where[i]
                gone.setdefault(group, []).append(place)
        pairs, half, involved = 0, 0.0, np.zeros(self._keys, dtype=np.int64)
        for group, runs in enumerate(self._groups):
            n, h, keys = runs.without(window, sorted(gone.get(group, [])))
            pairs, half = pairs + n, half + h
            involved += np.bincount(keys, minlength=self._keys)
        if pairs < 2:
            return pairs, None
        return pairs, _near_variance(pairs, half / pairs, int(np.count_nonzero(involved)))


@dataclass
class _SortedRuns:
    """One group of NearRuns: its timed runs sorted by start, their centred log figures,
    variances and value keys; and per window, each run's range of partners."""

    start: np.ndarray
    x: np.ndarray
    var: np.ndarray
    key: np.ndarray

    def __post_init__(self) -> None:
        zero = np.zeros(1)
        self._s1 = np.concatenate([zero, np.cumsum(self.x)])
        self._s2 = np.concatenate([zero, np.cumsum(self.x * self.x)])
        self._sv = np.concatenate([zero, np.cumsum(self.var)])
        self._windows: dict[float, tuple[np.ndarray, np.ndarray, int, float]] = {}

    def _ranges(self, window: float) -> tuple[np.ndarray, np.ndarray, int, float]:
        """Each run's partners [lo, hi) (itself among them) within ``window``, the pairs'
        number and the sum of their halves."""
        if window in self._windows:
            return self._windows[window]
        t, n = self.start, self.start.size
        place = np.arange(n)
        # first k with t[i] - t[k] <= window, and 1 + the last with t[k] - t[i] <= window:
        # found by bisection, then moved to where the subtraction itself says (rounding)
        lo = np.searchsorted(t, t - window, side="left")
        hi = np.searchsorted(t, t + window, side="right")
        while (down := (lo > 0) & (t - t[np.maximum(lo - 1, 0)] <= window)).any():
            lo = lo - down
        while (up := ~(t - t[lo] <= window)).any():
            lo = lo + up
        while (up := (hi < n) & (t[np.minimum(hi, n - 1)] - t <= window)).any():
            hi = hi + up
        while (down := (hi > place + 1) & ~(t[hi - 1] - t <= window)).any():
            hi = hi - down
        count = place - lo                     # the partners before each run
        x, v = self.x, self.var
        squares = (count * x * x - 2.0 * x * (self._s1[place] - self._s1[lo])
                   + (self._s2[place] - self._s2[lo]))
        variances = count * v + (self._sv[place] - self._sv[lo])
        found = (lo, hi, int(count.sum()), float(np.sum(squares - variances)) / 2.0)
        self._windows[window] = found
        return found

    def without(self, window: float, gone: list[int]) -> tuple[int, float, np.ndarray]:
        """The pairs within ``window`` once the runs at the sorted places ``gone`` are left
        out: their number, the sum of their halves, and the keys of the runs in a pair."""
        if self.start.size == 0:
            return 0, 0.0, np.zeros(0, dtype=np.int64)
        lo, hi, pairs, half = self._ranges(window)
        degree = hi - lo - 1
        if gone:
            degree = degree.copy()
            for a in gone:
                d = self.x[lo[a]:hi[a]] - self.x[a]
                others = int(hi[a] - lo[a] - 1)
                pairs -= others
                half -= (float(np.sum(d * d)) - others * float(self.var[a])
                         - (float(np.sum(self.var[lo[a]:hi[a]])) - float(self.var[a]))) / 2.0
                degree[lo[a]:hi[a]] -= 1
            for i, a in enumerate(gone):       # a pair of two left-out runs: taken off twice
                for b in gone[i + 1:]:
                    if lo[b] <= a < hi[b]:
                        pairs += 1
                        d = float(self.x[a] - self.x[b])
                        half += (d * d - float(self.var[a]) - float(self.var[b])) / 2.0
            degree[gone] = 0
        return pairs, half, self.key[degree > 0]


def detectable(se: float, df: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest change (as a ratio above 1) a two-sided test at ``alpha`` detects with
    probability ``power`` at this standard error of the log ratio."""
    _check_se(se)
    z = _t_ppf(1.0 - alpha / 2.0, df) + _t_ppf(power, df)
    return float(np.exp(z * se))


def beyond_detectable(se: float, df: float, limit: float, *, confidence: float = CONFIDENCE,
                      power: float = POWER) -> float:
    """The smallest ratio whose ``confidence`` interval lies wholly above ``limit`` (a
    ratio, 1.05) with probability ``power``: what a gate on the interval's low end
    catches, at this standard error of the log ratio."""
    _check_se(se)
    _check_level(confidence)
    if not limit > 0:
        raise StatsError(f"limit must be a positive ratio, got {limit}")
    z = _t_ppf(1.0 - (1.0 - confidence) / 2.0, df) + _t_ppf(power, df)
    return float(limit * np.exp(z * se))


def _check_se(se: float) -> None:
    if not (np.isfinite(se) and se > 0):
        raise StatsError(f"standard error {se:g}: no variation to size a change against")


def log_se_of_interval(low: float, high: float, confidence: float = CONFIDENCE) -> float:
    """The standard error of a log figure whose ``confidence`` interval is [low, high]
    (normal approximation): the sample-level interval as a variance."""
    if not 0 < low <= high:
        raise StatsError("an interval of positive figures is needed")
    return float(np.log(high / low) / (2.0 * _t_ppf(1.0 - (1.0 - confidence) / 2.0,
                                                     float("inf"))))


def single_level(median: float, low: float, high: float) -> tuple[float, float]:
    """A run of one process as a point of the run-to-run noise: the log of its ``median``
    and, as its variance, that of the median's CI [low, high] (log_se_of_interval)."""
    if median <= 0:
        raise StatsError("median is 0: no log figure")
    se = log_se_of_interval(max(low, median * 1e-12), high)
    return math.log(median), se * se


def run_level(groups: Sequence[Sequence[float]]) -> tuple[float, float]:
    """A run's point of one benchmark in the run-to-run noise, from its samples by process
    (one group: a run of one process, or of several of which one measured it): the log of
    its figure and that log's variance as the run itself shows it: its processes'
    (:func:`process_level`), or one process's median CI (:func:`single_level`)."""
    if len(groups) >= 2:
        level = process_level(groups)
        return level.log, level.var
    (samples,) = groups
    ci = median_ci(samples)
    return single_level(median(samples), ci.low, ci.high)


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values (the summary row of a comparison table)."""
    data = _clean(values, "value")
    if np.any(data <= 0):
        raise StatsError("geometric mean needs positive values")
    return float(np.exp(np.mean(np.log(data))))


def proportion_ci(successes: int, trials: int,
                  confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Exact (Clopper-Pearson) confidence interval of a proportion, e.g. a false-positive rate."""
    _check_level(confidence)
    if trials < 1 or not 0 <= successes <= trials:
        raise StatsError(f"{successes} of {trials}: not a proportion")
    from scipy.stats import binomtest

    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence,
                                                    method="exact")
    return float(ci.low), float(ci.high)


# Paired rounds (kcross ab, the blocks of kcross aa, crosscheck).  The interval of the
# median ratio is the sign test's (order statistics): the rounds' scatter, however heavy its
# tails, never narrows it.  What it assumes is that the rounds are independent: on a busy
# machine a phase of load can outlast a round (and the engine's order, A B | B A, puts one
# side's runs of two rounds next to each other), so consecutive rounds may fall on the same
# side of the median more often than chance.  Their lag-1 correlation, when it is positive
# beyond chance (above DEPENDENCE_Z / sqrt(n), one-sided 5%), counts the n rounds as
# m = n (1 - rho) / (1 + rho) independent ones (an AR(1) chain's effective size), and the
# interval takes the quantiles of the rounds that m rounds' interval has, with m's
# coverage: below 6, no 95% interval.
DEPENDENCE_Z = 1.645
# A round is outlying when its log ratio is more than OUTLYING robust standard deviations
# (1.4826 MAD) from the median's (Iglewicz and Hoaglin's modified z-score); the rounds
# scatter beyond one steady machine's when at least SCATTERED_SHARE of them (and 2) are.
OUTLYING = 3.5
SCATTERED_SHARE = 0.10


@dataclass(frozen=True)
class Paired:
    """The per-round ratios b[i] / a[i] of an interleaved A/B run: their median, its
    interval for ``effective`` independent rounds, and how the rounds scatter."""

    n: int
    median: float
    ci: MedianCI
    ratios: tuple[float, ...]
    effective: int               # the rounds the interval counts (n unless dependent)
    dependence: float            # lag-1 correlation of the rounds' sides of the median
    spread: float                # robust sd of the log ratios (1.4826 MAD)
    outlying: int                # rounds more than OUTLYING spreads from the median

    @property
    def dependent(self) -> bool:
        """Whether the rounds counted as fewer than they are."""
        return self.effective < self.n

    @property
    def scattered(self) -> bool:
        """Whether the rounds scatter beyond one steady machine's: at least 2 and
        SCATTERED_SHARE of them outlying."""
        return self.outlying >= max(2, SCATTERED_SHARE * self.n)


def paired_ratio(a: Sequence[float], b: Sequence[float],
                 confidence: float = CONFIDENCE) -> Paired:
    """Median of the per-round ratios b/a (drift hits both sides of a round) with the sign
    test's CI for the rounds' effective number (see DEPENDENCE_Z)."""
    da, db = _clean(a, "A value"), _clean(b, "B value")
    if da.size != db.size:
        raise StatsError(f"unequal sizes ({da.size} A and {db.size} B): rounds must pair up")
    if np.any(da == 0):
        raise StatsError("an A value is 0: ratio undefined")
    ratios = db / da
    n = int(ratios.size)
    _median_ci(ratios, confidence)        # refuses too few rounds
    med = _quantiles(ratios, [0.5])[0]
    logs = np.log(ratios)
    center = _quantiles(logs, [0.5])[0]
    rho = side_dependence(logs - center)
    used = rho if rho > DEPENDENCE_Z / np.sqrt(n) else 0.0
    m = max(1, min(n, int(np.floor(n * (1.0 - used) / (1.0 + used)))))
    spread = 1.4826 * _quantiles(np.abs(logs - center), [0.5])[0]
    # (rounds alike to the last digits have no spread: any that differ beyond is outlying)
    outlying = int(np.sum(np.abs(logs - center) > max(OUTLYING * spread, 1e-9)))
    return Paired(n=n, median=med, ci=_effective_ci(ratios, m, confidence),
                  ratios=tuple(float(x) for x in ratios), effective=m, dependence=rho,
                  spread=spread, outlying=outlying)


def side_dependence(deviations: Sequence[float]) -> float:
    """Lag-1 correlation of the signs of ``deviations`` (from a median: mean about 0);
    0 when fewer than 3 are off the median."""
    signs = np.sign(np.asarray(deviations, dtype=float))
    if np.count_nonzero(signs) < 3:
        return 0.0
    return float(np.sum(signs[:-1] * signs[1:]) / np.sum(signs * signs))


def _effective_ci(data: np.ndarray, m: int, confidence: float) -> MedianCI:
    """The interval of the median of ``data`` as ``m`` independent values give it: the
    order statistics of the same quantiles as m values' interval (the sign test's for m,
    or m's minimum and maximum below the fewest a ``confidence`` interval needs), with
    m's coverage."""
    n = int(data.size)
    if m >= n:
        return _median_ci(data, confidence)
    low_m, coverage = _covering_rank(m, confidence) if m >= 2 else (1, 0.0)
    low_rank = max(1, int(np.floor(low_m * (n + 1) / (m + 1))))
    high_rank = n + 1 - low_rank
    ordered = np.sort(data)
    return MedianCI(low=float(ordered[low_rank - 1]), high=float(ordered[high_rank - 1]),
                    low_rank=low_rank, high_rank=high_rank,
                    confidence=coverage)


# --- ministat: Student's t as FreeBSD's ministat computes it -----------------------------
#
# `kcross compare --format ministat` prints the numbers ministat(1) prints for the same
# samples, so a user who judged results with ministat can check kcross against it.  This
# section is ministat's arithmetic, kept apart from the verdict rule above (which kcross
# itself uses): a mean and a pooled-variance Student's t assume normal samples, which
# timings are not.  What ministat does, and where kcross differs on purpose:
# - Median is the upper median, sorted[n // 2] (not the type-7 quantile of `median`);
# - Stddev has n - 1 in the denominator; ministat accumulates sum(x) and sum(x^2) and
#   subtracts, which loses every digit when the spread is small against the values
#   (1e9 + noise of 0.001 gives a standard deviation of 16, or -nan for equal values).
#   Here the mean is the correctly rounded sum (math.fsum) over n and the variance a
#   compensated two-pass sum, so both are accurate whatever the offset; where ministat's
#   own digits survive, the printed numbers are the same (python/tests/test_ministat.py
#   checks this against the real ministat);
# - the test: pooled s = sqrt(((n1-1) v1 + (n2-1) v2) / (n1 + n2 - 2)), the half-width
#   t * s * sqrt(1/n1 + 1/n2), "Difference" when |avg2 - avg1| exceeds it.  t comes from
#   ministat's table, degrees of freedom 1..100 and the normal quantile beyond 100;
#   its levels are 80, 90, 95, 98, 99 and 99.5 %.  The table's values are the t quantiles
#   of 1 - (1 - level)/2 rounded to 3 decimals, except that ministat's "99.5" column holds
#   the 0.999 quantile (a two-sided 99.8 % interval) and seven entries are rounded
#   differently; kcross reproduces ministat's table, quirks included, under its labels.

MINISTAT_LEVELS = (80.0, 90.0, 95.0, 98.0, 99.0, 99.5)
MINISTAT_MAX_DF = 100
MINISTAT_MIN_N = 3
# The quantile each of ministat's columns holds (see above: 99.5 is the 0.999 quantile).
_MINISTAT_QUANTILE = {80.0: 0.90, 90.0: 0.95, 95.0: 0.975, 98.0: 0.99, 99.0: 0.995,
                      99.5: 0.999}
# (degrees of freedom, level) -> ministat's value where it is not the quantile rounded to
# 3 decimals.  Checked against /usr/bin/ministat's own table by test_ministat.py.
_MINISTAT_TABLE_QUIRKS = {(1, 99.5): 318.313, (7, 99.5): 4.782, (8, 99.5): 4.499,
                          (9, 99.5): 4.296, (10, 99.5): 4.143, (11, 99.5): 4.024,
                          (12, 99.5): 3.929}


def ministat_t(df: int, level: float) -> float:
    """The t value ministat uses for ``df`` degrees of freedom at its confidence ``level`` (%)."""
    if level not in _MINISTAT_QUANTILE:
        raise StatsError(f"ministat has no {level:g}% level (it has "
                         f"{', '.join(f'{x:g}' for x in MINISTAT_LEVELS)})")
    if df < 1:
        raise StatsError(f"{df} degrees of freedom: need at least 1")
    quirk = _MINISTAT_TABLE_QUIRKS.get((df, level))
    if quirk is not None:
        return quirk
    from .special import ndtri, stdtrit

    q = _MINISTAT_QUANTILE[level]
    exact = float(ndtri(q)) if df > MINISTAT_MAX_DF else float(stdtrit(df, q))
    return round(exact, 3)


@dataclass(frozen=True)
class Vitals:
    """The line ministat prints for one data set."""

    n: int
    min: float
    max: float
    median: float     # ministat's: the upper median, sorted[n // 2]
    avg: float
    stddev: float     # sample standard deviation (n - 1), computed stably
    variance: float


def _finite(samples: Sequence[float], what: str) -> np.ndarray:
    """ministat's input: finite numbers, negative ones too (it reads any column of numbers)."""
    data = _as_array(samples, what)
    bad = np.flatnonzero(~np.isfinite(data))
    if bad.size:  # counted from 1, like the lines of the file it came from
        raise StatsError(f"{what} {bad[0] + 1} is {data[bad[0]]} (not a finite number)")
    if data.size < MINISTAT_MIN_N:
        raise StatsError(f"n={data.size}: ministat needs at least {MINISTAT_MIN_N} values")
    return data


def stable_variance(samples: Sequence[float]) -> tuple[float, float]:
    """Mean and sample variance (n - 1) that stay accurate for any offset.

    The mean is the correctly rounded sum over n; the variance the two-pass sum of
    squared deviations with its compensation term (Chan, Golub and LeVeque), so
    1e9 + noise keeps the noise's variance where sum(x^2) - sum(x)^2/n keeps nothing.
    """
    import math

    data = np.asarray(samples, dtype=np.float64)
    n = int(data.size)
    if n < 2:
        raise StatsError(f"n={n}: a variance needs at least 2 values")
    mean = math.fsum(data.tolist()) / n
    dev = data - mean
    total = math.fsum(dev.tolist())
    squares = math.fsum((dev * dev).tolist())
    return mean, max(0.0, (squares - total * total / n) / (n - 1))


def vitals(samples: Sequence[float], what: str = "value") -> Vitals:
    """N, Min, Max, Median (upper), Avg and Stddev of a data set, as ministat defines them."""
    data = np.sort(_finite(samples, what))
    mean, var = stable_variance(data.tolist())
    return Vitals(n=int(data.size), min=float(data[0]), max=float(data[-1]),
                  median=float(data[data.size // 2]), avg=mean, stddev=float(np.sqrt(var)),
                  variance=var)


@dataclass(frozen=True)
class StudentT:
    """ministat's comparison of a data set with the first (base) one."""

    level: float          # ministat's label (%)
    df: int
    t: float              # from ministat's table
    difference: float     # avg(new) - avg(base)
    error: float          # t * pooled_s * sqrt(1/n_base + 1/n_new): the interval's half-width
    pooled_s: float
    base_avg: float
    significant: bool     # |difference| > error: "Difference at ...% confidence"

    @property
    def percent(self) -> float:
        return _percent_of(self.difference, self.base_avg)

    @property
    def percent_error(self) -> float:
        return _percent_of(self.error, self.base_avg)


def _percent_of(value: float, base: float) -> float:
    if base == 0.0:  # what C's division gives, so the line reads as ministat's would
        return float("nan") if value == 0.0 else float(np.copysign(np.inf, value))
    return value * 100.0 / base


def student_t(base: Sequence[float] | Vitals, new: Sequence[float] | Vitals,
              level: float = 95.0) -> StudentT:
    """ministat's Student's t of ``new`` against ``base`` at its confidence ``level`` (%)."""
    a = base if isinstance(base, Vitals) else vitals(base, "base value")
    b = new if isinstance(new, Vitals) else vitals(new, "new value")
    df = a.n + b.n - 2
    t = ministat_t(df, level)
    pooled = float(np.sqrt(((a.n - 1) * a.variance + (b.n - 1) * b.variance) / df))
    error = t * pooled * float(np.sqrt(1.0 / a.n + 1.0 / b.n))
    difference = b.avg - a.avg
    return StudentT(level=level, df=df, t=t, difference=difference, error=error,
                    pooled_s=pooled, base_avg=a.avg, significant=abs(difference) > error)
