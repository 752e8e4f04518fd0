"""What the lab's jobs share (counting, profiling, the kernel's selftests as peers;
``kcross lava job`` and ``kcross reproduce`` take the kernel's resolution, the
programs a host lacks and the stop signals from here too): the kernel resolved, a guest
made from the request, a counting boot, boots two at a time, the runs stored, printed as
JSON lines and turned into an exit status.

Below the jobs (kcross.lab.jobs, kcross.lab.profile_jobs, kcross.lab.peers_jobs):
this module imports none of them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console

from kcross import errors
from kcross.errors import EXIT_CHECK_FAILED, EXIT_OK, Interrupted, KcrossError, UserError
from kcross.lab import kconfig
from kcross.lab.kernel import Kernel, fetch
from kcross.lab.machines import Guest
from kcross.lab.payload import Payload
from kcross.lab.request import LabRequest
from kcross.lab.session import Counted, count
from kcross.views.lines import print_json, say

# ---------------------------------------------------------------- the kernel

def resolve_kernel(arch_name: str, path: Path | None, *, refresh: bool,
                   err: Console, release: str | None = None) -> Kernel:
    """The kernel to boot: Debian ``release``'s (None: the default's; fetched and cached)
    when ``path`` is None, else the user's file, its configuration checked when one is
    found."""
    if path is None:
        return fetch(arch_name, release=release, refresh=refresh,
                     say=lambda line: say(err, f"kcross lab: {line}"))
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


def describe_kernel(kernel: Kernel) -> str:
    from kcross.lab.releases import DEFAULT

    if kernel.source == "debian":
        release = f" {kernel.release}" if kernel.release not in (None, DEFAULT) else ""
        return f"Debian{release} {kernel.package} {kernel.version}"
    return str(kernel.path)


# ---------------------------------------------------------------- the host

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


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP stop the lab like Ctrl-C (guests killed, temporary files
    removed), raised as the :class:`Interrupted` its jobs answer for; a signal the caller
    set to be ignored (nohup) stays ignored."""
    errors.stop_on_signals(Interrupted)


# ---------------------------------------------------------------- the boots

def make_guest(request: LabRequest, kernel: Kernel, mode: str, **over: Any) -> Guest:
    """The request's guest of ``kernel`` in ``mode`` (``over``: settings replacing the
    request's)."""
    return request.guest.guest_of(request.arch, kernel.path, mode, **over)


def count_boot(request: LabRequest, guest: Guest, kernel: Kernel, payload: Payload,
               variant: str | None, err: Console, env: Mapping[str, str] | None = None,
               suites: Sequence[str] | None = None, **extra: Any) -> Counted:
    """One counting boot of ``guest``: the request's suites (or ``suites``) and --bench,
    its harness given --env's settings and ``env``'s, within its --timeout."""
    say(err, f"kcross lab: {guest.arch.name} counting boot ({guest.cpu_model}, "
             f"{describe_kernel(kernel)}{', ' + variant if variant else ''})...")
    return count(guest, kernel, payload, variant=variant,
                 suites=suites if suites is not None else request.guest.suites(),
                 bench=request.guest.bench, env=request.guest.environment(env),
                 timeout=request.timeout, **extra)


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


def raise_first(results: Sequence[Any]) -> None:
    for r in results:
        if isinstance(r, BaseException):
            raise r


# ---------------------------------------------------------------- the runs

def store_runs(request: LabRequest, runs: Sequence[Counted], err: Console) -> None:
    """The counting runs stored (unless --no-store), one line saying as which runs."""
    if request.no_store or not runs:
        return
    from kcross.importer import import_stream
    from kcross.store import DuplicateImport, Store, store_for_writing

    def open_store() -> Store:
        return store_for_writing(request.db)

    stored = []
    for run in runs:
        try:
            done = import_stream(open_store, run.stream, command=["lab", *request.argv],
                                 source="lab", name=f"lab {run.guest.arch.name}",
                                 started_at=run.started_at, finished_at=run.finished_at)
            stored.append(str(done.run_id))
        except DuplicateImport as exc:
            # Counting is deterministic: the same kernel, machine and payload give the
            # same records, already stored.
            stored.append(f"{exc.run_id} (identical, already stored)")
    say(err, "kcross lab: stored as run " + ", ".join(stored))


def print_runs_json(runs: Sequence[Counted], labels: Sequence[str] = ()) -> None:
    """--json: each run's records (the lab run stream, as 'kcross show --json' writes a
    stored one), then, for two runs, the comparison record of B against A."""
    for run in runs:
        stream = run.stream
        print_json([r for r in (stream.fingerprint, stream.plan, *stream.results, stream.end)
                    if r is not None])
    if len(runs) == 2 and labels:
        print_comparison_json(runs[0], runs[1], (labels[0], labels[1]))


def print_comparison_json(a: Counted, b: Counted, labels: tuple[str, str]) -> None:
    """--json: the comparison record of run ``b`` against run ``a`` (kcross.lab.report's
    judgement of each row, exact)."""
    from kcross.export.json_lines import comparison_record
    from kcross.lab.report import judged

    print_json([comparison_record(list(judged(a, b, *labels).values()))])


def exit_status(runs: Sequence[Counted]) -> int:
    failed = any(r["status"] == "failed" for run in runs for r in run.stream.results)
    return EXIT_CHECK_FAILED if failed else EXIT_OK
