"""kcross ab: interleaved rounds of two sides, the per-round paired ratio B/A and its CI.

The fake harness serves the same captured records every run, so a ratio is
exact; KCROSS_FAKE_SCALE plants a known difference on one side (by its
setting, or by a harness wrapper that marks its side).  A logging wrapper
records every harness invocation, so the tests see the alternation, each
side's environment, and that a refused setting stops everything before a run.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
from pathlib import Path

import harnesses
import pytest
from conftest import FAKE_HARNESS, HANG, PYTHON_DIR, Kcross, assert_one_line_error, captured, captured_result
from kcross import stats

ROOT = PYTHON_DIR.parent
# How many rows the fake's capture has under getppid-* (one glob naming several).
GETPPID_ROWS = sum(fnmatch.fnmatchcase(b["name"], "getppid-*") for b in captured("list"))


def wrapper_harness(tmp_path: Path, name: str, log: Path, **env: str) -> Path:
    """A harness (.py, run by kcross with its interpreter) that logs each invocation to ``log``
    (arguments and the forcings it was given), sets ``env``, then runs the fake harness."""
    path = tmp_path / f"{name}.py"
    path.write_text(f"""\
import json, os, runpy, sys
with open({str(log)!r}, "a") as f:
    f.write(json.dumps({{"harness": {name!r}, "argv": sys.argv[1:],
                        "env": {{k: v for k, v in os.environ.items()
                                if k in ("KCROSS_SYSCALL", "KCROSS_VDSO")}}}}) + "\\n")
os.environ.update({env!r})
sys.argv[0] = {str(FAKE_HARNESS)!r}
runpy.run_path({str(FAKE_HARNESS)!r}, run_name="__main__")
""")
    return path


def invocations(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def runs(log: Path) -> list[dict]:
    """The logged `run` invocations, in order."""
    return [i for i in invocations(log) if i["argv"][0] == "run"]


def bench_of(invocation: dict) -> str:
    argv = invocation["argv"]
    return argv[argv.index("--bench") + 1]


def median(name: str) -> float:
    return stats.summarize_record(captured_result(name)).median


def ab_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    return json.loads(line)


def test_two_benchmarks_alternate_and_give_the_exact_paired_ratio(
        kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    proc = kcross("ab", "getppid-inline", "getppid-dispatch", "--rounds", "6", "--samples",
                  "11", "--cpu", "0", "--harness", str(harness))
    assert proc.returncode == 0, proc.stderr
    ratio = median("syscall/getppid-dispatch") / median("syscall/getppid-inline")
    # each round on stderr as it finished, the first side alternating
    rounds = [line for line in proc.stderr.splitlines() if line.startswith("round ")]
    assert [line.split(":")[0] for line in rounds] == [
        f"round {i}/6 ({'A' if i % 2 else 'B'} first)" for i in range(1, 7)]
    assert all(line.endswith(f"B/A {ratio:.3f}") for line in rounds), rounds
    # the runs: alternating order, every one pinned to the same CPU with the same samples
    order = [bench_of(r) for r in runs(log)]
    a, b = "syscall/getppid-inline", "syscall/getppid-dispatch"
    assert order == [a, b, b, a, a, b, b, a, a, b, b, a]
    for r in runs(log):
        argv = r["argv"]
        assert argv[argv.index("--cpu") + 1] == "0" and argv[argv.index("--samples") + 1] == "11"
    assert f"B/A {ratio:.3f}: median of 6 per-round ratios, 95% CI {ratio:.3f} (coverage" \
        in proc.stdout, proc.stdout
    for text in ("syscall/getppid-inline", "syscall/getppid-dispatch", "median ns/op"):
        assert text in proc.stdout


def test_json_summary(kcross: Kcross) -> None:
    found = ab_json(kcross("ab", "getppid-inline", "getppid-dispatch", "--rounds", "6",
                           "--samples", "11", "--json"))
    ratio = median("syscall/getppid-dispatch") / median("syscall/getppid-inline")
    assert found["type"] == "ab" and found["unit"] == "ns/op" and found["samples"] == 11
    assert found["a"]["bench"] == "syscall/getppid-inline"
    assert found["b"]["bench"] == "syscall/getppid-dispatch"
    assert [r["first"] for r in found["rounds"]] == ["A", "B"] * 3
    assert found["ratio"] == pytest.approx(ratio)
    assert found["ci_low"] == pytest.approx(ratio) == found["ci_high"]
    # a constant ratio below 1 is a shown difference (the CI excludes 1): the sign test
    assert found["significant"] is (ratio != 1.0)


def test_settings_of_one_benchmark_plant_a_known_difference(kcross: Kcross,
                                                          tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    proc = kcross("ab", "getppid-dispatch", "--env-a", "KCROSS_SYSCALL=libc",
                  "--env-b", "KCROSS_SYSCALL=syscall", "--rounds", "6", "--samples", "11",
                  "--harness", str(harness),
                  extra_env={"KCROSS_FAKE_SCALE": "1.25@KCROSS_SYSCALL=syscall"})
    assert proc.returncode == 0, proc.stderr
    assert "B/A 1.250: median of 6 per-round ratios, 95% CI 1.250 (coverage" in proc.stdout
    assert "B is 25.0% slower than A (the CI excludes 1)" in proc.stdout
    # each side's runs had its own setting, and reported the mechanism it selected
    for r in runs(log):
        assert r["env"]["KCROSS_SYSCALL"] in ("libc", "syscall")
    assert [r["env"]["KCROSS_SYSCALL"] for r in runs(log)][:4] == \
        ["libc", "syscall", "syscall", "libc"]
    found = ab_json(kcross("ab", "getppid-dispatch", "--env-a", "KCROSS_SYSCALL=libc",
                           "--env-b", "KCROSS_SYSCALL=syscall", "--rounds", "6", "--samples",
                           "11", "--json"))
    assert found["a"]["mechanisms"] == ["libc"] and found["b"]["mechanisms"] == ["syscall"]
    assert {(r["a_mechanism"], r["b_mechanism"]) for r in found["rounds"]} == \
        {("libc", "syscall")}
    assert found["a"]["settings"] == {"KCROSS_SYSCALL": "libc"}
    assert found["a"]["forced"]["KCROSS_SYSCALL"] == "libc"  # as the fingerprint records it
    assert found["b"]["forced"]["KCROSS_SYSCALL"] == "syscall" and found["notes"] == []


def test_two_harness_binaries(kcross: Kcross, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    old = wrapper_harness(tmp_path, "old", log)
    new = wrapper_harness(tmp_path, "new", log, KCROSS_FAKE_SIDE="new")
    proc = kcross("ab", "getppid-inline", "--harness-a", str(old), "--harness-b", str(new),
                  "--rounds", "6", "--samples", "11",
                  extra_env={"KCROSS_FAKE_SCALE": "0.8@KCROSS_FAKE_SIDE=new"})
    assert proc.returncode == 0, proc.stderr
    assert "B/A 0.800" in proc.stdout and "B is 20.0% faster than A" in proc.stdout
    assert [r["harness"] for r in runs(log)] == ["old", "new", "new", "old"] * 3
    assert str(old) in proc.stdout and str(new) in proc.stdout


def test_settings_that_select_the_same_mechanism_are_flagged(kcross: Kcross) -> None:
    proc = kcross("ab", "getppid-dispatch", "--env-a", "KCROSS_SYSCALL=auto",
                  "--env-b", "KCROSS_SYSCALL=syscall", "--rounds", "6", "--samples", "11")
    assert proc.returncode == 0, proc.stderr
    assert "note: both sides ran the syscall mechanism syscall: their KCROSS_SYSCALL " \
           "settings select the same one on this x86_64 machine" in proc.stdout, proc.stdout


def test_raw_medians_and_mixed_overhead_decisions(kcross: Kcross) -> None:
    a, b = "syscall/clock_gettime-vdso", "syscall/clock_gettime-syscall"  # subtracted, not
    assert stats.summarize_record(captured_result(a)).overhead.subtracted
    assert not stats.summarize_record(captured_result(b)).overhead.subtracted
    ruled = ab_json(kcross("ab", a, b, "--rounds", "6", "--samples", "11", "--json"))
    assert ruled["ratio"] == pytest.approx(median(b) / median(a))
    assert any("subtracted from A in 6 of 6 rounds and from B in 0 of 6" in n
               for n in ruled["notes"]), ruled["notes"]
    raw = ab_json(kcross("ab", a, b, "--rounds", "6", "--samples", "11", "--raw", "--json"))
    raw_median = {n: stats.median(stats.raw_samples(captured_result(n))) for n in (a, b)}
    assert raw["ratio"] == pytest.approx(raw_median[b] / raw_median[a])
    assert raw["notes"] == [] and raw["figure"] == "raw median"


@pytest.mark.parametrize("args, message", [
    (["getppid-dispatch", "--env-b", "KCROSS_SYSCALL=scv"],
     "side B (KCROSS_SYSCALL=scv): KCROSS_SYSCALL=scv: not one of libc, syscall, auto "
     "(on this x86_64 machine)"),
    (["getppid-dispatch", "--env-a", "KCROSS_VDSO=2"], "side A (KCROSS_VDSO=2): KCROSS_VDSO=2"),
    (["getppid-dispatch", "--env-b", "KCROSS_FOO=1"],
     "side B: KCROSS_FOO is not a setting"),
    (["getppid-dispatch", "--env-b", "KCROSS_SYSCALL"], "expected NAME=VALUE"),
    (["getppid-dispatch", "--env-b", "KCROSS_VDSO=0", "--env-b", "KCROSS_VDSO=1"],
     "KCROSS_VDSO given twice for one side"),
    (["getppid-dispatch"], "A and B are the same"),
    (["getppid-dispatch", "getppid-dispatch"], "A and B are the same"),
    (["getppid-*", "getppid-inline"], f"side A: 'getppid-*' matches {GETPPID_ROWS} benchmarks"),
    (["getppid-inline", "nope"], "side B: unknown benchmark 'nope' (see 'kcross list')"),
    # the name first: one unknown name is not "A and B are the same"
    (["nosuch"], "kcross: error: unknown benchmark 'nosuch' (see 'kcross list')"),
    (["getpid-inline", "getppid-call"], "side A: unknown benchmark 'getpid-inline' (did you mean "
     "getppid-inline or gettid-inline?)"),
    (["a", "b", "c"], "ab takes one or two benchmarks"),
    (["getppid-inline", "getppid-call", "--rounds", "5"], "--rounds: must be a whole number "
     "from 6 to 10000"),
])
def test_bad_sides_are_refused_before_anything_runs(kcross: Kcross, tmp_path: Path,
                                                    args: list[str], message: str) -> None:
    log = tmp_path / "log.jsonl"
    harness = wrapper_harness(tmp_path, "h", log)
    assert_one_line_error(kcross("ab", *args, "--harness", str(harness)), contains=message)
    assert runs(log) == []


def test_a_benchmark_this_machine_cannot_run(kcross: Kcross) -> None:
    assert_one_line_error(kcross("ab", "getppid-inline", "getppid-call",
                                 extra_env={"KCROSS_FAKE_SKIP": "getppid-call"}),
                          contains="side B: syscall/getppid-call cannot run here: skipped by")


def test_a_failed_check_ends_with_status_1(kcross: Kcross) -> None:
    proc = kcross("ab", "getppid-inline", "--env-b", "KCROSS_TEST_FAIL=getppid-inline",
                  "--rounds", "6", "--samples", "11")
    assert_one_line_error(proc, code=1, after_progress=True,
                          contains="side B: syscall/getppid-inline failed its check: forced "
                                   "failure")


REAL, WHY = harnesses.native()
BUILT = ROOT / "build" / "q" / "kcross-harness"
if REAL is None and BUILT.is_file() and os.access(BUILT, os.X_OK):
    REAL, WHY = [str(BUILT)], ""


def real_sysinfo() -> dict:
    assert REAL is not None
    proc = subprocess.run([*REAL, "sysinfo", "--json"], capture_output=True, text=True,
                          timeout=HANG, check=True)
    return json.loads(proc.stdout.splitlines()[0])


@pytest.mark.skipif(REAL is None, reason=WHY)
def test_real_harness_records_each_sides_mechanism(kcross: Kcross) -> None:
    assert REAL is not None
    fp = real_sysinfo()
    native = [m for m in fp["syscall"]["available"] if m != "libc"][0]
    found = ab_json(kcross("ab", "getppid-dispatch", "--env-a", "KCROSS_SYSCALL=libc",
                           "--env-b", f"KCROSS_SYSCALL={native}", "--rounds", "6",
                           "--samples", "5", "--warmup-ms", "2", "--min-batch-ms", "0.1",
                           "--json", "--harness", REAL[-1]))
    assert found["a"]["mechanisms"] == ["libc"] and found["b"]["mechanisms"] == [native]
    assert len(found["rounds"]) == 6 and all(r["ratio"] > 0 for r in found["rounds"])
    assert found["ci_low"] <= found["ratio"] <= found["ci_high"]
    if "scv" not in fp["syscall"]["available"]:  # e.g. x86-64: refused by the harness itself
        assert_one_line_error(kcross("ab", "getppid-dispatch", "--env-b", "KCROSS_SYSCALL=scv",
                                     "--harness", REAL[-1]),
                              contains="side B (KCROSS_SYSCALL=scv): KCROSS_SYSCALL=scv: not one of")




@pytest.mark.parametrize("command, words", [
    ("ab", ["--env-a", "--harness-b", "KCROSS_SYSCALL=scv", "per-round"]),
    ("aa", ["false positive", "Mann-Whitney U", "'kcross ab' judges rounds", "--plant PCT",
            "this machine's history"]),
    ("crosscheck", ["perf bench syscall basic", "linux-perf", "perf events"]),
])
def test_help_says_what_the_command_does(kcross: Kcross, command: str, words: list[str]) -> None:
    proc = kcross(command, "--help")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    for word in words:
        assert word in text, word


def scatter_env(counter: Path, ratios: list[float]) -> dict[str, str]:
    """KCROSS_FAKE_SCATTER planting these per-round ratios B/A: side A's runs at the capture's
    figures, side B's times each round's ratio (runs in the engine's order: A B, B A...);
    ``counter``: the file counting the runs."""
    factors = []
    for number, r in enumerate(ratios, start=1):
        factors += [1.0, r] if number % 2 else [r, 1.0]
    return {"KCROSS_FAKE_SCATTER": f"{counter}:{','.join(map(str, factors))}"}


# Ten rounds of a loaded machine: most agree within 2%, three were disturbed.
SCATTERED = [1.0, 1.01, 0.99, 3.0, 1.02, 0.98, 0.31, 1.0, 1.01, 2.6]


def test_scattered_rounds_keep_the_sign_tests_interval_and_are_named(
        kcross: Kcross, tmp_path: Path) -> None:
    """The interval is the order statistics of the rounds' ratios (the sign test's ranks 2
    and 9 of 10), however far the disturbed rounds lie; a warning names the scatter."""
    args = ("ab", "getppid-dispatch", "--env-a", "KCROSS_SYSCALL=syscall", "--env-b",
            "KCROSS_SYSCALL=libc", "--rounds", "10", "--samples", "11", "--no-readiness")
    found = ab_json(kcross(*args, "--json", extra_env=scatter_env(tmp_path / "j", SCATTERED)))
    assert [r["ratio"] for r in found["rounds"]] == pytest.approx(SCATTERED)
    ordered = sorted(SCATTERED)
    assert (found["ci_low"], found["ci_high"]) == pytest.approx((ordered[1], ordered[8]))
    assert found["effective_rounds"] == 10 and found["outlying"] == 3
    assert found["significant"] is False
    (warning,) = found["warnings"]
    assert warning.startswith("the rounds scatter: B/A from 0.310 to 3.000, 3 of 10 rounds "
                              "beyond 3.5 robust sds (±"), warning
    shown = kcross(*args, extra_env=scatter_env(tmp_path / "t", SCATTERED))
    assert shown.returncode == 0, shown.stderr
    assert f"warning: {warning}" in " ".join(shown.stdout.splitlines()), shown.stdout
    # rounds that agree: no warning
    steady = ab_json(kcross(*args, "--json", extra_env=scatter_env(
        tmp_path / "s", [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.01, 1.0, 1.01, 0.99])))
    assert steady["warnings"] == [] and steady["outlying"] == 0


@pytest.mark.parametrize("command", ["ab", "aa"])
def test_the_readiness_line_comes_before_the_rounds(kcross: Kcross, tmp_path: Path,
                                                    command: str) -> None:
    """ab and aa check the machine as run does: one stderr line naming what is not tuned,
    before the first round; --no-readiness: none."""
    from test_readiness import CPU, TUNED, make_tree

    root = make_tree(tmp_path / "untuned", {**TUNED, "/proc/sys/kernel/nmi_watchdog": "1"})
    args = (("ab", "getppid-inline", "getppid-dispatch", "--samples", "11") if command == "ab"
            else ("aa", "getppid-inline", "--processes", "2", "--samples", "5", "--no-store"))
    proc = kcross(*args, "--rounds", "6", "--cpu", str(CPU),
                  extra_env={"KCROSS_TEST_SYSROOT": str(root)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    said = [i for i, line in enumerate(lines) if "not tuned" in line]
    assert [lines[i] for i in said] == [f"kcross: machine not tuned: NMI watchdog on — see "
                                        f"'kcross sysinfo --readiness --cpu {CPU}'"]
    assert said[0] < min(i for i, line in enumerate(lines) if line.startswith("round "))
    quiet = kcross(*args, "--rounds", "6", "--cpu", str(CPU), "--no-readiness",
                   extra_env={"KCROSS_TEST_SYSROOT": str(root)})
    assert quiet.returncode == 0 and "not tuned" not in quiet.stderr, quiet.stderr
    assert "--no-readiness" in kcross(command, "--help").stdout
