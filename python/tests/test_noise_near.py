"""The run-to-run noise of runs close in time, at any number of runs: kcross.stats.NearRuns
sums the pairs of runs started at most a window apart without listing them (10,000 stored
runs of one machine, copies of 300 imports, have 180,000 such pairs; kcross history took a
minute listing them once per change shown).  Its figures must be between_runs_near's of
the pairs listed one by one, whatever the starts (ties, unknown ones, differences at the
window's edge), the groups and the runs left out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from kcross import stats
from kcross.judge import noise


def listed(groups: list[tuple[list[float], list[float], list[float | None]]], window: float,
           leave_out: set[int]) -> list[tuple[float, float, float, float]]:
    """The pairs one by one, as the judge listed them before: within a group, both starts
    known, no further apart than the window, neither left out."""
    pairs, first = [], 0
    for logs, var, starts in groups:
        kept = [i for i in range(len(logs)) if first + i not in leave_out]
        for i, j in itertools.combinations(kept, 2):
            ti, tj = starts[i], starts[j]
            if ti is not None and tj is not None and abs(ti - tj) <= window:
                pairs.append((logs[i], logs[j], var[i], var[j]))
        first += len(logs)
    return pairs


def random_groups(rng: np.random.Generator) -> list[tuple[list[float], list[float],
                                                          list[float | None]]]:
    groups = []
    for _ in range(int(rng.integers(1, 3))):
        n = int(rng.integers(0, 40))
        base = 1.7e9 + float(rng.integers(0, 10))
        step = float(rng.choice([0.1, 7.3, 30.0, 600.0]))
        # starts on a grid (differences exactly the window), copies (ties), fractions, unknown
        starts: list[float | None] = [
            None if rng.random() < 0.1 else
            base + step * int(rng.integers(0, 12)) + float(rng.choice([0.0, 0.0, 1e-7, 0.3]))
            for _ in range(n)]
        logs = list(4.6 + np.cumsum(rng.normal(0, 0.01, n)))
        if n > 3:
            logs[1] = logs[0]                 # a run of the same value: counted once
        var = [float(v) for v in rng.uniform(0, 1e-4, n)]
        if n > 3:
            var[1] = var[0]
        groups.append((logs, var, starts))
    return groups


@pytest.mark.parametrize("seed", range(6))
def test_near_runs_are_the_listed_pairs(seed: int) -> None:
    rng = np.random.default_rng(7000 + seed)
    for _ in range(60):
        groups = random_groups(rng)
        size = sum(len(g[0]) for g in groups)
        near = stats.NearRuns(groups)
        for window in (30.0, 60.0, 600.0, 1200.0, 14.6, 1e9):
            for k in range(4):
                leave_out = set(rng.choice(size, size=min(k, size), replace=False).tolist()) \
                    if size else set()
                pairs = listed(groups, window, leave_out)
                count, found = near.pairs_and_variance(window, leave_out)
                assert count == len(pairs)
                if len(pairs) < 2:
                    assert found is None
                    continue
                var, df = stats.between_runs_near(pairs)
                assert found is not None
                assert found[1] == df
                assert found[0] == pytest.approx(var, rel=1e-9, abs=1e-15)


def test_a_run_to_leave_out_must_be_one() -> None:
    near = stats.NearRuns([([1.0, 2.0], [0.0, 0.0], [0.0, 1.0])])
    with pytest.raises(stats.StatsError):
        near.pairs_and_variance(30.0, {2})


def test_the_estimate_is_the_listed_pairs_estimate() -> None:
    """noise.Runs, as history uses it (many changes, two runs left out each), against the
    estimate of the points left after leaving them out."""
    rng = np.random.default_rng(11)
    points = [noise.RunPoint(f"run {i}", 4.6 + rng.normal(0, 0.01), 1e-6,
                             started=1.7e9 + 600.0 * (i % 30)) for i in range(300)]
    runs = noise.Runs([points])
    for a, b in ((0, 1), (5, 299), (17, 18), (100, 130)):
        apart = abs((points[b].started or 0.0) - (points[a].started or 0.0))
        alone = [p for i, p in enumerate(points) if i not in (a, b)]
        pairs = listed([([p.log for p in alone], [p.var for p in alone],
                         [p.started for p in alone])], max(2.0 * apart, noise.NEAR_WINDOW_S),
                       set())
        want = stats.between_runs_near(pairs)
        got = runs.estimate("test", apart=apart, leave_out={a, b})
        assert got.runs == 298 and got.df == want[1]
        assert got.var == pytest.approx(want[0], rel=1e-9)
        assert type(got.var) is float and got.within == max(2.0 * apart, noise.NEAR_WINDOW_S)


def test_thousands_of_runs_started_together_cost_their_number() -> None:
    """20,000 runs within one window: 200 million pairs, never listed (a hang guard, not a
    timing: listing them took minutes)."""
    rng = np.random.default_rng(3)
    n = 20_000
    points = [noise.RunPoint(f"run {i}", 4.6 + rng.normal(0, 0.01), 1e-6,
                             started=1.7e9 + float(i % 7)) for i in range(n)]
    runs = noise.Runs([points])
    for k in range(20):
        found = runs.estimate("test", apart=5.0, leave_out={k, n - 1 - k})
        assert found.within == noise.NEAR_WINDOW_S
        assert found.var == pytest.approx(0.01 ** 2, rel=0.1)
        assert found.df == n - 3


def test_the_pairs_at_the_windows_edge_are_the_subtractions() -> None:
    """Starts a window apart as the subtraction says, where a bound found by bisection
    (start - window, rounded) says otherwise: each run's partners are the pairs' test's."""
    rng = np.random.default_rng(5)
    later = 1.7e9 + rng.uniform(0, 1000, 20_000)
    window = rng.uniform(30, 2000, 20_000)
    earlier = later - window + rng.integers(-3, 4, 20_000) * 2.0 ** -22
    edge = ((later - earlier) <= window) != (earlier >= later - window)
    assert edge.sum() > 100                   # the rounding this test is about
    for t_late, t_early, w in list(zip(later[edge], earlier[edge], window[edge],
                                       strict=True))[:60]:
        starts: list[float | None] = [float(t_early), float(t_late), float(t_early) - 0.5,
                                      float(t_late) + 1e-3, float(t_early)]
        logs = list(4.6 + rng.normal(0, 0.01, 5))
        groups = [(logs, [1e-6] * 5, starts)]
        near = stats.NearRuns(groups)
        for leave_out in (set(), {0}, {1, 4}):
            count, _ = near.pairs_and_variance(float(w), leave_out)
            assert count == len(listed(groups, float(w), leave_out))


def test_runs_of_one_figure_have_no_noise_exactly() -> None:
    """Groups each of one figure (a planted change between them, no noise within): 0, not
    a rounding's remainder, which would judge what no noise cannot (kcross aa --plant)."""
    rng = np.random.default_rng(2)
    logs = [4.600170018, 4.600170018 + np.log(1.05)]
    groups = [([logs[g]] * 12, [0.0] * 12, [1.7e9 + float(i) + rng.uniform(0, 1e-3)
                                            for i in range(12)]) for g in range(2)]
    near = stats.NearRuns(groups)
    for leave_out in (set(), {3}, {0, 13}):
        count, found = near.pairs_and_variance(30.0, leave_out)
        assert count == len(listed(groups, 30.0, leave_out)) and found is not None
        assert found[0] == 0.0
