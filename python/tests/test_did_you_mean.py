"""Every name a user types, mistyped, gets the closest names in one error line (issue 24,
"for people"): commands, benchmarks and suites (run, list, compare, history, ab, aa),
arches, experiments, export formats, a --format's choices, tags and hosts; said one way,
by one owner (kcross.errors.did_you_mean), never as argparse's list of every command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error
from kcross.errors import did_you_mean

KCROSS = Path(__file__).resolve().parents[1] / "kcross"


def test_the_words() -> None:
    assert did_you_mean("rn", ["run", "runs", "list"]) == "did you mean run or runs?"
    assert did_you_mean("getppid-inlin", ["getppid-inline"]) == "did you mean getppid-inline?"
    assert did_you_mean("getpid", ["getppid", "gettid", "getpid2", "stat-root"]) == \
        "did you mean getpid2, getppid or gettid?"     # the closest three, best first
    assert did_you_mean("compar", ["compare", "mark"]) == "did you mean compare?"  # far behind
    assert did_you_mean("zzz", ["run", "list"]) == ""


def test_one_owner() -> None:
    """Only kcross.errors finds close names (difflib): every message says them alike."""
    users = sorted(str(p.relative_to(KCROSS)) for p in KCROSS.rglob("*.py")
                   if re.search(r"\bdifflib\b", p.read_text()))
    assert users == ["errors.py"]


CASES = [
    # argparse's own error listed every command, cut at 254 characters
    (["rn"], "no command 'rn': did you mean run or runs? (see 'kcross --help')"),
    (["compar", "1", "2"], "no command 'compar': did you mean compare?"),
    (["compare", "a", "b", "--format", "benchstatt"],
     "argument --format: 'benchstatt' is not one of table, ministat, benchstat: did you mean "
     "benchstat?"),
    # the harness said only that nothing matched
    (["run", "--no-readiness", "--bench", "getpid-inline"],
     "no benchmark matches 'getpid-inline' (did you mean getppid-inline or gettid-inline?)"),
    (["run", "--no-readiness", "--suite", "syscal"],
     "unknown suite 'syscal' (did you mean syscall? suites: syscall, cpuid, "),
    (["run", "--no-readiness", "--suite", "syscall", "--bench", "stat-rot"],
     "no benchmark matches 'stat-rot' in suite syscall (did you mean stat-root?)"),
    (["list", "--suite", "percpu-scalin"], "(did you mean percpu-scaling? suites: "),
    (["lab", "ppc64"], "unknown lab arch 'ppc64' (did you mean ppc64le?); valid: "),
    (["reproduce", "power-entri"], "no experiment 'power-entri' (did you mean power-entry? "),
    (["show", "--export", "markdon", "x.md"],
     "unknown export format 'markdon' (did you mean markdown? formats: "),
]


@pytest.mark.parametrize(("args", "said"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_a_mistyped_name_gets_the_closest(kcross: Kcross, args: list[str], said: str) -> None:
    line = assert_one_line_error(kcross(*args), 2, said)
    assert "choose from" not in line and "..." not in line


def test_stored_names(kcross: Kcross, stored_db: Path) -> None:
    """A tag, a host, a benchmark of a stored run (run 1: syscall/getcpu-*)."""
    db = ("--db", str(stored_db))
    assert kcross("tag", "1", "baseline", *db).returncode == 0
    assert_one_line_error(kcross("show", "baselin", *db), 2,
                          "no run or tag 'baselin' in ")
    assert "(did you mean baseline? a RUN is " in kcross("show", "baselin", *db).stderr
    host = kcross("runs", "--json", *db).stdout.split('"hostname": "')[1].split('"')[0]
    assert f"(did you mean {host}? see 'kcross runs')" in \
        kcross("show", f"latest@{host}x", *db).stderr
    assert_one_line_error(kcross("compare", "1:getcpu-vdos", "1", *db), 2,
                          "run 1: no benchmark matches 'getcpu-vdos' (did you mean getcpu-vdso")
    assert_one_line_error(kcross("history", "getcpu-sycall", *db), 2,
                          "(did you mean getcpu-syscall")
