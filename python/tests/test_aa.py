"""kcross aa: benchmarks against themselves, in rounds of two separate runs of several
processes; every design's rate of called differences (false positives; with --plant, power).

The counting is checked on simulated rounds (seeded): runs whose processes and runs
vary as a VM's do (a run-to-run offset) must inflate the designs that cannot see that
level and leave the design with the run-to-run noise near its level; a planted change
must be found.  The command is checked with the fake harness (identical runs; runs
drawn afresh) and, when built, the real one.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import FAKE_HARNESS, Kcross, assert_one_line_error, query
from kcross.rounds import aa
from kcross.series import Series
from test_ab import REAL, WHY, runs, wrapper_harness


def aa_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    return json.loads(line)


def text(proc: subprocess.CompletedProcess) -> str:
    """stdout as one line of words, table borders left out."""
    assert proc.returncode == 0, proc.stderr
    return " ".join(proc.stdout.replace("|", " ").split())


# --- the counting, on simulated rounds ------------------------------------------------------

def run_of(rng: np.random.Generator, label: str, level: float, k: int, n: int,
           process_cv: float, sample_cv: float, benches: int) -> aa.Run:
    series = {}
    for b in range(benches):
        values, marks = [], []
        for p in range(k):
            center = level * math.exp(rng.normal(0, process_cv))
            values += list(center * np.exp(rng.normal(0, sample_cv, n)))
            marks += [p] * n
        name = f"sim/b{b}"
        series[name] = Series(label, name, "ns/op", tuple(float(x) for x in values),
                              processes=tuple(marks), run=label)
    return aa.Run(label.split()[0], label, series)


def simulated(seed: int, *, rounds: int = 24, run_cv: float, process_cv: float = 0.005,
              sample_cv: float = 0.003, plant: float = 0.0, k: int = 8, n: int = 21,
              benches: int = 4) -> aa.Result:
    rng = np.random.default_rng(seed)
    pairs = []
    for r in range(1, rounds + 1):
        a = run_of(rng, f"A {r}", 100 * math.exp(rng.normal(0, run_cv)), k, n, process_cv,
                   sample_cv, benches)
        b = run_of(rng, f"A' {r}", 100 * (1 + plant) * math.exp(rng.normal(0, run_cv)), k, n,
                   process_cv, sample_cv, benches)
        pairs.append(aa.RoundPair(r, "A" if r % 2 else "A'", a, b))
    options = aa.Options(bench="sim/*", processes=k, samples=n, rounds=rounds, block_rounds=6,
                         cpu=0, plant=plant or None)
    result = aa.Result(options=options, rounds=pairs, names=list(pairs[0].a.series))
    aa.evaluate(result)
    return result


def test_block_level_is_one_minus_the_achieved_coverage() -> None:
    assert aa.block_level(6) == pytest.approx(2 * 0.5 ** 6)          # 3.1%: min..max of 6
    assert aa.block_level(10) == pytest.approx(2 * 11 / 1024)        # ranks 2..9 of 10


def test_a_machine_that_drifts_between_runs() -> None:
    """A run-to-run offset of 1% (processes 0.5%, samples 0.3%): the samples design and the
    processes design call most pairs different; with the noise the rate is near 5%, and
    kcross check with the noise passes nearly every pair."""
    result = simulated(1, run_cv=0.01)
    rates = result.rates
    assert rates[aa.SAMPLES].rate > 0.5 and rates[aa.SAMPLES].low > 0.05
    assert rates[aa.PROCESSES].low > 0.05, rates[aa.PROCESSES]
    noisy = rates[aa.WITH_NOISE]
    assert noisy.judged == 24 * 4, noisy
    assert noisy.low <= 0.05 <= noisy.high or noisy.high < 0.05, noisy
    assert rates[aa.BLOCKS].judged == 4 * 4
    assert result.gates[aa.GATE_NOISE].called <= 1
    cv = [n.cv for n in result.noise.values()]
    assert all(0.005 < c < 0.02 for c in cv), cv            # about the planted 1%


def test_a_quiet_machine_keeps_every_design_near_its_level() -> None:
    result = simulated(2, run_cv=0.0, process_cv=0.005)
    for design in (aa.PROCESSES, aa.WITH_NOISE):
        assert result.rates[design].low <= 0.05, result.rates[design]


def test_a_planted_change_is_found() -> None:
    """+5% planted on A' with a 0.7% run-to-run noise: the design with the noise finds it in
    (nearly) every pair, and a planted +10% fails kcross check in every round."""
    five = simulated(3, run_cv=0.007, plant=0.05, benches=1)
    assert five.rates[aa.WITH_NOISE].rate >= 0.9, five.rates[aa.WITH_NOISE]
    ten = simulated(4, run_cv=0.007, plant=0.10, benches=1)
    assert ten.gates[aa.GATE_NOISE].called == ten.gates[aa.GATE_NOISE].judged == 24


def test_the_noise_of_a_round_leaves_that_round_out() -> None:
    result = simulated(5, run_cv=0.01, rounds=6, benches=1)
    name = result.names[0]
    all_rounds = aa.noise_without(result.rounds, name, None)
    without_one = aa.noise_without(result.rounds, name, 1)
    assert all_rounds is not None and without_one is not None
    assert all_rounds.runs == 12 and without_one.runs == 10
    assert without_one.df == 8     # two copies of 5 runs: 4 + 4 degrees of freedom


# --- the command ---------------------------------------------------------------------------

def test_identical_runs_are_never_called_different(kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    db = tmp_path / "k.db"
    harness = wrapper_harness(tmp_path, "h", log)
    proc = kcross("aa", "getppid-inline", "--rounds", "6", "--processes", "2", "--samples",
                  "11", "--cpu", "0", "--harness", str(harness), "--db", str(db))
    assert len(runs(log)) == 6 * 2 * 2          # 6 rounds of 2 runs of 2 processes
    lines = proc.stderr.splitlines()
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 6 and rounds[0].startswith("round 1/6 (A first; run 1, run 2)")
    assert rounds[1].startswith("round 2/6 (A' first; run 4, run 3)")
    out = text(proc)
    for design in ("samples (one process each, Mann-Whitney) 0 6 0.0%",
                   "processes, no run-to-run noise", "processes + run-to-run noise",
                   "interleaved blocks of 6 rounds 0 1 0.0%"):
        assert design in out, (design, out)
    assert "kcross check at +5% with the run-to-run noise: failed 0 of 6 round pairs" in out
    assert "stored as run 1 to run 12 (source aa)" in out
    assert query(db, "SELECT DISTINCT source FROM runs") == [("aa",)]
    assert query(db, "SELECT count(*) FROM results") == [(12 * 2,)]   # 2 processes each


def test_json_with_runs_drawn_afresh_and_the_history_they_give(kcross: Kcross,
                                                               tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    found = aa_json(kcross("aa", "getppid-*", "--rounds", "7", "--processes", "3",
                           "--samples", "9", "--block-rounds", "6", "--json", "--db", db,
                           extra_env={"KCROSS_FAKE_RESAMPLE": "1"}))
    assert found["type"] == "aa" and found["rounds"] == 7 and found["processes"] == 3
    designs = found["designs"]
    assert designs["blocks"]["judged"] == len(found["benchmarks"])   # 7 rounds: 1 block of 6
    assert designs["processes"]["judged"] == 7 * len(found["benchmarks"])
    for r in designs.values():
        if r["judged"]:
            assert r["ci_low"] <= r["rate"] <= r["ci_high"]
    assert len(found["stored"]) == 14 and set(found["run_to_run"]) <= set(found["benchmarks"])
    # The stored runs are the machine's history: a later comparison sees the level above.
    for _ in range(2):
        assert kcross("run", "--processes", "3", "--samples", "9", "--bench", "getppid-*",
                      "--db", db, extra_env={"KCROSS_FAKE_RESAMPLE": "1"}).returncode == 0
    proc = kcross("compare", "latest~1", "latest", "--db", db)
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert "run-to-run noise (" in flat and "stored runs of this machine" in flat
    assert "cannot see" not in flat
    # history shows the noise per machine, sysinfo --readiness what the store knows of it
    proc = kcross("history", "getppid-inline", "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert "run-to-run noise on vm " in proc.stdout and "from 16 runs" in proc.stdout
    proc = kcross("sysinfo", "--readiness", "--json", "--db", db)
    (finding,) = [f for f in json.loads(proc.stdout)["findings"]
                  if f["name"] == "run-to-run noise"]
    assert "benchmarks, from up to 16 runs" in finding["seen"], finding


def test_settings_reach_every_run(kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    proc = kcross("aa", "getppid-inline", "--env", "KCROSS_VDSO=0", "--rounds", "6",
                  "--processes", "2", "--samples", "11", "--no-store", "--harness",
                  str(harness), "--db", str(tmp_path / "none.db"))
    assert proc.returncode == 0, proc.stderr
    assert {r["env"].get("KCROSS_VDSO") for r in runs(log)} == {"0"}
    assert not (tmp_path / "none.db").exists()      # --no-store: nothing stored


@pytest.mark.parametrize("args, message", [
    (["nosuch"], "no benchmark matches 'nosuch'"),
    (["getppid-inline", "--rounds", "2"], "--rounds: must be a whole number from 6"),
    (["getppid-inline", "--rounds", "6", "--block-rounds", "7"],
     "--rounds 6 make no block of 7 rounds for the blocks design to judge: the rounds must "
     "make at least one block (--rounds 7 or more, or --block-rounds 6 or fewer)"),
    (["getppid-inline", "--rounds", "5"], "--rounds: must be a whole number from 6"),
    (["getppid-inline", "--block-rounds", "5"], "--block-rounds: must be a whole number from 6"),
    (["getppid-*", "--plant", "5"], "--plant slows one benchmark"),
    (["getppid-inline", "--plant", "0"], "--plant: must be a percentage above 0"),
    (["getppid-inline", "--processes", "1"], "--processes: must be a whole number from 2"),
    (["percpu/add-rsec"], "no benchmark matches 'percpu/add-rsec' (did you mean percpu/add-rseq"),
    (["getppid-inline", "--env", "KCROSS_VDSO=yes"], "KCROSS_VDSO=yes"),
])
def test_bad_input(kcross: Kcross, tmp_path: Path, args: list[str], message: str) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    assert_one_line_error(kcross("aa", *args, "--harness", str(harness)), contains=message)
    assert runs(log) == []


def test_the_fewest_rounds_make_one_block_of_the_fewest() -> None:
    """--rounds and --block-rounds start where a block's CI can be had at all, and rounds
    that make no block are refused whoever asks (the command line, or aa.run's callers)."""
    from kcross import stats
    from kcross.cli.aa import AA_MIN_BLOCK
    from kcross.errors import UserError

    assert AA_MIN_BLOCK == stats.min_samples_for()
    options = aa.Options(bench="x", processes=2, samples=9, rounds=4, block_rounds=6, cpu=0)
    with pytest.raises(UserError, match=r"--rounds 4 make no block of 6 rounds .*"
                                         r"\(--rounds 6 or more\)$"):
        aa.check_options(options)


def test_help_says_what_each_design_sees_and_what_it_costs(kcross: Kcross) -> None:
    out = text(kcross("aa", "--help"))
    for words in ("what a verdict sees when the store has no history of the machine",
                  "what compare and check do once the store has a history",
                  "--plant PCT", "this machine's history", "cost: 2 x --rounds runs"):
        assert words in out, words


@pytest.mark.skipif(REAL is None, reason=WHY)
def test_real_harness(kcross: Kcross, tmp_path: Path) -> None:
    assert REAL is not None
    found = aa_json(kcross("aa", "getppid-inline", "--rounds", "6", "--processes", "2",
                           "--samples", "5", "--warmup-ms", "2", "--min-batch-ms", "0.1",
                           "--json", "--harness", REAL[-1], "--db", str(tmp_path / "k.db")))
    assert found["designs"]["processes"]["judged"] == 6
    assert all(r["a_medians"]["syscall/getppid-inline"] > 0 for r in found["runs"])


assert FAKE_HARNESS.exists()
