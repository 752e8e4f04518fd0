"""The view of a machine's fingerprint: ``kcross sysinfo``'s tables, the lines that say
what a lab run is (the emulation, its kernel) under a run's table, and the wording of
its fields that the run's footer and the HTML report share.

Every field is read through kcross.fingerprint's registry and written by its kind
(kcross.views.text.shown_value); a field the registry does not know (a newer harness's)
is shown by its path in a table of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import fingerprint as fields
from ..fingerprint import Field
from ..schema import LAB_COUNTING
from .table import BARE, Column, Table, terminal
from .text import ELLIPSIS, NONE, frequency, shown_value

if TYPE_CHECKING:
    from rich.console import RenderableType

Fingerprint = Mapping[str, Any]

# How many hex digits of the lab kernel's SHA-256 a line has room for.
KERNEL_SHA_SHOWN = 16


def value(fp: Fingerprint, field: Field) -> str:
    """One field as people read it."""
    return shown_value(field.of(fp), field.kind)


def values(fp: Fingerprint, *fs: Field, sep: str = " / ") -> str:
    """Fields written together in one cell: ``notsupported / 0``."""
    return sep.join(value(fp, f) for f in fs)


def timer_text(fingerprint: Fingerprint) -> str:
    text = str(fields.TIMER_SOURCE.of(fingerprint) or "unknown")
    hz = fields.TIMER_HZ.of(fingerprint)
    if hz:
        text += f" @ {frequency(hz)}"
    invariant = fields.TIMER_INVARIANT.of(fingerprint)
    if invariant is not None:
        text += ", invariant" if invariant else ", NOT invariant"
    against = fields.CALIBRATED_AGAINST.of(fingerprint)
    if against:
        text += f"; calibrated against {against}"
        error = fields.CALIBRATION_ERROR.of(fingerprint)
        if error is not None:
            text += f" ({error:g} ppm)"
    return text


def harness_text(fp: Fingerprint) -> str:
    """The kcross-harness that measured: version, revision, build, compiler."""
    parts = (f.of(fp) for f in (fields.KCROSS_VERSION, fields.KCROSS_REVISION,
                                fields.KCROSS_BUILD, fields.KCROSS_COMPILER))
    return " ".join(str(x) for x in parts if x)


def libc_text(fp: Fingerprint) -> str:
    return values(fp, fields.LIBC_NAME, fields.LIBC_VERSION, sep=" ")


def hypervisor_text(fp: Fingerprint) -> str:
    """What the harness saw of a hypervisor: its type and the DMI names when it saw one."""
    flag = fields.HYPERVISOR_FLAG.of(fp)
    if flag is None:
        return "unknown (hypervisor flag unreadable)"
    if not flag:
        return "no hypervisor detected"
    parts = (f.of(fp) for f in (fields.HYPERVISOR_TYPE, fields.DMI_SYS_VENDOR,
                                fields.DMI_PRODUCT_NAME))
    return " / ".join(str(p) for p in parts if p) or "hypervisor (type unknown)"


def active_mitigations(fp: Fingerprint) -> list[str] | None:
    """The vulnerabilities the kernel mitigates or is exposed to (``name: text``), None when
    they could not be read."""
    vulns = fields.VULNERABILITIES.of(fp)
    if not isinstance(vulns, Mapping):
        return None
    return [f"{k}: {v}" for k, v in sorted(vulns.items()) if v and v != "Not affected"]


def mechanism_text(fp: Fingerprint, results: Sequence[Mapping[str, Any]]) -> str:
    """The syscall mechanism the results name (else the fingerprint's), its forcing and
    the mechanisms available."""
    mechs = sorted({r["mechanism"] for r in results if r.get("mechanism")})
    text = ", ".join(mechs) or value(fp, fields.SYSCALL_MECHANISM)
    forced = fields.SYSCALL_FORCED.of(fp)
    if forced:
        text += f" (forced: {forced})"
    available = fields.SYSCALL_AVAILABLE.of(fp)
    if available:
        text += f"; available: {', '.join(str(m) for m in available)}"
    return text


def forced_settings(fp: Fingerprint) -> list[str]:
    """The settings the environment forced: ``KCROSS_SYSCALL=sc``."""
    return [f"{k}={v}" for k, v in fields.FORCED.members(fp).items() if v is not None]


def kernel_sha_text(fp: Fingerprint) -> str:
    sha = str(fields.LAB_KERNEL_SHA256.of(fp) or "")
    return sha[:KERNEL_SHA_SHOWN] + ELLIPSIS if sha else NONE


EMULATED_COUNTING = "emulated (QEMU {accel}, icount): instruction counts, not time"


def lab_lines(fingerprint: Fingerprint) -> list[str]:
    """What a lab run is (none for a real machine): the emulation and the lab group."""
    if fields.lab(fingerprint) is None:
        return []
    accel = str(fields.LAB_ACCEL.of(fingerprint) or "tcg").upper()
    if fields.LAB_MODE.of(fingerprint) == LAB_COUNTING:
        first = EMULATED_COUNTING.format(accel=accel)
    else:
        first = f"emulated (QEMU {accel}, {value(fingerprint, fields.LAB_MODE)} mode): not a " \
                "measurement"

    def v(field: Field) -> str:
        return value(fingerprint, field)
    # the Debian release, when the run names one (runs made before there were releases do not)
    release = f"{v(fields.LAB_KERNEL_RELEASE)} " if fields.LAB_KERNEL_RELEASE.of(fingerprint) else ""
    lines = [first,
             f"lab: {values(fingerprint, fields.LAB_EMULATOR, fields.LAB_EMULATOR_VERSION, sep=' ')} "
             f"-M {v(fields.LAB_MACHINE)} -cpu {v(fields.LAB_CPU)}, smp {v(fields.LAB_SMP)}, "
             f"accel {v(fields.LAB_ACCEL)}, icount {v(fields.LAB_ICOUNT)}, seed {v(fields.LAB_SEED)}",
             f"lab kernel: {v(fields.LAB_KERNEL_SOURCE)} {release}{v(fields.LAB_KERNEL_PACKAGE)} "
             f"{v(fields.LAB_KERNEL_VERSION)}, {v(fields.LAB_KERNEL_PATH)} "
             f"(sha256 {kernel_sha_text(fingerprint)}); appended: "
             f"{v(fields.LAB_APPEND)}; variant: {v(fields.LAB_VARIANT)}"]
    # What in the guest changes the count: its command line and what it mitigates.
    lines.append(f"guest kernel: {v(fields.KERNEL_RELEASE)}, command line: "
                 f"{v(fields.KERNEL_CMDLINE)}")
    active = active_mitigations(fingerprint)
    if active is not None:
        lines.append("guest mitigations: " + ("; ".join(active) if active
                                              else "none (the CPU model reports no flaw)"))
    return lines


def lab_rows(fp: Fingerprint, *, whole: bool) -> list[tuple[str, str]]:
    """The lab group as rows (sysinfo's table, the report's facts); ``whole``: with the
    kernel file and its whole SHA-256, else its first digits."""
    kernel = [("kernel file", value(fp, fields.LAB_KERNEL_PATH)),
              ("kernel sha256", value(fp, fields.LAB_KERNEL_SHA256))] if whole \
        else [("kernel sha256", kernel_sha_text(fp))]
    # what newer runs record of the kernel (absent from runs made before: no row)
    kernel += [(name, value(fp, f)) for name, f in (
        ("kernel configuration sha256", fields.LAB_KERNEL_CONFIG_SHA256),
        ("kernel version string", fields.LAB_KERNEL_VERSION_STRING)) if f.of(fp) is not None]
    return [
        ("emulation", lab_lines(fp)[0]),
        ("mode / unit", values(fp, fields.LAB_MODE, fields.LAB_UNIT)),
        ("emulator", values(fp, fields.LAB_EMULATOR, fields.LAB_EMULATOR_VERSION, sep=" ")),
        ("accel / icount / seed", values(fp, fields.LAB_ACCEL, fields.LAB_ICOUNT, fields.LAB_SEED)),
        ("machine / cpu / smp", values(fp, fields.LAB_MACHINE, fields.LAB_CPU, fields.LAB_SMP)),
        ("kernel", values(fp, fields.LAB_KERNEL_SOURCE, *(
            [fields.LAB_KERNEL_RELEASE] if fields.LAB_KERNEL_RELEASE.of(fp) else []),
            fields.LAB_KERNEL_PACKAGE, fields.LAB_KERNEL_VERSION, sep=" ")),
        *kernel,
        ("appended to cmdline", value(fp, fields.LAB_APPEND)),
        ("variant", value(fp, fields.LAB_VARIANT))]


def unknown_rows(fp: Fingerprint) -> list[tuple[str, str]]:
    """The fields this kcross does not know (a newer harness's), by their paths."""
    return [(".".join(path), shown_value(v)) for path, v in fields.unknown(fp)]


def _kv_table(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    table = Table([Column("", wrap=False, style="cyan"), Column("")], title=title,
                  frame=BARE, header=False, gap=2)
    for key, text in rows:
        table.add(key, text)
    return table


def _counter_rows(fp: Fingerprint) -> list[tuple[str, str]]:
    reasons = fields.PERF_REASONS.members(fp)
    rows = [("perf_event_paranoid", value(fp, fields.PERF_PARANOID))]
    for group in (fields.PERF_HARDWARE, fields.PERF_SOFTWARE):
        for event, ok in group.members(fp).items():
            rows.append((event, "available" if ok else
                         f"unavailable: {reasons.get(event) or 'no reason given'}"))
    return rows


def sysinfo(fp: Fingerprint) -> RenderableType:
    """The fingerprint grouped by what a performance engineer checks first."""
    f = fields
    cpu = _kv_table("CPU", [
        ("arch", value(fp, f.ARCH)), ("model", value(fp, f.CPU_MODEL)),
        ("vendor", value(fp, f.CPU_VENDOR)),
        ("family/model/stepping", values(fp, f.CPU_FAMILY, f.CPU_MODEL_ID, f.CPU_STEPPING,
                                         sep="/")),
        ("microcode", value(fp, f.CPU_MICROCODE)),
        ("online / possible", values(fp, f.CPU_ONLINE, f.CPU_POSSIBLE)),
        ("flags", value(fp, f.CPU_FLAGS)),
        ("SMT control / active", values(fp, f.SMT_CONTROL, f.SMT_ACTIVE)),
        ("governor / driver", values(fp, f.GOVERNOR, f.FREQUENCY_DRIVER)),
        ("isolcpus / nohz_full", values(fp, f.ISOLCPUS, f.NOHZ_FULL)),
        ("virtualization", hypervisor_text(fp))])
    kernel = _kv_table("Kernel and libc", [
        ("release", value(fp, f.KERNEL_RELEASE)), ("version", value(fp, f.KERNEL_VERSION)),
        ("cmdline", value(fp, f.KERNEL_CMDLINE)), ("libc", libc_text(fp)),
        ("hwcap / hwcap2", values(fp, f.HWCAP, f.HWCAP2)),
        ("vDSO mapped", value(fp, f.VDSO_MAPPED))])
    vulns = _kv_table("Mitigations (sysfs vulnerabilities)",
                      [(k, shown_value(v)) for k, v in sorted(f.VULNERABILITIES.members(fp).items())])
    rseq = _kv_table("rseq", [
        ("registered", value(fp, f.RSEQ_REGISTERED)), ("owner", value(fp, f.RSEQ_OWNER)),
        ("size / libc __rseq_size", values(fp, f.RSEQ_SIZE, f.RSEQ_LIBC_SIZE)),
        ("feature size / align", values(fp, f.RSEQ_FEATURE_SIZE, f.RSEQ_ALIGN)),
        ("auxv feature size / align", values(fp, f.AUXV_RSEQ_FEATURE_SIZE, f.AUXV_RSEQ_ALIGN))])
    counters = _kv_table("perf counters", _counter_rows(fp))
    measure = _kv_table("Measurement", [
        ("syscall mechanism", value(fp, f.SYSCALL_MECHANISM)),
        ("available mechanisms", value(fp, f.SYSCALL_AVAILABLE)),
        ("forced", value(fp, f.SYSCALL_FORCED)), ("timer", timer_text(fp)),
        ("kcross-harness", harness_text(fp) or NONE),
        ("host / time", values(fp, f.HOSTNAME, f.HOST_TIME))])
    parts = [cpu, kernel, vulns, rseq, counters, measure]
    if f.lab(fp) is not None:
        parts = [_kv_table("Lab (emulated)", lab_rows(fp, whole=True)), *parts]
    unknown = unknown_rows(fp)
    if unknown:
        parts.append(_kv_table("Fields this kcross does not know", unknown))
    from rich.console import Group
    from rich.text import Text

    shown: list[Any] = []
    for table in parts:
        shown += [Text()] if shown else []
        shown.append(terminal(table))
    return Group(*shown)
