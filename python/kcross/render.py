"""Rich renderings of results, fingerprints, runs and the benchmark registry.

Pure functions from records to rich renderables, shared by ``run`` and
``show`` so that a stored run looks exactly like a live one.  Where a figure
cannot be computed, the cell says why (the :class:`StatsError` message)
instead of showing a number or leaving it blank.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from .schema import LAB_COUNTING, UNIT_INSTRUCTIONS, UNIT_NS, unit_of
from .schema import dig as _get
from .stats import SUBTRACTED, StatsError, Summary, summarize_record

if TYPE_CHECKING:  # only a type: importing the store would load SQLAlchemy for `list`
    from .store import RunSummary

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


def _add_row(table: Table, *cells: str | Text) -> None:
    """Add a row whose plain strings are literal text: names and reasons may contain '['."""
    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))


def _error(message: str) -> Text:
    return Text(message, style="yellow")


SW_EVENTS = (("context-switches", "csw"), ("cpu-migrations", "mig"), ("page-faults", "pf"))


def _counters_cell(record: dict[str, Any]) -> str:
    """Per-op hardware counters that could be opened (``cyc:k 812``), then the
    totals of the disturbance-related software counters over all samples
    (``csw 3 mig 0 pf 0``): per op those would print as zero."""
    parts = []
    for event in HW_EVENTS:
        counter = record["counters"].get(event)
        if counter is None or counter.get("per_op") is None:
            continue
        base, _, mode = event.partition(":")
        star = "*" if counter.get("scaled") else ""
        parts.append(f"{SHORT_EVENT.get(base, base)}:{mode} {counter['per_op']:.4g}{star}")
    for event, short in SW_EVENTS:
        counter = record["counters"].get(event)
        if counter is not None and counter.get("total") is not None:
            parts.append(f"{short} {counter['total']}")
    return " ".join(parts) or DASH


def switches_per_op(record: dict[str, Any]) -> float | None:
    """The context switches one iteration of ``record`` declares (result-format.md), or None."""
    value = record.get("switches_per_op")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _per_switch_cell(record: dict[str, Any], median: float, unit: str) -> str:
    """The median per switch, with what it was divided by and what the kernel counted:
    ``3,807 (op ÷ 2; counted 2.01)``."""
    declared = switches_per_op(record)
    if declared is None:
        return DASH
    counted = record.get("switches_counted_per_op")
    seen = f"counted {counted:.3g}" if isinstance(counted, (int, float)) else "not counted"
    return f"{format_value(median / declared, unit)} (op ÷ {declared:g}; {seen})"


def results_table(results: Sequence[dict[str, Any]], title: str | None = None,
                  unit: str | None = None) -> Table:
    """One row per benchmark: median, CI of the median (±% of it), min, spread, N...

    The median column names the unit (``median ns/op``, ``median instructions/op``):
    ``unit``, else the results' own.  A result in another unit (only in a database
    edited by hand: a stream never mixes them) carries its unit in its cells.  When a
    result declares context switches per op (``switches_per_op``), the op is a round
    trip and a ``per switch`` column beside the median shows the median divided by them.
    """
    unit = unit or unit_of(None, results)
    with_switches = any(switches_per_op(rec) for rec in results)
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("benchmark", no_wrap=True)
    if with_switches:
        table.add_column(f"median {unit} (per op: round trip)", justify="right")
        table.add_column(f"per switch ({unit.split('/')[0]}/switch)", justify="right")
    else:
        table.add_column(f"median {unit}", justify="right")
    table.add_column("CI95 of median", justify="right")
    table.add_column("min", justify="right")
    table.add_column("spread", justify="right")
    table.add_column("N", justify="right")
    table.add_column("disturbed", justify="right")
    table.add_column("counters/op")
    table.add_column("status")
    for rec in results:
        label = f"{rec['suite']}/{rec['name']}"
        if rec["status"] != "ok":
            style = "dim" if rec["status"] == "skipped" else "red"
            _add_row(table, label, *([DASH] * with_switches), DASH, DASH, DASH, DASH,
                     str(len(rec["samples"])), DASH, DASH,
                     Text(f"{rec['status']}: {rec['reason']}", style=style))
            continue
        samples = rec["samples"]
        disturbed = str(len(rec["disturbed"])) if rec["disturbed"] else "0"
        try:
            summary = summarize_record(rec)
        except StatsError as exc:
            _add_row(table, label, _error(str(exc)), *([DASH] * with_switches), DASH, DASH, DASH,
                     str(len(samples)), disturbed, _counters_cell(rec), "ok")
            continue
        try:
            ci = summary.ci
            med = summary.median
            lo = (ci.low - med) / med * 100 if med else 0.0
            hi = (ci.high - med) / med * 100 if med else 0.0
            ci_cell: str | Text = f"{lo:+.1f}% {hi:+.1f}%"
        except StatsError as exc:
            ci_cell = _error(str(exc))
        try:
            spread_cell: str | Text = f"{summary.spread:.1%}"
        except StatsError as exc:
            spread_cell = _error(str(exc))
        own = rec.get("unit") or UNIT_NS
        suffix = "" if own == unit else f" {own}"
        median_cell = format_value(summary.median, own)
        if summary.overhead.subtracted:
            median_cell += OVERHEAD_MARK
        median_cell += suffix
        flags = [f.get("flag", "?") for f in rec.get("flags") or []]
        status = Text("ok" + "".join(f" ⚑{name}" for name in flags),
                      style="yellow" if flags else "")
        switch_cells = [_per_switch_cell(rec, summary.median, own)] if with_switches else []
        _add_row(table, label, median_cell, *switch_cells, ci_cell,
                 format_value(summary.min, own) + suffix, spread_cell,
                 str(summary.n), disturbed, _counters_cell(rec), status)
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


def _counters_text(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]]) -> list[str]:
    """Which counters were measured; missing hardware counters are explained, not alarming."""
    opened, missing = counters_measured(fingerprint, results)
    lines = [f"counters measured: {_join(sorted(opened))}"]
    hw_missing = [e for e in HW_EVENTS if e in missing]
    if hw_missing:
        reasons = sorted({missing[e] for e in hw_missing})
        which = "all" if len(hw_missing) == len(HW_EVENTS) else _join(hw_missing)
        line = f"hardware counters unavailable ({which}): " + "; ".join(reasons)
        if isinstance(fingerprint.get("lab"), dict):
            pass   # the lab set the guest's counters aside itself, and its reason says why
        elif _get(fingerprint, "virtualization", "hypervisor_flag"):
            vm = _get(fingerprint, "virtualization", "hypervisor_type") or "a hypervisor"
            line += f" (normal under {vm}: most VMs expose no PMU)"
        lines.append(line)
    other = sorted(e for e in missing if e not in HW_EVENTS)
    if other:
        lines.append("other counters unavailable: "
                     + "; ".join(f"{e}: {missing[e]}" for e in other))
    return lines


def _summaries(results: Sequence[dict[str, Any]]) -> list[Summary]:
    """The summaries of the results that have figures (the table says why the others lack them)."""
    summaries = []
    for rec in results:
        if rec["status"] == "ok":
            try:
                summaries.append(summarize_record(rec))
            except StatsError:
                pass
    return summaries


def _overhead_text(summaries: Sequence[Summary], unit: str = UNIT_NS) -> str:
    """One line: the empty-loop cost range and where it was subtracted (each benchmark's
    decision follows the statistics rule; see kcross.stats)."""
    measured = [s.overhead for s in summaries if s.overhead.median is not None]
    if not measured:
        return "overhead: no measured benchmark"
    values = sorted(o.median for o in measured if o.median is not None)
    span = format_value(values[0], unit) if values[0] == values[-1] else \
        f"{format_value(values[0], unit)}–{format_value(values[-1], unit)}"
    subtracted = sum(1 for o in measured if o.subtracted)
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


def run_footer(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]]) -> Group:
    """The context needed to read the numbers: emulation (a lab run), mechanism, timer,
    counters, overhead, CI."""
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
    lines = [*lab_lines(fingerprint), mech, f"timer: {timer_text(fingerprint)}",
             *_counters_text(fingerprint, results),
             _overhead_text(summaries, unit_of(fingerprint, results)), *_flags_text(results)]
    coverage = []
    for summary in summaries:
        try:
            coverage.append(summary.ci.confidence)
        except StatsError:
            pass  # the table cell already says why this row has no interval
    processes = sorted({s.ci.processes for s in summaries if _has_ci(s)})
    if processes and processes[-1] > 1:
        k = "–".join(str(p) for p in dict.fromkeys((processes[0], processes[-1])))
        lines.append(f"CI95: Student's t over the {k} processes' medians (each process one "
                     "observation of the run); spread = IQR/median of all samples")
    elif coverage:
        lines.append("CI95: distribution-free order-statistic interval of the median, "
                     f"achieved coverage {min(coverage):.1%}–{max(coverage):.1%}; "
                     "spread = IQR/median")
    return Group(*(Text(line, style="dim") for line in lines))


def _has_ci(summary: Summary) -> bool:
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
    from .store.refs import HASH_SHOWN  # loaded already: the runs came from the store

    table = Table(header_style="bold")
    tagged = any(run.tags for run in runs)
    for name, justify in (("id", "right"), ("tags", "left"), ("started (UTC)", "left"),
                          ("status", "left"), ("source", "left"), ("unit", "left"),
                          ("machine hash", "left"), ("machine", "left"),
                          ("benchmarks", "right")):
        if name != "tags" or tagged:
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
    styles = {"complete": "green", "interrupted": "yellow", "failed": "red", "running": "cyan"}
    for run in runs:
        shown = run.state or run.status  # "dead (pid 123 gone)" for a stranded run
        tags = [Text(" ".join(run.tags), style="bold")] if tagged else []
        # The machine hash's prefix: what latest@PREFIX takes besides a hostname.
        _add_row(table, str(run.id), *tags, run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
                      Text(shown, style=styles.get(shown.split(" ")[0], "red")), run.source,
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
