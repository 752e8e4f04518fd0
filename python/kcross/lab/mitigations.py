"""What ``kcross lab ARCH --mitigations`` boots: per arch, baselines and their variants.

Data only, no booting code.  A *baseline* is a CPU model (and machine options) on which
the kernel turns on a known set of mitigations; each *variant* switches one mitigation
or hardening option off (a kernel command-line switch, a machine option, a CPU model).
The lab boots the baseline and every variant in counting mode and reports what each
variant changes in instructions per syscall.

Each variant's ``expect`` is set where a measurement found that it changes nothing on
the getppid path, and says why (patched as same-length instructions, off the syscall
path, not mitigated on this model anyway...); an empty ``expect`` means it was measured
to change the path.  The comments give the getppid-inline figures first measured with
Debian's 6.1.0-50 kernels (6.1.176-1) under QEMU 7.2 TCG, ``-icount shift=0``, one
vCPU, command line ``console=DEV quiet panic=-1`` plus the variant, before the harness's
timed loops were built never unrolled and batches rounded to a multiple of 384
(docs/lab.md has the table as ``kcross lab ARCH --mitigations`` prints it now; the
figures moved by at most a few tenths, the deltas not).  Many mitigations are patched in
as same-length instruction runs and cost nothing in an instruction count while they cost
time on hardware: these figures are instructions, not time.

Configurations QEMU refuses or crashes on are not variants: :data:`REFUSED` lists them
with what QEMU said, so that nobody adds them back as results.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kcross.errors import UserError
from kcross.lab.machines import Guest, arch, tcg_cpu


@dataclass(frozen=True)
class Baseline:
    """A machine the variants are compared with."""

    name: str                       # e.g. "Skylake-Client" (unique within the arch)
    what: str                       # one line: what the kernel mitigates on it
    cpu: str | None                 # -cpu model (None: the arch's default model)
    machine_opts: tuple[str, ...]   # "key=value" added to -M
    append: str                     # added to the kernel command line


@dataclass(frozen=True)
class Variant:
    """One switch compared with its baseline."""

    name: str                       # e.g. "mitigations=off", "cap-cfpc=fixed"
    what: str                       # one line: what it switches
    append: str = ""                # added after the baseline's kernel command line
    cpu: str | None = None          # replaces the baseline's -cpu model
    machine_opts: tuple[str, ...] = ()   # added to (same key: replacing) the baseline's
    expect: str = ""                # measured to change nothing on the syscall path: why


# ---------------------------------------------------------------- x86_64

# TCG hides the speculation-control CPUID bits (no IBRS, no microcode for VERW), so the
# kernel picks its software mitigations.  Both models with mitigations=off: 323.
_X86_INTEL = Baseline(                                                          # 336
    "Skylake-Client",
    "Intel Skylake: page-table isolation, retpolines (which also cover BHI), ITS thunks, "
    "VERW on exit to user",
    tcg_cpu("Skylake-Client-v1"), (), "")

_X86_INTEL_VARIANTS = [
    Variant("mitigations=off", "every CPU-flaw mitigation off (the kernel's master switch)",
            append="mitigations=off"),                                          # -13
    Variant("pti=off", "no page-table isolation: no CR3 switch on entry and exit",
            append="pti=off"),                                                  # -8
    Variant("spectre_v2=off", "no retpolines (and so no ITS thunks either)",
            append="spectre_v2=off"),                                           # -4
    Variant("indirect_target_selection=off", "no ITS thunks: returns are not sent through "
            "a thunk in the upper half of a cache line",
            append="indirect_target_selection=off"),                            # -4
    Variant("spectre_bhi=off", "no branch-history clearing on syscall entry",
            append="spectre_bhi=off",                                           # 0
            expect="without eIBRS the kernel counts retpolines as the BHI mitigation "
                   "(spectre_v2 says 'BHI: Retpoline'): there is no clearing loop to remove"),
    Variant("mds+taa+mmio+rfds=off", "no VERW buffer clearing on exit to user (every flaw "
            "that asks for it off: mds=off alone leaves it on for MMIO stale data)",
            append="mds=off tsx_async_abort=off mmio_stale_data=off "
                   "reg_file_data_sampling=off"),                               # -1
    Variant("nospectre_v1", "no Spectre v1 barriers (swapgs fences, usercopy barriers)",
            append="nospectre_v1",                                              # 0
            expect="the swapgs fences are on interrupt and exception entry, not on the "
                   "SYSCALL path, and getppid copies nothing from user memory"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),                              # -14
]

_X86_AMD = Baseline(                                                            # 368
    "EPYC",
    "AMD Zen 1: SRSO safe RET and untrained returns (retbleed), retpolines, no page-table "
    "isolation",
    tcg_cpu("EPYC-v1"), (), "")

_X86_AMD_VARIANTS = [
    Variant("mitigations=off", "every CPU-flaw mitigation off (the kernel's master switch)",
            append="mitigations=off"),                                          # -45
    Variant("spectre_v2=off", "no retpolines or other indirect-branch hardening",
            append="spectre_v2=off",                                            # 0
            expect="the 64-bit getppid path has no indirect branch (the syscall table is "
                   "dispatched by a switch); the int $0x80 path does (-5)"),
    Variant("retbleed=off", "no retbleed mitigation (untrained return thunk)",
            append="retbleed=off",                                              # 0
            expect="SRSO's safe RET keeps the same return thunk and entry untraining: "
                   "only retbleed+srso=off removes them"),
    Variant("spec_rstack_overflow=off", "no SRSO mitigation: back to retbleed's "
            "untrained return thunk", append="spec_rstack_overflow=off"),      # -27
    Variant("retbleed+srso=off", "neither return mitigation: no untraining on entry, "
            "plain RET", append="retbleed=off spec_rstack_overflow=off"),     # -45
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),                              # -14
]

# ---------------------------------------------------------------- aarch64

# QEMU's virt board offers no firmware workaround calls (SMCCC_ARCH_WORKAROUND_1/2): a
# model that needs them reports spectre_v2 (and store bypass) "Vulnerable".  KASLR is on
# (QEMU passes a seed) and forces KPTI on every model without E0PD; `meltdown` still says
# "Not affected" then, so only the counts show KPTI.
_A64_A72 = Baseline(                                                            # 496.7
    "cortex-a72",
    "Cortex-A72: no E0PD, so KASLR forces KPTI (trampoline vectors, TTBR switch); the "
    "store-bypass check stays on entry and exit",
    "cortex-a72", (), "")

_A64_A72_VARIANTS = [
    Variant("nokaslr", "no kernel address randomisation, so KPTI is not forced",
            append="nokaslr"),                                                  # -42.9
    Variant("kpti=0", "page-table isolation off (KASLR stays)",
            append="kpti=0"),                                                   # -42.9
    Variant("mitigations=off", "CPU-flaw mitigations off (KPTI forced by KASLR stays)",
            append="mitigations=off"),                                          # -11.1
    Variant("ssbd=force-off", "store-bypass mitigation never on: the per-CPU check for a "
            "firmware call leaves entry and exit", append="ssbd=force-off"),    # -11.1
    Variant("nospectre_bhb", "no branch-history mitigation on kernel entry",
            append="nospectre_bhb",                                             # 0
            expect="spectre_v2 is Vulnerable here (no firmware call) and the kernel does "
                   "not mitigate branch history alone"),
    Variant("nospectre_v2", "no Spectre v2 branch-predictor hardening",
            append="nospectre_v2",                                              # 0
            expect="spectre_v2 is Vulnerable either way: the A72's mitigation is a firmware "
                   "call QEMU's virt board does not offer"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),                              # -130.7
]

_A64_N1 = Baseline(                                                             # 561.0
    "neoverse-n1",
    "Neoverse-N1: branch-history (Spectre-BHB) loop on kernel entry, KPTI forced by KASLR",
    "neoverse-n1", (), "")

_A64_N1_VARIANTS = [
    Variant("kpti=0", "page-table isolation off (the BHB loop moves to the normal vectors)",
            append="kpti=0"),                                                   # -34.7
    Variant("nospectre_bhb", "no branch-history loop on kernel entry",
            append="nospectre_bhb"),                                            # -75.5
    Variant("mitigations=off", "CPU-flaw mitigations off (KPTI forced by KASLR stays)",
            append="mitigations=off"),                                          # -75.5
]

_A64_MAX = Baseline(                                                            # 442.3
    "max",
    "QEMU max: E0PD (no KPTI), CSV2, SSBS, kernel pointer authentication",
    None, (), "")   # the arch's default model (machines.py): max,pauth-impdef=on

_A64_MAX_VARIANTS = [
    # +7.5, not less: without the capability the entry/exit pointer-authentication blocks
    # are patched to as many NOPs, all executed, where with it a test branches over part of
    # them (the likely reason; not traced instruction by instruction).
    Variant("arm64.nopauth", "no pointer authentication: no key switch on kernel entry "
            "and exit", append="arm64.nopauth"),                                # +7.5
    Variant("mitigations=off", "CPU-flaw mitigations off",
            append="mitigations=off",                                           # 0
            expect="CSV2, E0PD and SSBS in the model leave nothing for a software "
                   "mitigation to do on the syscall path"),
    Variant("ssbd=force-off", "store-bypass mitigation never on",
            append="ssbd=force-off",                                            # 0
            expect="with SSBS the mitigation is a PSTATE bit set per task, not a check on "
                   "entry and exit (cortex-a72, without SSBS, saves 11)"),
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),                              # -130.2
]

# ---------------------------------------------------------------- ppc64le

# QEMU 7.2's pseries defaults are cap-cfpc=workaround, cap-sbbc=workaround,
# cap-ibs=workaround, cap-ccf-assist=on: the hypervisor reports every flaw with its
# instruction workaround available (under TCG it warns "TCG doesn't support requested
# feature" for each and boots).  The L1D flushes, store-forwarding barrier and
# barrier_nospec are patched as same-length slots (nops when off), so switching one off
# alone costs nothing here; the 3 instructions that mitigations=off saves are the exit
# path that clears MSR[RI] (interrupt_exit_not_reentrant), kept while the rfi flush
# (fallback type) or the store-forwarding barrier is patched in.
_PPC_P9 = Baseline(                                                             # 400.7
    "power9",
    "POWER9 pseries with QEMU's default capabilities: L1D flush (ori/mttrig) on exit, "
    "eieio store-forwarding barrier, ori31 barrier_nospec, count-cache flush assist",
    "power9", (), "")

_SAME_LENGTH = "patched as a same-length slot (nops when off)"
_CONTEXT_SWITCH = ("the count-cache and link-stack flushes run on context switch, not on "
                   "the syscall path")

_PPC_VARIANTS = [
    Variant("cap-cfpc=broken", "hypervisor reports no L1D flush instruction: the guest "
            "falls back to a displacement flush", machine_opts=("cap-cfpc=broken",)),  # +676.0
    Variant("cap-cfpc=fixed", "hypervisor reports no L1D flush needed on privilege change",
            machine_opts=("cap-cfpc=fixed",)),                                  # -3
    Variant("cap-sbbc=fixed", "hypervisor reports bounds-check speculation fixed",
            machine_opts=("cap-sbbc=fixed",),                                   # 0
            expect=f"barrier_nospec is {_SAME_LENGTH}; spectre_v1 becomes Not affected"),
    Variant("cap-ibs=broken", "hypervisor reports indirect-branch speculation unmitigated",
            machine_opts=("cap-ibs=broken",), expect=_CONTEXT_SWITCH),          # 0
    Variant("cap-ibs=fixed-ccd", "hypervisor reports the count cache disabled",
            machine_opts=("cap-ibs=fixed-ccd",), expect=_CONTEXT_SWITCH),       # 0
    Variant("cap-ccf-assist=off", "no count-cache flush assist: the guest flushes in software",
            machine_opts=("cap-ccf-assist=off",), expect=_CONTEXT_SWITCH),      # 0
    Variant("no_rfi_flush", "no L1D flush on return to user",
            append="no_rfi_flush",                                              # 0
            expect=f"the exit flush is {_SAME_LENGTH}; the exit keeps clearing MSR[RI] "
                   "while the store-forwarding barrier is patched in"),
    Variant("no_entry_flush", "no L1D flush on kernel entry",
            append="no_entry_flush", expect=f"the entry flush is {_SAME_LENGTH}"),  # 0
    Variant("no_uaccess_flush", "no L1D flush after user access",
            append="no_uaccess_flush",                                          # 0
            expect="getppid does not access user memory (and the flush is a same-length "
                   "slot)"),
    Variant("no_stf_barrier", "no store-forwarding barrier on kernel entry/exit",
            append="no_stf_barrier",                                            # 0
            expect=f"the barrier is {_SAME_LENGTH}; the exit keeps clearing MSR[RI] while "
                   "the rfi flush is patched in"),
    Variant("no_rfi_flush+no_stf_barrier", "neither the exit L1D flush nor the "
            "store-forwarding barrier: the exit no longer clears MSR[RI]",
            append="no_rfi_flush no_stf_barrier"),                              # -3
    Variant("nospectre_v1", "no barrier_nospec after bounds checks",
            append="nospectre_v1",                                              # 0
            expect=f"barrier_nospec is {_SAME_LENGTH}; the syscall number is bounded by "
                   "masking, which stays"),
    Variant("nospectre_v2", "no count-cache flush / link-stack flush",
            append="nospectre_v2", expect=_CONTEXT_SWITCH),                     # 0
    Variant("mitigations=off", "every CPU-flaw mitigation off",
            append="mitigations=off"),                                          # -3
    Variant("randomize_kstack_offset=off", "no per-syscall random kernel stack offset",
            append="randomize_kstack_offset=off"),                              # -15
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
    ("ppc64le",
     Variant("cap-ibs=fixed-na", "hypervisor reports indirect-branch speculation not affected",
             machine_opts=("cap-ibs=fixed-na",)),
     "QEMU 7.2 aborts (exit 134) at the guest's first H_GET_CPU_CHARACTERISTICS: "
     "spapr_hcall.c: Assertion `safe_indirect_branch == SPAPR_CAP_BROKEN' failed"),
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


def counting_guest(arch_name: str, kernel: Path, baseline: Baseline,
                   variant: Variant | None = None) -> tuple[Guest, str]:
    """The counting guest of ``baseline`` (with ``variant`` booted on it), and its label
    ("BASELINE" or "BASELINE + VARIANT"): kcross lab --mitigations, with or without
    --profile."""
    cpu, machine_opts, append = ((baseline.cpu, baseline.machine_opts, baseline.append)
                                 if variant is None
                                 else variant_args(arch_name, baseline, variant))
    guest = Guest(arch(arch_name), kernel, mode="counting", cpu=cpu,
                  machine_opts=tuple(machine_opts), append=append)
    return guest, baseline.name if variant is None else f"{baseline.name} + {variant.name}"
