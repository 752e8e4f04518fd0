"""What ``kcross lab ARCH --mitigations`` boots: per arch, baselines and their variants.

Data only, no booting code.  A *baseline* is a CPU model (and machine options) on which
the kernel turns on a known set of mitigations; each *variant* switches one mitigation
or hardening option off (a kernel command-line switch, a machine option, a CPU model).
The lab boots the baseline and every variant in counting mode and reports what the
variant changes in instructions per syscall.

Each variant's ``expect`` is set where a measurement found that the variant changes
nothing on the syscall path, and says why (patched in as same-length instructions, off
the syscall path, the emulated CPU is not affected...).  A variant with an empty
``expect`` was measured to change the syscall path.  The measurements (Debian 6.1 kernels,
QEMU 7.2, TCG, ``-icount shift=0``) are in docs/lab.md's mitigation tables.

Configurations QEMU refuses are not variants: they are listed in :data:`REFUSED` with
QEMU's reason, so that nobody adds them back as results.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcross.errors import UserError


@dataclass(frozen=True)
class Baseline:
    """A machine the variants are compared with."""

    name: str                       # e.g. "Skylake-Client" (unique within the arch)
    what: str                       # one line: what the kernel mitigates on it, and why
    cpu: str | None                 # -cpu model (None: the arch's default model)
    machine_opts: tuple[str, ...]   # "key=value" added to -M
    append: str                     # added to the kernel command line


@dataclass(frozen=True)
class Variant:
    """One switch compared with its baseline."""

    name: str                       # e.g. "mitigations=off", "cap-cfpc=fixed"
    what: str                       # one line: what it switches
    append: str = ""                # added to the baseline's kernel command line
    cpu: str | None = None          # replaces the baseline's -cpu model
    machine_opts: tuple[str, ...] = ()   # added to (or replacing same keys of) the baseline's
    expect: str = ""                # measured to change nothing on the syscall path: why


# ---------------------------------------------------------------- x86_64

# Features of these models that TCG cannot provide (QEMU 7.2 prints "TCG doesn't support
# requested feature" for each): switched off so the guest sees what it really gets.
_SKYLAKE_TCG_OFF = "-pcid,-x2apic,-tsc-deadline,-hle,-rtm,-invpcid,-rdseed,-3dnowprefetch,-xsavec"
_EPYC_TCG_OFF = ("-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext,"
                 "-nrip-save,-xsavec")

_X86_INTEL = Baseline(
    "Skylake-Client",
    "Intel Skylake: page-table isolation, retpolines, VERW buffer clearing, BHI loop, ITS",
    f"Skylake-Client-v1,{_SKYLAKE_TCG_OFF}", (), "")

_X86_AMD = Baseline(
    "EPYC",
    "AMD Zen 1: return untraining (retbleed) and SRSO, no page-table isolation",
    f"EPYC-v1,{_EPYC_TCG_OFF}", (), "")

_X86_COMMON = [
    Variant("mitigations=off", "every CPU-flaw mitigation off (the kernel's master switch)",
            append="mitigations=off"),
    Variant("spectre_v2=off", "no retpolines or other indirect-branch hardening",
            append="spectre_v2=off"),
    Variant("retbleed=off", "no return-stack mitigation (untrained returns / return thunks)",
            append="retbleed=off"),
    Variant("nospectre_v1", "no Spectre v1 barriers (swapgs fences, array index masking)",
            append="nospectre_v1"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),
]

_X86_INTEL_VARIANTS = [
    _X86_COMMON[0],
    Variant("pti=off", "no page-table isolation: no CR3 switch on entry and exit",
            append="pti=off"),
    _X86_COMMON[1],
    _X86_COMMON[2],
    Variant("spectre_bhi=off", "no branch-history clearing loop on syscall entry",
            append="spectre_bhi=off"),
    Variant("indirect_target_selection=off", "no ITS thunks for indirect branches and returns",
            append="indirect_target_selection=off"),
    Variant("mds=off", "MDS off alone: other flaws still ask for VERW on exit to user",
            append="mds=off"),
    Variant("mds+taa+mmio+rfds=off", "no VERW buffer clearing on exit to user (MDS, TAA, MMIO, RFDS all off)",
            append="mds=off tsx_async_abort=off mmio_stale_data=off reg_file_data_sampling=off"),
    _X86_COMMON[3],
    _X86_COMMON[4],
]

_X86_AMD_VARIANTS = [
    _X86_COMMON[0],
    _X86_COMMON[1],
    _X86_COMMON[2],
    Variant("spec_rstack_overflow=off", "no SRSO mitigation (safe RET / IBPB on entry)",
            append="spec_rstack_overflow=off"),
    _X86_COMMON[3],
    _X86_COMMON[4],
]

# ---------------------------------------------------------------- aarch64

_A64_A72 = Baseline(
    "cortex-a72",
    "Cortex-A72: no E0PD, so KASLR forces KPTI (kernel unmapped at EL0, trampoline vectors)",
    "cortex-a72", (), "")
_A64_N1 = Baseline(
    "neoverse-n1",
    "Neoverse-N1: branch-history (Spectre-BHB) loop on kernel entry, KPTI forced by KASLR",
    "neoverse-n1", (), "")
_A64_MAX = Baseline(
    "max",
    "QEMU max: E0PD (no KPTI), SSBS, pointer authentication of the kernel",
    "max,pauth-impdef=on", (), "")

_A64_A72_VARIANTS = [
    Variant("nokaslr", "no kernel address randomisation, so KPTI is not forced",
            append="nokaslr"),
    Variant("kpti=0", "page-table isolation off (KASLR stays)", append="kpti=0"),
    Variant("mitigations=off", "CPU-flaw mitigations off (does not undo KPTI forced by KASLR)",
            append="mitigations=off"),
    Variant("nospectre_bhb", "no branch-history mitigation on kernel entry",
            append="nospectre_bhb"),
    Variant("nospectre_v2", "no Spectre v2 branch-predictor hardening", append="nospectre_v2"),
    Variant("ssbd=force-off", "Speculative Store Bypass mitigation never on",
            append="ssbd=force-off"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),
]

_A64_N1_VARIANTS = [
    Variant("kpti=0", "page-table isolation off (KASLR stays)", append="kpti=0"),
    Variant("nospectre_bhb", "no branch-history loop on kernel entry", append="nospectre_bhb"),
    Variant("mitigations=off", "CPU-flaw mitigations off (does not undo KPTI forced by KASLR)",
            append="mitigations=off"),
]

_A64_MAX_VARIANTS = [
    Variant("arm64.nopauth", "no pointer authentication: no key switch on kernel entry/exit",
            append="arm64.nopauth"),
    Variant("mitigations=off", "CPU-flaw mitigations off", append="mitigations=off"),
    Variant("ssbd=force-off", "Speculative Store Bypass mitigation never on",
            append="ssbd=force-off"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),
]

# ---------------------------------------------------------------- ppc64le

_PPC_P9 = Baseline(
    "power9",
    "POWER9 pseries with QEMU's default capabilities: the hypervisor reports the flaws "
    "unfixed, the guest flushes L1D on kernel exit/entry/user access",
    "power9", (), "")

_PPC_VARIANTS = [
    Variant("cap-cfpc=broken", "hypervisor reports no L1D flush instruction: the guest falls "
            "back to a displacement flush", machine_opts=("cap-cfpc=broken",)),
    Variant("cap-cfpc=fixed", "hypervisor reports no L1D flush needed on privilege change",
            machine_opts=("cap-cfpc=fixed",)),
    Variant("cap-sbbc=fixed", "hypervisor reports bounds-check speculation fixed",
            machine_opts=("cap-sbbc=fixed",)),
    Variant("cap-ibs=broken", "hypervisor reports indirect-branch speculation unmitigated",
            machine_opts=("cap-ibs=broken",)),
    Variant("cap-ibs=fixed-ccd", "hypervisor reports the count cache disabled",
            machine_opts=("cap-ibs=fixed-ccd",)),
    Variant("cap-ccf-assist=off", "no count-cache flush assist: the guest flushes in software",
            machine_opts=("cap-ccf-assist=off",)),
    Variant("no_rfi_flush", "no L1D flush on return to user", append="no_rfi_flush"),
    Variant("no_entry_flush", "no L1D flush on kernel entry", append="no_entry_flush"),
    Variant("no_uaccess_flush", "no L1D flush after user access", append="no_uaccess_flush"),
    Variant("no_rfi+entry+uaccess_flush", "all three L1D flushes off (what cap-cfpc=fixed asks for)",
            append="no_rfi_flush no_entry_flush no_uaccess_flush"),
    Variant("no_stf_barrier", "no store-forwarding barrier on kernel entry/exit",
            append="no_stf_barrier"),
    Variant("nospectre_v1", "no barrier_nospec after bounds checks", append="nospectre_v1"),
    Variant("nospectre_v2", "no count-cache flush / link-stack flush", append="nospectre_v2"),
    Variant("mitigations=off", "every CPU-flaw mitigation off", append="mitigations=off"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),
]

TABLES: dict[str, list[tuple[Baseline, list[Variant]]]] = {
    "x86_64": [(_X86_INTEL, _X86_INTEL_VARIANTS), (_X86_AMD, _X86_AMD_VARIANTS)],
    "aarch64": [(_A64_A72, _A64_A72_VARIANTS), (_A64_N1, _A64_N1_VARIANTS),
                (_A64_MAX, _A64_MAX_VARIANTS)],
    "ppc64le": [(_PPC_P9, _PPC_VARIANTS)],
}

# Configurations QEMU 7.2 refuses or crashes on, with what QEMU said: not results, and
# not to be added back as variants.
REFUSED: list[tuple[str, Variant, str]] = [
]


def _opt_key(opt: str) -> str:
    return opt.partition("=")[0]


def variant_args(arch: str, baseline: Baseline,
                 variant: Variant) -> tuple[str | None, tuple[str, ...], str]:
    """(cpu, machine_opts, append) of ``variant`` booted on ``baseline``.

    The variant's CPU model replaces the baseline's; its machine options replace the
    baseline's options of the same key and add the others; its command line comes after
    the baseline's.
    """
    tables = TABLES.get(arch)
    if tables is None:
        raise UserError(f"no mitigation table for arch {arch!r} (known: {', '.join(TABLES)})")
    if not any(b == baseline for b, _ in tables):
        names = ", ".join(b.name for b, _ in tables)
        raise UserError(f"{baseline.name!r} is not one of the {arch} mitigation baselines "
                        f"({names})")
    cpu = variant.cpu if variant.cpu is not None else baseline.cpu
    keys = {_opt_key(o) for o in variant.machine_opts}
    opts = tuple(o for o in baseline.machine_opts if _opt_key(o) not in keys) + variant.machine_opts
    append = " ".join((baseline.append + " " + variant.append).split())
    return cpu, opts, append
