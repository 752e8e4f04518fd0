"""Every bad input: one 'kcross: error:' line on stderr, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error


@pytest.mark.parametrize("args, message", [
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["run", "--frob"], "unrecognized arguments: --frob"),
    # the harness's own ranges, checked before anything starts
    (["run", "--samples", "0"], "--samples: must be a whole number from 3 to 100000, not '0'"),
    (["run", "--samples", "1"], "--samples: must be a whole number from 3 to 100000, not '1'"),
    (["run", "--samples", "100001"], "from 3 to 100000, not '100001'"),
    (["run", "--samples", "3.7"], "--samples: must be a whole number from 3 to 100000"),
    (["run", "--samples", "many"], "--samples: must be a whole number from 3 to 100000"),
    (["run", "--cpu", "-1"], "--cpu: must be a whole number from 0 to 1023, not '-1'"),
    (["run", "--cpu", "1.5"], "--cpu: must be a whole number from 0 to 1023, not '1.5'"),
    (["run", "--warmup-ms", "-1"], "--warmup-ms: must be a number from 0 to 100000"),
    (["run", "--warmup-ms", "nan"], "--warmup-ms: must be a number from 0 to 100000"),
    (["run", "--min-batch-ms", "0"], "--min-batch-ms: must be a number from 0.01 to 10000"),
    (["run", "--min-batch-ms", "inf"], "--min-batch-ms: must be a number from 0.01 to 10000"),
    # the harness takes one GLOB and one suite: a second one is refused, not dropped
    (["run", "--bench", "getppid*", "--bench", "getpid"],
     "--bench given twice ('getppid*' and 'getpid'): the harness takes one GLOB"),
    (["run", "--suite", "syscall", "--suite", "vdso"], "--suite given twice"),
    (["show", "1", "2"], "unrecognized arguments: 2"),
])
def test_argument_errors(kcross: Kcross, db_path: Path, args: list[str], message: str) -> None:
    assert_one_line_error(kcross(*args), contains=message)
    assert not db_path.exists()  # refused before anything was opened


def test_no_command_prints_the_usage(kcross: Kcross) -> None:
    proc = kcross()
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: kcross ")
    for text in ("run", "runs", "show", "import", "exit status:", "130", "KCROSS_DB"):
        assert text in proc.stderr, text


def test_unknown_benchmark_comes_from_the_harness(kcross: Kcross, db_path: Path) -> None:
    assert_one_line_error(kcross("run", "--bench", "nope*"),
                          contains="no benchmark matches 'nope*'")
    # a rejected request leaves no empty run behind
    assert not db_path.exists() or "no runs" in kcross("runs").stderr


def test_missing_or_unusable_harness(kcross: Kcross, tmp_path: Path) -> None:
    assert_one_line_error(kcross("list", "--harness", str(tmp_path / "nope")),
                          contains="is not a file")
    script = tmp_path / "harness"
    script.write_text("#!/bin/sh\nexit 0\n")
    assert_one_line_error(kcross("sysinfo", "--harness", str(script)),
                          contains="is not executable")
    assert_one_line_error(kcross("list", extra_env={"KCROSS_HARNESS": str(tmp_path / "x.py")}),
                          contains="$KCROSS_HARNESS")
