"""``kcross lab``: bad input is one line and a non-zero exit, and nothing is stored.

The tests that get as far as booting need the arch's cross compiler (the guest payload
is built, cached under XDG_CACHE_HOME) and use a fake qemu-system program on PATH that
plays a kernel panic, a guest printing garbage, or QEMU refusing the configuration.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HANG, assert_one_line_error, terminal_signals
from kcross.lab import machines
from labs import lab_kernel

REAL_CACHE = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")


def ppc64le_elf(path: Path) -> Path:
    """An ELF header the lab takes for a ppc64le vmlinux (64-bit, little-endian, EM_PPC64)."""
    head = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HH", 2, 21)
    path.write_bytes(head + bytes(4096))
    return path


@pytest.mark.parametrize("args, message", [
    (["sparc"], "unknown lab arch 'sparc'"),
    (["arm64"], "did you mean aarch64?"),
    (["ppc64le", "--mode", "correctness", "--compare", "sc", "scv"], "counting-mode options"),
    (["x86_64", "--mitigations", "--cpu", "EPYC-v1"], "--mitigations sets the CPU model"),
    (["ppc64le", "--machine-opt", "cap-cfpc"], "machine option 'cap-cfpc' is not KEY=VALUE"),
    (["ppc64le", "--kernel", "/nonexistent/vmlinux"], "/nonexistent/vmlinux: no such kernel file"),
    (["ppc64le", "--source", "/no/such/dir"], "--source /no/such/dir: no such directory"),
    (["ppc64le", "--compare", "sc", "sv"],
     "--compare sc sv: ppc64le has no syscall mechanism 'sv' (did you mean scv? it has: libc, "
     "sc, scv)"),
    (["aarch64", "--compare", "svc", "scv"],
     "aarch64 has no syscall mechanism 'scv' (did you mean svc? it has: libc, svc)"),
    (["x86_64", "--compare", "auto", "syscall"], "x86_64 has no syscall mechanism 'auto'"),
    (["ppc64le", "--compare", "scv", "scv"], "--compare scv scv: the same mechanism twice"),
    (["ppc64le", "--suite", "syscall,ctxsv"],
     "--suite syscall,ctxsv: no suite 'ctxsv' (did you mean ctxsw or uctx? suites: syscall, "),
    (["ppc64le", "--suite", "syscall,"], "give suite names separated by commas"),
    (["ppc64le", "--bench", "nosuch"],
     "--bench nosuch: no such benchmark in ppc64le's suites syscall, cpuid, percpu"),
    (["ppc64le", "--bench", "rdtscp"], "--bench rdtscp: no such benchmark in ppc64le's"),
    (["x86_64", "--suite", "syscall", "--bench", "rdtscp"],
     "--bench rdtscp: no such benchmark in x86_64's suites syscall"),
    (["ppc64le", "--mitigations", "--bench", "cpuid/*"],
     "--bench cpuid/*: no such benchmark in ppc64le's suites syscall"),
    # --env and --compare-env: the harness's settings (kcross.forcings), one line each
    (["x86_64", "--env", "KCROSS_RSEQ"],
     "--env 'KCROSS_RSEQ': expected NAME=VALUE, e.g. KCROSS_RSEQ=off"),
    (["x86_64", "--env", "=off"], "--env '=off': expected NAME=VALUE"),
    (["x86_64", "--env", "KCROSS_NOSUCH=1"],
     "--env 'KCROSS_NOSUCH=1': KCROSS_NOSUCH is not one of the harness's settings "
     "(KCROSS_SYSCALL, KCROSS_VDSO, KCROSS_RSEQ, KCROSS_TIMER, KCROSS_TEST_FAIL, "
     "KCROSS_TEST_DELAY)"),
    (["x86_64", "--env", "KCROSS_RSEQ=maybe"],
     "--env 'KCROSS_RSEQ=maybe': KCROSS_RSEQ=maybe: not one of auto, on, off"),
    (["x86_64", "--env", "KCROSS_VDSO=off"], "KCROSS_VDSO=off: not one of 0, 1"),
    (["x86_64", "--env", "KCROSS_RSEQ="], "KCROSS_RSEQ= is empty (an empty forcing is none)"),
    (["x86_64", "--env", "KCROSS_TEST_FAIL=getppid-* gettid-*"],
     "a value without spaces (the guest's plan has no quoting)"),
    (["x86_64", "--env", "KCROSS_PROFILE=1"],
     "KCROSS_PROFILE is set by kcross lab --profile and --trace, not by hand"),
    (["x86_64", "--env", "KCROSS_RSEQ=off", "--env", "KCROSS_RSEQ=on"],
     "--env: KCROSS_RSEQ given twice (KCROSS_RSEQ=off and KCROSS_RSEQ=on)"),
    (["ppc64le", "--compare", "sc", "scv", "--env", "KCROSS_SYSCALL=sc"],
     "--env KCROSS_SYSCALL=sc and --compare set KCROSS_SYSCALL both: --compare sets it on "
     "both sides; drop it from --env"),
    (["x86_64", "--compare-env", "KCROSS_RSEQ=off", "--env", "KCROSS_RSEQ=on"],
     "--env KCROSS_RSEQ=on and --compare-env set KCROSS_RSEQ both: --compare-env sets it on "
     "side B; drop it from --env"),
    (["x86_64", "--compare-env", "KCROSS_RSEQ=maybe"],
     "--compare-env 'KCROSS_RSEQ=maybe': KCROSS_RSEQ=maybe: not one of auto, on, off"),
    (["x86_64", "--compare-env", "KCROSS_RSEQ=off", "--compare-env", "KCROSS_RSEQ=on"],
     "--compare-env: KCROSS_RSEQ given twice"),
    (["x86_64", "--mode", "correctness", "--env", "KCROSS_RSEQ=off"],
     "--env: counting-mode options"),
    (["x86_64", "--peers", "--compare-env", "KCROSS_RSEQ=off"],
     "not with --compare-env"),
    (["x86_64", "--trace", "getppid-inline", "--compare-env", "KCROSS_RSEQ=off"],
     "--trace shows one boot's operation: not with --compare, --compare-env,"),
    # ... and as the guest harness built from the tree takes them
    (["x86_64", "--env", "KCROSS_SYSCALL=scv"],
     "--env KCROSS_SYSCALL=scv: x86_64's harness takes libc, syscall, auto"),
    (["aarch64", "--compare-env", "KCROSS_SYSCALL=sc"],
     "--compare-env KCROSS_SYSCALL=sc: aarch64's harness takes libc, svc, auto"),
    (["x86_64", "--env", "KCROSS_TEST_FAIL=nosuch"],
     "--env KCROSS_TEST_FAIL=nosuch: 'nosuch' matches no benchmark of x86_64's harness"),
    (["ppc64le", "--env", "KCROSS_TEST_FAIL=rdtscp"],
     "'rdtscp' matches no benchmark of ppc64le's harness"),
    (["x86_64", "--env", "KCROSS_TEST_DELAY=getppid-inline:0"],
     "--env KCROSS_TEST_DELAY=getppid-inline:0: not GLOB:NS (a glob of benchmark names, a "
     "colon, nanoseconds above 0 and at most 1000000)"),
    (["x86_64", "--env", "KCROSS_TEST_DELAY=nosuch:5"],
     "'nosuch' matches no benchmark of x86_64's harness"),
    # an empty --trace was no trace at all: a full counting run, downloaded and stored
    (["x86_64", "--trace", ""], "argument --trace: is empty: name a benchmark"),
    (["x86_64", "--bench", " "], "argument --bench: is empty: name a benchmark"),
    # a long one is echoed clipped, not whole
    (["x86_64", "--trace", "x" * 5000], "--trace " + "x" * 60 + "... (5000 characters): no "
     "such benchmark on x86_64"),
])
@pytest.mark.parametrize("qemu", ["installed", "absent"])
def test_bad_input_is_one_line(kcross, db_path: Path, tmp_path: Path, args: list[str],  # type: ignore[no-untyped-def]
                               message: str, qemu: str) -> None:
    """The user's mistakes are named first, whatever this machine lacks (QEMU here), and
    before anything is fetched or built (the cache stays empty)."""
    extra = {"PATH": str(tmp_path)} if qemu == "absent" else {}
    assert_one_line_error(kcross("lab", *args, extra_env=extra), 2, message)
    assert not db_path.exists()
    assert not (tmp_path / "home" / ".cache").exists()


def requested(monkeypatch: pytest.MonkeyPatch, *args: str):  # type: ignore[no-untyped-def]
    """The LabRequest ``kcross lab ARGS`` builds (kcross.lab.jobs.run caught)."""
    from kcross.cli import build_parser
    from kcross.lab import jobs

    seen = []
    monkeypatch.setattr(jobs, "run", lambda request, out, err: seen.append(request) or 0)
    parsed = build_parser().parse_args(["lab", *args])
    parsed.argv = ["lab", *args]
    assert parsed.func(parsed, None, None) == 0
    return seen[0]


def test_env_and_compare_env_build_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """--env's settings go to every boot's harness; --compare-env is one job of two
    settings (A as the guest is, B with them), --compare the same with KCROSS_SYSCALL
    forced on both; the settings as given, checked when asked."""
    request = requested(monkeypatch, "x86_64", "--env", "KCROSS_VDSO=0", "--env",
                        "KCROSS_TIMER=auto", "--compare-env", "KCROSS_RSEQ=off")
    assert request.guest.env == ("KCROSS_VDSO=0", "KCROSS_TIMER=auto")
    assert request.compare_env == ("KCROSS_RSEQ=off",)
    a, b = request.sides()
    assert (a.label, dict(a.env), b.label, dict(b.env)) == ("A", {}, "B", {"KCROSS_RSEQ": "off"})
    assert request.guest.environment(a.env) == {"KCROSS_VDSO": "0", "KCROSS_TIMER": "auto"}
    assert request.guest.environment(b.env) == {"KCROSS_VDSO": "0", "KCROSS_TIMER": "auto",
                                                "KCROSS_RSEQ": "off"}
    compare = requested(monkeypatch, "ppc64le", "--compare", "sc", "scv")
    assert [(s.label, dict(s.env)) for s in compare.sides()] == [
        ("sc", {"KCROSS_SYSCALL": "sc"}), ("scv", {"KCROSS_SYSCALL": "scv"})]
    assert compare.guest.environment() is None      # no --env: the plan as before
    plain = requested(monkeypatch, "aarch64")
    assert plain.sides() is None and plain.guest.environment() is None
    several = requested(monkeypatch, "aarch64", "--compare-env", "KCROSS_RSEQ=off",
                        "--compare-env", "KCROSS_VDSO=0")
    assert dict(several.sides()[1].env) == {"KCROSS_RSEQ": "off", "KCROSS_VDSO": "0"}


def test_compare_env_boots_the_kernel_with_each_sides_settings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The boots of --compare-env: the same kernel and guest, the harness given --env's
    settings and the side's, each run's variant the settings it got."""
    from kcross.lab import boots, jobs
    from kcross.lab.kernel import Kernel

    booted = []

    def count(guest, kernel, payload, *, variant, env, **kw):  # type: ignore[no-untyped-def]
        booted.append((kernel.path, variant, env))
        return variant

    monkeypatch.setattr(boots, "count", count)
    monkeypatch.setattr(boots, "say", lambda *a: None)
    request = requested(monkeypatch, "x86_64", "--env", "KCROSS_VDSO=0", "--compare-env",
                        "KCROSS_RSEQ=off")
    kernel = Kernel("x86_64", Path("/k/bzImage"))
    sides = request.sides()
    assert sides is not None
    subjects = jobs.env_subjects(request, kernel, None, sides)  # type: ignore[arg-type]
    runs = jobs.count_subjects(request, subjects, None)  # type: ignore[arg-type]
    assert runs == ["KCROSS_VDSO=0", "KCROSS_VDSO=0 KCROSS_RSEQ=off"]
    assert sorted(booted, key=str) == sorted([
        (Path("/k/bzImage"), "KCROSS_VDSO=0", {"KCROSS_VDSO": "0"}),
        (Path("/k/bzImage"), "KCROSS_VDSO=0 KCROSS_RSEQ=off",
         {"KCROSS_VDSO": "0", "KCROSS_RSEQ": "off"})], key=str)


@pytest.mark.parametrize("qemu", ["installed", "absent"])
def test_an_unusable_database_is_refused_first(kcross, db_path: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                               qemu: str) -> None:
    """As `kcross run` does: the store is checked before any download, build or boot (their
    results would be thrown away); nothing is created."""
    extra = {"PATH": str(tmp_path / "empty")} if qemu == "absent" else {}
    assert_one_line_error(kcross("lab", "ppc64le", "--db", str(tmp_path), extra_env=extra), 2,
                          f"{tmp_path} is a directory, not a database file")
    assert not (tmp_path / "home" / ".cache").exists()
    # Nothing is stored without counting: --no-store and the correctness mode use no database.
    for args in (["--no-store"], ["--mode", "correctness"]):
        proc = kcross("lab", "ppc64le", "--db", str(tmp_path), *args,
                      extra_env={"PATH": str(tmp_path / "empty")})
        assert_one_line_error(proc, 2, "kcross lab ppc64le needs qemu-system-ppc64, ")


def test_every_missing_program_is_named_in_one_line(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                    tmp_path: Path) -> None:
    """QEMU, the cross compiler, cmake, a build tool and (no kernel cached) apt: all at once,
    with one apt-get line, before anything is fetched or built."""
    proc = kcross("lab", "ppc64le", extra_env={"PATH": str(tmp_path),
                                                "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert_one_line_error(proc, 2, "kcross lab ppc64le needs qemu-system-ppc64, "
                          "powerpc64le-linux-gnu-gcc, cmake, ninja, apt-get, apt-cache, dpkg "
                          "(apt-get install qemu-system-ppc gcc-powerpc64le-linux-gnu "
                          "libc6-dev-ppc64el-cross cmake ninja-build apt dpkg)")
    assert not db_path.exists() and not (tmp_path / "cache").exists()
    # With a kernel file of its own, the lab fetches nothing: apt is not needed.
    proc = kcross("lab", "ppc64le", "--kernel", str(ppc64le_elf(tmp_path / "vmlinux")),
                  extra_env={"PATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    line = assert_one_line_error(proc, 2, "kcross lab ppc64le needs qemu-system-ppc64, ", after_progress=True)
    assert line.endswith("ninja (apt-get install qemu-system-ppc gcc-powerpc64le-linux-gnu "
                         "libc6-dev-ppc64el-cross cmake ninja-build)")


def test_against_the_same_kernel_is_one_line_before_any_build(  # type: ignore[no-untyped-def]
        kcross, db_path: Path, tmp_path: Path) -> None:
    """--against naming the kernel being booted (another path, the same bytes): one line,
    exit 2, nothing built or booted (a QEMU that would run says so and fails)."""
    kernel = ppc64le_elf(tmp_path / "vmlinux")
    copy = tmp_path / "copy-of-vmlinux"
    copy.write_bytes(kernel.read_bytes())
    env = {**fake_qemu(tmp_path, "echo 'QEMU was started' >&2; exit 9"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = kcross("lab", "ppc64le", "--kernel", str(kernel), "--against", str(copy),
                  extra_env=env)
    line = assert_one_line_error(proc, 2, f"--against {copy} is the same kernel as {kernel} "
                                 "(SHA-256 ", after_progress=True)
    assert line.endswith("two boots of one kernel count the same instructions; name another "
                         "kernel")
    assert "QEMU was started" not in proc.stderr and not (tmp_path / "cache").exists()
    # Another kernel is taken: the check compares bytes, not names.
    copy.write_bytes(kernel.read_bytes() + b"patched")
    proc = kcross("lab", "ppc64le", "--kernel", str(kernel), "--against", str(copy),
                  "--no-store", extra_env={**env, "PATH": str(tmp_path / "fakebin")})
    assert "same kernel" not in proc.stderr


def test_against_debians_own_kernel_is_refused_once_it_is_fetched(  # type: ignore[no-untyped-def]
        kcross, db_path: Path, tmp_path: Path) -> None:
    """Without --kernel the lab boots Debian's (cached here): --against that very file is
    refused after the fetch, before the build and the boots."""
    from labs import kernel_variable

    debian = os.environ.get(kernel_variable("ppc64le"))
    if not debian:
        pytest.skip(f"set {kernel_variable('ppc64le')} to Debian's cached ppc64le kernel")
    proc = kcross("lab", "ppc64le", "--against", debian, "--no-store",
                  extra_env=fake_qemu(tmp_path, "echo 'QEMU was started' >&2; exit 9"))
    line = assert_one_line_error(proc, 2, f"--against {debian} is the same kernel as Debian ",
                                 after_progress=True)
    assert "two boots of one kernel" in line and "QEMU was started" not in proc.stderr
    assert "building kcross" not in proc.stderr


@pytest.mark.parametrize("option, value, message", [
    ("--cpu", "power99", "unable to find CPU model 'power99'"),
    ("--machine-opt", "cap-cfpc=bogus", 'Invalid capability mode "bogus" for cap-cfpc'),
    ("--machine-opt", "cap-bogus=on", "cap-bogus' not found"),
])
def test_qemu_refuses_the_users_cpu_or_machine_options_before_any_build(  # type: ignore[no-untyped-def]
        kcross, db_path: Path, tmp_path: Path, payload_buildable: None, option: str, value: str,
        message: str) -> None:
    if not shutil.which("qemu-system-ppc64"):
        pytest.skip("no qemu-system-ppc64 (apt-get install qemu-system-ppc)")
    proc = kcross("lab", "ppc64le", "--kernel", str(ppc64le_elf(tmp_path / "vmlinux")), option, value,
                  extra_env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    line = assert_one_line_error(proc, 2, "qemu-system-ppc64 refused the configuration (exited 1): ",
                                 after_progress=True)
    assert message in line
    assert "building" not in proc.stderr
    assert not db_path.exists() and not (tmp_path / "cache").exists()


def test_not_a_kernel(kcross, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert_one_line_error(kcross("lab", "aarch64", "--kernel", str(text),
                                 extra_env={"PATH": str(tmp_path)}), 2,
                          "is not a kernel for aarch64")
    assert not db_path.exists()


def test_kernel_lacking_rseq_is_named(kcross, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tree = tmp_path / "linux"
    tree.mkdir()
    (tree / ".config").write_text("CONFIG_BLK_DEV_INITRD=y\nCONFIG_DEVTMPFS=y\n"
                                  "CONFIG_PROC_FS=y\nCONFIG_SYSFS=y\nCONFIG_BINFMT_ELF=y\n"
                                  "CONFIG_PPC_PSERIES=y\nCONFIG_HVC_CONSOLE=y\n")
    line = assert_one_line_error(
        kcross("lab", "ppc64le", "--kernel", str(ppc64le_elf(tree / "vmlinux")),
               extra_env={"PATH": str(tmp_path)}), 2,
        "cannot run the lab: its configuration")
    assert "lacks CONFIG_RSEQ" in line
    assert not db_path.exists()


def test_missing_cross_compiler_names_the_package(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                  tmp_path: Path) -> None:
    if not shutil.which("qemu-system-ppc64"):
        pytest.skip("no qemu-system-ppc64 (apt-get install qemu-system-ppc): checked first")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("cmake", "ninja", "make", "qemu-system-ppc64"):  # all but the compiler
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    proc = kcross("lab", "ppc64le", "--kernel", str(ppc64le_elf(tmp_path / "vmlinux")),
                  "--source", str(Path(__file__).resolve().parents[2]),
                  extra_env={"PATH": str(bindir), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    # Refused before any kernel is fetched or anything built: one line, nothing else.
    assert_one_line_error(proc, 2, "kcross lab ppc64le needs powerpc64le-linux-gnu-gcc (apt-get "
                          "install gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross)",
                          after_progress=True)
    assert not db_path.exists() and not (tmp_path / "cache").exists()


# ---------------------------------------------------------------- with a fake QEMU

def fake_qemu(tmp_path: Path, body: str) -> dict[str, str]:
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    script = bindir / "qemu-system-ppc64"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "XDG_CACHE_HOME": REAL_CACHE,
            "KCROSS_SOURCE": str(Path(__file__).resolve().parents[2])}


# A fake QEMU's first line: $T, the boot's token, read from the -initrd it was given (the
# newc archive's lab/token member) as lab/init.c reads /lab/token.
TOKEN_OF_INITRD = (
    'for a; do [ "$prev" = -initrd ] && img=$a; prev=$a; done; '
    "T=$(python3 -c 'import re, sys; print(re.search(rb\"070701[0-9A-F]{104}lab/token\\0+([0-9a-f]{16})\", "
    "open(sys.argv[1], \"rb\").read())[1].decode())' \"$img\"); "
)


@pytest.fixture
def payload_buildable() -> None:
    a = machines.arch("ppc64le")
    if not shutil.which(a.cross_gcc):
        pytest.skip(f"no {a.cross_gcc} (apt-get install {a.cross_package})")
    if not shutil.which("cmake"):
        pytest.skip("no cmake (apt-get install cmake)")


@pytest.mark.parametrize("body, code, message", [
    ("echo 'Kernel panic - not syncing: No working init found.'", 3,
     "the guest never finished its plan"),
    (TOKEN_OF_INITRD + "echo \"@@kcross-lab $T start commands=1\";"
     " echo \"@@kcross-lab $T begin 1 /lab/kcross-harness\"; echo '{\"type\": garbage';"
     " echo \"@@kcross-lab $T end 1 status=0\"; echo \"@@kcross-lab $T done\"",
     3, "the guest printed a garbled record"),
    ("echo \"qemu-system-ppc64: Property 'spapr-machine.cap-bogus' not found\" >&2; exit 1", 2,
     "qemu-system-ppc64 refused the configuration (exited 1)"),
])
def test_guest_failures_store_nothing(kcross, db_path: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                      payload_buildable: None, body: str, code: int,
                                      message: str) -> None:
    proc = kcross("lab", "ppc64le", "--kernel", str(ppc64le_elf(tmp_path / "vmlinux")),
                  extra_env=fake_qemu(tmp_path, body))
    assert_one_line_error(proc, code, message, after_progress=True)
    assert not db_path.exists()


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_stop_signal_kills_the_guests(env: dict, db_path: Path, tmp_path: Path,
                                      payload_buildable: None, signum: int, code: int) -> None:
    """A stopped lab leaves no QEMU running (each runs in its own session, out of the
    terminal's reach) and no temporary directory; the two --compare boots run at once."""
    pids = tmp_path / "pids"
    pids.mkdir()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    environ = {**env, **fake_qemu(tmp_path, f"echo $$ > {pids}/$$; exec sleep {HANG:g}"),
               "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "kcross", "lab", "ppc64le", "--kernel",
                             str(ppc64le_elf(tmp_path / "vmlinux")), "--compare", "sc", "scv"],
                            env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=terminal_signals)
    deadline = time.monotonic() + HANG
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(list(pids.iterdir())) == 2, proc.communicate(timeout=5)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=HANG)
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr.decode()
    for pidfile in pids.iterdir():
        pid = int(pidfile.read_text())
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert list(tmp.iterdir()) == []
    assert not db_path.exists()


def test_compare_on_a_real_kernel_is_stored_once(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`kcross lab ppc64le --compare sc scv` end to end on Debian's kernel: the table, two
    lab runs stored, and the same command again stores nothing new (identical records)."""
    kernel = lab_kernel("ppc64le")
    a = machines.arch("ppc64le")
    if not shutil.which(a.cross_gcc):
        pytest.skip(f"no {a.cross_gcc} (apt-get install {a.cross_package})")
    args = ("lab", "ppc64le", "--kernel", str(kernel), "--compare", "sc", "scv",
            "--suite", "syscall", "--bench", "getppid-*")
    extra = {"XDG_CACHE_HOME": REAL_CACHE, "KCROSS_SOURCE": str(Path(__file__).resolve().parents[2])}
    proc = kcross(*args, extra_env=extra)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split("|")[1].strip(): line for line in proc.stdout.splitlines()
            if line.startswith("|")}
    dispatch = [c.strip() for c in rows["getppid-dispatch"].split("|")[1:-1]]
    assert float(dispatch[2]) < float(dispatch[1])        # scv < sc through kc_sys0
    # sc itself: its path unchanged.  The two boots' timers may read one timebase tick
    # (~1.95 instructions) apart over a batch: +-0.0025 per op, never a whole instruction.
    assert abs(float(rows["getppid-inline"].split("|")[4].strip())) < 0.01
    assert "stored as run 1, 2" in proc.stderr
    again = kcross(*args, extra_env=extra)
    assert again.returncode == 0, again.stderr
    assert "stored as run 1 (identical, already stored), 2 (identical, already stored)" \
        in again.stderr
