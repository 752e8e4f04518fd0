"""The lab's machines, boots and kernel-configuration check (kcross.lab.machines, .boot,
.kconfig), without QEMU: a fake qemu-system program on PATH plays each failure (the real
one, when installed, only sets each machine up paused for the configuration check)."""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import HANG
from kcross.errors import GuestError, LabError, UserError
from kcross.lab import boot as boot_module
from kcross.lab import kconfig, machines
from kcross.lab.boot import boot, check_configuration
from kcross.lab.kernel import Kernel
from kcross.lab.machines import Guest


def guest(arch: str = "ppc64le", **kw: object) -> Guest:
    return Guest(machines.arch(arch), Path("/k"), **kw)  # type: ignore[arg-type]


def test_counting_command_line() -> None:
    argv = guest(append="  nokaslr   mitigations=off ", machine_opts=("cap-cfpc=broken",)).argv(
        Path("/i"))
    assert argv[:5] == ["qemu-system-ppc64", "-M", "pseries,x-vof=on,cap-cfpc=broken",
                        "-cpu", "power9"]
    assert argv[argv.index("-smp") + 1] == "1"
    assert argv[argv.index("-append") + 1] == "console=hvc0 quiet loglevel=1 panic=-1 nokaslr mitigations=off"
    assert "-icount" in argv and "shift=0,align=off,sleep=off" in argv
    assert argv[argv.index("-initrd") + 1] == "/i" and "-vga" in argv
    assert argv[argv.index("-nic") + 1] == "none"


def test_correctness_command_line() -> None:
    argv = guest("aarch64", mode="correctness").argv(Path("/i"))
    assert argv[argv.index("-smp") + 1] == "2"
    assert "tcg,thread=multi" in argv and "-icount" not in argv
    assert argv[argv.index("-cpu") + 1] == "max,pauth-impdef=on"


def test_x86_default_is_an_intel_model_without_tcg_warnings() -> None:
    cpu = machines.arch("x86_64").cpu
    assert cpu.startswith("Skylake-Client") and "-pcid" in cpu


@pytest.mark.parametrize("kw, message", [
    ({"mode": "fast"}, "unknown lab mode 'fast'"),
    ({"machine_opts": ("cap-cfpc",)}, "machine option 'cap-cfpc' is not KEY=VALUE"),
    ({"machine_opts": ("a=b,c=d",)}, "is not KEY=VALUE"),
    ({"smp": 2}, "counting mode runs one vCPU"),
    ({"append": "a\nb"}, "one line"),
])
def test_bad_guests_are_one_line(kw: dict, message: str) -> None:
    with pytest.raises(UserError, match=message):
        guest(**kw)


def test_unknown_arch() -> None:
    with pytest.raises(UserError, match=r"unknown lab arch 'arm64' \(did you mean aarch64\?\)"):
        machines.arch("arm64")


# ---------------------------------------------------------------- boot, with a fake QEMU

def fake_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "qemu-system-ppc64"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")


def test_boot_returns_the_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, "echo \"qemu-system-ppc64: warning: TCG doesn't support "
              "requested feature, cap-cfpc=workaround\" >&2; echo hello; echo \"$@\"")
    console = boot(guest(), tmp_path / "i", timeout=HANG)
    assert console.startswith("hello\n-M pseries,x-vof=on -cpu power9")


def test_qemu_missing_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LabError, match=r"no qemu-system-ppc64 on PATH \(apt-get install "
                       r"qemu-system-ppc\)"):
        boot(guest(), tmp_path / "i", timeout=HANG)


def test_refused_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, "echo \"qemu-system-ppc64: Property 'x.cap-ibs' bad\" >&2;"
              " exit 1")
    with pytest.raises(LabError, match=r"refused the configuration \(exited 1\): "
                       r"qemu-system-ppc64: Property 'x.cap-ibs' bad"):
        boot(guest(), tmp_path / "i", timeout=HANG)


def test_crash_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, "echo booting; kill -ABRT $$")
    with pytest.raises(GuestError, match="was killed by SIGABRT"):
        boot(guest(), tmp_path / "i", timeout=HANG)


def test_timeout_quotes_the_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, "echo 'Kernel panic - not syncing: VFS'; exec sleep 60")
    with pytest.raises(GuestError, match=r"did not power off within 1 s .* last console lines: "
                       r"Kernel panic - not syncing: VFS"):
        boot(guest(), tmp_path / "i", timeout=1)


# ---------------------------------------------------------------- QEMU's check, before any boot

def test_the_configuration_check_runs_no_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, f'echo "$@" > {tmp_path}/argv; read line; '
              f'echo "$line" > {tmp_path}/said')
    g = guest(machine_opts=("cap-cfpc=broken",), cpu="power8")
    check_configuration(g)
    argv = (tmp_path / "argv").read_text().split()
    assert argv[:4] == ["-M", "pseries,x-vof=on,cap-cfpc=broken", "-cpu", "power8"]
    assert "-S" in argv and argv[argv.index("-monitor") + 1] == "stdio"
    assert not {"-kernel", "-initrd", "-append"} & set(argv)
    assert "-icount" in argv    # the mode's own options: QEMU checks those too
    assert (tmp_path / "said").read_text() == "quit\n"


def test_a_refused_configuration_is_qemus_own_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, "echo \"qemu-system-ppc64: warning: TCG doesn't support "
              "requested feature, cap-cfpc=workaround\" >&2; echo \"qemu-system-ppc64: unable to "
              "find CPU model 'power99'\" >&2; exit 1")
    with pytest.raises(LabError, match=r"^qemu-system-ppc64 refused the configuration \(exited 1\): "
                       r"qemu-system-ppc64: unable to find CPU model 'power99'$"):
        check_configuration(guest(cpu="power99"))


def test_a_qemu_that_does_not_quit_is_left_to_the_boot(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qemu(tmp_path, monkeypatch, "exec sleep 60")
    monkeypatch.setattr(boot_module, "CHECK_TIMEOUT", 0.5)
    check_configuration(guest())


@pytest.mark.parametrize("arch", machines.ARCHES)
@pytest.mark.parametrize("mode", machines.MODES)
def test_real_qemu_takes_every_default_machine(arch: str, mode: str) -> None:
    """The check's command line against the real QEMU: each arch's machine, in each mode,
    is taken; an unknown CPU model is not."""
    facts = machines.arch(arch)
    if not shutil.which(facts.qemu):
        pytest.skip(f"no {facts.qemu} (apt-get install {facts.qemu_package})")
    check_configuration(guest(arch, mode=mode))
    with pytest.raises(LabError, match=r"refused the configuration \(exited 1\): .*no-such-cpu"):
        check_configuration(guest(arch, mode=mode, cpu="no-such-cpu"))


# ---------------------------------------------------------------- kernel configuration

def test_missing_options_are_named() -> None:
    options = kconfig.parse("CONFIG_BLK_DEV_INITRD=y\nCONFIG_DEVTMPFS=y\nCONFIG_PROC_FS=y\n"
                            "CONFIG_SYSFS=y\nCONFIG_BINFMT_ELF=y\n# CONFIG_RSEQ is not set\n"
                            "CONFIG_SERIAL_8250_CONSOLE=m\n")
    assert kconfig.missing(options, "x86_64") == [
        "CONFIG_RSEQ (restartable sequences (the per-CPU operations' fast paths))",
        "CONFIG_SERIAL_8250_CONSOLE (the ttyS0 console)"]


def test_config_found_in_the_build_tree_and_embedded(tmp_path: Path) -> None:
    tree = tmp_path / "linux"
    (tree / "arch/x86/boot").mkdir(parents=True)
    image = tree / "arch/x86/boot/bzImage"
    image.write_bytes(b"x")
    (tree / ".config").write_text("CONFIG_RSEQ=y\n")
    found = kconfig.find(Kernel("x86_64", image, source="file"))
    assert found == ({"CONFIG_RSEQ": "y"}, str(tree / ".config"))

    vmlinux = tmp_path / "vmlinux"
    vmlinux.write_bytes(b"\x7fELF..." + kconfig.IKCFG_START
                        + gzip.compress(b"CONFIG_RSEQ=y\nCONFIG_HVC_CONSOLE=y\n")
                        + kconfig.IKCFG_END + b"tail")
    found = kconfig.find(Kernel("ppc64le", vmlinux, source="file"))
    assert found is not None and found[0]["CONFIG_HVC_CONSOLE"] == "y"
    assert "IKCONFIG" in found[1]


def test_debian_kernels_need_nothing_more() -> None:
    """The options the lab needs are those of Debian's own kernels (from their config-*)."""
    cached = Path(os.path.expanduser("~/.cache/kcross/lab"))
    configs = sorted(cached.glob("*/*/boot/config-*"))
    if not configs:
        pytest.skip("no Debian kernel cached (./check's lab tier fetches them)")
    for config in configs:
        arch = config.relative_to(cached).parts[0]
        assert kconfig.missing(kconfig.parse(config.read_text()), arch) == [], config


def test_cancel_all_stops_running_guests_and_refuses_new_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from kcross.errors import Interrupted
    from kcross.lab.boot import allow_boots, cancel_all

    fake_qemu(tmp_path, monkeypatch, "echo booting; exec sleep 60")
    failure: list[BaseException] = []

    def run() -> None:
        try:
            boot(guest(), tmp_path / "i", timeout=HANG)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            failure.append(exc)

    allow_boots()
    thread = threading.Thread(target=run)
    started = time.monotonic()
    thread.start()
    time.sleep(0.5)
    cancel_all()
    thread.join(HANG)
    try:
        assert not thread.is_alive() and time.monotonic() - started < HANG  # not the boot's
        assert len(failure) == 1 and isinstance(failure[0], Interrupted), failure
        with pytest.raises(Interrupted, match="before the guest booted"):
            boot(guest(), tmp_path / "i", timeout=HANG)
    finally:
        allow_boots()


def test_install_deps_installs_what_each_lab_needs() -> None:
    """`scripts/install-deps lab-ARCH` (scripts/packages.tsv, the one list of packages)
    installs this module's packages for ARCH: its QEMU and, but on an x86-64 host, where
    x86-64's compiler and C library are build-essential's, its cross compiler and C
    library; and the build's own (the lab builds its guest programs with CMake)."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "install-deps"
    for name in machines.ARCHES:
        a = machines.arch(name)
        compilers = [] if name == "x86_64" else [a.cross_package, a.cross_libc_package]
        listed = subprocess.run(["bash", str(script), "--list", f"lab-{name}"], check=True,
                                capture_output=True, text=True).stdout.split()
        assert sorted(listed) == sorted(["build-essential", "cmake", a.qemu_package, *compilers])
