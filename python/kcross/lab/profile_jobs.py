"""The profile jobs of ``kcross lab ARCH --profile`` / ``--trace BENCH`` (issue 16).

Checks first (:func:`check`: the options together, the traced benchmark as the source
tree's harness names it; before anything is fetched, built or booted; the host's gcc for
the plugin is among what kcross.lab.jobs names this host lacks), then :func:`profiling`:
the plugin built and loaded once by QEMU, then the profiled boots (kcross.lab.profile),
shown by kcross.views.profile:

- alone: each benchmark's profile (``--trace``: its one operation in order);
- ``--compare M1 M2`` / ``--against KERNEL``: each side's profile boot, and per benchmark
  what changed (the per-op figures judged by kcross.judge, the functions and costly
  instructions that changed);
- ``--mitigations``: every baseline and variant of kcross.lab.mitigations profiled on the
  null syscall (getppid-inline, or ``--bench``), each variant's changes against its
  baseline: the flush trigger gone, the flush loop there, where the count alone says
  nothing.

A profiled boot is not stored: its harness ran with the profile windows on
(KCROSS_PROFILE), and its profile is printed (``--json``: one record per benchmark).
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from kcross.cli.options import say
from kcross.errors import EXIT_BROKEN, EXIT_OK, KcrossError, LabError, UserError
from kcross.lab.kernel import Kernel
from kcross.lab.machines import DEFAULT_SUITES, Guest, arch
from kcross.lab.payload import Payload, find_source

_SUITE = re.compile(r'const\s+struct\s+kh_suite\s+kh_suite_\w+\s*=\s*\{\s*"([^"]+)",\s*(\w+)')
_ROW = re.compile(r'^\s*\{\s*"([^"]+)",\s*"', re.MULTILINE)


def harness_benchmarks(src: Path) -> tuple[list[str], list[str]] | None:
    """suite/name of every benchmark row written out in the tree's harness/bench/*.c
    (every arch's), and the suites whose table also makes rows by macro (the spin hints,
    the percpu-scaling variants: their names are the guest harness's to check); None when
    the tree does not say in the expected form."""
    names: list[str] = []
    generated: list[str] = []
    try:
        files = sorted((src / "harness" / "bench").glob("*.c"))
        for f in files:
            text = f.read_text()
            for suite in _SUITE.finditer(text):
                table = text.find(f"{suite[2]}[] = {{")
                if table < 0:
                    continue
                rows = text[table:text.find("\n};", table)]
                names += [f"{suite[1]}/{n}" for n in _ROW.findall(rows)]
                if "#define" in rows or not _ROW.search(rows):
                    generated.append(suite[1])
    except OSError:
        return None
    return (names, generated) if names else None


def traced_benchmark(glob: str, src: Path) -> str:
    """The one benchmark (suite/name, or SUITE/GLOB for a suite whose rows are made by
    macro) ``--trace GLOB`` names; UserError when it names none or several."""
    read = harness_benchmarks(src)
    if read is None:
        raise UserError(f"--trace {glob}: cannot read the benchmarks of {src}/harness/bench")
    known, generated = read
    hits = [n for n in known if fnmatch.fnmatchcase(n, glob)
            or fnmatch.fnmatchcase(n.split("/", 1)[1], glob)]
    suite, slash, rest = glob.partition("/")
    if not hits and slash and suite in generated and not any(c in rest for c in "*?["):
        return glob   # a row made by macro: the guest harness checks the name
    if not hits:
        if generated:
            raise UserError(f"--trace {glob}: no such benchmark (kcross list names them; "
                            f"a row of {', '.join(generated)} is named SUITE/NAME)")
        raise UserError(f"--trace {glob}: no such benchmark (kcross list names them)")
    if len(hits) > 1:
        shown = ", ".join(hits[:4]) + (", ..." if len(hits) > 4 else "")
        raise UserError(f"--trace {glob}: names {len(hits)} benchmarks ({shown}); a trace "
                        "is one benchmark's operation: name one")
    return hits[0]


def check(args: argparse.Namespace, src: Path) -> None:
    """What --profile and --trace refuse, before anything is fetched, built or booted."""
    if not (args.profile or args.trace):
        return
    opt = "--trace" if args.trace else "--profile"
    if args.mode != "counting":
        raise UserError(f"{opt} profiles counting runs: not with --mode {args.mode}")
    if getattr(args, "crosscheck", None):
        raise UserError(f"{opt} and --crosscheck are separate boots: run one, then the other")
    if args.trace:
        if args.bench:
            raise UserError("--trace names its benchmark: drop --bench")
        if args.compare or args.against or args.mitigations:
            raise UserError("--trace shows one boot's operation: not with --compare, "
                            "--against or --mitigations (use --profile for differences)")
        traced_benchmark(args.trace, src)


# ---------------------------------------------------------------- the boots

def profiling(args: argparse.Namespace, kernel: Kernel, payload: Payload, out: Console,
              err: Console) -> int:
    from kcross.lab.jobs import describe_kernel, exit_status, make_guest, parallel_boots, raise_first
    from kcross.lab.profile import Profiled, prepare, profile_counted

    src = find_source(args.source)
    suites: Sequence[str] = tuple(args.suite.split(",")) if args.suite else DEFAULT_SUITES
    bench = args.bench
    if args.trace:
        name = traced_benchmark(args.trace, src)
        suites, bench = (name.split("/", 1)[0],), name
    with tempfile.TemporaryDirectory(prefix="kcross-profile-check-") as tmp:
        say(err, "kcross lab: building the profile plugin and loading it in "
                 f"{arch(args.arch).qemu}...")
        prepared = prepare(args.arch, kernel, payload, src, arch(args.arch).qemu, Path(tmp))

    def boot(guest: Guest, k: Kernel, label: str, env: dict[str, str] | None = None,
             only: str | None = None, on: Sequence[str] = suites) -> Profiled:
        say(err, f"kcross lab: {guest.arch.name} profiled counting boot ({guest.cpu_model}, "
                 f"{describe_kernel(k)}{', ' + label if label else ''})...")
        p = prepared
        if k is not kernel:   # --against: the other kernel's System.map, if any
            with tempfile.TemporaryDirectory(prefix="kcross-profile-check-") as tmp:
                p = prepare(args.arch, k, payload, src, guest.arch.qemu, Path(tmp))
        return profile_counted(guest, k, payload, source=src, variant=label or None,
                               suites=on, bench=only if only is not None else bench, env=env,
                               trace=bool(args.trace), timeout=args.timeout, prepared=p)

    if args.mitigations:
        return _mitigations(args, kernel, boot, out)
    jobs: list[Callable[[], Profiled]]
    labels: tuple[str, str]
    if args.compare:
        a, b = args.compare
        labels = (a, b)
        jobs = [lambda m=m: boot(make_guest(args, kernel, "counting"), kernel, f"KCROSS_SYSCALL={m}",  # type: ignore[misc]
                                 {"KCROSS_SYSCALL": m}) for m in (a, b)]
    elif args.against:
        from kcross.lab.jobs import resolve_kernel

        other = resolve_kernel(args.arch, args.against, refresh=False, err=err)
        labels = ("A", "B")
        jobs = [lambda k=k, v=v: boot(make_guest(args, k, "counting"), k, v)  # type: ignore[misc]
                for k, v in ((kernel, "kernel A"), (other, "kernel B"))]
    else:
        run = boot(make_guest(args, kernel, "counting"), kernel, "")
        _show_one(args, run, out)
        return exit_status([run.counted])
    runs = parallel_boots(jobs)
    raise_first(runs)
    _show_two(args, runs[0], runs[1], labels, out)
    if args.against:
        out.print(Text(f"A: {describe_kernel(kernel)}\nB: {describe_kernel(other)}"))
    return exit_status([r.counted for r in runs])


def _symbols_line(run: Any) -> Text:
    return Text(f"kernel symbols: {run.kernel_symbols}; a profiled boot is not stored "
                "(docs/lab.md, \"Profiles and traces\")", style="dim")


def _show_one(args: argparse.Namespace, run: Any, out: Console) -> None:
    from kcross.views.profile import profile_view, trace_view

    if args.json:
        _json([(None, run)])
        return
    if not run.benches:
        raise LabError("the profiled boot measured no benchmark (all skipped or failed)")
    for p in run.benches.values():
        out.print(profile_view(p))
        if args.trace:
            out.print(trace_view(p))
    out.print(_symbols_line(run))


def _show_two(args: argparse.Namespace, a: Any, b: Any, labels: tuple[str, str],
              out: Console) -> None:
    from kcross.lab.profile_diff import diff
    from kcross.views.profile import diff_view

    if args.json:
        _json([(labels[0], a), (labels[1], b)])
        return
    for name, pa in a.benches.items():
        pb = b.benches.get(name)
        if pb is not None:
            out.print(diff_view(diff(pa, pb, labels), labels))
    out.print(_symbols_line(a))


def _json(runs: Sequence[tuple[str | None, Any]]) -> None:
    """One JSON record per benchmark profile (type "profile")."""
    from dataclasses import asdict

    from kcross.cli.options import print_json

    records = []
    for label, run in runs:
        for p in run.benches.values():
            record = {"type": "profile", "side": label, "kernel_symbols": run.kernel_symbols,
                      **asdict(p)}
            records.append(record)
    print_json(records)


def _mitigations(args: argparse.Namespace, kernel: Kernel, boot: Callable[..., Any],
                 out: Console) -> int:
    from kcross.lab.jobs import parallel_boots
    from kcross.lab.mitigations import TABLES, variant_args
    from kcross.lab.profile_diff import diff
    from kcross.lab.report import KEY_BENCH
    from kcross.views.profile import diff_view

    only = args.bench or KEY_BENCH
    status = EXIT_OK
    for baseline, variants in TABLES[args.arch]:
        def job(v: Any = None, b: Any = baseline) -> Any:
            cpu, opts, append = ((b.cpu, b.machine_opts, b.append) if v is None
                                 else variant_args(args.arch, b, v))
            guest = Guest(arch(args.arch), kernel.path, mode="counting", cpu=cpu,
                          machine_opts=tuple(opts), append=append)
            return boot(guest, kernel, b.name if v is None else f"{b.name} + {v.name}",
                        only=only, on=("syscall",))
        results = parallel_boots([job, *[lambda v=v: job(v) for v in variants]])
        base = results[0]
        if isinstance(base, KcrossError):
            out.print(Text(f"{args.arch} baseline {baseline.name}: not a result: {base}",
                           style="red"))
            status = EXIT_BROKEN
            continue
        for v, r in zip(variants, results[1:], strict=True):
            if isinstance(r, KcrossError):
                out.print(Text(f"{baseline.name} + {v.name}: not a result: {r}", style="red"))
                continue
            for name, pa in base.benches.items():
                pb = r.benches.get(name)
                if pb is not None:
                    out.print(diff_view(diff(pa, pb, (baseline.name, v.name)),
                                        (baseline.name, v.name)))
    return status
