"""Statistics against hand-checked values (exact binomial sums computed with math.comb)."""

from __future__ import annotations

import math

import pytest

from kcross.stats import StatsError, describe, median_ci, min_samples_for, relative_spread


def coverage(n: int, low_rank: int) -> float:
    """1 - 2 P(B <= l-1), B ~ Binomial(n, 1/2), exactly, without scipy."""
    return 1 - 2 * sum(math.comb(n, k) for k in range(low_rank)) / 2 ** n


def test_n10_uses_ranks_2_and_9() -> None:
    # Hand check: P(B<=1) = 11/1024, coverage 1 - 22/1024 = 0.978515625;
    # ranks 3..8 would give 1 - 2*56/1024 = 0.890625 < 0.95.
    ci = median_ci([7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 4.0, 6.0])
    assert (ci.low_rank, ci.high_rank) == (2, 9)
    assert (ci.low, ci.high) == (2.0, 9.0)
    assert ci.confidence == pytest.approx(0.978515625, abs=1e-12)


def test_n6_is_the_smallest_sample_with_a_95_interval() -> None:
    ci = median_ci([6, 5, 4, 3, 2, 1])
    assert (ci.low, ci.high, ci.low_rank, ci.high_rank) == (1, 6, 1, 6)
    assert ci.confidence == pytest.approx(1 - 2 / 64)
    assert min_samples_for(0.95) == 6
    assert min_samples_for(0.99) == 8  # 1 - 2/2**8 = 0.992; 2/2**7 leaves 0.984


@pytest.mark.parametrize("n", [6, 11, 30, 100, 1001])
def test_interval_is_the_narrowest_reaching_95(n: int) -> None:
    ci = median_ci([float(i) for i in range(n)])
    assert ci.low_rank + ci.high_rank == n + 1
    assert ci.confidence == pytest.approx(coverage(n, ci.low_rank), rel=1e-9)
    assert ci.confidence >= 0.95
    assert coverage(n, ci.low_rank + 1) < 0.95
    assert (ci.low, ci.high) == (ci.low_rank - 1, ci.high_rank - 1)


def test_n100_known_ranks() -> None:
    ci = median_ci(list(range(100)))
    assert (ci.low_rank, ci.high_rank) == (40, 61)
    assert ci.confidence == pytest.approx(0.9648, abs=1e-4)


def test_describe_and_spread() -> None:
    d = describe([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (d.n, d.median, d.min) == (5, 3.0, 1.0)
    # quartiles (linear interpolation) of 1..5 are 2 and 4: IQR/median = 2/3
    assert relative_spread([5.0, 1.0, 3.0, 2.0, 4.0]) == pytest.approx(2 / 3)
    assert describe([0.0]).median == 0.0  # a single sample has a median, not a CI


@pytest.mark.parametrize("samples, message", [
    ([1.0, 2.0, 3.0], "n=3: too few for a 95% CI (need 6)"),
    ([], "no samples"),
    ([1.0] * 9 + [float("nan")], "sample 9 is nan"),
    ([1.0] * 9 + [float("inf")], "sample 9 is inf"),
    ([1.0] * 5 + [-0.2] + [1.0] * 4, "sample 5 is negative"),
    (["x"] * 8, "not numbers"),
])
def test_bad_input_raises_with_a_clear_message(samples: list, message: str) -> None:
    with pytest.raises(StatsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        median_ci(samples)


def test_describe_rejects_what_median_ci_rejects() -> None:
    for bad in ([], [float("nan")], [-1.0]):
        with pytest.raises(StatsError):
            describe(bad)
    with pytest.raises(StatsError, match="median is 0"):
        relative_spread([0.0, 0.0, 0.0])
    with pytest.raises(StatsError, match="confidence"):
        median_ci([1.0] * 10, confidence=1.5)
