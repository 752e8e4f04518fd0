"""Rich renderings of results, fingerprints, runs and the benchmark registry.

Pure functions from records to rich renderables, shared by ``run`` and
``show`` so that a stored run looks exactly like a live one.  Where a figure
cannot be computed, the cell says why (the :class:`StatsError` message)
instead of showing a number or leaving it blank.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .schema import LAB_COUNTING, UNIT_INSTRUCTIONS, UNIT_NS, unit_of
from .schema import dig as _get

if TYPE_CHECKING:  # only types: the store loads SQLAlchemy, the statistics numpy
    from .stats import Summary
    from .store import RunSummary

# kcross.stats (numpy) is imported by the functions that compute figures, so that the
# tables of stored runs, benchmarks and a fingerprint (`kcross runs`, `list`, `sysinfo`)
# load no numpy.

DASH = "–"
OVERHEAD_MARK = "†"  # marks a median from which the empty-loop overhead was subtracted
SHORT_EVENT = {"cycles": "cyc", "instructions": "ins", "branch-misses": "bmiss"}
HW_EVENTS = ("cycles:u", "cycles:k", "instructions:u", "instructions:k",
             "branch-misses:u", "branch-misses:k")



def format_ns(value: float) -> str:
    """Four significant digits at most, never scientific notation (ns/op range 0.1..1e6)."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.1f}"
    if value >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_value(value: float, unit: str) -> str:
    """A figure in its unit: times as :func:`format_ns`, instruction counts as plain
    decimals with one decimal place (``346.0``; a median of an even count may be ``.5``)."""
    if unit == UNIT_INSTRUCTIONS:
        return f"{value:.1f}"
    return format_ns(value)


# The run table's lines: no vertical rules (its columns are separated by spaces, which
# leaves 120 columns room for the figures), one rule of dashes under the header.  ASCII,
# so that a piped table and a terminal's look the same.
RULED = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)


def clip_words(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary and ended with "…"
    when it is longer (a reason in a table cell is never cut mid-word; a first word longer
    than ``limit`` alone is cut, it has no boundary)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)          # text[:cut] ends a word and leaves room for "…"
    head = text[:cut].rstrip(" ,;:") if cut > 0 else ""
    return (head or text[:limit - 1]) + "…"


def _add_row(table: Table, *cells: str | Text) -> None:
    """Add a row whose plain strings are literal text: names and reasons may contain '['."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))


def _error(message: str, wide: bool = True) -> Text:
    """Why a cell has no figure; folded into lines of 20 characters unless ``wide`` (the
    columns of figures are never wrapped: this keeps the table in its width)."""
    return Text(message if wide else textwrap.fill(message, 20), style="yellow")


SW_EVENTS = (("context-switches", "csw"), ("cpu-migrations", "mig"), ("page-faults", "pf"))
SW_ALL = ("task-clock", *(event for event, _ in SW_EVENTS))


def _per_op(value: float) -> str:
    """A count per operation: ``812.2``, ``0``, and a rare event as ``3.5e-5`` (a context
    switch every 28,000 operations), never rounded to zero."""
    if value == 0:
        return "0"
    if abs(value) >= 0.01:
        return f"{value:.4g}"
    mantissa, _, exponent = f"{value:.2g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def _counters_cell(record: dict[str, Any]) -> str:
    """Every counter that could be opened, per operation (the header says so): the
    hardware ones (``cyc:k 812``), then the disturbance-related software ones
    (``csw 3.5e-5 mig 0 pf 0``).  The totals over all samples stay in the JSON."""
    parts = []
    for event in HW_EVENTS:
        counter = record["counters"].get(event)
        if counter is None or counter.get("per_op") is None:
            continue
        base, _, mode = event.partition(":")
        star = "*" if counter.get("scaled") else ""
        parts.append(f"{SHORT_EVENT.get(base, base)}:{mode} {_per_op(counter['per_op'])}{star}")
    for event, short in SW_EVENTS:
        counter = record["counters"].get(event)
        if counter is not None and counter.get("per_op") is not None:
            parts.append(f"{short} {_per_op(counter['per_op'])}")
    return " ".join(parts) or DASH


def switches_per_op(record: dict[str, Any]) -> float | None:
    """The context switches one iteration of ``record`` declares (result-format.md), or None."""
    value = record.get("switches_per_op")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _per_switch_cell(record: dict[str, Any], median: float, unit: str, wide: bool) -> str:
    """The median per switch; ``wide``: with what it was divided by and what the kernel
    counted, ``3,807 (op ÷ 2; counted 2.01)`` (a disagreement is flagged counts-mismatch)."""
    declared = switches_per_op(record)
    if declared is None:
        return DASH
    value = format_value(median / declared, unit)
    if not wide:
        return value
    counted = record.get("switches_counted_per_op")
    seen = f"counted {counted:.3g}" if isinstance(counted, (int, float)) else "not counted"
    return f"{value} (op ÷ {declared:g}; {seen})"


def _percent(value: float) -> str:
    """A signed percentage with three significant digits at most: -0.4%, +25.6%, +4689%."""
    return f"{value:+.0f}%" if abs(value) >= 100 else f"{value:+.1f}%"


def results_table(results: Sequence[dict[str, Any]], title: str | None = None,
                  unit: str | None = None, *, wide: bool = False) -> Table:
    """One row per benchmark: median, CI of the median (±% of it), spread, N, disturbed
    samples, status with the harness's flags (⚑); ``wide`` adds the minimum and the
    counters per op, and the reasons of skipped and failed rows (which :func:`run_footer`
    lists otherwise).  Without ``wide`` the table fits 120 columns.

    The median column names the unit (``median ns/op``, ``median instructions/op``):
    ``unit``, else the results' own.  A result in another unit (only in a database
    edited by hand: a stream never mixes them) carries its unit in its cells.  When a
    result declares context switches per op (``switches_per_op``), the op is a round
    trip and a ``per switch`` column beside the median shows the median divided by them.
    """
    from .stats import StatsError, summarize_record

    unit = unit or unit_of(None, results)
    with_switches = any(switches_per_op(rec) for rec in results)
    table = Table(title=title, title_justify="left", header_style="bold", box=RULED,
                  show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))

    def figure(header: str) -> None:  # a column of figures: never wrapped
        table.add_column(header, justify="right", no_wrap=True)

    table.add_column("benchmark", no_wrap=True)
    figure(f"median {unit}\n(per op: round trip)" if wide and with_switches else f"median\n{unit}")
    if with_switches:
        figure(f"per switch\n({unit.split('/')[0]}/switch)" if wide else "per\nswitch")
    figure("CI95 of\nmedian")
    if wide:
        figure("min")
    figure("spread")
    figure("N")
    figure("disturbed")
    if wide:
        table.add_column("counters/op", no_wrap=True)
    # One flag per line; a flag too long for the last column ends in "…", never cut silently.
    table.add_column("status", no_wrap=wide, overflow="ellipsis")
    switch_dash = [DASH] * with_switches
    for rec in results:
        label = f"{rec['suite']}/{rec['name']}"
        if rec["status"] != "ok":
            style = "dim" if rec["status"] == "skipped" else "red"
            status = f"{rec['status']}: {rec['reason']}" if wide else rec["status"]
            _add_row(table, label, DASH, *switch_dash, DASH, *([DASH] * wide), DASH,
                     str(len(rec["samples"])), DASH, *([DASH] * wide), Text(status, style=style))
            continue
        samples = rec["samples"]
        disturbed = str(len(rec["disturbed"])) if rec["disturbed"] else "0"
        counters = [_counters_cell(rec)] if wide else []
        try:
            summary = summarize_record(rec)
        except StatsError as exc:
            _add_row(table, label, _error(str(exc), wide), *switch_dash, DASH, *([DASH] * wide), DASH,
                     str(len(samples)), disturbed, *counters, "ok")
            continue
        try:
            ci = summary.ci
            med = summary.median
            lo = (ci.low - med) / med * 100 if med else 0.0
            hi = (ci.high - med) / med * 100 if med else 0.0
            ci_cell: str | Text = f"{_percent(lo)} {_percent(hi)}"
        except StatsError as exc:
            ci_cell = _error(str(exc), wide)
        try:
            spread_cell: str | Text = f"{summary.spread:.1%}"
        except StatsError as exc:
            spread_cell = _error(str(exc), wide)
        own = rec.get("unit") or UNIT_NS
        suffix = "" if own == unit else f" {own}"
        median_cell = format_value(summary.median, own)
        if summary.overhead.subtracted:
            median_cell += OVERHEAD_MARK
        median_cell += suffix
        flags = [f.get("flag", "?") for f in rec.get("flags") or []]
        status = Text("ok " + "\n   ".join(f"⚑{name}" for name in flags) if flags else "ok",
                      style="yellow" if flags else "")
        switch_cells = [_per_switch_cell(rec, summary.median, own, wide)] if with_switches else []
        minimum = [format_value(summary.min, own) + suffix] if wide else []
        _add_row(table, label, median_cell, *switch_cells, ci_cell, *minimum, spread_cell,
                 str(summary.n), disturbed, *counters, status)
    return table


def _flags_text(results: Sequence[dict[str, Any]]) -> list[str]:
    """One line per flag the harness raised: what a reader must weigh (result-format.md)."""
    return [f"⚑ {rec['suite']}/{rec['name']} {flag.get('flag')}: {flag.get('detail')}"
            for rec in results for flag in rec.get("flags") or []]


def _join(items: Iterable[str]) -> str:
    return ", ".join(items) or "none"


def timer_text(fingerprint: dict[str, Any]) -> str:
    timer = fingerprint.get("timer") or {}
    text = str(timer.get("source") or "unknown")
    if timer.get("hz"):
        text += f" @ {timer['hz'] / 1e9:.6g} GHz" if timer["hz"] >= 1e8 \
            else f" @ {timer['hz'] / 1e6:.6g} MHz"
    if timer.get("invariant") is not None:
        text += ", invariant" if timer["invariant"] else ", NOT invariant"
    cal = timer.get("calibration")
    if isinstance(cal, dict) and cal.get("against"):
        text += f"; calibrated against {cal['against']}"
        if cal.get("error_ppm") is not None:
            text += f" ({cal['error_ppm']:g} ppm)"
    return text


def counters_measured(fingerprint: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
                      ) -> tuple[set[str], dict[str, str]]:
    """The counters a run's results carry, and those unavailable (never opened) with why."""
    opened: set[str] = set()
    missing: dict[str, str] = {}
    for rec in results:
        opened.update(rec.get("counters") or {})
        missing.update(rec.get("counters_unavailable") or {})
    if not results:  # nothing ran: fall back to what the fingerprint probed
        perf = fingerprint.get("perf") or {}
        for group in ("hardware", "software"):
            for event, ok in (perf.get(group) or {}).items():
                if ok:
                    opened.add(event)
                else:
                    missing[event] = (perf.get("reasons") or {}).get(event) or "unavailable"
    return opened, {e: r for e, r in missing.items() if e not in opened}


def counters_unavailable(missing: Mapping[str, str]) -> list[tuple[list[str], str]]:
    """The unavailable counters grouped by their reason, each reason once:
    ``[(["cycles:k", ...], "not permitted (...)"), ...]``."""
    by_reason: dict[str, list[str]] = {}
    for event, reason in sorted(missing.items()):
        by_reason.setdefault(reason, []).append(event)
    return [(events, reason) for reason, events in by_reason.items()]


def _in_vm(fingerprint: Mapping[str, Any]) -> str | None:
    """The hypervisor that makes missing hardware counters normal, or None."""
    if isinstance(fingerprint.get("lab"), dict):
        return None   # the lab set the guest's counters aside itself, and its reason says why
    if _get(fingerprint, "virtualization", "hypervisor_flag"):
        return str(_get(fingerprint, "virtualization", "hypervisor_type") or "a hypervisor")
    return None


def _named(events: Iterable[str]) -> str:
    """Events for people: a whole group as its name (``hardware``, ``software``)."""
    rest = set(events)
    names = []
    for group, members in (("hardware", HW_EVENTS), ("software", SW_ALL)):
        if rest.issuperset(members):
            names.append(group)
            rest.difference_update(members)
    return _join([*names, *sorted(rest)])


def _counters_line(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]]) -> str:
    """One line: which counters were measured, which not, each reason once."""
    opened, missing = counters_measured(fingerprint, results)
    vm = _in_vm(fingerprint) if any(e in missing for e in HW_EVENTS) else None
    line = f"counters: {_named(opened)}"
    for events, reason in counters_unavailable(missing):
        # only where hardware counters alone are missing: a reason that hit the software
        # ones too (a permission) is not the hypervisor's
        normal = " (normal in a VM)" if vm and set(events) <= set(HW_EVENTS) else ""
        line += f"; {_named(events)} unavailable{normal}: {reason}"
    return line


def _counters_text(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]]) -> list[str]:
    """Which counters were measured; missing hardware counters are explained, not alarming."""
    opened, missing = counters_measured(fingerprint, results)
    lines = [f"counters measured: {_join(sorted(opened))}"]
    hw_missing = [e for e in HW_EVENTS if e in missing]
    if hw_missing:
        reasons = sorted({missing[e] for e in hw_missing})
        which = "all" if len(hw_missing) == len(HW_EVENTS) else _join(hw_missing)
        vm = _in_vm(fingerprint)
        lines.append(f"hardware counters unavailable ({which}): " + "; ".join(reasons)
                     + (f" (normal under {vm}: most VMs expose no PMU)" if vm else ""))
    other = sorted(e for e in missing if e not in HW_EVENTS)
    if other:
        lines.append("other counters unavailable: "
                     + "; ".join(f"{e}: {missing[e]}" for e in other))
    return lines


def _flags_line(results: Sequence[dict[str, Any]], details: str) -> str | None:
    """One line: how many benchmarks each flag was raised on (what they saw: ``details``)."""
    counts: dict[str, int] = {}
    for rec in results:
        for flag in rec.get("flags") or []:
            counts[str(flag.get("flag"))] = counts.get(str(flag.get("flag")), 0) + 1
    if not counts:
        return None
    listed = "; ".join(f"{flag} on {n} benchmark{'s' * (n != 1)}" for flag, n in counts.items())
    return f"⚑ {listed} (what the harness saw: {details})"


def _not_ok_lines(results: Sequence[dict[str, Any]], details: str) -> list[str]:
    """Each failed benchmark with its reason; the skipped ones counted (why: ``details``)."""
    lines = [f"{rec['suite']}/{rec['name']} failed: {rec['reason']}"
             for rec in results if rec["status"] == "failed"]
    skipped = sum(rec["status"] == "skipped" for rec in results)
    if skipped:
        lines.append(f"skipped: {skipped} benchmark{'s' * (skipped != 1)} this machine cannot "
                     f"run (why: {details}, or kcross list)")
    return lines


def _summaries(results: Sequence[dict[str, Any]]) -> list[Summary]:
    """The summaries of the results that have figures (the table says why the others lack them)."""
    from .stats import StatsError, summarize_record

    summaries = []
    for rec in results:
        if rec["status"] == "ok":
            try:
                summaries.append(summarize_record(rec))
            except StatsError:
                pass
    return summaries


def _overhead_text(summaries: Sequence[Summary], unit: str = UNIT_NS, wide: bool = True) -> str:
    """One line: the empty-loop cost range and where it was subtracted (each benchmark's
    decision follows the statistics rule; see kcross.stats)."""
    from .stats import SUBTRACTED

    measured = [s.overhead for s in summaries if s.overhead.median is not None]
    if not measured:
        return "overhead: no measured benchmark"
    values = sorted(o.median for o in measured if o.median is not None)
    span = format_value(values[0], unit) if values[0] == values[-1] else \
        f"{format_value(values[0], unit)}–{format_value(values[-1], unit)}"
    subtracted = sum(1 for o in measured if o.subtracted)
    if not wide:
        return (f"{OVERHEAD_MARK} the empty loop ({span} {unit}) subtracted from {subtracted} of "
                f"{len(measured)} medians (where over the noise, under half the median)")
    text = (f"overhead: empty loop {span} {unit} (median); subtracted ({OVERHEAD_MARK}) for "
            f"{subtracted} of {len(measured)} benchmarks, where it exceeded the benchmark's "
            "noise (IQR/2) and was less than half its median")
    others = sorted({o.reason for o in measured if not o.subtracted and o.reason
                     and o.reason != SUBTRACTED})
    if others and all(r in _DECISIONS for r in others):
        text += f"; not subtracted elsewhere ({', or '.join(others)})"
    return text


_DECISIONS = ("within the noise", "half the median or more")


def _lab_kernel(lab: dict[str, Any]) -> dict[str, Any]:
    kernel = lab.get("kernel")
    return kernel if isinstance(kernel, dict) else {}


EMULATED_COUNTING = "emulated (QEMU {accel}, icount): instruction counts, not time"


def lab_lines(fingerprint: dict[str, Any]) -> list[str]:
    """What a lab run is (none for a real machine): the emulation and the lab group."""
    lab = fingerprint.get("lab")
    if not isinstance(lab, dict):
        return []
    accel = str(lab.get("accel") or "tcg").upper()
    if lab.get("mode") == LAB_COUNTING:
        first = EMULATED_COUNTING.format(accel=accel)
    else:
        first = f"emulated (QEMU {accel}, {fmt_field(lab.get('mode'))} mode): not a measurement"
    kernel = _lab_kernel(lab)
    sha = str(kernel.get("sha256") or "")
    emulator = " ".join(fmt_field(x) for x in (lab.get("emulator"), lab.get("emulator_version")))
    lines = [first,
             f"lab: {emulator} -M {fmt_field(lab.get('machine'))} -cpu {fmt_field(lab.get('cpu'))}, "
             f"smp {fmt_field(lab.get('smp'))}, accel {fmt_field(lab.get('accel'))}, "
             f"icount {fmt_field(lab.get('icount'))}, seed {fmt_field(lab.get('seed'))}",
             f"lab kernel: {fmt_field(kernel.get('source'))} {fmt_field(kernel.get('package'))} "
             f"{fmt_field(kernel.get('version'))}, {fmt_field(kernel.get('path'))} "
             f"(sha256 {sha[:16] + '…' if sha else DASH}); appended: "
             f"{fmt_field(lab.get('append'))}; variant: {fmt_field(lab.get('variant'))}"]
    # What in the guest changes the count: its command line and what it mitigates.
    lines.append(f"guest kernel: {fmt_field(_get(fingerprint, 'kernel', 'release'))}, command line: "
                 f"{fmt_field(_get(fingerprint, 'kernel', 'cmdline'))}")
    vulns = fingerprint.get("vulnerabilities")
    if isinstance(vulns, dict):
        active = [f"{k}: {v}" for k, v in sorted(vulns.items()) if v and v != "Not affected"]
        lines.append("guest mitigations: " + ("; ".join(active) if active
                                              else "none (the CPU model reports no flaw)"))
    return lines


SHOW_WIDE = "kcross show RUN --wide"


def run_footer(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]], *,
               wide: bool = False, details: str = SHOW_WIDE) -> Group:
    """The context needed to read the numbers: emulation (a lab run), mechanism, timer,
    counters, overhead, flags, CI.  Without ``wide`` each is one short line, and the
    flags' details and the skipped benchmarks' reasons are left to ``details`` (the
    command that shows them: ``kcross show 12 --wide``)."""
    from .stats import StatsError

    sc = fingerprint.get("syscall") or {}
    mechs = sorted({r["mechanism"] for r in results if r.get("mechanism")}) or [sc.get("mechanism")]
    mech = f"syscall mechanism: {_join(str(m) for m in mechs)}"
    if sc.get("forced"):
        mech += f" (forced: {sc['forced']})"
    if sc.get("available"):
        mech += f"; available: {_join(sc['available'])}"
    summaries = _summaries(results)
    forced = {k: v for k, v in (fingerprint.get("forced") or {}).items() if v is not None}
    if forced:
        mech += "; forced by the environment: " + _join(f"{k}={v}" for k, v in forced.items())
    lines = [*lab_lines(fingerprint), mech, f"timer: {timer_text(fingerprint)}"]
    overhead = _overhead_text(summaries, unit_of(fingerprint, results), wide)
    if wide:
        lines += [*_counters_text(fingerprint, results), overhead, *_flags_text(results)]
    else:
        flags = _flags_line(results, details)
        lines += [_counters_line(fingerprint, results), overhead,
                  *([flags] if flags else []), *_not_ok_lines(results, details)]
        declared = sorted({d for d in map(switches_per_op, results) if d is not None})
        if declared:
            lines.append(f"per switch: the median ÷ the context switches its op makes by design "
                         f"({_join(f'{d:g}' for d in declared)}: the op is a round trip)")
    coverage = []
    for summary in summaries:
        try:
            coverage.append(summary.ci.confidence)
        except StatsError:
            pass  # the table cell already says why this row has no interval
    processes = sorted({s.ci.processes for s in summaries if _has_ci(s)})
    if processes and processes[-1] > 1:
        k = "–".join(str(p) for p in dict.fromkeys((processes[0], processes[-1])))
        lines.append(f"CI95: Student's t over the {k} processes' medians (one observation "
                     "each); spread = IQR/median of all samples")
    elif coverage:
        lines.append("CI95: distribution-free order-statistic interval of the median, "
                     f"achieved coverage {min(coverage):.1%}–{max(coverage):.1%}; "
                     "spread = IQR/median")
    return Group(*(Text(line, style="dim") for line in lines))


def _has_ci(summary: Summary) -> bool:
    from .stats import StatsError

    try:
        return summary.ci is not None
    except StatsError:
        return False


def fmt_field(value: Any) -> str:
    """A fingerprint value for people: null/empty as a dash, booleans as yes/no."""
    if value is None or value == "":
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " ".join(str(v) for v in value) or DASH
    return str(value)


def _pair(fp: dict[str, Any], group: str, first: str, second: str) -> str:
    return f"{fmt_field(_get(fp, group, first))} / {fmt_field(_get(fp, group, second))}"


def _kv_table(title: str, rows: Iterable[tuple[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None,
                  title_style="bold", padding=(0, 2, 0, 0))
    table.add_column(style="cyan", no_wrap=True)
    table.add_column()
    for key, value in rows:
        _add_row(table, key, fmt_field(value))
    return table


def sysinfo(fp: dict[str, Any]) -> Group:
    """The fingerprint grouped by what a performance engineer checks first."""
    def g(*path: str) -> Any:
        return _get(fp, *path)
    flag = g("virtualization", "hypervisor_flag")
    virt = "unknown (hypervisor flag unreadable)" if flag is None else "no hypervisor detected"
    if flag:
        virt = " / ".join(str(x) for x in (g("virtualization", "hypervisor_type"),
                                          g("virtualization", "dmi_sys_vendor"),
                                          g("virtualization", "dmi_product_name")) if x)
    cpu = _kv_table("CPU", [
        ("arch", fp.get("arch")), ("model", g("cpu", "model")), ("vendor", g("cpu", "vendor")),
        ("family/model/stepping",
         "/".join(fmt_field(g("cpu", k)) for k in ("family", "model_id", "stepping"))),
        ("microcode", g("cpu", "microcode")), ("online / possible", _pair(fp, "cpu", "online", "possible")),
        ("flags", g("cpu", "flags")), ("SMT control / active", _pair(fp, "smt", "control", "active")),
        ("governor / driver", _pair(fp, "power", "governor", "driver")),
        ("isolcpus / nohz_full", _pair(fp, "isolation", "isolcpus", "nohz_full")),
        ("virtualization", virt)])
    kernel = _kv_table("Kernel and libc", [
        ("release", g("kernel", "release")), ("version", g("kernel", "version")),
        ("cmdline", g("kernel", "cmdline")),
        ("libc", f"{fmt_field(g('libc', 'name'))} {fmt_field(g('libc', 'version'))}"),
        ("hwcap / hwcap2", _pair(fp, "auxv", "hwcap", "hwcap2")),
        ("vDSO mapped", g("auxv", "sysinfo_ehdr"))])
    vulns = _kv_table("Mitigations (sysfs vulnerabilities)",
                      sorted((fp.get("vulnerabilities") or {}).items()))
    rseq = _kv_table("rseq", [
        ("registered", g("rseq", "registered")), ("owner", g("rseq", "owner")),
        ("size / libc __rseq_size", _pair(fp, "rseq", "size", "libc_size")),
        ("feature size / align", _pair(fp, "rseq", "feature_size", "align")),
        ("auxv feature size / align", _pair(fp, "auxv", "rseq_feature_size", "rseq_align"))])
    perf = fp.get("perf") or {}
    reasons = perf.get("reasons") or {}
    counter_rows: list[tuple[str, Any]] = [("perf_event_paranoid", perf.get("paranoid"))]
    for group in ("hardware", "software"):
        for event, ok in (perf.get(group) or {}).items():
            counter_rows.append((event, "available" if ok else
                                 f"unavailable: {reasons.get(event) or 'no reason given'}"))
    counters = _kv_table("perf counters", counter_rows)
    measure = _kv_table("Measurement", [
        ("syscall mechanism", g("syscall", "mechanism")),
        ("available mechanisms", g("syscall", "available")),
        ("forced", g("syscall", "forced")), ("timer", timer_text(fp)),
        ("kcross-harness", " ".join(str(x) for x in (g("kcross", "version"), g("kcross", "git_rev"),
                                                     g("kcross", "build"), g("kcross", "compiler")) if x)),
        ("host / time", _pair(fp, "host", "hostname", "time"))])
    parts: list[Table | Text] = [cpu, Text(), kernel, Text(), vulns, Text(), rseq, Text(),
                                 counters, Text(), measure]
    lab = fp.get("lab")
    if isinstance(lab, dict):
        kernel_info = _lab_kernel(lab)
        lab_table = _kv_table("Lab (emulated)", [
            ("emulation", lab_lines(fp)[0]),
            ("mode / unit", f"{fmt_field(lab.get('mode'))} / {fmt_field(lab.get('unit'))}"),
            ("emulator", " ".join(fmt_field(lab.get(k)) for k in ("emulator", "emulator_version"))),
            ("accel / icount / seed",
             " / ".join(fmt_field(lab.get(k)) for k in ("accel", "icount", "seed"))),
            ("machine / cpu / smp", " / ".join(fmt_field(lab.get(k)) for k in ("machine", "cpu", "smp"))),
            ("kernel", " ".join(fmt_field(kernel_info.get(k)) for k in ("source", "package", "version"))),
            ("kernel file", kernel_info.get("path")), ("kernel sha256", kernel_info.get("sha256")),
            ("appended to cmdline", lab.get("append")), ("variant", lab.get("variant"))])
        parts = [lab_table, Text(), *parts]
    return Group(*parts)


def machine_summary(run: RunSummary) -> str:
    parts = [run.hostname or "?", run.cpu_model or "unknown CPU", run.kernel_release or "?"]
    if run.hypervisor:
        emulated = run.unit != UNIT_NS or run.source == "lab"
        parts.append(f"{'emulated' if emulated else 'VM'} ({run.hypervisor})")
    return " · ".join(parts)


def runs_table(runs: Sequence[RunSummary]) -> Table:
    """One row per run.  A lab run shows its guest's arch and its variant (``kcross lab
    --mitigations`` stores one run per mitigation); the variant and tags columns appear
    only when a run has one."""
    from .store.refs import HASH_SHOWN  # loaded already: the runs came from the store

    table = Table(header_style="bold")
    shown_if = {"tags": any(run.tags for run in runs),
                "variant": any(run.variant for run in runs)}
    for name, justify in (("id", "right"), ("tags", "left"), ("started (UTC)", "left"),
                          ("status", "left"), ("source", "left"), ("arch", "left"),
                          ("variant", "left"), ("unit", "left"),
                          ("machine hash", "left"), ("machine", "left"),
                          ("benchmarks", "right")):
        if shown_if.get(name, True):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
    styles = {"complete": "green", "interrupted": "yellow", "failed": "red", "running": "cyan"}
    for run in runs:
        shown = run.state or run.status  # "dead (pid 123 gone)" for a stranded run
        tags = [Text(" ".join(run.tags), style="bold")] if shown_if["tags"] else []
        variant = [fmt_field(run.variant)] if shown_if["variant"] else []
        # The machine hash's prefix: what latest@PREFIX takes besides a hostname.
        _add_row(table, str(run.id), *tags, run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
                 Text(shown, style=styles.get(shown.split(" ")[0], "red")), run.source,
                 fmt_field(run.arch), *variant,
                 Text(run.unit, style="" if run.unit == UNIT_NS else "magenta"),
                 run.machine_hash[:HASH_SHOWN], machine_summary(run), str(run.results))
    return table


def bench_table(benches: Sequence[dict[str, Any]]) -> Table:
    table = Table(header_style="bold")
    for name in ("suite", "name", "summary", "available"):
        table.add_column(name)
    for b in benches:
        avail = Text("yes", style="green") if b["available"] else \
            Text(f"no: {b['reason']}", style="yellow")
        _add_row(table, b["suite"], b["name"], b["summary"], avail)
    return table


FITS = 120  # columns: the default run table and its footer lines are never wider


def print_run(console: Console, results: Sequence[dict[str, Any]], fingerprint: dict[str, Any],
              *, title: str, wide: bool = False, run_id: int | None = None,
              unit: str | None = None) -> None:
    """A run's table and footer, as ``kcross run`` and ``kcross show`` print it.

    Without ``wide`` the table and the footer's lines fit :data:`FITS` columns (or the
    console, if narrower), piped too; ``wide`` prints the full table at its natural width,
    however wide (for ``less -S``), never squeezed, and the footer's details.
    """
    table = results_table(results, title=title, unit=unit, wide=wide)
    width = console.width if wide else min(console.width, FITS)
    if wide:
        natural = Measurement.get(console, console.options.update_width(1 << 16), table).maximum
        if natural > console.width:
            table.width = natural
    console.print(table, crop=not wide, width=None if wide else width)
    details = SHOW_WIDE if run_id is None else f"kcross show {run_id} --wide"
    console.print(run_footer(fingerprint, results, wide=wide, details=details), width=width)
