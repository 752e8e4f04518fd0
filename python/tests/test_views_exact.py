"""Whole outputs of kcross's terminal views, held against exact text (issue 22).

Each case feeds one view a fixed input and compares its WHOLE output, byte for byte, with
files under python/tests/data/views/: CASE.txt is standard output, CASE.stderr.txt standard
error (no such file: the command writes nothing there).  A change of wording or layout is
then a diff of those files, reviewed like code, where assertions on fragments of a line
would let it pass unseen (pyperf's CLI tests hold their outputs so).

A deliberate change of an output is one command and a reviewed diff:

    KCROSS_UPDATE_VIEWS=1 pytest python/tests/test_views_exact.py
    git diff python/tests/data/views

(the switch rewrites the files of the cases that ran from their current outputs, and
removes a CASE.stderr.txt whose command no longer writes to standard error).

The views and their inputs (nothing measured, nothing timed):
- through the CLI (CASES), as conftest's ``kcross`` fixture runs it (a forked child;
  KCROSS_TEST_EXEC=1: its own interpreter), at COLUMNS 250 as the project's tests run it,
  the run table also at 80 and 120 (it promises to fit 120): run (the fake harness,
  python/tests/fake_harness.py: the captured run's records), show, runs, compare (runs,
  captures, several sides, one benchmark a side, files of numbers, lab counts; ministat,
  benchstat, --json, markdown), check (pass, fail, markdown, --json, lab counts), history,
  ab and aa (rounds of the fake harness: every round alike), sysinfo and sysinfo --readiness
  (test_readiness's trees, KCROSS_TEST_SYSROOT), list, reproduce --list and an
  experiment's native part; the stored runs are ``kcross import``s of the captures in
  python/tests/data and of edited copies of them (STORE, processes_runs);
- by their view functions, where the command needs QEMU: the lab's compare, mitigation and
  selftests (crosscheck) tables, a release series' tables (--releases, alone and with
  --compare-env) and records, the profile, trace and profile-difference views, and
  reproduce's outcome and record for the lab part; fed objects made by the highest-level
  builders there are from the captured lab runs (data/lab-ppc64le-sc.jsonl, -scv.jsonl),
  the captured selftests (data/selftests/) and data/views/profile-ppc64le.jsonl (written
  by hand in the format of ``kcross lab --profile --json``: no profile is captured);
  printed by the console kcross writes to when standard output is not a terminal, as
  ``kcross lab ARCH ... | cat`` prints them.

What varies from one test run to the next is normalised by :func:`normalised`, and nothing
else: the directory the cases run in (a directory of fixed length under /tmp, so that a
line wrapped at a path wraps alike on every machine, written as a placeholder of the same
length), and a date or time within the test session (an imported lab capture is dated
when it is imported: its guest clock is QEMU's fixed -rtc base), each digit written as '#'.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import difflib
import hashlib
import io
import json
import os
import random
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, FAKE_HARNESS, HANG, _forked_kcross, isolated_env
from test_readiness import BARE_METAL, CPU, CPUS, TUNED, harness_with, make_tree

VIEWS = DATA / "views"
UPDATE = bool(os.environ.get("KCROSS_UPDATE_VIEWS"))
COLUMNS = 250            # the width the project's tests run kcross at (conftest.isolated_env)

# The cases run in PARENT/kcross-views-XXXXXXXX (8 random hex digits): a fixed length.
PARENT = Path("/tmp")
PLACEHOLDER = str(PARENT / "kcross-views-XXXXXXXX")
# What would make rich treat a pipe as a terminal (colour codes, other boxes): not inherited.
TERMINAL_FORCING = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
STAMP = re.compile(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?")


# ---------------------------------------------------------------- holding an output

@dataclass
class Session:
    """Where the cases run, and since when (the window of dates that vary)."""

    root: Path
    since: dt.datetime
    store_sha: str = ""


def normalised(text: str, session: Session) -> str:
    """``text`` with what varies between test runs replaced (see the module's docstring):
    the session's directory by a placeholder of its length, and a timestamp that falls
    within the session (at the resolution it is written in) digit by digit by '#'."""
    text = text.replace(str(session.root), PLACEHOLDER)
    until = dt.datetime.now(dt.UTC)

    def stamp(m: re.Match[str]) -> str:
        written = m.group(0)
        at = dt.datetime.fromisoformat(written.replace(" ", "T")).replace(tzinfo=dt.UTC)
        step = dt.timedelta(minutes=1) if len(written) == 16 else dt.timedelta(seconds=1)
        now = at <= until and at + step >= session.since
        return re.sub(r"\d", "#", written) if now else written

    return STAMP.sub(stamp, text)


def held(case: str, stdout: str, stderr: str = "") -> None:
    """The outputs equal data/views/CASE.txt and CASE.stderr.txt (absent: empty), byte for
    byte; with KCROSS_UPDATE_VIEWS set, they are written there instead."""
    for path, text in ((VIEWS / f"{case}.txt", stdout), (VIEWS / f"{case}.stderr.txt", stderr)):
        if UPDATE:
            VIEWS.mkdir(parents=True, exist_ok=True)
            if text or not path.name.endswith(".stderr.txt"):
                path.write_bytes(text.encode())
            else:
                path.unlink(missing_ok=True)
            continue
        if not path.exists() and path.name == f"{case}.txt":
            pytest.fail(f"no {path}: KCROSS_UPDATE_VIEWS=1 pytest {Path(__file__).name} writes it")
        want = path.read_bytes().decode() if path.exists() else ""
        if text != want:
            diff = difflib.unified_diff(want.splitlines(keepends=True),
                                        text.splitlines(keepends=True),
                                        f"{path.name} (held)", f"{path.name} (now)")
            pytest.fail(f"{case}: the output is not the held text (KCROSS_UPDATE_VIEWS=1 "
                        f"rewrites it):\n{''.join(diff)}", pytrace=False)


# ---------------------------------------------------------------- the inputs

def capture(name: str) -> list[dict[str, Any]]:
    """A capture's records (its '#' header lines left out, as the fake harness reads it)."""
    with (DATA / name).open() as f:
        return [json.loads(line) for line in f if line.strip() and not line.startswith("#")]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


# The edit that makes the second run: a day later, three benchmarks moved (each sample,
# and its ticks, multiplied), every other figure the capture's own.
NEXT_DAY = "2026-11-24T18:14:48Z"
MOVED = {"syscall/getppid-inline": 1.10, "syscall/getppid-dispatch": 0.90,
         "syscall/stat-root": 1.03}


def next_day(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    edited = copy.deepcopy(records)
    edited[0]["host"]["time"] = NEXT_DAY
    for r in edited:
        factor = MOVED.get(f"{r.get('suite')}/{r.get('name')}")
        if r["type"] == "result" and factor:
            r["samples"] = [x * factor for x in r["samples"]]
            r["ticks"] = [x * factor for x in r["ticks"]]
    return edited


# Runs of several processes (kcross run's default), as ``kcross show --json`` writes them:
# the capture's getppid-* rows, PROCESSES processes a run, each process's samples drawn
# from the captured ones with a fixed seed (process-to-process variation), each run's
# scaled by RUN_FACTORS (run-to-run variation); the last run with MOVED_LAST changed.
PROCESSES = 5
RUN_FACTORS = (1.000, 1.005, 0.996, 1.002, 1.000)
MOVED_LAST = {"syscall/getppid-inline": 1.10, "syscall/getppid-dispatch": 0.97}


def processes_runs(base: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    fingerprint, plan, end = base[0], base[1], base[-1]
    rows = [r for r in base if r["type"] == "result" and r["suite"] == "syscall"
            and r["name"].startswith("getppid-")]
    runs = []
    for i, factor in enumerate(RUN_FACTORS):
        last = i == len(RUN_FACTORS) - 1
        fp = copy.deepcopy(fingerprint)
        fp["host"]["time"] = f"2026-11-23T{18 + i}:14:48Z"
        records = [fp, {**plan, "benchmarks": [{"suite": r["suite"], "name": r["name"]}
                                               for r in rows], "processes": PROCESSES}]
        for k in range(PROCESSES):
            rng = random.Random(100 * i + k)
            for row in rows:
                r = copy.deepcopy(row)
                n = len(r["samples"])
                picks = [rng.randrange(n) for _ in range(n)]
                f = factor * (MOVED_LAST.get(f"syscall/{r['name']}", 1.0) if last else 1.0)
                r.update(process=k, samples=[r["samples"][j] * f for j in picks],
                         ticks=[r["ticks"][j] * f for j in picks],
                         disturbed=[m for m, j in enumerate(picks) if j in row["disturbed"]])
                records.append(r)
        records.append({**end, "ok": len(rows) * PROCESSES, "skipped": 0, "failed": 0})
        runs.append(records)
    return runs


# The store the read-only cases share, run by run: (file in the session directory or in
# python/tests/data, what it is).
STORE = [
    ("base.jsonl", "data/real-run.jsonl without its header: x86-64, 70 benchmarks, 1 process"),
    ("next-day.jsonl", "base a day later, MOVED changed"),
    ("lab-ppc64le-sc.jsonl", "a ppc64le counting boot, KCROSS_SYSCALL=sc (exact counts)"),
    ("lab-ppc64le-scv.jsonl", "the same with KCROSS_SYSCALL=scv"),
    ("schema1-syscall.jsonl", "a schema-1 capture of the same VM (another configuration)"),
]


def run_cli(session: Session, *args: str, columns: int = COLUMNS,
            env: dict[str, str] | None = None, timeout: float = HANG
            ) -> subprocess.CompletedProcess:
    """``kcross ARGS`` in the session directory, as conftest's ``kcross`` fixture runs it
    (a forked child; KCROSS_TEST_EXEC=1: its own interpreter), COLUMNS ``columns``."""
    environ = {k: v for k, v in isolated_env(session.root).items() if k not in TERMINAL_FORCING}
    environ.update(COLUMNS=str(columns), **(env or {}))
    here = Path.cwd()
    os.chdir(session.root)
    try:
        if os.environ.get("KCROSS_TEST_EXEC"):
            return subprocess.run([sys.executable, "-m", "kcross", *args], env=environ,
                                  capture_output=True, text=True, timeout=timeout)
        return _forked_kcross(list(args), environ, timeout)
    finally:
        os.chdir(here)


def fixed_root() -> Path:
    """A new directory PARENT/kcross-views-XXXXXXXX (of fixed length)."""
    while True:
        root = PARENT / f"kcross-views-{secrets.token_hex(4)}"
        try:
            root.mkdir()
        except FileExistsError:
            continue
        return root


def stores_sha(root: Path) -> str:
    """The SHA-256 of the shared stores (a view must not change them)."""
    return hashlib.sha256((root / "store.db").read_bytes()
                          + (root / "procs.db").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """The session directory: the captures and their edited copies, store.db (runs 1-5 of
    STORE), procs.db (processes_runs), files of numbers, the fake harness under a fixed
    name, and the /proc and /sys trees of sysinfo --readiness, ab and aa."""
    # What every command's forked child would import again (most of a second each): once,
    # here, as the rest of the suite does anyway.
    import scipy.stats  # noqa: F401
    from kcross import judge, store  # noqa: F401
    from kcross.views import run  # noqa: F401

    s = Session(fixed_root(), dt.datetime.now(dt.UTC))
    try:
        base = capture("real-run.jsonl")
        write_jsonl(s.root / "base.jsonl", base)
        write_jsonl(s.root / "next-day.jsonl", next_day(base))
        for name in ("lab-ppc64le-sc.jsonl", "lab-ppc64le-scv.jsonl", "schema1-syscall.jsonl"):
            shutil.copyfile(DATA / name, s.root / name)
        for name, _ in STORE:
            proc = run_cli(s, "import", name, "--db", "store.db")
            assert proc.returncode == 0, proc.stderr
        # ministat's input: one number a line (getppid-inline's samples in each capture)
        for name, records in (("a.txt", base), ("b.txt", next_day(base))):
            (inline,) = [r for r in records if r.get("name") == "getppid-inline"]
            (s.root / name).write_text("".join(f"{x}\n" for x in inline["samples"]))
        for number, records in enumerate(processes_runs(base), start=1):
            write_jsonl(s.root / f"procs-{number}.jsonl", records)
            proc = run_cli(s, "import", f"procs-{number}.jsonl", "--db", "procs.db")
            assert proc.returncode == 0, proc.stderr
        # the harness as ab shows it: a fixed name in the session directory
        (s.root / "kcross-harness").symlink_to(FAKE_HARNESS)
        # kcross sysinfo --readiness's machine: test_readiness's tuned tree, a bare-metal
        # harness; and the same tree with the NMI watchdog on and the governor powersave
        make_tree(s.root / "tuned", TUNED)
        make_tree(s.root / "untuned", {**TUNED, "/proc/sys/kernel/nmi_watchdog": "1",
                                       f"{CPUS}/cpu{CPU}/cpufreq/scaling_governor": "powersave"})
        harness_with(s.root, **BARE_METAL)
        # ab and aa pin to the highest CPU this process may use: the captured VM's (0-1),
        # read from a tree (KCROSS_TEST_SYSROOT) rather than from the machine the test runs on
        make_tree(s.root / "vm", {"/proc/self/status": VM_STATUS})
        s.store_sha = stores_sha(s.root)
        yield s
    finally:
        shutil.rmtree(s.root, ignore_errors=True)


# ---------------------------------------------------------------- the CLI's views

@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    status: int = 0
    columns: int = COLUMNS
    env: dict[str, str] = field(default_factory=dict)


# In a case's arguments and settings, {root} is the session directory.
STORE_DB = ("--db", "store.db")
PROCS_DB = ("--db", "procs.db")
HARNESS = "{root}/kcross-harness"     # the fake harness under a fixed name (ab shows it)
VM_STATUS = "Name:\tkcross\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n"
VM = {"KCROSS_TEST_SYSROOT": "{root}/vm"}


def fresh(name: str) -> tuple[str, str]:
    """--db of a database of the case's own (removed first)."""
    return ("--db", f"{name}.db")


def slower(factor: float, when: str) -> dict[str, str]:
    """The fake harness's samples ``factor`` times larger where ``when`` (VAR=VALUE) holds."""
    return {"KCROSS_FAKE_SCALE": f"{factor}@{when}"}


CASES = [
    # kcross run: the table and the footer (the fake harness), at 80, 120 and 250 columns
    Case("run-80", ("run", "--quick", "--no-readiness", *fresh("run-80")), columns=80),
    Case("run-120", ("run", "--quick", "--no-readiness", *fresh("run-120")), columns=120),
    Case("run-250", ("run", "--quick", "--no-readiness", *fresh("run-250"))),
    Case("run-processes", ("run", "--no-readiness", "--bench", "syscall/getppid-*", "--processes",
                           "3", "--samples", "5", *fresh("run-processes")), columns=120),
    Case("run-failed", ("run", "--quick", "--no-readiness", "--bench", "syscall/getppid-*",
                        *fresh("run-failed")), status=1,
         env={"KCROSS_TEST_FAIL": "getppid-inline"}),
    Case("run-wide", ("run", "--quick", "--no-readiness", "--suite", "spin", "--wide",
                      *fresh("run-wide"))),
    Case("run-json", ("run", "--quick", "--no-readiness", "--bench", "syscall/getppid-inline",
                      "--json", *fresh("run-json"))),
    # kcross import: a capture of one process, then of several
    Case("import", ("import", "base.jsonl", *fresh("import"))),
    Case("import-processes", ("import", "procs-5.jsonl", *fresh("import-processes"))),
    # kcross show, runs
    Case("show", ("show", "1", *STORE_DB)),
    Case("show-wide", ("show", "1", "--wide", *STORE_DB)),
    Case("show-lab", ("show", "3", *STORE_DB)),
    Case("show-schema1", ("show", "5", *STORE_DB)),
    Case("runs", ("runs", *STORE_DB)),
    Case("runs-json", ("runs", "--json", *STORE_DB)),
    # kcross compare
    Case("compare-two-runs", ("compare", "1", "2", "--bench", "syscall/*", *STORE_DB)),
    Case("compare-two-runs-json", ("compare", "1", "2", "--bench", "syscall/getppid-*",
                                   "--json", *STORE_DB)),
    Case("compare-two-runs-markdown", ("compare", "1", "2", "--bench", "syscall/getppid-*",
                                       "--export", "markdown", "-", *STORE_DB)),
    Case("compare-two-captures", ("compare", "base.jsonl", "next-day.jsonl", "--bench",
                                  "syscall/getppid-*")),
    Case("compare-several-sides", ("compare", "1", "2", "5", "--bench", "syscall/getppid-*",
                                   *STORE_DB)),
    Case("compare-one-benchmark-per-side", ("compare", "1:getppid-inline",
                                            "1:getppid-dispatch", *STORE_DB)),
    Case("compare-numbers", ("compare", "a.txt", "b.txt")),
    Case("compare-lab", ("compare", "3", "4", *STORE_DB)),
    Case("compare-ministat", ("compare", "1", "2", "--bench", "syscall/getppid-*", "--format",
                              "ministat", *STORE_DB)),
    Case("compare-lab-ministat", ("compare", "3", "4", "--bench", "syscall/getppid-*",
                                  "--format", "ministat", *STORE_DB)),
    Case("compare-benchstat", ("compare", "1", "2", "--bench", "syscall/getppid-*", "--format",
                               "benchstat", *STORE_DB)),
    # kcross check
    Case("check-pass", ("check", "--baseline", "1", "2", "--max-regression", "15", *STORE_DB)),
    Case("check-fail", ("check", "--baseline", "1", "2", *STORE_DB), status=1),
    Case("check-fail-markdown", ("check", "--baseline", "1", "2", "--format", "markdown",
                                 *STORE_DB), status=1),
    Case("check-fail-json", ("check", "--baseline", "1", "2", "--json", *STORE_DB), status=1),
    Case("check-lab", ("check", "--baseline", "3", "4", *STORE_DB)),
    # runs of several processes (PROCS): Student's t over the processes, the run-to-run noise
    Case("show-processes", ("show", "5", *PROCS_DB)),
    Case("compare-processes", ("compare", "4", "5", *PROCS_DB)),
    Case("check-processes", ("check", "--baseline", "4", "5", *PROCS_DB), status=1),
    Case("history-processes", ("history", "getppid-inline", *PROCS_DB)),
    # kcross history
    Case("history", ("history", "getppid-inline", *STORE_DB)),
    Case("history-json", ("history", "getppid-inline", "--json", *STORE_DB)),
    # kcross ab: every round's runs give the same medians (the fake's fixed samples)
    Case("ab-benchmarks", ("ab", "--harness", HARNESS, "--rounds", "6", "--samples",
                           "11", "getppid-inline", "getppid-dispatch"), env=VM),
    Case("ab-settings", ("ab", "--harness", HARNESS, "--rounds", "6", "--samples",
                         "11", "--env-a", "KCROSS_SYSCALL=syscall", "--env-b",
                         "KCROSS_SYSCALL=libc", "getppid-dispatch"),
         env={**VM, **slower(1.1, "KCROSS_SYSCALL=libc")}),
    Case("ab-json", ("ab", "--harness", HARNESS, "--rounds", "6", "--samples", "11",
                     "--json", "getppid-inline", "getppid-dispatch"), env=VM),
    # rounds that scatter (KCROSS_FAKE_SCATTER: three of ten disturbed): the warning line
    Case("ab-scattered", ("ab", "--harness", HARNESS, "--rounds", "10", "--samples", "11",
                          "--env-a", "KCROSS_SYSCALL=syscall", "--env-b", "KCROSS_SYSCALL=libc",
                          "getppid-dispatch"),
         env={**VM, "KCROSS_FAKE_SCATTER": "{root}/ab-scattered.runs:" + ",".join(
             f"{a:g},{b:g}" for a, b in (
                 (1, r) if i % 2 == 0 else (r, 1)
                 for i, r in enumerate((1.0, 1.01, 0.99, 3.0, 1.02, 0.98, 0.31, 1.0, 1.01,
                                        2.6))))}),
    # a machine not tuned for measuring: the readiness line before the rounds, as run's
    Case("ab-untuned", ("ab", "--harness", HARNESS, "--rounds", "6", "--samples", "11",
                        "--cpu", str(CPU), "getppid-inline", "getppid-dispatch"),
         env={"KCROSS_TEST_SYSROOT": "{root}/untuned"}),
    # kcross aa: every run alike (the fake's fixed samples), so every rate is exact
    Case("aa-false-positives", ("aa", "--harness", HARNESS, "--rounds", "6",
                                "--processes", "2", "--samples", "5", "--no-store",
                                "getppid-inline"), env=VM),
    Case("aa-plant", ("aa", "--harness", HARNESS, "--rounds", "6", "--processes", "2",
                      "--samples", "5", "--plant", "10", *fresh("aa-plant"), "getppid-inline"),
         env=VM),
    # kcross sysinfo, list (the fake harness's captured fingerprint and registry)
    Case("sysinfo", ("sysinfo",)),
    Case("sysinfo-readiness", ("sysinfo", "--readiness", "--cpu", str(CPU), "--harness",
                           "{root}/harness.py", *STORE_DB), env={"KCROSS_TEST_SYSROOT": "{root}/tuned"}),
    Case("sysinfo-readiness-warns", ("sysinfo", "--readiness", "--cpu", str(CPU), "--harness",
                                 "{root}/harness.py", *STORE_DB), status=1,
         env={"KCROSS_TEST_SYSROOT": "{root}/untuned"}),
    Case("sysinfo-readiness-json", ("sysinfo", "--readiness", "--cpu", str(CPU), "--harness",
                                "{root}/harness.py", "--json", *STORE_DB), status=1,
         env={"KCROSS_TEST_SYSROOT": "{root}/untuned"}),
    Case("list", ("list",)),
    Case("list-unavailable", ("list", "--suite", "spin"),
         env={"KCROSS_FAKE_SKIP": "sibling-*"}),
    # kcross reproduce: the list, and an experiment's native part (the fake harness)
    Case("reproduce-list", ("reproduce", "--list")),
    Case("reproduce-native", ("reproduce", "freebsd-cpu-switch", "--no-lab", "--no-store")),
    Case("reproduce-native-json", ("reproduce", "freebsd-cpu-switch", "--no-lab", "--no-store",
                                   "--json")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cli_view(case: Case, session: Session) -> None:
    db = session.root / f"{case.name}.db"
    db.unlink(missing_ok=True)
    args = [a.replace("{root}", str(session.root)) for a in case.args]
    env = {k: v.replace("{root}", str(session.root)) for k, v in case.env.items()}
    proc = run_cli(session, *args, columns=case.columns, env=env)
    assert proc.returncode == case.status, proc.stderr
    held(case.name, normalised(proc.stdout, session), normalised(proc.stderr, session))
    assert stores_sha(session.root) == session.store_sha, "a view changed a store"


def test_runs_of_constant_processes(session: Session) -> None:
    """Two ``kcross run``s of the fake harness (every process gives the same samples: no
    variation between processes), the second 5% slower (KCROSS_FAKE_SCALE): compare and
    check of them, held as they are (each process-level verdict needs variation)."""
    (session.root / "constant.db").unlink(missing_ok=True)
    run = ("run", "--no-readiness", "--bench", "syscall/getppid-*", "--processes", "3",
           "--samples", "5", "--db", "constant.db")
    for env in ({}, {"KCROSS_FAKE_SCALE": "1.05"}):
        assert run_cli(session, *run, env=env).returncode == 0
    for case, args, status in (("compare-constant-processes", ("compare", "1", "2"), 2),
                               ("check-constant-processes", ("check", "--baseline", "1", "2"), 0)):
        proc = run_cli(session, *args, "--db", "constant.db")
        assert proc.returncode == status, proc.stderr
        held(case, normalised(proc.stdout, session), normalised(proc.stderr, session))


def test_a_release_series(session: Session) -> None:
    """One lab machine with three kernels (issue 23): the captured bookworm sc run, and
    copies of it as if booted with trixie's and sid's kernels (test_lab_releases's
    other_kernel: the fingerprint's kernel axis changed; getppid-inline 38 and 25
    instructions dearer, getppid-dispatch 0.4 dearer on sid: the timer's share), imported
    trixie, sid, bookworm: history, compare (given in that order) and show of sid's run."""
    from test_lab_releases import other_kernel

    records = capture(SC)
    hz = records[0]["timer"]["hz"]
    kernels = {"trixie": ("6.12.107-1", "6.12.107+deb13-powerpc64le", {"getppid-inline": 38.0}),
               "sid": ("7.2.13-1", "7.2.13+deb14-powerpc64le",
                       {"getppid-inline": 25.0, "getppid-dispatch": 0.4})}
    db = session.root / "series.db"
    db.unlink(missing_ok=True)
    for release in ("trixie", "sid", "bookworm"):
        edited = copy.deepcopy(records)
        if release in kernels:
            version, abi, shift = kernels[release]
            edited[0] = other_kernel(edited[0], release, version, abi)
            for r in edited:
                delta = shift.get(r.get("name", ""))
                if r["type"] == "result" and delta:
                    r["samples"] = [x + delta for x in r["samples"]]
                    r["ticks"] = [x + delta * hz / 1e9 for x in r["ticks"]]
        write_jsonl(session.root / f"{release}.jsonl", edited)
        proc = run_cli(session, "import", f"{release}.jsonl", "--db", "series.db")
        assert proc.returncode == 0, proc.stderr
    for case, args in (("history-releases", ("history", "getppid-*")),
                       ("history-releases-json", ("history", "getppid-inline", "--json")),
                       ("compare-releases", ("compare", "1", "2", "3", "--bench",
                                             "syscall/getppid-*")),
                       ("show-lab-release", ("show", "2"))):
        proc = run_cli(session, *args, "--db", "series.db")
        assert proc.returncode == 0, proc.stderr
        held(case, normalised(proc.stdout, session), normalised(proc.stderr, session))


def test_sysinfo_of_a_lab_kernel() -> None:
    """The whole fingerprint's view of a lab run of sid's kernel: its release, the SHA-256
    of its file and configuration, the version string its image carries."""
    from kcross.views.fingerprint import sysinfo
    from test_lab_releases import other_kernel

    fp = other_kernel(capture(SC)[0], "sid", "7.2.13-1", "7.2.13+deb14-powerpc64le")
    held("sysinfo-lab-release", rendered(printing(sysinfo(fp))))


# ---------------------------------------------------------------- views the CLI needs QEMU for

def rendered(draw: Callable[[Any], None], columns: int = COLUMNS) -> str:
    """What ``draw(out)`` prints on the console kcross writes its results to when standard
    output is not a terminal (``kcross ... | cat``: plain ASCII tables, no colour), at
    COLUMNS ``columns``."""
    from kcross.cli._console import consoles

    buffer = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(buffer):
        mp.setenv("COLUMNS", str(columns))
        for name in TERMINAL_FORCING:
            mp.delenv(name, raising=False)
        out, _ = consoles()
        draw(out)
    return buffer.getvalue()


def printing(*renderables: Any) -> Callable[[Any], None]:
    return lambda out: [out.print(r) for r in renderables]


def counted(name: str, shift: dict[str, float] | None = None,
            vulnerabilities: dict[str, str] | None = None, extra: list[Any] | None = None) -> Any:
    """A lab counting run (kcross.lab.session.Counted) of a captured lab run, its records as
    ``kcross import`` reads them; ``shift``: instructions/op added to every sample (and the
    guest clock's ticks) of benchmarks by name; ``vulnerabilities``: sysfs lines changed."""
    from kcross.importer import stream_of
    from kcross.lab.kernel import Kernel
    from kcross.lab.machines import Guest, arch
    from kcross.lab.session import Counted

    records = capture(name)
    hz = records[0]["timer"]["hz"]
    for r in records:
        delta = (shift or {}).get(r.get("name", ""))
        if r["type"] == "result" and r["status"] == "ok" and delta:
            r["samples"] = [x + delta for x in r["samples"]]
            r["ticks"] = [x + delta * hz / 1e9 for x in r["ticks"]]
    records[0]["vulnerabilities"].update(vulnerabilities or {})
    kernel = Path("/lab/vmlinux")     # never read: the tables show no kernel file
    return Counted(guest=Guest(arch("ppc64le"), kernel), kernel=Kernel("ppc64le", kernel),
                   variant=records[0]["lab"]["variant"], stream=stream_of(records, name),
                   extra=extra or [])


SC, SCV = "lab-ppc64le-sc.jsonl", "lab-ppc64le-scv.jsonl"


def test_lab_compare_table() -> None:
    """``kcross lab ppc64le --compare sc scv``'s table, of the captured pair."""
    from kcross.lab.report import compare_table
    from kcross.views.table import terminal

    held("lab-compare", rendered(printing(terminal(compare_table(counted(SC), counted(SCV),
                                                                 "sc", "scv")))))


def test_lab_compare_env_table() -> None:
    """``kcross lab ppc64le --env KCROSS_VDSO=1 --compare-env KCROSS_RSEQ=off``'s table: the
    captured sc run as A, a shifted copy as B, and what each side's settings were."""
    from kcross.lab.jobs import sides_notes
    from kcross.lab.report import compare_table
    from kcross.lab.request import GuestOptions, LabRequest
    from kcross.views.table import terminal

    request = LabRequest(arch="ppc64le", mode="counting", timeout=600,
                         guest=GuestOptions(env=("KCROSS_VDSO=1",)),
                         compare_env=("KCROSS_RSEQ=off",))
    sides = request.sides()
    assert sides is not None
    runs = [counted(SC), counted(SC, {"getppid-inline": -12.0, "kc_cpu": 60.0})]
    table = compare_table(runs[0], runs[1], "A", "B")
    table.notes += sides_notes(request, sides)
    held("lab-compare-env", rendered(printing(terminal(table))))


# The mitigation table's rows: the first ppc64le baseline's variants by name, each a shift
# of the captured sc run (instructions/op by benchmark) and the sysfs lines it changes:
# every branch of the table's "what the kernel reports / why unchanged" column.
SYSCALL_PATHS = ("getppid-glibc", "getppid-libc-syscall", "getppid-inline", "getppid-inline-alt",
                 "getppid-dispatch", "getppid-call", "gettid-inline", "clock_gettime-syscall",
                 "getcpu-syscall", "stat-root", "read-devzero", "write-devnull", "open-close")
VARIANTS = [
    ("cap-cfpc=fixed", dict.fromkeys(SYSCALL_PATHS, -4.0),
     {"l1tf": "Not affected", "meltdown": "Not affected"}),
    ("cap-sbbc=fixed", {"stat-root": 2.0}, {"spectre_v1": "Not affected"}),
    ("no_entry_flush", {"getppid-inline": 1.0}, {}),
    ("cap-ibs=broken", {}, {}),
    ("randomize_kstack_offset=off", dict.fromkeys(SYSCALL_PATHS, -20.0), {}),
]


def test_lab_mitigation_table() -> None:
    """``kcross lab ppc64le --mitigations``'s table: shifted copies of the captured run as the
    variants' boots, and the configuration QEMU refuses (kcross.lab.mitigations.REFUSED)."""
    from kcross.lab.mitigations import REFUSED, TABLES
    from kcross.lab.report import MitigationRow, mitigation_table

    baseline, variants = TABLES["ppc64le"][0]
    by_name = {v.name: v for v in variants}
    rows = [MitigationRow(name, by_name[name].what, run=counted(SC, shift, vulns),
                          expect=by_name[name].expect) for name, shift, vulns in VARIANTS]
    rows += [MitigationRow(v.name, v.what, refused=why, expect=v.expect)
             for arch, v, why in REFUSED if arch == "ppc64le"]
    from kcross.views.table import terminal

    held("lab-mitigations",
         rendered(printing(terminal(mitigation_table("ppc64le", baseline.name, counted(SC),
                                                     rows)))))


def test_lab_peers_table() -> None:
    """``kcross lab ppc64le --peers``'s table: the captured selftests (data/selftests)
    after the captured sc run (which counted syscall, cpuid and percpu, not ctxsw: the
    context_switch peers have no kcross row to sit beside)."""
    from kcross.lab.initramfs import CommandResult
    from kcross.lab.linux_source import Source
    from kcross.lab.peers import peers_beside
    from kcross.lab.selftests import plan
    from kcross.views.peers import peers_table
    from kcross.views.table import terminal

    console = json.loads((DATA / "selftests" / "ppc64le-console.json").read_text())
    by_command = {c["command"]: c for c in console["commands"]}
    results = [CommandResult(n, " ".join(argv), by_command[" ".join(argv)]["status"],
                             by_command[" ".join(argv)]["output"])
               for n, argv in enumerate(plan("ppc64le"), start=2)]
    package, version = console["source"].split()
    source = Source(package, version, Path("/cache/linux-source"), version.split("-")[0],
                    "0" * 64)
    checked = peers_beside("ppc64le", counted(SC, extra=results), source)
    title = "ppc64le: the kernel's own selftests beside kcross (same boot, instructions per op)"
    held("lab-peers", rendered(printing(terminal(peers_table(checked, title)))))


def profiles() -> list[Any]:
    """The profiles of data/views/profile-ppc64le.jsonl (``kcross lab --profile --json``'s
    records: kcross.lab.profile.BenchProfile, field by field)."""
    from kcross.lab.profile import BenchProfile, CostlyCost, FunctionCost, TraceLine

    found = []
    for line in (VIEWS / "profile-ppc64le.jsonl").read_text().splitlines():
        r = json.loads(line)
        for key in ("type", "side", "kernel_symbols"):
            del r[key]
        r["functions"] = [FunctionCost(**f) for f in r["functions"]]
        r["costly"] = [CostlyCost(**c) for c in r["costly"]]
        if r["trace"] is not None:
            r["trace"] = [TraceLine(**t) for t in r["trace"]]
        found.append(BenchProfile(**r))
    return found


def test_profile_view() -> None:
    from kcross.views.profile import profile_view

    sc, _, _ = profiles()
    held("profile", rendered(printing(profile_view(sc))))


def test_trace_view() -> None:
    from kcross.views.profile import profile_view, trace_view

    _, _, traced = profiles()
    held("profile-trace", rendered(printing(profile_view(traced), trace_view(traced))))


def test_profile_diff_view() -> None:
    from kcross.lab.profile_diff import diff
    from kcross.views.profile import diff_view

    sc, scv, _ = profiles()
    held("profile-diff", rendered(printing(diff_view(diff(sc, scv, ("sc", "scv")), ("sc", "scv")))))


def explained() -> Any:
    """``kcross lab ppc64le --compare sc scv --explain``'s explanation, of the captured pair
    and the written profiles of getppid-dispatch (the other changed rows have none: said)."""
    from kcross.lab.explain import ConfigDiff, Explained, Explanation, explain_row
    from kcross.lab.report import judged

    sc, scv, _ = profiles()
    verdicts = judged(counted(SC), counted(SCV), "sc", "scv")
    steps = [explain_row("syscall/getppid-dispatch", verdicts["syscall/getppid-dispatch"],
                         sc, scv, ("sc", "scv")),
             Explanation("syscall/stat-root", verdicts["syscall/stat-root"],
                         missing="sc's profiled boot has no profile of it (skipped or failed)")]
    shares = tuple(n for n, j in verdicts.items()
                   if j.note is not None and j.note.startswith("under 1 instruction"))
    return Explained(("sc", "scv"), tuple(steps), ConfigDiff(
        missing="one kernel on both sides: no configuration differs"), shares, 40.0,
        "the suite syscall")


def test_lab_explanation_view() -> None:
    from kcross.views.explain import explanation_records, explanation_view

    held("lab-explanation", rendered(printing(explanation_view(explained()))))
    held("lab-explanation-records",
         "".join(json.dumps(r) + "\n" for r in explanation_records(explained())))


def test_lab_explanation_config_view() -> None:
    """The kernel configurations' part of an explanation: bookworm's 6.1 against trixie's
    6.12 on amd64 (data/debian-crossing-config.txt)."""
    from kcross.lab import crossing_config
    from kcross.lab.explain import ConfigDiff
    from kcross.views.explain import config_lines

    sections: dict[str, dict[str, str]] = {}
    for line in (DATA / "debian-crossing-config.txt").read_text().splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:], {})
        elif line.startswith(("CONFIG_", "# CONFIG_")):
            current.update(crossing_config.states(line))
    a = sections["x86_64 bookworm linux-image-6.1.0-50-amd64 6.1.176-1"]
    b = sections["x86_64 trixie linux-image-6.12.117+deb13-amd64 6.12.117-1"]
    diff = ConfigDiff(tuple(crossing_config.changes(a, b, "x86_64")),
                      crossing_config.others(a, b), ("boot/config-6.1.0-50-amd64",
                                                     "boot/config-6.12.117+deb13-amd64"))
    held("lab-explanation-config", rendered(printing(config_lines(diff, ("A", "B")))))


# A ppc64le release series of the captured sc run: each kernel's (release, package version,
# ABI) and what its counts moved by against bookworm's (instructions/op by benchmark):
# trixie getppid-inline +38 and getppid-dispatch +0.4 (the timer's share), sid stat-root
# +120 and getppid-inline +25.
SERIES = (("bookworm", "6.1.176-1", "6.1.0-50-powerpc64le", {}),
          ("trixie", "6.12.107-1", "6.12.107+deb13-powerpc64le",
           {"getppid-inline": 38.0, "getppid-dispatch": 0.4}),
          ("sid", "7.2.13-1", "7.2.13+deb14-powerpc64le",
           {"getppid-inline": 25.0, "stat-root": 120.0}))


def release_series(sides: tuple[str, ...] = (), moved: dict[str, float] | None = None
                   ) -> list[Any]:
    """kcross.lab.series.Counting of each kernel of SERIES: the captured sc run shifted by
    the kernel's moves; with ``sides``, one run per side, the later sides further shifted by
    ``moved`` (--compare-env's B)."""
    from kcross.lab.explain import Subject
    from kcross.lab.kernel import Kernel
    from kcross.lab.machines import Guest, arch
    from kcross.lab.payload import Payload
    from kcross.lab.series import Counting

    runs = []
    for release, version, abi, shift in SERIES:
        kernel = Kernel("ppc64le", Path(f"/lab/{release}/boot/vmlinux-{abi}"),
                        package=f"linux-image-{abi}", version=version, release=release)
        payload = Payload("ppc64le", Path("/lab"), Path("/lab/h"), Path("/lab/i"), {}, [])
        for i, side in enumerate(sides or (None,)):
            extra = moved if i else None
            total = {k: shift.get(k, 0.0) + (extra or {}).get(k, 0.0)
                     for k in {*shift, *(extra or {})}}
            run = counted(SC, total)
            run.kernel = kernel
            label = release if side is None else f"{release} {side}"
            subject = Subject(label, Guest(arch("ppc64le"), kernel.path), kernel, payload)
            runs.append(Counting(release, subject, side, run))
    return runs


def test_lab_release_series_table() -> None:
    """``kcross lab ppc64le --releases bookworm,trixie,sid --no-explain``'s table and its
    records (``--json``), of SERIES."""
    from kcross.lab.request import LabRequest
    from kcross.lab.series import notes, series_of, title
    from kcross.views.series import series_records, series_table
    from kcross.views.table import terminal

    request = LabRequest(arch="ppc64le", mode="counting", timeout=600,
                         releases="bookworm,trixie,sid")
    s = series_of("ppc64le", release_series())
    columns = [c.column() for c in s.runs]
    table = series_table(title(s), columns, s.steps, s.lines(), notes(s, request))
    held("lab-releases", rendered(printing(terminal(table))))
    held("lab-releases-records", "".join(
        json.dumps(r) + "\n" for r in series_records("ppc64le", "instructions/op", columns,
                                                      s.steps, s.lines())
        if r["row"] in ("syscall/getppid-inline", "syscall/getppid-dispatch", "cpuid/rdpid")))


def test_lab_release_series_of_two_sides() -> None:
    """``kcross lab ppc64le --releases bookworm,trixie,sid --compare-env KCROSS_RSEQ=off``'s
    table: what rseq costs each crossing, release by release (B: kc_cpu 60 dearer on every
    kernel, getppid-inline 12 cheaper)."""
    from kcross.lab.request import LabRequest
    from kcross.lab.series import notes, series_of, title
    from kcross.views.series import series_table
    from kcross.views.table import terminal

    request = LabRequest(arch="ppc64le", mode="counting", timeout=600,
                         releases="bookworm,trixie,sid", compare_env=("KCROSS_RSEQ=off",))
    s = series_of("ppc64le", release_series(("A", "B"), {"getppid-inline": -12.0,
                                                         "kc_cpu": 60.0}))
    table = series_table(title(s), [c.column() for c in s.runs], s.steps, s.lines(),
                         notes(s, request))
    held("lab-releases-compare-env", rendered(printing(terminal(table))))


def measured(name: str, variant: str, run_id: int) -> Any:
    """A captured lab run as ``kcross reproduce`` reads a stored one."""
    from kcross.reproduce.measure import Measured

    records = capture(name)
    return Measured("ppc64le", variant, records[0], [r for r in records if r["type"] == "result"],
                    run_id=run_id)


@pytest.mark.parametrize("experiment", ["power-entry", "glibc-scv", "rseq-cpu-number"])
def test_reproduce_lab_outcome(experiment: str) -> None:
    """``kcross reproduce NAME``'s view of the ppc64le lab part, of the captured sc and scv
    boots (the default boot is scv's: POWER9 with glibc's choice); the other places are
    said not measured (--lab-only, no other lab)."""
    from kcross.reproduce import experiments
    from kcross.reproduce.outcome import outcomes
    from kcross.views.reproduce import print_outcome, record

    runs = [measured(SCV, "default", 4), measured(SC, "sc", 3)]
    (o,) = outcomes(experiments.chosen(experiment), runs,
                    skipped={"native": "--lab-only", "aarch64": "not asked (--arch ppc64le)",
                             "x86_64": "not asked (--arch ppc64le)"})
    held(f"reproduce-lab-{experiment}", rendered(lambda out: print_outcome(out, o)))
    held(f"reproduce-lab-{experiment}-record", json.dumps(record(o)) + "\n")


def test_lab_correctness_table() -> None:
    """``kcross lab ARCH --mode correctness``'s table: a passed, a skipped and a failed test,
    the evidence lines and the summary, as kcross.lab.jobs prints them (the boot needs QEMU)."""
    from kcross.lab.correctness import TestOutcome, evidence, summary
    from kcross.views.lab import correctness_table
    from kcross.views.table import terminal

    outcomes = [
        TestOutcome("example_syscall", "passed",
                    ["architecture ppc64le, mechanisms available: sc scv", "mechanism in use: scv"],
                    exit="0"),
        TestOutcome("test_rseq", "passed", ["# mode default: rseq registered by glibc", "ok 1"],
                    exit="0"),
        TestOutcome("test_ctx_fp", "skipped", ["1..0 # SKIP no FP control state on this CPU"],
                    exit="77", reason="no FP control state on this CPU"),
        TestOutcome("stress_percpu_rseq", "failed",
                    ["# seed 7 mode rseq", "not ok 3 - counter lost 2 increments"], exit="1",
                    reason="exit 1"),
    ]
    notes = [*(f"  {line}" for line in evidence(outcomes)), summary(outcomes)]
    table = correctness_table("ppc64le: the library's tests on a real kernel (2 vCPUs, "
                              "multi-threaded TCG, Debian 6.1.0-50-powerpc64le)", outcomes, notes)
    held("lab-correctness", rendered(printing(terminal(table))))


def test_crosscheck_table() -> None:
    """``kcross crosscheck``'s table (perf bench against kcross's own figure), from rounds of
    fixed figures (the command needs perf)."""
    from kcross.rounds import crosscheck as cc
    from kcross.views.rounds import crosscheck_table
    from kcross.views.table import terminal

    results = []
    for check, perf, mine in ((cc.Check("syscall", ("syscall", "basic"), "syscall/getppid-glibc"),
                               [131.0, 129.5, 130.2, 132.8, 130.9],
                               [128.1, 127.9, 129.0, 130.2, 128.5]),
                              (cc.Check("pipe", ("sched", "pipe"),
                                        "ctxsw/pipe-procs-same-cpu"),
                               [5210.0, 5180.0, 5302.0, 5250.0, 5199.0],
                               [5480.0, 5420.0, 5510.0, 5390.0, 5460.0])):
        perf_it, mine_it = iter(perf), iter(mine)
        results.append(cc.run_check(check, len(perf), 1, perf=lambda it=perf_it: next(it),
                                    kcross=lambda it=mine_it: next(it)))
    held("crosscheck", rendered(printing(terminal(crosscheck_table(results,
                                                                   cc.PERF_EVENTS_CAVEAT)))))
