#!/usr/bin/env python3
"""A deterministic stand-in for ``kcross-harness`` (same command line, schema-1 records).

It lets the Python tool be tested without the C harness and without timing
noise: the fingerprint, the registry and every sample are fixed.  Behaviour
knobs for failure tests, all optional:

  KCROSS_FAKE_DELAY=S          sleep S seconds before each result
  KCROSS_FAKE_GARBAGE_AFTER=K  write a non-JSON line after K results
  KCROSS_FAKE_DIE_AFTER=K      exit 1 after K results, without the end record
  KCROSS_FAKE_SCHEMA=N         put schema N into every record
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import signal
import sys
import time

NAME = "kcross-harness"
SCHEMA = int(os.environ.get("KCROSS_FAKE_SCHEMA", "1"))
DEFAULT_SAMPLES = 30
QUICK_SAMPLES = 10

# suite, name, summary, base ns/op, skip reason (None = available)
REGISTRY = [
    ("syscall", "getpid", "getpid() via the default syscall instruction", 52.0, None),
    ("syscall", "getppid", "getppid() via the default syscall instruction", 53.5, None),
    ("syscall", "read-devnull", "read() of 1 byte from /dev/null", 181.0, None),
    ("syscall", "int80-getpid", "getpid() via int $0x80 (32-bit entry)", 0.0,
     "kernel built without CONFIG_IA32_EMULATION"),
    ("vdso", "clock_gettime-monotonic", "clock_gettime(CLOCK_MONOTONIC) via the vDSO", 18.25, None),
    ("vdso", "gettimeofday", "gettimeofday() via the vDSO", 19.5, None),
    ("rseq", "cpu_id-read", "read the rseq area cpu_id field", 0.75, None),
]

HW_EVENTS = ["cycles:u", "cycles:k", "instructions:u", "instructions:k",
             "branch-misses:u", "branch-misses:k"]
SW_EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults"]
HW_REASON = "perf_event_open: ENOENT (no PMU exposed by the hypervisor)"

FINGERPRINT = {
    "kcross": {"version": "0.1.0", "git_rev": "0123456789ab", "build": "static",
               "compiler": "gcc 12.2.0"},
    "arch": "x86_64",
    "cpu": {"vendor": "GenuineIntel", "model": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
            "family": 6, "model_id": 106, "stepping": 6, "microcode": "0xd0003a5",
            "flags": ["constant_tsc", "nonstop_tsc", "rdtscp", "pti", "fsgsbase"],
            "online": "0-3", "possible": "0-3"},
    "kernel": {"release": "6.1.0-18-amd64", "version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1",
               "cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet"},
    "vulnerabilities": {"meltdown": "Not affected",
                        "spectre_v2": "Mitigation: Enhanced / Automatic IBRS",
                        "retbleed": "Not affected"},
    "virtualization": {"hypervisor_flag": True, "hypervisor_type": "KVM",
                       "dmi_sys_vendor": "Amazon EC2", "dmi_product_name": "m6i.xlarge"},
    "power": {"governor": None, "driver": None},
    "smt": {"control": "on", "active": True},
    "isolation": {"isolcpus": "", "nohz_full": "(null)"},
    "libc": {"name": "glibc", "version": "2.36"},
    "rseq": {"registered": True, "owner": "glibc", "size": 32, "libc_size": 32,
             "feature_size": 28, "align": 32},
    "auxv": {"hwcap": "0x178bfbff", "hwcap2": "0x2", "rseq_feature_size": 28,
             "rseq_align": 32, "sysinfo_ehdr": True},
    "perf": {"paranoid": 2,
             "hardware": {e: False for e in HW_EVENTS},
             "software": {e: True for e in SW_EVENTS},
             "reasons": {e: HW_REASON for e in HW_EVENTS}},
    "syscall": {"mechanism": "syscall", "available": ["syscall"], "forced": None},
    "timer": {"source": "tsc", "hz": 2899999000.0, "invariant": True,
              "calibration": {"against": "CLOCK_MONOTONIC_RAW", "ms": 50, "error_ppm": 1.5}},
    "host": {"hostname": "fakehost", "time": "2024-03-01T12:00:00Z"},
}


def emit(record: dict) -> None:
    print(json.dumps({**record, "schema": SCHEMA}), flush=True)


def fail(message: str) -> None:
    print(f"{NAME}: {message}", file=sys.stderr)
    sys.exit(2)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like the C harness
        fail(message)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}")
    return value


def samples_for(base: float, n: int, index: int) -> list[float]:
    """Fixed pseudo-spread around ``base``: +0..8 % in a scrambled order."""
    return [round(base * (1 + 0.08 * ((i * 7 + index) % 13) / 12), 4) for i in range(n)]


def result(suite: str, name: str, summary: str, base: float, reason: str | None,
           n: int, index: int, cpu: int | None) -> dict:
    skipped = reason is not None
    samples = [] if skipped else samples_for(base, n, index)
    hz = FINGERPRINT["timer"]["hz"]
    iters = 0 if skipped else max(1, int(2e6 / max(base, 0.5)))
    return {
        "type": "result", "suite": suite, "name": name, "summary": summary,
        "status": "skipped" if skipped else "ok", "reason": reason, "unit": "ns/op",
        "cpu": cpu, "iters": iters, "samples": samples,
        "ticks": [round(s * hz / 1e9, 3) for s in samples],
        "overhead": None if skipped else {"ns": 0.6, "ticks": 1.74, "subtracted": True,
                                          "why": "empty loop measured the same way"},
        "counters": {} if skipped else {
            "task-clock": {"total": int(sum(samples) * iters), "per_op": round(base, 3),
                           "scaled": False},
            "context-switches": {"total": index % 2, "per_op": 0.0, "scaled": False},
            "cpu-migrations": {"total": 0, "per_op": 0.0, "scaled": False},
            "page-faults": {"total": 0, "per_op": 0.0, "scaled": False}},
        "counters_unavailable": {} if skipped else {e: HW_REASON for e in HW_EVENTS},
        "disturbed": [] if skipped or index % 2 == 0 else [3 % n],
        "mechanism": "syscall", "timer": "tsc",
        "elapsed_s": 0.0 if skipped else round(0.05 + n * 0.01, 3),
    }


def select(suite: str | None, pattern: str | None) -> list[tuple]:
    if suite is not None and suite not in {b[0] for b in REGISTRY}:
        fail(f"no suite '{suite}' (see 'kcross list')")
    chosen = [b for b in REGISTRY if suite is None or b[0] == suite]
    if pattern is not None:
        chosen = [b for b in chosen
                  if fnmatch.fnmatchcase(b[1], pattern) or fnmatch.fnmatchcase(f"{b[0]}/{b[1]}", pattern)]
        if not chosen:
            fail(f"no benchmark matches '{pattern}' (see 'kcross list')")
    return chosen


def knob(name: str) -> int | None:
    value = os.environ.get(name)
    return None if value is None else int(value)


def cmd_run(args: argparse.Namespace) -> None:
    chosen = select(args.suite, args.bench)
    n = args.samples or (QUICK_SAMPLES if args.quick else DEFAULT_SAMPLES)
    delay = float(os.environ.get("KCROSS_FAKE_DELAY", "0"))
    garbage_after = knob("KCROSS_FAKE_GARBAGE_AFTER")
    die_after = knob("KCROSS_FAKE_DIE_AFTER")
    emit({"type": "fingerprint", **FINGERPRINT})
    emit({"type": "plan", "benchmarks": [{"suite": b[0], "name": b[1]} for b in chosen],
          "samples": n, "min_batch_ms": args.min_batch_ms or (2.0 if args.quick else 10.0),
          "warmup_ms": args.warmup_ms if args.warmup_ms is not None
          else (5.0 if args.quick else 50.0), "cpu": args.cpu})
    counts = {"ok": 0, "skipped": 0, "failed": 0}
    for done, bench in enumerate(chosen):
        if garbage_after == done:
            print("segfault in benchmark loop? this is not JSON", flush=True)
        if die_after == done:
            print(f"{NAME}: fatal: simulated crash", file=sys.stderr, flush=True)
            os._exit(1)
        time.sleep(delay)
        rec = result(*bench, n=n, index=REGISTRY.index(bench), cpu=args.cpu)
        forced_fail = os.environ.get("KCROSS_TEST_FAIL")  # minimal stand-in (py-cli)
        if forced_fail and rec["status"] == "ok" and any(
                fnmatch.fnmatchcase(x, forced_fail) for x in (bench[1], f"{bench[0]}/{bench[1]}")):
            rec.update(status="failed", reason="forced failure (KCROSS_TEST_FAIL, for tests)",
                       samples=[], ticks=[], overhead=None, disturbed=[])
        counts[rec["status"]] += 1
        emit(rec)
    emit({"type": "end", **counts, "elapsed_s": round(0.1 * len(chosen), 3)})
    sys.exit(1 if counts["failed"] else 0)


def cmd_list(args: argparse.Namespace) -> None:
    for suite, name, summary, _base, reason in select(args.suite, None):
        emit({"type": "bench", "suite": suite, "name": name, "summary": summary,
              "needs": ["ia32_emulation"] if reason else [],
              "available": reason is None, "reason": reason})


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # die on Ctrl-C like the C program
    parser = Parser(prog=NAME)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--json", action="store_true")
    run.add_argument("--suite")
    run.add_argument("--bench")
    run.add_argument("--quick", action="store_true")
    run.add_argument("--samples", type=positive_int)
    run.add_argument("--cpu", type=int)
    run.add_argument("--min-batch-ms", type=float)
    run.add_argument("--warmup-ms", type=float)
    run.add_argument("--interleave", action="store_true")
    lst = sub.add_parser("list")
    lst.add_argument("--json", action="store_true")
    lst.add_argument("--suite")
    info = sub.add_parser("sysinfo")
    info.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.json:
        fail("the fake harness only writes --json")
    if args.command == "run":
        cmd_run(args)
    elif args.command == "list":
        cmd_list(args)
    else:
        emit({"type": "fingerprint", **FINGERPRINT})


if __name__ == "__main__":
    main()
