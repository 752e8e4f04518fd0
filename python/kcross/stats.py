"""Robust summaries of per-sample ns/op timings.

Timings of kernel crossings are skewed and occasionally disturbed by
interrupts, so kcross reports the median with a distribution-free confidence
interval (order statistics, exact binomial coverage) instead of a mean and a
normal-theory interval.  Every function refuses input it cannot summarise
honestly by raising :class:`StatsError`; callers show that message where the
number would have been, so a meaningless figure is never printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class StatsError(ValueError):
    """The samples cannot be summarised; the message is short enough for a table cell."""


@dataclass(frozen=True)
class Description:
    """Location and spread of one benchmark's samples (ns/op)."""

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


def _clean(samples: Sequence[float]) -> np.ndarray:
    """Return the samples as float64, or raise for empty, non-finite or negative input."""
    try:
        data = np.asarray(samples, dtype=np.float64)
    except (TypeError, ValueError):
        raise StatsError("samples are not numbers") from None
    if data.ndim != 1:
        raise StatsError("samples must be a flat list")
    if data.size == 0:
        raise StatsError("no samples")
    bad = np.flatnonzero(~np.isfinite(data))
    if bad.size:
        raise StatsError(f"sample {bad[0]} is {data[bad[0]]} (not a finite number)")
    negative = np.flatnonzero(data < 0)
    if negative.size:
        i = negative[0]
        raise StatsError(f"sample {i} is negative ({data[i]:.3g}): overhead subtraction "
                         "exceeded the measurement")
    return data


def describe(samples: Sequence[float]) -> Description:
    """Median, minimum and count; needs at least one valid sample."""
    data = _clean(samples)
    return Description(n=int(data.size), median=float(np.median(data)), min=float(data.min()))


def relative_spread(samples: Sequence[float]) -> float:
    """Interquartile range divided by the median: a scale-free noise figure."""
    data = _clean(samples)
    median = float(np.median(data))
    if median == 0.0:
        raise StatsError("median is 0: relative spread undefined")
    q1, q3 = np.percentile(data, [25, 75])
    return float((q3 - q1) / median)


def min_samples_for(confidence: float = 0.95) -> int:
    """Smallest n whose widest interval (minimum to maximum) reaches ``confidence``."""
    _check_level(confidence)
    n = 1
    while 1.0 - 2.0 * 0.5 ** n < confidence:
        n += 1
    return n


def median_ci(samples: Sequence[float], confidence: float = 0.95) -> MedianCI:
    """Distribution-free confidence interval of the median.

    The number of samples below the true median is Binomial(n, 1/2), so the
    interval [x_(l), x_(n+1-l)] covers the median with probability
    1 - 2 * P(B <= l - 1).  The narrowest symmetric interval whose coverage
    still reaches ``confidence`` is chosen; that coverage is reported.
    """
    _check_level(confidence)
    data = _clean(samples)
    n = int(data.size)
    need = min_samples_for(confidence)
    if n < need:
        raise StatsError(f"n={n}: too few for a {confidence:.0%} CI (need {need})")
    # scipy.special.bdtr is the binomial CDF that scipy.stats.binom.cdf wraps;
    # it is used directly, and imported here, because importing scipy.stats
    # costs over a second on every kcross invocation.
    from scipy.special import bdtr

    ranks = np.arange(1, n // 2 + 1)               # candidate lower ranks l
    coverage = 1.0 - 2.0 * bdtr(ranks - 1, n, 0.5)
    ok = ranks[coverage >= confidence]
    low_rank = int(ok.max())                       # ok is non-empty since n >= need
    high_rank = n + 1 - low_rank
    ordered = np.sort(data)
    return MedianCI(low=float(ordered[low_rank - 1]), high=float(ordered[high_rank - 1]),
                    low_rank=low_rank, high_rank=high_rank,
                    confidence=float(coverage[low_rank - 1]))


def _check_level(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise StatsError(f"confidence must be between 0 and 1, got {confidence}")
