"""Is this machine ready to measure on?  ``kcross sysinfo --readiness`` and the warning of ``kcross run``.

Each check is a small function that reads /proc and /sys (under ``root``, so
tests point it at a fake tree) and returns a :class:`Finding`: its state, what
it saw and the command that fixes it.  Nothing here ever writes, starts a
program or changes the system: the fixes are printed, not applied.

Gathering and judging are apart: the checks read a :class:`Machine`, whose
files come from this machine's tree (:func:`run_checks`) or from the output
of :func:`gather_script` run elsewhere (``kcross run --remote``: the same
checks, the same line, about the remote machine; :func:`gathered`).

States:

- ``ok``: as it should be for measuring;
- ``warn``: something that moves or disturbs the figures and can be changed
  (``kcross sysinfo --readiness`` exits 1; ``kcross run`` names it in one line);
- ``info``: worth knowing, nothing to change for timing (a CPU that is not
  isolated but idle, hardware counters absent in a VM);
- ``unknown``: the machine does not say (no cpufreq in a VM, an unreadable file).

The measuring CPU is the one the harness pins to: ``--cpu C``, else the highest
CPU this process may run on (:func:`measuring_cpu`).  The busy SMT sibling, the
measuring CPU's own load, its IRQs and a VM's steal time come from two
readings of /proc/stat and /proc/interrupts ~100 ms apart (:func:`sample`).

pyperf's ``system show`` is the model; kcross adds the SMT sibling's load, the
IRQs actually arriving on the measuring CPU, THP, the NMI watchdog and whether
perf counters are usable.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import fingerprint as fields
from ..errors import UserError

OK, WARN, INFO, UNKNOWN = "ok", "warn", "info", "unknown"
STATES = (OK, WARN, INFO, UNKNOWN)

SAMPLE_SECONDS = 0.1
# A CPU at least this busy over the window is "busy". /proc/stat counts in ticks of 10 ms
# (USER_HZ), about 10 per CPU in 100 ms: one tick is noise (a kworker, a timer), three are not.
BUSY_PERCENT = 25.0
IRQ_PER_SECOND = 100.0     # device interrupts on the measuring CPU above this: warn
VM_VENDORS = ("qemu", "kvm", "vmware", "virtualbox", "innotek", "xen", "bochs", "parallels",
              "amazon ec2", "google compute engine", "openstack", "firecracker",
              "cloud hypervisor", "microsoft corporation virtual machine", "bhyve")
CPU_SYSFS = "sys/devices/system/cpu"


@dataclass(frozen=True)
class Finding:
    """One check's verdict."""

    name: str    # the check, e.g. "frequency governor"
    state: str   # ok | warn | info | unknown
    seen: str    # what the machine showed
    todo: str    # what to do about it (a command when there is one); "" when nothing
    short: str = ""  # a few words for the one-line warning of `kcross run` (warn only)

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Window:
    """Two readings of /proc/stat and /proc/interrupts ``seconds`` apart."""

    seconds: float
    stat: tuple[dict[int, list[int]], dict[int, list[int]]]
    # per IRQ source: (its description, counts by CPU number) before and after
    irqs: tuple[dict[str, tuple[str, dict[int, int]]], dict[str, tuple[str, dict[int, int]]]]

    def _ticks(self, cpu: int) -> list[int] | None:
        """CPU ``cpu``'s ticks over the window: user nice system idle iowait irq softirq
        steal (guest time is already in user and nice)."""
        before, after = self.stat[0].get(cpu), self.stat[1].get(cpu)
        if before is None or after is None:
            return None
        pad = [0] * 8
        return [b - a for a, b in zip((before + pad)[:8], (after + pad)[:8], strict=True)]

    def busy_percent(self, cpu: int) -> float | None:
        """Share of the window CPU ``cpu`` spent neither idle nor stolen, or None."""
        d = self._ticks(cpu)
        if d is None:
            return None
        total = sum(d)
        return 100.0 * (d[0] + d[1] + d[2] + d[5] + d[6]) / total if total > 0 else 0.0

    def steal_percent(self, cpu: int) -> float | None:
        """Share of the window the hypervisor gave CPU ``cpu``'s time to someone else."""
        d = self._ticks(cpu)
        if d is None:
            return None
        total = sum(d)
        return 100.0 * d[7] / total if total > 0 else 0.0

    def irq_rates(self, cpu: int) -> list[tuple[str, str, float]]:
        """(source, description, interrupts per second) on ``cpu``, busiest first."""
        before, after = self.irqs
        rates = []
        for source, (desc, counts) in after.items():
            if cpu not in counts:
                continue
            old = before.get(source, ("", {}))[1].get(cpu, counts[cpu])
            delta = counts[cpu] - old
            if delta > 0:
                rates.append((source, desc, delta / self.seconds))
        return sorted(rates, key=lambda r: (-r[2], r[0]))


@dataclass(frozen=True)
class Machine:
    """What every check reads: the tree, the measuring CPU, the harness's fingerprint
    (when there is one) and the sampled window (when sampling was done).  ``files``:
    the machine's files as gathered elsewhere (:func:`gathered`), read instead of
    ``root``'s."""

    root: Path
    cpu: int
    fingerprint: Mapping[str, Any] | None = None
    window: Window | None = None
    _cache: dict[str, str | None] = field(default_factory=dict, compare=False)
    files: Mapping[str, str] | None = None

    def read(self, path: str) -> str | None:
        """The text of ``root/path`` stripped, or None when it cannot be read. Read-only."""
        if self.files is not None:
            return self.files.get(path)
        if path not in self._cache:
            try:
                with open(self.root / path, encoding="utf-8", errors="replace") as f:
                    self._cache[path] = f.read().strip()
            except OSError:
                self._cache[path] = None
        return self._cache[path]

    def cpu_path(self, rest: str) -> str:
        return f"{CPU_SYSFS}/cpu{self.cpu}/{rest}"

    def fp(self, which: fields.Field) -> Any:
        """A field of the harness's fingerprint (None without one)."""
        return which.of(self.fingerprint)


# --- parsing -----------------------------------------------------------------------------

def parse_cpu_list(text: str | None) -> set[int]:
    """The kernel's CPU list syntax ("0-3,8,10-15:2/4"; "all" needs the CPU count, so
    it yields nothing here). Words that are not CPU ranges (isolcpus flags) are skipped."""
    cpus: set[int] = set()
    for part in (text or "").replace("\n", ",").split(","):
        part = part.strip()
        if not part:
            continue
        span, _, stride = part.partition(":")
        lo, _, hi = span.partition("-")
        try:
            first = int(lo)
            last = int(hi) if hi else first
            used, group = (int(x) for x in stride.split("/")) if stride else (1, 1)
        except ValueError:
            continue
        for base in range(first, last + 1, max(group, 1)):
            cpus.update(c for c in range(base, min(base + used, last + 1)))
    return cpus


def format_cpu_list(cpus: Iterable[int]) -> str:
    """The inverse of :func:`parse_cpu_list` for plain lists: {0,1,2,5} -> "0-2,5"."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def _bracketed(text: str | None) -> str | None:
    """The selected word of a sysfs choice file: "always [madvise] never" -> "madvise"."""
    if text is None:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip() or None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _cmdline_lists(cmdline: str | None) -> dict[str, set[int]]:
    """isolcpus=, nohz_full= and rcu_nocbs= of the kernel command line, as CPU sets."""
    found: dict[str, set[int]] = {}
    for word in (cmdline or "").split():
        if word == "--":
            break  # what follows is init's
        key, sep, value = word.partition("=")
        if sep and key in ("isolcpus", "nohz_full", "rcu_nocbs"):
            found[key] = parse_cpu_list(value)
    return found


def _read_stat(text: str | None) -> dict[int, list[int]]:
    cpus: dict[int, list[int]] = {}
    for line in (text or "").splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit():
            try:
                cpus[int(name[3:])] = [int(x) for x in rest.split()]
            except ValueError:
                continue
    return cpus


def _irq_name(words: list[str]) -> str:
    """A device IRQ's handlers without its chip and trigger ("IO-APIC 4-edge ttyS0" ->
    "ttyS0"); other lines' description as it is ("Local timer interrupts")."""
    for i in range(len(words) - 1, -1, -1):
        if words[i].endswith(("edge", "level", "Edge", "Level")) and i + 1 < len(words):
            return " ".join(words[i + 1:])
    return " ".join(words)


def _read_interrupts(text: str | None) -> dict[str, tuple[str, dict[int, int]]]:
    lines = (text or "").splitlines()
    if not lines:
        return {}
    columns = [int(h[3:]) for h in lines[0].split() if h.startswith("CPU") and h[3:].isdigit()]
    sources: dict[str, tuple[str, dict[int, int]]] = {}
    for line in lines[1:]:
        source, sep, rest = line.partition(":")
        if not sep:
            continue
        words = rest.split()
        counts: dict[int, int] = {}
        n = 0
        while n < min(len(words), len(columns)) and words[n].isdigit():
            counts[columns[n]] = int(words[n])
            n += 1
        sources[source.strip()] = (_irq_name(words[n:]), counts)
    return sources


def sample(root: Path | str = "/", seconds: float = SAMPLE_SECONDS,
           sleep: Callable[[float], None] = time.sleep) -> Window:
    """Read /proc/stat and /proc/interrupts, wait ``seconds``, read them again."""
    root = Path(root)
    probe = Machine(root, 0)

    def reading() -> tuple[dict[int, list[int]], dict[str, tuple[str, dict[int, int]]]]:
        probe._cache.clear()
        return _read_stat(probe.read("proc/stat")), _read_interrupts(probe.read("proc/interrupts"))

    stat0, irq0 = reading()
    sleep(seconds)
    stat1, irq1 = reading()
    return Window(seconds, (stat0, stat1), (irq0, irq1))


# --- what the machine is -------------------------------------------------------------------

def in_vm(m: Machine) -> tuple[bool | None, str]:
    """(True/False/None for unknown, the evidence), from the harness's fingerprint when it
    has a verdict, else from CPUID's hypervisor flag, /sys/hypervisor, DMI and the device tree."""
    evidence: list[str] = []
    flag = m.fp(fields.HYPERVISOR_FLAG)
    if flag is not None:
        if flag:
            evidence.append("hypervisor flag (CPUID, per the harness)")
        for named in (fields.HYPERVISOR_TYPE, fields.DMI_SYS_VENDOR, fields.DMI_PRODUCT_NAME):
            value = m.fp(named)
            if value and flag:
                evidence.append(str(value))
        if flag:
            return True, ", ".join(evidence)
    decidable = flag is not None
    cpuinfo = m.read("proc/cpuinfo")
    if cpuinfo is not None:
        for line in cpuinfo.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "flags":
                decidable = True
                if "hypervisor" in value.split():
                    evidence.append("hypervisor flag in /proc/cpuinfo")
                break
    hyp = m.read("sys/hypervisor/type")
    if hyp:
        evidence.append(f"/sys/hypervisor/type {hyp}")
    dmi = " ".join(filter(None, (m.read("sys/class/dmi/id/sys_vendor"),
                                 m.read("sys/class/dmi/id/product_name"))))
    if dmi:
        decidable = True
        if any(v in dmi.lower() for v in VM_VENDORS):
            evidence.append(f"DMI {dmi}")
    if m.read("proc/device-tree/hypervisor/compatible") is not None:
        evidence.append("device tree /hypervisor node")
    if evidence:
        return True, ", ".join(dict.fromkeys(evidence))
    if decidable:
        return False, "no hypervisor flag" + (f"; DMI {dmi}" if dmi else "")
    return None, "no CPUID hypervisor flag on this arch, no DMI, no /sys/hypervisor"


# --- the checks ----------------------------------------------------------------------------

def check_governor(m: Machine) -> Finding:
    name = "frequency governor"
    gov = m.read(m.cpu_path("cpufreq/scaling_governor"))
    if gov is None:
        vm, _ = in_vm(m)
        if vm:
            return Finding(name, UNKNOWN, "no cpufreq (the hypervisor controls frequency)",
                           "on the host: the performance governor for the CPUs running this VM")
        return Finding(name, UNKNOWN, f"no cpufreq for CPU {m.cpu} (no frequency driver: "
                       "firmware or hardware controls frequency)",
                       "check the firmware's power profile (BIOS: performance / "
                       "static high)")
    driver = m.read(m.cpu_path("cpufreq/scaling_driver"))
    lo, hi = (_int(m.read(m.cpu_path(f"cpufreq/scaling_{k}_freq"))) for k in ("min", "max"))
    seen = f"CPU {m.cpu}: {gov}" + (f" ({driver})" if driver else "")
    if lo and hi:
        seen += f", {lo / 1000:.0f}-{hi / 1000:.0f} MHz"
    if gov == "performance":
        return Finding(name, OK, seen, "")
    return Finding(name, WARN, seen + ": the clock follows the load, so a benchmark's "
                   "first batches run slower than its last",
                   f"sudo cpupower -c {m.cpu} frequency-set -g performance  (or: echo "
                   f"performance | sudo tee /{m.cpu_path('cpufreq/scaling_governor')})",
                   short=f"governor {gov}")


def check_turbo(m: Machine) -> Finding:
    name = "turbo / boost"
    no_turbo = m.read(f"{CPU_SYSFS}/intel_pstate/no_turbo")
    if no_turbo is not None:
        path, on = f"{CPU_SYSFS}/intel_pstate/no_turbo", no_turbo == "0"
        fix = f"echo 1 | sudo tee /{path}"
        seen = f"intel_pstate no_turbo={no_turbo}"
    else:
        for path in (m.cpu_path("cpufreq/boost"), f"{CPU_SYSFS}/cpufreq/boost"):
            boost = m.read(path)
            if boost is not None:
                break
        else:
            vm, _ = in_vm(m)
            if vm:
                return Finding(name, UNKNOWN, "no turbo control (the hypervisor controls "
                               "frequency)", "on the host: turbo off for the CPUs running "
                               "this VM")
            return Finding(name, UNKNOWN, "no turbo control exposed (no intel_pstate/no_turbo, "
                           "no cpufreq boost)", "if the CPU has turbo, turn it off in the "
                           "firmware (BIOS)")
        on = boost == "1"
        fix = f"echo 0 | sudo tee /{path}"
        seen = f"/{path}={boost}"
    if on:
        return Finding(name, WARN, f"{seen}: turbo on (the clock depends on temperature and "
                       "on the other cores' load)", fix, short="turbo on")
    return Finding(name, OK, f"{seen}: turbo off", "")


def check_smt_sibling(m: Machine) -> Finding:
    name = "SMT sibling"
    listed = m.read(m.cpu_path("topology/thread_siblings_list"))
    if listed is None:
        return Finding(name, UNKNOWN, f"no topology for CPU {m.cpu}", "")
    siblings = sorted(parse_cpu_list(listed) - {m.cpu})
    if not siblings:
        control = m.read(f"{CPU_SYSFS}/smt/control")
        return Finding(name, OK, f"CPU {m.cpu} has no SMT sibling"
                       + (f" (SMT {control})" if control else ""), "")
    if m.window is None:
        return Finding(name, INFO, f"sibling CPU {format_cpu_list(siblings)} (load not sampled)",
                       "")
    loads = {s: m.window.busy_percent(s) for s in siblings}
    busy = {s: p for s, p in loads.items() if p is not None and p >= BUSY_PERCENT}
    ms = round(m.window.seconds * 1000)
    if not busy:
        shown = ", ".join(f"CPU {s} {'offline' if p is None else f'{p:.0f}% busy'}"
                          for s, p in loads.items())
        return Finding(name, OK, f"sibling {shown} over {ms} ms", "")
    shown = ", ".join(f"CPU {s} {p:.0f}% busy" for s, p in busy.items())
    offline = " ".join(f"echo 0 | sudo tee /{CPU_SYSFS}/cpu{s}/online;" for s in busy)
    return Finding(name, WARN, f"sibling {shown} over {ms} ms: it shares CPU {m.cpu}'s core "
                   "(pipelines, caches)",
                   f"pick a CPU whose sibling is idle (kcross run --cpu C), or take the sibling "
                   f"offline: {offline.rstrip(';')}  (all SMT: echo off | sudo tee "
                   f"/{CPU_SYSFS}/smt/control)",
                   short=f"SMT sibling {shown}")


def check_isolation(m: Machine) -> Finding:
    name = "CPU isolation"
    isolated_text = m.read(f"{CPU_SYSFS}/isolated")
    nohz_text = m.read(f"{CPU_SYSFS}/nohz_full")
    cmdline = _cmdline_lists(m.read("proc/cmdline"))
    isolated = m.cpu in parse_cpu_list(isolated_text) or m.cpu in cmdline.get("isolcpus", set())
    nohz = m.cpu in parse_cpu_list(nohz_text) or m.cpu in cmdline.get("nohz_full", set())
    nocbs = m.cpu in cmdline.get("rcu_nocbs", set())
    if isolated_text is None and not cmdline and m.read("proc/cmdline") is None:
        return Finding(name, UNKNOWN, "neither /sys/devices/system/cpu/isolated nor "
                       "/proc/cmdline readable", "")
    parts = [f"isolcpus {'yes' if isolated else 'no'}", f"nohz_full {'yes' if nohz else 'no'}",
             f"rcu_nocbs {'yes' if nocbs else 'no'}"]
    busy = m.window.busy_percent(m.cpu) if m.window is not None else None
    if busy is not None:
        parts.append(f"{busy:.0f}% busy over {round(m.window.seconds * 1000)} ms"  # type: ignore[union-attr]
                     )
    seen = f"CPU {m.cpu}: " + ", ".join(parts)
    boot = (f"boot with isolcpus={m.cpu} nohz_full={m.cpu} rcu_nocbs={m.cpu} (GRUB_CMDLINE_LINUX "
            "in /etc/default/grub, update-grub, reboot)")
    shield = (f"or at run time: sudo cset shield --cpu {m.cpu} --kthread on, then sudo cset "
              f"shield --exec -- kcross run --cpu {m.cpu}")
    if busy is not None and busy >= BUSY_PERCENT:
        return Finding(name, WARN, seen + ": other tasks run there and will preempt the "
                       "benchmark", f"{boot}; {shield}; or pick an idle CPU with "
                       "kcross run --cpu C", short=f"CPU {m.cpu} {busy:.0f}% busy")
    if isolated:
        todo = "" if nohz and nocbs else \
            f"for no timer tick and no RCU callbacks there too: nohz_full={m.cpu} rcu_nocbs={m.cpu}"
        return Finding(name, OK, seen, todo)
    return Finding(name, INFO, seen + ": the scheduler may put other tasks there",
                   f"{boot}; {shield}")


def check_aslr(m: Machine) -> Finding:
    name = "ASLR"
    value = _int(m.read("proc/sys/kernel/randomize_va_space"))
    fix = ("sudo sysctl -w kernel.randomize_va_space=2  (to fix the layout of kcross alone: "
           "setarch -R kcross run)")
    if value is None:
        return Finding(name, UNKNOWN, "/proc/sys/kernel/randomize_va_space unreadable", "")
    if value == 2:
        return Finding(name, OK, "full randomization (2, the default)", "")
    what = "disabled (0)" if value == 0 else f"partial ({value}: heap not randomized)"
    return Finding(name, WARN, f"{what}, system-wide: not the layout a normal process gets, "
                   "and less safe", fix, short="ASLR " + ("off" if value == 0 else "partial"))


def check_thp(m: Machine) -> Finding:
    name = "transparent huge pages"
    base = "sys/kernel/mm/transparent_hugepage"
    enabled, defrag = _bracketed(m.read(f"{base}/enabled")), _bracketed(m.read(f"{base}/defrag"))
    if enabled is None:
        return Finding(name, OK, "not in this kernel", "")
    seen = f"enabled {enabled}, defrag {defrag or '?'}"
    fixes, shorts = [], []
    if enabled == "always":
        fixes.append(f"echo madvise | sudo tee /{base}/enabled")
        shorts.append("THP always")
    if defrag == "always":
        fixes.append(f"echo madvise | sudo tee /{base}/defrag")
        shorts.append("THP defrag always")
    if fixes:
        return Finding(name, WARN, seen + ": khugepaged and compaction run in the background, "
                       "page faults cost what the allocator finds", "; ".join(fixes),
                       short=", ".join(shorts))
    return Finding(name, OK, seen, "")


def check_nmi_watchdog(m: Machine) -> Finding:
    name = "NMI watchdog"
    value = _int(m.read("proc/sys/kernel/nmi_watchdog"))
    if value is None:
        return Finding(name, OK, "absent (no hard-lockup detector in this kernel)", "")
    if value == 0:
        return Finding(name, OK, "off", "")
    return Finding(name, WARN, "on: a periodic NMI on every CPU, and it holds one hardware "
                   "counter for itself", "sudo sysctl -w kernel.nmi_watchdog=0",
                   short="NMI watchdog on")


def _irqbalance_running(m: Machine) -> bool:
    if m.files is not None:
        pids = [p.split("/")[1] for p in m.files if p.startswith("proc/")
                and p.endswith("/comm") and p.split("/")[1].isdigit()]
    else:
        try:
            pids = [p for p in os.listdir(m.root / "proc") if p.isdigit()]
        except OSError:
            return False
    return any(m.read(f"proc/{pid}/comm") == "irqbalance" for pid in pids)


def check_irqs(m: Machine) -> Finding:
    name = "IRQs on the measuring CPU"
    if m.window is None:
        return Finding(name, UNKNOWN, "not sampled", "")
    rates = m.window.irq_rates(m.cpu)
    if not m.window.irqs[1]:
        return Finding(name, UNKNOWN, "/proc/interrupts unreadable", "")
    devices = [r for r in rates if r[0].isdigit()]
    others = sum(r[2] for r in rates if not r[0].isdigit())
    total = sum(r[2] for r in devices)
    ms = round(m.window.seconds * 1000)
    balance = _irqbalance_running(m)
    top = ", ".join(f"{src} {desc or '?'} {rate:.0f}/s" for src, desc, rate in devices[:3])
    seen = (f"CPU {m.cpu}: device IRQs {total:.0f}/s over {ms} ms"
            + (f" ({top})" if top else "") + f"; timer and IPIs {others:.0f}/s"
            + ("; irqbalance running" if balance else ""))
    if total < IRQ_PER_SECOND:
        return Finding(name, OK, seen, "")
    cpus = m.read(f"{CPU_SYSFS}/online")
    rest = format_cpu_list(parse_cpu_list(cpus) - {m.cpu}) or "0"
    moves = "; ".join(f"echo {rest} | sudo tee /proc/irq/{src}/smp_affinity_list"
                      for src, _, _ in devices[:3])
    todo = f"move them to other CPUs: {moves}"
    if balance:
        todo += (f"; keep irqbalance from moving them back: IRQBALANCE_BANNED_CPULIST={m.cpu} "
                 "in /etc/default/irqbalance, then sudo systemctl restart irqbalance")
    return Finding(name, WARN, seen, todo + " (or pick another CPU: kcross run --cpu C)",
                   short=f"IRQs on CPU {m.cpu} {total:.0f}/s")


def _privileged(m: Machine) -> bool:
    """CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in this process's effective set."""
    for line in (m.read("proc/self/status") or "").splitlines():
        if line.startswith("CapEff:"):
            try:
                caps = int(line.split()[1], 16)
            except (IndexError, ValueError):
                return False
            return bool(caps & (1 << 38) or caps & (1 << 21))
    return False


def check_perf(m: Machine) -> Finding:
    name = "perf counters"
    paranoid = m.fp(fields.PERF_PARANOID)
    if paranoid is None:
        paranoid = _int(m.read("proc/sys/kernel/perf_event_paranoid"))
    fix = "sudo sysctl -w kernel.perf_event_paranoid=1  (or run as root, or grant CAP_PERFMON)"
    hardware = fields.PERF_HARDWARE.members(m.fingerprint)
    if hardware:
        software = fields.PERF_SOFTWARE.members(m.fingerprint)
        reasons = fields.PERF_REASONS.members(m.fingerprint)
        denied = sorted(e for e, ok in {**hardware, **software}.items()
                        if not ok and "not permitted" in str(reasons.get(e, "")))
        have = [e for e, ok in hardware.items() if ok]
        seen = (f"hardware {len(have)} of {len(hardware)} events, software "
                f"{sum(bool(v) for v in software.values())} of {len(software)} "
                f"(perf_event_paranoid {paranoid}, as the harness found them)")
        if denied:
            return Finding(name, WARN, f"{seen}; not permitted: {', '.join(denied)}", fix,
                           short="perf counters not permitted")
        if have:
            return Finding(name, OK, seen, "")
        why = sorted({str(reasons.get(e) or "no reason given") for e in hardware})
        return Finding(name, INFO, f"{seen}; software only: {'; '.join(why)}",
                       "nothing to change here (counts need a PMU: bare metal, or a VM "
                       "that exposes one, e.g. QEMU/KVM -cpu host)")
    if paranoid is None:
        return Finding(name, UNKNOWN, "/proc/sys/kernel/perf_event_paranoid unreadable "
                       "(no perf events in this kernel?)", "")
    if paranoid <= 1 or _privileged(m):
        return Finding(name, OK, f"perf_event_paranoid {paranoid}"
                       + (" (privileged)" if paranoid > 1 else ""), "")
    return Finding(name, WARN, f"perf_event_paranoid {paranoid}: kernel-side counts (:k) "
                   "need 1 or less", fix, short="perf counters not permitted")


def check_vm(m: Machine) -> Finding:
    name = "virtual machine"
    vm, evidence = in_vm(m)
    if vm is None:
        return Finding(name, UNKNOWN, evidence, "")
    if not vm:
        return Finding(name, OK, f"bare metal ({evidence})", "")
    steal = m.window.steal_percent(m.cpu) if m.window is not None else None
    if steal:
        evidence += f"; steal {steal:.0f}% of CPU {m.cpu} over {round(m.window.seconds * 1000)} ms"  # type: ignore[union-attr]
    return Finding(name, WARN, f"in a VM: {evidence}; figures include the hypervisor's exits "
                   "and its scheduling of vCPUs",
                   "compare runs from the same host and VM type only; pin the vCPUs on the "
                   "host (e.g. virsh vcpupin); for the kernel's own cost run on bare metal",
                   short="in a VM")


Check = Callable[[Machine], Finding]
CHECKS: tuple[Check, ...] = (check_governor, check_turbo, check_smt_sibling, check_isolation,
                             check_aslr, check_thp, check_nmi_watchdog, check_irqs, check_perf,
                             check_vm)
# What `kcross run` looks at: what moves the timings (counters do not; the run's footer
# already says which ones are missing).
RUN_CHECKS: tuple[Check, ...] = tuple(c for c in CHECKS if c is not check_perf)


def _status_cpus(status: str | None) -> set[int]:
    """``Cpus_allowed_list`` of a /proc/PID/status text; empty when it has none."""
    for line in (status or "").splitlines():
        key, _, value = line.partition(":")
        if key == "Cpus_allowed_list" and parse_cpu_list(value):
            return parse_cpu_list(value)
    return set()


def allowed_cpus(root: Path | str = "/") -> set[int]:
    """The CPUs this process may run on: its affinity (under a test's tree, the tree's
    /proc/self/status ``Cpus_allowed_list`` when it has one)."""
    if Path(root) != Path("/"):
        listed = _status_cpus(Machine(Path(root), 0).read("proc/self/status"))
        if listed:
            return listed
    return set(os.sched_getaffinity(0))


def sysroot() -> str:
    """Where the readiness checks read /proc and /sys: ``$KCROSS_TEST_SYSROOT`` (a copy,
    for tests), else ``/``."""
    return os.environ.get("KCROSS_TEST_SYSROOT") or "/"


def measuring_cpu(requested: int | None = None, root: Path | str = "/", *,
                  allowed: set[int] | None = None, whose: str = "this process's") -> int:
    """The CPU the harness pins to: ``--cpu C``, else the highest one this process may use.

    The harness's own rule (harness/threads.c: a CPU of the affinity it started with),
    applied before anything starts by every command that picks a measuring CPU (run,
    sysinfo --readiness, ab, aa, crosscheck): :class:`UserError` for one it may not use.
    ``allowed``: another process's CPUs (a remote shell's, :func:`gathered`), named
    ``whose`` in the error.
    """
    if allowed is None:
        allowed = allowed_cpus(root)
    if requested is None:
        return max(allowed)
    if requested not in allowed:
        raise UserError(f"cannot pin to CPU {requested}: not in {whose} allowed CPUs "
                        f"({format_cpu_list(allowed)})")
    return requested


def run_checks(root: Path | str = "/", cpu: int | None = None,
               fingerprint: Mapping[str, Any] | None = None,
               checks: Sequence[Check] = CHECKS, seconds: float | None = SAMPLE_SECONDS,
               sleep: Callable[[float], None] = time.sleep) -> list[Finding]:
    """Every check's finding for CPU ``cpu``; ``seconds=None`` skips the sampled checks'
    window (they say "not sampled").  A check that trips over an unexpected file reports
    ``unknown`` instead of stopping the others."""
    root = Path(root)
    window = sample(root, seconds, sleep) if seconds is not None else None
    return judge(Machine(root, measuring_cpu(cpu, root), fingerprint, window), checks)


def judge(machine: Machine, checks: Sequence[Check] = CHECKS) -> list[Finding]:
    """Each check's finding on ``machine``, however its files were gathered."""
    findings = []
    for check in checks:
        try:
            findings.append(check(machine))
        except Exception as exc:  # noqa: BLE001 - a check must never stop a run
            label = check.__name__.removeprefix("check_").replace("_", " ")
            findings.append(Finding(label, UNKNOWN, f"could not check: {type(exc).__name__}: "
                                    f"{exc}", ""))
    return findings


def warnings(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.state == WARN]


def warning_line(findings: Iterable[Finding], cpu: int | None = None,
                 where: str | None = None) -> str | None:
    """The one stderr line of `kcross run`, or None when nothing warns.  ``where``: the
    machine, when it is not this one (a ``--remote`` host's URL)."""
    shorts = [f.short or f.name for f in warnings(findings)]
    if not shorts:
        return None
    hint = "kcross sysinfo --readiness" + (f" --cpu {cpu}" if cpu is not None else "")
    if where is not None:
        return f"kcross: {where}: machine not tuned: {', '.join(shorts)} — see '{hint}' there"
    return f"kcross: machine not tuned: {', '.join(shorts)} — see '{hint}'"


def not_tuned(cpu: int | None) -> str | None:
    """The one line ``kcross run``, ``ab`` and ``aa`` print (unless ``--no-readiness``)
    when this machine is not tuned for measuring on CPU ``cpu`` (None: the harness's
    default CPU), or None: :data:`RUN_CHECKS` under :func:`sysroot`."""
    return warning_line(run_checks(sysroot(), cpu, checks=RUN_CHECKS), cpu)


# --- another machine's files: gathered by a shell script, judged here ----------------------

# Every file the checks read, as shell globs relative to the root: what gather_script
# prints for a machine kcross cannot read itself.  A test runs every check on a recording
# Machine and fails on a file read that no pattern here covers.
SAMPLED = ("proc/stat", "proc/interrupts")
GATHERED = (
    "proc/cpuinfo", "sys/hypervisor/type", "sys/class/dmi/id/sys_vendor",
    "sys/class/dmi/id/product_name", "proc/device-tree/hypervisor/compatible",
    *(f"{CPU_SYSFS}/{name}" for name in ("intel_pstate/no_turbo", "cpufreq/boost",
                                         "smt/control", "isolated", "nohz_full", "online")),
    *(f"{CPU_SYSFS}/cpu[0-9]*/{name}" for name in (
        "cpufreq/scaling_governor", "cpufreq/scaling_driver", "cpufreq/scaling_min_freq",
        "cpufreq/scaling_max_freq", "cpufreq/boost", "topology/thread_siblings_list")),
    "proc/cmdline", "proc/sys/kernel/randomize_va_space",
    "sys/kernel/mm/transparent_hugepage/enabled", "sys/kernel/mm/transparent_hugepage/defrag",
    "proc/sys/kernel/nmi_watchdog", "proc/sys/kernel/perf_event_paranoid", "proc/self/status",
    "proc/[0-9]*/comm",
)
_COUNTS, _LINES, _WINDOW, _REST, _END = ("@@kcross-counts", "@@kcross-lines",
                                         "@@kcross-window ", "@@kcross-files", "@@kcross-end")


def gather_script() -> str:
    """A POSIX sh script printing what the checks read on the machine it runs on: /proc/stat
    and /proc/interrupts, again :data:`SAMPLE_SECONDS` later (1 s where ``sleep`` takes
    whole seconds only), then every :data:`GATHERED` file.  Each set of files is two
    ``grep`` processes however many files (a server's thousands of /proc/PID/comm): one
    counts each readable file's lines (``PATH:N``, so an empty file is told from a missing
    one), the other prints them (``PATH:LINE``).  It only reads (``grep``, ``sleep``).
    Under ``$KCROSS_TEST_SYSROOT`` when set there, as :func:`sysroot` here."""
    def files(patterns: Sequence[str]) -> str:
        return "g " + " ".join(patterns)

    return "; ".join((
        'cd "${KCROSS_TEST_SYSROOT:-/}" || exit 0',
        f"g() {{ echo '{_COUNTS}'; grep -H -a -c '' -- \"$@\" 2>/dev/null; "
        f"echo '{_LINES}'; grep -H -a '' -- \"$@\" 2>/dev/null; }}",
        files(SAMPLED),
        f"if sleep {SAMPLE_SECONDS:g} 2>/dev/null; then s={SAMPLE_SECONDS:g}; "
        "else sleep 1; s=1; fi",
        f"echo \"{_WINDOW}$s\"",
        files(SAMPLED),
        f"echo '{_REST}'",
        files(GATHERED),
        f"echo '{_END}'",
    ))


@dataclass(frozen=True)
class Gathered:
    """What :func:`gather_script` printed: the files and the sampled window."""

    files: dict[str, str]
    window: Window | None

    def machine(self, cpu: int | None = None, fingerprint: Mapping[str, Any] | None = None,
                whose: str = "this process's") -> Machine | None:
        """The machine to judge, its measuring CPU by the harness's rule applied to the
        gathering shell's affinity (``--cpu C``: :class:`UserError` for one it may not
        use, the error naming ``whose`` CPUs they are); None when the gathered files do
        not say which CPUs it had."""
        allowed = _status_cpus(self.files.get("proc/self/status"))
        if not allowed:
            return None
        measuring = measuring_cpu(cpu, allowed=allowed, whose=whose)
        return Machine(Path("/"), measuring, fingerprint, self.window, files=self.files)


def gathered(text: str) -> Gathered:
    """Read :func:`gather_script`'s output (lines before its first marker and after its
    last are ignored)."""
    readings: list[dict[str, list[str]]] = [{}, {}]
    rest: dict[str, list[str]] = {}
    seconds: float | None = None
    target: dict[str, list[str]] = readings[0]
    section = ""
    for line in text.splitlines():
        if line.startswith(_WINDOW):
            try:
                seconds = float(line[len(_WINDOW):])
            except ValueError:
                seconds = None
            target, section = readings[1], ""
        elif line == _REST:
            target, section = rest, ""
        elif line == _END:
            target, section = {}, ""
        elif line in (_COUNTS, _LINES):
            section = line
        elif section:
            path, colon, value = line.partition(":")
            if not colon:
                continue
            if section == _COUNTS:
                target[path] = []      # readable, perhaps empty
            elif path in target:
                target[path].append(value)
    texts = [{path: "\n".join(lines).strip() for path, lines in found.items()}
             for found in (*readings, rest)]
    files = texts[2]
    window = None
    if seconds and seconds > 0:
        before, after = texts[0], texts[1]
        window = Window(seconds, (_read_stat(before.get("proc/stat")),
                                  _read_stat(after.get("proc/stat"))),
                        (_read_interrupts(before.get("proc/interrupts")),
                         _read_interrupts(after.get("proc/interrupts"))))
    for path in SAMPLED:  # the checks read the later reading, as Machine.read would now
        if path in texts[1]:
            files[path] = texts[1][path]
    return Gathered(files, window)


def as_json(findings: Sequence[Finding], cpu: int) -> dict[str, Any]:
    return {"type": "readiness", "cpu": cpu, "warnings": len(warnings(findings)),
            "findings": [f.as_dict() for f in findings]}
