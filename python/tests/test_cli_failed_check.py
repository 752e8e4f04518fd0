"""A benchmark whose own check fails is a result: the run is complete, the
table shows the failed row with its reason, and kcross exits 1.

The failure is forced with KCROSS_TEST_FAIL (a glob of benchmark names), which
the fake harness honours like the real one (test_real_harness.py has the same
test against the C harness).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import Kcross, query

FAIL = {"KCROSS_TEST_FAIL": "getppid*"}
REASON = "forced failure (KCROSS_TEST_FAIL, for tests)"


def test_failed_check_gives_table_complete_run_and_exit_1(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", "--suite", "syscall", extra_env=FAIL)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr
    assert "syscall/getppid" in proc.stdout and "failed: forced failure" in proc.stdout
    assert re.search(r" ok$", proc.stdout, re.M)  # the other rows are there too
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "kcross: ")  # and it says why the status is 1
    assert "failed their check; run 1 is complete (exit status 1)" in proc.stderr
    (status, error), = query(db_path, "SELECT status, error FROM runs")
    assert (status, error) == ("complete", None)
    failed = query(db_path, "SELECT name, status FROM results WHERE status = 'failed'")
    assert failed and all(name.startswith("getppid") for name, _ in failed)
    assert query(db_path, "SELECT count(*) FROM results")[0][0] > len(failed)
    shown = kcross("show")
    assert shown.returncode == 0 and "failed: forced failure" in shown.stdout
    assert "complete" in shown.stdout


def test_failed_check_with_json(kcross: Kcross, db_path: Path) -> None:
    proc = kcross("run", "--quick", "--suite", "syscall", "--json", extra_env=FAIL)
    assert proc.returncode == 1, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert records[-1]["type"] == "end" and records[-1]["failed"] >= 1
    assert any(r["type"] == "result" and r["status"] == "failed" and r["reason"] == REASON
               for r in records)
    assert query(db_path, "SELECT status FROM runs") == [("complete",)]


def test_exit_1_without_failed_results_is_still_a_harness_failure(kcross: Kcross,
                                                                  db_path: Path) -> None:
    """Only an end record that counts failed checks makes exit status 1 normal."""
    proc = kcross("run", "--quick", "--suite", "syscall",
                  extra_env={"KCROSS_FAKE_DIE_AFTER": "1"})
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("kcross: error: kcross-harness "
                                                           "exited with status 1")
    assert query(db_path, "SELECT status FROM runs") == [("failed",)]
