"""kcross's output when standard output and error are pipes (a log, CI, ``| less``), as a new
user's afternoon met it (issue 24, "for people"): at most one progress line per benchmark
(a default run of ten processes wrote 700), no line ending in padding, and the tables of
run, runs, compare, check and sysinfo --readiness within 120 columns (or the console's
width, when narrower), COLUMNS unset (rich's 80 for stderr, kcross's 200 for stdout), 200
and 80.

Each command runs in an interpreter of its own with both streams on pipes, as a shell
pipeline starts it (not conftest's forked child, whose streams are files).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG, isolated_env
from test_readiness import BARE_METAL, CPU, TUNED, harness_with, make_tree

WIDEST = 120        # what the tables of those commands take at most


def piped(root: Path, *args: str, columns: str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``kcross ARGS`` with its streams on pipes, COLUMNS ``columns`` (None: unset)."""
    environ = {k: v for k, v in isolated_env(root).items()
               if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    if columns is not None:
        environ["COLUMNS"] = columns
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "kcross", *args], cwd=root, env=environ,
                          capture_output=True, text=True, timeout=HANG)   # pipes, both


def padded(text: str) -> list[str]:
    """The lines of ``text`` that end in a space."""
    return [line for line in text.splitlines() if line != line.rstrip()]


def progress(stderr: str) -> list[str]:
    """A run's progress lines (after the line that says what it runs)."""
    return [line for line in stderr.splitlines() if line.startswith("[")]


def benchmarks(root: Path, db: str) -> int:
    """How many benchmarks the stored run 1 has (one record per benchmark and process)."""
    proc = piped(root, "runs", "--json", "--db", db)
    return int(json.loads(proc.stdout.splitlines()[0])["results"])


@pytest.mark.parametrize("columns", [None, "200", "80"])
def test_a_default_run_writes_a_line_per_process(tmp_path: Path, columns: str | None) -> None:
    """The default run: ten processes of every benchmark.  Before: a line per benchmark and
    process (700), each padded to the console's width when wrapped."""
    proc = piped(tmp_path, "run", "--no-readiness", "--samples", "3", "--db", "k.db",
                 columns=columns)
    assert proc.returncode == 0, proc.stderr
    lines = progress(proc.stderr)
    assert len(lines) == 10, proc.stderr
    assert len(lines) <= benchmarks(tmp_path, "k.db")
    assert lines[0].startswith("[process 1/10] 70 benchmarks: 68 ok, 2 skipped in "), lines[0]
    assert lines[-1].startswith("[process 10/10] "), lines[-1]
    assert proc.stderr.splitlines()[0].startswith(
        "running 70 benchmarks, 3 samples each in each of 10 processes (one after another), ")
    assert not padded(proc.stdout) and not padded(proc.stderr)
    width = min(WIDEST, int(columns or 200))
    assert max(map(len, proc.stdout.splitlines())) <= width


def test_more_processes_than_benchmarks_still_a_line_per_benchmark_at_most(
        tmp_path: Path) -> None:
    """Five processes of two benchmarks: two lines, spread over them (the third, the fifth)."""
    proc = piped(tmp_path, "run", "--no-readiness", "--bench", "syscall/getppid-in*",
                 "--processes", "5", "--samples", "3", "--db", "k.db")
    assert proc.returncode == 0, proc.stderr
    lines = progress(proc.stderr)
    assert [line.split("]")[0] for line in lines] == ["[process 3/5", "[process 5/5"], lines


def test_a_run_of_one_process_says_each_benchmark(tmp_path: Path) -> None:
    proc = piped(tmp_path, "run", "--quick", "--no-readiness", "--suite", "syscall",
                 "--db", "k.db")
    assert proc.returncode == 0, proc.stderr
    lines = progress(proc.stderr)
    assert len(lines) == benchmarks(tmp_path, "k.db")
    assert lines[0].startswith("[1/") and " ns/op" in lines[0], lines[0]
    assert not padded(proc.stdout) and not padded(proc.stderr)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of every benchmark (the second 10% slower on getppid-inline) and a lab run
    (instruction counts), and the trees of sysinfo --readiness's machine."""
    root = tmp_path_factory.mktemp("piped")
    for env in ({}, {"KCROSS_FAKE_SCALE": "1.1"}):
        proc = piped(root, "run", "--quick", "--no-readiness", "--db", "k.db", env=env)
        assert proc.returncode == 0, proc.stderr
    lab = Path(__file__).parent / "data" / "lab-ppc64le-sc.jsonl"
    assert piped(root, "import", str(lab), "--db", "k.db").returncode == 0
    make_tree(root / "untuned", {**TUNED, "/proc/sys/kernel/nmi_watchdog": "1"})
    harness_with(root, **BARE_METAL)
    return root


COMMANDS = {
    "runs": ("runs",),
    "compare": ("compare", "1", "2"),
    "check": ("check", "--baseline", "1", "2"),
    "show": ("show", "1"),
    "show-lab": ("show", "3"),
    "readiness": ("sysinfo", "--readiness", "--cpu", str(CPU), "--harness", "{root}/harness.py"),
}


@pytest.mark.parametrize("columns", [None, "200", "80"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_tables_fit_120_columns(store: Path, command: str, columns: str | None) -> None:
    """Each command's whole standard output within 120 columns (80 at COLUMNS=80), no line
    ending in a space.  Before: runs 226 columns wide, compare 149, check 185, readiness
    242 at COLUMNS unset, each table's rows padded to its width."""
    args = [a.replace("{root}", str(store)) for a in COMMANDS[command]]
    proc = piped(store, *args, "--db", "k.db", columns=columns,
                 env={"KCROSS_TEST_SYSROOT": str(store / "untuned")})
    assert proc.returncode in (0, 1), proc.stderr
    lines = proc.stdout.splitlines()
    width = min(WIDEST, int(columns or 200))
    assert max(map(len, lines)) <= width, max(lines, key=len)
    assert not padded(proc.stdout), padded(proc.stdout)[:3]
    if not command.startswith("show"):   # (a lab run's footer clips its kernel's SHA-256)
        assert "…" not in proc.stdout
