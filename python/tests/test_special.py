"""kcross.special computes the distributions of kcross.stats that scipy.special computed
(importing scipy cost every comparison a quarter of a second): its values must be
scipy.special's on grids over every range kcross.stats asks, to 1e-12 relative where the
value is 1e-300 or more, and, where scipy.special itself errs, the true ones: against exact
integer sums (the binomial) and values computed to 1,200 bits (special-reference.json, made
by data/make-special-reference), each function to the bound its docstring states."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG, PYTHON_DIR
from kcross import special
from kcross.stats import EXACT_COVERAGE_UP_TO, _covering_rank, _median_ranks
from scipy import special as scipy_special

EPS = sys.float_info.epsilon
REFERENCE = json.loads((Path(__file__).parent / "data" / "special-reference.json").read_text())
SCIPY_AGREES = 1e-12                  # the bound of agreement with scipy.special
DFS = [1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 7.3, 10.0, 30.0, 99.0, 100.0, 101.0, 1e3, 1e4, 1e5,
       1e6]
PS = np.concatenate([np.logspace(-12, -1, 45), np.linspace(0.1, 0.9, 33),
                     1.0 - np.logspace(-12, -1, 45)])


def rel(got: float, want: float) -> float:
    return abs(got - want) / abs(want) if want else abs(got)


def worst(pairs: list[tuple[float, float, object]]) -> tuple[float, object]:
    """The largest relative error of (got, want, where) over values of 1e-300 or more."""
    return max(((rel(got, want), where) for got, want, where in pairs if abs(want) >= 1e-300),
               key=lambda e: e[0], default=(0.0, None))


# --- against scipy.special -------------------------------------------------------------

def test_ndtr_is_scipys() -> None:
    xs = np.concatenate([np.linspace(-38.5, 38.5, 3081), -np.logspace(-12, 1, 60),
                         np.logspace(-12, 1, 60)])
    error, where = worst([(special.ndtr(x), float(scipy_special.ndtr(x)), x) for x in xs])
    assert error <= SCIPY_AGREES, where


def test_ndtri_is_scipys() -> None:
    ps = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.01, 0.99, 981),
                         1.0 - np.logspace(-16, -1, 60), 0.5 + np.logspace(-16, -2, 40),
                         0.5 - np.logspace(-16, -2, 40)])
    error, where = worst([(special.ndtri(p), float(scipy_special.ndtri(p)), p) for p in ps])
    assert error <= SCIPY_AGREES, where


@pytest.mark.parametrize("df", DFS)
def test_stdtr_is_scipys(df: float) -> None:
    """t from -50 to 50, and near 0, where scipy's Cauchy (1 degree of freedom) loses
    digits: below |t| = 1e-3 there, the reference holds it."""
    ts = np.concatenate([np.linspace(-50.0, 50.0, 401), np.logspace(-10, 0, 21),
                         -np.logspace(-10, 0, 21)])
    ts = ts[np.abs(ts) >= 1e-3] if df == 1.0 else ts
    error, where = worst([(special.stdtr(df, t), float(scipy_special.stdtr(df, t)), t)
                          for t in ts])
    assert error <= SCIPY_AGREES, where


@pytest.mark.parametrize("df", DFS)
def test_stdtrit_is_scipys(df: float) -> None:
    """p from 1e-12 to 1 - 1e-12 (a quantile near 0, p within 1e-9 of 1/2, scipy gets to
    within its absolute accuracy only: the reference holds those)."""
    error, where = worst([(special.stdtrit(df, p), float(scipy_special.stdtrit(df, p)), p)
                          for p in PS])
    assert error <= SCIPY_AGREES, where


@pytest.mark.parametrize("n", [*range(1, 40), 50, 99, 100, 150, 200])
def test_bdtr_is_scipys(n: int) -> None:
    """Every k of n up to 200 (beyond, scipy's own error grows past 1e-12: the exact sums
    below hold them), p = 1/2 and others."""
    pairs = [(special.bdtr(k, n, p), float(scipy_special.bdtr(k, n, p)), (k, p))
             for k in range(n + 1) for p in (0.5, 0.01, 0.3, 0.7, 0.999)]
    error, where = worst(pairs)
    assert error <= SCIPY_AGREES, where


def test_the_edges_are_scipys() -> None:
    """Arguments at and beyond the ends of each domain: scipy's NaN, 0, 1 and infinities
    (but stdtrit(df, 0), which scipy gives as +inf: the lower end of the line is -inf)."""
    cases = [("ndtr", (math.inf,)), ("ndtr", (-math.inf,)), ("ndtr", (math.nan,)),
             ("ndtr", (0.0,)), ("ndtri", (0.0,)), ("ndtri", (1.0,)), ("ndtri", (0.5,)),
             ("ndtri", (1.5,)), ("ndtri", (-0.1,)), ("ndtri", (math.nan,)),
             ("stdtr", (math.inf, 1.0)), ("stdtr", (0.0, 1.0)), ("stdtr", (-1.0, 0.0)),
             ("stdtr", (1.0, math.inf)), ("stdtr", (1.0, -math.inf)), ("stdtr", (1.0, 0.0)),
             ("stdtr", (math.nan, 1.0)), ("stdtr", (3.0, math.nan)),
             ("stdtr", (1e300, 1.0)), ("stdtrit", (math.inf, 0.975)),
             ("stdtrit", (1.0, 1.0)), ("stdtrit", (1.0, 0.5)), ("stdtrit", (0.0, 0.5)),
             ("stdtrit", (1.0, 1.2)), ("stdtrit", (math.nan, 0.5)),
             ("bdtr", (-1, 10, 0.5)), ("bdtr", (0, 10, 0.5)), ("bdtr", (10, 10, 0.5)),
             ("bdtr", (11, 10, 0.5)), ("bdtr", (2.7, 10, 0.5)), ("bdtr", (5, 10, 0.0)),
             ("bdtr", (5, 10, 1.0)), ("bdtr", (5, 10, 1.5)), ("bdtr", (0, 0, 0.5)),
             ("bdtr", (math.nan, 10, 0.5))]
    for name, args in cases:
        ours, theirs = getattr(special, name)(*args), float(getattr(scipy_special, name)(*args))
        assert math.isclose(ours, theirs, rel_tol=4 * EPS) or ours == theirs \
            or (math.isnan(ours) and math.isnan(theirs)), (name, args)
    assert special.stdtrit(1.0, 0.0) == -math.inf


# --- against the true values -------------------------------------------------------------

def test_ndtr_is_true_to_a_unit_in_the_last_place() -> None:
    """The rounding of x / sqrt(2) corrected: at x = -37, erfc(-x / sqrt(2)) / 2 alone (and
    scipy) are 2e-13 off."""
    error, where = worst([(special.ndtr(x), v, x) for x, v in REFERENCE["ndtr"]])
    assert error <= 2 * EPS, where


def test_ndtri_is_true_to_a_unit_in_the_last_place() -> None:
    error, where = worst([(special.ndtri(p), v, p) for p, v in REFERENCE["ndtri"]])
    assert error <= 2 * EPS, where


def test_stdtr_is_true_to_its_bound() -> None:
    """(16 + t^2) units in the last place, 8 below 30 degrees of freedom: where the value
    is 1e-190 and smaller, forming t^2 / df rounds away what no double precision method
    keeps (scipy errs as much)."""
    for df, t, v in REFERENCE["stdtr"]:
        bound = 8 if df < 30 else 16 + t * t
        assert rel(special.stdtr(df, t), v) <= bound * EPS, (df, t)


def test_stdtrit_is_true_to_its_bound() -> None:
    """10 units in the last place for p from 1e-12 to 1 - 1e-12 (p a unit from 1/2 too,
    where scipy's quantile is only near 0); far out in a heavy tail (1e-300 at 1 degree of
    freedom, |t| = 3e299), |log p| / df units (the tail's own rounding, as a quantile)."""
    for df, p, v in REFERENCE["stdtrit"]:
        q = min(p, 1.0 - p)
        bound = 10 * EPS if q >= 1e-12 else (16 + abs(math.log(q)) / df) * EPS
        assert rel(special.stdtrit(df, p), v) <= bound, (df, p)


def exact_bdtr(n: int, ks: set[int]) -> dict[int, float]:
    """P(B <= k) for B ~ Binomial(n, 1/2) at each k, the integer sum rounded once."""
    total, below, ways, found = 1 << n, 0, 1, {}
    for k in range(max(ks) + 1):
        below += ways
        if k in ks:
            found[k] = below / total
        ways = ways * (n - k) // (k + 1)
    return found


@pytest.mark.parametrize("n", [1, 2, 3, 10, 100, 1000, 2001, 10_000, 100_000])
def test_bdtr_is_the_exact_sum(n: int) -> None:
    """p = 1/2 (the median's interval), tails included: 32 + 2 |ln v| + 2 sqrt(n) units in
    the last place (the exponent's rounding, the continued fraction's terms): 1e-13 at
    n = 100,000 (scipy's bdtr: 3e-10)."""
    ks = {int(k) for k in np.linspace(0, n, 300)} | set(range(min(n, 60))) \
        | set(range(max(0, n // 2 - 60), min(n, n // 2 + 60)))
    for k, v in exact_bdtr(n, ks).items():
        if v >= 1e-300:
            bound = (32 + 2 * abs(math.log(v)) + 2 * math.sqrt(n)) * EPS
            assert rel(special.bdtr(k, n, 0.5), v) <= bound, (k, n)


# --- what kcross.stats asks of it -----------------------------------------------------------

@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_covering_rank_is_the_largest_that_covers(confidence: float) -> None:
    """The bisection finds what scanning every rank finds: the largest rank whose exact
    coverage reaches the confidence, rank 1 when none does, the coverage to 1e-14."""
    for n in [*range(2, 200), 2001, 4999, 30_001]:
        exact = exact_bdtr(n, set(range(n // 2 + 1)))
        coverages = [(rank, 1.0 - 2.0 * exact[rank - 1]) for rank in range(1, n // 2 + 1)]
        covering = [(rank, c) for rank, c in coverages if c >= confidence]
        want_rank, want = covering[-1] if covering else coverages[0]
        rank, coverage = _covering_rank(n, confidence)
        assert rank == want_rank and rel(coverage, want) <= 1e-14, (n, rank, want_rank)
        if n > EXACT_COVERAGE_UP_TO and covering:
            assert _median_ranks(n, confidence) == (rank, coverage)


def test_importing_it_loads_neither_numpy_nor_scipy() -> None:
    probe = ("import sys\n"
             "import kcross.special\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy')))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=HANG, check=True, env={"PYTHONPATH": str(PYTHON_DIR)})
    assert proc.stdout.strip() == "[]"
