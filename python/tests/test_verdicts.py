"""The verdict rule of kcross.stats: Mann-Whitney U, Holm-Bonferroni, ratio CI, paired ratios."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kcross import stats
from kcross.stats import StatsError


def test_holm_matches_the_step_down_by_hand() -> None:
    # sorted: 0.01*4=0.04, 0.03*3=0.09, 0.04*2=0.08 -> 0.09 (monotone), 0.5*1
    assert stats.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0]          # capped at 1
    assert stats.holm([]) == []
    with pytest.raises(StatsError):
        stats.holm([1.5])


def test_a_clear_shift_is_significant_with_a_ratio_interval_around_it() -> None:
    rng = np.random.default_rng(7)
    a = rng.lognormal(3, 0.02, 201)
    b = rng.lognormal(3, 0.02, 201) * 1.10
    v = stats.compare(a, b)
    assert v.significant and v.p < 1e-10
    assert v.ratio_low < v.ratio < v.ratio_high
    assert 1.05 < v.ratio_low and v.ratio_high < 1.15
    assert v.delta == pytest.approx(v.ratio - 1)
    assert stats.compare(a, b) == v       # fixed seed: the same samples, the same interval


def test_the_same_distribution_is_called_different_about_alpha_of_the_time() -> None:
    rng = np.random.default_rng(11)
    calls = sum(stats.compare(rng.lognormal(3, 0.1, 30), rng.lognormal(3, 0.1, 30)).significant
                for _ in range(300))
    assert calls / 300 < 0.10   # nominal 0.05; 300 draws: far above would be a broken test


def test_too_few_samples_is_an_error_not_no_difference() -> None:
    with pytest.raises(StatsError, match="too few"):
        stats.compare([1, 2, 3], [4, 5, 6])      # best p is 0.1
    assert stats.smallest_p(4, 4) == pytest.approx(2 / 70)
    stats.compare([1, 2, 3, 4], [5, 6, 7, 8])    # 4 and 4 can reach 0.05


@pytest.mark.parametrize("bad", [[1.0, math.nan, 2, 3, 4], [1.0, math.inf, 2, 3, 4], [-1, 2, 3, 4, 5]])
def test_bad_numbers_are_refused(bad: list[float]) -> None:
    with pytest.raises(StatsError):
        stats.compare(bad, [1, 2, 3, 4, 5])


def test_constant_sides() -> None:
    same = stats.compare([400.0] * 10, [400.0] * 10)
    assert not same.significant and same.p == 1.0 and same.note
    differ = stats.compare([400.0] * 10, [348.0] * 10)     # lab counts: exact, both constant
    assert differ.significant and differ.ratio == pytest.approx(0.87)
    assert differ.ratio_low == differ.ratio_high == pytest.approx(0.87)
    with pytest.raises(StatsError, match="median is 0"):
        stats.compare([0.0] * 10, [1.0] * 10)


def test_compare_many_corrects_across_pairs_and_keeps_errors_in_place() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(100, 1, 40)
    pairs = [(a, rng.normal(100, 1, 40)) for _ in range(5)] + [([1, 2], [3, 4])]
    found = stats.compare_many(pairs)
    assert isinstance(found[-1], StatsError)
    verdicts = [v for v in found if isinstance(v, stats.Verdict)]
    assert [v.p_adjusted for v in verdicts] == pytest.approx(stats.holm([v.p for v in verdicts]))
    assert all(v.significant == (v.p_adjusted < v.alpha) for v in verdicts)


def test_geomean() -> None:
    assert stats.geomean([1.0, 4.0]) == pytest.approx(2.0)
    with pytest.raises(StatsError):
        stats.geomean([1.0, 0.0])


def test_paired_ratio() -> None:
    a = [10.0, 20, 30, 40, 50, 60, 70]
    paired = stats.paired_ratio(a, [x * 1.1 for x in a])
    assert paired.median == pytest.approx(1.1) and paired.significant
    with pytest.raises(StatsError, match="unequal sizes"):
        stats.paired_ratio(a, a[:-1])
    with pytest.raises(StatsError, match="too few"):
        stats.paired_ratio(a[:3], a[:3])


def test_large_samples_neither_overflow_nor_exhaust_memory() -> None:
    """C(1200, 600) is beyond a double, and 4000 resamples of 20000 would be 2.5 GB at once."""
    import resource

    assert stats.smallest_p(600, 600) == 0.0 or stats.smallest_p(600, 600) < 1e-300
    rng = np.random.default_rng(5)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    v = stats.compare(rng.normal(100, 1, 20000), rng.normal(101, 1, 20000))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert v.significant and grown_mb < 400, grown_mb


def test_ties_in_small_samples_take_the_exact_permutation_p() -> None:
    """The normal approximation gives 0.047 for these; no arrangement gives less than 0.086."""
    v = stats.compare([1, 1, 2, 2], [2, 3, 3, 3])
    assert v.p == pytest.approx(0.0857, abs=1e-3) and not v.significant
    constant = stats.compare([400.0] * 4, [348.0] * 4)
    assert constant.p >= stats.smallest_p(4, 4)


def test_a_verdict_never_contradicts_its_interval() -> None:
    """Mann-Whitney can find one side tends larger while the medians' ratio CI includes 1:
    then no difference is shown, and a note says why."""
    rng = np.random.default_rng(9)
    a = rng.normal(100, 1, 400)
    b = np.concatenate([rng.normal(100, 1, 200), rng.normal(100, 1, 200) + 0.25])
    b.sort()
    for v in [stats.compare(a, b)] + [x for x in stats.compare_many([(a, b)])
                                      if isinstance(x, stats.Verdict)]:
        interval_excludes_1 = v.ratio_low > 1 or v.ratio_high < 1
        assert v.significant == (v.p_adjusted < v.alpha and interval_excludes_1)
        if v.p_adjusted < v.alpha and not interval_excludes_1:
            assert v.note and "CI includes 1" in v.note


def test_proportion_ci_is_clopper_pearson() -> None:
    from scipy.stats import beta

    low, high = stats.proportion_ci(3, 40)
    assert low == pytest.approx(beta.ppf(0.025, 3, 38)) and high == pytest.approx(beta.ppf(0.975, 4, 37))
    with pytest.raises(StatsError):
        stats.proportion_ci(5, 0)
