"""The published experiments, in one table: each published figure with its source, unit
and conditions, and the kcross benchmark (natively, or in which lab boot) whose figure is
set beside it.

Nothing here measures or prints.  A figure's *ours* names a benchmark of the harness's
registry (suite/name) and the measurement it comes from: the native run, or a lab boot
of a :data:`VARIANTS` entry (``default``: the arch's own machine; ``sc``: the ppc64le
guest with KCROSS_SYSCALL=sc; ``power8``: the ppc64le guest on a POWER8 model, where the
kernel offers no ``scv`` and glibc therefore calls ``sc``).  A benchmark that only one
arch has (``lsl``, a spin hint) names that arch.

Sources are named as issue 16 and /work/shared/reference/rseq-and-syscall-abi.md name
them; the figures are copied from there, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcross.errors import UserError
from kcross.lab.kernel import ARCHES as LAB_ARCHES  # the labs' arches: their one owner

NATIVE = "native"
DEFAULT = "default"


@dataclass(frozen=True)
class Variant:
    """One lab boot the experiments may need, beside the arch's default one."""

    name: str
    arch: str
    why: str                          # what it changes, and why that is the published side
    env: tuple[tuple[str, str], ...] = ()
    cpu: str | None = None            # a QEMU -cpu model (kcross.lab.machines' names)
    suites: tuple[str, ...] = ("syscall",)


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("sc", "ppc64le", "KCROSS_SYSCALL=sc: kcross's selected path forced to sc on "
            "POWER9 (the default boot selects scv 0, which the kernel offers)",
            env=(("KCROSS_SYSCALL", "sc"),)),
    Variant("power8", "ppc64le", "-cpu power8: the kernel offers no scv (AT_HWCAP2 lacks "
            "PPC_FEATURE2_SCV), so glibc 2.36 calls sc; on POWER9 it always calls scv 0 (its "
            "tunables cannot mask HWCAP2: glibc.cpu.hwcap_mask=0 and LD_HWCAP_MASK=0 left "
            "getppid() at scv's count)", cpu="power8"),
)}


@dataclass(frozen=True)
class Ours:
    """Where our figure for a published one comes from."""

    bench: str                        # suite/name
    variant: str = DEFAULT            # DEFAULT, or a VARIANTS name (lab only)
    arch: str | None = None           # only this arch has the benchmark (None: every arch)


@dataclass(frozen=True)
class Figure:
    """One published figure (or none: a row of ours with nothing published beside it)."""

    key: str                          # short and unique within its experiment
    label: str                        # what the figure is
    published: float | None
    ours: tuple[Ours, ...]            # the first one the measurement has is used
    note: str = ""                    # what differs for this row in particular
    unit: str | None = None           # the published figure's, when not the experiment's


@dataclass(frozen=True)
class Change:
    """Two figures of one experiment as a change, A -> B: published (the two published
    figures' ratio, or the change as published), and ours, judged by kcross.judge."""

    a: str                            # Figure keys
    b: str
    published: str | None = None      # as published, when it is published as a change


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    source: str                       # where the published figures come from
    unit: str                         # the published figures' unit
    conditions: str                   # the published machine, kernel, method
    differs: str                      # what differs from the published measurement
    figures: tuple[Figure, ...]
    native: bool                      # measured on this machine
    labs: tuple[str, ...]             # and in these labs (counting mode)
    changes: tuple[Change, ...] = ()
    ministat: tuple[str, ...] = ()    # Figure keys shown in ministat's format, as published
    profile: str | None = None        # Figure key of a kernel-instruction figure from --profile
    seconds: str = ""                 # what it takes here (docs/reproduce.md)
    # ours / published is printed: False where the published figure is of another kind
    # (a whole loop's seconds against our time per iteration)
    ratio: bool = True

    def figure(self, key: str) -> Figure:
        for f in self.figures:
            if f.key == key:
                return f
        raise KeyError(key)

    def variants(self, arch: str) -> tuple[str, ...]:
        """The lab boots of ``arch`` this experiment reads: DEFAULT first."""
        found = [DEFAULT] if arch in self.labs else []
        for f in self.figures:
            for o in f.ours:
                if o.variant != DEFAULT and VARIANTS[o.variant].arch == arch \
                        and o.variant not in found:
                    found.append(o.variant)
        return tuple(found)

    def benches(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o.bench for f in self.figures for o in f.ours))

    def needed_suites(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b.split("/", 1)[0] for b in self.benches()))


def _each_arch(per_arch: dict[str, str]) -> tuple[Ours, ...]:
    return tuple(Ours(bench, arch=arch) for arch, bench in per_arch.items())


SPIN_HINT = {"x86_64": "spin/hint-pause", "aarch64": "spin/hint-yield",
             "ppc64le": "spin/hint-or27"}
SPIN_SIBLING = {"x86_64": "spin/sibling-pause", "aarch64": "spin/sibling-yield",
                "ppc64le": "spin/sibling-or27"}

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        name="power-entry",
        title="POWER syscall entry: sc against scv 0 per getppid",
        source="the POWER talk this project started from (issue 16): the 64-bit syscall "
               "entry/exit rework, 482 -> 346 cycles per getppid; its getppid trace, 151 "
               "kernel instructions",
        unit="cycles",
        conditions="POWER9 hardware; the kernel before and after the entry/exit rework",
        differs="ours are instructions (QEMU TCG, -icount), not cycles, on Debian's 6.1 "
                "kernel, which has the rework: the nearest change this lab can make is sc "
                "against scv 0 on one kernel (getppid-inline, getppid-inline-alt)",
        figures=(
            Figure("sc", "getppid: before the rework (published) / by sc (ours)", 482.0,
                   (Ours("syscall/getppid-inline"),)),
            Figure("scv", "getppid: after the rework (published) / by scv 0 (ours)", 346.0,
                   (Ours("syscall/getppid-inline-alt"),)),
            Figure("kernel", "kernel instructions per getppid by sc (the talk's trace)", 151.0,
                   (Ours("syscall/getppid-inline"),), unit="instructions",
                   note="ours come from the lab profile"),
        ),
        native=False, labs=("ppc64le",),
        changes=(Change("sc", "scv"),),
        profile="kernel",
        seconds="two ppc64le boots (the counting one, then the profiled one): 14 s here "
                "with the build cached",
    ),
    Experiment(
        name="glibc-scv",
        title="glibc's run-time choice of sc or scv 0: getpid, syscall(), stat",
        source="glibc's powerpc64 scv support (reference rseq-and-syscall-abi.md: getpid "
               "379 -> 253 cycles, -33%; syscall() 374 -> 268, -28%; stat -2.3%, 3619 -> "
               "3535 in issue 16)",
        unit="cycles",
        conditions="POWER9 hardware, glibc with sc against glibc with scv 0",
        differs="ours are instructions (QEMU TCG, -icount) on Debian's 6.1 kernel and glibc "
                "2.36, getppid for getpid; glibc's own calls go by sc on a POWER8 model "
                "(glibc 2.36 cannot be told to call sc on POWER9), kcross's selected path "
                "(stat-root, getppid-dispatch) by KCROSS_SYSCALL=sc on POWER9",
        figures=(
            Figure("getpid-sc", "getpid() through glibc, sc", 379.0,
                   (Ours("syscall/getppid-glibc", "power8"),), note="POWER8 model"),
            Figure("getpid-scv", "getpid() through glibc, scv 0", 253.0,
                   (Ours("syscall/getppid-glibc"),)),
            Figure("syscall-sc", "syscall(SYS_getpid) through glibc, sc", 374.0,
                   (Ours("syscall/getppid-libc-syscall", "power8"),), note="POWER8 model"),
            Figure("syscall-scv", "syscall(SYS_getpid) through glibc, scv 0", 268.0,
                   (Ours("syscall/getppid-libc-syscall"),)),
            Figure("stat-sc", "stat, sc", 3619.0, (Ours("syscall/stat-root", "sc"),),
                   note="kcross's selected path (newfstatat of /)"),
            Figure("stat-scv", "stat, scv 0", 3535.0, (Ours("syscall/stat-root"),),
                   note="kcross's selected path (newfstatat of /)"),
            Figure("dispatch-sc", "getppid, kcross's selected path, sc", None,
                   (Ours("syscall/getppid-dispatch", "sc"),)),
            Figure("dispatch-scv", "getppid, kcross's selected path, scv 0", None,
                   (Ours("syscall/getppid-dispatch"),)),
        ),
        native=False, labs=("ppc64le",),
        changes=(Change("getpid-sc", "getpid-scv"), Change("syscall-sc", "syscall-scv"),
                 Change("stat-sc", "stat-scv"), Change("dispatch-sc", "dispatch-scv")),
        seconds="three ppc64le boots (POWER9, POWER9 with KCROSS_SYSCALL=sc, POWER8): 13 s "
                "here with the build cached",
    ),
    Experiment(
        name="freebsd-cpu-switch",
        title="FreeBSD's cpu_switch in C: two threads calling sched_yield on one CPU",
        source="FreeBSD's cpu_switch rewritten in C (issue 16): the two-thread sched_yield "
               "test on one CPU, published as ministat's output: -12.2% +/- 3.1%",
        unit="%",
        conditions="FreeBSD, the assembly cpu_switch against the one in C, repeated runs "
                   "compared by ministat",
        differs="Linux has no such switch to rewrite: ours are the same test's figures "
                "(ctxsw/yield-same-cpu: one op is both threads yielding, two switches) and "
                "what writing the FP registers after every switch adds to it, in ministat's "
                "format; in the labs, instructions per op (exact: no test)",
        figures=(
            Figure("yield", "two threads, sched_yield, one CPU (one op: 2 switches)", None,
                   (Ours("ctxsw/yield-same-cpu"),)),
            Figure("yield-fp", "the same, FP registers written after every switch", None,
                   (Ours("ctxsw/yield-same-cpu-fp"),)),
        ),
        native=True, labs=LAB_ARCHES,
        changes=(Change("yield", "yield-fp", published="-12.2% +/- 3.1% (C against assembly)"),),
        ministat=("yield", "yield-fp"),
        seconds="natively 15 s (10 processes); one boot per lab (all labs: 95 s)",
    ),
    Experiment(
        name="powernv-spin",
        title="The PowerNV spin hint: or 27,27,27, and what the SMT sibling loses",
        source="the PowerNV spin hint (issue 16): an SMP loop on the sibling thread took "
               "5.5 s beside the hinted spin loop, 45 s beside the hint-less idle loop",
        unit="s",
        conditions="POWER hardware (PowerNV), the sibling's loop timed while this thread spins",
        differs="ours: the hint's own cost per execution (or 27,27,27 on ppc64le, pause on "
                "x86-64, yield on aarch64), and a counting loop's time per iteration on the "
                "SMT sibling while this CPU spins with and without the hint: only where the "
                "CPU has an SMT sibling (none on this VM, none in the one-vCPU labs: skipped, "
                "with the harness's reason); emulation models no SMT priority",
        figures=(
            Figure("hint", "one spin hint, back to back, over the plain loop", None,
                   _each_arch(SPIN_HINT),
                   note="the plain loop is the empty loop kcross subtracts from every figure"),
            Figure("sibling-hint", "the sibling's loop while this CPU spins with the hint",
                   5.5, _each_arch(SPIN_SIBLING)),
            Figure("sibling-plain", "the sibling's loop while this CPU spins without a hint",
                   45.0, (Ours("spin/sibling-plain"),)),
        ),
        native=True, labs=LAB_ARCHES,
        changes=(Change("sibling-plain", "sibling-hint"),),
        ratio=False,
        seconds="natively 2 s; one boot per lab (all labs: 95 s)",
    ),
    Experiment(
        name="rseq-percpu",
        title="rseq per-CPU operations: a counter and a lock-unlock pair",
        source="the rseq system call's commit (Linux 4.18; reference "
               "rseq-and-syscall-abi.md): per-CPU counter 15.3 -> 2.0 ns (7.7x), liburcu "
               "per-CPU lock 53.4 -> 28.6 ns",
        unit="ns/op",
        conditions="Intel Xeon E5-2630 v3, x86-64",
        differs="another CPU and kernel (this machine's, or the labs' instructions); the "
                "published counter's baseline is sched_getcpu + an atomic add (ours: "
                "add-getcpu-atomic; glibc 2.36's sched_getcpu reads the rseq area), the lock "
                "is liburcu's (ours: kcross's per-CPU lock against a CAS spinlock)",
        figures=(
            Figure("counter-atomic", "per-CPU counter: sched_getcpu + atomic add", 15.3,
                   (Ours("percpu/add-getcpu-atomic"),)),
            Figure("counter-rseq", "per-CPU counter: rseq", 2.0, (Ours("percpu/add-rseq"),)),
            Figure("lock-atomic", "lock + unlock: atomic (ours: a CAS spinlock)", 53.4,
                   (Ours("percpu/lock-cas"),)),
            Figure("lock-rseq", "lock + unlock: per-CPU, rseq", 28.6,
                   (Ours("percpu/lock-rseq"),)),
        ),
        native=True, labs=LAB_ARCHES,
        changes=(Change("counter-atomic", "counter-rseq"), Change("lock-atomic", "lock-rseq")),
        seconds="natively 13 s (10 processes); one boot per lab (all labs: 95 s)",
    ),
    Experiment(
        name="rseq-cpu-number",
        title="Reading the CPU number: rseq, lsl, glibc, the system call",
        source="the rseq system call's commit (Linux 4.18; reference "
               "rseq-and-syscall-abi.md): rseq 0.8 ns (the empty loop), lsl 13.0, glibc "
               "getcpu 16.6, getcpu system call 53.9",
        unit="ns/op",
        conditions="Intel Xeon E5-2630 v3, x86-64",
        differs="another CPU and kernel (this machine's, or the labs' instructions); glibc "
                "then read the CPU number through the vDSO, 2.36 reads the rseq area; lsl "
                "is x86 only",
        figures=(
            Figure("rseq", "rseq cpu_id load", 0.8, (Ours("cpuid/rseq-load"),)),
            Figure("lsl", "lsl of the per-CPU segment", 13.0,
                   (Ours("cpuid/lsl", arch="x86_64"),)),
            Figure("glibc", "glibc sched_getcpu", 16.6, (Ours("cpuid/sched_getcpu"),)),
            Figure("syscall", "getcpu system call", 53.9, (Ours("cpuid/getcpu-syscall"),)),
        ),
        native=True, labs=LAB_ARCHES,
        changes=(Change("syscall", "rseq"), Change("glibc", "rseq")),
        seconds="natively 7 s (10 processes); one boot per lab (all labs: 95 s)",
    ),
)


def names() -> tuple[str, ...]:
    return tuple(e.name for e in EXPERIMENTS)


def chosen(name: str | None) -> tuple[Experiment, ...]:
    """Every experiment, or the one called ``name`` (UserError, one line, for another)."""
    if name is None:
        return EXPERIMENTS
    for e in EXPERIMENTS:
        if e.name == name:
            return (e,)
    from kcross.errors import did_you_mean, shown

    hint = did_you_mean(name, names())
    raise UserError(f"no experiment {shown(name)} ({hint + ' ' if hint else ''}experiments: "
                    f"{', '.join(names())})")
