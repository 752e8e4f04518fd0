"""A run's samples grouped by process and each process's median: numpy's grouping and the
block of equal-length processes give the figures of the one-at-a-time rule to the bit
(stats._quantiles on each process's samples, a dict of lists in process order)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kcross import stats


def _by_rule(groups: list[list[float]]) -> list[float]:
    return [stats._quantiles(stats._clean(g), [0.5])[0] for g in groups]


def _by_dict(samples: list[float], processes: list[int]) -> list[list[float]]:
    found: dict[int, list[float]] = {}
    for p, x in zip(processes, samples, strict=True):
        found.setdefault(int(p), []).append(float(x))
    return [found[p] for p in sorted(found)]


@pytest.mark.parametrize("n", [1, 2, 3, 11, 12, 4096, 4097])
def test_process_medians_are_the_rules_to_the_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    for trial in range(40):
        k = int(rng.integers(2, 12))
        groups = [list(rng.lognormal(3, 1, n)) for _ in range(k)]
        if trial % 4 == 1:   # ties
            groups = [[float(round(x)) for x in g] for g in groups]
        if trial % 4 == 2:   # zeros, and a -0.0 in the middle
            groups = [[0.0] * n for _ in range(k)]
            groups[0] = [-0.0] * n
        got, want = stats.process_medians(groups), _by_rule(groups)
        assert [(x, math.copysign(1, x)) for x in got] == \
            [(x, math.copysign(1, x)) for x in want]
        assert all(type(x) is float for x in got)


def test_unequal_processes_and_bad_ones_take_the_rule() -> None:
    assert stats.process_medians([[1.0, 2.0, 3.0], [4.0, 5.0]]) == [2.0, 4.5]
    with pytest.raises(stats.StatsError, match="not a finite number"):
        stats.process_medians([[1.0, math.nan], [2.0, 3.0]])
    with pytest.raises(stats.StatsError):
        stats.process_medians([[1.0, [2.0]], [3.0, 4.0]])  # type: ignore[list-item]


def test_groups_of_is_the_dict_of_lists() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        k, n = int(rng.integers(1, 7)), int(rng.integers(1, 40))
        marks = [int(x) for x in rng.choice([0, 2, 3, 7, 11, 40], size=k, replace=False)]
        samples = [float(x) for x in rng.lognormal(2, 1, k * n)]
        processes = [marks[i // n] for i in range(k * n)]
        order = rng.permutation(k * n)
        samples = [samples[i] for i in order]
        processes = [processes[i] for i in order]
        assert [list(map(float, g)) for g in stats.groups_of(samples, processes)] == \
            _by_dict(samples, processes)
    assert stats.groups_of([], []) == []


def test_a_lazy_ci_is_the_eager_one() -> None:
    rng = np.random.default_rng(3)
    samples = [float(x) for x in rng.lognormal(3, 0.2, 110)]
    processes = [i // 11 for i in range(110)]
    lazy = stats.summarize(samples, None, processes=processes)
    eager = stats._process_ci(lazy.samples, lazy.median, tuple(processes), stats.CONFIDENCE)
    assert lazy.ci == eager and lazy.as_dict()["ci_low"] == eager.low
