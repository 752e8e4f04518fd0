"""``kcross run``: run benchmarks with kcross-harness, store each result as it arrives."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import KcrossError, OutputClosed, UserError, stop_signals_held
from ..run.defaults import (
    CPU_RANGE,
    DEFAULT_MIN_BATCH_MS,
    DEFAULT_PROCESSES,
    DEFAULT_SAMPLES,
    DEFAULT_WARMUP_MS,
    MIN_BATCH_MS_RANGE,
    PROCESS_SAMPLES,
    PROCESS_WARMUP_MS,
    PROCESSES_RANGE,
    QUICK_SAMPLES,
    QUICK_WARMUP_MS,
    SAMPLES_RANGE,
    WARMUP_MS_RANGE,
)
from .options import (
    ENVIRONMENT,
    EXIT_CODES,
    Common,
    Once,
    export_option,
    number,
    readiness_option,
    wide_option,
)

if TYPE_CHECKING:
    from rich.console import Console

# The harness's suites, in its registry's order (harness/registry.c; a test checks this
# list against `kcross-harness list`): for --help only, `kcross list` is the reference.
SUITES = ("syscall", "cpuid", "percpu", "percpu-scaling", "ctxsw", "uctx", "spin")

HELP = "run benchmarks and store the results"
DESCRIPTION = "Run benchmarks with kcross-harness, store each result as it arrives, and " \
    "print the table."
PARENTS = ("db", "harness", "json")
EPILOG = f"""\
suites: {", ".join(SUITES)}
  (see 'kcross list' for every benchmark, and what this machine cannot run and why)

defaults: {DEFAULT_PROCESSES} fresh harness processes, one after another, each running every
  benchmark: {PROCESS_SAMPLES} samples per benchmark and process after a {PROCESS_WARMUP_MS} ms \
warm-up, each sample
  a batch of at least {DEFAULT_MIN_BATCH_MS} ms; the measuring thread pinned to the highest
  allowed CPU; results shown as a table, stored in the database.  Each process is one
  observation of the run (its address space, layout and moment differ), so a run's CI and
  its comparison with another run see process-to-process variation, not one process's.
  --processes 1: one harness process with the harness's own defaults ({DEFAULT_SAMPLES} \
samples,
  {DEFAULT_WARMUP_MS} ms warm-up), as kcross ran before.

{ENVIRONMENT}

{EXIT_CODES}"""


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("--suite", metavar="S", action=Once, help="only this suite")
    p.add_argument("--bench", metavar="GLOB", action=Once,
                   help="only benchmarks whose name or suite/name matches GLOB (fnmatch: "
                        "*, ?, [...]; one GLOB)")
    p.add_argument("--quick", action="store_true",
                   help=f"one process of {QUICK_SAMPLES} samples after a {QUICK_WARMUP_MS} ms "
                        "warm-up; batches keep their length: a smoke test, not a figure")
    p.add_argument("--samples", type=number(*SAMPLES_RANGE, whole=True), metavar="N",
                   help=f"samples per benchmark and process, {SAMPLES_RANGE[0]} to "
                        f"{SAMPLES_RANGE[1]} (default {PROCESS_SAMPLES}; --processes 1: "
                        f"{DEFAULT_SAMPLES}; --quick {QUICK_SAMPLES})")
    p.add_argument("--warmup-ms", type=number(*WARMUP_MS_RANGE, whole=False), metavar="MS",
                   help=f"warm-up before each benchmark's samples, {WARMUP_MS_RANGE[0]} to "
                        f"{WARMUP_MS_RANGE[1]} ms (default {PROCESS_WARMUP_MS}; --processes 1: "
                        f"{DEFAULT_WARMUP_MS}; --quick {QUICK_WARMUP_MS})")
    p.add_argument("--min-batch-ms", type=number(*MIN_BATCH_MS_RANGE, whole=False),
                   metavar="MS",
                   help=f"shortest timed batch (one sample), {MIN_BATCH_MS_RANGE[0]} to "
                        f"{MIN_BATCH_MS_RANGE[1]} ms (default {DEFAULT_MIN_BATCH_MS})")
    p.add_argument("--processes", type=number(*PROCESSES_RANGE, whole=True), metavar="K",
                   help=f"run the harness K times, one fresh process after another, each "
                        f"measuring every benchmark, {PROCESSES_RANGE[0]} to "
                        f"{PROCESSES_RANGE[1]} (default {DEFAULT_PROCESSES}; --quick 1); with "
                        f"K > 1 each process takes {PROCESS_SAMPLES} samples after a "
                        f"{PROCESS_WARMUP_MS} ms warm-up unless --samples/--warmup-ms say "
                        "otherwise")
    p.add_argument("--cpu", type=number(*CPU_RANGE, whole=True), metavar="C",
                   help="pin the measuring thread to CPU C (default: the highest CPU "
                        "kcross may run on)")
    p.add_argument("--interleave", action="store_true",
                   help="take the benchmarks' samples in turn: robust ratios on a drifting "
                        "machine (results arrive together at the end)")
    p.add_argument("--remote", action="append", metavar="ssh://[USER@]HOST[:PORT]",
                   help="run on that machine over ssh (BatchMode: a key or an agent; one "
                        "multiplexed connection per machine): the static harness (built for "
                        "its architecture: see docs/remote.md, 'A harness for another architecture') "
                        "is copied to a temporary directory there, run, and removed; the run "
                        "is stored here with that machine's fingerprint; repeat for several "
                        "machines at once")
    p.add_argument("-o", "--ssh-option", action="append", metavar="OPTION",
                   help="an ssh -o option for --remote, e.g. IdentityFile=~/.ssh/lab or "
                        "ConnectTimeout=30 (repeatable; wins over kcross's defaults)")
    export_option(p, "when the run ends, also an interrupted one's results so far")
    readiness_option(p, "the run; with --remote, about the remote machine")
    # The old spelling, still taken (scripts use it); help says --no-readiness.
    p.add_argument("--no-check", action="store_true", dest="no_readiness",
                   help=argparse.SUPPRESS)
    p.add_argument("--tag", metavar="NAME",
                   help="tag the run NAME once it is stored complete (see 'kcross tag')")
    wide_option(p)


def write_exports(pairs: list[tuple[str, str]], run: Any) -> None:
    from .. import export

    for fmt, path in pairs:
        export.write(fmt, path, export.ExportData(runs=[run]))


def harness_args(args: argparse.Namespace, processes: int) -> list[str]:
    """The options ``kcross run`` passes on to the harness: those given, and with several
    processes (not --quick) each process's share of the run's samples and warm-up unless
    told."""
    samples, warmup_ms = args.samples, args.warmup_ms
    if processes > 1 and not args.quick:   # a process's share of the run, unless told
        samples = PROCESS_SAMPLES if samples is None else samples
        warmup_ms = PROCESS_WARMUP_MS if warmup_ms is None else warmup_ms
    given = (("suite", args.suite), ("bench", args.bench), ("samples", samples),
             ("warmup-ms", warmup_ms), ("min-batch-ms", args.min_batch_ms), ("cpu", args.cpu))
    forwarded = [word for name, value in given if value is not None
                 for word in (f"--{name}", str(value))]
    return forwarded + [f"--{flag}" for flag, on in (("quick", args.quick),
                                                       ("interleave", args.interleave)) if on]


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..run import harness

    with stop_signals_held():  # numpy's BLAS threads leave them to this one
        from ..run.runner import RunRequest, run
        from ..store import store_for_writing
        from ..store.refs import check_tag_name

    if args.tag is not None:
        check_tag_name(args.tag)
    # Checked now, created only when the harness's first record arrives: a run
    # refused for bad arguments leaves no database file behind.
    store = store_for_writing(args.db, lazy=True)
    processes = int(args.processes) if args.processes is not None else \
        (1 if args.quick else DEFAULT_PROCESSES)
    forwarded = harness_args(args, processes)
    from .. import export

    exports = export.requested(args.export, db=args.db, json_output=args.json)  # before anything runs

    def export_run(run_id: int) -> None:
        try:
            write_exports(exports, store.load_run(str(run_id)))
        except OutputClosed:
            raise
        except KcrossError as exc:
            raise type(exc)(f"{exc}; run {run_id} is stored (see 'kcross show {run_id}')") \
                from None

    delivery: dict[str, Any] = {"print_table": all(path != export.STDOUT for _, path in exports),
                                "wide": args.wide, "on_end": export_run if exports else None,
                                "processes": processes}
    if args.remote:
        from ..run.remote import RemoteRequest, cmd_run_remote
        if exports and len(args.remote) > 1:
            raise UserError("--export with several --remote hosts would write one file from "
                            "each: export each stored run with 'kcross show RUN --export ...'")
        remote = RemoteRequest(
            hosts=tuple(args.remote), ssh_options=tuple(args.ssh_option or ()),
            harness=args.harness, check=not args.no_readiness, cpu=args.cpu,
            run=RunRequest(harness=(), harness_args=tuple(forwarded), command=tuple(args.argv),
                           json_output=args.json, tag=args.tag, **delivery))
        try:
            return cmd_run_remote(store, remote, out, err)
        finally:
            store.close()
    if args.ssh_option:
        raise KcrossError("--ssh-option is for runs with --remote")
    from ..run.readiness import measuring_cpu, not_tuned, sysroot

    measuring_cpu(args.cpu, sysroot())  # a CPU this process may run on (the harness's rule)
    check = not args.no_readiness
    request = RunRequest(harness=harness.locate(args.harness), harness_args=forwarded,
                         command=args.argv, json_output=args.json, tag=args.tag,
                         notice=(lambda: not_tuned(args.cpu)) if check else None,
                         **delivery)
    try:
        return run(store, request, out, err)
    except UserError:   # the harness refused the selection: say the closest names
        said = harness.selection_error(request.harness, args.suite, args.bench)
        if said is None:
            raise
        raise UserError(said) from None
    finally:
        store.close()
