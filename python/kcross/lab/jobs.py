"""The jobs of ``kcross lab ARCH`` (its options: kcross.cli.lab): the library and harness
on a real kernel of ARCH under QEMU (issue 8).

What it does, in order: the kernel (Debian's, fetched and cached, or ``--kernel``, whose
configuration is checked), the guest payload (kcross built for ARCH, static, from the
source tree: kcross.lab.payload), then the mode:

- counting (default): the harness in a one-vCPU ``-icount`` guest; figures are
  instructions per operation, stored as a lab run.  ``--compare M1 M2`` runs it with the
  syscall mechanism forced to each (KCROSS_SYSCALL) and prints the difference;
  ``--against KERNEL`` the same with a second kernel; ``--mitigations`` the arch's table
  of mitigation variants (kcross.lab.mitigations) against their baselines.
- correctness: the library's C tests and the per-CPU stress tier in a two-vCPU guest
  (multi-threaded TCG: preemption, migration, real rseq aborts); exit 1 if one failed.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kcross.errors import (
    EXIT_BROKEN,
    EXIT_CHECK_FAILED,
    EXIT_OK,
    Interrupted,
    KcrossError,
    LabError,
    UserError,
    clipped,
)
from kcross.lab import kconfig
from kcross.lab.kernel import Kernel, fetch, file_sha256
from kcross.lab.linux_source import Source
from kcross.lab.machines import DEFAULT_SUITES, Guest, arch
from kcross.lab.payload import Payload
from kcross.lab.report import MitigationRow, baseline_report, compare_table, mitigation_table
from kcross.lab.session import UNIT, Counted, count
from kcross.render import clip_words
from kcross.views.lines import say

# ---------------------------------------------------------------- inputs

def resolve_kernel(arch_name: str, path: Path | None, *, refresh: bool,
                   err: Console) -> Kernel:
    if path is None:
        return fetch(arch_name, refresh=refresh, say=lambda line: say(err, f"kcross lab: {line}"))
    kernel = Kernel.from_file(path, arch_name)
    found = kconfig.find(kernel)
    if found is None:
        say(err, f"kcross lab: no configuration found for {path} (config-*, the build "
                       "tree's .config, CONFIG_IKCONFIG): cannot check CONFIG_RSEQ and the "
                       "console before booting")
        return kernel
    options, where = found
    lacking = kconfig.missing(options, arch_name)
    if lacking:
        raise UserError(f"{path} cannot run the lab: its configuration ({where}) lacks "
                        + ", ".join(lacking))
    return kernel


def _check_against(kernel: Kernel, other: Kernel) -> None:
    """--against names the kernel being booted (the same bytes, by SHA-256): one line, before
    two boots that could only count the same instructions."""
    sha = file_sha256(kernel.path)
    if file_sha256(other.path) == sha:
        raise UserError(f"--against {clipped(str(other.path))} is the same kernel as "
                        f"{describe_kernel(kernel)} (SHA-256 {sha[:16]}…): two boots of one kernel "
                        "count the same instructions; name another kernel")


def build(arch_name: str, source: Path, err: Console) -> Payload:
    from kcross.lab.payload import build_payload

    say(err, f"kcross lab: building kcross for {arch_name} (static)...")
    return build_payload(arch_name, source=source)


def describe_kernel(kernel: Kernel) -> str:
    if kernel.source == "debian":
        return f"Debian {kernel.package} {kernel.version}"
    return str(kernel.path)


# ---------------------------------------------------------------- storing

def store_runs(args: argparse.Namespace, runs: Sequence[Counted], err: Console) -> None:
    if args.no_store or not runs:
        return
    from kcross.importer import import_stream
    from kcross.store import DuplicateImport, Store, store_for_writing

    def open_store() -> Store:
        return store_for_writing(args.db)

    stored = []
    for run in runs:
        try:
            done = import_stream(open_store, run.stream, command=["lab", *args.argv],
                                 source="lab", name=f"lab {run.guest.arch.name}",
                                 started_at=run.started_at, finished_at=run.finished_at)
            stored.append(str(done.run_id))
        except DuplicateImport as exc:
            # Counting is deterministic: the same kernel, machine and payload give the
            # same records, already stored.
            stored.append(f"{exc.run_id} (identical, already stored)")
    say(err, "kcross lab: stored as run " + ", ".join(stored))


# ---------------------------------------------------------------- modes

def make_guest(args: argparse.Namespace, kernel: Kernel, mode: str, **over: Any) -> Guest:
    settings: dict[str, Any] = {"append": args.append, "cpu": args.cpu,
                                "machine_opts": tuple(args.machine_opt)}
    settings.update(over)
    return Guest(arch(args.arch), kernel.path, mode=mode, **settings)


def count_boot(args: argparse.Namespace, guest: Guest, kernel: Kernel, payload: Payload,
           variant: str | None, err: Console, env: dict[str, str] | None = None,
           suites: Sequence[str] | None = None, **extra: Any) -> Counted:
    chosen = tuple(args.suite.split(",")) if args.suite else DEFAULT_SUITES
    say(err, f"kcross lab: {guest.arch.name} counting boot ({guest.cpu_model}, "
                   f"{describe_kernel(kernel)}{', ' + variant if variant else ''})...")
    return count(guest, kernel, payload, variant=variant,
                 suites=suites if suites is not None else chosen, bench=args.bench,
                 env=env, timeout=args.timeout, **extra)


def parallel_boots(jobs: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run guest boots two at a time (counting is deterministic: load changes no count);
    each job's result, or the KcrossError it raised.  Anything else (a bug, Ctrl-C, a
    stop signal) stops every guest, cancels the boots not started, and is raised."""
    from kcross.lab.boot import allow_boots, cancel_all

    workers = max(1, min(2, os.cpu_count() or 1))
    pool = ThreadPoolExecutor(max_workers=workers)
    allow_boots()
    try:
        futures = [pool.submit(job) for job in jobs]
        results: list[Any] = []
        for f in futures:
            try:
                results.append(f.result())
            except KcrossError as exc:
                if isinstance(exc, Interrupted):
                    raise
                results.append(exc)
        return results
    except BaseException:
        cancel_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


def counting(args: argparse.Namespace, kernel: Kernel, payload: Payload, out: Console,
             err: Console, selftests: Source | None = None) -> int:
    from kcross import render

    if args.profile or args.trace:
        from kcross.lab.profile_jobs import profiling

        return profiling(args, kernel, payload, out, err)
    if args.compare:
        a, b = args.compare
        runs = parallel_boots([
            lambda m=m: count_boot(args, make_guest(args, kernel, "counting"), kernel, payload,  # type: ignore[misc]
                               f"KCROSS_SYSCALL={m}", err, env={"KCROSS_SYSCALL": m})
            for m in (a, b)])
        raise_first(runs)
        if args.json:
            print_runs_json(runs, (a, b))
            store_runs(args, runs, err)
            return exit_status(runs)
        out.print(compare_table(runs[0], runs[1], a, b))
        out.print(Text("KCROSS_SYSCALL moves only the paths through the run-time selected "
                       "mechanism (kc_sys*: *-dispatch, and stat, read, write, open); the "
                       "*-inline rows are fixed instructions (-inline the arch's own, "
                       "-inline-alt its alternative)"))
        store_runs(args, runs, err)
        return exit_status(runs)
    if args.against:
        other = resolve_kernel(args.arch, args.against, refresh=False, err=err)
        runs = parallel_boots([
            lambda k=k, v=v: count_boot(args, make_guest(args, k, "counting"), k, payload, v, err)  # type: ignore[misc]
            for k, v in ((kernel, "kernel A"), (other, "kernel B"))])
        raise_first(runs)
        if args.json:
            print_runs_json(runs, ("A", "B"))
            store_runs(args, runs, err)
            return exit_status(runs)
        out.print(compare_table(runs[0], runs[1], "A", "B"))
        out.print(Text(f"A: {describe_kernel(kernel)}\nB: {describe_kernel(other)}"))
        store_runs(args, runs, err)
        return exit_status(runs)
    if args.mitigations:
        return mitigations(args, kernel, payload, out, err)
    if args.crosscheck:
        from kcross.lab.crosscheck_jobs import crosscheck

        assert selftests is not None
        return crosscheck(args, kernel, payload, selftests, out, err)
    run = count_boot(args, make_guest(args, kernel, "counting"), kernel, payload, None, err)
    if args.json:
        print_runs_json([run])
        store_runs(args, [run], err)
        return exit_status([run])
    render.print_run(out, run.stream.results, run.stream.fingerprint or {},
                     title=f"{args.arch}: instructions per operation (counting mode, "
                     f"{run.guest.cpu_model}, {describe_kernel(kernel)})", unit=UNIT)
    store_runs(args, [run], err)
    return exit_status([run])


def print_runs_json(runs: Sequence[Counted], labels: Sequence[str] = ()) -> None:
    """--json: each run's records (the lab run stream, as 'kcross show --json' writes a
    stored one), then, for two runs, the comparison record of B against A."""
    from kcross.export.json_lines import comparison_record
    from kcross.lab.report import judged
    from kcross.views.lines import print_json

    for run in runs:
        stream = run.stream
        print_json([r for r in (stream.fingerprint, stream.plan, *stream.results, stream.end)
                    if r is not None])
    if len(runs) == 2 and labels:
        print_json([comparison_record(list(judged(runs[0], runs[1], *labels).values()))])


def raise_first(results: Sequence[Any]) -> None:
    for r in results:
        if isinstance(r, BaseException):
            raise r


def exit_status(runs: Sequence[Counted]) -> int:
    failed = any(r["status"] == "failed" for run in runs for r in run.stream.results)
    return EXIT_CHECK_FAILED if failed else EXIT_OK


def mitigations(args: argparse.Namespace, kernel: Kernel, payload: Payload, out: Console,
                err: Console) -> int:
    from kcross.lab.mitigations import REFUSED, TABLES, counting_guest

    suites = tuple(args.suite.split(",")) if args.suite else ("syscall",)
    stored: list[Counted] = []
    failed_baselines: list[KcrossError] = []
    for index, (baseline, listed) in enumerate(TABLES[args.arch]):
        # The configurations QEMU is known to refuse are tried too (on the first
        # baseline): they show as "not a result" with what QEMU said, never as figures.
        variants = list(listed) + ([v for a, v, _ in REFUSED if a == args.arch]
                                   if index == 0 else [])

        def job(v: Any = None, b: Any = baseline) -> Counted:
            guest, name = counting_guest(args.arch, kernel.path, b, v)
            return count_boot(args, guest, kernel, payload, name, err, suites=suites)
        results = parallel_boots([job, *[lambda v=v: job(v) for v in variants]])
        base = results[0]
        if isinstance(base, KcrossError):
            # No baseline, no table: its variants cannot be compared with anything.
            out.print(Text(f"{args.arch} baseline {baseline.name} ({len(variants)} variants "
                           f"not compared): not a result: {base}", style="red"))
            failed_baselines.append(base)
            continue
        rows = []
        for v, r in zip(variants, results[1:], strict=True):
            if isinstance(r, KcrossError):
                rows.append(MitigationRow(v.name, v.what, refused=str(r), expect=v.expect))
            else:
                rows.append(MitigationRow(v.name, v.what, run=r, expect=v.expect))
                stored.append(r)
        stored.append(base)
        out.print(mitigation_table(args.arch, baseline.name, base, rows))
        out.print(Text(f"  {baseline.name}: {baseline.what}; the kernel reports:"))
        for line in baseline_report(base) or ["nothing to mitigate"]:
            out.print(Text(f"    {line}"))
        for v in variants:
            out.print(Text(f"  {v.name}: {v.what}"))
        out.print()
    if failed_baselines and not stored:
        raise failed_baselines[0]
    store_runs(args, stored, err)
    return EXIT_BROKEN if failed_baselines else exit_status(stored)


def correctness(args: argparse.Namespace, kernel: Kernel, payload: Payload, out: Console,
                err: Console) -> int:
    from kcross.lab.correctness import TestOutcome, evidence, run_tests, summary

    guest = make_guest(args, kernel, "correctness")
    say(err, f"kcross lab: {guest.arch.name} correctness boot ({guest.vcpus} vCPUs, "
                   f"{guest.cpu_model}, {describe_kernel(kernel)}): {len(payload.tests)} tests...")
    finished = itertools.count(1)

    def progress(o: TestOutcome, seconds: float) -> None:   # a line per test as it ends
        why = f": {clip_words(o.reason, 100)}" if o.reason else ""
        say(err, f"kcross lab: [{next(finished)}/{len(payload.tests)}] {o.name} {o.status} "
                 f"({seconds:.1f} s){why}")

    outcomes = run_tests(payload, guest, timeout=args.timeout, progress=progress)
    table = Table(title=f"{args.arch}: the library's tests on a real kernel "
                  f"({guest.vcpus} vCPUs, multi-threaded TCG, {describe_kernel(kernel)})",
                  title_justify="left")
    table.add_column("test", no_wrap=True)
    table.add_column("status")
    table.add_column("why / last line")
    for o in outcomes:
        last = next((line for line in reversed(o.output) if line.strip()), "")
        style = {"passed": "", "skipped": "yellow"}.get(o.status, "red")
        table.add_row(Text(o.name), Text(o.status, style=style), Text(clip_words(o.reason or last, 100)))
    out.print(table)
    for line in evidence(outcomes):
        out.print(Text(f"  {line}"))
    for e in payload.excluded:
        out.print(Text(f"  not run in the guest: {e.name} ({e.reason})"))
    out.print(Text(summary(outcomes)))
    return EXIT_OK if all(o.status != "failed" for o in outcomes) else EXIT_CHECK_FAILED


def _check_options(args: argparse.Namespace) -> None:
    counting_only = [o for o, v in (("--compare", args.compare), ("--against", args.against),
                                    ("--mitigations", args.mitigations),
                                    ("--crosscheck", args.crosscheck),
                                    ("--suite", args.suite), ("--bench", args.bench)) if v]
    if args.mode == "correctness" and counting_only:
        raise UserError(f"{', '.join(counting_only)}: counting-mode options (the correctness "
                        "mode runs the C tests)")
    if args.mitigations and (args.cpu or args.machine_opt or args.append):
        raise UserError("--mitigations sets the CPU model, machine options and command line "
                        "itself: drop --cpu, --machine-opt and --append")
    if args.crosscheck:
        other = [o for o, v in (("--compare", args.compare), ("--against", args.against),
                                ("--mitigations", args.mitigations), ("--bench", args.bench))
                 if v]
        if other:
            raise UserError(f"--crosscheck runs the kernel's selftests beside one counting "
                            f"run of the rows they compare with: not with {', '.join(other)}")
    if args.refresh and args.kernel:
        raise UserError("--refresh fetches Debian's kernel again: not with --kernel")
    if not args.timeout > 0:
        raise UserError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    if args.compare and args.compare[0] == args.compare[1]:
        raise UserError(f"--compare {args.compare[0]} {args.compare[1]}: the same mechanism "
                        "twice; give two different ones")
    if args.suite is not None and not all(args.suite.split(",")):
        raise UserError(f"--suite {args.suite!r}: give suite names separated by commas")


def _check_guest_names(args: argparse.Namespace, src: Path) -> None:
    """--compare's mechanisms, --suite's suites and --bench's benchmarks, as the guest
    harness built from ``src`` knows them (kcross.lab.payload reads them from the tree;
    --profile and --trace check their names in kcross.lab.profile_jobs)."""
    from kcross.lab.payload import benchmarks_named, harness_suites, syscall_mechanisms

    offered = syscall_mechanisms(args.arch, src) if args.compare else None
    if offered is not None:
        for name in args.compare:
            if name not in offered:
                raise UserError(f"--compare {' '.join(args.compare)}: {args.arch} has no "
                                f"syscall mechanism {name!r} (it has: {', '.join(offered)})")
    suites = harness_suites(src) if args.suite else None
    if suites is not None:
        for name in args.suite.split(","):
            if name not in suites:
                raise UserError(f"--suite {args.suite}: no suite {name!r} (suites: "
                                f"{', '.join(suites)})")
    if args.bench and args.mode == "counting" and not (args.profile or args.trace):
        chosen = tuple(args.suite.split(",")) if args.suite else \
            ("syscall",) if args.mitigations else DEFAULT_SUITES
        if benchmarks_named(args.bench, args.arch, src, chosen) == []:
            raise UserError(f"--bench {args.bench}: no such benchmark in {args.arch}'s "
                            f"suites {', '.join(chosen)} (kcross list names them)")


def _check_store(args: argparse.Namespace) -> None:
    """The database counting runs are stored in, checked as `kcross run` checks it (nothing
    created): a run refused there would be thrown away after its boots."""
    if args.no_store or args.mode == "correctness" or args.profile or args.trace:
        return   # nothing is stored (a profiled boot is not)
    from kcross.store import store_for_writing

    store_for_writing(args.db, lazy=True)


def missing_programs(arch_name: str, *, debian_tools: bool,
                     plugin: bool) -> list[tuple[str, tuple[str, ...]]]:
    """The programs this host lacks for ``arch_name``'s lab, each with its packages: QEMU,
    the guest programs' compilers, APT's and dpkg's tools when a Debian package is to be
    fetched (``debian_tools``), gcc for the profile plugin (``plugin``)."""
    from kcross.lab import kernel as debian
    from kcross.lab.machines import arch
    from kcross.lab.payload import missing_tools

    a = arch(arch_name)
    missing: list[tuple[str, tuple[str, ...]]] = []
    if not shutil.which(a.qemu):
        missing.append((a.qemu, (a.qemu_package,)))
    missing += missing_tools(arch_name)
    if debian_tools:
        missing += debian.missing_tools()
    if plugin:
        from kcross.lab.plugin import missing_tools as plugin_tools

        missing += plugin_tools()
    return missing


def _check_programs(args: argparse.Namespace) -> None:
    """Every program this host lacks for the lab, named in one line with the packages."""
    from kcross.lab import kernel as debian
    from kcross.lab.payload import needs

    fetching = args.kernel is None and (args.refresh or debian.cached(args.arch) is None)
    missing = missing_programs(args.arch,
                               # apt and dpkg-deb: the kernel's package, or the selftests'
                               # source package
                               debian_tools=fetching or bool(args.crosscheck),
                               plugin=bool(args.profile or args.trace))
    if missing:
        raise LabError(f"kcross lab {args.arch} needs {needs(missing)}")


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP stop the lab like Ctrl-C (guests killed, temporary files
    removed); a signal the caller set to be ignored (nohup) stays ignored."""
    def stop(signum: int, _frame: Any) -> None:
        raise Interrupted(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, stop)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from kcross.lab.boot import check_configuration
    from kcross.lab.payload import source_tree

    arch(args.arch)   # an unknown arch: one line, before anything is fetched or built
    _check_options(args)
    # Everything that can be refused is refused before anything is fetched, built or
    # booted: the user's input first (machine options, the source tree and the names its
    # guest harness knows, the database, the kernel files), then what this host lacks
    # (all of it in one line), then QEMU's own verdict on the user's CPU model and
    # machine options.
    probe = make_guest(args, Kernel(args.arch, Path("/")),
                   "correctness" if args.mode == "correctness" else "counting")
    src = source_tree(args.arch, args.source)
    _check_guest_names(args, src)
    from kcross.lab.profile_jobs import check as check_profile

    check_profile(args, src)
    _check_store(args)
    own = resolve_kernel(args.arch, args.kernel, refresh=False, err=err) if args.kernel else None
    other = resolve_kernel(args.arch, args.against, refresh=False, err=err) if args.against \
        else None
    if own and other:
        _check_against(own, other)
    _check_programs(args)
    if args.cpu or args.machine_opt:
        check_configuration(probe)
    stop_on_signals()
    kernel = own or resolve_kernel(args.arch, None, refresh=args.refresh, err=err)
    if other and not own:
        _check_against(kernel, other)   # Debian's, now fetched: still before any build or boot
    selftests = None
    if args.crosscheck and args.mode != "correctness":
        from kcross.lab.crosscheck_jobs import selftest_source

        selftests = selftest_source(args, kernel, err)
    payload = build(args.arch, src, err)
    status = EXIT_OK
    if args.mode in ("correctness", "both"):
        status = max(status, correctness(args, kernel, payload, out, err))
    if args.mode in ("counting", "both"):
        status = max(status, counting(args, kernel, payload, out, err, selftests))
    return status
