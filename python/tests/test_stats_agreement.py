"""The harness's table and kcross follow one statistics rule: the same samples give the
same figures from `kcross-harness summarize --json SAMPLES [OVERHEAD]` (harness/stats.c)
and from kcross.stats, to 1e-9 relative.  Skipped, with the reason, without a real
harness that has the summarize command."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import harnesses
import numpy as np
import pytest
from conftest import HANG, captured
from kcross.stats import StatsError, summarize

HARNESS, WHY = harnesses.native()
KEYS = ("n", "median", "q1", "q3", "min", "spread", "ci_low", "ci_high", "ci_low_rank",
        "ci_high_rank", "ci_confidence", "overhead_median", "subtracted", "overhead_reason")


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    if HARNESS is None:
        pytest.skip(WHY)
    if harnesses.writes_schema(HARNESS) == 1:
        pytest.skip(f"{HARNESS[-1]} writes schema 1: it predates 'summarize' (the schema-2 "
                    "harness, format-c branch, is not built here)")
    probe = tmp_path_factory.mktemp("probe") / "x"
    probe.write_text("1\n2\n3\n4\n5\n6\n")
    proc = subprocess.run([*HARNESS, "summarize", "--json", str(probe)], capture_output=True,
                          text=True, timeout=HANG, check=False)
    assert proc.returncode == 0, f"summarize failed: {proc.stderr.strip()}"
    return HARNESS


def _write(path: Path, values: list[float]) -> str:
    # repr() round-trips a double exactly, so both sides read the same numbers.
    path.write_text("".join(f"{float(v)!r}\n" for v in values))
    return str(path)


def harness_summary(harness: list[str], tmp: Path, samples: list[float],
                    overhead: list[float] | None) -> subprocess.CompletedProcess:
    files = [_write(tmp / "samples", samples)]
    if overhead is not None:
        files.append(_write(tmp / "overhead", overhead))
    return subprocess.run([*harness, "summarize", "--json", *files], capture_output=True,
                          text=True, timeout=HANG, check=False)


def assert_agree(theirs: dict, ours: dict, label: str) -> None:
    assert set(theirs) >= set(KEYS), (label, sorted(set(KEYS) - set(theirs)))
    for key in KEYS:
        a, b = theirs[key], ours[key]
        if isinstance(b, (bool, str)) or b is None or key.endswith("rank") or key == "n":
            assert a == b, (label, key, a, b)
        else:
            assert a is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), \
                (label, key, a, b)


def _skewed(n: int, seed: int) -> list[float]:
    """Realistic ns/op figures: log-normal body around 150 ns, a few slow outliers."""
    rng = np.random.default_rng(seed)
    body = 150.0 * rng.lognormal(0.0, 0.04, n)
    slow = rng.random(n) < 0.05
    return [float(x) for x in np.where(slow, body * rng.uniform(1.5, 4.0, n), body)]


def _spread(n: int, base: float, width: float) -> list[float]:
    return [base + width * ((i * 37) % n) / n for i in range(n)]


VECTORS = {
    # name: (samples, overhead or None)
    "ties-all-equal": ([5.0] * 6, None),
    "ties-some": ([1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0], None),
    "n6-smallest-with-ci": ([6.0, 5.0, 4.0, 3.0, 2.0, 1.0], None),
    "n7": ([7.5, 1.25, 3.0, 9.0, 2.0, 2.5, 4.75], None),
    "n8-even": ([8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0], None),
    "n201-skewed": (_skewed(201, 1), None),
    "n201-skewed-subtracted": (_skewed(201, 2), [0.27 + 0.001 * (i % 7) for i in range(201)]),
    "subtracted": (_spread(21, 10.0, 0.4), [1.0] * 21),
    "within-the-noise": (_spread(21, 10.0, 4.0), [0.9, 0.95, 1.0]),
    "noise-exactly-equal": ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [1.5] * 7),
    "half-the-median": (_spread(21, 2.0, 0.1), [1.2] * 5),
    "half-exactly": ([4.0] * 7, [2.0]),
    "both-fail-noise-first": ([1.0, 1.0, 1.0, 10.0, 10.0, 10.0, 1.0], [1.0]),
    "zero-median": ([0.0] * 7, None),
    "n201-realistic-vdso": (_skewed(201, 3), _skewed(201, 4)[:11]),
}


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_harness_and_kcross_agree(harness: list[str], tmp_path: Path, name: str) -> None:
    samples, overhead = VECTORS[name]
    proc = harness_summary(harness, tmp_path, samples, overhead)
    assert proc.returncode == 0, proc.stderr
    assert_agree(json.loads(proc.stdout), summarize(samples, overhead).as_dict(), name)


def test_agree_on_every_captured_real_result(harness: list[str], tmp_path: Path) -> None:
    results = [r for r in captured() if r["type"] == "result" and r["status"] == "ok"]
    reasons = set()
    for rec in results:
        proc = harness_summary(harness, tmp_path, rec["samples"], rec["overhead"]["samples"])
        assert proc.returncode == 0, proc.stderr
        ours = summarize(rec["samples"], rec["overhead"]["samples"]).as_dict()
        assert_agree(json.loads(proc.stdout), ours, f"{rec['suite']}/{rec['name']}")
        reasons.add(ours["overhead_reason"])
    assert len(reasons) >= 2, reasons


@pytest.mark.parametrize("n", [1, 5])
def test_too_few_samples_for_a_ci_is_refused_by_both(harness: list[str], tmp_path: Path,
                                                     n: int) -> None:
    samples = [float(i + 1) for i in range(n)]
    proc = harness_summary(harness, tmp_path, samples, None)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    with pytest.raises(StatsError, match=rf"n={n}: too few for a 95% CI \(need 6\)"):
        _ = summarize(samples).ci
