"""Profiles and traces of lab benchmarks: where each operation's instructions go (issue 16).

:func:`profile_counted` boots a counting guest (kcross.lab.session.count) with the
profile plugin loaded (kcross.lab.plugin) and the harness's profile windows on
(KCROSS_PROFILE), and returns, per benchmark, the operation's user and kernel
instructions, the functions they run through and the costly instructions among them
(kcross.lab.costly), each per operation; with ``trace``, one operation's instructions in
order.

The figures follow the statistics rule of counting mode (kcross.stats): the per-batch
figures are the sample windows' instructions over the batch's iterations; the figure is
their median, minus the empty loop's median where the rule subtracts it.  The median
sample window (and the median empty window) are then split by address, so that user +
kernel, the functions and the costly instructions all add up to that figure exactly.
The harness's own figures of the same boot (the icount clock) are beside them.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kcross.errors import LabError
from kcross.lab import costly as costly_table
from kcross.lab import elf
from kcross.lab.kernel import Kernel
from kcross.lab.machines import DEFAULT_SUITES, Guest
from kcross.lab.machines import arch as lab_arch
from kcross.lab.payload import Payload
from kcross.lab.plugin import TRACE_MAX, build_plugin, check_plugin, qemu_args
from kcross.lab.profile_data import EMPTY, SAMPLE, PluginOutput, Window, parse
from kcross.lab.session import COUNTING_TIMEOUT, Counted, count
from kcross.lab.symbols import (
    Place,
    Reference,
    SymbolTable,
    find_system_map,
    kallsyms_table,
    kernel_table,
    parse_reference,
    read_system_map,
)

USER, KERNEL = "user", "kernel"
MARKERS = {"sample": "kh_profile_sample", "empty": "kh_profile_empty",
           "close": "kh_profile_close", "dump": "kh_profile_dump"}
SAY = "@@kcross-profile "
EMPTY_LOOP = "(the empty loop, subtracted)"


# Where an address is: user or kernel, and its function+offset.
Locate = Callable[[int], tuple[str, Place]]


@dataclass(frozen=True)
class FunctionCost:
    space: str           # user or kernel
    function: str        # the symbol, or "?" where none covers the address
    per_op: float


@dataclass(frozen=True)
class CostlyCost:
    category: str
    mnemonic: str
    space: str
    function: str
    per_op: float


@dataclass(frozen=True)
class TraceLine:
    address: int
    space: str
    place: str           # function+offset
    disassembly: str


@dataclass
class BenchProfile:
    """One benchmark's profile: instructions per operation by the statistics rule."""

    name: str                       # suite/name
    iters: int
    windows: int                    # sample windows
    figure: float                   # user + kernel
    user: float
    kernel: float
    subtracted: bool                # the empty loop's median was subtracted
    counting: float | None          # the harness's own figure of the same boot (icount)
    functions: list[FunctionCost] = field(default_factory=list)
    costly: list[CostlyCost] = field(default_factory=list)
    trace: list[TraceLine] | None = None


@dataclass
class Profiled:
    """A profiled counting boot: its counting run and the profile of each benchmark."""

    counted: Counted
    benches: dict[str, BenchProfile]
    kernel_symbols: str             # where the kernel's symbols came from
    slide: int                      # KASLR: what was added to System.map's addresses

    def __getitem__(self, name: str) -> BenchProfile:
        for key, p in self.benches.items():
            if name in (key, key.split("/", 1)[1]):
                return p
        raise KeyError(name)


# ---------------------------------------------------------------- before the boot

@dataclass(frozen=True)
class Prepared:
    plugin: Path
    markers: dict[str, int]
    harness: SymbolTable
    system_map: Path | None


def prepare(arch: str, kernel: Kernel, payload: Payload, source: Path, qemu: str,
            workdir: Path) -> Prepared:
    """The plugin built and loaded once by QEMU (its API version checked), the harness's
    marker addresses (above every address /init runs) and symbols, the kernel's map."""
    plugin = build_plugin(source)
    check_plugin(qemu, plugin, workdir)
    program = elf.read(payload.harness)
    init_end = max((end for _s, end in elf.read(payload.init).executable), default=0)
    markers = {}
    for key, name in MARKERS.items():
        f = program.function(name)
        markers[key] = f.address + f.local_entry
        if markers[key] < init_end:
            raise LabError(f"the harness's profile marker {name} ({markers[key]:#x}) lies "
                           f"where /init runs code (below {init_end:#x}): windows could not "
                           "be told apart")
    table = SymbolTable(((f.address, f.name) for f in program.functions),
                        ends=((f.address, f.address + f.size) for f in program.functions
                              if f.size))
    return Prepared(plugin, markers, table, find_system_map(kernel.path))


# ---------------------------------------------------------------- the boot

def profile_counted(guest: Guest, kernel: Kernel, payload: Payload, *,
                    source: Path | None = None,
                    variant: str | None = None, suites: Sequence[str] = DEFAULT_SUITES,
                    bench: str | None = None, env: Mapping[str, str] | None = None,
                    trace: bool = False, timeout: float = COUNTING_TIMEOUT,
                    prepared: Prepared | None = None) -> Profiled:
    """Boot ``guest`` in counting mode with the profile plugin; every benchmark's profile.
    ``trace``: one operation of the (single) benchmark in order, too.  ``source``: the
    kcross tree the plugin is built from (kcross.lab.payload.find_source's by default).

    The API other lab jobs use (``kcross reproduce``): ``profile_counted(guest, kernel,
    payload, bench="getppid-*")["getppid-inline"]`` is a :class:`BenchProfile` (user,
    kernel, functions, costly)."""
    from kcross.lab.payload import find_source

    arch = guest.arch.name
    source = source or find_source()
    with tempfile.TemporaryDirectory(prefix="kcross-profile-") as tmp:
        work = Path(tmp)
        p = prepared or prepare(arch, kernel, payload, source, guest.arch.qemu, work)
        out = work / "profile.out"
        profiled = dataclasses.replace(guest, extra=(*guest.extra, *qemu_args(
            p.plugin, out, p.markers, lab_arch(arch).kernel_base, trace=trace)))
        forced = dict(env or {})
        forced["KCROSS_PROFILE"] = "1" if p.system_map is not None else "kallsyms"
        counted = count(profiled, kernel, payload, variant=variant, suites=suites, bench=bench,
                        env=forced, timeout=timeout, workdir=work)
        data = parse(out)
    return build(counted, data, p, kernel, arch, trace=trace)


def _said(messages: Sequence[str], what: str) -> list[str]:
    head = SAY + what + " "
    return [m[len(head):] for m in messages if m.startswith(head)]


def kernel_symbols(p: Prepared, messages: Sequence[str]) -> tuple[SymbolTable, str, int]:
    """The kernel's symbol table for this boot, where it came from, and the slide."""
    ref = _said(messages, "kallsyms")
    reference = parse_reference(ref[0]) if ref else Reference(None, None)
    if p.system_map is not None:
        table, slide = kernel_table(read_system_map(p.system_map), reference,
                                    str(p.system_map))
        if reference.text is None:   # kallsyms hidden or without _text: no slide known
            return table, (f"{p.system_map.name} (unmoved: the guest's /proc/kallsyms gave no "
                           "_text, so a KASLR slide could not be applied)"), 0
        return table, f"{p.system_map.name}" + (f" (KASLR slide {slide:#x})" if slide else ""), slide
    table = kallsyms_table(_said(messages, "ksym"))
    if not len(table):
        return table, "none (no System.map, and the guest's /proc/kallsyms gave nothing)", 0
    return table, "the guest's /proc/kallsyms", 0


def build(counted: Counted, data: PluginOutput, p: Prepared, kernel: Kernel, arch: str, *,
          trace: bool = False) -> Profiled:
    results = counted.stream.results
    if len(results) != len(data.benches):
        raise LabError(f"the {arch} guest's harness reported {len(results)} benchmarks, the "
                       f"profile plugin saw {len(data.benches)}")
    ktable, where, slide = kernel_symbols(p, counted.messages)
    base = lab_arch(arch).kernel_base

    def place(addr: int) -> tuple[str, Place]:
        return (KERNEL, ktable.lookup(addr)) if addr >= base else (USER, p.harness.lookup(addr))

    benches: dict[str, BenchProfile] = {}
    for record, windows in zip(results, data.benches, strict=True):
        name = f"{record['suite']}/{record['name']}"
        if record["status"] != "ok" or not windows:
            continue
        prof = _bench(name, record, windows, data, place, arch)
        prof.counting = counted.median(name)
        if trace:
            prof.trace = _trace(data, windows, int(record["iters"]), place, arch)
        benches[name] = prof
    return Profiled(counted, benches, where, slide)


def _median_window(windows: Sequence[Window], iters: int) -> tuple[float, Window]:
    """The median of the windows' instructions per op (kcross.stats) and a window that has
    it (the statistics rule's median of an odd number of batches is one of them)."""
    from kcross import stats

    med = stats.median([w.total / iters for w in windows])
    return med, min(windows, key=lambda w: abs(w.total / iters - med))


def _bench(name: str, record: Mapping[str, object], windows: Sequence[Window],
           data: PluginOutput, place: Locate, arch: str) -> BenchProfile:
    from kcross import stats

    iters = int(record["iters"])  # type: ignore[call-overload]
    samples = [w for w in windows if w.kind == SAMPLE]
    empties = [w for w in windows if w.kind == EMPTY]
    if not samples or not empties:
        raise LabError(f"the profile of {name} has {len(samples)} sample and {len(empties)} "
                       "empty-loop windows: both are needed")
    # Whether the empty loop is subtracted is the harness record's decision (the statistics
    # rule on its own samples, kcross.stats.summarize_record), never the windows' own: the
    # profile and the harness's figure cannot differ by the whole empty loop on a row near
    # the rule's thresholds.
    try:
        sub = stats.summarize_record(record).overhead.subtracted
    except stats.StatsError as e:
        raise LabError(f"the harness's record of {name} has no overhead decision: {e}") \
            from None
    med, mid = _median_window(samples, iters)
    empty_med, empty = _median_window(empties, iters)
    scale = 1.0 / iters
    user = (mid.user - (empty.user if sub else 0)) * scale
    kern = (mid.kernel - (empty.kernel if sub else 0)) * scale
    # The median sample window by function; the empty loop's median, where the rule
    # subtracts it, as a line of its own (its loop is another function's code).
    functions: dict[tuple[str, str], float] = {}
    costly: dict[tuple[str, str, str, str], float] = {}
    for addr, n in mid.counts.items():
        v = n * scale
        space, where = place(addr)
        fn = where.function or "?"
        functions[(space, fn)] = functions.get((space, fn), 0.0) + v
        c = costly_table.classify(arch, _text(data, addr, arch), where.function)
        if c is not None:
            key = (c.category, c.mnemonic, space, fn)
            costly[key] = costly.get(key, 0.0) + v
    if sub:
        for space, n in ((USER, empty.user), (KERNEL, empty.kernel)):
            if n:
                functions[(space, EMPTY_LOOP)] = -n * scale
    return BenchProfile(
        name=name, iters=iters, windows=len(samples), figure=med - (empty_med if sub else 0.0),
        user=user,
        kernel=kern, subtracted=sub, counting=None,
        functions=sorted((FunctionCost(s, f, v) for (s, f), v in functions.items()),
                         key=lambda x: (-abs(x.per_op), x.space, x.function)),
        costly=sorted((CostlyCost(c, m, s, f, v) for (c, m, s, f), v in costly.items()),
                      key=lambda x: (costly_table.CATEGORIES.index(x.category), -x.per_op,
                                     x.mnemonic)))


def _text(data: PluginOutput, addr: int, arch: str) -> str:
    raw, text = data.disassembly.get(addr, (b"", "?"))
    return costly_table.decoded(arch, raw, text)


def _trace(data: PluginOutput, windows: Sequence[Window], iters: int, place: Locate,
           arch: str) -> list[TraceLine]:
    """One operation of the traced window, in order: from one execution of the loop's first
    instruction run exactly ``iters`` times to the next, an operation as long as the median
    one (kcross.stats), so that no interrupt's share is in it."""
    from kcross import stats

    if not data.trace:
        raise LabError("the profile holds no trace (the traced window was not recorded)")
    first = next(w for w in windows if w.kind == SAMPLE)
    heads = {a for a, c in first.counts.items() if c == iters}
    head = next((a for a in data.trace if a in heads), None)
    if head is None:
        raise LabError("the trace has no instruction that ran once per operation")
    at = [i for i, a in enumerate(data.trace) if a == head]
    spans = list(zip(at, at[1:], strict=False))
    if not spans:
        raise LabError(f"the trace holds fewer than two operations ({len(data.trace)} "
                       f"instructions recorded, at most {TRACE_MAX})")
    med = stats.median([b - a for a, b in spans])
    start, end = min(spans, key=lambda s: (abs((s[1] - s[0]) - med), s[0]))
    lines = []
    for addr in data.trace[start:end]:
        space, where = place(addr)
        lines.append(TraceLine(addr, space, str(where), _text(data, addr, arch)))
    return lines


