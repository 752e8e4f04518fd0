"""The lab's machines: one place for each architecture's QEMU facts (issue 8).

What each arch boots on, and why (see docs/lab.md for the measurements behind it):

- ppc64le: ``qemu-system-ppc64 -M pseries,x-vof=on -cpu power9``.  x-vof (QEMU's
  minimal Open Firmware) reaches /init in seconds where SLOF takes ~25 s; ``-vga none``
  because Debian's QEMU has no VGA BIOS for it; ``powernv`` aborts under icount in QEMU
  7.2.  The pseries ``cap-*`` machine options are what the hypervisor reports about the
  CPU's speculation flaws; QEMU's defaults ask for the workarounds.
- aarch64: ``qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on``: ``max`` with
  QEMU's default pointer-authentication algorithm is emulated slowly (boots ~3x longer).
- x86_64: ``qemu-system-x86_64 -M q35`` with a named Intel model.  Under TCG ``-cpu
  max``/``qemu64`` present an old AMD family that the kernel treats as almost
  unaffected; Skylake-Client gets page-table isolation, retpolines and buffer clearing
  as real Intel parts do.  The features TCG cannot provide are switched off so that
  QEMU prints no warnings.

Two modes: *counting* (one vCPU, ``-icount shift=0``: one virtual nanosecond per guest
instruction, fixed seed and clock, so two boots give byte-identical output) and
*correctness* (two vCPUs on multi-threaded TCG, so that threads really preempt and
migrate and rseq sections really abort; QEMU refuses icount there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kcross.errors import UserError
from kcross.lab.kernel import ARCHES, check_arch

MODES = ("counting", "correctness")
# The harness suites a counting run counts unless told otherwise.
DEFAULT_SUITES = ("syscall", "cpuid", "percpu")

# One guest nanosecond per instruction; virtual time does not jump ahead of the
# instructions (align=off) nor while the guest idles (sleep=off); a fixed seed for
# QEMU's own randomness and a fixed, virtual clock for the guest's RTC.
COUNTING_ICOUNT = "shift=0,align=off,sleep=off"
COUNTING_SEED = 1
COUNTING_RTC = "base=2024-01-01T00:00:00,clock=vm"
COUNTING_ARGS = ("-icount", COUNTING_ICOUNT, "-seed", str(COUNTING_SEED), "-rtc", COUNTING_RTC)
CORRECTNESS_ARGS = ("-accel", "tcg,thread=multi")
CORRECTNESS_SMP = 2


@dataclass(frozen=True)
class Arch:
    """How QEMU boots one architecture, and how its guest programs are built."""

    name: str
    qemu: str               # the qemu-system program
    qemu_package: str       # the Debian package that has it
    machine: str            # -M
    cpu: str                # the default -cpu model
    console: str            # the kernel's console device
    toolchain: str          # cmake/toolchain-<toolchain>.cmake builds the guest programs
    cross_gcc: str
    cross_package: str
    cross_libc_package: str   # the C library the static guest programs link (libc.a)
    # Where the kernel lives in the virtual address space: every address at or above it
    # is the kernel's (the profile plugin splits user and kernel instructions there).
    # ppc64: the linear map and kernel text from 0xc000000000000000; x86-64 and arm64:
    # the upper half.
    kernel_base: int
    # Whether its instructions are 4-byte words stored little-endian (costly.py decodes
    # the words QEMU's disassembler prints only as bytes); x86's are of varying length.
    le_insn_words: bool
    extra: tuple[str, ...] = ()   # further QEMU options this machine needs
    # Kernel options this machine needs beyond kconfig.COMMON (its console, its platform).
    kconfig: tuple[tuple[str, str], ...] = ()


# Features of named CPU models that TCG cannot provide (QEMU 7.2 prints "TCG doesn't
# support requested feature" for each): switched off, so that the guest sees what it
# really gets and QEMU prints no warnings.  A model named bare (--cpu EPYC-v1) gets them.
TCG_UNSUPPORTED: dict[str, str] = {
    "Skylake-Client-v1": "-pcid,-x2apic,-tsc-deadline,-hle,-rtm,-invpcid,-rdseed,"
                         "-3dnowprefetch,-xsavec",
    "EPYC-v1": "-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,"
               "-nrip-save,-xsavec",
}


def tcg_cpu(model: str) -> str:
    """``model`` with the features TCG lacks switched off, if it is a model listed above."""
    off = TCG_UNSUPPORTED.get(model)
    return f"{model},{off}" if off else model


_ARCHES: dict[str, Arch] = {
    "ppc64le": Arch("ppc64le", "qemu-system-ppc64", "qemu-system-ppc", "pseries,x-vof=on",
                    "power9", "hvc0", "powerpc64le", "powerpc64le-linux-gnu-gcc",
                    "gcc-powerpc64le-linux-gnu", "libc6-dev-ppc64el-cross",
                    0xC000000000000000, True, ("-vga", "none"),
                    (("CONFIG_PPC_PSERIES", "the pseries platform"),
                     ("CONFIG_HVC_CONSOLE", "the hvc0 console"))),
    "aarch64": Arch("aarch64", "qemu-system-aarch64", "qemu-system-arm", "virt",
                    "max,pauth-impdef=on", "ttyAMA0", "aarch64", "aarch64-linux-gnu-gcc",
                    "gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross", 0xFFFF000000000000,
                    True, (),
                    (("CONFIG_SERIAL_AMBA_PL011_CONSOLE", "the ttyAMA0 console"),)),
    "x86_64": Arch("x86_64", "qemu-system-x86_64", "qemu-system-x86", "q35",
                   tcg_cpu("Skylake-Client-v1"), "ttyS0", "x86_64",
                   "x86_64-linux-gnu-gcc", "gcc-x86-64-linux-gnu", "libc6-dev-amd64-cross",
                   0xFFFF800000000000, False, (),
                   (("CONFIG_SERIAL_8250_CONSOLE", "the ttyS0 console"),)),
}
assert tuple(_ARCHES) == ARCHES


def arch(name: str) -> Arch:
    """The arch called ``name``; UserError (one line, the valid names) for any other."""
    return _ARCHES[check_arch(name)]


# The kernel's own command line, before what the user adds.  The guest's results are
# read from the console, and a kernel message printed in the middle of one would garble
# it: `quiet loglevel=1` lets only emergencies (a panic) through.  `panic=-1` turns a
# panic into an immediate reboot, which -no-reboot turns into QEMU's exit (not a hang).
BASE_APPEND = "quiet loglevel=1 panic=-1"


@dataclass(frozen=True)
class Guest:
    """One guest boot: the machine, the kernel, its command line and the mode."""

    arch: Arch
    kernel: Path
    append: str = ""                    # added to "console=DEV quiet"
    cpu: str | None = None              # None: the arch's default model
    machine_opts: tuple[str, ...] = ()  # "key=value" added to -M
    mode: str = "counting"
    smp: int | None = None              # None: 1 when counting, 2 for correctness
    memory: str = "1G"
    extra: tuple[str, ...] = field(default=())   # further QEMU options (tests)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"unknown lab mode {self.mode!r}; valid: {', '.join(MODES)}")
        for opt in self.machine_opts:
            key, eq, value = opt.partition("=")
            if not key or not eq or not value or "," in opt or any(c.isspace() for c in opt):
                raise UserError(f"machine option {opt!r} is not KEY=VALUE "
                                f"(e.g. cap-cfpc=broken; see {self.arch.qemu} -M "
                                f"{self.arch.machine.split(',')[0]},help)")
        if self.smp is not None and self.smp < 1:
            raise UserError(f"-smp {self.smp}: a guest needs at least one vCPU")
        if self.mode == "counting" and self.smp not in (None, 1):
            raise UserError("counting mode runs one vCPU (QEMU refuses icount with "
                            "multi-threaded TCG)")
        if "\n" in self.append or "\0" in self.append:
            raise UserError("the kernel command line must be one line")

    @property
    def cpu_model(self) -> str:
        return tcg_cpu(self.cpu) if self.cpu else self.arch.cpu

    @property
    def machine(self) -> str:
        return ",".join((self.arch.machine, *self.machine_opts))

    @property
    def vcpus(self) -> int:
        if self.smp is not None:
            return self.smp
        return 1 if self.mode == "counting" else CORRECTNESS_SMP

    def cmdline(self) -> str:
        """The kernel command line: the console, quiet, then what the user added."""
        extra = " ".join(self.append.split())   # one space between words: it is guest state
        return f"console={self.arch.console} {BASE_APPEND}" + (f" {extra}" if extra else "")

    def _machine_argv(self) -> list[str]:
        return [self.arch.qemu, "-M", self.machine, "-cpu", self.cpu_model, *self.arch.extra,
                "-m", self.memory, "-smp", str(self.vcpus)]

    def _mode_argv(self) -> list[str]:
        return [*(COUNTING_ARGS if self.mode == "counting" else CORRECTNESS_ARGS), *self.extra]

    def argv(self, initrd: Path) -> list[str]:
        """The QEMU command line that boots this guest with ``initrd``."""
        return [*self._machine_argv(), "-nographic", "-no-reboot",
                "-nic", "none",   # no network in the guest (q35 and virt would add one)
                "-kernel", str(self.kernel), "-initrd", str(initrd), "-append", self.cmdline(),
                *self._mode_argv()]

    def check_argv(self) -> list[str]:
        """A QEMU command line that sets this guest's machine up without a kernel, paused
        (-S), its monitor on standard input: QEMU checks the machine, its options and the
        CPU model as for a boot, and ends at the monitor's ``quit``."""
        return [*self._machine_argv(), "-display", "none", "-serial", "none", "-nic", "none",
                "-S", "-monitor", "stdio", *self._mode_argv()]
