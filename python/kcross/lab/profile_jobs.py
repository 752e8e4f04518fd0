"""The profile jobs of ``kcross lab ARCH --profile`` / ``--trace BENCH`` (issue 16).

Checks first (:func:`check`: the options together, the traced benchmark as the source
tree's harness names it; before anything is fetched, built or booted; the host's gcc for
the plugin is among what kcross.lab.jobs names this host lacks), then :func:`profiling`:
the plugin built and loaded once by QEMU, then the profiled boots (kcross.lab.profile),
shown by kcross.views.profile:

- alone: each benchmark's profile (``--trace``: its one operation in order);
- ``--compare M1 M2`` / ``--compare-env NAME=VALUE`` / ``--against KERNEL``: each side's
  profile boot, and per benchmark what changed (the per-op figures judged by
  kcross.judge, the functions and costly instructions that changed);
- ``--mitigations``: every baseline and variant of kcross.lab.mitigations profiled on the
  null syscall (getppid-inline, or ``--bench``), each variant's changes against its
  baseline: the flush trigger gone, the flush loop there, where the count alone says
  nothing.

A profiled boot is not stored: its harness ran with the profile windows on
(KCROSS_PROFILE), and its profile is printed (``--json``: one record per benchmark).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from kcross.errors import ECHO_MAX, EXIT_BROKEN, KcrossError, LabError, UserError, clipped
from kcross.lab.boots import (
    describe_kernel,
    exit_status,
    make_guest,
    parallel_boots,
    raise_first,
    resolve_kernel,
)
from kcross.lab.kernel import Kernel
from kcross.lab.machines import Guest, arch
from kcross.lab.payload import Payload, benchmarks_named, find_source, harness_benchmarks
from kcross.lab.request import LabRequest, settings_text
from kcross.series import matches
from kcross.views.lines import say
from kcross.views.text import clip_words

# --profile --mitigations profiles the null syscall: this suite's KEY_BENCH, or --bench.
MITIGATIONS_SUITE = "syscall"

def _benchmarks(opt: str, arch_name: str, src: Path) -> tuple[str, ...]:
    listed = harness_benchmarks(arch_name, src)
    if listed is None:
        raise UserError(f"{opt}: cannot read the benchmarks of {src}/harness/bench")
    return listed


def traced_benchmark(glob: str, arch_name: str, src: Path) -> str:
    """The one benchmark (suite/name) of ``arch_name``'s guest harness ``--trace GLOB``
    names; UserError when it names none or several."""
    named = clipped(glob, ECHO_MAX)
    hits = [n for n in _benchmarks(f"--trace {named}", arch_name, src) if matches(glob, n)]
    if not hits:
        raise UserError(f"--trace {named}: no such benchmark on {arch_name} "
                        f"(kcross list names them)")
    if len(hits) > 1:
        shown = ", ".join(hits[:4]) + (", ..." if len(hits) > 4 else "")
        raise UserError(f"--trace {named}: names {len(hits)} benchmarks ({shown}); a trace "
                        "is one benchmark's operation: name one")
    return hits[0]


def _check_bench(request: LabRequest, bench: str, src: Path) -> None:
    """--profile's --bench GLOB names at least one benchmark of the suites profiled (for
    --mitigations, the syscall suite: its null syscall)."""
    suites = (MITIGATIONS_SUITE,) if request.mitigations else request.guest.suites()
    named = benchmarks_named(bench, request.arch, src, suites)
    if named is None:
        raise UserError(f"--bench {clipped(bench, ECHO_MAX)}: cannot read the benchmarks of "
                        f"{src}/harness/bench")
    if not named:
        where = ("the syscall suite --profile --mitigations profiles" if request.mitigations
                 else f"{request.arch}'s suites {', '.join(suites)}")
        raise UserError(f"--bench {clipped(bench, ECHO_MAX)}: no such benchmark in {where} "
                        "(kcross list names them)")


def check(request: LabRequest, src: Path) -> None:
    """What --profile and --trace refuse, before anything is fetched, built or booted."""
    if not request.profiled:
        return
    opt = "--trace" if request.trace else "--profile"
    if request.mode != "counting":
        raise UserError(f"{opt} profiles counting runs: not with --mode {request.mode}")
    if request.peers:
        raise UserError(f"{opt} and --peers are separate boots: run one, then the other")
    if request.trace:
        if request.guest.bench:
            raise UserError("--trace names its benchmark: drop --bench")
        if request.compare or request.compare_env or request.against or request.mitigations:
            raise UserError("--trace shows one boot's operation: not with --compare, "
                            "--compare-env, --against or --mitigations (use --profile for "
                            "differences)")
        traced_benchmark(request.trace, request.arch, src)
    elif request.guest.bench:
        _check_bench(request, request.guest.bench, src)


# ---------------------------------------------------------------- the boots

def profiling(request: LabRequest, kernel: Kernel, payload: Payload, out: Console,
              err: Console) -> int:
    from kcross.lab.profile import Profiled, prepare, profile_counted

    src = find_source(request.source)
    suites: Sequence[str] = request.guest.suites()
    bench = request.guest.bench
    if request.trace:
        name = traced_benchmark(request.trace, request.arch, src)
        suites, bench = (name.split("/", 1)[0],), name
    with tempfile.TemporaryDirectory(prefix="kcross-profile-check-") as tmp:
        say(err, "kcross lab: building the profile plugin and loading it in "
                 f"{arch(request.arch).qemu}...")
        prepared = prepare(request.arch, kernel, payload, src, arch(request.arch).qemu, Path(tmp))

    def boot(guest: Guest, k: Kernel, label: str, env: dict[str, str] | None = None,
             only: str | None = None, on: Sequence[str] = suites) -> Profiled:
        say(err, f"kcross lab: {guest.arch.name} profiled counting boot ({guest.cpu_model}, "
                 f"{describe_kernel(k)}{', ' + label if label else ''})...")
        p = prepared
        if k is not kernel:   # --against: the other kernel's System.map, if any
            with tempfile.TemporaryDirectory(prefix="kcross-profile-check-") as tmp:
                p = prepare(request.arch, k, payload, src, guest.arch.qemu, Path(tmp))
        return profile_counted(guest, k, payload, source=src, variant=label or None,
                               suites=on, bench=only if only is not None else bench,
                               env=request.guest.environment(env),
                               trace=bool(request.trace), timeout=request.timeout, prepared=p)

    if request.mitigations:
        return _mitigations(request, kernel, boot, out, err)
    jobs: list[Callable[[], Profiled]]
    labels: tuple[str, str]
    sides = request.sides()
    if sides:
        labels = (sides[0].label, sides[1].label)
        jobs = [lambda side=side: boot(make_guest(request, kernel, "counting"), kernel,  # type: ignore[misc]
                                       settings_text(request.guest.environment(side.env) or {}),
                                       dict(side.env))
                for side in sides]
    elif request.against:
        other = resolve_kernel(request.arch, request.against, refresh=False, err=err)
        labels = ("A", "B")
        jobs = [lambda k=k, v=v: boot(make_guest(request, k, "counting"), k, v)  # type: ignore[misc]
                for k, v in ((kernel, "kernel A"), (other, "kernel B"))]
    else:
        run = boot(make_guest(request, kernel, "counting"), kernel, "")
        _show_one(request, run, out)
        return exit_status([run.counted])
    runs = parallel_boots(jobs)
    raise_first(runs)
    _show_two(request, runs[0], runs[1], labels, out)
    if request.against and not request.json_output:   # --json: the records alone
        out.print(Text(f"A: {describe_kernel(kernel)}\nB: {describe_kernel(other)}"))
    return exit_status([r.counted for r in runs])


def _symbols_line(run: Any) -> Text:
    return Text(f"kernel symbols: {run.kernel_symbols}; a profiled boot is not stored "
                "(docs/lab.md, \"Profiles and traces\")", style="dim")


def _show_one(request: LabRequest, run: Any, out: Console) -> None:
    from kcross.views.profile import profile_view, trace_view

    if request.json_output:
        _json([(None, run)])
        return
    if not run.benches:
        raise LabError("the profiled boot measured no benchmark (all skipped or failed)")
    for p in run.benches.values():
        out.print(profile_view(p))
        if request.trace:
            out.print(trace_view(p))
    out.print(_symbols_line(run))


def _show_two(request: LabRequest, a: Any, b: Any, labels: tuple[str, str],
              out: Console) -> None:
    from kcross.lab.profile_diff import diff
    from kcross.views.profile import diff_view

    if request.json_output:
        _json([(labels[0], a), (labels[1], b)])
        return
    _show_pairs(a, b, labels, out,
                lambda pa, pb, labels: diff_view(diff(pa, pb, labels), labels))
    out.print(_symbols_line(a))


def _show_pairs(a: Any, b: Any, labels: tuple[str, str], out: Console,
                view: Callable[[Any, Any, tuple[str, str]], Any]) -> None:
    """Each benchmark's two profiles shown by ``view``; a benchmark one side lacks is said
    (the other side's record of it: skipped or failed, and why)."""
    for name in [*a.benches, *(n for n in b.benches if n not in a.benches)]:
        pa, pb = a.benches.get(name), b.benches.get(name)
        if pa is not None and pb is not None:
            out.print(view(pa, pb, labels))
        else:
            lacking, run = (labels[1], b) if pb is None else (labels[0], a)
            out.print(Text(f"{name}: not in {lacking}: {_why_missing(run, name)}",
                           style="yellow"))


def _why_missing(run: Any, name: str) -> str:
    """Why a profiled boot has no profile of benchmark ``name``: its harness record's
    status and reason, if it has one."""
    for r in run.counted.stream.results:
        if f"{r.get('suite')}/{r.get('name')}" == name or r.get("name") == name:
            reason = r.get("reason")
            return clip_words(f"{r.get('status')}" + (f" ({reason})" if reason else ""), 200)
    return "not run"


def _json(runs: Sequence[tuple[str | None, Any]]) -> None:
    """One JSON record per benchmark profile (type "profile")."""
    from dataclasses import asdict

    from kcross.views.lines import print_json

    records = []
    for label, run in runs:
        for p in run.benches.values():
            record = {"type": "profile", "side": label, "kernel_symbols": run.kernel_symbols,
                      **asdict(p)}
            records.append(record)
    print_json(records)


def _mitigations(request: LabRequest, kernel: Kernel, boot: Callable[..., Any],
                 out: Console, err: Console) -> int:
    from kcross.lab.mitigations import TABLES, counting_guest
    from kcross.lab.profile_diff import diff
    from kcross.lab.report import KEY_BENCH
    from kcross.views.profile import diff_view

    only = request.guest.bench or KEY_BENCH
    broken = False      # a boot that failed: as kcross lab --mitigations, EXIT_BROKEN
    counted = []        # the boots that ran: their failed benchmarks fail the run
    for baseline, variants in TABLES[request.arch]:
        def job(v: Any = None, b: Any = baseline) -> Any:
            guest, label = counting_guest(request.arch, kernel.path, b, v)
            return boot(guest, kernel, label, only=only, on=(MITIGATIONS_SUITE,))
        results = parallel_boots([job, *[lambda v=v: job(v) for v in variants]])
        counted += [r.counted for r in results if not isinstance(r, KcrossError)]
        base = results[0]

        def failed(line: str) -> None:   # --json: standard output holds JSON lines only
            if request.json_output:
                say(err, f"kcross lab: {line}")
            else:
                out.print(Text(line, style="red"))
        if isinstance(base, KcrossError):
            failed(f"{request.arch} baseline {baseline.name} ({len(variants)} variants not "
                   f"compared): not a result: {base}")
            broken = True
            continue
        if request.json_output:   # the baseline's profiles, then each variant's
            _json([(baseline.name, base)])
        for v, r in zip(variants, results[1:], strict=True):
            if isinstance(r, KcrossError):
                failed(f"{baseline.name} + {v.name}: not a result: {r}")
                broken = True
                continue
            if request.json_output:
                _json([(v.name, r)])
                continue
            _show_pairs(base, r, (baseline.name, v.name), out,
                        lambda pa, pb, labels: diff_view(diff(pa, pb, labels), labels))
    return EXIT_BROKEN if broken else exit_status(counted)
