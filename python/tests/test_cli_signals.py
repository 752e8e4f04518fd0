"""A run stopped from outside is kept and marked, never left "running".

Each test starts ``python -m kcross run`` against the slowed-down fake
harness in its own session (its own process group, like a shell job), waits
until some results are stored, then stops it the way a user or a supervisor
would.  The orderings that were races before are forced here: the harness is
signalled first and kcross only later (what a busy machine does with a Ctrl-C
to the group), or the group gets a burst of signals.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HANG, fork_kcross, query, terminal_signals, wait_for_rows

SUITE = ("--suite", "syscall")  # several benchmarks in the old fake harness and the new


def start(env: dict[str, str], *args: str, delay: float = 0.4,
          stdout: int = subprocess.PIPE, **popen: object) -> subprocess.Popen:
    popen.setdefault("preexec_fn", terminal_signals)
    return subprocess.Popen([sys.executable, "-m", "kcross", "run", "--quick", *SUITE, *args],
                            env={**env, "KCROSS_FAKE_DELAY": str(delay)},
                            start_new_session=True, stdout=stdout, stderr=subprocess.PIPE,
                            text=True, **popen)  # type: ignore[call-overload]


def wait_for_results(proc: subprocess.Popen, db: Path, count: int) -> None:
    wait_for_rows(proc, db, "results", count)


def harness_pid(proc: subprocess.Popen) -> int:
    """The harness is kcross's only child."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()


def the_run(db: Path) -> tuple[str, int, str | None]:
    (status, kept, error), = query(db, "SELECT r.status, (SELECT count(*) FROM results "
                                       "WHERE run_id = r.id), r.error FROM runs r")
    return status, kept, error


def assert_interrupted(proc: subprocess.Popen, err: str, db: Path, code: int) -> None:
    assert proc.returncode == code, err
    assert "Traceback" not in err, err
    status, kept, _ = the_run(db)
    assert status == "interrupted", err
    last = err.strip().splitlines()[-1]
    match = re.fullmatch(r"kcross: interrupted; kept (\d+) of (\d+) benchmark\(s\) in run 1 "
                         r"\(see 'kcross show 1'\)", last)
    assert match, err
    assert 1 <= kept == int(match[1]) < int(match[2])


def test_sigint_reaching_the_harness_first_is_the_users_interrupt(env: dict[str, str],
                                                                   db_path: Path) -> None:
    """Ctrl-C signals the whole group; on a busy machine the harness can die of it
    before kcross's handler runs.  Forced here: the harness first, kcross 0.5 s later."""
    proc = start(env)
    try:
        wait_for_results(proc, db_path, 1)
        os.kill(harness_pid(proc), signal.SIGINT)
        time.sleep(0.5)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGINT)
    finally:
        out, err = finish(proc)
    assert_interrupted(proc, err, db_path, 130)


def test_harness_killed_by_sigint_alone_is_an_interrupt(env: dict[str, str],
                                                        db_path: Path) -> None:
    """kcross never sees the signal at all (someone interrupted the harness itself)."""
    proc = start(env)
    try:
        wait_for_results(proc, db_path, 1)
        os.kill(harness_pid(proc), signal.SIGINT)
    finally:
        out, err = finish(proc)
    assert_interrupted(proc, err, db_path, 130)


def test_burst_of_sigints_to_the_group(env: dict[str, str], db_path: Path) -> None:
    """Many Ctrl-Cs in a row: every one may land anywhere, also while the run is marked."""
    proc = start(env)
    try:
        wait_for_results(proc, db_path, 1)
        for _ in range(200):
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                break
            time.sleep(0.001)
    finally:
        out, err = finish(proc)
    assert_interrupted(proc, err, db_path, 130)


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("group", [False, True], ids=["kcross", "group"])
def test_sigterm_and_sighup_mark_the_run_interrupted(env: dict[str, str], db_path: Path,
                                                      signo: int, group: bool) -> None:
    proc = start(env)
    try:
        wait_for_results(proc, db_path, 1)
        if group:
            os.killpg(proc.pid, signo)
        else:
            os.kill(proc.pid, signo)
    finally:
        out, err = finish(proc)
    assert_interrupted(proc, err, db_path, 128 + signo)
    assert the_run(db_path)[2] == f"interrupted by {signal.Signals(signo).name}"


def test_timeout_marks_the_run_interrupted(env: dict[str, str], db_path: Path) -> None:
    """`timeout` sends SIGTERM to kcross and then to its process group."""
    proc = subprocess.run(["timeout", "4", sys.executable, "-m", "kcross", "run", "--quick",
                           *SUITE], env={**env, "KCROSS_FAKE_DELAY": "1.5"},
                          capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 124, proc.stderr  # timeout's own "it timed out"
    assert "Traceback" not in proc.stderr
    if not db_path.exists() or not query(db_path, "SELECT id FROM runs"):
        # a machine so slow that the run had not started within 4 s
        assert proc.stderr.strip().endswith("before the run started; nothing stored")
        return
    status, kept, error = the_run(db_path)
    assert status == "interrupted" and kept >= 0 and error == "interrupted by SIGTERM"


def test_sigterm_to_kcross_alone_stops_a_long_benchmark(env: dict[str, str],
                                                       db_path: Path) -> None:
    """`kill PID` reaches kcross only: it must stop the harness itself, at once,
    not after the benchmark under way (a minute here) has finished."""
    proc = start(env, delay=60)
    try:
        wait_for_rows(proc, db_path, "runs", 1)
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == ("kcross: interrupted; kept 0 of "
                                            f"{err.split('running ')[1].split()[0]} benchmark(s) "
                                            "in run 1 (see 'kcross show 1')")
    assert the_run(db_path)[:2] == ("interrupted", 0)


def test_stop_works_when_sigint_is_ignored(env: dict[str, str], db_path: Path) -> None:
    """`nohup kcross run &` ignores SIGINT, and so does the harness it starts:
    kcross must not rely on SIGINT to stop it."""
    proc = start(env, delay=60, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        wait_for_rows(proc, db_path, "runs", 1)
        os.killpg(proc.pid, signal.SIGINT)  # ignored, by kcross and the harness alike
        time.sleep(0.3)
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert the_run(db_path)[:2] == ("interrupted", 0)


def _blocked(status: str) -> int:
    return int(next(line for line in status.splitlines() if line.startswith("SigBlk:"))
               .split()[1], 16)


def test_only_the_main_thread_takes_stop_signals(env: dict[str, str], db_path: Path) -> None:
    """Threads (the harness's stderr reader, the store's heartbeat, numpy's and
    scipy's BLAS pools) must block the stop signals: one they took would leave the
    main thread blocked in its read of the harness's output, and the run would
    stop only after the benchmark under way."""
    proc = start(env)
    try:
        wait_for_results(proc, db_path, 1)  # numpy, scipy, store and reader all started
        tasks = Path(f"/proc/{proc.pid}/task")
        others = [t for t in tasks.iterdir() if int(t.name) != proc.pid]
        masks = {t.name: _blocked((t / "status").read_text()) for t in others}
    finally:
        proc.kill()
        proc.communicate()
    assert others, "expected helper threads"
    wanted = sum(1 << (s - 1) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    assert all(mask & wanted == wanted for mask in masks.values()), masks


# --- Ctrl-C while kcross starts -------------------------------------------------------------
# The first quarter second of a start is imports and the parser's construction; a Ctrl-C
# there ends as it does later: "kcross: interrupted", status 130, never a traceback.  The
# instants are forced rather than timed (a timed signal lands where a busy machine puts
# it): the probe below sends itself SIGINT as kcross begins to import a module, or calls a
# function, named by its first argument, then starts kcross as the console script does
# (pyproject.toml's entry point) or as `python -m kcross` does.

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

STOP_PROBE = """\
import os, runpy, signal, sys
where, how, *args = sys.argv[1:]
sys.argv = ["kcross", *args]
signum = getattr(signal, os.environ.get("PROBE_SIGNAL", "SIGINT"))
seen = []
class Stop:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("kcross"):
            seen.append(name)
        if name == where:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signum)
        return None
def at_call(frame, event, arg):
    name = frame.f_code.co_name
    if event == "call" and where in ("call:" + name,
                                     f"call:{frame.f_globals.get('__name__')}.{name}"):
        sys.setprofile(None)
        os.kill(os.getpid(), signum)
sys.meta_path.insert(0, Stop())
sys.setprofile(at_call)
if where == "list":
    import atexit
    atexit.register(lambda: sys.__stderr__.write("\\nimported: " + " ".join(seen) + "\\n"))
if where == "exit":
    import atexit
    atexit.register(lambda: os.kill(os.getpid(), signum))
if how == "-m":
    runpy.run_module("kcross", run_name="__main__", alter_sys=True)
else:
    module, _, function = how.partition(":")
    sys.exit(getattr(__import__(module, fromlist=[function]), function)())
"""


def console_script() -> str:
    """pyproject.toml's entry point of the ``kcross`` command (MODULE:FUNCTION)."""
    match = re.search(r'^\[project\.scripts\]\nkcross = "([\w.]+:\w+)"$', PYPROJECT.read_text(),
                      re.MULTILINE)
    assert match, "no kcross entry point in pyproject.toml"
    return match[1]


def stopped_at(env: dict[str, str], where: str, how: str, *args: str, signame: str = "SIGINT"
               ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", STOP_PROBE, where, how, *args],
                          env={**env, "PROBE_SIGNAL": signame},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          preexec_fn=terminal_signals)


def test_ctrl_c_at_any_instant_of_the_start(env: dict[str, str], stored_db: Path) -> None:
    """At the import of every kcross module a start loads before the command runs (from
    kcross.cli, the first, through the command module the parser is built from), in the
    parser's construction and parsing, and in the command: one line, status 130.  Both
    ways in: the console script at each instant; ``python -m kcross`` at a few (past the
    first imports the two run the same code)."""
    args = ("runs", "--db", str(stored_db))
    listing = stopped_at(env, "list", "-m", *args)
    assert listing.returncode == 0, listing.stderr
    modules = listing.stderr.rsplit("imported: ", 1)[1].split()
    start = modules[modules.index("kcross.errors"):modules.index("kcross.cli._console") + 1]
    assert {"kcross.errors", "kcross.cli.options", "kcross.cli.runs"} <= set(start), modules
    # (dataclasses' __set_name__: a field as its class is made, where CPython 3.11 wraps
    # a KeyboardInterrupt into a RuntimeError)
    calls = ["call:build_parser", "call:parse_args", "call:consoles",
             "call:dataclasses.__set_name__"]
    instants = {console_script(): [*start, *calls, "kcross.store"],
                "-m": ["kcross.cli", "kcross.errors", "kcross.cli.runs", *calls]}
    wrong = {}
    for how, wheres in instants.items():
        for where in wheres:
            proc = stopped_at(env, where, how, *args)
            if (proc.returncode, proc.stdout, proc.stderr) != (130, "", "kcross: interrupted\n"):
                wrong[f"{how} at {where}"] = (proc.returncode, proc.stderr[-300:])
    assert not wrong, wrong


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_at_the_start_are_interrupts(env: dict[str, str], stored_db: Path,
                                                        signame: str) -> None:
    """As a Ctrl-C, from kcross's first module on (kcross.errors, which installs the handler,
    is imported first): one line, 128 + the signal, never a death by it."""
    args = ("runs", "--db", str(stored_db))
    code = 128 + getattr(signal, signame)
    wrong = {}
    for how in (console_script(), "-m"):
        for where in ("kcross.cli", "kcross.cli.runs", "call:parse_args", "call:consoles",
                      "call:dataclasses.__set_name__"):
            proc = stopped_at(env, where, how, *args, signame=signame)
            if (proc.returncode, proc.stdout, proc.stderr) != (code, "", "kcross: interrupted\n"):
                wrong[f"{how} at {where}"] = (proc.returncode, proc.stderr[-300:])
    assert not wrong, wrong


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_on_the_way_out_changes_nothing(env: dict[str, str], stored_db: Path,
                                                      signame: str) -> None:
    """The command has done its work: a signal while Python finalizes is ignored (it was
    a traceback from the handler, or a death by the signal once Python had restored the
    default handler), the status and the output are the command's."""
    done = stopped_at(env, "none", console_script(), "runs", "--db", str(stored_db))
    proc = stopped_at(env, "exit", console_script(), "runs", "--db", str(stored_db),
                      signame=signame)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, done.stdout, ""), proc.stderr


def test_ctrl_c_that_left_a_string_exec_ends_as_any_other(env: dict[str, str],
                                                         tmp_path: Path) -> None:
    """CPython marks a KeyboardInterrupt that left an exec() of a string as unhandled, caught
    or not, and a program run as `python -m` then kills itself with SIGINT on its way out:
    `python -m kcross import` did, Ctrl-C come while scipy ran "from numpy import *"."""
    (tmp_path / "exec_probe.py").write_text(
        "from kcross.errors import interrupted\n"
        "try:\n"
        "    exec('raise KeyboardInterrupt')\n"
        "except KeyboardInterrupt as exc:\n"
        "    interrupted(exc)\n")
    proc = subprocess.run([sys.executable, "-m", "exec_probe"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (130, "kcross: interrupted\n"), proc.stderr


def test_ctrl_c_python_wrapped_is_an_interrupt(env: dict[str, str], stored_db: Path,
                                               tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C as a class with fields is made (a module of dataclasses imported by the
    command): CPython 3.11 raises it as a RuntimeError caused by the KeyboardInterrupt, which
    was a traceback.  The command runs in a forked child of this process, where it is
    replaced."""
    from kcross.cli import runs

    def made_while_interrupted(*_: object) -> int:
        class Field:
            def __set_name__(self, owner: type, name: str) -> None:
                raise KeyboardInterrupt

        class Made:
            field = Field()
        return 0

    monkeypatch.setattr(runs, "main", made_while_interrupted)
    with (tmp_path / "out").open("w+") as out, (tmp_path / "err").open("w+") as err:
        pid = fork_kcross(["runs", "--db", str(stored_db)], env, out.fileno(), err.fileno())
        _, status = os.waitpid(pid, 0)
        err.seek(0)
        assert (os.waitstatus_to_exitcode(status), err.read()) == (130, "kcross: interrupted\n")
