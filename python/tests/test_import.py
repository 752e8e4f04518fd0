"""kcross import: all-or-nothing, truncated captures become interrupted runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Kcross, assert_one_line_error, fake_capture, query


@pytest.fixture(scope="module")
def capture() -> str:
    return fake_capture("--quick")


def test_import_complete_capture(kcross: Kcross, tmp_path: Path, db_path: Path,
                                 capture: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(capture)
    proc = kcross("import", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "as run 1: complete, 7 of 7" in proc.stdout
    assert query(db_path, "SELECT status, source, started_at FROM runs")[0][:2] == \
        ("complete", "import")
    # started_at comes from the fingerprint's host.time, not from the import time
    assert query(db_path, "SELECT started_at FROM runs")[0][0].startswith("2024-03-01 12:00:00")
    shown = kcross("show")
    assert "syscall/read-devnull" in shown.stdout and "187.6" in shown.stdout


def test_truncated_capture_imports_as_interrupted(kcross: Kcross, tmp_path: Path,
                                                  db_path: Path, capture: str) -> None:
    lines = capture.splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    # fingerprint, plan, 3 results, then half of the 4th result (power lost mid-write)
    path.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    proc = kcross("import", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "interrupted (no end record), 3 of 7" in proc.stdout
    assert "line 6 was cut off" in proc.stderr
    assert query(db_path, "SELECT status FROM runs") == [("interrupted",)]
    assert query(db_path, "SELECT count(*) FROM results") == [(3,)]


@pytest.mark.parametrize("line_no, bad, message", [
    (4, "this is not json\n", "line 4: not a JSON record"),
    (3, None, "line 3: result record syscall/getpid: 'status' must be one of"),
    (1, "schema2", "line 1: record is schema 2"),
])
def test_malformed_capture_stores_nothing(kcross: Kcross, tmp_path: Path, stored_db: Path,
                                          capture: str, line_no: int, bad: str | None,
                                          message: str) -> None:
    lines = capture.splitlines(keepends=True)
    if bad is None:
        record = json.loads(lines[line_no - 1])
        record["status"] = "great"
        bad = json.dumps(record) + "\n"
    elif bad == "schema2":
        bad = json.dumps({**json.loads(lines[0]), "schema": 2}) + "\n"
    lines[line_no - 1] = bad
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines))
    line = assert_one_line_error(kcross("import", str(path), "--db", str(stored_db)),
                                 contains=message)
    assert str(path) in line
    assert query(stored_db, "SELECT count(*) FROM runs") == [(1,)]
    assert query(stored_db, "SELECT count(*) FROM results") == [(2,)]


def test_import_rejects_non_run_files(kcross: Kcross, tmp_path: Path, capture: str) -> None:
    sysinfo = tmp_path / "sysinfo.jsonl"
    sysinfo.write_text(capture.splitlines(keepends=True)[0])
    assert_one_line_error(kcross("import", str(sysinfo)), contains="no plan record")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert_one_line_error(kcross("import", str(empty)), contains="no fingerprint record")
    assert_one_line_error(kcross("import", str(tmp_path / "missing.jsonl")),
                          contains="cannot read")


def test_negative_samples_are_shown_not_hidden(kcross: Kcross, tmp_path: Path,
                                               capture: str) -> None:
    lines = capture.splitlines(keepends=True)
    record = json.loads(lines[2])
    record["samples"][4] = -0.5  # overhead subtraction overshot
    lines[2] = json.dumps(record) + "\n"
    path = tmp_path / "neg.jsonl"
    path.write_text("".join(lines))
    assert kcross("import", str(path)).returncode == 0
    out = kcross("show").stdout
    assert "sample 4 is negative (-0.5)" in out


def test_import_from_stdin_and_bad_file_creates_no_database(env: dict[str, str], kcross: Kcross,
                                                           db_path: Path, capture: str) -> None:
    assert_one_line_error(kcross("import", "-", "--db", str(db_path)), contains="stdin")
    assert not db_path.exists()
    proc = subprocess.run([sys.executable, "-m", "kcross", "import", "-"], input=capture,
                          env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "imported stdin as run 1: complete, 7 of 7" in proc.stdout
