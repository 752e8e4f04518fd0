"""The jobs of ``kcross lab ARCH`` (what is asked: kcross.lab.request, built by
kcross.cli.lab; what the jobs share: kcross.lab.boots): the library and harness on a real
kernel of ARCH under QEMU (issue 8).

What it does, in order: the kernel (Debian's, fetched and cached, or ``--kernel``, whose
configuration is checked), the guest payload (kcross built for ARCH, static, from the
source tree: kcross.lab.payload), then the mode:

- counting (default): the harness in a one-vCPU ``-icount`` guest; figures are
  instructions per operation, stored as a lab run.  ``--compare M1 M2`` runs it with the
  syscall mechanism forced to each (KCROSS_SYSCALL) and prints the difference;
  ``--compare-env NAME=VALUE`` the same without and with the harness's settings;
  ``--against KERNEL`` the same with a second kernel; ``--against-source DIR`` with the
  guest programs built from a second source tree; ``--mitigations`` the arch's table
  of mitigation variants (kcross.lab.mitigations) against their baselines.  Each axis
  takes one path (:func:`two_sides`; the mitigation table its own table) and, where the
  request explains, the explanation of every changed row (kcross.lab.explain).
- correctness: the library's C tests and the per-CPU stress tier in a two-vCPU guest
  (multi-threaded TCG: preemption, migration, real rseq aborts); exit 1 if one failed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from kcross.errors import (
    EXIT_BROKEN,
    EXIT_CHECK_FAILED,
    EXIT_OK,
    KcrossError,
    LabError,
    UserError,
    clipped,
    did_you_mean,
)
from kcross.lab import peers_jobs, profile_jobs
from kcross.lab.boots import (
    count_boot,
    describe_kernel,
    exit_status,
    make_guest,
    missing_programs,
    parallel_boots,
    print_comparison_json,
    print_runs_json,
    raise_first,
    resolve_kernel,
    stop_on_signals,
    store_runs,
)
from kcross.lab.explain import Explained, Subject
from kcross.lab.kernel import Kernel, file_sha256
from kcross.lab.linux_source import Source
from kcross.lab.machines import DEFAULT_SUITES, arch
from kcross.lab.payload import Payload, find_source, source_tree
from kcross.lab.report import (
    MitigationRow,
    baseline_report,
    compare_table,
    judged,
    mitigation_table,
)
from kcross.lab.request import EnvSide, LabRequest, settings_text
from kcross.lab.session import UNIT, Counted
from kcross.views.explain import explanation_records, explanation_view
from kcross.views.lab import correctness_table
from kcross.views.lines import print_json, say
from kcross.views.run import print_run
from kcross.views.table import terminal
from kcross.views.text import clip_words

# ---------------------------------------------------------------- inputs

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


# ---------------------------------------------------------------- modes

def counting(request: LabRequest, kernel: Kernel, payload: Payload, out: Console,
             err: Console, selftests: Source | None = None, other: Payload | None = None
             ) -> int:

    if request.profiled:
        return profile_jobs.profiling(request, kernel, payload, out, err)
    sides = request.sides()
    if sides:
        return two_sides(request, *env_subjects(request, kernel, payload, sides), out, err,
                         sides_notes(request, sides))
    if request.against:
        k_b = resolve_kernel(request.arch, request.against, refresh=False, err=err)
        a, b = (Subject(label, make_guest(request, k, "counting"), k, payload,
                        env=request.guest.environment(), variant=f"kernel {label}")
                for label, k in (("A", kernel), ("B", k_b)))
        return two_sides(request, a, b, out, err, [f"A: {describe_kernel(kernel)}",
                                                   f"B: {describe_kernel(k_b)}"])
    if request.against_source:
        assert other is not None
        guest = make_guest(request, kernel, "counting")
        a, b = (Subject(label, guest, kernel, p, env=request.guest.environment(),
                        variant=f"source {label}")
                for label, p in (("A", payload), ("B", other)))
        return two_sides(request, a, b, out, err, [
            f"A: the guest programs built from {source_tree(request.arch, request.source)}",
            f"B: the guest programs built from {request.against_source}",
            f"both on {describe_kernel(kernel)}"])
    if request.mitigations:
        return mitigations(request, kernel, payload, out, err)
    if request.peers:
        assert selftests is not None
        return peers_jobs.with_peers(request, kernel, payload, selftests, out, err)
    run = count_boot(request, make_guest(request, kernel, "counting"), kernel, payload,
                     settings_text(request.guest.settings()) or None, err)
    if request.json_output:
        print_runs_json([run])
        store_runs(request, [run], err)
        return exit_status([run])
    print_run(out, run.stream.results, run.stream.fingerprint or {},
              title=f"{request.arch}: instructions per operation (counting mode, "
                    f"{run.guest.cpu_model}, {describe_kernel(kernel)})", unit=UNIT)
    store_runs(request, [run], err)
    return exit_status([run])


def env_subjects(request: LabRequest, kernel: Kernel, payload: Payload,
                 sides: Sequence[EnvSide]) -> tuple[Subject, Subject]:
    """The two sides of ``--compare`` or ``--compare-env``: ``kernel`` and one guest, each
    side's harness given --env's settings and the side's, named (its runs' variant) by the
    settings it got."""
    guest = make_guest(request, kernel, "counting")

    def subject(side: EnvSide) -> Subject:
        env = request.guest.environment(side.env)
        return Subject(side.label, guest, kernel, payload, env=env,
                       variant=settings_text(env or {}) or None)

    a, b = (subject(side) for side in sides)
    return a, b


def sides_notes(request: LabRequest, sides: Sequence[EnvSide]) -> list[str]:
    """The lines under the table of ``--compare`` or ``--compare-env``: what moves with the
    mechanism, or what each side's settings were."""
    if request.compare:
        return ["KCROSS_SYSCALL moves only the paths through the run-time selected mechanism "
                "(kc_sys*: *-dispatch, and stat, read, write, open); the *-inline rows are "
                "fixed instructions (-inline the arch's own, -inline-alt its alternative)"]
    a, b = sides
    given = settings_text(request.guest.settings())
    return [f"{a.label}: {', '.join(b.env)} unset (the harness's default)",
            f"{b.label}: {settings_text(b.env)}",
            *([f"both: {given} (--env)"] if given else [])]


def count_subjects(request: LabRequest, subjects: Sequence[Subject],
                   err: Console) -> list[Counted]:
    """One counting boot per side, two at a time; the first that failed raised."""
    runs = parallel_boots([
        lambda s=s: count_boot(request, s.guest, s.kernel, s.payload, s.variant, err,  # type: ignore[misc]
                               env=s.env) for s in subjects])
    raise_first(runs)
    return runs


def two_sides(request: LabRequest, a: Subject, b: Subject, out: Console, err: Console,
              notes: Sequence[str] = ()) -> int:
    """Every axis of change (--compare, --compare-env, --against, --against-source): a
    counting boot per side (two at a time), the table of B against A (with ``notes`` under
    it) or their records (--json), the runs stored, then, when the request explains
    (LabRequest.explained), the explanation of every changed row (kcross.lab.explain)."""
    runs = count_subjects(request, (a, b), err)
    labels = (a.label, b.label)
    if request.json_output:
        print_runs_json(runs, labels)
    else:
        table = compare_table(runs[0], runs[1], *labels)
        table.notes += notes
        out.print(terminal(table))
    store_runs(request, runs, err)
    if request.explained:
        explained = explain_changes(request, a, b, judged(runs[0], runs[1], *labels), err)
        if request.json_output:
            print_json(explanation_records(explained))
        else:
            out.print(explanation_view(explained))
    return exit_status(runs)


def explain_changes(request: LabRequest, a: Subject, b: Subject,
                    verdicts: Mapping[str, Any], err: Console,
                    memo: dict[Any, Any] | None = None) -> Explained:
    """kcross.lab.explain for the request: its source tree, its --timeout, lines on ``err``,
    and the host time of the explained step said."""
    from kcross.lab.explain import explain

    explained = explain(a, b, verdicts, source=find_source(request.source),
                        timeout=request.timeout, say=lambda line: say(err, line),
                        glob=request.guest.bench, memo=memo)
    if explained.steps:
        say(err, f"kcross lab: {a.label} → {b.label}: {len(explained.steps)} changed "
                 f"row{'' if len(explained.steps) == 1 else 's'} explained in "
                 f"{explained.seconds:.0f} s of host time")
    return explained


def mitigations(request: LabRequest, kernel: Kernel, payload: Payload, out: Console,
                err: Console) -> int:
    from kcross.lab.mitigations import REFUSED, TABLES, counting_guest

    suites = request.guest.suites(("syscall",))
    stored: list[Counted] = []
    failed_baselines: list[KcrossError] = []
    for index, (baseline, listed) in enumerate(TABLES[request.arch]):
        # The configurations QEMU is known to refuse are tried too (on the first
        # baseline): they show as "not a result" with what QEMU said, never as figures.
        variants = list(listed) + ([v for a, v, _ in REFUSED if a == request.arch]
                                   if index == 0 else [])

        def job(v: Any = None, b: Any = baseline) -> Counted:
            guest, name = counting_guest(request.arch, kernel.path, b, v)
            return count_boot(request, guest, kernel, payload, name, err, suites=suites)
        results = parallel_boots([job, *[lambda v=v: job(v) for v in variants]])
        base = results[0]
        if isinstance(base, KcrossError):
            # No baseline, no table: its variants cannot be compared with anything.
            line = (f"{request.arch} baseline {baseline.name} ({len(variants)} variants not "
                    f"compared): not a result: {base}")
            if request.json_output:   # standard output holds JSON lines only
                say(err, f"kcross lab: {line}")
            else:
                out.print(Text(line, style="red"))
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
        if request.json_output:
            mitigation_records(base, baseline.name, rows, err)
        else:
            table = mitigation_table(request.arch, baseline.name, base, rows)
            table.notes += [f"  {baseline.name}: {baseline.what}; the kernel reports:",
                            *(f"    {line}" for line in baseline_report(base) or
                              ["nothing to mitigate"]),
                            *(f"  {v.name}: {v.what}" for v in variants)]
            out.print(terminal(table))
            out.print()
        if request.explained:
            memo: dict[Any, Any] = {}
            for row in rows:
                if row.run is None:
                    continue
                env = request.guest.environment()
                a = Subject(baseline.name, base.guest, kernel, payload, env=env,
                            variant=base.variant)
                b = Subject(row.name, row.run.guest, kernel, payload, env=env,
                            variant=row.run.variant)
                explained = explain_changes(request, a, b,
                                            judged(base, row.run, a.label, b.label), err, memo)
                if request.json_output:
                    print_json(explanation_records(explained))
                elif explained.steps:   # a variant that changed no path: its row says so
                    out.print(explanation_view(explained))
    if failed_baselines and not stored:
        raise failed_baselines[0]
    store_runs(request, stored, err)
    return EXIT_BROKEN if failed_baselines else exit_status(stored)


def mitigation_records(base: Counted, baseline: str, rows: Sequence[MitigationRow],
                       err: Console) -> None:
    """--mitigations --json, one baseline: its run's records, then each variant's and the
    comparison record of the variant against the baseline; a variant that is not a result
    said on ``err`` (standard output holds JSON lines only)."""
    print_runs_json([base])
    for row in rows:
        if row.run is None:
            say(err, f"kcross lab: {baseline} + {row.name}: not a result: {row.refused}")
            continue
        print_runs_json([row.run])
        print_comparison_json(base, row.run, (baseline, row.name))


def correctness(request: LabRequest, kernel: Kernel, payload: Payload, out: Console,
                err: Console) -> int:
    from kcross.lab.correctness import TestOutcome, evidence, run_tests, summary

    guest = make_guest(request, kernel, "correctness")
    say(err, f"kcross lab: {guest.arch.name} correctness boot ({guest.vcpus} vCPUs, "
                   f"{guest.cpu_model}, {describe_kernel(kernel)}): {len(payload.tests)} tests...")
    finished = itertools.count(1)

    def progress(o: TestOutcome, seconds: float) -> None:   # a line per test as it ends
        why = f": {clip_words(o.reason, 100)}" if o.reason else ""
        say(err, f"kcross lab: [{next(finished)}/{len(payload.tests)}] {o.name} {o.status} "
                 f"({seconds:.1f} s){why}")

    outcomes = run_tests(payload, guest, timeout=request.timeout, progress=progress)
    notes = [*(f"  {line}" for line in evidence(outcomes)),
             *(f"  not run in the guest: {e.name}: {e.reason}" for e in payload.excluded),
             summary(outcomes)]
    out.print(terminal(correctness_table(
        f"{request.arch}: the library's tests on a real kernel ({guest.vcpus} vCPUs, "
        f"multi-threaded TCG, {describe_kernel(kernel)})", outcomes, notes)))
    return EXIT_OK if all(o.status != "failed" for o in outcomes) else EXIT_CHECK_FAILED


def _check_options(request: LabRequest) -> None:
    options = request.guest
    counting_only = [o for o, v in (("--compare", request.compare),
                                    ("--compare-env", request.compare_env),
                                    ("--env", options.env),
                                    ("--against", request.against),
                                    ("--against-source", request.against_source),
                                    ("--mitigations", request.mitigations),
                                    ("--peers", request.peers),
                                    ("--releases", request.releases),
                                    ("--suite", options.suite), ("--bench", options.bench)) if v]
    if request.mode == "correctness" and counting_only:
        raise UserError(f"{', '.join(counting_only)}: counting-mode options (the correctness "
                        "mode runs the C tests)")
    if request.mitigations and (options.cpu or options.machine_opts or options.append):
        raise UserError("--mitigations sets the CPU model, machine options and command line "
                        "itself: drop --cpu, --machine-opt and --append")
    if request.peers:
        other = [o for o, v in (("--compare", request.compare),
                                ("--compare-env", request.compare_env),
                                ("--against", request.against),
                                ("--against-source", request.against_source),
                                ("--mitigations", request.mitigations),
                                ("--bench", options.bench)) if v]
        if other:
            raise UserError(f"--peers runs the kernel's selftests beside one counting "
                            f"run of the rows they compare with: not with {', '.join(other)}")
    if request.refresh and request.kernel:
        raise UserError("--refresh fetches Debian's kernel again: not with --kernel")
    if request.release is not None:
        if request.kernel:
            raise UserError(f"--release {request.release} boots Debian's kernel: not with "
                            "--kernel (which boots yours)")
        from kcross.lab.kernel import release_of

        release_of(request.release, request.arch)   # known, and the arch has it
    if not request.timeout > 0:
        raise UserError(f"--timeout {request.timeout:g}: give a positive number of seconds")
    if request.compare and request.compare[0] == request.compare[1]:
        raise UserError(f"--compare {request.compare[0]} {request.compare[1]}: the same "
                        "mechanism twice; give two different ones")
    _check_explain(request)
    options.check_suite()
    _check_settings(request)


def _check_settings(request: LabRequest) -> None:
    """--env and --compare-env: each setting one the harness has and a user may give
    (kcross.lab.request.settings_given), none that another option sets: --compare sets
    KCROSS_SYSCALL, --compare-env its own names (A the guest as --env makes it)."""
    given = request.guest.settings()
    sides = request.sides()
    if sides is None:
        return
    option = "--compare" if request.compare else "--compare-env"
    for name in sides[1].env:
        if name in given:
            raise UserError(f"--env {name}={given[name]} and {option} set {name} both: "
                            f"{option} sets it on {'both sides' if request.compare else 'side B'}"
                            "; drop it from --env")


def _check_explain(request: LabRequest) -> None:
    """--explain and --against-source: what they take."""
    if request.explain and not (request.two_sided or request.releases):
        raise UserError("--explain explains the rows that changed between two sides: give "
                        "--compare, --compare-env, --against, --against-source, "
                        "--mitigations or --releases")
    if request.explain and request.profiled:
        raise UserError(f"--explain profiles the changed rows itself: not with "
                        f"{'--trace' if request.trace else '--profile'} (which profiles "
                        "every row of both sides)")
    if request.against_source is None:
        return
    if request.mode != "counting":
        raise UserError(f"--against-source counts two builds of the guest programs: not "
                        f"with --mode {request.mode}")
    if request.profiled or request.peers:
        opt = "--trace" if request.trace else "--profile" if request.profile else "--peers"
        raise UserError(f"--against-source explains its changed rows with profiled boots "
                        f"of its own: not with {opt}")


def _check_guest_names(request: LabRequest, src: Path) -> None:
    """--env's and --compare-env's settings, --compare's mechanisms, --suite's suites and
    --bench's benchmarks, as the guest harness built from ``src`` knows them
    (kcross.lab.payload reads them from the tree; --profile and --trace check their names
    in kcross.lab.profile_jobs)."""
    from kcross.lab.payload import check_bench, check_suites, syscall_mechanisms

    options, compare = request.guest, request.compare
    sides = request.sides()
    options.check_env(request.arch, src, sides[1].env if sides and not compare else None)
    offered = syscall_mechanisms(request.arch, src) if compare else None
    if compare and offered is not None:
        for name in compare:
            if name not in offered:
                hint = did_you_mean(name, offered)
                raise UserError(f"--compare {' '.join(compare)}: {request.arch} has no "
                                f"syscall mechanism {name!r} ({hint + ' ' if hint else ''}"
                                f"it has: {', '.join(offered)})")
    if options.suite:
        check_suites(options.suite, options.suites(), src)
    if options.bench and request.mode == "counting" and not request.profiled:
        chosen = options.suites(("syscall",) if request.mitigations else DEFAULT_SUITES)
        check_bench(options.bench, request.arch, src, chosen)


def _other_tree(request: LabRequest, src: Path) -> Path | None:
    """--against-source's tree: a kcross source tree with ``request.arch``'s toolchain whose
    guest sources differ from ``src``'s (the tree side A is built from); one line when it is
    not, before anything is built or booted."""
    from kcross.lab.payload import guest_sources_digest

    if request.against_source is None:
        return None
    other = source_tree(request.arch, request.against_source, "--against-source")
    if other == src:
        raise UserError(f"--against-source {request.against_source} is the tree side A is "
                        f"built from ({src}): name another tree (--source names A's)")
    if guest_sources_digest(other) == guest_sources_digest(src):
        raise UserError(f"--against-source {request.against_source} holds the same guest "
                        f"sources as {src} (CMakeLists.txt, cmake, include, src, harness, lab, "
                        "tests, examples): two builds of them count the same instructions; "
                        "change the tree, or name another")
    return other


def _check_store(request: LabRequest) -> None:
    """The database counting runs are stored in, checked as `kcross run` checks it (nothing
    created): a run refused there would be thrown away after its boots."""
    if request.no_store or request.mode == "correctness" or request.profiled:
        return   # nothing is stored (a profiled boot is not)
    from kcross.store import store_for_writing

    store_for_writing(request.db, lazy=True)


def _check_programs(request: LabRequest) -> None:
    """Every program this host lacks for the lab, named in one line with the packages."""
    from kcross.lab import kernel as debian
    from kcross.lab.payload import needs

    fetching = request.kernel is None and (request.refresh or any(
        debian.cached(request.arch, release=name) is None
        for name in request.release_series() or (request.release,)))
    missing = missing_programs(request.arch,
                               # apt and dpkg-deb: the kernel's package, or the selftests'
                               # source package
                               debian_tools=fetching or bool(request.peers),
                               plugin=request.profiled or request.explained)
    if missing:
        raise LabError(f"kcross lab {request.arch} needs {needs(missing)}")


@dataclass(frozen=True)
class Checked:
    """What :func:`check` found: the source trees the guest programs are built from (side
    A's, and --against-source's) and the user's kernels (--kernel's, --against's)."""

    src: Path
    other_src: Path | None = None
    own: Kernel | None = None
    other: Kernel | None = None


def check(request: LabRequest, err: Console) -> Checked:
    """Everything that can be refused, refused before anything is fetched, built or booted:
    the user's input first (the options, machine options, the source tree and the names its
    guest harness knows, the database, the kernel files), then what this host lacks (all of
    it in one line), then QEMU's own verdict on the user's CPU model and machine options."""
    from kcross.lab.boot import check_configuration

    arch(request.arch)   # an unknown arch: one line, before anything is fetched or built
    _check_options(request)
    probe = make_guest(request, Kernel(request.arch, Path("/")),
                       "correctness" if request.mode == "correctness" else "counting")
    src = source_tree(request.arch, request.source)
    other_src = _other_tree(request, src)
    _check_guest_names(request, src)
    if other_src is not None:
        _check_guest_names(request, other_src)
    profile_jobs.check(request, src)
    _check_store(request)
    own = resolve_kernel(request.arch, request.kernel, refresh=False, err=err) \
        if request.kernel else None
    other = resolve_kernel(request.arch, request.against, refresh=False, err=err) \
        if request.against else None
    if own and other:
        _check_against(own, other)
    _check_programs(request)
    if request.guest.cpu or request.guest.machine_opts:
        check_configuration(probe)
    return Checked(src, other_src, own, other)


def run(request: LabRequest, out: Console, err: Console) -> int:
    checked = check(request, err)
    own, other = checked.own, checked.other
    stop_on_signals()
    kernel = own or resolve_kernel(request.arch, None, refresh=request.refresh, err=err,
                                   release=request.release)
    if other and not own:
        _check_against(kernel, other)   # Debian's, now fetched: still before any build or boot
    selftests = None
    if request.peers and request.mode != "correctness":
        selftests = peers_jobs.selftest_source(request, kernel, err)
    payload = build(request.arch, checked.src, err)
    payload_b = build(request.arch, checked.other_src, err) \
        if checked.other_src is not None else None
    status = EXIT_OK
    if request.mode in ("correctness", "both"):
        status = max(status, correctness(request, kernel, payload, out, err))
    if request.mode in ("counting", "both"):
        status = max(status, counting(request, kernel, payload, out, err, selftests,
                                      payload_b))
    return status
