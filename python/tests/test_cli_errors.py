"""Every bad input: one 'kcross: error:' line on stderr, exit status 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error


@pytest.mark.parametrize("args, message", [
    (["frobnicate"], "no command 'frobnicate'"),
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


# What int() and float() take but a command line should not: underscores, other scripts'
# digits (Arabic-Indic, Devanagari, fullwidth), superscripts, thousands of digits.
NOT_NUMBERS = ["1_0", "\u0661\u0660", "\u0967\u0966", "\uff11\uff10", "1\u00b9", "1" * 10_000,
               "0x10", "1e2_0"]


@pytest.mark.parametrize("text", NOT_NUMBERS)
@pytest.mark.parametrize("args, message", [
    (["run", "--samples"], "--samples: must be a whole number from 3 to 100000"),
    (["run", "--cpu"], "--cpu: must be a whole number from 0 to 1023"),
    (["run", "--warmup-ms"], "--warmup-ms: must be a number from 0 to 100000"),
    (["run", "--min-batch-ms"], "--min-batch-ms: must be a number from 0.01 to 10000"),
    (["sysinfo", "--cpu"], "--cpu: must be a whole number from 0 to 1023"),
    (["ab", "getppid-inline", "getppid-call", "--rounds"], "--rounds: must be a whole number"),
    (["aa", "getppid-inline", "--block-rounds"], "--block-rounds: must be a whole number"),
    (["crosscheck", "--loops"], "--loops: must be a whole number"),
    (["history", "getppid-inline", "--last"], "--last: must be a whole number of runs"),
    (["check", "--baseline", "1", "--max-regression"], "must be a percentage from 0 to 1000"),
])
def test_numbers_are_ascii_digits(kcross: Kcross, db_path: Path, args: list[str],
                                  message: str, text: str) -> None:
    line = assert_one_line_error(kcross(*args, text), contains=message)
    assert len(line) < 300, line   # 10,000 digits are not repeated
    assert not db_path.exists()


def test_numbers_still_read(kcross: Kcross) -> None:
    """ASCII numbers as before: a sign, spaces around, a decimal point, an exponent."""
    from kcross.cli.options import number

    assert number(0, 1023, whole=True)(" +7 ") == 7
    assert number(0.01, 10_000, whole=False)("2.5e1") == 25.0
    assert number(0.01, 10_000, whole=False)(".5") == 0.5
    assert number(3, 100_000, whole=True)("00201") == 201


def test_a_column_of_a_numbers_file_is_ascii_digits(kcross: Kcross, tmp_path: Path) -> None:
    """`a.txt:²` was a traceback (isdigit() but not int()); `a.txt:١` read column 1."""
    a = tmp_path / "a.txt"
    a.write_text("1 5\n2 6\n3 7\n4 8\n5 9\n")
    for selector in ("\u00b2", "\u0661", "1_0", "9" * 10_000, "0"):
        line = assert_one_line_error(kcross("compare", f"{a}:{selector}", str(a)),
                                     contains="after ':' a file of numbers takes a column")
        assert len(line) < 400, line


def test_a_bad_columns_variable_is_ignored(kcross: Kcross, stored_db: Path) -> None:
    """COLUMNS (the shell's terminal width) that is no width was a traceback."""
    for columns in ("", "abc", "\u0661\u0660\u0660", "0"):
        proc = kcross("runs", "--db", str(stored_db), extra_env={"COLUMNS": columns})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


LONG = "a" * 10_000
DIGITS = "1" * 10_000


# (arguments, what the one line says, whether the command takes the test's --db)
ECHOING = [
    (["tag", "latest", LONG], "a tag has at most 64 characters", True),
    (["tag", "--delete", LONG], "no tag", True),
    (["run", "--tag", LONG], "a tag has at most 64 characters", True),
    (["show", LONG], "run must be a run id", True),
    (["delete", LONG], "run must be a run id", True),
    (["show", "latest@" + LONG], "no machine", True),
    (["show", "latest~" + DIGITS], "N in latest~N is a whole number", True),
    (["run", "--quick", "--bench", LONG], "no benchmark matches", True),   # the harness's line
    (["run", "--quick", "--suite", LONG], "unknown suite", True),
    (["compare", LONG, "latest"], "is neither an existing file nor a stored run", True),
    (["compare", "latest", "latest:" + LONG], "no benchmark matches", True),
    (["check", "--baseline", LONG + ".jsonl"], "no file", True),
    (["history", LONG], "no stored run has a benchmark matching", True),
    (["history", "getcpu-vdso", "--machine", LONG], "no stored run of", True),
    (["report", "-o", "/nonexistent/" + LONG], "File name too long", True),
    (["history", "getcpu-vdso", "--plot", LONG + ".svg"], "File name too long", True),
    (["show", "--export", LONG, "x"], "unknown export format", True),
    (["show", "--export", "json", LONG], "File name too long", True),
    (["import", "/nonexistent/" + LONG], "cannot read", True),
    (["push", LONG], "File name too long", True),
    (["runs", "--db", "/nonexistent/" + LONG], "File name too long", False),
    (["runs", "--db", "sqlite://" + LONG + "/x"], "which an SQLite URL cannot have", False),
    (["runs", "--db", "postgresql://" + LONG], "is no host name", False),  # was a traceback
    (["run", "--remote", "ssh://" + LONG], "a host name has at most 253 characters", True),
    (["run", "--remote", LONG], "expected ssh://", True),
    (["list", "--harness", "/x/" + LONG], "is not a file", False),
    (["ab", "--env-a", LONG + "=1", "getppid-inline", "getppid-inline"], "is not a setting",
     False),
    (["ab", "--env-a", "KCROSS_SYSCALL=" + LONG, "getppid-inline", "getppid-inline"],
     "KCROSS_SYSCALL=", False),
    (["aa", LONG], "no benchmark matches", False),
]


@pytest.mark.parametrize("args, message, db", ECHOING,
                         ids=[" ".join(a[:60] for a in case[0])[:60] for case in ECHOING])
def test_no_error_line_repeats_10000_characters(kcross: Kcross, stored_db: Path,
                                                args: list[str], message: str,
                                                db: bool) -> None:
    """Every error that repeats user input cuts it (errors.shown, errors.clipped)."""
    line = assert_one_line_error(kcross(*args, *(["--db", str(stored_db)] if db else [])),
                                 contains=message)
    assert len(line) < 600, line[:300]
    assert "(10" in line and "characters)" in line   # says how long it was
