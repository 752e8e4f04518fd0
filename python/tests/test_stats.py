"""Statistics against hand-checked values (exact binomial sums computed with math.comb)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from kcross.stats import (
    HALF_MEDIAN,
    SUBTRACTED,
    WITHIN_NOISE,
    StatsError,
    Summary,
    decide_overhead,
    describe,
    median_ci,
    min_samples_for,
    quantile,
    raw_samples,
    relative_spread,
    summarize,
    summarize_record,
    summary_columns,
)


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


# --- the statistics rule (docs/result-format.md): quantiles, overhead, summaries ---------



def type7(values: list[float], p: float) -> float:
    """Hyndman-Fan type 7 written out from its definition, independently of numpy."""
    x = sorted(values)
    h = (len(x) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(x) - 1)
    return x[lo] + (h - lo) * (x[hi] - x[lo])


@pytest.mark.parametrize("values", [[3.0], [1.0, 2.0], [4.0, 1.0, 3.0, 2.0],
                                    [5.0, 1.0, 9.0, 2.0, 2.0, 7.0, 3.0],
                                    [float(i * i % 17) for i in range(1, 24)]])
@pytest.mark.parametrize("p", [0.0, 0.25, 0.5, 0.75, 1.0, 0.1])
def test_quantile_is_type_7(values: list[float], p: float) -> None:
    assert quantile(values, p) == pytest.approx(type7(values, p), rel=1e-12, abs=1e-12)


def test_quartiles_differ_from_the_other_definitions() -> None:
    # 1..8: type 7 gives q1 = 2.75; nearest rank would give 2, the "exclusive" method 2.25.
    data = [float(i) for i in range(1, 9)]
    s = summarize(data)
    assert (s.q1, s.median, s.q3) == (2.75, 4.5, 6.25)
    assert s.spread == pytest.approx(3.5 / 4.5)


def noisy(n: int, base: float, width: float) -> list[float]:
    """Deterministic samples spread over base..base+width (no ties)."""
    return [base + width * ((i * 37) % n) / n for i in range(n)]


def test_overhead_subtracted_when_above_noise_and_below_half_median() -> None:
    samples = noisy(21, 10.0, 0.4)          # median 10.19, IQR/2 ~ 0.1
    s = summarize(samples, [1.0] * 21)
    assert s.overhead == decide_overhead(samples, [1.0] * 21)
    assert (s.overhead.subtracted, s.overhead.reason, s.overhead.median) == (True, SUBTRACTED, 1.0)
    plain = summarize(samples)
    assert plain.overhead.reason is None and not plain.overhead.subtracted
    # every figure is of the corrected samples
    assert s.median == pytest.approx(plain.median - 1.0)
    assert (s.q1, s.q3, s.min) == pytest.approx((plain.q1 - 1, plain.q3 - 1, plain.min - 1))
    assert (s.ci.low, s.ci.high) == pytest.approx((plain.ci.low - 1, plain.ci.high - 1))
    assert s.spread == pytest.approx((plain.q3 - plain.q1) / (plain.median - 1))
    assert s.samples == pytest.approx([x - 1.0 for x in samples])


def test_overhead_within_the_noise_is_not_subtracted() -> None:
    samples = noisy(21, 10.0, 4.0)          # IQR/2 ~ 1
    s = summarize(samples, [0.9, 0.95, 1.0])  # o = 0.95 <= noise
    assert (s.overhead.subtracted, s.overhead.reason) == (False, WITHIN_NOISE)
    assert s.median == summarize(samples).median
    # o == noise exactly is still within the noise (the rule says o > noise)
    exact = [1.0, 2.0, 3.0, 4.0, 5.0]       # q1 2, q3 4: noise 1
    assert summarize(exact, [1.0]).overhead.reason == WITHIN_NOISE
    # both conditions fail: the noise is checked first (the harness's order too)
    both = [1.0, 1.0, 1.0, 10.0, 10.0]      # noise 4.5, median 1; o = 1 fails both
    assert summarize(both, [1.0]).overhead.reason == WITHIN_NOISE


def test_overhead_of_half_the_median_or_more_is_not_subtracted() -> None:
    samples = noisy(21, 2.0, 0.1)           # median ~2.05, noise ~0.025
    s = summarize(samples, [1.2] * 5)       # 2o = 2.4 >= median
    assert (s.overhead.subtracted, s.overhead.reason) == (False, HALF_MEDIAN)
    exact = [4.0] * 7                       # noise 0, median 4: o = 2 is exactly half
    assert summarize(exact, [2.0]).overhead.reason == HALF_MEDIAN
    assert summarize(exact, [1.999]).overhead.reason == SUBTRACTED


def test_ties_and_small_n() -> None:
    s = summarize([5.0] * 6)
    assert (s.median, s.q1, s.q3, s.min, s.spread) == (5.0, 5.0, 5.0, 5.0, 0.0)
    assert (s.ci.low_rank, s.ci.high_rank) == (1, 6)
    one = summarize([2.0])
    assert one.median == 2.0 and one.n == 1
    with pytest.raises(StatsError, match=r"n=1: too few for a 95% CI \(need 6\)"):
        _ = one.ci
    assert one.as_dict()["ci_low"] is None and one.as_dict()["ci_low_rank"] == 0
    with pytest.raises(StatsError, match="median is 0"):
        _ = summarize([0.0, 0.0, 0.0]).spread
    with pytest.raises(StatsError, match="no overhead samples"):
        summarize([1.0] * 6, [])
    with pytest.raises(StatsError, match="overhead sample 1 is nan"):
        summarize([1.0] * 6, [0.1, float("nan")])


def _v2(samples: list[float], overhead: list[float]) -> dict:
    return {"type": "result", "schema": 2, "status": "ok", "samples": samples,
            "ticks": [], "overhead": {"samples": overhead, "ticks": []}}


def test_summarize_record_of_both_schemas() -> None:
    samples = noisy(21, 10.0, 0.4)
    v2 = summarize_record(_v2(samples, [1.0] * 21))
    assert v2.overhead.subtracted and v2.median == pytest.approx(summarize(samples).median - 1)
    # schema 1: samples as given (already corrected), the harness's own decision and text
    v1 = {"type": "result", "schema": 1, "status": "ok", "samples": samples, "ticks": [],
          "overhead": {"ns": 1.0, "ticks": 2.6, "subtracted": False, "why": "not subtracted: x"}}
    s1 = summarize_record(v1)
    assert s1.median == summarize(samples).median
    assert (s1.overhead.subtracted, s1.overhead.reason, s1.overhead.median) == \
        (False, "not subtracted: x", 1.0)
    assert raw_samples(v1) == samples
    v1["overhead"]["subtracted"] = True
    assert summarize_record(v1).median == s1.median       # never subtracted twice
    assert raw_samples(v1) == pytest.approx([x + 1.0 for x in samples])
    assert raw_samples(_v2(samples, [1.0])) == samples
    for status in ("skipped", "failed"):
        with pytest.raises(StatsError, match=f"{status}: no figures"):
            summarize_record({"schema": 2, "status": status, "samples": [], "overhead": None})


def test_summary_columns_for_the_store() -> None:
    samples = noisy(21, 10.0, 0.4)
    cols = summary_columns(_v2(samples, [1.0] * 21))
    s = summarize(samples, [1.0] * 21)
    assert cols == {"median_ns": s.median, "min_ns": s.min, "ci_low_ns": s.ci.low,
                    "ci_high_ns": s.ci.high, "ci_confidence": s.ci.confidence,
                    "overhead_ns": 1.0, "subtracted": True, "overhead_reason": SUBTRACTED}
    few = summary_columns(_v2([3.0, 4.0], [0.1]))
    assert few["median_ns"] == 3.5 and few["ci_low_ns"] is None
    assert few["subtracted"] is False and few["overhead_reason"] == WITHIN_NOISE
    assert set(summary_columns({"schema": 2, "status": "skipped"}).values()) == {None}


def test_summary_columns_are_the_summary_of_random_records() -> None:
    """What the store keeps beside a result is exactly what summarize_record says of it,
    whatever the samples and the empty loop (subtracted, within the noise, half the median,
    too few for a CI)."""
    rng = np.random.default_rng(20261126)
    decisions = set()
    for _ in range(300):
        n = int(rng.integers(1, 40))
        scale = float(rng.choice([0.3, 10.0, 1000.0]))
        samples = list(np.round(scale * (1 + rng.exponential(0.05, n)), 10))
        empty = list(np.round(scale * float(rng.choice([0.001, 0.3, 0.7])) *
                              (1 + rng.exponential(0.02, n)), 10))
        record = _v2(samples, empty)
        cols = summary_columns(record)
        s = summarize_record(record)
        decisions.add(s.overhead.reason)
        want = {"median_ns": s.median, "min_ns": s.min, "overhead_ns": s.overhead.median,
                "subtracted": s.overhead.subtracted, "overhead_reason": s.overhead.reason}
        try:
            want.update(ci_low_ns=s.ci.low, ci_high_ns=s.ci.high, ci_confidence=s.ci.confidence)
        except StatsError:
            want.update(ci_low_ns=None, ci_high_ns=None, ci_confidence=None)
        assert cols == want
    assert decisions == {SUBTRACTED, WITHIN_NOISE, HALF_MEDIAN}


def test_summary_is_immutable_and_complete() -> None:
    s = summarize(noisy(11, 1.0, 0.1), [0.05] * 11)
    assert isinstance(s, Summary)
    assert set(s.as_dict()) == {"n", "median", "q1", "q3", "min", "spread", "ci_low", "ci_high",
                                "ci_low_rank", "ci_high_rank", "ci_confidence",
                                "overhead_median", "subtracted", "overhead_reason"}
    with pytest.raises(AttributeError):
        s.median = 0.0  # type: ignore[misc]


@pytest.mark.parametrize("n", [1, 2, 5, 10, 11, 12, 40])
def test_the_bootstraps_row_medians_are_numpys(n: int) -> None:
    """The ratio's bootstrap takes each resample's median from its row sorted: numpy's
    median to the bit, odd and even rows, ties, tiny and huge values."""
    from kcross.stats import _row_medians

    rng = np.random.default_rng(n)
    for digits in (1.0, 1e6):
        rows = np.round(rng.normal(100.0, 3.0, size=(2000, n)) * digits) / digits
        for scale in (1.0, 1e-300, 1e300):
            assert np.array_equal(_row_medians(rows * scale), np.median(rows * scale, axis=1))


def test_the_medians_coverage_is_counted_exactly_and_is_scipys() -> None:
    """The interval's ranks and coverage from integer binomial sums (no scipy import): the
    ranks scipy.special's binomial gave, the coverage to its last digits, and rounded once
    from the exact sum; beyond EXACT_COVERAGE_UP_TO samples, scipy's (the sums grow)."""
    from kcross.stats import EXACT_COVERAGE_UP_TO, _median_ranks
    from scipy.special import bdtr

    for n in [*range(6, 300), *range(300, EXACT_COVERAGE_UP_TO + 40, 97)]:
        for confidence in (0.90, 0.95, 0.99):
            if n < min_samples_for(confidence):
                continue
            ranks = np.arange(1, n // 2 + 1)
            coverages = 1.0 - 2.0 * bdtr(ranks - 1, n, 0.5)
            low_rank = int(ranks[coverages >= confidence].max())
            rank, got = _median_ranks(n, confidence)
            assert rank == low_rank
            assert got == pytest.approx(float(coverages[low_rank - 1]), rel=1e-11)
            if n <= 300:
                below = sum(math.comb(n, k) for k in range(rank))
                assert got == (2 ** n - 2 * below) / 2 ** n   # the exact fraction, rounded


def test_the_quantiles_of_short_series_are_numpys_to_the_bit() -> None:
    """Up to SORTED_QUANTILES_UP_TO values the rule's quantiles come from the values sorted
    (numpy.quantile's call cost twenty times that): numpy's "linear" figures exactly, for
    every length, ties, extremes of scale, and any p (0 and 1 too)."""
    from kcross.stats import SORTED_QUANTILES_UP_TO, _quantiles

    rng = np.random.default_rng(17)
    for n in [*range(1, 70), 101, 201, 1000, SORTED_QUANTILES_UP_TO]:
        for kind in range(5):
            data = [rng.normal(100.0, 3.0, n), np.round(rng.normal(100.0, 3.0, n)),
                    rng.exponential(1.0, n) * 1e-300, rng.exponential(1.0, n) * 1e300,
                    np.full(n, 7.25)][kind]
            for probs in ([0.5], [0.25, 0.5, 0.75], [0.0, 1.0], [0.025, 0.975],
                          list(rng.uniform(0.0, 1.0, 4))):
                want = [float(q) for q in np.quantile(data, probs, method="linear")]
                assert _quantiles(data, probs) == want, (n, kind, probs)


def test_a_list_is_taken_without_numpy_as_numpy_takes_it() -> None:
    """stats._values, the summary's input: a record's samples (a list of up to
    LIST_VALUES_UP_TO Python numbers) checked and taken here as _clean takes them through
    numpy, the same values and the same refusals, word for word; anything else (more
    samples, an array, bools, strings) through _clean; and the quantiles of a list numpy's
    to the bit at any length, past SORTED_QUANTILES_UP_TO."""
    from kcross.stats import LIST_VALUES_UP_TO, SORTED_QUANTILES_UP_TO, _clean, _quantiles, _values

    def taken(fn: object, data: object, what: str) -> object:
        try:
            got = fn(data, what)  # type: ignore[operator]
        except StatsError as exc:
            return f"refused: {exc}"
        return got if isinstance(got, list) else ("array", got.tolist())

    cases: list[object] = [[1.0, 2, 3.5], (4, 5.25), [], [0.0, -0.0], [1.0, math.nan],
                           [2.0, math.inf, -1.0], [3.0, -2.5e-7], [1, -3], [True, 2.0],
                           ["1.5", 2.0], [[1.0, 2.0]], [None], np.array([2.0, 1.0]),
                           [np.float64(1.5), 2.0], [2**53 + 1, 1.0],
                           [1.5] * LIST_VALUES_UP_TO, [1.5] * (LIST_VALUES_UP_TO + 1),
                           [2.0] * (LIST_VALUES_UP_TO + 1) + [-1.0]]
    for data in cases:
        for what in ("sample", "overhead sample"):
            want = taken(_clean, data, what)
            got = taken(_values, data, what)
            if isinstance(got, list):     # the list path: a list of Python numbers
                assert all(type(x) is float for x in got)
                got = ("array", got)
            assert got == want and str(got) == str(want), (data, what)
    # a negative zero beside a positive one: the figures numpy's sort and min make of them
    def shown(fn: object, data: object) -> str:
        try:
            return repr(fn(data))  # type: ignore[operator]
        except StatsError as exc:
            return f"refused: {exc}"

    for data in ([0.0, -0.0, 1.0, 1.0, 1.0, 1.0], [-0.0, 0.0], [0.0] * 9 + [-0.0] * 9):
        for fn in (describe, median_ci, lambda d: summarize(d).as_dict()):
            assert shown(fn, data) == shown(fn, np.array(data)), (data, fn)
    rng = np.random.default_rng(23)
    for n in (SORTED_QUANTILES_UP_TO + 1, 20_001):
        data = rng.normal(100.0, 3.0, n)
        probs = [0.0, 0.025, 0.25, 0.5, 0.75, 0.975, 1.0]
        want = [float(q) for q in np.quantile(data, probs, method="linear")]
        assert _quantiles(data.tolist(), probs) == want == _quantiles(data, probs)


def test_a_record_is_summarised_without_importing_numpy() -> None:
    """kcross import of a capture of one process summarises every record
    (store/writing.py's result_row): kcross.stats does so without numpy's import, a fifth of
    that command; the figures are those of the samples given as an array (numpy's path)."""
    import subprocess
    import sys

    from conftest import captured

    record = next(r for r in captured() if r["type"] == "result" and r["status"] == "ok")
    probe = ("import json, sys\nfrom kcross.stats import summary_columns, summarize_record\n"
             "record = json.loads(sys.stdin.read())\n"
             "print(json.dumps([summary_columns(record), summarize_record(record).as_dict(),"
             " 'numpy' in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", probe], input=json.dumps(record),
                          capture_output=True, text=True, check=True)
    columns, summary, numpy_loaded = json.loads(proc.stdout)
    assert not numpy_loaded
    assert columns == json.loads(json.dumps(summary_columns(record)))
    as_array = {**record, "samples": np.array(record["samples"]),
                "overhead": {**record["overhead"],
                             "samples": np.array(record["overhead"]["samples"])}}
    assert summary == json.loads(json.dumps(summarize_record(as_array).as_dict()))


NUMPY_THREADS_PROBE = """\
import json, os, signal, sys
from kcross import stats
assert "numpy" not in sys.modules
stats._clean([1.0, 2.0])          # numpy's first use: its import, its BLAS threads
me = str(os.getpid())
wanted = sum(1 << (s - 1) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
held = {}
for task in os.listdir(f"/proc/{me}/task"):
    if task != me:
        status = open(f"/proc/{me}/task/{task}/status").read()
        mask = int(next(l.split()[1] for l in status.splitlines() if l.startswith("SigBlk:")), 16)
        held[task] = mask & wanted == wanted
print(json.dumps(held))
"""


def test_numpys_threads_leave_the_stop_signals_to_the_main_thread() -> None:
    """numpy is imported where kcross.stats first uses it, maybe in the middle of a run: its
    BLAS threads (OPENBLAS_NUM_THREADS above 1, as a user may set it) start with the stop
    signals held, as they did when numpy came with kcross.stats's import inside the held
    block of kcross run (errors.stop_signals_held)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "4"}
    proc = subprocess.run([sys.executable, "-c", NUMPY_THREADS_PROBE], env=env,
                          capture_output=True, text=True, check=True)
    held = json.loads(proc.stdout)
    if not held:
        pytest.skip("numpy's BLAS started no thread here (one CPU, or a BLAS without a pool)")
    assert all(held.values()), held
