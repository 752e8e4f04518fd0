"""kcross aa: one benchmark against itself, the share of pairs of runs the test calls different.

The counting is checked on simulated runs (seeded): independent runs must come
out near the nominal 5%, runs that drift apart far above it, which is what the
command exists to reveal.  The command line is checked with the fake harness:
identical runs (never called different), and runs drawn afresh each time
(KCROSS_FAKE_RESAMPLE).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import Kcross, assert_one_line_error, captured_result
from kcross import ab, stats
from test_ab import REAL, WHY, runs, wrapper_harness


def aa_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    return json.loads(line)


# --- the counting, on simulated runs -----------------------------------------------------

def simulated(monkeypatch: pytest.MonkeyPatch, seed: int, drift: float) -> ab.Ready:
    """Runs of 31 samples around 100 ns (1% noise); each run shifted by ``drift`` (sd, relative)."""
    rng = np.random.default_rng(seed)

    def measure(ready: ab.Ready, options: ab.RunOptions) -> ab.Measured:
        level = 100.0 * (1.0 + drift * rng.standard_normal())
        samples = tuple(float(x) for x in level * (1.0 + 0.01 * rng.standard_normal(31)))
        m = stats.median(samples)
        return ab.Measured(median=m, raw_median=m, subtracted=False, samples=samples,
                           unit="ns/op", mechanism="syscall", forced={})

    monkeypatch.setattr(ab, "measure", measure)
    side = ab.Side(label="sim", bench="sim/bench", harness=("none",), harness_shown="none")
    return ab.Ready(side=side, bench="sim/bench", arch="x86_64", mechanism="syscall",
                    available=("syscall",), forced={}, version="0")


def test_independent_runs_come_out_near_the_nominal_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    ready = simulated(monkeypatch, seed=1, drift=0.0)
    result = ab.run_aa(ready, 200, ab.RunOptions(samples=31, cpu=0))
    rate = result.rate
    assert rate.judged == 200
    assert rate.low <= 0.05 <= rate.high, (rate.called, rate.low, rate.high)
    assert rate.reading.startswith("consistent with the nominal 5%")
    assert not result.paired.significant


def test_runs_that_drift_apart_are_called_different_far_too_often(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ready = simulated(monkeypatch, seed=2, drift=0.02)
    rate = ab.run_aa(ready, 40, ab.RunOptions(samples=31, cpu=0)).rate
    assert rate.low > 0.05 and rate.rate > 0.5, rate
    assert rate.reading.startswith("ABOVE the nominal 5%") and "kcross ab" in rate.reading


@pytest.mark.parametrize("called, judged", [(0, 20), (1, 20), (7, 20), (20, 20), (3, 200)])
def test_rate_ci_is_clopper_pearson(called: int, judged: int) -> None:
    from scipy.stats import beta

    found = ab.false_positives(called, judged)
    low = 0.0 if called == 0 else beta.ppf(0.025, called, judged - called + 1)
    high = 1.0 if called == judged else beta.ppf(0.975, called + 1, judged - called)
    assert found.low == pytest.approx(low) and found.high == pytest.approx(high)
    assert found.rate == called / judged


def test_readings() -> None:
    assert ab.false_positives(0, 200).reading.startswith("below the nominal 5%")
    few = ab.false_positives(1, 20).reading
    assert few.startswith("consistent") and "cannot rule out rates up to 25%" in few
    assert "cannot rule out" not in ab.false_positives(50, 1000).reading


# --- the command -------------------------------------------------------------------------

def test_identical_runs_are_never_called_different(kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    proc = kcross("aa", "getppid-inline", "--rounds", "6", "--samples", "11", "--cpu", "0",
                  "--harness", str(harness))
    assert proc.returncode == 0, proc.stderr
    assert len(runs(log)) == 12
    pairs = [line for line in proc.stderr.splitlines() if line.startswith("pair ")]
    assert len(pairs) == 6 and all(line.endswith("p=1: no difference") for line in pairs)
    out = proc.stdout
    assert "called a difference in 0 of 6 pairs: 0.0% (95% CI 0.0%–45.9%, exact binomial); " \
           "nominal 5%" in out, out
    assert "Mann-Whitney U, two-sided, alpha 0.05" in out
    assert "reading: consistent with the nominal 5%" in out
    assert "paired view: second run / first run, median of 6 per-pair ratios 1.000" in out


def test_json_with_runs_drawn_afresh(kcross: Kcross) -> None:
    found = aa_json(kcross("aa", "getppid-inline", "--rounds", "8", "--samples", "15",
                           "--json", extra_env={"KCROSS_FAKE_RESAMPLE": "1"}))
    assert found["type"] == "aa" and found["bench"] == "syscall/getppid-inline"
    assert found["judged"] == 8 and len(found["pairs"]) == 8
    assert found["called"] == sum(p["called"] for p in found["pairs"])
    assert all(p["called"] == (p["p"] < 0.05) for p in found["pairs"])
    assert found["rate_ci_low"] <= found["rate"] <= found["rate_ci_high"]
    values = set(captured_result("syscall/getppid-inline")["samples"])
    assert min(values) <= min(p["first"] for p in found["pairs"])
    assert found["ratio_ci_low"] <= found["ratio"] <= found["ratio_ci_high"]


def test_settings_reach_every_run(kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    found = aa_json(kcross("aa", "getppid-inline", "--env", "KCROSS_VDSO=0", "--rounds", "6",
                           "--samples", "11", "--json", "--harness", str(harness)))
    assert found["settings"] == {"KCROSS_VDSO": "0"}
    assert {r["env"].get("KCROSS_VDSO") for r in runs(log)} == {"0"}


@pytest.mark.parametrize("args, message", [
    (["getppid-inline", "--samples", "3"], "--samples 3: too few for Mann-Whitney U"),
    (["getppid-inline", "--rounds", "2"], "--rounds: must be a whole number from 6"),
    (["getppid-*"], "'getppid-*' matches 7 benchmarks"),
    (["getppid-inline", "--env", "KCROSS_VDSO=yes"], "KCROSS_VDSO=yes"),
])
def test_bad_input(kcross: Kcross, tmp_path: Path, args: list[str], message: str) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    assert_one_line_error(kcross("aa", *args, "--harness", str(harness)), contains=message)
    assert runs(log) == []


@pytest.mark.skipif(REAL is None, reason=WHY)
def test_real_harness(kcross: Kcross) -> None:
    assert REAL is not None
    found = aa_json(kcross("aa", "getppid-inline", "--rounds", "6", "--samples", "5",
                           "--warmup-ms", "2", "--min-batch-ms", "0.1", "--json",
                           "--harness", REAL[-1], timeout=120))
    assert found["judged"] == 6 and 0 <= found["called"] <= 6
    assert all(p["first"] > 0 and p["second"] > 0 for p in found["pairs"])
