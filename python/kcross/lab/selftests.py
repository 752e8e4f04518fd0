"""The kernel's own selftests as the lab's peers: which, how they are built, how they run,
and what their output says (issue 16; ``kcross lab ARCH --peers``).

One table (:data:`PROGRAMS`, :data:`PEERS`) owns what is built and run on each arch:

- powerpc ``benchmarks/null_syscall`` (10^7 ``syscall(__NR_gettid)`` calls through glibc,
  timed by CLOCK_MONOTONIC and the timebase) and ``benchmarks/context_switch`` (two
  threads on one CPU, yield, pipe or futex ping-pong, switches counted per second);
  these exist for powerpc only: the x86 and arm64 selftests time neither the null
  syscall nor a context switch, so those arches have no peer for them;
- rseq ``param_test`` (spinlock, list, increment on per-CPU data from several threads,
  checking the totals) and ``basic_percpu_ops_test`` (its own spinlock and list test,
  200 threads, 20 million ``sched_yield`` calls in its list test): on all three arches.

They are built from the kernel tree of Debian's ``linux-source`` package
(:mod:`kcross.lab.linux_source`; only :data:`WANTED` is extracted), with the lab's own
cross compiler (machines.Arch.cross_gcc), static, with the flags of their Makefiles
(the rseq tests link ``rseq.c`` in, as their ``librseq.so`` would be), into
``~/.cache/kcross/lab/selftests-<arch>-<source version>/``; ``build.json`` there records
each program's SHA-256 and the build's key (the table and flags): a program that is
missing or changed, or a build of another table, is built again.

In the guest they are ``/lab/selftests/<name>``, run after the harness in the same
counting-mode boot (:func:`plan`); their output is parsed by :func:`parse`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcross.errors import LabError, clipped
from kcross.lab.initramfs import CommandResult, plan_command
from kcross.lab.kernel import ARCHES, cache_root, file_sha256
from kcross.lab.linux_source import Source
from kcross.lab.machines import arch as lab_arch

GUEST_DIR = "/lab/selftests"
SELFTESTS = "tools/testing/selftests"
BUILD_META = "build.json"

# What is extracted from the kernel tree (paths under it; a trailing / takes a directory).
WANTED = (
    "Makefile",
    f"{SELFTESTS}/kselftest.h",
    f"{SELFTESTS}/powerpc/harness.c",
    f"{SELFTESTS}/powerpc/utils.c",
    f"{SELFTESTS}/powerpc/include/",
    f"{SELFTESTS}/powerpc/benchmarks/",
    f"{SELFTESTS}/rseq/",
    "tools/include/",
)

# The powerpc selftests' CFLAGS (powerpc/Makefile) and the rseq tests' (rseq/Makefile).
_POWERPC_CFLAGS = ("-std=gnu99", "-O2", "-Wall", "-Werror", '-DGIT_VERSION="unknown"',
                   "-I../include")
_RSEQ_CFLAGS = ("-O2", "-Wall", "-g", "-I.", "-I../../../../tools/include")


@dataclass(frozen=True)
class Program:
    """One selftest program, as its Makefile builds it (plus -static)."""

    name: str
    directory: str                  # under tools/testing/selftests
    sources: tuple[str, ...]        # relative to the directory
    cflags: tuple[str, ...]
    libs: tuple[str, ...] = ()
    arches: tuple[str, ...] = ARCHES


PROGRAMS: tuple[Program, ...] = (
    Program("null_syscall", "powerpc/benchmarks", ("null_syscall.c", "../harness.c"),
            _POWERPC_CFLAGS, arches=("ppc64le",)),
    Program("context_switch", "powerpc/benchmarks",
            ("context_switch.c", "../harness.c", "../utils.c"),
            (*_POWERPC_CFLAGS, "-maltivec", "-mvsx", "-mabi=altivec"), ("-lpthread",),
            arches=("ppc64le",)),
    Program("param_test", "rseq", ("param_test.c", "rseq.c"), _RSEQ_CFLAGS,
            ("-lpthread", "-ldl")),
    Program("basic_percpu_ops_test", "rseq", ("basic_percpu_ops_test.c", "rseq.c"),
            _RSEQ_CFLAGS, ("-lpthread", "-ldl")),
)

# param_test's size: run_param_test.sh's REPS, and its 6 threads per CPU (one vCPU here).
PARAM_REPS = 1000
PARAM_THREADS = 6
# context_switch's seconds (of the guest's clock: 10^9 instructions each); the first
# second holds the threads' start, the last is the steady figure.
SWITCH_SECONDS = 2
_NO_TOUCH = ("--no-fp", "--no-altivec", "--no-vector")


@dataclass(frozen=True)
class Peer:
    """One run of a selftest in the guest, and the kcross rows it is set beside."""

    name: str                       # "null_syscall", "context_switch yield", ...
    program: str
    args: tuple[str, ...]
    kind: str                       # "null-syscall", "switch" or "rseq"
    kcross: tuple[str, ...]         # suite/name of the rows it is compared with
    what: str                       # what its loop does, in a few words
    slow: bool = False              # only with --peers all
    # Host seconds it may add to the boot's --timeout (measured: basic_percpu_ops_test
    # took 255-510 s of host time on the 2-vCPU development VM, busy; the others a few).
    host_seconds: float = 0.0
    # What is known to make its figure differ from kcross's, said when it does.
    differs_because: str | None = None
    arches: tuple[str, ...] = ARCHES

    @property
    def ops(self) -> int | None:
        """The operations a param_test run makes (threads x repetitions), checked by the
        test itself; None for the others."""
        if self.program != "param_test":
            return None
        return int(self.args[self.args.index("-r") + 1]) * int(self.args[self.args.index("-t") + 1])


def _param(test: str, letter: str, row: str) -> Peer:
    return Peer(f"param_test {test}", "param_test",
                ("-T", letter, "-r", str(PARAM_REPS), "-t", str(PARAM_THREADS), "-v"), "rseq",
                (row,), f"{PARAM_THREADS} threads x {PARAM_REPS} per-CPU {test} operations "
                        "(rseq), totals checked")


PEERS: tuple[Peer, ...] = (
    Peer("null_syscall", "null_syscall", (), "null-syscall",
         ("syscall/getppid-libc-syscall", "syscall/gettid-inline", "syscall/getppid-inline"),
         "10^7 x syscall(__NR_gettid) through glibc, loop included", arches=("ppc64le",)),
    Peer("context_switch yield", "context_switch",
         ("--test=yield", *_NO_TOUCH, f"--timeout={SWITCH_SECONDS}"), "switch",
         ("ctxsw/yield-same-cpu",), "two threads on one CPU calling sched_yield in turn",
         arches=("ppc64le",),
         differs_because="with --no-fp --no-altivec --no-vector its threads never touch FP or "
                         "vector registers; kcross's threads have (glibc's VSX string "
                         "functions, the harness's floating point between batches), so the "
                         "kernel saves and restores that state at their switches: the peer "
                         "that touches FP, Altivec and VSX agrees with yield-same-cpu-vec"),
    Peer("context_switch yield fp+vector", "context_switch",
         ("--test=yield", f"--timeout={SWITCH_SECONDS}"), "switch",
         ("ctxsw/yield-same-cpu-vec",), "the same, FP, Altivec and VSX registers written "
         "after every switch (the test's default)", arches=("ppc64le",)),
    Peer("context_switch pipe", "context_switch",
         ("--test=pipe", *_NO_TOUCH, f"--timeout={SWITCH_SECONDS}"), "switch",
         ("ctxsw/pipe-threads-same-cpu",), "1-byte pipe ping-pong between two threads on one CPU",
         arches=("ppc64le",)),
    Peer("context_switch futex", "context_switch",
         ("--test=futex", *_NO_TOUCH, f"--timeout={SWITCH_SECONDS}"), "switch",
         ("ctxsw/futex-same-cpu",), "futex ping-pong between two threads on one CPU",
         arches=("ppc64le",)),
    _param("spinlock", "s", "percpu/lock-rseq"),
    _param("list", "l", "percpu/list-rseq"),
    _param("increment", "i", "percpu/add-rseq"),
    Peer("basic_percpu_ops_test", "basic_percpu_ops_test", (), "rseq",
         ("percpu/lock-rseq", "percpu/list-rseq"),
         "200 threads: 10^6 per-CPU lock operations, 2 x 10^7 list pop/push with a "
         "sched_yield each (about 68 x 10^9 instructions on ppc64le)", slow=True,
         host_seconds=900.0),
)

# What an arch has no peer for, said in the output (the selftests of v6.1).
NO_PEER = {
    "aarch64": "the null syscall and context switches: the kernel's selftests time them for "
               "powerpc only (powerpc/benchmarks); arm64's have no such benchmark",
    "x86_64": "the null syscall and context switches: the kernel's selftests time them for "
              "powerpc only (powerpc/benchmarks); x86's have no such benchmark",
}
SELECTIONS = ("quick", "all")


def peers(arch: str, selection: str = "quick") -> list[Peer]:
    """The peers run on ``arch``: ``quick`` leaves the slow ones out, ``all`` runs them."""
    return [p for p in PEERS if arch in p.arches and (selection == "all" or not p.slow)]


def host_seconds(arch: str, selection: str = "quick") -> float:
    """What the peers of ``arch`` add to a boot's host-time limit."""
    return sum(p.host_seconds for p in peers(arch, selection))


def left_out(arch: str, selection: str = "quick") -> list[Peer]:
    return [p for p in PEERS if arch in p.arches and p.slow and selection != "all"]


def programs(arch: str) -> list[Program]:
    return [p for p in PROGRAMS if arch in p.arches]


def guest_path(program: str) -> str:
    return f"{GUEST_DIR}/{program}"


def kcross_rows(arch: str, selection: str = "quick") -> list[str]:
    """The kcross rows the peers of ``arch`` are compared with (suite/name)."""
    return list(dict.fromkeys(r for p in peers(arch, selection) for r in p.kcross))


# ---------------------------------------------------------------- the build

@dataclass(frozen=True)
class Built:
    """The selftest programs built for one arch from one source version."""

    arch: str
    source: Source
    directory: Path
    programs: dict[str, Path] = field(default_factory=dict)    # name -> host file

    def files(self) -> dict[str, Path]:
        """{guest path: host file} for the initramfs."""
        return {guest_path(name): path for name, path in self.programs.items()}


def build_key(arch: str) -> str:
    """What a build depends on besides the sources: the table and the compiler's name."""
    table = [(p.name, p.directory, p.sources, p.cflags, p.libs) for p in programs(arch)]
    text = json.dumps([lab_arch(arch).cross_gcc, table])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_dir_for(arch: str, source: Source, cache_dir: Path | str | None = None) -> Path:
    return cache_root(cache_dir) / f"selftests-{arch}-{source.version}"


def _usable_build(directory: Path, arch: str, source: Source) -> dict[str, Path] | None:
    try:
        meta = json.loads((directory / BUILD_META).read_text())
        if meta["key"] != build_key(arch) or meta["source_sha256"] != source.deb_sha256:
            return None
        found = {}
        for p in programs(arch):
            path = directory / p.name
            if file_sha256(path) != meta["programs"][p.name]:
                return None
            found[p.name] = path
        return found
    except (OSError, ValueError, KeyError, TypeError):
        return None


def build(arch: str, source: Source, *, cache_dir: Path | str | None = None) -> Built:
    """The arch's selftest programs, static, from ``source`` (cached; see the module's doc)."""
    directory = build_dir_for(arch, source, cache_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = open(directory.parent / f".{directory.name}.lock", "w")
    except OSError as e:
        raise LabError(f"cannot create the selftests' build dir {directory}: {e.strerror}") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _usable_build(directory, arch, source)
        if found is None:
            found = _build(arch, source, directory)
    return Built(arch=arch, source=source, directory=directory, programs=found)


def _build(arch: str, source: Source, directory: Path) -> dict[str, Path]:
    gcc = shutil.which(lab_arch(arch).cross_gcc)
    if gcc is None:
        raise LabError(f"building the {arch} selftests needs {lab_arch(arch).cross_gcc} "
                       f"(apt-get install {lab_arch(arch).cross_package})")
    (directory / BUILD_META).unlink(missing_ok=True)
    log = directory / "build.log"
    built: dict[str, Path] = {}
    with open(log, "w") as out:
        for p in programs(arch):
            target = directory / p.name
            argv = [gcc, *p.cflags, "-static", *p.sources, *p.libs, "-o", str(target)]
            cwd = source.tree / SELFTESTS / p.directory
            out.write(f"$ cd {cwd} && {' '.join(argv)}\n")
            out.flush()
            try:
                proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                                      errors="replace", check=False, stdin=subprocess.DEVNULL)
            except OSError as e:
                raise LabError(f"cannot run {gcc}: {e.strerror or e}") from None
            out.write(proc.stdout + proc.stderr)
            if proc.returncode != 0 or not target.is_file():
                first = next((ln for ln in proc.stderr.splitlines() if "error" in ln),
                             proc.stderr.strip().splitlines()[-1:] or ["no message"])
                raise LabError(f"building the selftest {p.name} for {arch} failed: "
                               f"{clipped(str(first), 200)}; log: {log}")
            built[p.name] = target
    meta = {"arch": arch, "key": build_key(arch), "source_package": source.package,
            "source_version": source.version, "source_sha256": source.deb_sha256,
            "programs": {name: file_sha256(path) for name, path in built.items()}}
    (directory / BUILD_META).write_text(json.dumps(meta, indent=1) + "\n")
    return built


# ---------------------------------------------------------------- in the guest

def plan(arch: str, selection: str = "quick") -> list[list[str]]:
    """The guest plan's commands for the peers, after the harness's."""
    return [plan_command([guest_path(p.program), *p.args]) for p in peers(arch, selection)]


@dataclass(frozen=True)
class Figures:
    """What one peer's run said."""

    peer: Peer
    status: str                     # the command's exit status as /init reported it
    passed: bool                    # exit 0 and its output as expected
    per_op: float | None = None     # instructions per call / per switch (counting guest)
    reading: str = ""               # the figures as the program printed them
    aborts: int | None = None       # rseq aborts its threads counted
    threads: int | None = None      # threads that reported
    problem: str | None = None      # why it did not pass, or its figure is missing
    output: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"peer": self.peer.name, "program": self.peer.program,
                "args": list(self.peer.args), "status": self.status, "passed": self.passed,
                "per_op": self.per_op, "reading": self.reading, "ops": self.peer.ops,
                "aborts": self.aborts, "threads": self.threads, "problem": self.problem}


# One guest second of -icount shift=0: 10^9 instructions.
INSTRUCTIONS_PER_GUEST_SECOND = 1e9
_NULL = re.compile(r"^\s*([0-9.]+) ns\s+([0-9.]+) cycles\s*$")
_SWITCH_HEAD = re.compile(r"^Using (threads|processes) with (\w+) on cpus")
_ABORTS = re.compile(r"^tid \d+: number of rseq abort: (\d+), signals delivered: (\d+)$")


def parse_null_syscall(lines: Sequence[str]) -> tuple[float, float] | None:
    """null_syscall's "N ns M cycles" per call: (ns, cycles), or None."""
    for line in lines:
        m = _NULL.match(line)
        if m:
            return float(m[1]), float(m[2])
    return None


def parse_context_switch(lines: Sequence[str]) -> list[int] | None:
    """context_switch's per-second switch counts (after its "Using ..." line), or None."""
    if not any(_SWITCH_HEAD.match(line) for line in lines):
        return None
    return [int(line.strip()) for line in lines if line.strip().isdigit()]


def parse_rseq(lines: Sequence[str]) -> tuple[int, int]:
    """param_test -v's threads' reports: (threads, total rseq aborts)."""
    found = [_ABORTS.match(line.strip()) for line in lines]
    hits = [m for m in found if m]
    return len(hits), sum(int(m[1]) for m in hits)


def parse(peer: Peer, result: CommandResult) -> Figures:
    """One peer's console output made figures.  Under -icount shift=0 the guest's clocks
    count instructions: null_syscall's ns per call *is* instructions per call, and
    context_switch's switches per (guest) second are switches per 10^9 instructions."""
    from kcross.views.text import clip_words

    lines = tuple(result.output)
    if not result.ok:
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "no output")
        return Figures(peer, result.status, False, problem=f"exit {result.status}: {clip_words(last, 160)}",
                       output=lines)
    if peer.kind == "null-syscall":
        got = parse_null_syscall(lines)
        if got is None:
            return Figures(peer, result.status, False, problem="no 'ns ... cycles' line",
                           output=lines)
        ns, cycles = got
        return Figures(peer, result.status, True, per_op=ns,
                       reading=f"{ns:.2f} ns, {cycles:.2f} cycles per call", output=lines)
    if peer.kind == "switch":
        counts = parse_context_switch(lines)
        if counts is None:
            return Figures(peer, result.status, False, problem="no 'Using ... on cpus' line",
                           output=lines)
        if len(counts) < 2:
            return Figures(peer, result.status, False,
                           problem="fewer than two seconds of switch counts", output=lines)
        steady = counts[-1]           # the first second holds the threads' start
        if steady <= 0:
            return Figures(peer, result.status, False,
                           problem="no switch in its last second (the peer stalled)",
                           output=lines)
        return Figures(peer, result.status, True,
                       per_op=INSTRUCTIONS_PER_GUEST_SECOND / steady,
                       reading=f"{steady} switches per guest second (seconds: "
                               f"{', '.join(map(str, counts))})", output=lines)
    threads, aborts = parse_rseq(lines)
    if peer.program == "param_test":
        expected = int(peer.args[peer.args.index("-t") + 1])
        if threads != expected:
            return Figures(peer, result.status, False, threads=threads, aborts=aborts,
                           problem=f"{threads} of {expected} threads reported", output=lines)
        return Figures(peer, result.status, True, threads=threads, aborts=aborts,
                       reading=f"{peer.ops} operations checked, {aborts} rseq "
                               f"abort{'' if aborts == 1 else 's'}",
                       output=lines)
    missing = [w for w in ("spinlock", "percpu_list") if w not in (ln.strip() for ln in lines)]
    if missing:
        return Figures(peer, result.status, False, problem=f"no '{missing[0]}' line",
                       output=lines)
    return Figures(peer, result.status, True, reading="spinlock and percpu_list checked",
                   output=lines)
