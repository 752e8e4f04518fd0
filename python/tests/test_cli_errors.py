"""Every bad input: one 'kcross: error:' line on stderr, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Kcross, assert_one_line_error


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["run", "--frob"], "unrecognized arguments: --frob"),
    (["run", "--samples", "0"], "--samples: must be a positive integer, not '0'"),
    (["run", "--samples", "many"], "--samples: must be a positive integer, not 'many'"),
    (["run", "--cpu", "-1"], "--cpu: must be a CPU number"),
    (["show", "1", "2"], "unrecognized arguments: 2"),
])
def test_argument_errors(kcross: Kcross, args: list[str], message: str) -> None:
    assert_one_line_error(kcross(*args), contains=message)


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
