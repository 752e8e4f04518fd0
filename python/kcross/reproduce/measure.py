"""Measuring what the chosen experiments need: natively, one run per suite as ``kcross run``
makes it (kcross.run.runner: fresh harness processes, its defaults), and in each lab one
counting boot per variant (kcross.lab.session.count).  Every run is stored like any run,
with the source ``repro`` (a lab run identical to one already stored is that run).

:class:`Measured` is one run as the experiments read it, made from a run just measured or
from one reproduce stored (:func:`newest_stored`: the HTML report's section).
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcross import fingerprint as fields
from kcross.errors import LabError, UserError
from kcross.reproduce.experiments import DEFAULT, NATIVE, VARIANTS, Experiment, Variant
from kcross.schema import LAB_COUNTING

SOURCE = "repro"   # runs.source (kcross.store.writing.RUN_SOURCES)
# How a lab run's fingerprint.lab.variant names a reproduce variant (DEFAULT: no variant).
VARIANT_PREFIX = "reproduce "


@dataclass(frozen=True)
class Measured:
    """One run the experiments read: where (NATIVE or a lab arch), which variant, and its
    fingerprint and result records (several processes' records of one benchmark: merged by
    the reader)."""

    where: str
    variant: str
    fingerprint: Mapping[str, Any]
    results: Sequence[Mapping[str, Any]]
    run_id: int | None = None
    # kernel instructions per op by benchmark, from the lab profile (profile_kernel_instructions)
    profile: Mapping[str, float] = field(default_factory=dict)
    # why the profiled boot gave no figure, by benchmark (its error)
    profile_errors: Mapping[str, str] = field(default_factory=dict)

    @property
    def arch(self) -> str:
        return str(fields.ARCH.of(self.fingerprint) or "?")

    @property
    def label(self) -> str:
        return self.where if self.variant == DEFAULT else f"{self.where} {self.variant}"


def from_stored(fingerprint: Mapping[str, Any], results: Sequence[Mapping[str, Any]],
                run_id: int | None, source: str) -> Measured | None:
    """A stored run as a measurement: a run ``kcross reproduce`` stored (source ``repro``),
    natively or a counting lab boot of its (the variant read from fingerprint.lab.variant);
    None for any other run (a plain ``kcross lab`` run, with its own -cpu, --append or
    kernel, is not reproduce's boot even without a variant)."""
    if source != SOURCE:
        return None
    if fields.lab(fingerprint) is not None:
        if fields.LAB_MODE.of(fingerprint) != LAB_COUNTING:
            return None
        variant = str(fields.LAB_VARIANT.of(fingerprint) or "")
        if not variant:
            name = DEFAULT
        elif variant.startswith(VARIANT_PREFIX) and variant[len(VARIANT_PREFIX):] in VARIANTS:
            name = variant[len(VARIANT_PREFIX):]
        else:
            return None   # another lab variant (a mitigation, --compare): not ours
        return Measured(str(fields.ARCH.of(fingerprint) or "?"), name, fingerprint, results,
                        run_id)
    return Measured(NATIVE, DEFAULT, fingerprint, results, run_id)


def newest_stored(runs: Sequence[Any]) -> list[Measured]:
    """The stored runs (kcross.store.StoredRun) reproduce can read (:func:`from_stored`),
    one per place, variant and suites (the native part stores one run per suite): the
    newest (started last; the higher id on a tie), newest first, so that a benchmark two
    kept runs hold (a whole-plan boot and a later one-experiment boot) is read from the
    newest."""
    newest: dict[tuple[str, str, frozenset[str]], tuple[Any, Measured]] = {}
    for r in runs:
        m = from_stored(r.fingerprint, r.results, r.id, r.source)
        if m is None:
            continue
        key = (m.where, m.variant, frozenset(str(x.get("suite")) for x in m.results))
        seen = newest.get(key)
        if seen is None or (r.started_at, r.id) > (seen[0].started_at, seen[0].id):
            newest[key] = (r, m)
    kept = sorted(newest.values(), key=lambda rm: (rm[0].started_at, rm[0].id), reverse=True)
    return [m for _, m in kept]


# ---------------------------------------------------------------- what to measure

@dataclass(frozen=True)
class Boot:
    arch: str
    variant: str                      # DEFAULT or a VARIANTS name
    suites: tuple[str, ...]
    profile: tuple[str, ...] = ()     # benchmarks whose kernel instructions the profile gives

    @property
    def spec(self) -> Variant | None:
        return None if self.variant == DEFAULT else VARIANTS[self.variant]


@dataclass(frozen=True)
class Plan:
    native: tuple[tuple[str, str | None], ...]    # (suite, bench glob or None)
    boots: tuple[Boot, ...]
    arches: tuple[str, ...] = field(default=())


def _glob(benches: Sequence[str]) -> str | None:
    """A glob of one suite's benchmarks: their common prefix then ``*`` (None: the suite)."""
    prefix = os.path.commonprefix(list(benches))
    suite = benches[0].split("/", 1)[0]
    if len(benches) == 1:
        return benches[0]
    return f"{prefix}*" if len(prefix) > len(suite) + 1 else None


def plan(experiments: Sequence[Experiment], *, native: bool, arches: Sequence[str]) -> Plan:
    """The native runs (one per suite) and lab boots (one per arch and variant) the
    experiments need; ``arches`` are the labs to boot (empty: none)."""
    by_suite: dict[str, list[str]] = {}
    if native:
        for e in experiments:
            if e.native:
                for b in e.benches():
                    by_suite.setdefault(b.split("/", 1)[0], [])
                    if b not in by_suite[b.split("/", 1)[0]]:
                        by_suite[b.split("/", 1)[0]].append(b)
    boots: list[Boot] = []
    for arch in arches:
        suites: dict[str, list[str]] = {}
        for e in experiments:
            for variant in e.variants(arch):
                wanted = suites.setdefault(variant, [])
                spec = VARIANTS.get(variant)
                for s in (spec.suites if spec else e.needed_suites()):
                    if s not in wanted:
                        wanted.append(s)
        profiled: dict[str, list[str]] = {}
        for e in experiments:
            if e.profile and arch in e.labs:
                for o in e.figure(e.profile).ours:
                    if o.arch in (None, arch) and o.bench not in profiled.get(o.variant, []):
                        profiled.setdefault(o.variant, []).append(o.bench)
        boots += [Boot(arch, v, tuple(s), tuple(profiled.get(v, ()))) for v, s in suites.items()]
    return Plan(native=tuple((s, _glob(b)) for s, b in by_suite.items()), boots=tuple(boots),
                arches=tuple(arches))


# ---------------------------------------------------------------- checks before anything runs

def check_labs(arches: Sequence[str], source: Path | str | None,
               plan_: Plan | None = None) -> Path | None:
    """Everything the labs need, refused in one line before anything is built or booted:
    the source tree, then every program this host lacks (with the packages); where a boot
    of ``plan_`` profiles, the host's gcc for the profile plugin, then the plugin built and
    loaded by that lab's QEMU (kcross.lab.plugin's check, as ``kcross lab --profile``'s)."""
    if not arches:
        return None
    from kcross.lab import kernel as debian
    from kcross.lab import plugin
    from kcross.lab.boots import missing_programs
    from kcross.lab.machines import arch as lab_arch
    from kcross.lab.payload import needs, source_tree

    profiled = sorted({b.arch for b in (plan_.boots if plan_ else ()) if b.profile})
    src = None
    missing: list[tuple[str, tuple[str, ...]]] = []
    for name in arches:
        src = source_tree(name, source)
        missing += missing_programs(name, debian_tools=debian.cached(name) is None,
                                    plugin=name in profiled)
    if missing:
        unique = list(dict.fromkeys(missing))
        raise LabError(f"kcross reproduce's labs ({', '.join(arches)}) need {needs(unique)} "
                       "(or --no-lab, or --arch for fewer labs)")
    for name in profiled:
        if name in arches and src is not None:
            with tempfile.TemporaryDirectory(prefix="kcross-profile-check-") as tmp:
                plugin.check_plugin(lab_arch(name).qemu, plugin.build_plugin(src), Path(tmp))
    return src


# ---------------------------------------------------------------- measuring

def native_runs(plan_: Plan, harness: Sequence[str], store: Any, command: Sequence[str],
                out: Any, err: Any) -> list[Measured]:
    """One run per suite, as ``kcross run --suite S [--bench GLOB]`` makes it (its
    processes, samples and warm-up), stored with the source ``repro``."""
    from kcross.run.harness import STOP_SIGNALS

    found: list[Measured] = []
    # The run engine ignores the stop signals once its run is marked (it is `kcross run`'s
    # last act); here the labs may follow, which Ctrl-C must still stop.
    saved = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    try:
        for suite, glob in plan_.native:
            found.append(_native_run(suite, glob, harness, store, command, out, err))
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    return found


def _native_run(suite: str, glob: str | None, harness: Sequence[str], store: Any,
                command: Sequence[str], out: Any, err: Any) -> Measured:
    from kcross.errors import EXIT_CHECK_FAILED, EXIT_OK, HarnessError, Interrupted
    from kcross.run.defaults import DEFAULT_PROCESSES, PROCESS_SAMPLES, PROCESS_WARMUP_MS
    from kcross.run.runner import RunRequest, run

    ids: list[int] = []
    args = ["--suite", suite, "--samples", str(PROCESS_SAMPLES),
            "--warmup-ms", str(PROCESS_WARMUP_MS)] + (["--bench", glob] if glob else [])
    request = RunRequest(harness=harness, harness_args=args, command=[*command, suite],
                         json_output=False, source=SOURCE, print_table=False,
                         on_end=ids.append, processes=DEFAULT_PROCESSES)
    status = run(store, request, out, err)
    if status > 128:   # stopped by a signal: the run is kept, marked interrupted
        raise Interrupted(status - 128, f"interrupted during the native {suite} run")
    if status not in (EXIT_OK, EXIT_CHECK_FAILED) or not ids:
        raise HarnessError(f"the native {suite} run ended with status {status}")
    stored = store.load_run(str(ids[0]))
    return Measured(NATIVE, DEFAULT, stored.fingerprint, stored.results, stored.id)


def profile_kernel_instructions(guest: Any, kernel: Any, payload: Any, bench: str, *,
                                timeout: float) -> float | None:
    """The kernel instructions per operation of ``bench`` (suite/name) in ``guest``, from
    the lab's profile (``kcross lab ARCH --profile``: a TCG plugin counting each executed
    instruction, user and kernel apart, issue 16): the one place the profile's figure
    enters the experiments (the talk's 151 kernel instructions per getppid).

    One profiled boot of the benchmark's suite (``kcross.lab.profile.profile_counted``):
    the plugin built (cached) and loaded, the benchmark alone; None when the profile has
    no row for it (the row then says why: kcross.reproduce.outcome.NOT_PROFILED)."""
    from kcross.lab.profile import profile_counted

    suite, name = bench.split("/", 1)
    profiled = profile_counted(guest, kernel, payload, suites=(suite,), bench=name,
                               timeout=timeout)
    try:
        return profiled[bench].kernel
    except KeyError:
        return None


@dataclass(frozen=True)
class Booted:
    """One boot of the plan: its counting run, and the profile's figures where it has some
    (or why the profiled boot gave none)."""

    boot: Boot
    counted: Any                      # kcross.lab.session.Counted
    profile: Mapping[str, float] = field(default_factory=dict)
    profile_errors: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LabRuns:
    """What the boots gave: each finished boot as kept (stored) when it finished, and each
    boot that failed with its error, by (arch, variant)."""

    measured: list[Measured]
    failed: dict[tuple[str, str], str]


def lab_runs(plan_: Plan, source: Path, *, timeout: float, say: Callable[[str], None],
             keep: Callable[[Booted], Measured],
             kernels: Mapping[str, Any] | None = None) -> LabRuns:
    """Each boot of the plan, one after another (a counting boot takes seconds): the
    kernel (``kernels[arch]``, else Debian's, fetched and cached), the payload built once
    per arch, the count.  ``keep`` is given each counting boot as soon as it finished
    (it stores it), before the next boot starts, so that a later boot's failure or Ctrl-C
    loses none.  A boot that fails (a KcrossError: a timeout, a guest or plugin failure)
    is recorded with its error and the next one runs; Interrupted stops at once (what
    finished is kept)."""
    import dataclasses

    from kcross.errors import Interrupted, KcrossError
    from kcross.lab.boots import stop_on_signals
    from kcross.lab.kernel import fetch
    from kcross.lab.machines import Guest
    from kcross.lab.machines import arch as lab_arch
    from kcross.lab.payload import build_payload
    from kcross.lab.session import count

    stop_on_signals()   # as in kcross lab: SIGTERM/SIGHUP stop the boots like Ctrl-C
    result = LabRuns([], {})
    for name in plan_.arches:
        boots = [b for b in plan_.boots if b.arch == name]
        if not boots:
            continue
        try:
            kernel = (kernels or {}).get(name) or \
                fetch(name, say=lambda line: say(f"kcross reproduce: {line}"))
            say(f"kcross reproduce: building kcross for {name} (static)...")
            payload = build_payload(name, source=source)
        except Interrupted:
            raise
        except KcrossError as exc:
            say(f"kcross reproduce: the {name} lab failed: {exc}")
            for boot in boots:
                result.failed[(boot.arch, boot.variant)] = f"the {name} lab failed: {exc}"
            continue
        for boot in boots:
            spec = boot.spec
            guest = Guest(lab_arch(name), kernel.path, cpu=spec.cpu if spec else None)
            what = f"{name} {boot.variant} boot"
            say(f"kcross reproduce: {name} counting boot ({guest.cpu_model}"
                f"{', ' + spec.why.split(':')[0] if spec else ''}; {', '.join(boot.suites)})...")
            try:
                counted = count(guest, kernel, payload,
                                variant=None if spec is None else VARIANT_PREFIX + boot.variant,
                                suites=boot.suites, env=dict(spec.env) if spec else None,
                                timeout=timeout)
            except Interrupted:
                raise
            except KcrossError as exc:
                say(f"kcross reproduce: the {what} failed: {exc}")
                result.failed[(boot.arch, boot.variant)] = f"the {what} failed: {exc}"
                continue
            measured = keep(Booted(boot, counted))   # stored before the next boot
            profile: dict[str, float] = {}
            errors: dict[str, str] = {}
            for bench in boot.profile:
                say(f"kcross reproduce: {name} profiled boot ({bench})...")
                try:
                    value = profile_kernel_instructions(guest, kernel, payload, bench,
                                                        timeout=timeout)
                except Interrupted:
                    result.measured.append(measured)
                    raise
                except KcrossError as exc:
                    say(f"kcross reproduce: the {name} profiled boot failed: {exc}")
                    errors[bench] = f"the profiled boot failed: {exc}"
                    continue
                if value is not None:
                    profile[bench] = value
            result.measured.append(dataclasses.replace(measured, profile=profile,
                                                       profile_errors=errors))
    return result


def store_boot(booted: Booted, store_factory: Callable[[], Any] | None,
               command: Sequence[str]) -> Measured:
    """One boot as a measurement, stored (source ``repro``) unless no factory (the
    profile's figures are not stored: the report's section says so)."""
    from kcross.importer import import_stream
    from kcross.store import DuplicateImport

    boot, c = booted.boot, booted.counted
    run_id: int | None = None
    if store_factory is not None:
        try:
            run_id = import_stream(store_factory, c.stream, command=list(command),
                                   source=SOURCE, name=f"reproduce {boot.arch}",
                                   started_at=c.started_at,
                                   finished_at=c.finished_at).run_id
        except DuplicateImport as exc:   # counting is deterministic: already stored
            run_id = exc.run_id
    fp = c.stream.fingerprint or {}
    return Measured(boot.arch, boot.variant, fp, list(c.stream.results), run_id,
                    dict(booted.profile), dict(booted.profile_errors))


def scratch_db() -> tuple[str, Callable[[], None]]:
    """A database that is removed afterwards (``--no-store``: the native runs go through
    the store as ``kcross run``'s do)."""
    directory = tempfile.mkdtemp(prefix="kcross-reproduce-")

    def remove() -> None:
        shutil.rmtree(directory, ignore_errors=True)

    return str(Path(directory) / "scratch.db"), remove


def check_names(experiments: Sequence[Experiment], native_names: Sequence[str]) -> None:
    """Every benchmark the native part reads is one the harness knows (a table that names
    a benchmark the registry lost is a bug here, said in one line before anything runs)."""
    known = set(native_names)
    for e in experiments:
        if not e.native:
            continue
        for f in e.figures:
            for o in f.ours:
                if o.arch is None and o.bench not in known:
                    raise UserError(f"experiment {e.name}: the harness has no benchmark "
                                    f"{o.bench} (kcross list)")
