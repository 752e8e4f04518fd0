"""kcross aa: one benchmark against itself, judged by the two designs kcross has.

Each round runs two labelled copies (A, A') of one benchmark, which goes first
alternating; design 1 judges blocks of rounds as ``kcross ab`` does (median
per-round ratio A'/A, its CI excluding 1), design 2 each round's two runs as
``kcross compare`` does (Mann-Whitney U on the samples).

The counting is checked on simulated runs (seeded): independent runs must come
out near each test's level; runs shifted by a per-run offset (run-to-run
variation) far above it in design 2 but not in design 1; a planted order effect
(the second run of a round faster) must be cancelled by the alternation in
design 1.  The command line is checked with the fake harness: identical runs,
runs drawn afresh (KCROSS_FAKE_RESAMPLE), and a wrapper that plants a per-run
offset or an order effect through KCROSS_FAKE_SCALE, deterministically.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import FAKE_HARNESS, Kcross, assert_one_line_error, captured_result
from kcross import ab, stats
from test_ab import GETPPID_ROWS, REAL, WHY, runs, wrapper_harness


def aa_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    return json.loads(line)


def text(proc: subprocess.CompletedProcess) -> str:
    """stdout as one line of words (rich may wrap nothing, but spacing is not the point)."""
    assert proc.returncode == 0, proc.stderr
    return " ".join(proc.stdout.split())


# --- the counting, on simulated runs -----------------------------------------------------

def simulated(monkeypatch: pytest.MonkeyPatch, seed: int, drift: float,
              order: float = 0.0) -> ab.Ready:
    """Runs of 31 samples around 100 ns (1% noise); each run shifted by ``drift`` (sd,
    relative, drawn per run); the second run of each round ``order`` (relative) faster."""
    rng = np.random.default_rng(seed)
    calls = [0]

    def measure(ready: ab.Ready, options: ab.RunOptions) -> ab.Measured:
        level = 100.0 * (1.0 + drift * rng.standard_normal())
        if calls[0] % 2 == 1:
            level *= 1.0 - order
        calls[0] += 1
        samples = tuple(float(x) for x in level * (1.0 + 0.01 * rng.standard_normal(31)))
        m = stats.median(samples)
        return ab.Measured(median=m, raw_median=m, subtracted=False, samples=samples,
                           unit="ns/op", mechanism="syscall", forced={})

    monkeypatch.setattr(ab, "measure", measure)
    side = ab.Side(label="sim", bench="sim/bench", harness=("none",), harness_shown="none")
    return ab.Ready(side=side, bench="sim/bench", arch="x86_64", mechanism="syscall",
                    available=("syscall",), forced={}, version="0")


OPTIONS = ab.RunOptions(samples=31, cpu=0)


def test_block_level_is_one_minus_the_achieved_coverage() -> None:
    assert ab.block_level(6) == pytest.approx(2 * 0.5 ** 6)          # 3.1%: min..max of 6
    assert ab.block_level(10) == pytest.approx(2 * 11 / 1024)        # ranks 2..9 of 10
    assert ab.percent(ab.block_level(6)) == "3.1%" and ab.percent(0.05) == "5%"


def test_independent_runs_come_out_near_each_tests_level(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ready = simulated(monkeypatch, seed=1, drift=0.0)
    result = ab.run_aa(ready, 240, OPTIONS)
    one, two = result.interleaved, result.separate
    assert len(result.blocks) == one.judged == 40 and two.judged == 240
    # At most the nominal 5%: a difference needs the test and the ratio's CI to agree
    # (stats._judged), which is conservative under the null (about 2% here).
    assert two.low <= 0.05, (two.called, two.low, two.high)
    assert one.level == pytest.approx(1 / 32) and one.low <= one.level, one
    assert not two.reading.startswith("ABOVE") and not one.reading.startswith("ABOVE")
    assert not result.order.significant


def test_per_run_offsets_inflate_separate_runs_but_not_interleaved_blocks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ready = simulated(monkeypatch, seed=2, drift=0.02)
    result = ab.run_aa(ready, 240, OPTIONS)
    one, two = result.interleaved, result.separate
    assert two.low > 0.05 and two.rate > 0.5, two
    assert two.reading.startswith("ABOVE the nominal 5%") and "kcross ab" in two.reading
    assert "--max-regression" in two.reading
    # the same runs, judged in blocks of interleaved rounds: at the block test's level
    assert one.judged == 40 and one.low <= one.level <= one.high, one
    assert one.rate < 0.1 and not one.reading.startswith("ABOVE"), one


def test_alternation_cancels_an_order_effect_in_the_blocks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ready = simulated(monkeypatch, seed=3, drift=0.0, order=0.02)
    result = ab.run_aa(ready, 120, OPTIONS)
    assert [r.first for r in result.rounds[:4]] == ["A", "A'", "A", "A'"]
    order = result.order  # the second run is 2% faster, and the order line sees it
    assert order.significant and order.median == pytest.approx(0.98, abs=0.005), order
    assert result.separate.rate > 0.9          # Mann-Whitney U sees two different runs
    assert result.interleaved.called == 0      # A'/A alternates 0.98, 1.02: never one way
    assert result.interleaved.reading.startswith("consistent with the block test's level 3.1%")
    # without the alternation (judging second/first) the same block test calls every block
    for block in result.blocks:
        part = result.rounds[block.first_round - 1:block.last_round]
        firsts, seconds = zip(*(r.in_order for r in part), strict=True)
        assert stats.paired_ratio([m.median for m in firsts],
                                  [m.median for m in seconds]).significant


def test_rounds_after_the_last_block_count_for_separate_runs_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ready = simulated(monkeypatch, seed=4, drift=0.0)
    result = ab.run_aa(ready, 15, OPTIONS, block_rounds=7)
    assert len(result.blocks) == 2 and result.leftover == 1
    assert [(b.first_round, b.last_round) for b in result.blocks] == [(1, 7), (8, 14)]
    assert result.separate.judged == 15 and result.order.n == 15
    assert result.interleaved.level == pytest.approx(ab.block_level(7))


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
    assert "20 pairs" in few
    assert "cannot rule out" not in ab.false_positives(50, 1000).reading
    level = ab.block_level(6)
    blocks = ab.false_positives(0, 10, level, design=ab.INTERLEAVED).reading
    assert blocks.startswith("consistent with the block test's level 3.1%")
    assert "10 blocks cannot rule out rates up to 31%" in blocks
    above = ab.false_positives(5, 10, level, design=ab.INTERLEAVED).reading
    assert above.startswith("ABOVE the block test's level 3.1%") and "not independent" in above


# --- the command -------------------------------------------------------------------------

def test_identical_runs_are_never_called_different(kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    proc = kcross("aa", "getppid-inline", "--rounds", "12", "--samples", "11", "--cpu", "0",
                  "--harness", str(harness))
    assert len(runs(log)) == 24
    lines = proc.stderr.splitlines()
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 12 and all(line.endswith("p=1, no difference") for line in rounds)
    assert rounds[0].startswith("round 1/12 (A first)")
    assert rounds[1].startswith("round 2/12 (A' first)")
    blocks = [line for line in lines if line.startswith("block ")]
    assert blocks[0].startswith("block 1/2 (rounds 1-6): A'/A 1.000, 95% CI 1.000–1.000")
    assert len(blocks) == 2 and all(line.endswith("no difference") for line in blocks)
    out = text(proc)
    assert "1. interleaved rounds, judged as 'kcross ab' judges (decide with this): 2 blocks " \
           "of 6 rounds" in out, out
    assert "a difference called in 0 of 2 blocks: 0.0% (95% CI 0.0%–84.2%, exact " \
           "binomial); the block test's level 3.1% (96.9% CI coverage; nominal 5%)" in out
    assert "2. separate runs, judged as 'kcross compare' judges two stored runs " \
           "(Mann-Whitney U on their samples, two-sided, alpha 0.05): a difference called " \
           "in 0 of 12 pairs: 0.0% (95% CI 0.0%–26.5%, exact binomial); nominal 5%" in out
    assert "order: second run / first run, median of 12 rounds 1.000" in out
    assert out.index("1. interleaved") < out.index("2. separate")


def offset_harness(tmp_path: Path, *, drift: float = 0.0, order: float = 0.0) -> Path:
    """A harness wrapper whose k-th `run` is scaled (KCROSS_FAKE_SCALE) by a fixed per-run
    offset (seeded by k, sd ``drift``) and, when k is odd (a round's second run), by
    1 - ``order``: deterministic run-to-run variation and order effect."""
    path = tmp_path / "offset.py"
    counter = tmp_path / "count"
    path.write_text(f"""\
import os, random, runpy, sys
from pathlib import Path
counter = Path({str(counter)!r})
if sys.argv[1:2] == ["run"]:
    k = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(k + 1))
    scale = (1 + {drift!r} * random.Random(k).gauss(0, 1)) * (1 - {order!r} * (k % 2))
    os.environ["KCROSS_FAKE_SCALE"] = repr(scale)
sys.argv[0] = {str(FAKE_HARNESS)!r}
runpy.run_path({str(FAKE_HARNESS)!r}, run_name="__main__")
""")
    return path


def test_per_run_offsets_through_the_command(kcross: Kcross, tmp_path: Path) -> None:
    found = aa_json(kcross("aa", "getppid-inline", "--rounds", "24", "--samples", "11",
                           "--json", "--harness", str(offset_harness(tmp_path, drift=0.02))))
    one, two = found["interleaved"], found["separate"]
    assert two["called"] >= 18 and two["rate_ci_low"] > 0.05, two
    assert two["reading"].startswith("ABOVE the nominal 5%")
    assert one["judged"] == 4 and one["called"] == 0, one
    assert one["level"] == pytest.approx(1 / 32) and one["nominal"] == 0.05
    assert [r["first"] for r in found["rounds"][:3]] == ["A", "A'", "A"]


def test_order_effect_through_the_command(kcross: Kcross, tmp_path: Path) -> None:
    harness = offset_harness(tmp_path, order=0.02)
    proc = kcross("aa", "getppid-inline", "--rounds", "12", "--samples", "11", "--harness",
                  str(harness))
    out = text(proc)
    assert "a difference called in 0 of 2 blocks" in out, out
    assert "a difference called in 12 of 12 pairs" in out, out
    assert "the second run is systematically faster (the CI excludes 1); alternating which " \
           "copy goes first cancels it in 1." in out
    ratios = [line.split("A'/A ")[1][:5] for line in proc.stderr.splitlines()
              if line.startswith("round ")]
    assert ratios[:4] == ["0.980", "1.020", "0.980", "1.020"], ratios


def test_json_with_runs_drawn_afresh(kcross: Kcross) -> None:
    found = aa_json(kcross("aa", "getppid-inline", "--rounds", "8", "--samples", "15",
                           "--block-rounds", "6", "--json",
                           extra_env={"KCROSS_FAKE_RESAMPLE": "1"}))
    assert found["type"] == "aa" and found["bench"] == "syscall/getppid-inline"
    rounds, one, two = found["rounds"], found["interleaved"], found["separate"]
    assert len(rounds) == 8 and two["judged"] == 8
    assert two["called"] == sum(r["called"] for r in rounds)
    assert all(r["p"] < 0.05 for r in rounds if r["called"])   # called needs the test too
    assert two["rate_ci_low"] <= two["rate"] <= two["rate_ci_high"]
    assert one["block_rounds"] == 6 and one["leftover_rounds"] == 2 and one["judged"] == 1
    (block,) = one["blocks"]
    assert (block["first_round"], block["last_round"]) == (1, 6)
    assert block["ci_low"] <= block["ratio"] <= block["ci_high"]
    assert block["called"] == one["called"] == (not block["ci_low"] <= 1 <= block["ci_high"])
    assert all(r["ratio"] == pytest.approx(r["a_prime"] / r["a"]) for r in rounds)
    values = set(captured_result("syscall/getppid-inline")["samples"])
    assert min(values) <= min(r["a"] for r in rounds)
    order = found["order"]
    assert order["ci_low"] <= order["ratio"] <= order["ci_high"]


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
    (["getppid-inline", "--block-rounds", "5"], "--block-rounds: must be a whole number from 6"),
    (["getppid-inline", "--rounds", "7", "--block-rounds", "8"],
     "--rounds 7 makes no block of 8 rounds"),
    (["getppid-*"], f"'getppid-*' matches {GETPPID_ROWS} benchmarks"),
    (["getppid-inline", "--env", "KCROSS_VDSO=yes"], "KCROSS_VDSO=yes"),
])
def test_bad_input(kcross: Kcross, tmp_path: Path, args: list[str], message: str) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    assert_one_line_error(kcross("aa", *args, "--harness", str(harness)), contains=message)
    assert runs(log) == []


def test_help_says_what_it_costs_and_which_design_decides(kcross: Kcross) -> None:
    out = text(kcross("aa", "--help"))
    for words in ("interleaved rounds, as 'kcross ab' judges (the design to decide with)",
                  "separate runs, as 'kcross compare' judges two stored runs",
                  "--block-rounds", "3.1%", "cost: 2 x --rounds harness runs (120 by default)"):
        assert words in out, words


@pytest.mark.skipif(REAL is None, reason=WHY)
def test_real_harness(kcross: Kcross) -> None:
    assert REAL is not None
    found = aa_json(kcross("aa", "getppid-inline", "--rounds", "6", "--samples", "5",
                           "--warmup-ms", "2", "--min-batch-ms", "0.1", "--json",
                           "--harness", REAL[-1], timeout=120))
    assert found["separate"]["judged"] == 6 and 0 <= found["separate"]["called"] <= 6
    assert found["interleaved"]["judged"] == 1
    assert all(r["a"] > 0 and r["a_prime"] > 0 for r in found["rounds"])
