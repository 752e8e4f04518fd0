"""End to end: kcross run/runs/show/list/sysinfo through the fake harness and a temp DB."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import (
    HANG,
    Kcross,
    assert_one_line_error,
    captured,
    query,
    runs_rows,
    terminal_signals,
    wait_for_rows,
)
from kcross.stats import summarize_record
from kcross.views.text import ns as format_ns

PLAN = captured()[1]
ALL = len(PLAN["benchmarks"])  # benchmarks in the captured real run the fake serves
FP = captured()[0]
SKIP = {"KCROSS_FAKE_SKIP": "getppid-int80"}
SKIP_REASON = "skipped by KCROSS_FAKE_SKIP (fake harness)"


def _row(out: str, label: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(f"{label} ")]
    return line


def test_run_stores_and_prints_table(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", "--wide", extra_env=SKIP)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # Every figure follows kcross.stats on the captured record (its own tests check the rule).
    summaries = {f"{r['suite']}/{r['name']}": summarize_record(r)
                 for r in captured() if r["type"] == "result" and r["name"] != "getppid-int80"
                 and r["status"] == "ok"}
    # Rows the captured machine itself skipped (an arch's alternative instruction, an
    # across-CPU row on one CPU): skipped here too, with their reasons.
    natural = [r for r in captured() if r["type"] == "result" and r["status"] == "skipped"
               and r["name"] != "getppid-int80"]
    for label, s in summaries.items():
        row = _row(out, label)
        mark = "†" if s.overhead.subtracted else ""
        ci = s.ci
        lo, hi = ((ci.low - s.median) / s.median * 100, (ci.high - s.median) / s.median * 100)
        assert f" {mark}{format_ns(s.median)} " in row, row
        assert f" [{lo:+.1f}, {hi:+.1f}] " in row, row      # CI of the median, % of it
        assert f" {format_ns(s.min)} " in row and f" {s.spread:.1%} " in row, row
    subtracted = sum(s.overhead.subtracted for s in summaries.values())
    assert subtracted, "the capture should have a row with the overhead subtracted (†)"
    assert f"skipped: {SKIP_REASON}" in _row(out, "syscall/getppid-int80")
    assert f"syscall mechanism: {FP['syscall']['mechanism']}" in out
    assert f"timer: {FP['timer']['source']} @ " in out
    ok = ALL - 1 - len(natural)
    assert f"subtracted (†) for {subtracted} of {ok} benchmarks" in out
    assert f"{ok} ok, {1 + len(natural)} skipped, 0 failed" in out
    last = PLAN["benchmarks"][-1]
    assert f"[{ALL}/{ALL}] {last['suite']}/{last['name']}: " in proc.stderr  # non-TTY progress
    rows = query(db_path, "SELECT status, source FROM runs")
    assert rows == [("complete", "run")]
    results = query(db_path, "SELECT suite, name, status, n, median_ns, ci_low_ns, ci_high_ns "
                             "FROM results ORDER BY seq")
    assert len(results) == ALL
    first = results[0]
    assert first[:4] == ("syscall", "getppid-glibc", "ok", 11)
    assert first[5] <= first[4] <= first[6]
    skipped = [r for r in results if r[2] == "skipped"]
    assert ("syscall", "getppid-int80", "skipped", 0, None, None, None) in skipped
    assert sorted(r[:2] for r in skipped if r[1] != "getppid-int80") == \
        sorted((r["suite"], r["name"]) for r in natural)


def test_options_reach_the_harness(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--processes", "1", "--suite", "syscall", "--bench", "getcpu-*",
                  "--samples", "12", "--cpu", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["type"] for r in records] == ["fingerprint", "plan", "result", "result", "end"]
    assert records[1]["samples"] == 12 and records[1]["cpu"] == 1
    assert all(len(r["samples"]) == 12 and r["cpu"] == 1 for r in records[2:4])
    # --json still stores, and the command line is recorded
    assert query(db_path, "SELECT count(*) FROM results") == [(2,)]
    command = json.loads(query(db_path, "SELECT command FROM runs")[0][0])
    assert command == ["run", "--processes", "1", "--suite", "syscall", "--bench", "getcpu-*",
                       "--samples", "12", "--cpu", "1", "--json"]


def test_bench_glob_and_too_few_samples_are_explained(kcross: Kcross) -> None:
    proc = kcross("run", "--processes", "1", "--bench", "getppid-inline", "--samples", "3")
    assert proc.returncode == 0, proc.stderr
    # folded in the cell (the table keeps its width), in one line with --wide
    assert "n=3: too few for a" in _row(proc.stdout, "syscall/getppid-inline")
    assert "n=3: too few for a 95% CI (need 6)" in kcross("show", "--wide").stdout
    assert "syscall/getppid-glibc" not in proc.stdout


def test_runs_and_show(kcross: Kcross, stored_db: Path) -> None:
    db = ["--db", str(stored_db)]
    assert kcross("run", "--quick", "--suite", "cpuid", *db).returncode == 0
    cpuid = sum(b["suite"] == "cpuid" for b in PLAN["benchmarks"])
    runs = kcross("runs", *db)
    assert runs.returncode == 0
    rows = runs_rows(runs.stdout)
    assert list(rows) == ["2", "1"]  # newest first
    assert rows["2"]["machine"].startswith(FP["host"]["hostname"])
    assert "VM (" in rows["2"]["machine"] and rows["2"]["status"] == "complete"
    assert (rows["2"]["benchmarks"], rows["1"]["benchmarks"]) == (str(cpuid), "2")
    latest = kcross("show", *db)
    assert "run 2" in latest.stdout and "cpuid/rseq-load" in latest.stdout
    first = kcross("show", "1", *db)
    assert "syscall/getcpu-vdso" in first.stdout and "cpuid/" not in first.stdout
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
    table = kcross("list", extra_env=SKIP)
    assert table.returncode == 0
    assert "clock_gettime-vdso" in table.stdout
    assert f"no: {SKIP_REASON}" in table.stdout
    js = kcross("list", "--suite", "cpuid", "--json")
    records = [json.loads(line) for line in js.stdout.splitlines()]
    assert records == [b for b in captured("list") if b["suite"] == "cpuid"]
    assert_one_line_error(kcross("list", "--suite", "nosuch"), contains="suite 'nosuch'")


def test_sysinfo(kcross: Kcross) -> None:
    proc = kcross("sysinfo")
    assert proc.returncode == 0
    (fp,) = captured("sysinfo")
    for text in (fp["cpu"]["model"], fp["kernel"]["release"], "spectre_v2", "registered",
                 fp["auxv"]["hwcap2"], "cycles:k", "syscall mechanism"):
        assert text in proc.stdout, text
    js = kcross("sysinfo", "--json")
    (record,) = [json.loads(line) for line in js.stdout.splitlines()]
    assert record["type"] == "fingerprint" and record["arch"] == "x86_64"


def test_harness_garbage_keeps_results_and_fails_run(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", extra_env={"KCROSS_FAKE_GARBAGE_AFTER": "2"})
    line = assert_one_line_error(proc, code=3, after_progress=True)
    assert "harness output line 5: not a JSON record" in line
    assert "2 result(s) kept in run 1" in line
    assert query(db_path, "SELECT status FROM runs") == [("failed",)]
    assert query(db_path, "SELECT count(*) FROM results") == [(2,)]


def test_harness_death_keeps_results(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", extra_env={"KCROSS_FAKE_DIE_AFTER": "3"})
    line = assert_one_line_error(proc, code=3, after_progress=True)
    assert "exited with status 1" in line and "simulated crash" in line
    assert query(db_path, "SELECT status, error IS NOT NULL FROM runs") == [("failed", 1)]
    assert query(db_path, "SELECT count(*) FROM results") == [(3,)]
    assert f"3 of {ALL}" in kcross("show").stdout


def test_wrong_schema_from_harness_is_refused(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", extra_env={"KCROSS_FAKE_SCHEMA": "1"})
    line = assert_one_line_error(proc, code=3,
                                 contains="record is schema 1, this kcross reads schema 2")
    assert "kcross import" in line  # a schema-1 capture can still be imported
    assert not db_path.exists()  # no record stored, so no database created
    proc = kcross("run", extra_env={"KCROSS_FAKE_SCHEMA": "3"})
    assert_one_line_error(proc, code=3, contains="record is schema 3, this kcross reads schema 2")
    assert not db_path.exists()


def test_ctrl_c_keeps_finished_benchmarks(env: dict[str, str], db_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "kcross", "run", "--quick"],
                            env={**env, "KCROSS_FAKE_DELAY": "0.5"}, start_new_session=True,
                            preexec_fn=terminal_signals,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_rows(proc, db_path, "results", 2)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    (status, kept), = query(db_path, "SELECT r.status, (SELECT count(*) FROM results "
                                     "WHERE run_id = r.id) FROM runs r")
    assert status == "interrupted"
    assert 2 <= kept < ALL
    assert err.strip().splitlines()[-1].startswith(f"kcross: interrupted; kept {kept} of {ALL}")
    assert query(db_path, "SELECT min(n) FROM results WHERE status = 'ok'") == [(11,)]


def test_a_run_of_several_processes(kcross: Kcross, db_path: Path) -> None:
    """--processes K: K harness executions, one after another, combined into one run: one
    fingerprint, the plan with processes K, each result marked with its process, one end
    counting them all; every result stored as it arrives; one row per benchmark shown."""
    proc = kcross("run", "--processes", "3", "--suite", "syscall", "--bench", "getcpu-*",
                  "--samples", "12", "--json")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["type"] for r in records] == ["fingerprint", "plan", *["result"] * 6, "end"]
    assert records[1]["processes"] == 3 and records[1]["samples"] == 12
    assert [r["process"] for r in records[2:8]] == [0, 0, 1, 1, 2, 2]
    assert records[-1]["ok"] == 6
    stored = query(db_path, "SELECT name, process, n FROM results ORDER BY seq")
    assert [(p, n) for _, p, n in stored] == [(0, 12), (0, 12), (1, 12), (1, 12), (2, 12),
                                                (2, 12)]
    shown = kcross("show")
    assert shown.returncode == 0, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if "syscall/getcpu-" in line]
    assert len(rows) == 2 and all("36" in row for row in rows)   # 3 x 12 samples, one row
    listed = kcross("runs", "--json")
    assert json.loads(listed.stdout.splitlines()[0])["results"] == 2   # benchmarks, not rows
    # the defaults: K processes of a process's share of samples and warm-up
    from kcross.run.defaults import DEFAULT_PROCESSES, PROCESS_SAMPLES, PROCESS_WARMUP_MS

    proc = kcross("run", "--bench", "getcpu-vdso", "--json")
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert records[1]["processes"] == DEFAULT_PROCESSES
    assert (records[1]["samples"], records[1]["warmup_ms"]) == (PROCESS_SAMPLES,
                                                                PROCESS_WARMUP_MS)


def test_a_process_on_another_machine_fails_the_run(kcross: Kcross, db_path: Path,
                                                    tmp_path: Path) -> None:
    """Every process must report the first's machine configuration: a harness whose later
    process sees another kernel fails the run (one line), the results so far kept."""
    from conftest import FAKE_HARNESS

    counter = tmp_path / "count"
    wrapper = tmp_path / "harness.py"
    wrapper.write_text(f"""import json, os, runpy, sys
from pathlib import Path
counter = Path({str(counter)!r})
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
if n == 1:  # the second process: another kernel
    real = sys.stdout
    class Edit:
        def write(self, text):
            if '"fingerprint"' in text:
                record = json.loads(text)
                record["kernel"]["release"] = "9.9.9"
                text = json.dumps(record) + "\\n"
            return real.write(text)
        def flush(self):
            real.flush()
    sys.stdout = Edit()
sys.argv[0] = {str(FAKE_HARNESS)!r}
runpy.run_path({str(FAKE_HARNESS)!r}, run_name="__main__")
""")
    proc = kcross("run", "--processes", "3", "--bench", "getcpu-vdso", "--harness",
                  str(wrapper))
    assert proc.returncode == 3, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert "harness process 1 reported another machine configuration than process 0" in line
    assert "kernel release" in line and "2 result(s) kept in run 1 (marked failed)" in line
    assert query(db_path, "SELECT status FROM runs") == [("failed",)]
