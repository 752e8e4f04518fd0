"""Machine readiness (kcross sysinfo --readiness, the warning of kcross run): every check on fake
/proc and /sys trees in its ok and warn states, the module never writing, and once on this
machine."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, HANG, Kcross, assert_one_line_error
from kcross.errors import UserError
from kcross.run import readiness as r

CPU = 3        # the measuring CPU of the fake machine (8 CPUs, SMT pairs n and n+4)
SIBLING = 7
CPUS = "/sys/devices/system/cpu"


def stat_text(loads: dict[int, tuple[int, int, int]]) -> str:
    """/proc/stat with cpuN lines of (busy user ticks, idle ticks, steal ticks)."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    for cpu in range(8):
        user, idle, steal = loads.get(cpu, (0, 0, 0))
        lines.append(f"cpu{cpu} {user} 0 0 {idle} 0 0 0 {steal} 0 0")
    return "\n".join(lines + ["intr 0", "ctxt 0"]) + "\n"


def interrupts_text(counts: dict[str, int]) -> str:
    """/proc/interrupts of 8 CPUs; ``counts`` of the measuring CPU's column by source."""
    names = {"45": "IR-PCI-MSI 524288-edge      eth0-rx-3",
             "46": "IR-PCI-MSI 1048576-edge      nvme0q4",
             "LOC": "Local timer interrupts", "RES": "Rescheduling interrupts"}
    lines = ["           " + "".join(f"CPU{c:<8}" for c in range(8))]
    for source, desc in names.items():
        cols = "".join(f"{(counts.get(source, 0) if c == CPU else 5):>11}" for c in range(8))
        lines.append(f"{source:>4}:{cols}   {desc}")
    lines.append(" ERR:          0")
    return "\n".join(lines) + "\n"


# A bare-metal machine tuned as kcross wants it; the load and IRQs are the second reading.
TUNED: dict[str, str] = {
    f"{CPUS}/cpu{CPU}/cpufreq/scaling_governor": "performance",
    f"{CPUS}/cpu{CPU}/cpufreq/scaling_driver": "intel_pstate",
    f"{CPUS}/cpu{CPU}/cpufreq/scaling_min_freq": "3600000",
    f"{CPUS}/cpu{CPU}/cpufreq/scaling_max_freq": "3600000",
    f"{CPUS}/intel_pstate/no_turbo": "1",
    f"{CPUS}/cpu{CPU}/topology/thread_siblings_list": f"{CPU},{SIBLING}",
    f"{CPUS}/online": "0-7",
    f"{CPUS}/isolated": f"{CPU},{SIBLING}",
    f"{CPUS}/nohz_full": f"{CPU},{SIBLING}",
    "/proc/cmdline": f"BOOT_IMAGE=/vmlinuz ro isolcpus=domain,managed_irq,{CPU},{SIBLING} "
                     f"nohz_full={CPU},{SIBLING} rcu_nocbs={CPU},{SIBLING} quiet",
    "/proc/sys/kernel/randomize_va_space": "2",
    "/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
    "/sys/kernel/mm/transparent_hugepage/defrag": "always defer defer+madvise [madvise] never",
    "/proc/sys/kernel/nmi_watchdog": "0",
    "/proc/sys/kernel/perf_event_paranoid": "1",
    "/proc/cpuinfo": "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx2\n",
    "/sys/class/dmi/id/sys_vendor": "Dell Inc.",
    "/sys/class/dmi/id/product_name": "PowerEdge R650",
    "/proc/stat": stat_text({}),
    "/proc/interrupts": interrupts_text({}),
    "/proc/1/comm": "systemd",
    "/proc/self/status": "Name:\tkcross\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n",
}
IDLE_AFTER = {"/proc/stat": stat_text({c: (1, 99, 0) for c in range(8)}),
              "/proc/interrupts": interrupts_text({"LOC": 25})}


def make_tree(root: Path, files: dict[str, str | None]) -> Path:
    for path, text in files.items():
        target = root / path.lstrip("/")
        if text is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + ("" if text.endswith("\n") else "\n"))
    return root


def check(tmp_path: Path, changes: dict[str, str | None] | None = None,
          after: dict[str, str] | None = None, fingerprint: dict[str, Any] | None = None,
          cpu: int = CPU) -> dict[str, r.Finding]:
    """The findings on the tuned tree with ``changes``; ``after`` is the second reading of
    /proc/stat and /proc/interrupts (idle by default)."""
    root = make_tree(tmp_path / "root", {**TUNED, **(changes or {})})
    second = {**IDLE_AFTER, **(after or {})}
    findings = r.run_checks(root, cpu, fingerprint,
                            sleep=lambda s: make_tree(root, second))  # type: ignore[arg-type]
    assert len(findings) == len(r.CHECKS)
    return {f.name: f for f in findings}


def test_tuned_machine_is_all_ok(tmp_path: Path) -> None:
    found = check(tmp_path)
    assert {n: f.state for n, f in found.items() if f.state != r.OK} == {}
    assert r.warning_line(found.values()) is None
    assert found["CPU isolation"].seen == ("CPU 3: isolcpus yes, nohz_full yes, rcu_nocbs yes, "
                                          "1% busy over 100 ms")
    assert found["SMT sibling"].seen == "sibling CPU 7 1% busy over 100 ms"
    assert found["frequency governor"].seen == "CPU 3: performance (intel_pstate), 3600-3600 MHz"
    assert "device IRQs 0/s" in found["IRQs on the measuring CPU"].seen
    assert "timer and IPIs 250/s" in found["IRQs on the measuring CPU"].seen
    assert found["virtual machine"].seen == "bare metal (no hypervisor flag; DMI Dell Inc. " \
                                            "PowerEdge R650)"


# (check, changes to the tuned tree, second reading, the warn's short words, in its fix)
WARNS: list[tuple[str, dict[str, str | None], dict[str, str], str, str]] = [
    ("frequency governor", {f"{CPUS}/cpu{CPU}/cpufreq/scaling_governor": "powersave"}, {},
     "governor powersave", f"sudo cpupower -c {CPU} frequency-set -g performance"),
    ("turbo / boost", {f"{CPUS}/intel_pstate/no_turbo": "0"}, {},
     "turbo on", f"echo 1 | sudo tee {CPUS}/intel_pstate/no_turbo"),
    ("turbo / boost", {f"{CPUS}/intel_pstate/no_turbo": None, f"{CPUS}/cpufreq/boost": "1"}, {},
     "turbo on", f"echo 0 | sudo tee {CPUS}/cpufreq/boost"),
    ("turbo / boost", {f"{CPUS}/intel_pstate/no_turbo": None,
                       f"{CPUS}/cpu{CPU}/cpufreq/boost": "1", f"{CPUS}/cpufreq/boost": "0"}, {},
     "turbo on", f"echo 0 | sudo tee {CPUS}/cpu{CPU}/cpufreq/boost"),
    ("SMT sibling", {}, {"/proc/stat": stat_text({CPU: (1, 99, 0), SIBLING: (60, 40, 0)})},
     "SMT sibling CPU 7 60% busy", f"echo 0 | sudo tee {CPUS}/cpu7/online"),
    ("CPU isolation", {f"{CPUS}/isolated": "", f"{CPUS}/nohz_full": None,
                       "/proc/cmdline": "BOOT_IMAGE=/vmlinuz ro quiet"},
     {"/proc/stat": stat_text({CPU: (35, 65, 0)})},
     "CPU 3 35% busy", "isolcpus=3 nohz_full=3 rcu_nocbs=3"),
    ("ASLR", {"/proc/sys/kernel/randomize_va_space": "0"}, {}, "ASLR off",
     "sudo sysctl -w kernel.randomize_va_space=2"),
    ("ASLR", {"/proc/sys/kernel/randomize_va_space": "1"}, {}, "ASLR partial",
     "sudo sysctl -w kernel.randomize_va_space=2"),
    ("transparent huge pages", {"/sys/kernel/mm/transparent_hugepage/enabled":
                                "[always] madvise never"}, {}, "THP always",
     "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled"),
    ("transparent huge pages", {"/sys/kernel/mm/transparent_hugepage/defrag":
                                "[always] defer defer+madvise madvise never"}, {},
     "THP defrag always", "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/defrag"),
    ("NMI watchdog", {"/proc/sys/kernel/nmi_watchdog": "1"}, {}, "NMI watchdog on",
     "sudo sysctl -w kernel.nmi_watchdog=0"),
    ("IRQs on the measuring CPU", {}, {"/proc/interrupts": interrupts_text(
        {"45": 40, "46": 3, "LOC": 25, "RES": 2})}, "IRQs on CPU 3 430/s",
     "echo 0-2,4-7 | sudo tee /proc/irq/45/smp_affinity_list"),
    ("perf counters", {"/proc/sys/kernel/perf_event_paranoid": "3", "/proc/self/status":
                       "Name:\tpython3\nCpus_allowed_list:\t0-7\n"
                       "CapEff:\t0000000000000000\n"}, {},
     "perf counters not permitted", "sudo sysctl -w kernel.perf_event_paranoid=1"),
    ("virtual machine", {"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu hypervisor\n"}, {},
     "in a VM", "run on bare metal"),
    ("virtual machine", {"/sys/class/dmi/id/sys_vendor": "QEMU",
                         "/sys/class/dmi/id/product_name": "Standard PC (Q35 + ICH9, 2009)"},
     {}, "in a VM", "virsh vcpupin"),
]


@pytest.mark.parametrize("name, changes, after, short, fix", WARNS,
                         ids=[f"{w[0]}-{w[3]}" for w in WARNS])
def test_each_check_warns_with_its_fix(tmp_path: Path, name: str, changes: dict[str, str | None],
                                       after: dict[str, str], short: str, fix: str) -> None:
    found = check(tmp_path, changes, after)
    finding = found[name]
    assert finding.state == r.WARN, finding
    assert finding.short == short and fix in finding.todo, finding
    others = {n: f.state for n, f in found.items() if n != name and f.state == r.WARN}
    assert others == {}, "one change, one warning"
    line = r.warning_line(found.values(), cpu=CPU)
    assert line == f"kcross: machine not tuned: {short} — see 'kcross sysinfo --readiness --cpu 3'"


def test_irq_warning_names_the_top_sources_and_irqbalance(tmp_path: Path) -> None:
    busy = {"/proc/interrupts": interrupts_text({"45": 40, "46": 3, "LOC": 25, "RES": 2})}
    found = check(tmp_path, {"/proc/4242/comm": "irqbalance"}, busy)["IRQs on the measuring CPU"]
    assert found.seen == ("CPU 3: device IRQs 430/s over 100 ms (45 eth0-rx-3 400/s, 46 nvme0q4 "
                          "30/s); timer and IPIs 270/s; irqbalance running")
    assert "IRQBALANCE_BANNED_CPULIST=3" in found.todo
    assert "/proc/irq/46/smp_affinity_list" in found.todo
    quiet = check(tmp_path / "q", {"/proc/4242/comm": "irqbalance"})["IRQs on the measuring CPU"]
    assert quiet.state == r.OK and quiet.seen.endswith("; irqbalance running")


def test_sibling_and_isolation_states_that_are_not_warnings(tmp_path: Path) -> None:
    alone = check(tmp_path / "a", {f"{CPUS}/cpu{CPU}/topology/thread_siblings_list": "3",
                                   f"{CPUS}/smt/control": "off"})["SMT sibling"]
    assert (alone.state, alone.seen) == (r.OK, "CPU 3 has no SMT sibling (SMT off)")
    idle = check(tmp_path / "b", {f"{CPUS}/isolated": "", f"{CPUS}/nohz_full": None,
                                  "/proc/cmdline": "ro quiet"})["CPU isolation"]
    assert idle.state == r.INFO and "isolcpus=3 nohz_full=3 rcu_nocbs=3" in idle.todo
    assert idle.seen.startswith("CPU 3: isolcpus no, nohz_full no, rcu_nocbs no, 1% busy")
    # isolated by the boot line alone (an older kernel without /sys/.../isolated), no nohz_full
    partial = check(tmp_path / "c", {f"{CPUS}/isolated": None, f"{CPUS}/nohz_full": None,
                                     "/proc/cmdline": "isolcpus=2-3 -- nohz_full=3"})
    assert partial["CPU isolation"].state == r.OK
    assert "nohz_full no" in partial["CPU isolation"].seen  # after "--" it is init's argument
    assert "nohz_full=3 rcu_nocbs=3" in partial["CPU isolation"].todo


def test_one_or_two_ticks_are_not_busy(tmp_path: Path) -> None:
    """/proc/stat counts 10 ms ticks: 1-2 of ~10 in the window are noise, 3 are load."""
    not_isolated = {f"{CPUS}/isolated": "", f"{CPUS}/nohz_full": None, "/proc/cmdline": "ro"}
    noise = check(tmp_path / "n", not_isolated,
                  {"/proc/stat": stat_text({CPU: (1, 9, 0), SIBLING: (2, 8, 0)})})
    assert (noise["CPU isolation"].state, noise["SMT sibling"].state) == (r.INFO, r.OK)
    load = check(tmp_path / "l", not_isolated,
                 {"/proc/stat": stat_text({CPU: (3, 7, 0), SIBLING: (3, 7, 0)})})
    assert (load["CPU isolation"].state, load["SMT sibling"].state) == (r.WARN, r.WARN)
    assert r.warning_line(load.values()) == ("kcross: machine not tuned: SMT sibling CPU 7 30% "
                                             "busy, CPU 3 30% busy — see 'kcross sysinfo --readiness'")


def test_frequency_unknown_without_cpufreq(tmp_path: Path) -> None:
    gone = {f"{CPUS}/cpu{CPU}/cpufreq/scaling_governor": None,
            f"{CPUS}/cpu{CPU}/cpufreq/scaling_driver": None, f"{CPUS}/intel_pstate/no_turbo": None}
    vm = check(tmp_path / "vm", {**gone, "/proc/cpuinfo": "flags\t: fpu hypervisor\n"})
    assert (vm["frequency governor"].state, vm["frequency governor"].seen) == \
        (r.UNKNOWN, "no cpufreq (the hypervisor controls frequency)")
    assert vm["turbo / boost"].state == r.UNKNOWN and "hypervisor" in vm["turbo / boost"].seen
    metal = check(tmp_path / "metal", gone)
    assert metal["frequency governor"].state == r.UNKNOWN
    assert "firmware" in metal["frequency governor"].seen


def test_perf_from_the_harness_fingerprint(tmp_path: Path) -> None:
    def perf(hw: bool, reason: str, sw: bool = True) -> dict[str, Any]:
        hardware = {e: hw for e in ("cycles:u", "cycles:k")}
        return {"perf": {"paranoid": 2, "hardware": hardware, "software": {"task-clock": sw},
                         "reasons": {} if hw else {e: reason for e in hardware}}}

    ok = check(tmp_path / "1", fingerprint=perf(True, ""))["perf counters"]
    assert ok.state == r.OK and ok.seen.startswith("hardware 2 of 2 events, software 1 of 1")
    no_pmu = check(tmp_path / "2", fingerprint=perf(False, "not supported by this CPU or "
                                                   "hypervisor (no PMU exposed)"))
    assert no_pmu["perf counters"].state == r.INFO
    assert "no PMU exposed" in no_pmu["perf counters"].seen
    denied = check(tmp_path / "3", fingerprint=perf(False, "not permitted (perf_event_paranoid "
                                                    "or missing CAP_PERFMON)"))["perf counters"]
    assert denied.state == r.WARN and "not permitted: cycles:k, cycles:u" in denied.seen
    assert "kernel.perf_event_paranoid=1" in denied.todo
    # without a fingerprint: the sysctl, and the process's capabilities
    privileged = check(tmp_path / "4", {"/proc/sys/kernel/perf_event_paranoid": "2",
                                        "/proc/self/status": "Cpus_allowed_list:\t0-7\n"
                                                             "CapEff:\t000001ffffffffff\n"})
    assert privileged["perf counters"].state == r.OK


def test_vm_from_the_fingerprint_and_unknown_without_evidence(tmp_path: Path) -> None:
    fp = {"virtualization": {"hypervisor_flag": True, "hypervisor_type": "KVM",
                             "dmi_sys_vendor": None, "dmi_product_name": None}}
    vm = check(tmp_path / "fp", fingerprint=fp)["virtual machine"]
    assert vm.state == r.WARN and vm.seen.startswith("in a VM: hypervisor flag (CPUID, per the "
                                                     "harness), KVM;")
    # an arch without CPUID's flag, no DMI, no device-tree node: the machine does not say
    arm = check(tmp_path / "arm", {"/proc/cpuinfo": "processor\t: 0\nFeatures\t: fp asimd\n",
                                   "/sys/class/dmi/id/sys_vendor": None,
                                   "/sys/class/dmi/id/product_name": None})
    assert arm["virtual machine"].state == r.UNKNOWN
    dt = check(tmp_path / "dt", {"/proc/cpuinfo": "processor\t: 0\n",
                                 "/proc/device-tree/hypervisor/compatible": "linux,kvm",
                                 "/sys/class/dmi/id/sys_vendor": None})
    assert dt["virtual machine"].state == r.WARN
    steal = check(tmp_path / "steal", {"/proc/cpuinfo": "flags\t: hypervisor\n"},
                  {"/proc/stat": stat_text({CPU: (1, 89, 10)})})["virtual machine"]
    assert "steal 10% of CPU 3 over 100 ms" in steal.seen


def test_unreadable_or_odd_files_give_unknown_not_a_crash(tmp_path: Path) -> None:
    odd = check(tmp_path, {"/proc/sys/kernel/randomize_va_space": "garbage",
                           f"{CPUS}/cpu{CPU}/topology/thread_siblings_list": None,
                           "/proc/interrupts": "", "/proc/stat": "nonsense\n"},
                after={"/proc/interrupts": "", "/proc/stat": "nonsense\n"})
    assert odd["ASLR"].state == r.UNKNOWN
    assert odd["SMT sibling"].state == r.UNKNOWN
    assert odd["IRQs on the measuring CPU"].state == r.UNKNOWN

    def broken(m: r.Machine) -> r.Finding:
        raise ValueError("unexpected format")

    root = make_tree(tmp_path / "b", TUNED)
    (finding,) = r.run_checks(root, CPU, checks=[broken], seconds=None)
    assert (finding.name, finding.state) == ("broken", r.UNKNOWN)
    assert "ValueError: unexpected format" in finding.seen
    unsampled = r.run_checks(root, CPU, seconds=None)
    assert {f.name: f.state for f in unsampled}["IRQs on the measuring CPU"] == r.UNKNOWN


def test_never_writes_nor_starts_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check, in its warn states, on a tree nothing may write to: any open for writing
    or any program started fails the test (file modes alone would not stop root)."""
    root = make_tree(tmp_path / "root", {**TUNED, **{k: v for w in WARNS for k, v in w[1].items()
                                                     if v is not None}})
    for path in sorted(root.rglob("*"), reverse=True):
        path.chmod(0o555 if path.is_dir() else 0o444)
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        if any(c in mode for c in "wax+"):
            raise AssertionError(f"readiness opened {file} with mode {mode!r}")
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND):
            raise AssertionError(f"readiness os.open({path}) for writing")
        return real_os_open(path, flags, *args, **kwargs)

    def no_programs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"readiness started a program: {args}")

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    monkeypatch.setattr(subprocess, "Popen", no_programs)
    monkeypatch.setattr(os, "system", no_programs)
    findings = r.run_checks(root, CPU, sleep=lambda s: None)
    assert opened and all(p.startswith(str(root)) for p in opened), opened[:5]
    assert {f.state for f in findings} >= {r.WARN}
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}
    r.run_checks(root, CPU, sleep=lambda s: None)
    assert before == {p: (p.stat().st_mtime_ns, p.read_bytes())
                      for p in root.rglob("*") if p.is_file()}
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def test_parsers() -> None:
    assert r.parse_cpu_list("0-3,8,10-15:2/4") == {0, 1, 2, 3, 8, 10, 11, 14, 15}
    assert r.parse_cpu_list("domain,managed_irq,2-3") == {2, 3}
    assert r.parse_cpu_list("") == set() and r.parse_cpu_list(None) == set()
    assert r.format_cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    real = ("           CPU0       CPU1       \n"
            " 26:          0         15  IO-APIC   4-edge      ttyS0\n"
            " 36:          0    5801021 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
            " 16:    3  4   IO-APIC  16-fasteoi   ehci_hcd:usb1, uhci_hcd:usb2\n"
            "LOC:    6285304    6379974   Local timer interrupts\n"
            "ERR:          0\n")
    parsed = r._read_interrupts(real)
    assert parsed["26"] == ("ttyS0", {0: 0, 1: 15})
    assert parsed["36"] == ("virtio1-req.0", {0: 0, 1: 5801021})
    assert parsed["LOC"] == ("Local timer interrupts", {0: 6285304, 1: 6379974})
    assert parsed["ERR"] == ("", {0: 0})
    assert parsed["16"][1] == {0: 3, 1: 4}


def test_measuring_cpu_is_the_harness_default(tmp_path: Path) -> None:
    allowed = os.sched_getaffinity(0)
    assert r.measuring_cpu() == max(allowed) and r.allowed_cpus() == allowed
    assert r.measuring_cpu(min(allowed)) == min(allowed)
    with pytest.raises(UserError, match="cannot pin to CPU 1023: not in this process's "
                                        "allowed CPUs"):
        r.measuring_cpu(1023)
    tree = make_tree(tmp_path, TUNED)  # a test's tree says which CPUs are allowed
    assert r.allowed_cpus(tree) == set(range(8)) and r.measuring_cpu(root=tree) == 7
    assert r.measuring_cpu(3, tree) == 3
    with pytest.raises(UserError, match=r"cannot pin to CPU 8: .* allowed CPUs \(0-7\)"):
        r.measuring_cpu(8, tree)


@pytest.mark.parametrize("command", [
    ["sysinfo", "--readiness"], ["run", "--quick"], ["run", "--quick", "--no-readiness"],
    ["ab", "getppid-inline", "getppid-call"], ["aa", "getppid-inline"],
    ["crosscheck", "--check", "syscall"],
])
def test_one_rule_for_the_measuring_cpu(kcross: Kcross, db_path: Path,
                                        command: list[str]) -> None:
    """`sysinfo --readiness --cpu 1023` reported on a CPU that does not exist while `run --cpu
    1023` refused it: now every command refuses it alike, before anything runs."""
    line = assert_one_line_error(kcross(*command, "--cpu", "1023"), 2,
                                 "cannot pin to CPU 1023: not in this process's allowed CPUs")
    assert line.endswith(f"({r.format_cpu_list(os.sched_getaffinity(0))})")
    assert not db_path.exists()


def test_on_this_machine() -> None:
    """The real /proc and /sys: every finding well-formed; the VM and cpufreq verdicts agree
    with what the machine shows (on the project's VM: in a VM, warn; no cpufreq, unknown)."""
    findings = {f.name: f for f in r.run_checks()}
    print("\n".join(f"{f.name}: {f.state}: {f.seen}" for f in findings.values()))
    for f in findings.values():
        assert f.state in r.STATES and f.seen
        assert f.state != r.WARN or (f.todo and f.short), f
    cpuinfo = Path("/proc/cpuinfo").read_text()
    cpu = r.measuring_cpu()
    flagged = any(line.startswith("flags") and " hypervisor" in line for line in cpuinfo.splitlines())
    if flagged:
        assert findings["virtual machine"].state == r.WARN
    if not Path(f"{CPUS}/cpu{cpu}/cpufreq").exists():
        assert findings["frequency governor"].state == r.UNKNOWN
        if flagged:
            assert findings["frequency governor"].seen == \
                "no cpufreq (the hypervisor controls frequency)"
    if not (flagged and not Path(f"{CPUS}/cpu{cpu}/cpufreq").exists()):
        pytest.skip("not a VM without cpufreq (the case this test pins down): the general "
                    "checks above passed")


# --- the command line ----------------------------------------------------------------------

def harness_with(tmp_path: Path, **fingerprint: Any) -> Path:
    """A harness whose `sysinfo --json` is the captured fingerprint with these keys replaced."""
    with (DATA / "real-sysinfo.jsonl").open() as f:
        record = next(json.loads(line) for line in f if line.strip() and not line.startswith("#"))
    record.update(fingerprint)
    script = tmp_path / "harness.py"
    script.write_text(f"import sys\nprint({json.dumps(json.dumps(record))})\n")
    return script


BARE_METAL = {"virtualization": {"hypervisor_flag": False, "hypervisor_type": None,
                                 "dmi_sys_vendor": "Dell Inc.", "dmi_product_name": "R650"},
              "perf": {"paranoid": 1, "hardware": {"cycles:u": True}, "software":
                       {"task-clock": True}, "reasons": {}}}


def test_cli_check_exit_status_table_and_json(tmp_path: Path, kcross: Kcross) -> None:
    tuned = make_tree(tmp_path / "tuned", TUNED)
    env = {"KCROSS_TEST_SYSROOT": str(tuned)}
    metal = str(harness_with(tmp_path, **BARE_METAL))
    proc = kcross("sysinfo", "--readiness", "--cpu", "3", "--harness", metal, extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert "machine readiness (measuring CPU 3)" in proc.stdout
    for column in ("check", "state", "seen", "what to do", "frequency governor", "performance"):
        assert column in proc.stdout
    proc = kcross("sysinfo", "--readiness", "--cpu", "3", "--harness", metal, "--json",
                  extra_env=env)
    assert proc.returncode == 0
    (line,) = proc.stdout.splitlines()
    doc = json.loads(line)
    assert (doc["type"], doc["cpu"], doc["warnings"]) == ("readiness", 3, 0)
    machine = [f for f in doc["findings"] if f["name"] != "run-to-run noise"]
    assert {f["state"] for f in machine} == {"ok"}
    assert set(doc["findings"][0]) == {"name", "state", "seen", "todo", "short"}
    (noise,) = [f for f in doc["findings"] if f["name"] == "run-to-run noise"]
    assert noise["state"] == "info" and noise["seen"] == "not known: no store yet"
    assert "kcross aa" in noise["todo"]

    untuned = make_tree(tmp_path / "untuned", {**TUNED, "/proc/sys/kernel/nmi_watchdog": "1"})
    proc = kcross("sysinfo", "--readiness", "--cpu", "3", "--json", "--harness", metal,
                  extra_env={"KCROSS_TEST_SYSROOT": str(untuned)})
    assert proc.returncode == 1 and proc.stderr == ""
    doc = json.loads(proc.stdout)
    assert doc["warnings"] == 1
    assert [f["name"] for f in doc["findings"] if f["state"] == "warn"] == ["NMI watchdog"]
    # the fake harness's fingerprint was captured in a VM: its hypervisor flag counts
    proc = kcross("sysinfo", "--readiness", "--cpu", "3", extra_env=env)
    assert proc.returncode == 1 and "in a VM" in proc.stdout


def test_cli_check_help_and_misuse(kcross: Kcross) -> None:
    proc = kcross("sysinfo", "--help")
    assert proc.returncode == 0
    assert "exit status 1 when any check warns" in " ".join(proc.stdout.split())
    proc = kcross("sysinfo", "--cpu", "1")
    assert proc.returncode == 2 and proc.stderr.startswith("kcross: error: --cpu goes with --readiness")
    assert "--no-readiness" in kcross("run", "--help").stdout


def run_stderr(kcross: Kcross, root: Path, *args: str) -> list[str]:
    proc = kcross("run", "--quick", "--bench", "getppid-inline", *args,
                  extra_env={"KCROSS_TEST_SYSROOT": str(root)})
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.splitlines()


def test_run_warns_in_one_line_and_goes_on(tmp_path: Path, kcross: Kcross) -> None:
    untuned = make_tree(tmp_path / "u", {
        **TUNED, f"{CPUS}/cpu{CPU}/cpufreq/scaling_governor": "powersave",
        "/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never",
        "/proc/cpuinfo": "flags\t: fpu hypervisor\n",
        "/proc/sys/kernel/perf_event_paranoid": "3"})  # counters: not a timing matter
    lines = run_stderr(kcross, untuned, "--cpu", "3")
    assert lines[0] == ("kcross: machine not tuned: governor powersave, THP always, in a VM — "
                        "see 'kcross sysinfo --readiness --cpu 3'")
    assert sum("not tuned" in line for line in lines) == 1
    assert not any("not tuned" in line for line in run_stderr(kcross, untuned, "--cpu", "3",
                                                              "--no-readiness"))
    tuned = make_tree(tmp_path / "t", TUNED)
    assert not any("not tuned" in line for line in run_stderr(kcross, tuned, "--cpu", "3"))


def test_run_warning_from_a_real_interpreter(tmp_path: Path) -> None:
    """`python -m kcross run` (not the forked test child): the line comes first on stderr."""
    root = make_tree(tmp_path / "u", {**TUNED, "/proc/sys/kernel/nmi_watchdog": "1"})
    from conftest import isolated_env

    env = {**isolated_env(tmp_path), "KCROSS_TEST_SYSROOT": str(root)}
    proc = subprocess.run([sys.executable, "-m", "kcross", "run", "--quick", "--cpu", "3",
                           "--bench", "getppid-inline"], env=env, capture_output=True,
                          text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == ("kcross: machine not tuned: NMI watchdog on — see "
                                           "'kcross sysinfo --readiness --cpu 3'")



def test_cli_check_with_the_real_harness(kcross: Kcross) -> None:
    """This machine through the real harness's fingerprint: the exit status follows the
    warnings, and a VM's hypervisor flag is the harness's (CPUID) evidence."""
    import harnesses

    command, why = harnesses.native()
    if command is None:
        pytest.skip(why)
    proc = kcross("sysinfo", "--readiness", "--json", "--harness", command[0])
    doc = json.loads(proc.stdout)
    assert proc.returncode == (1 if doc["warnings"] else 0), proc.stderr
    assert doc["cpu"] == max(os.sched_getaffinity(0))
    found = {f["name"]: f for f in doc["findings"]}
    assert "as the harness found them" in found["perf counters"]["seen"]
    if "hypervisor" in Path("/proc/cpuinfo").read_text():
        assert found["virtual machine"]["state"] == "warn"
        assert "hypervisor flag (CPUID, per the harness)" in found["virtual machine"]["seen"]


# --- another machine's files: gathered by the shell script, judged here ------------------

def gather(tmp_path: Path, root: Path, after: dict[str, str] | None = None) -> str:
    """gather_script's output on ``root`` (as ``kcross run --remote`` runs it there, in
    sh); a stand-in ``sleep`` writes ``after`` into the tree as check()'s does."""
    second = make_tree(tmp_path / "second-reading", {**IDLE_AFTER, **(after or {})})
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "sleep").write_text(f"#!/bin/sh\ncp -R '{second}/.' '{root}/'\n")
    (bindir / "sleep").chmod(0o755)
    done = subprocess.run(["sh", "-c", r.gather_script()], capture_output=True, text=True,
                          env={"PATH": f"{bindir}:/usr/bin:/bin", "KCROSS_TEST_SYSROOT": str(root)},
                          timeout=HANG, check=True)
    assert done.stderr == ""
    return done.stdout


SCENARIOS = [({}, {}), *((w[1], w[2]) for w in WARNS),
             ({"/proc/4242/comm": "irqbalance"},
              {"/proc/interrupts": interrupts_text({"45": 40, "LOC": 25})}),
             ({"/proc/cpuinfo": "flags\t: hypervisor\n"}, {"/proc/stat": stat_text({CPU: (1, 89, 10)})}),
             ({"/proc/sys/kernel/randomize_va_space": "garbage", "/proc/interrupts": "",
               f"{CPUS}/cpu{CPU}/topology/thread_siblings_list": None}, {})]


@pytest.mark.parametrize("changes, after", SCENARIOS)
def test_gathered_elsewhere_is_judged_as_here(tmp_path: Path, changes: dict[str, str | None],
                                              after: dict[str, str]) -> None:
    """The remote path (the script in sh, its output parsed, the same checks) finds exactly
    what the local one finds on the same files: every check, in every state."""
    root = make_tree(tmp_path / "there", {**TUNED, **changes})
    machine = r.gathered(gather(tmp_path, root, after)).machine(CPU)
    assert machine is not None
    there = {f.name: f for f in r.judge(machine, r.CHECKS)}
    assert there == check(tmp_path, changes, after)
    assert r.warning_line(there.values(), CPU, where="ssh://lab1") == (
        None if r.warning_line(there.values()) is None else
        r.warning_line(there.values(), CPU).replace(  # type: ignore[union-attr]
            "kcross: ", "kcross: ssh://lab1: ", 1) + " there")


def test_every_file_a_check_reads_is_gathered(tmp_path: Path) -> None:
    """gather_script prints GATHERED: a check reading a file it does not name would say
    'unknown' about every remote machine. Every check, down every branch of SCENARIOS."""
    from fnmatch import fnmatch

    seen: set[str] = set()

    class Recording(r.Machine):
        def read(self, path: str) -> str | None:
            seen.add(path)
            return super().read(path)

    for number, (changes, after) in enumerate(SCENARIOS):
        root = make_tree(tmp_path / str(number), {**TUNED, **changes})
        window = r.sample(root, sleep=lambda _s, root=root, after=after: make_tree(  # type: ignore[misc]
            root, {**IDLE_AFTER, **after}))
        r.judge(Recording(root, CPU, None, window), r.CHECKS)
    missing = {p for p in seen if not any(fnmatch(p, g) for g in (*r.GATHERED, *r.SAMPLED))}
    assert missing == set()
    assert {f"{CPUS[1:]}/cpu{CPU}/cpufreq/boost", "proc/4242/comm", "proc/self/status"} <= seen


def test_gathered_measuring_cpu_is_the_harness_rule(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "there", TUNED)
    facts = r.gathered("ssh noise before the first marker\n" + gather(tmp_path, root))
    assert facts.window is not None and facts.window.seconds == r.SAMPLE_SECONDS
    assert facts.machine().cpu == 7  # type: ignore[union-attr]  # the highest allowed (0-7)
    assert facts.machine(3).cpu == 3  # type: ignore[union-attr]
    with pytest.raises(UserError, match=r"^cannot pin to CPU 9: not in the remote shell's "
                                        r"allowed CPUs \(0-7\)$"):
        facts.machine(9, whose="the remote shell's")
    assert r.gathered("").machine() is None  # no /proc/self/status there: no CPU to judge
    assert r.gathered("").window is None
