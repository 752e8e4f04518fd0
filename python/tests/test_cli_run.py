"""End to end: kcross run/runs/show/list/sysinfo through the fake harness and a temp DB."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import Kcross, assert_one_line_error, query

ALL = 7  # benchmarks in the fake registry


def test_run_stores_and_prints_table(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "syscall/getpid" in out and "53.91" in out          # median of the fixed samples
    assert "-2.9% +2.9%" in out                                  # CI of the median as ±% of it
    assert "skipped: kernel built without CONFIG_IA32_EMULATION" in out
    assert "syscall mechanism: syscall" in out
    assert "tsc @ 2.9 GHz" in out
    assert "hardware counters unavailable (all)" in out and "normal under KVM" in out
    assert "overhead: empty loop 0.600 ns/op; subtracted (†) for 6 of 6 benchmarks" in out
    assert "53.91†" in out                                       # marked row
    assert "6 ok, 1 skipped, 0 failed" in out
    assert "[7/7] rseq/cpu_id-read: 0.775 ns/op" in proc.stderr  # non-TTY progress lines
    rows = query(db_path, "SELECT status, source FROM runs")
    assert rows == [("complete", "run")]
    results = query(db_path, "SELECT suite, name, status, n, median_ns, ci_low_ns, ci_high_ns "
                             "FROM results ORDER BY seq")
    assert len(results) == ALL
    getpid = results[0]
    assert getpid[:4] == ("syscall", "getpid", "ok", 10)
    assert getpid[4] < getpid[6] and getpid[5] < getpid[4]
    skipped = [r for r in results if r[2] == "skipped"]
    assert skipped == [("syscall", "int80-getpid", "skipped", 0, None, None, None)]


def test_options_reach_the_harness(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--suite", "vdso", "--samples", "12", "--cpu", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["type"] for r in records] == ["fingerprint", "plan", "result", "result", "end"]
    assert records[1]["samples"] == 12 and records[1]["cpu"] == 1
    assert all(len(r["samples"]) == 12 and r["cpu"] == 1 for r in records[2:4])
    # --json still stores, and the command line is recorded
    assert query(db_path, "SELECT count(*) FROM results") == [(2,)]
    command = json.loads(query(db_path, "SELECT command FROM runs")[0][0])
    assert command == ["run", "--suite", "vdso", "--samples", "12", "--cpu", "1", "--json"]


def test_bench_glob_and_too_few_samples_are_explained(kcross: Kcross) -> None:
    proc = kcross("run", "--bench", "getpid", "--samples", "3")
    assert proc.returncode == 0, proc.stderr
    assert "n=3: too few for a 95% CI (need 6)" in proc.stdout
    assert "syscall/getppid" not in proc.stdout


def test_runs_and_show(kcross: Kcross, stored_db: Path) -> None:
    db = ["--db", str(stored_db)]
    assert kcross("run", "--quick", "--suite", "rseq", *db).returncode == 0
    runs = kcross("runs", *db)
    assert runs.returncode == 0
    lines = [line for line in runs.stdout.splitlines() if "fakehost" in line]
    assert len(lines) == 2 and " 2 " in lines[0] and " 1 " in lines[1]  # newest first
    assert "VM (KVM)" in lines[0] and "complete" in lines[0]
    assert lines[0].rstrip(" │").endswith(" 1") and lines[1].rstrip(" │").endswith(" 2")
    latest = kcross("show", *db)
    assert "run 2" in latest.stdout and "rseq/cpu_id-read" in latest.stdout
    first = kcross("show", "1", *db)
    assert "vdso/gettimeofday" in first.stdout and "rseq/" not in first.stdout
    assert_one_line_error(kcross("show", "7", *db), contains="no run 7")
    assert_one_line_error(kcross("show", "first", *db), contains="'latest'")


def test_show_json_round_trips_through_import(kcross: Kcross, tmp_path: Path,
                                               stored_db: Path) -> None:
    dumped = kcross("show", "--json", "--db", str(stored_db))
    assert dumped.returncode == 0
    types = [json.loads(line)["type"] for line in dumped.stdout.splitlines()]
    assert types == ["fingerprint", "plan", "result", "result", "end"]
    capture = tmp_path / "capture.jsonl"
    capture.write_text(dumped.stdout)
    other = str(tmp_path / "other.db")
    assert kcross("import", str(capture), "--db", other).returncode == 0
    assert kcross("show", "--json", "--db", other).stdout == dumped.stdout


def test_empty_database_is_not_created_by_reading(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("runs")
    assert proc.returncode == 0 and "no runs stored" in proc.stderr
    assert_one_line_error(kcross("show"), contains="no runs stored")
    assert not db_path.exists()


def test_list(kcross: Kcross) -> None:
    table = kcross("list")
    assert table.returncode == 0
    assert "clock_gettime-monotonic" in table.stdout
    assert "no: kernel built without CONFIG_IA32_EMULATION" in table.stdout
    js = kcross("list", "--suite", "rseq", "--json")
    records = [json.loads(line) for line in js.stdout.splitlines()]
    assert [(r["suite"], r["name"], r["available"]) for r in records] == [
        ("rseq", "cpu_id-read", True)]
    assert_one_line_error(kcross("list", "--suite", "nosuch"), contains="no suite 'nosuch'")


def test_sysinfo(kcross: Kcross) -> None:
    proc = kcross("sysinfo")
    assert proc.returncode == 0
    for text in ("Intel(R) Xeon(R) Platinum 8375C", "6.1.0-18-amd64", "spectre_v2",
                 "KVM / Amazon EC2", "registered", "0x178bfbff", "cycles:k",
                 "unavailable: perf_event_open: ENOENT", "syscall mechanism"):
        assert text in proc.stdout, text
    js = kcross("sysinfo", "--json")
    (record,) = [json.loads(line) for line in js.stdout.splitlines()]
    assert record["type"] == "fingerprint" and record["arch"] == "x86_64"


def test_harness_garbage_keeps_results_and_fails_run(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", extra_env={"KCROSS_FAKE_GARBAGE_AFTER": "2"})
    line = assert_one_line_error(proc, code=1, after_progress=True)
    assert "harness output line 5: not a JSON record" in line
    assert "2 result(s) kept in run 1" in line
    assert query(db_path, "SELECT status FROM runs") == [("failed",)]
    assert query(db_path, "SELECT count(*) FROM results") == [(2,)]


def test_harness_death_keeps_results(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", extra_env={"KCROSS_FAKE_DIE_AFTER": "3"})
    line = assert_one_line_error(proc, code=1, after_progress=True)
    assert "exited with status 1" in line and "simulated crash" in line
    assert query(db_path, "SELECT status, error IS NOT NULL FROM runs") == [("failed", 1)]
    assert query(db_path, "SELECT count(*) FROM results") == [(3,)]
    assert "3 of 7" in kcross("show").stdout


def test_wrong_schema_from_harness_is_refused(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", extra_env={"KCROSS_FAKE_SCHEMA": "2"})
    assert_one_line_error(proc, code=1, contains="record is schema 2, this kcross reads schema 1")
    assert not db_path.exists()  # no record stored, so no database created


def test_ctrl_c_keeps_finished_benchmarks(env: dict[str, str], db_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "kcross", "run", "--quick"],
                            env={**env, "KCROSS_FAKE_DELAY": "0.5"}, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        stored = 0
        while stored < 2:
            assert time.monotonic() < deadline, "results never arrived"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
            if db_path.exists():
                try:
                    stored = query(db_path, "SELECT count(*) FROM results")[0][0]
                except Exception:  # schema still being created
                    stored = 0
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    (status, kept), = query(db_path, "SELECT r.status, (SELECT count(*) FROM results "
                                     "WHERE run_id = r.id) FROM runs r")
    assert status == "interrupted"
    assert 2 <= kept < 7
    assert err.strip().splitlines()[-1].startswith(f"kcross: interrupted; kept {kept} of 7")
    assert query(db_path, "SELECT min(n) FROM results WHERE status = 'ok'") == [(10,)]
