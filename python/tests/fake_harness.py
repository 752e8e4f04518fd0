#!/usr/bin/env python3
"""A deterministic stand-in for ``kcross-harness``: same command line, records of a real run.

It lets the Python tool be tested without the C harness and without timing
noise.  Its records are those of a captured real run (python/tests/data/
real-*.jsonl, made by python/tests/data/capture-real-run): the real suites,
names, keys and figures, schema 2.  ``run`` serves the captured result of each
selected benchmark; with another sample count than the capture's, the captured
samples (and the empty loop's) are repeated in order.  ``--cpu C`` puts C
where the capture has the measuring CPU.

Like the real harness it honours KCROSS_TEST_FAIL=GLOB (matching benchmarks
fail their check: status ``failed``, exit 1 after the end record) and
KCROSS_TEST_DELAY=GLOB:NS (NS added to every sample of the matching benchmarks,
not to their empty loop's), and records the forcings in ``fingerprint.forced``
(KCROSS_RSEQ and KCROSS_TEST_DELAY only when set), refusing an invalid one (exit 2).
KCROSS_RSEQ=off makes the fingerprint's rseq group say what the real harness's says then
(not registered, by no one, why) and the benchmarks that need rseq skipped with that reason.
Behaviour knobs for failure tests, all optional:

  KCROSS_FAKE_DELAY=S          sleep S seconds before each result
  KCROSS_FAKE_GARBAGE_AFTER=K  write a non-JSON line after K results
  KCROSS_FAKE_DIE_AFTER=K      exit 1 after K results, without the end record
  KCROSS_FAKE_SCHEMA=N         put schema N into every record
  KCROSS_FAKE_SKIP=GLOB        matching benchmarks are skipped (as on a machine lacking
                               what they need), in `run` and `list`
  KCROSS_FAKE_SCALE=F[@VAR=V]  multiply every sample and empty-loop sample by F (a machine
                               or a setting F times slower); with @VAR=V only when the
                               environment variable VAR is V (one side of an A/B)
  KCROSS_FAKE_RESAMPLE=1       draw each run's samples (and the empty loop's) afresh with
                               replacement from the captured ones, each sample moved by a
                               random part in RESAMPLE_JITTER (independent runs of one
                               benchmark, for A/A tests)
  KCROSS_FAKE_SCATTER=FILE:F1,F2,...  multiply every sample and empty-loop sample of the
                               k-th `run` by Fk (in turn, again from F1 after the last;
                               FILE counts the runs): rounds that scatter as on a loaded
                               machine, each run's figure known exactly

A forced KCROSS_SYSCALL other than auto is the mechanism the run reports, as in the real
harness (fingerprint ``syscall.mechanism`` and each result's ``mechanism``).
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import fnmatch
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

NAME = "kcross-harness"
DATA = Path(__file__).resolve().parent / "data"
DEFAULT_SAMPLES = 201
QUICK_SAMPLES = 11
TEST_FAIL_REASON = "forced failure (KCROSS_TEST_FAIL, for tests)"
GLOB_HELP = "a glob of benchmark names, NAME or SUITE/NAME; see 'list'"
DELAY_MAX_NS = 1e6
SKIP_REASON = "skipped by KCROSS_FAKE_SKIP (fake harness)"
RSEQ_VALUES = ["auto", "on", "off"]
RSEQ_OFF = "KCROSS_RSEQ=off: rseq left unregistered"
# A resampled sample's relative move, at most: real timings are continuous, a few captured
# values drawn again are not (three processes' medians would often be one value, from
# which no verdict sizes an interval); far below the spread between captured values.
RESAMPLE_JITTER = 1e-4


def _load(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open() as f:
        return [json.loads(line) for line in f if line.strip() and not line.startswith("#")]


RUN = _load("real-run.jsonl")
FINGERPRINT = RUN[0]
PLAN = RUN[1]
RESULTS = {(r["suite"], r["name"]): r for r in RUN if r["type"] == "result"}
BENCHES = _load("real-list.jsonl")
SYSINFO = _load("real-sysinfo.jsonl")[0]
SUITES = list(dict.fromkeys(b["suite"] for b in BENCHES))
NEEDS = {(b["suite"], b["name"]): b["needs"] for b in BENCHES}


def fail(message: str) -> None:
    print(f"{NAME}: {message}", file=sys.stderr)
    sys.exit(2)


def emit(record: dict[str, Any]) -> None:
    schema = os.environ.get("KCROSS_FAKE_SCHEMA")
    record = {**record, "schema": int(schema) if schema else record["schema"]}
    try:
        print(json.dumps(record, separators=(",", ":")), flush=True)
    except OSError as exc:  # e.g. > /dev/full: one line, exit 3, as the C harness
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing more reaches stdout
        finally:
            print(f"{NAME}: cannot write output: {exc.strerror}", file=sys.stderr)
            os._exit(3)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # one line, exit 2
        fail(message)


def count(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"wants a whole number >= {low}, not {text!r}")
        return value
    return parse


def milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e6:
        raise argparse.ArgumentTypeError(f"wants milliseconds, not {text!r}")
    return value


def forcings() -> dict[str, str | None]:
    """The environment forcings, validated as the real harness does (empty = unset)."""
    valid = {"KCROSS_SYSCALL": [*dict.fromkeys([*FINGERPRINT["syscall"]["available"], "libc",
                                                "auto"])],
             "KCROSS_VDSO": ["0", "1"], "KCROSS_RSEQ": RSEQ_VALUES,
             "KCROSS_TIMER": ["auto", "clock_gettime"], "KCROSS_TEST_FAIL": None}
    forced: dict[str, str | None] = {}
    for name, values in valid.items():
        value = os.environ.get(name) or None
        if value is not None and values is not None and value not in values:
            fail(f"{name}={value}: not one of {', '.join(values)}")
        if value is not None or name != "KCROSS_RSEQ":  # recorded only when set
            forced[name] = value
    glob = forced["KCROSS_TEST_FAIL"]
    if glob is not None and not any(matches(b, glob) for b in BENCHES):
        fail(f"KCROSS_TEST_FAIL={glob}: matches no benchmark (valid: {GLOB_HELP})")
    delay = os.environ.get("KCROSS_TEST_DELAY") or None
    if delay is not None:  # recorded only when set, as the real harness does
        planted_delay(delay)
        forced["KCROSS_TEST_DELAY"] = delay
    return forced


def planted_delay(value: str) -> tuple[str, float]:
    """KCROSS_TEST_DELAY=GLOB:NS as the real harness validates it (harness/settings.c)."""
    glob, colon, num = value.rpartition(":")
    if not colon or not glob or not num:
        fail(f"KCROSS_TEST_DELAY={value}: not GLOB:NS (a glob of benchmark names, NAME or "
             "SUITE/NAME, a colon, and the nanoseconds to add to each of their operations, "
             "e.g. getppid-inline:6.5)")
    try:
        ns = float(num)
    except ValueError:
        ns = 0.0
    if not 0 < ns <= DELAY_MAX_NS:
        fail(f"KCROSS_TEST_DELAY={value}: NS wants a number of nanoseconds above 0 and at "
             f"most {DELAY_MAX_NS:.0f}, not '{num}'")
    if not any(matches(b, glob) for b in BENCHES):
        fail(f"KCROSS_TEST_DELAY={value}: '{glob}' matches no benchmark (valid: {GLOB_HELP})")
    return glob, ns


def matches(bench: dict[str, Any], pattern: str | None) -> bool:
    return pattern is not None and (fnmatch.fnmatchcase(bench["name"], pattern) or
                                    fnmatch.fnmatchcase(f"{bench['suite']}/{bench['name']}",
                                                        pattern))


def select(suite: str | None, patterns: list[str] | None) -> list[dict[str, Any]]:
    if suite is not None and suite not in SUITES:
        fail(f"unknown suite '{suite}' (suites: {', '.join(SUITES)})")
    chosen = [b for b in BENCHES if suite is None or b["suite"] == suite]
    if patterns:
        chosen = [b for b in chosen if any(matches(b, p) for p in patterns)]
        if not chosen:
            fail(f"no benchmark matches '{patterns[-1]}' (see 'list')")
    return chosen


def cycle(values: list[float], n: int) -> list[float]:
    return [values[i % len(values)] for i in range(n)] if values else []


def not_run(rec: dict[str, Any], status: str, reason: str) -> dict[str, Any]:
    """A result the benchmark did not measure, as the real harness writes it."""
    return {**rec, "status": status, "reason": reason, "iters": 0, "samples": [], "ticks": [],
            "overhead": None, "counters": {}, "disturbed": [], "threads": None,
            "thread_cpus": [], "throughput_ops_per_s": None, "aborts_per_million": None,
            "switches_per_op": None, "switches_counted_per_op": None, "flags": []}


def rseq_off(forced: dict[str, str | None]) -> bool:
    return forced.get("KCROSS_RSEQ") == "off"


def fingerprint(base: dict[str, Any], forced: dict[str, str | None]) -> dict[str, Any]:
    """A fingerprint (the run's or sysinfo's) with the forcings: recorded, obeyed."""
    record = {**base, "forced": forced,
              "syscall": {**base["syscall"], "forced": forced["KCROSS_SYSCALL"],
                          "mechanism": mechanism(forced)}}
    if rseq_off(forced):
        record["rseq"] = {**base["rseq"], "registered": False, "owner": None, "size": None,
                          "libc_size": 0 if base["rseq"]["libc_size"] is not None else None,
                          "feature_size": None, "align": None,
                          "unavailable_reason": RSEQ_OFF, "percpu_mode": "atomic"}
    return record


def mechanism(forced: dict[str, str | None]) -> str:
    """The syscall mechanism a run reports: the forced one, else the captured selection."""
    chosen = forced["KCROSS_SYSCALL"]
    return chosen if chosen not in (None, "auto") else FINGERPRINT["syscall"]["mechanism"]


def scale() -> float:
    """KCROSS_FAKE_SCALE's factor for this run (1 when unset or its condition does not hold)."""
    text = os.environ.get("KCROSS_FAKE_SCALE")
    if not text:
        return 1.0
    factor, _, condition = text.partition("@")
    if condition:
        name, _, value = condition.partition("=")
        if os.environ.get(name, "") != value:
            return 1.0
    return float(factor)


def scatter() -> float:
    """KCROSS_FAKE_SCATTER's factor for this run (1 when unset); counts the run in FILE."""
    text = os.environ.get("KCROSS_FAKE_SCATTER")
    if not text:
        return 1.0
    path, _, factors = text.rpartition(":")
    values = [float(f) for f in factors.split(",")]
    counter = Path(path)
    done = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(done + 1))
    return values[done % len(values)]


def resample(rec: dict[str, Any]) -> None:
    """KCROSS_FAKE_RESAMPLE: each series drawn afresh, with replacement, from its own values
    (a sample and its ticks moved together by a random part in RESAMPLE_JITTER: a smoothed
    bootstrap, continuous as real timings are)."""
    rng = random.Random(os.urandom(16))
    n = len(rec["samples"])
    picks = [rng.randrange(n) for _ in range(n)]
    moves = [1.0 + rng.uniform(-RESAMPLE_JITTER, RESAMPLE_JITTER) for _ in picks]
    rec["samples"] = [rec["samples"][i] * m for i, m in zip(picks, moves, strict=True)]
    rec["ticks"] = [rec["ticks"][i] * m for i, m in zip(picks, moves, strict=True)]
    rec["disturbed"] = [k for k, i in enumerate(picks) if i in set(rec["disturbed"])]
    rec["overhead"] = {key: [values[rng.randrange(len(values))] for _ in values]
                       for key, values in rec["overhead"].items()}


def result(bench: dict[str, Any], n: int, cpu: int | None,
           forced: dict[str, str | None], run_factor: float = 1.0) -> dict[str, Any]:
    rec = copy.deepcopy(RESULTS[(bench["suite"], bench["name"])])
    if matches(bench, os.environ.get("KCROSS_FAKE_SKIP") or None):
        return not_run(rec, "skipped", SKIP_REASON)
    if rseq_off(forced) and "rseq" in NEEDS[(bench["suite"], bench["name"])]:
        return not_run(rec, "skipped", RSEQ_OFF)
    if matches(bench, forced["KCROSS_TEST_FAIL"]):
        return not_run(rec, "failed", TEST_FAIL_REASON)
    if rec["status"] != "ok":
        return rec
    k = len(rec["samples"])
    rec["samples"] = cycle(rec["samples"], n)
    rec["ticks"] = cycle(rec["ticks"], n)
    rec["overhead"] = {key: cycle(values, n) for key, values in rec["overhead"].items()}
    rec["disturbed"] = [i for i in range(n) if i % k in set(rec["disturbed"])]
    if os.environ.get("KCROSS_FAKE_RESAMPLE"):
        resample(rec)
    factor = scale() * run_factor
    if factor != 1.0:
        rec["samples"] = [x * factor for x in rec["samples"]]
        if "samples" in rec["overhead"]:
            rec["overhead"]["samples"] = [x * factor for x in rec["overhead"]["samples"]]
    if forced.get("KCROSS_TEST_DELAY"):
        glob, ns = planted_delay(str(forced["KCROSS_TEST_DELAY"]))
        if matches(bench, glob):
            ticks_per_ns = FINGERPRINT["timer"]["hz"] / 1e9
            rec["samples"] = [x + ns for x in rec["samples"]]
            rec["ticks"] = [x + ns * ticks_per_ns for x in rec["ticks"]]
    rec["mechanism"] = mechanism(forced)
    if cpu is not None:
        rec["cpu"] = cpu
        if rec["thread_cpus"]:
            rec["thread_cpus"][0] = cpu
    return rec


def knob(name: str) -> int | None:
    value = os.environ.get(name)
    return None if value is None else int(value)


def cmd_run(args: argparse.Namespace) -> None:
    forced = forcings()
    chosen = select(args.suite, args.bench)
    n = args.samples or (QUICK_SAMPLES if args.quick else DEFAULT_SAMPLES)
    delay = float(os.environ.get("KCROSS_FAKE_DELAY", "0"))
    garbage_after = knob("KCROSS_FAKE_GARBAGE_AFTER")
    die_after = knob("KCROSS_FAKE_DIE_AFTER")
    # each run starts at its own time, as the real harness's do (to the microsecond here:
    # a test's runs follow each other within a second)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    emit({**fingerprint(FINGERPRINT, forced), "host": {**FINGERPRINT["host"], "time": now}})
    min_batch = args.min_batch_ms if args.min_batch_ms is not None else \
        (PLAN["min_batch_ms"] if args.quick else 10.0)
    warmup = args.warmup_ms if args.warmup_ms is not None else \
        (PLAN["warmup_ms"] if args.quick else 200.0)
    emit({**PLAN, "benchmarks": [{"suite": b["suite"], "name": b["name"]} for b in chosen],
          "samples": n, "min_batch_ms": min_batch, "warmup_ms": warmup,
          "interleave": args.interleave, "cpu": args.cpu if args.cpu is not None else PLAN["cpu"]})
    counts = {"ok": 0, "skipped": 0, "failed": 0}
    run_factor = scatter()
    for done, bench in enumerate(chosen):
        if garbage_after == done:
            print("segfault in benchmark loop? this is not JSON", flush=True)
        if die_after == done:
            print(f"{NAME}: fatal: simulated crash", file=sys.stderr, flush=True)
            os._exit(1)
        time.sleep(delay)
        rec = result(bench, n, args.cpu, forced, run_factor)
        counts[rec["status"]] += 1
        emit(rec)
    emit({**RUN[-1], **counts})
    sys.exit(1 if counts["failed"] else 0)


def cmd_list(args: argparse.Namespace) -> None:
    forced = forcings()  # refused here too, as the C harness refuses them for every command
    for bench in select(args.suite, args.bench):
        if matches(bench, os.environ.get("KCROSS_FAKE_SKIP") or None):
            bench = {**bench, "available": False, "reason": SKIP_REASON}
        elif rseq_off(forced) and "rseq" in bench["needs"]:
            bench = {**bench, "available": False, "reason": RSEQ_OFF}
        emit(bench)


def main() -> None:
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # ignored if started so,
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # else die on Ctrl-C, like the C program
    if sys.argv[1:] == ["--version"]:
        print(f"{NAME} {FINGERPRINT['kcross']['version']} (fake)")
        return
    parser = Parser(prog=NAME)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--json", action="store_true")
    run.add_argument("--suite", action="append")
    run.add_argument("--bench", action="append")
    run.add_argument("--quick", action="store_true")
    run.add_argument("--samples", type=count(3))
    run.add_argument("--cpu", type=count(0))
    run.add_argument("--min-batch-ms", type=milliseconds)
    run.add_argument("--warmup-ms", type=milliseconds)
    run.add_argument("--interleave", action="store_true")
    lst = sub.add_parser("list")
    lst.add_argument("--json", action="store_true")
    lst.add_argument("--suite", action="append")
    lst.add_argument("--bench", action="append")
    info = sub.add_parser("sysinfo")
    info.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for option in ("suite", "bench"):  # the C harness takes each once
        given = getattr(args, option, None) or []
        if len(given) > 1:
            fail(f"--{option} given twice ('{given[0]}', '{given[1]}')")
    if hasattr(args, "suite"):
        args.suite = args.suite[0] if args.suite else None
    if not args.json:
        fail("the fake harness only writes --json")
    if args.command == "run":
        cmd_run(args)
    elif args.command == "list":
        cmd_list(args)
    else:
        emit(fingerprint(SYSINFO, forcings()))


if __name__ == "__main__":
    main()
