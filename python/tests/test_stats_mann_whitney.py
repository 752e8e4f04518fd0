"""kcross.stats computes Mann-Whitney U's p-value itself (importing scipy.stats cost every
verdict on runs of one process half a second): it must give what scipy.stats gives for the
same samples, as the harness's C statistics must give what kcross.stats gives
(test_stats_agreement.py).  The reference is what kcross called before: scipy.stats'
``mannwhitneyu(a, b, alternative="two-sided", method="auto")``, and for tied samples of
EXACT_TIES_UP_TO or fewer in all its exact ``permutation_test`` of U; each path of the three
(the normal approximation, U's exact distribution without ties, the permutation p with ties)
on many random samples, small and large, tied and not."""

from __future__ import annotations

import numpy as np
import pytest
from kcross.stats import EXACT_TIES_UP_TO, EXACT_U_UP_TO, _mann_whitney_p, sample_test


def scipy_p(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import mannwhitneyu, permutation_test

    ties = np.unique(np.concatenate([a, b])).size < a.size + b.size
    if ties and a.size + b.size <= EXACT_TIES_UP_TO:
        def u(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
            return np.asarray(mannwhitneyu(x, y, axis=axis, method="asymptotic").statistic)

        return float(permutation_test((a, b), u, permutation_type="independent",
                                      alternative="two-sided", n_resamples=np.inf,
                                      vectorized=True).pvalue)
    return float(mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


def samples(rng: np.random.Generator, n: int, shift: float, digits: float) -> np.ndarray:
    """n timings near 100 (+shift), rounded to 1/digits: few digits tie often."""
    return np.round((100.0 + shift + rng.standard_normal(n) * 2.0) * digits) / digits


def path(a: np.ndarray, b: np.ndarray) -> str:
    ties = np.unique(np.concatenate([a, b])).size < a.size + b.size
    if ties:
        return "permutation" if a.size + b.size <= EXACT_TIES_UP_TO else "normal"
    return "normal" if min(a.size, b.size) > EXACT_U_UP_TO else "exact"


@pytest.mark.parametrize("seed", range(4))
def test_the_p_value_is_scipys_on_random_samples(seed: int) -> None:
    """Small and large sizes, unequal ones, ties from none to nearly all, shifts from none
    to complete separation: the same p to the last bit or two."""
    rng = np.random.default_rng(20261128 + seed)
    seen: dict[str, int] = {}
    while sum(seen.values()) < 250:
        n1 = int(rng.integers(2, 12 if rng.random() < 0.5 else 60))
        n2 = int(rng.integers(2, 12 if rng.random() < 0.5 else 60))
        digits = float(rng.choice([0.5, 1.0, 4.0, 1e6]))
        shift = float(rng.choice([0.0, 0.5, 2.0, 10.0]))
        a, b = samples(rng, n1, 0.0, digits), samples(rng, n2, shift, digits)
        if path(a, b) == "permutation" and n1 + n2 > 16:
            continue   # scipy enumerates up to C(20, 10) splits: seconds each
        expected, got = scipy_p(a, b), _mann_whitney_p(a, b)
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-300), (a.tolist(), b.tolist())
        seen[path(a, b)] = seen.get(path(a, b), 0) + 1
    assert min(seen.get(p, 0) for p in ("normal", "exact", "permutation")) >= 20, seen


@pytest.mark.parametrize(("a", "b"), [
    ([1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]),   # separated, smallest sizes
    ([5.0] * 6, [5.0] * 5 + [6.0]),                             # nearly all tied
    ([1.0, 1.0, 2.0, 2.0], [2.0, 3.0, 3.0, 3.0]),               # test_verdicts' tied pair
    ([3.0, 1.0, 2.0], [2.0, 3.0, 1.0]),                         # the same values: p = 1
    (list(range(8)), [x + 0.5 for x in range(8)]),              # exact, interleaved
    (list(range(9)), [x + 0.5 for x in range(9)]),              # normal, the boundary
    (list(range(8)), [x * 3.0 for x in range(300)]),            # exact, one side large
    ([1.0] * 30 + [2.0] * 30, [2.0] * 30 + [3.0] * 31),         # normal, heavy ties
    ([1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0, 6.0],                  # permutation, n = 16
     [2.0, 3.0, 4.0, 5.0, 6.0, 6.0, 7.0, 8.0]),
])
def test_the_p_value_is_scipys_at_the_edges(a: list[float], b: list[float]) -> None:
    """Each way round (a side's U is the other's complement)."""
    x, y = np.asarray(a), np.asarray(b)
    assert _mann_whitney_p(x, y) == pytest.approx(scipy_p(x, y), rel=1e-12)
    assert _mann_whitney_p(y, x) == pytest.approx(scipy_p(y, x), rel=1e-12)


def test_a_verdict_on_one_process_loads_no_scipy_stats() -> None:
    """sample_test, the verdict's test for sides of one process, in a fresh interpreter."""
    import subprocess
    import sys

    from conftest import HANG

    probe = ("import sys\n"
             "from kcross.stats import sample_test\n"
             "for a, b in (([1, 1, 2, 2, 3, 3], [2, 3, 3, 4, 4, 5]),\n"
             "             (list(range(11)), [x + 0.3 for x in range(11)]),\n"
             "             ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0])):\n"
             "    sample_test(a, b)\n"
             "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=HANG, check=True)
    assert proc.stdout.strip() == "[]"
    assert sample_test([1, 1, 2, 2, 3, 3], [2, 3, 3, 4, 4, 5]).p > 0
