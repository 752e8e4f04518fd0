"""The view of a machine's fingerprint: ``kcross sysinfo``'s tables, and the lines that say
what a lab run is (the emulation, its kernel) under a run's table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..schema import LAB_COUNTING
from ..schema import dig as _get
from .table import BARE, Column, Table, terminal
from .text import ELLIPSIS, NONE

if TYPE_CHECKING:
    from rich.console import RenderableType


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
             f"(sha256 {sha[:16] + ELLIPSIS if sha else NONE}); appended: "
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


def fmt_field(value: Any) -> str:
    """A fingerprint value for people: null/empty as a dash, booleans as yes/no."""
    if value is None or value == "":
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " ".join(str(v) for v in value) or NONE
    return str(value)


def _pair(fp: dict[str, Any], group: str, first: str, second: str) -> str:
    return f"{fmt_field(_get(fp, group, first))} / {fmt_field(_get(fp, group, second))}"


def _kv_table(title: str, rows: Iterable[tuple[str, Any]]) -> Table:
    table = Table([Column("", wrap=False, style="cyan"), Column("")], title=title,
                  frame=BARE, header=False, gap=2)
    for key, value in rows:
        table.add(key, fmt_field(value))
    return table


def sysinfo(fp: dict[str, Any]) -> RenderableType:
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
    parts = [cpu, kernel, vulns, rseq, counters, measure]
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
        parts = [lab_table, *parts]
    from rich.console import Group
    from rich.text import Text

    shown: list[Any] = []
    for table in parts:
        shown += [Text()] if shown else []
        shown.append(terminal(table))
    return Group(*shown)

