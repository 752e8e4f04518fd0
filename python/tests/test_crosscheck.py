"""kcross crosscheck: kcross-harness against `perf bench`, alternated and pinned.

CI has no perf: a fake `perf` on PATH prints perf bench's output format (the
lines of perf 6.1) with a usecs/op the test chooses, and logs its arguments and
the CPUs it was allowed, so the tests see the alternation, the pinning by
taskset and the arguments each check passes.  One test runs the real perf,
skipped with the reason where it is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import HANG, Kcross, assert_one_line_error, captured_result
from kcross import stats
from test_ab import REAL, WHY, bench_of, runs, wrapper_harness

FAKE_PERF = """\
#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_PERF_LOG"], "a") as f:
    f.write(json.dumps({{"harness": "perf", "argv": args,
                        "cpus": sorted(os.sched_getaffinity(0))}}) + "\\n")
if os.environ.get("FAKE_PERF_FAIL"):
    print("perf: failed to open something: Permission denied", file=sys.stderr)
    sys.exit(1)
usecs = os.environ.get("FAKE_PERF_USECS", "0.128780")
if args[:3] == ["bench", "syscall", "basic"]:
    loops = args[args.index("-l") + 1] if "-l" in args else "10000000"
    print("# Running 'syscall/basic' benchmark:")
    print(f"# Executed {{loops}} getppid() calls")
    print("     Total time: 1.288 [sec]")
    print()
    print(f"       {{usecs}} usecs/op")
    print("        7765180 ops/sec")
elif args[:3] == ["bench", "sched", "pipe"]:
    loops = args[args.index("-l") + 1] if "-l" in args else "1000000"
    what = "threads" if "-T" in args else "processes"
    print("# Running 'sched/pipe' benchmark:")
    print(f"# Executed {{loops}} pipe operations between two {{what}}")
    print()
    print("     Total time: 0.440 [sec]")
    print()
    print(f"      {{usecs}} usecs/op")
    print("         227272 ops/sec")
else:
    print(" Usage: perf bench <collection> <benchmark> [<options>]", file=sys.stderr)
    sys.exit(129)
"""


@pytest.fixture
def perf_env(tmp_path: Path) -> dict[str, str]:
    """A PATH whose perf is the fake (taskset stays the real one), and the shared log."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    perf = bindir / "perf"
    perf.write_text(FAKE_PERF.format(python=shutil.which("python3") or "/usr/bin/python3"))
    perf.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
            "FAKE_PERF_LOG": str(tmp_path / "log.jsonl")}


def logged(tmp_path: Path) -> list[dict]:
    path = tmp_path / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def raw_median(name: str) -> float:
    return stats.median(stats.raw_samples(captured_result(name)))


def test_syscall_check_alternates_pinned_and_gives_the_ratio(
        kcross: Kcross, tmp_path: Path, perf_env: dict[str, str]) -> None:
    harness = wrapper_harness(tmp_path, "h", tmp_path / "log.jsonl")
    proc = kcross("crosscheck", "--check", "syscall", "--rounds", "6", "--cpu", "0",
                  "--harness", str(harness), extra_env={**perf_env, "FAKE_PERF_USECS": "0.1"})
    assert proc.returncode == 0, proc.stderr
    kc = raw_median("syscall/getppid-glibc")
    ratio = kc / 100.0
    order = [i["harness"] for i in logged(tmp_path) if i["harness"] == "perf"
             or i["argv"][0] == "run"]
    assert order == ["perf", "h", "h", "perf"] * 3
    for i in logged(tmp_path):
        if i["harness"] == "perf":
            assert i["argv"] == ["bench", "syscall", "basic"] and i["cpus"] == [0]
    for r in runs(tmp_path / "log.jsonl"):
        assert bench_of(r) == "syscall/getppid-glibc"
        assert r["argv"][r["argv"].index("--cpu") + 1] == "0"
    rounds = [line for line in proc.stderr.splitlines() if line.startswith("round ")]
    assert [line.split(":")[0] for line in rounds] == [
        f"round {i}/6 ({'perf' if i % 2 else 'kcross'} first)" for i in range(1, 7)]
    cells = table_row(proc.stdout, "syscall")
    assert cells[1:4] == ["6", "perf bench syscall basic", "100.0"], proc.stdout
    assert cells[6] == f"{ratio:.3f}", proc.stdout
    assert cells[7].startswith(f"{ratio:.3f} 95% CI "), proc.stdout   # the per-round ratios'
    assert "perf events" not in proc.stdout  # the caveat concerns the pipe check


def table_row(text: str, check: str) -> list[str]:
    """The cells of ``check``'s row of crosscheck's table."""
    row = next(line for line in text.splitlines() if line.startswith(f"| {check} (CPU "))
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_pipe_check_json_and_its_arguments(kcross: Kcross, tmp_path: Path,
                                           perf_env: dict[str, str]) -> None:
    harness = wrapper_harness(tmp_path, "h", tmp_path / "log.jsonl")
    proc = kcross("crosscheck", "--check", "pipe", "--threaded", "--loops", "1000",
                  "--rounds", "2", "--samples", "11", "--json", "--harness", str(harness),
                  extra_env={**perf_env, "FAKE_PERF_USECS": "5.0"})
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    found = json.loads(line)
    bench = "ctxsw/pipe-threads-same-cpu"
    assert found["check"] == "pipe" and found["kcross"] == bench
    assert found["perf"] == "perf bench sched pipe -l 1000 -T"
    assert found["perf_median"] == 5000.0
    assert found["ratio"] == pytest.approx(raw_median(bench) / 5000.0)
    assert found["paired_ratio"] is None  # 2 rounds: too few for a CI
    assert [r["first"] for r in found["rounds"]] == ["perf", "kcross"]
    perf_calls = [i for i in logged(tmp_path) if i["harness"] == "perf"]
    assert all(i["argv"] == ["bench", "sched", "pipe", "-l", "1000", "-T"] for i in perf_calls)
    assert all(r["argv"][r["argv"].index("--samples") + 1] == "11"
               for r in runs(tmp_path / "log.jsonl"))


def test_both_checks_by_default_and_the_perf_events_caveat(
        kcross: Kcross, perf_env: dict[str, str]) -> None:
    proc = kcross("crosscheck", "--rounds", "1", "--syscall-loops", "1000", extra_env=perf_env)
    assert proc.returncode == 0, proc.stderr
    assert table_row(proc.stdout, "syscall")[1] == "1"
    assert table_row(proc.stdout, "pipe")[1] == "1"
    assert "perf bench sched pipe -l 100000 against kcross ctxsw/pipe-procs-same-cpu" \
        in proc.stderr
    assert table_row(proc.stdout, "syscall")[2] == "perf bench syscall basic -l 1000"
    assert "note: perf events: any per-task perf event open meanwhile" in proc.stdout


def test_missing_perf_names_the_debian_package(kcross: Kcross, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    taskset = shutil.which("taskset")
    assert taskset is not None
    (bindir / "taskset").symlink_to(taskset)
    assert_one_line_error(kcross("crosscheck", extra_env={"PATH": str(bindir)}),
                          contains="perf not found: nothing to compare with (Debian: "
                                   "apt-get install linux-perf)")


def test_a_failing_perf_is_one_line(kcross: Kcross, perf_env: dict[str, str]) -> None:
    proc = kcross("crosscheck", "--check", "syscall", "--rounds", "1", "--cpu", "0",
                  extra_env={**perf_env, "FAKE_PERF_FAIL": "1"})
    assert_one_line_error(proc, code=3, after_progress=True,
                          contains="'taskset -c 0 perf bench syscall basic' exited 1: perf: "
                                   "failed to open something: Permission denied")


def test_unreadable_perf_output_is_one_line(kcross: Kcross, perf_env: dict[str, str]) -> None:
    proc = kcross("crosscheck", "--check", "syscall", "--rounds", "1",
                  extra_env={**perf_env, "FAKE_PERF_USECS": "lots"})
    assert_one_line_error(proc, code=3, after_progress=True,
                          contains="cannot read the usecs/op of 'perf bench syscall basic'")


def test_a_benchmark_this_machine_cannot_run(kcross: Kcross, perf_env: dict[str, str]) -> None:
    proc = kcross("crosscheck", "--check", "pipe", "--rounds", "1",
                  extra_env={**perf_env, "KCROSS_FAKE_SKIP": "pipe-*"})
    assert_one_line_error(proc, contains="crosscheck: ctxsw/pipe-procs-same-cpu cannot run "
                                         "here: skipped by KCROSS_FAKE_SKIP")
    assert not (Path(perf_env["FAKE_PERF_LOG"])).exists()  # refused before perf ran


PERF = shutil.which("perf")


def perf_works() -> tuple[bool, str]:
    if PERF is None:
        return False, "no perf on PATH (Debian: apt-get install linux-perf)"
    proc = subprocess.run([PERF, "bench", "syscall", "basic", "-l", "1000"],
                          capture_output=True, text=True, timeout=HANG, check=False)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return False, f"perf bench does not run here: {lines[-1] if lines else proc.returncode}"
    return True, ""


@pytest.mark.skipif(REAL is None, reason=WHY)
def test_real_perf_and_harness(kcross: Kcross) -> None:
    works, why = perf_works()
    if not works:
        pytest.skip(why)
    assert REAL is not None
    proc = kcross("crosscheck", "--rounds", "2", "--syscall-loops", "100000", "--loops", "1000",
                  "--samples", "5", "--cpu", "0", "--json", "--harness", REAL[-1])
    assert proc.returncode == 0, proc.stderr
    found = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [f["check"] for f in found] == ["syscall", "pipe"]
    for f in found:
        assert f["perf_median"] > 0 and f["kcross_median"] > 0 and len(f["rounds"]) == 2
