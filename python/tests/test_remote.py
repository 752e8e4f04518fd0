"""``kcross run --remote``: against a real, unprivileged sshd on 127.0.0.1 started by the tests.

The sshd runs as the current user (root in CI's .ci/run, a new non-root user in
the README check) with its own host key, a key pair made here, a random free
port, ``UsePAM no`` and ``StrictModes no``.  Its ``SetEnv`` gives every session
``KCROSS_TIMER=clock_gettime`` and a ``TMPDIR`` of the test's own: the local
environment has neither, so a fingerprint forcing that timer was taken by a
harness started through sshd, and the remote temporary directories are visible
to the test (created, then removed).

Fast cases copy a small stand-in harness (a Python script made here that
writes two captured results and notes where and how it ran); the real
harness (``$KCROSS_TEST_REAL_HARNESS``, a quick run of ``getppid-glibc``)
checks the whole path, the static ELF check included.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import (
    HANG,
    assert_one_line_error,
    captured,
    isolated_env,
    terminal_signals,
)
from harnesses import native
from kcross.errors import KcrossError
from kcross.run import remote
from kcross.run.defaults import DEFAULT_PROCESSES

SSHD = shutil.which("sshd") or shutil.which("sshd", path="/usr/sbin:/usr/local/sbin")
SSH = shutil.which("ssh")
SSH_KEYGEN = shutil.which("ssh-keygen")
MISSING = [name for name, found in (("sshd (Debian: openssh-server)", SSHD),
                                    ("ssh (Debian: openssh-client)", SSH),
                                    ("ssh-keygen (Debian: openssh-client)", SSH_KEYGEN))
           if not found]
needs_sshd = pytest.mark.skipif(bool(MISSING), reason=f"needs {', '.join(MISSING)}")
USER = pwd.getpwuid(os.getuid()).pw_name
REMOTE_TIMER = "clock_gettime"  # what the sshd's SetEnv forces on the remote harness
# What the readiness checks read on "the other host" (127.0.0.2: its sessions have
# KCROSS_TEST_SYSROOT pointing here): bare metal, CPUs 0-1, CPU 1 not tuned thrice.
UNTUNED = {
    "proc/self/status": "Name:\tcat\nCpus_allowed_list:\t0-1",
    "proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse2",
    "sys/class/dmi/id/sys_vendor": "Dell Inc.",
    "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave",
    "sys/devices/system/cpu/cpu1/topology/thread_siblings_list": "1",
    "proc/sys/kernel/randomize_va_space": "0",
    "proc/sys/kernel/nmi_watchdog": "1",
    "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
}
UNTUNED_SAYS = "machine not tuned: governor powersave, ASLR off, NMI watchdog on — see " \
    "'kcross sysinfo --readiness' there"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _closed_port() -> int:
    """A port nobody listens on (bound and closed again: refused, not timed out)."""
    return _free_port()


@dataclass
class Sshd:
    root: Path
    port: int
    key: Path
    remote_tmp: Path       # the sessions' TMPDIR
    log: Path

    @property
    def url(self) -> str:
        return f"ssh://{USER}@127.0.0.1:{self.port}"

    @property
    def other_url(self) -> str:
        """The same sshd on another loopback address: another host to ssh (whose readiness
        checks read UNTUNED)."""
        return f"ssh://127.0.0.2:{self.port}"

    @property
    def options(self) -> list[str]:
        """kcross arguments that make ssh use the test's key and trust the test's host key."""
        return ["-o", f"IdentityFile={self.key}", "-o", "IdentitiesOnly=yes",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]


def _keygen(path: Path) -> None:
    assert SSH_KEYGEN is not None
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "kcross-test",
                    "-f", str(path)], check=True, capture_output=True, timeout=HANG)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    if MISSING:
        pytest.skip(f"needs {', '.join(MISSING)}")
    assert SSHD is not None
    root = tmp_path_factory.mktemp("sshd")
    os.chmod(root, 0o755)  # sshd as root checks nothing (StrictModes no), but keep it sane
    _keygen(root / "host_key")
    _keygen(root / "user_key")
    (root / "authorized_keys").write_text((root / "user_key.pub").read_text())
    remote_tmp = root / "remote-tmp"
    remote_tmp.mkdir()
    untuned = root / "untuned"
    for path, text in UNTUNED.items():
        (untuned / path).parent.mkdir(parents=True, exist_ok=True)
        (untuned / path).write_text(text + "\n")
    if os.getuid() == 0 and not Path("/run/sshd").is_dir():
        # sshd started as root needs its privilege-separation directory (the
        # openssh-server package's service creates it; nothing else does here).
        Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)
    log = root / "sshd.log"
    for _attempt in range(3):
        port = _free_port()
        config = root / "sshd_config"
        config.write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
ListenAddress 127.0.0.2
HostKey {root / 'host_key'}
PidFile {root / 'sshd.pid'}
AuthorizedKeysFile {root / 'authorized_keys'}
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers {USER}
LogLevel VERBOSE
Match LocalAddress 127.0.0.1
    SetEnv KCROSS_TIMER={REMOTE_TIMER} TMPDIR={remote_tmp}
Match LocalAddress 127.0.0.2
    SetEnv KCROSS_TIMER={REMOTE_TIMER} TMPDIR={remote_tmp} KCROSS_TEST_SYSROOT={untuned}
""")
        with log.open("ab") as fh:
            proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)],
                                    stdin=subprocess.DEVNULL, stdout=fh, stderr=fh)
        deadline = time.monotonic() + HANG
        up = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    up = True
                    break
            except OSError:
                time.sleep(0.05)
        if up:
            break
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    else:
        pytest.fail(f"sshd did not start: {log.read_text()[-2000:]}")
    try:
        yield Sshd(root=root, port=port, key=root / "user_key", remote_tmp=remote_tmp, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- a stand-in harness to copy -------------------------------------------------------

def _stand_in(path: Path, notes: Path, *, mode: str = "ok") -> Path:
    """A self-contained ``kcross-harness run --json`` (the tests' fake needs its data
    directory, which is not copied): two captured results; it appends one JSON line
    to ``notes`` saying where and with which arguments it ran.

    ``mode``: ``ok``; ``crash`` (exit 3 after the first result, as when it cannot write);
    ``hang`` (sleeps after the first result until stopped).
    """
    records = captured()
    fingerprint, plan = records[0], dict(records[1])
    results = [r for r in records if r["type"] == "result" and r["status"] == "ok"][:2]
    plan["benchmarks"] = [{"suite": r["suite"], "name": r["name"]} for r in results]
    end = {"type": "end", "schema": records[-1]["schema"], "ok": 2, "skipped": 0,
           "failed": 0, "elapsed_s": 0.5}
    path.write_text(f"""\
import json, os, sys, time
records = json.loads({json.dumps(json.dumps([fingerprint, plan, *results, end]))})
with open({str(notes)!r}, "a") as fh:
    fh.write(json.dumps({{"cwd": os.getcwd(), "argv": sys.argv[1:], "pid": os.getpid(),
                         "ssh": "SSH_CONNECTION" in os.environ,
                         "timer": os.environ.get("KCROSS_TIMER"),
                         "vdso": os.environ.get("KCROSS_VDSO")}}) + "\\n")
records[0]["host"]["hostname"] = "stand-in-over-ssh" if "SSH_CONNECTION" in os.environ \\
    else "stand-in-local"
for number, record in enumerate(records):
    print(json.dumps(record), flush=True)
    if number == 2 and {mode!r} == "crash":
        sys.exit(3)
    if number == 2 and {mode!r} == "hang":
        time.sleep({HANG})  # stopped long before; never left behind for long
""")
    return path


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    environ = isolated_env(tmp_path)
    environ.pop("SSH_AUTH_SOCK", None)  # only the test's key
    environ["KCROSS_DB"] = str(tmp_path / "k.db")
    # Where kcross makes the private directory of the ssh master's socket (see
    # _nothing_left_here): short, as a socket's path must be (pytest's are too long).
    local = tempfile.mkdtemp(prefix="kcross-test-", dir="/tmp")
    environ["TMPDIR"] = local
    try:
        yield environ
    finally:
        shutil.rmtree(local, ignore_errors=True)


def _nothing_left_here(env: dict[str, str]) -> None:
    """The ssh master kcross started has exited and its directory is gone."""
    local = Path(env["TMPDIR"])
    deadline = time.monotonic() + HANG  # `ssh -O exit` asks; the master exits a moment later
    while time.monotonic() < deadline:
        masters = [pid for pid in os.listdir("/proc") if pid.isdigit()
                   and str(local).encode() in _cmdline(pid)]
        if not masters:
            break
        time.sleep(0.1)
    assert masters == [], [_cmdline(pid) for pid in masters]
    assert list(local.iterdir()) == []
    assert len(str(local)) + len("/kcross-ssh.12345678/master") <= remote.CONTROL_PATH_MAX


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _kcross(env: dict[str, str], *args: str, timeout: float = HANG,
            ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kcross", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _runs(db: Path) -> list[dict]:
    """The stored runs; none while the database is being created."""
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'results'").fetchone():
            return []
        return [dict(r) for r in conn.execute(
            "SELECT id, status, source, command, fingerprint, "
            "(SELECT count(*) FROM results WHERE run_id = runs.id) AS results "
            "FROM runs ORDER BY id")]


def _notes(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() \
        else []


@contextlib.contextmanager
def _started(env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    """``kcross ARGS`` in the background; stopped (and its hosts' runs with it) if the
    test fails before it ends."""
    proc = subprocess.Popen([sys.executable, "-m", "kcross", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=terminal_signals)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()  # passed on to each host's run, which cleans up there
            try:
                proc.communicate(timeout=HANG)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


# --- without sshd ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "url"), [
    ("ssh://host", "ssh://host"),
    ("ssh://Me@Box.example:2222", "ssh://Me@box.example:2222"),
    ("ssh://[::1]:22/", "ssh://[::1]:22"),
])
def test_parse_host(text: str, url: str) -> None:
    assert remote.parse_host(text).url == url


@pytest.mark.parametrize(("text", "says"), [
    ("host", "expected ssh://"),
    ("ssh://me:secret@host", "password"),
    ("ssh://host:99999", "port"),
    ("ssh://host/tmp", "no path"),
    ("ssh://-oProxyCommand=x", "'-'"),
])
def test_parse_host_refuses(text: str, says: str) -> None:
    with pytest.raises(KcrossError, match=says) as info:
        remote.parse_host(text)
    assert "secret" not in str(info.value)


def test_recorded_command_keeps_everything_but_the_other_hosts() -> None:
    argv = ["run", "--remote", "ssh://a", "--quick", "--remote=ssh://b", "--rem", "ssh://c",
            "-o", "Port=1", "--bench", "x*"]
    host = remote.parse_host("ssh://b")
    assert remote.recorded_command(host, argv) == [
        "run", "--remote", "ssh://b", "--quick", "-o", "Port=1", "--bench", "x*"]


def _elf(path: Path, machine: int, *, interp: bool = False) -> Path:
    """A minimal 64-bit little-endian ELF header with one program header."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<HHI", header, 16, 2, machine, 1)
    struct.pack_into("<Q", header, 32, 64)               # e_phoff
    struct.pack_into("<HH", header, 54, 56, 1)           # e_phentsize, e_phnum
    phdr = bytearray(56)
    struct.pack_into("<I", phdr, 0, 3 if interp else 1)  # PT_INTERP or PT_LOAD
    path.write_bytes(bytes(header + phdr))
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("given", [["ControlPath=/tmp/mine/%C"], ["controlmaster no"],
                                   ["BatchMode=yes", "ControlPersist=5"]])
def test_users_own_multiplexing_is_left_as_given(given: list[str]) -> None:
    """kcross adds no multiplexing of its own to the user's: its ControlPersist would keep
    the user's master alive after the run, and its -O exit would not reach it."""
    session = remote.Session(remote.parse_host("ssh://example.invalid"), given)
    assert session.control is None
    assert session.options == given
    plain = remote.Session(remote.parse_host("ssh://example.invalid"), ["BatchMode=yes"])
    try:
        assert any(o.startswith("ControlPersist=") for o in plain.options)
    finally:
        plain.close()


def test_binary_checks(tmp_path: Path) -> None:
    arm = remote.inspect_binary([str(_elf(tmp_path / "a", 183))])
    assert arm.arch == "aarch64"
    with pytest.raises(remote.RemoteError, match="is x86_64 but .* built for aarch64"):
        arm.check_host_arch(remote.parse_host("ssh://h"), "x86_64")
    with pytest.raises(remote.RemoteError, match="dynamically linked"):
        remote.inspect_binary([str(_elf(tmp_path / "d", 62, interp=True))])
    (tmp_path / "t").write_text("#!/bin/sh\n")
    with pytest.raises(remote.RemoteError, match="not an ELF program"):
        remote.inspect_binary([str(tmp_path / "t")])


def test_dynamic_harness_refused_before_connecting(env: dict[str, str], tmp_path: Path) -> None:
    dynamic = _elf(tmp_path / "kcross-harness", 62, interp=True)
    proc = _kcross(env, "run", "--remote", f"ssh://127.0.0.1:{_closed_port()}",
                   "--harness", str(dynamic))
    assert_one_line_error(proc, 2, "dynamically linked")
    assert not Path(env["KCROSS_DB"]).exists()


def test_ssh_option_needs_remote(env: dict[str, str]) -> None:
    assert_one_line_error(_kcross(env, "run", "-o", "Port=2"), 2, "--ssh-option is for")


# --- against the sshd -----------------------------------------------------------------

@needs_sshd
def test_remote_run_lands_with_the_remote_fingerprint(sshd: Sshd, env: dict[str, str],
                                                      tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    harness = _stand_in(tmp_path / "stand_in.py", notes)
    env["KCROSS_VDSO"] = "0"  # a harness variable set here goes along
    proc = _kcross(env, "run", "--remote", sshd.url, *sshd.options, "--harness", str(harness),
                   "--quick", "--bench", "syscall/getppid*", "--tag", "there")
    assert proc.returncode == 0, proc.stderr + sshd.log.read_text()[-1500:]
    assert "run 1: 2 ok, 0 skipped, 0 failed" in proc.stdout
    assert "syscall/getppid-glibc" in proc.stdout  # the table, as for a local run
    (note,) = _notes(notes)
    assert note["ssh"] and note["timer"] == REMOTE_TIMER and note["vdso"] == "0"
    # Quoted through the remote shell: the glob reached the harness as written.
    assert note["argv"] == ["run", "--json", "--bench", "syscall/getppid*", "--quick"]
    where = Path(note["cwd"])
    assert where.parent == sshd.remote_tmp and where.name.startswith(remote.TMP_PREFIX)
    assert not where.exists(), "the remote copy must be removed"
    (run,) = _runs(Path(env["KCROSS_DB"]))
    assert run["status"] == "complete" and run["source"] == "remote" and run["results"] == 2
    assert json.loads(run["fingerprint"])["host"]["hostname"] == "stand-in-over-ssh"
    assert json.loads(run["command"])[:3] == ["run", "--remote", sshd.url]
    assert " · remote · " in _kcross(env, "show", "there").stdout


@pytest.mark.parametrize("remotes", [
    ["ssh://lab1", "ssh://lab1"],
    ["ssh://lab1", "ssh://LAB1"],                                  # host names ignore case
    [f"ssh://{USER}@lab1:22", "ssh://lab1"],                      # the defaults spelt out
    ["ssh://lab2", "ssh://lab1:22", "ssh://lab1"],
    ["ssh://lab1", "ssh://127.0.0.9", "-o", "HostName=127.0.0.9"],  # resolved as ssh would
    ["ssh://lab1:2222", "ssh://lab1", "-o", "Port=2222"],
])
def test_the_same_host_twice_is_refused_before_anything(env: dict[str, str],
                                                        remotes: list[str]) -> None:
    """Twice the same user@host:port measured on one machine at overlapping times, on the
    same pinned CPU, and stored both; now one line, before anything connects."""
    argv = [a for r in remotes for a in (["--remote", r] if r.startswith("ssh:") else [r])]
    proc = _kcross(env, "run", *argv, "--quick")
    line = assert_one_line_error(proc, 2, "both runs would measure on it at once")
    assert "the same host (" in line or "given twice (" in line
    assert not Path(env["KCROSS_DB"]).exists()


def test_tag_with_several_hosts_is_refused(env: dict[str, str]) -> None:
    proc = _kcross(env, "run", "--remote", "ssh://a", "--remote", "ssh://b", "--tag", "x")
    assert_one_line_error(proc, 2, "--tag names one run")


@needs_sshd
def test_two_hosts_at_once_give_two_runs(sshd: Sshd, env: dict[str, str],
                                         tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    harness = _stand_in(tmp_path / "stand_in.py", notes)
    second = sshd.other_url
    proc = _kcross(env, "run", "--remote", sshd.url, "--remote", second, *sshd.options,
                   "--harness", str(harness), "--quick")
    assert proc.returncode == 0, proc.stderr
    assert f"== {sshd.url} ==" in proc.stdout and f"== {second} ==" in proc.stdout
    assert proc.stdout.count("2 ok, 0 skipped, 0 failed") == 2
    # Each host's readiness line is its own: the untuned files are the other host's only.
    assert proc.stderr.count(f"kcross: {second}: {UNTUNED_SAYS}\n") == 1, proc.stderr
    assert proc.stderr.count("governor powersave") == 1, proc.stderr
    runs = _runs(Path(env["KCROSS_DB"]))
    assert [r["status"] for r in runs] == ["complete", "complete"]
    assert {json.loads(r["command"])[2] for r in runs} == {sshd.url, second}
    assert all(r["source"] == "remote" and r["results"] == 2 for r in runs)
    assert len(_notes(notes)) == 2
    assert list(sshd.remote_tmp.iterdir()) == []


@needs_sshd
def test_unreachable_host_is_one_line_and_the_other_still_lands(
        sshd: Sshd, env: dict[str, str], tmp_path: Path) -> None:
    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl")
    dead = f"ssh://127.0.0.1:{_closed_port()}"
    proc = _kcross(env, "run", "--remote", dead, "--remote", sshd.url, *sshd.options,
                   "--harness", str(harness), "--quick", "--json")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "kcross: error:" in line]
    assert len(errors) == 1 and dead in errors[0] and "cannot connect" in errors[0], errors
    assert f"kcross: 1 of 2 host(s) ended with a non-zero status: {dead} (exit status 2)\n" \
        in proc.stderr
    # --json: the other host's stream whole on stdout, its header on stderr.
    assert f"== {sshd.url}: its JSON lines follow ==" in proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["type"] for r in records] == ["fingerprint", "plan", "result", "result", "end"]
    (run,) = _runs(Path(env["KCROSS_DB"]))
    assert run["status"] == "complete" and json.loads(run["command"])[2] == sshd.url
    # Alone, the same host is the one error line of the contract.
    alone = _kcross(env, "run", "--remote", dead, *sshd.options, "--harness", str(harness))
    assert_one_line_error(alone, 2, f"{dead}: cannot connect")
    _nothing_left_here(env)


@needs_sshd
def test_refused_key_is_one_line(sshd: Sshd, env: dict[str, str], tmp_path: Path) -> None:
    _keygen(tmp_path / "other_key")
    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl")
    options = [o if not o.startswith("IdentityFile=") else f"IdentityFile={tmp_path}/other_key"
               for o in sshd.options]
    proc = _kcross(env, "run", "--remote", sshd.url, *options, "--harness", str(harness))
    assert_one_line_error(proc, 2, "cannot connect (")
    assert "Permission denied" in proc.stderr
    assert not Path(env["KCROSS_DB"]).exists()


@needs_sshd
def test_architecture_mismatch_is_refused(sshd: Sshd, env: dict[str, str],
                                          tmp_path: Path) -> None:
    machine = os.uname().machine
    other = 183 if machine != "aarch64" else 62  # aarch64, or x86-64 on an aarch64 host
    binary = _elf(tmp_path / "kcross-harness", other)
    proc = _kcross(env, "run", "--remote", sshd.url, *sshd.options, "--harness", str(binary))
    assert_one_line_error(proc, 2, f"{sshd.url} is {machine} but")
    assert list(sshd.remote_tmp.iterdir()) == []


@needs_sshd
def test_harness_crash_there_keeps_what_arrived(sshd: Sshd, env: dict[str, str],
                                                tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    harness = _stand_in(tmp_path / "stand_in.py", notes, mode="crash")
    proc = _kcross(env, "run", "--remote", sshd.url, *sshd.options, "--harness", str(harness))
    line = assert_one_line_error(proc, 3, sshd.url, after_progress=True)
    assert "1 result(s) kept in run 1 (marked failed)" in line
    (run,) = _runs(Path(env["KCROSS_DB"]))
    assert run["status"] == "failed" and run["results"] == 1 and run["source"] == "remote"
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)


@needs_sshd
def test_ctrl_c_marks_interrupted_and_removes_the_copy(sshd: Sshd, env: dict[str, str],
                                                       tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    harness = _stand_in(tmp_path / "stand_in.py", notes, mode="hang")
    db = Path(env["KCROSS_DB"])
    with _started(env, "run", "--remote", sshd.url, *sshd.options,
                  "--harness", str(harness)) as proc:
        err = _interrupt_after_results(proc, db, 1)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    k = DEFAULT_PROCESSES
    assert f"interrupted; kept 1 of {2 * k} results ({k} processes of 2 benchmark(s)) in run 1" \
        in err
    (run,) = _runs(db)
    assert run["status"] == "interrupted"
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)
    (note,) = _notes(notes)
    deadline = time.monotonic() + HANG  # the stand-in there was stopped, not left sleeping
    while Path(f"/proc/{note['pid']}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{note['pid']}").exists()


def _interrupt_after_results(proc: subprocess.Popen[str], db: Path, runs: int) -> str:
    """Wait until ``runs`` runs have a result stored, then Ctrl-C kcross; its stderr."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if sum(bool(r["results"]) for r in _runs(db)) == runs:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the results did not arrive")
    proc.send_signal(signal.SIGINT)  # to kcross alone (a terminal's Ctrl-C reaches ssh too)
    return proc.communicate(timeout=HANG)[1]


@needs_sshd
def test_harness_killed_there_is_one_line(sshd: Sshd, env: dict[str, str],
                                          tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    harness = _stand_in(tmp_path / "stand_in.py", notes, mode="hang")
    db = Path(env["KCROSS_DB"])
    with _started(env, "run", "--remote", sshd.url, *sshd.options,
                  "--harness", str(harness)) as proc:
        deadline = time.monotonic() + HANG
        while not any(r["results"] for r in _runs(db)) and time.monotonic() < deadline:
            time.sleep(0.1)
        (note,) = _notes(notes)
        os.kill(note["pid"], signal.SIGKILL)  # "there": the sshd's session, not kcross's child
        _out, err = proc.communicate(timeout=HANG)
    line = assert_one_line_error(subprocess.CompletedProcess([], proc.returncode, "", err), 3,
                                 f"{sshd.url}: kcross-harness ended with ssh's status 255",
                                 after_progress=True)
    assert "1 result(s) kept in run 1 (marked failed)" in line
    (run,) = _runs(db)
    assert run["status"] == "failed" and run["results"] == 1
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)


@needs_sshd
def test_real_harness_over_ssh(sshd: Sshd, env: dict[str, str]) -> None:
    command, why = native()
    if command is None:
        pytest.skip(why)
    env.pop("KCROSS_TIMER", None)
    proc = _kcross(env, "run", "--remote", sshd.url, *sshd.options, "--harness", command[0],
                   "--quick", "--bench", "syscall/getppid-glibc")
    assert proc.returncode == 0, proc.stderr
    assert "syscall/getppid-glibc" in proc.stdout and "1 ok, 0 skipped, 0 failed" in proc.stdout
    (run,) = _runs(Path(env["KCROSS_DB"]))
    assert run["status"] == "complete" and run["source"] == "remote" and run["results"] == 1
    fingerprint = json.loads(run["fingerprint"])
    # Taken there: the sshd's session environment forced the timer, this one did not.
    assert fingerprint["forced"]["KCROSS_TIMER"] == REMOTE_TIMER
    assert fingerprint["timer"]["source"] == REMOTE_TIMER
    assert fingerprint["host"]["hostname"] == socket.gethostname()  # the same machine here
    assert fingerprint["kcross"]["build"] == "static"
    assert json.loads(run["command"])[:3] == ["run", "--remote", sshd.url]
    assert list(sshd.remote_tmp.iterdir()) == []


@needs_sshd
def test_two_hosts_into_postgresql(sshd: Sshd, env: dict[str, str], tmp_path: Path,
                                   pg_schema: str) -> None:
    from kcross.store import Store, resolve

    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl")
    env["KCROSS_DB"] = pg_schema
    second = sshd.other_url
    proc = _kcross(env, "run", "--remote", sshd.url, "--remote", second, *sshd.options,
                   "--harness", str(harness), "--quick")
    assert proc.returncode == 0, proc.stderr
    store = Store.open(resolve(pg_schema), write=False)
    assert store is not None
    try:
        runs = store.list_runs()
        assert sorted((r.source, r.status, r.results) for r in runs) == \
            [("remote", "complete", 2)] * 2
        assert {r.hostname for r in runs} == {"stand-in-over-ssh"}  # the remote's fingerprint
        assert {store.load_run(str(r.id)).source for r in runs} == {"remote"}
    finally:
        store.close()


@needs_sshd
def test_ctrl_c_with_two_hosts_stops_both(sshd: Sshd, env: dict[str, str],
                                          tmp_path: Path) -> None:
    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl", mode="hang")
    second = sshd.other_url
    db = Path(env["KCROSS_DB"])
    with _started(env, "run", "--remote", sshd.url, "--remote", second, *sshd.options,
                  "--harness", str(harness)) as proc:
        err = _interrupt_after_results(proc, db, 2)  # passed on to each host's run
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    k = DEFAULT_PROCESSES
    assert err.count(f"interrupted; kept 1 of {2 * k} results ({k} processes of 2 benchmark(s)) "
                     "in run") == 2, err
    assert [r["status"] for r in _runs(db)] == ["interrupted", "interrupted"]
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)


# --- one connection per host and run --------------------------------------------------

def _sshd_saw(sshd: Sshd, since: int) -> tuple[int, int, int]:
    """(authentications, TCP connections they came on, sessions) in the sshd's log after
    byte ``since``: LogLevel VERBOSE logs each login with its client port, and each
    session (a command, multiplexed or not) with the port of its connection."""
    text = sshd.log.read_bytes()[since:].decode("utf-8", "replace")
    logins = re.findall(r"Accepted publickey for \S+ from \S+ port (\d+)", text)
    sessions = re.findall(r"Starting session: command for \S+ from \S+ port (\d+)", text)
    return len(logins), len(set(logins)), len(sessions)


@needs_sshd
@pytest.mark.parametrize(("extra", "connections"), [
    ([], 1),
    # The user's own -o options win over kcross's: without multiplexing, every ssh
    # kcross starts is a connection of its own (the copy, each process, the removal).
    (["-o", "ControlMaster=no"], 1 + 3 + 1),
])
def test_one_connection_per_host_and_run(sshd: Sshd, env: dict[str, str], tmp_path: Path,
                                         extra: list[str], connections: int) -> None:
    notes = tmp_path / "notes.jsonl"
    harness = _stand_in(tmp_path / "stand_in.py", notes)
    since = sshd.log.stat().st_size
    proc = _kcross(env, "run", "--remote", sshd.url, *sshd.options, *extra,
                   "--harness", str(harness), "--processes", "3")
    assert proc.returncode == 0, proc.stderr
    assert "run 1: 2 ok, 0 skipped, 0 failed (3 processes each)" in proc.stdout
    assert len(_notes(notes)) == 3
    # The copy, 3 harness processes and the removal: 5 sessions, on one connection.
    deadline = time.monotonic() + HANG  # sshd writes its log a moment after the fact
    while _sshd_saw(sshd, since)[2] < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _sshd_saw(sshd, since) == (connections, connections, 5), \
        sshd.log.read_bytes()[since:].decode()[-3000:]
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)


# --- the remote machine's readiness line ---------------------------------------------

def _shorts(line: str | None) -> set[str]:
    """The items of a readiness line, less those that follow the load of the moment."""
    if line is None:
        return set()
    listed = line.split("machine not tuned: ", 1)[1].split(" — see ", 1)[0]
    return {item for item in listed.split(", ") if not re.search(r"busy|IRQs on CPU", item)}


@needs_sshd
def test_readiness_line_is_the_remote_machines(sshd: Sshd, env: dict[str, str],
                                               tmp_path: Path) -> None:
    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl")
    proc = _kcross(env, "run", "--remote", sshd.other_url, *sshd.options,
                   "--harness", str(harness), "--quick")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    # Where a local run prints it: first, once the harness has started.
    assert lines[0] == f"kcross: {sshd.other_url}: {UNTUNED_SAYS}", proc.stderr
    assert sum("not tuned" in line for line in lines) == 1
    quiet = _kcross(env, "run", "--remote", sshd.other_url, *sshd.options,
                    "--harness", str(harness), "--quick", "--no-readiness")
    assert quiet.returncode == 0 and "not tuned" not in quiet.stderr, quiet.stderr
    # --cpu: the harness's rule, applied to the CPUs a process may use there (0-1).
    busy = _kcross(env, "run", "--remote", sshd.other_url, *sshd.options,
                   "--harness", str(harness), "--quick", "--cpu", "5")
    assert_one_line_error(busy, 2, f"{sshd.other_url}: cannot pin to CPU 5: not in the "
                                   "remote shell's allowed CPUs (0-1)")
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)


@needs_sshd
def test_readiness_line_of_this_machine_over_ssh(sshd: Sshd, env: dict[str, str],
                                                 tmp_path: Path) -> None:
    """127.0.0.1 is this machine, read through /proc and /sys over ssh: the same line as
    the local checks', but for the load of the moment."""
    from kcross.run import readiness

    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl")
    proc = _kcross(env, "run", "--remote", sshd.url, *sshd.options, "--harness", str(harness),
                   "--quick")
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "not tuned" in line]
    assert len(said) <= 1 and all(line.startswith(f"kcross: {sshd.url}: ") for line in said)
    here = readiness.warning_line(readiness.run_checks(checks=readiness.RUN_CHECKS))
    assert _shorts(said[0] if said else None) == _shorts(here), (said, here)


def _connection_processes(sshd: Sshd) -> list[int]:
    """The sshd's per-connection processes (its children)."""
    listener = (sshd.root / "sshd.pid").read_text().strip()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == listener:
            found.append(int(pid))
    return found


@needs_sshd
def test_lost_connection_is_one_line_and_the_copy_still_goes(sshd: Sshd, env: dict[str, str],
                                                             tmp_path: Path) -> None:
    """The one connection breaks mid-run (its sshd process killed, as a network would drop
    it): every session on it ends; one line, the results so far kept, and the removal
    comes through a new connection."""
    harness = _stand_in(tmp_path / "stand_in.py", tmp_path / "notes.jsonl", mode="hang")
    db = Path(env["KCROSS_DB"])
    since = sshd.log.stat().st_size
    with _started(env, "run", "--remote", sshd.url, *sshd.options,
                  "--harness", str(harness)) as proc:
        deadline = time.monotonic() + HANG
        while not any(r["results"] for r in _runs(db)) and time.monotonic() < deadline:
            time.sleep(0.1)
        (connection,) = _connection_processes(sshd)
        os.kill(connection, signal.SIGKILL)
        _out, err = proc.communicate(timeout=HANG)
    line = assert_one_line_error(subprocess.CompletedProcess([], proc.returncode, "", err), 3,
                                 f"{sshd.url}: kcross-harness ended with ssh's status 255",
                                 after_progress=True)
    assert "1 result(s) kept in run 1 (marked failed)" in line
    assert list(sshd.remote_tmp.iterdir()) == []
    _nothing_left_here(env)
    logins, connections, _sessions = _sshd_saw(sshd, since)
    assert (logins, connections) == (2, 2)  # the run's, then the removal's
