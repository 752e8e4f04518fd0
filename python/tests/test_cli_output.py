"""Output that cannot be written, a reader that goes away, a module that
cannot be imported, a bug: one line (or the bug's traceback), a documented
status, and never a run left "running".

These run real interpreters (``python -m kcross``): what is tested is what
happens to the process's own stdout and imports.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG, assert_one_line_error, query

SUITE = ("--suite", "syscall")


def kcross_proc(env: dict[str, str], *args: str, **popen: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kcross", *args], env=env,
                            stderr=subprocess.PIPE, text=True,
                            **popen)  # type: ignore[call-overload]


def run_to(env: dict[str, str], stdout: object, *args: str,
           extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kcross", *args], env={**env, **(extra_env or {})},
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=HANG)


def the_run(db: Path) -> tuple[str, int, str | None]:
    (status, kept, error), = query(db, "SELECT r.status, (SELECT count(*) FROM results "
                                       "WHERE run_id = r.id), r.error FROM runs r")
    return status, kept, error


@pytest.mark.parametrize("args", [["runs"], ["list"], ["show"], ["sysinfo"], ["show", "--json"],
                                  ["list", "--json"], ["report", "-o", "-"],
                                  ["show", "--export", "csv", "-"], ["compare", "1", "1"],
                                  ["history", "getcpu-vdso"]], ids=" ".join)
def test_stdout_on_dev_full_is_one_line(env: dict[str, str], stored_db: Path,
                                        args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        proc = run_to(env, full, *args, "--db", str(stored_db)) \
            if args[0] in ("runs", "show", "report", "compare", "history") \
            else run_to(env, full, *args)
    assert_one_line_error(proc, code=3, contains="cannot write to standard output: "
                                                 "No space left on device")


@pytest.mark.parametrize("json_output", [False, True], ids=["table", "json"])
def test_run_to_dev_full(env: dict[str, str], db_path: Path, json_output: bool) -> None:
    with open("/dev/full", "w") as full:
        proc = run_to(env, full, "run", "--quick", *SUITE, *(["--json"] if json_output else []))
    line = assert_one_line_error(proc, code=3, after_progress=True,
                                 contains="cannot write to standard output: No space left")
    if json_output:  # the first line already fails: nothing was started
        assert not query(db_path, "SELECT id FROM runs") if db_path.exists() else True
    else:  # measured and stored, then the table could not be written
        assert "run 1 is stored complete (see 'kcross show 1')" in line
        assert the_run(db_path)[0] == "complete"


def test_json_into_a_closed_pipe_marks_the_run_interrupted(env: dict[str, str],
                                                           db_path: Path) -> None:
    """`kcross run --json | head -2`: head leaves after the plan, mid-run."""
    proc = kcross_proc({**env, "KCROSS_FAKE_DELAY": "0.3"}, "run", "--quick", *SUITE, "--json",
                       "--no-readiness", stdout=subprocess.PIPE)  # no readiness line: one message
    try:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(2)]
        proc.stdout.close()  # head exits
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [json.loads(line)["type"] for line in head] == ["fingerprint", "plan"]
    assert proc.returncode == 141, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(r"kcross: standard output closed; kept \d+ of \d+ benchmark\(s\) in "
                        r"run 1 \(see 'kcross show 1'\), marked interrupted", last), err
    assert sum(line.startswith("kcross:") for line in err.splitlines()) == 1
    status, _, error = the_run(db_path)
    assert (status, error) == ("interrupted", "standard output closed")


def test_closed_pipe_on_other_commands_is_quiet(env: dict[str, str]) -> None:
    """`kcross list | head -0`: stop like any filter, status 141, nothing said."""
    proc = kcross_proc(env, "list", stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()
    err = proc.stderr.read() if proc.stderr else ""
    proc.wait(timeout=HANG)
    assert (proc.returncode, err) == (141, "")


@pytest.fixture
def broken_special(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """An environment where importing kcross.special fails, as in a broken installation (a
    sitecustomize, which every interpreter loads from PYTHONPATH, refuses to find it)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "sitecustomize.py").write_text(
        "import sys\n"
        "class Broken:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'kcross.special':\n"
        "            raise ImportError('bad magic number in kcross/special.py', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Broken())\n")
    return {**env, "PYTHONPATH": f"{shadow}:{env['PYTHONPATH']}"}


def test_failing_lazy_import_at_the_first_result(broken_special: dict[str, str],
                                                 db_path: Path) -> None:
    """kcross.special is imported at the first result of 2,001 samples (the median's
    interval: beyond 2,000 samples its binomial; below, kcross counts it in integers)."""
    proc = run_to(broken_special, subprocess.PIPE, "run", "--quick", "--samples", "2001",
                  *SUITE)
    line = assert_one_line_error(proc, code=3, after_progress=True,
                                 contains="cannot import ")
    assert "kcross.special" in line and "bad magic number in kcross/special.py" in line
    assert "0 result(s) kept in run 1 (marked failed)" in line
    status, kept, error = the_run(db_path)
    assert (status, kept) == ("failed", 0) and error.startswith("ImportError: bad magic")


def test_a_bug_marks_the_run_failed_and_shows_its_traceback(tmp_path: Path,
                                                           env: dict[str, str],
                                                           db_path: Path) -> None:
    """Unexpected exceptions are bugs: the traceback shows, the run is not left running."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import kcross.run.progress as p\n"
        "def advance(self, record):\n"
        "    raise RuntimeError('simulated bug in the progress display')\n"
        "p.RunProgress.advance = advance\n")
    proc = run_to({**env, "PYTHONPATH": f"{site}:{env['PYTHONPATH']}"}, subprocess.PIPE,
                  "run", "--quick", *SUITE)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" in proc.stderr and "simulated bug" in proc.stderr
    status, kept, error = the_run(db_path)
    assert (status, kept) == ("failed", 1)
    assert error == "RuntimeError: simulated bug in the progress display"


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"]], ids=" ".join)
def test_help_to_dev_full_is_one_line(env: dict[str, str], args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        proc = run_to(env, full, *args)
    assert_one_line_error(proc, code=3, contains="cannot write to standard output")


def test_stdout_closed_from_the_start_is_one_line(env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "kcross", "list"], env=env, stdout=None,
                          stderr=subprocess.PIPE, text=True, timeout=HANG,
                          preexec_fn=lambda: os.close(1))
    assert_one_line_error(proc, code=3, contains="cannot write to standard output: it is closed")
