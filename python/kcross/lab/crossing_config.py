"""The kernel configuration options that touch a crossing, each with why: ONE list (issue 23).

When a lab row changes between two kernels, the options of this list whose values differ
between the two kernels' configurations are part of its explanation (kcross.lab.explain):
an option that adds work to the syscall entry or exit, to a user access, to a context
switch, or to the vDSO's clock read.  Each entry names the option (with its earlier names:
an option renamed between kernels is one entry, the rename no difference), the arches it
exists on, and the reason in a line, written from the option's Kconfig help and the entry
code it builds; every name was checked against Debian's configurations (bookworm's 6.1 for
amd64, arm64 and ppc64el, trixie's 6.12 for amd64 and arm64: python/tests/data/
debian-crossing-config.txt).  An entry that no Debian configuration names says why
(``absent``); the crossing's costs that no option chooses are in :data:`NO_OPTION`.

A value is what the configuration file says: ``y``, ``m``, a string or number, ``n`` for
"is not set", and None where the file does not name the option (the kernel has no such
option, or its dependencies are off).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

X86, ARM64, POWER = ("x86_64",), ("aarch64",), ("ppc64le",)

# ---------------------------------------------------------------- the list


@dataclass(frozen=True)
class CrossingOption:
    """A kernel option that touches a crossing, and why."""

    names: tuple[str, ...]       # CONFIG_ names, newest first (a rename stays one option)
    reason: str                  # what it adds to or takes from a crossing
    arches: tuple[str, ...] = ()     # the arches it exists on; (): every arch
    absent: str = ""             # why no Debian configuration names it (else "")

    @property
    def name(self) -> str:
        return self.names[0]


def _o(names: str, reason: str, arches: tuple[str, ...] = (), absent: str = "") -> CrossingOption:
    return CrossingOption(tuple(f"CONFIG_{n}" for n in names.split()), reason, arches, absent)


_VERW = "the CPU's buffers cleared by VERW on every exit to user space, on affected CPUs"

OPTIONS: tuple[CrossingOption, ...] = (
    # -- every arch: the entry and exit work
    _o("RANDOMIZE_KSTACK_OFFSET", "kernel-stack offset randomisation: every syscall entry "
       "moves the stack by a random offset, refilled from the random-number generator "
       "(get_random_u16, the ChaCha batch it amortises)"),
    _o("RANDOMIZE_KSTACK_OFFSET_DEFAULT", "that randomisation on without "
       "randomize_kstack_offset= on the command line (a static branch at every syscall entry)"),
    _o("CPU_MITIGATIONS SPECULATION_MITIGATIONS", "the CPU-vulnerability mitigations built "
       "in at all (x86's SPECULATION_MITIGATIONS before 6.9)"),
    _o("GENERIC_ENTRY", "the common entry code (kernel/entry/common.c: "
       "syscall_enter_from_user_mode, exit_to_user_mode_loop) in place of the arch's own"),
    _o("RSEQ", "restartable sequences: the exit to user space updates a registered rseq "
       "area (the CPU number after a migration, an abort after a preemption)"),
    _o("DEBUG_RSEQ", "the rseq area checked at every syscall return: work on every "
       "crossing of a task that registered one"),
    _o("SCHED_MM_CID", "the per-process concurrency ID rseq publishes (mm_cid): kept at "
       "context switch and on the exit to user space (6.3 and later)"),
    _o("AUDITSYSCALL", "syscall auditing: the entry and exit work tests the task's audit "
       "context (a flag test unless a rule applies)"),
    _o("AUDIT", "the audit subsystem AUDITSYSCALL needs"),
    _o("SECCOMP", "seccomp: the entry work tests the task's seccomp flag"),
    _o("SECCOMP_FILTER", "seccomp's BPF filters, run at every syscall of a filtered task"),
    _o("CONTEXT_TRACKING_USER", "context tracking of the user/kernel boundary (for "
       "NO_HZ_FULL and RCU): calls at entry and exit, behind a static key off unless a CPU "
       "is nohz_full"),
    _o("CONTEXT_TRACKING_USER_FORCE", "context tracking forced on every CPU (a debugging "
       "option): its calls run on every crossing"),
    _o("NO_HZ_FULL", "full dynticks: a CPU with one task may stop its tick, at the price of "
       "context tracking on every crossing of such a CPU"),
    _o("VIRT_CPU_ACCOUNTING_GEN", "user and system time accounted at each crossing of a "
       "nohz_full CPU instead of sampled at the tick"),
    _o("IRQ_TIME_ACCOUNTING", "interrupt time accounted apart: a clock read at every "
       "interrupt's entry and exit"),
    _o("HZ", "the tick's frequency: how often the timer interrupts a batch (every 4 ms at "
       "250), and so the timer's share of a figure"),
    _o("PREEMPT_NONE", "the preemption model: no preemption in the kernel, reschedule only "
       "on the exit to user space and at explicit points"),
    _o("PREEMPT_VOLUNTARY", "the preemption model: voluntary reschedule points "
       "(might_resched in might_sleep) on the kernel's paths"),
    _o("PREEMPT", "the preemption model: a preemptible kernel, a preempt count kept on "
       "every lock, RCU read section and interrupt exit"),
    _o("PREEMPT_DYNAMIC", "the preemption model chosen at boot (preempt=): static calls "
       "and keys at the reschedule points"),
    _o("PREEMPT_LAZY", "the lazy preemption model (6.13 and later): a second "
       "need-resched flag tested on the exit paths", absent="added in 6.13: neither "
       "bookworm's 6.1 nor trixie's 6.12 has it"),
    _o("PREEMPT_RT", "the real-time preemption model: sleeping spinlocks, threaded "
       "interrupts, the exit paths' work changed throughout"),
    _o("FUNCTION_TRACER", "the tracer's patchable call at the start of every kernel "
       "function, a nop (ppc64: two) when tracing is off: instructions per function called"),
    _o("FTRACE_SYSCALLS", "the syscall tracepoints at entry and exit (a static branch each "
       "when no tracer is attached)"),
    _o("STACKPROTECTOR", "stack canaries: a load, store and check in the functions that "
       "have arrays on their stack"),
    _o("STACKPROTECTOR_STRONG", "stack canaries in more functions (any local array or "
       "address-taken local)"),
    _o("INIT_STACK_ALL_ZERO", "every automatic variable zeroed at function entry: stores on "
       "the path's stack frames"),
    _o("INIT_STACK_ALL_PATTERN", "every automatic variable filled with a pattern at function "
       "entry"),
    _o("INIT_ON_ALLOC_DEFAULT_ON", "memory zeroed when allocated (the file, dentry and "
       "buffer allocations of open, pipe and the like)"),
    _o("INIT_ON_FREE_DEFAULT_ON", "memory zeroed when freed (close, the end of a pipe)"),
    _o("ZERO_CALL_USED_REGS", "the call-used registers zeroed at every function return"),
    _o("HARDENED_USERCOPY", "every copy to or from user space checked against its object's "
       "bounds (read, write, stat, open copy their arguments and results)"),
    _o("FORTIFY_SOURCE", "bounds checks in the kernel's string and memory functions"),
    _o("KASAN", "every memory access instrumented (address sanitizer): far more "
       "instructions on every path"),
    _o("KCSAN", "every memory access instrumented for data races"),
    _o("KMSAN", "every memory access instrumented for uninitialised values (x86, Clang "
       "only)", arches=X86, absent="Clang-only: Debian builds with GCC, so its "
       "configurations never name it"),
    _o("UBSAN", "checks of undefined behaviour in the kernel's arithmetic and accesses"),
    _o("KCOV", "a coverage callback at every basic block of the instrumented code"),
    _o("PROVE_LOCKING", "lock dependency checking, with the interrupt state traced at "
       "every entry and exit"),
    _o("DEBUG_PREEMPT", "checks of the preempt count in the per-CPU accessors"),
    _o("DEBUG_LIST", "every list insertion and deletion checked (the wait queues of pipe, "
       "futex, yield)"),
    _o("LIST_HARDENED", "list integrity checks inline on the list operations (6.6 and "
       "later)"),
    _o("SCHEDSTATS", "scheduler statistics at every context switch (behind a static key, "
       "off unless enabled)"),
    _o("TASK_DELAY_ACCT", "per-task delay accounting: clock reads around the scheduler's "
       "waits"),
    _o("PSI", "pressure stall information: psi_task_switch at every context switch"),
    _o("SCHED_CORE", "core scheduling: a check of the core's cookie at every pick of the "
       "next task"),
    _o("TIME_NS", "time namespaces: the vDSO's clock read checks for a namespace's page"),
    _o("LSM", "the security modules stacked and their order: their hooks run on open, stat, "
       "read and write (security_file_open...)"),
    _o("RANDOMIZE_BASE", "KASLR; on arm64 CPUs without E0PD it forces page-table isolation "
       "(KPTI) on", arches=X86 + ARM64),
    # -- x86-64
    _o("MITIGATION_PAGE_TABLE_ISOLATION PAGE_TABLE_ISOLATION", "page-table isolation "
       "(Meltdown): CR3 switched at every entry and exit", X86),
    _o("MITIGATION_RETPOLINE RETPOLINE", "indirect calls and jumps through retpoline "
       "thunks (Spectre v2)", X86),
    _o("MITIGATION_RETHUNK RETHUNK", "every return through a return thunk (retbleed, SRSO, "
       "ITS patch theirs in at boot)", X86),
    _o("MITIGATION_UNRET_ENTRY CPU_UNRET_ENTRY", "AMD's untrained return at kernel entry "
       "(retbleed)", X86),
    _o("MITIGATION_IBPB_ENTRY CPU_IBPB_ENTRY", "an indirect-branch predictor barrier at "
       "kernel entry (retbleed=ibpb, SRSO's IBPB)", X86),
    _o("MITIGATION_IBRS_ENTRY CPU_IBRS_ENTRY", "IBRS written at every entry and exit (an "
       "MSR write each way, on Skylake-class retbleed)", X86),
    _o("MITIGATION_SRSO CPU_SRSO", "AMD's speculative return stack overflow: the safe-RET "
       "return thunk", X86),
    _o("MITIGATION_SLS SLS", "straight-line speculation: an int3 after every return and "
       "indirect jump (never executed: it moves code, not counts)", X86),
    _o("MITIGATION_CALL_DEPTH_TRACKING CALL_DEPTH_TRACKING", "call-depth tracking "
       "(retbleed on Skylake): an accounting thunk on every call and return (6.2 and "
       "later)", X86),
    _o("MITIGATION_SPECTRE_BHI", "branch-history clearing (clear_bhb_loop) at syscall "
       "entry, on affected Intel CPUs", X86),
    _o("MITIGATION_MDS", _VERW + " (MDS; 6.9's switch for what earlier kernels always "
       "built)", X86),
    _o("MITIGATION_TAA", _VERW + " (TSX async abort)", X86),
    _o("MITIGATION_MMIO_STALE_DATA", _VERW + " (MMIO stale data)", X86),
    _o("MITIGATION_RFDS", _VERW + " (register file data sampling)", X86),
    _o("MITIGATION_TSA", _VERW + " (AMD's transient scheduler attacks)", X86),
    _o("MITIGATION_ITS", "indirect branches and returns through the ITS thunks, on "
       "affected Intel CPUs", X86),
    _o("MITIGATION_SPECTRE_V1", "Spectre v1: fences after SWAPGS at entry and "
       "array-index masking (6.9's switch for what earlier kernels always built)", X86),
    _o("MITIGATION_SPECTRE_V2", "Spectre v2: retpolines, eIBRS, the return-stack refill "
       "at context switch (6.9's switch)", X86),
    _o("MITIGATION_RETBLEED", "retbleed: untrained return, IBPB or call-depth tracking "
       "(6.9's switch)", X86),
    _o("MITIGATION_SSB", "speculative store bypass disabled per task (an MSR write at "
       "context switch of a task that asked for it; 6.9's switch)", X86),
    _o("MITIGATION_VMSCAPE", "an IBPB before the exit to a virtual machine monitor's user "
       "space (not on a plain syscall)", X86),
    _o("X86_KERNEL_IBT", "indirect branch tracking: an endbr64 at every indirect-call "
       "target (the syscall table's handlers among them)", X86),
    _o("X86_USER_SHADOW_STACK", "user shadow stacks: their state is part of the FPU state "
       "saved and restored at context switch", X86),
    _o("X86_INTEL_MEMORY_PROTECTION_KEYS", "protection keys: PKRU switched at context "
       "switch and restored on the exit to user space", X86),
    _o("X86_FRED", "flexible return and event delivery: another entry and exit (ERETU) in "
       "place of syscall/sysret, on CPUs that have it (6.9 and later)", X86),
    _o("X86_X32_ABI", "the x32 ABI: the 64-bit syscall path tries x32's table for numbers "
       "with bit 30 set", X86),
    _o("X86_SMAP", "supervisor mode access prevention: stac/clac around every user "
       "access", X86, absent="not an option in 6.1 and later: SMAP support is built in "
       "unconditionally (stac and clac run on CPUs that have SMAP)"),
    # -- arm64
    _o("UNMAP_KERNEL_AT_EL0", "KPTI: the kernel unmapped at EL0, entered and left through "
       "the trampoline vectors (a TTBR switch each way), where the CPU needs it or KASLR "
       "forces it", ARM64),
    _o("MITIGATE_SPECTRE_BRANCH_HISTORY", "Spectre-BHB: the branch-history loop or "
       "clearing instruction in the vectors, on affected CPUs", ARM64),
    _o("ARM64_PAN", "privileged access never: PSTATE.PAN toggled around every user access",
       ARM64),
    _o("ARM64_SW_TTBR0_PAN", "PAN emulated by switching TTBR0 around every user access, on "
       "CPUs without PAN", ARM64),
    _o("ARM64_UAO", "user access override for the kernel's user accesses", ARM64,
       absent="removed in 5.11 (set_fs() gone, user accesses use the unprivileged "
       "loads and stores)"),
    _o("ARM64_E0PD", "E0PD: KASLR without KPTI on CPUs that have it", ARM64),
    _o("ARM64_SVE", "SVE: a syscall discards the SVE state beyond FP/SIMD "
       "(sve_user_discard), a context switch saves and restores it for tasks that used it",
       ARM64),
    _o("ARM64_SME", "SME: its state (ZA, streaming mode) saved, restored and discarded with "
       "the FP/SIMD state", ARM64, absent="marked BROKEN upstream in 2024 and in the stable "
       "kernels from 5.19 on: Debian's 6.1 and 6.12 configurations do not name it"),
    _o("ARM64_PTR_AUTH", "pointer authentication: the user's keys restored on the exit to "
       "user space", ARM64),
    _o("ARM64_PTR_AUTH_KERNEL", "the kernel's own return addresses signed (paciasp and "
       "autiasp in every non-leaf function), its keys switched at entry and exit", ARM64),
    _o("ARM64_MTE", "memory tagging: the tag-check fault state checked at entry and exit, "
       "the task's tag settings switched at context switch", ARM64),
    _o("ARM64_PSEUDO_NMI", "interrupts masked through the GIC's priority register (a "
       "system-register write at every mask and unmask on the entry paths)", ARM64),
    _o("SHADOW_CALL_STACK", "the shadow call stack (x18) in every non-leaf function, "
       "switched at entry", ARM64),
    # -- POWER
    _o("PPC_KUAP", "kernel userspace access protection: the AMR written at every entry and "
       "exit and around every user access (mtspr AMR)", POWER),
    _o("PPC_KUEP", "kernel userspace execution prevention (the IAMR on hash)", POWER),
    _o("PPC_KUAP_DEBUG", "checks of the AMR's state at entry and exit", POWER),
    _o("PPC_BARRIER_NOSPEC", "the speculation barrier (ori 31,31,0) patched into the "
       "syscall entry and the user-access paths", POWER),
    _o("PPC_RFI_SRR_DEBUG", "checks that SRR0/1 still hold the saved registers before each "
       "return from interrupt", POWER),
    _o("PPC_IRQ_SOFT_MASK_DEBUG", "checks of the soft interrupt mask at every entry and exit",
       POWER),
    _o("PPC_TRANSACTIONAL_MEM", "transactional memory: its state checked and reclaimed at "
       "entry and context switch", POWER),
    _o("PPC_MEM_KEYS", "memory protection keys: the user's AMR and IAMR saved and restored "
       "at every entry and exit", POWER),
    _o("ALTIVEC", "the Altivec state saved and restored at context switch for tasks that "
       "used it (restore_math on the exit to user space)", POWER),
    _o("VSX", "the VSX state saved and restored at context switch for tasks that used it",
       POWER),
)

# What a crossing costs that no option of the kernel chooses: said, so that its absence
# from a configuration's differences is not read as "nothing there".
NO_OPTION: tuple[tuple[str, str], ...] = (
    ("POWER's L1D flushes (rfi, entry and uaccess flush)", "patched in at boot from what the "
     "hypervisor reports (pseries cap-cfpc); kcross lab --mitigations varies them"),
    ("x86's FPU state", "switched lazily on the exit to user space (TIF_NEED_FPU_LOAD) in "
     "every configuration; X86_USER_SHADOW_STACK and protection keys add to that state"),
    ("arm64's speculative store bypass safe (SSBD)", "built in since 5.10 (ARM64_SSBD "
     "removed): the firmware call at entry and exit is chosen at boot (ssbd=)"),
)


# ---------------------------------------------------------------- two configurations


def states(text: str) -> dict[str, str]:
    """A configuration file's options: ``CONFIG_X=value`` as value, "# CONFIG_X is not
    set" as ``n``."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("# CONFIG_") and line.endswith(" is not set"):
            found[line[2:-len(" is not set")]] = "n"
            continue
        name, eq, value = line.partition("=")
        if eq and name.startswith("CONFIG_"):
            found[name] = value
    return found


def value(option: CrossingOption, config: Mapping[str, str]) -> tuple[str, str | None]:
    """The option's value in ``config`` and the name it goes by there (its newest name when
    it names none)."""
    for name in option.names:
        if name in config:
            return name, config[name]
    return option.name, None


@dataclass(frozen=True)
class ConfigChange:
    """An option of the list whose value differs between the two configurations."""

    option: str              # the name it goes by (B's, else A's)
    a: str | None            # its value in A's configuration (None: not named there)
    b: str | None
    reason: str


def changes(a: Mapping[str, str], b: Mapping[str, str], arch: str) -> list[ConfigChange]:
    """The options of the list (of ``arch``) whose values differ between configurations
    ``a`` and ``b`` (:func:`states`), in the list's order."""
    found = []
    for option in OPTIONS:
        if option.arches and arch not in option.arches:
            continue
        name_a, va = value(option, a)
        name_b, vb = value(option, b)
        if va != vb:
            found.append(ConfigChange(name_b if vb is not None else name_a, va, vb,
                                      option.reason))
    return found


def others(a: Mapping[str, str], b: Mapping[str, str]) -> int:
    """How many options outside the list differ between the configurations."""
    listed = {n for o in OPTIONS for n in o.names}
    return sum(1 for n in set(a) | set(b) if n not in listed and a.get(n) != b.get(n))


def listed(arch: str) -> Sequence[CrossingOption]:
    """The options of the list that exist on ``arch``."""
    return [o for o in OPTIONS if not o.arches or arch in o.arches]
