"""kcross import: all-or-nothing, truncated captures become interrupted runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, HANG, Kcross, assert_one_line_error, captured, fake_capture, query
from kcross.stats import summarize_record
from kcross.views.text import ns as format_ns

ALL = len(captured()[1]["benchmarks"])


@pytest.fixture(scope="module")
def capture() -> str:
    return fake_capture("--quick")


def test_import_complete_capture(kcross: Kcross, tmp_path: Path, db_path: Path,
                                 capture: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(capture)
    proc = kcross("import", str(path))
    assert proc.returncode == 0, proc.stderr
    assert f"as run 1: complete, {ALL} of {ALL}" in proc.stdout
    assert query(db_path, "SELECT status, source, started_at FROM runs")[0][:2] == \
        ("complete", "import")
    # started_at comes from the fingerprint's host.time, not from the import time
    host_time = json.loads(capture.splitlines()[0])["host"]["time"]
    assert query(db_path, "SELECT started_at FROM runs")[0][0].startswith(
        host_time.replace("T", " ").rstrip("Z")[:19])
    shown = kcross("show")
    (record,) = [r for r in captured() if r.get("name") == "read-devzero"]
    assert "syscall/read-devzero" in shown.stdout
    assert format_ns(summarize_record(record).median) in shown.stdout


def test_truncated_capture_imports_as_interrupted(kcross: Kcross, tmp_path: Path,
                                                  db_path: Path, capture: str) -> None:
    lines = capture.splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    # fingerprint, plan, 3 results, then half of the 4th result (power lost mid-write)
    path.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    proc = kcross("import", str(path))
    assert proc.returncode == 0, proc.stderr
    assert f"interrupted (no end record), 3 of {ALL}" in proc.stdout
    assert "line 6 was cut off" in proc.stderr
    assert query(db_path, "SELECT status FROM runs") == [("interrupted",)]
    assert query(db_path, "SELECT count(*) FROM results") == [(3,)]


@pytest.mark.parametrize("line_no, bad, message", [
    (4, "this is not json\n", "line 4: not a JSON record"),
    (3, None, "line 3: result record syscall/getppid-glibc: $.status: must be"),
    (1, "schema3", "line 1: record is schema 3, this kcross reads schema 1 or 2"),
])
def test_malformed_capture_stores_nothing(kcross: Kcross, tmp_path: Path, stored_db: Path,
                                          capture: str, line_no: int, bad: str | None,
                                          message: str) -> None:
    lines = capture.splitlines(keepends=True)
    if bad is None:
        record = json.loads(lines[line_no - 1])
        record["status"] = "great"
        bad = json.dumps(record) + "\n"
    elif bad == "schema3":
        bad = json.dumps({**json.loads(lines[0]), "schema": 3}) + "\n"
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
    assert_one_line_error(kcross("import", str(empty)), contains="empty.jsonl: empty file")
    assert_one_line_error(kcross("import", str(tmp_path / "missing.jsonl")),
                          contains="cannot read")


def test_negative_schema1_samples_are_shown_not_hidden(kcross: Kcross,
                                                       tmp_path: Path) -> None:
    lines = (DATA / "schema1-syscall.jsonl").read_text().splitlines(keepends=True)
    record = json.loads(lines[2])
    record["samples"][4] = -0.5  # schema 1: the harness's overhead subtraction overshot
    lines[2] = json.dumps(record) + "\n"
    path = tmp_path / "neg.jsonl"
    path.write_text("".join(lines))
    assert kcross("import", str(path)).returncode == 0
    assert "sample 4 is" in kcross("show").stdout  # folded in its cell
    assert "sample 4 is negative (-0.5)" in kcross("show", "--wide").stdout


def test_schema1_capture_of_the_real_harness_imports(kcross: Kcross, db_path: Path) -> None:
    """A real schema-1 capture (kcross 0.1.0) is stored as is and summarised by its own
    overhead decision: samples as given, † where that harness subtracted."""
    path = DATA / "schema1-syscall.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    results = [r for r in records if r["type"] == "result"]
    proc = kcross("import", str(path))
    assert proc.returncode == 0, proc.stderr
    assert f"complete, {len(results)} of {len(results)}" in proc.stdout
    shown = kcross("show").stdout
    for rec in results:
        summary = summarize_record(rec)
        assert summary.overhead.subtracted == rec["overhead"]["subtracted"]
        assert summary.overhead.reason == rec["overhead"]["why"]
        (row,) = [line for line in shown.splitlines() if line.startswith(f"syscall/{rec['name']} ")]
        mark = "†" if rec["overhead"]["subtracted"] else ""
        assert f" {mark}{format_ns(summary.median)} " in row, row
    stored = query(db_path, "SELECT record FROM results ORDER BY seq")
    assert [json.loads(r[0])["schema"] for r in stored] == [1] * len(results)


def test_import_from_stdin_and_bad_file_creates_no_database(env: dict[str, str], kcross: Kcross,
                                                           db_path: Path, capture: str) -> None:
    assert_one_line_error(kcross("import", "-", "--db", str(db_path)), contains="stdin")
    assert not db_path.exists()
    proc = subprocess.run([sys.executable, "-m", "kcross", "import", "-"], input=capture,
                          env=env, capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert f"imported stdin as run 1: complete, {ALL} of {ALL}" in proc.stdout


@pytest.mark.parametrize("kind", ["capture", "lava"])
def test_import_from_a_fifo_reads_it_once(env: dict[str, str], tmp_path: Path, db_path: Path,
                                         capture: str, kind: str) -> None:
    """A pipe or FIFO (`kcross import <(cat capture.jsonl)`) can be read once: telling its kind
    must not eat its head."""
    import os
    import threading

    text = capture if kind == "capture" else (DATA / "lava" / "x86_64-getppid.log").read_text()
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as f:   # blocks until kcross opens the FIFO for reading
            f.write(text)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    proc = subprocess.run([sys.executable, "-m", "kcross", "import", str(fifo)], env=env,
                          capture_output=True, text=True, timeout=HANG)
    writer.join(timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"imported {fifo} ")
    assert query(db_path, "SELECT status FROM runs") == [("complete",)]
