"""The job of ``kcross reproduce [NAME]`` (what is asked: :class:`ReproduceRequest`, built by
kcross.cli.reproduce): the chosen experiments' runs measured natively and in the labs
(kcross.reproduce.measure), stored, and each published figure printed beside ours
(kcross.reproduce.outcome's rows, kcross.views.reproduce's output).

Everything that can be refused is refused before anything runs, builds or boots: the
experiment's name, the timeout, the labs chosen, the benchmarks the harness has, what
building the labs' guest programs needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EXIT_BROKEN, EXIT_CHECK_FAILED, EXIT_OK, Interrupted, UserError, shown
from ..views.lines import print_json, say

if TYPE_CHECKING:
    from rich.console import Console

    from .experiments import Experiment
    from .measure import Measured


@dataclass(frozen=True)
class ReproduceRequest:
    """``kcross reproduce [NAME]``: the experiments, where they are measured, where their runs
    go; values as the user gave them (messages quote them)."""

    name: str | None = None              # one experiment; None: every one
    no_lab: bool = False                 # measure natively only
    lab_only: bool = False               # measure in the labs only
    arches: tuple[str, ...] = ()         # --arch as given: only these labs
    source: Path | None = None           # the kcross tree the guests' programs are built from
    timeout: float = 600.0               # host seconds one lab guest may run
    harness: str | None = None           # --harness: the kcross-harness measuring natively
    no_store: bool = False
    db: str | None = None
    json_output: bool = False
    argv: tuple[str, ...] = ()           # the command line, stored with each run


def run(request: ReproduceRequest, out: Console, err: Console) -> int:
    """Measure the chosen experiments and print their outcomes; the exit status."""
    from .experiments import chosen

    experiments = chosen(request.name)
    if not request.timeout > 0:
        raise UserError(f"--timeout {request.timeout:g}: give a positive number of seconds")
    arches = _labs(request, experiments)
    native = not request.lab_only and any(e.native for e in experiments)
    if not native and not arches:
        what = shown(request.name) if request.name else "the experiments"
        one = bool(request.name)
        raise UserError(f"{what} run{'s' if one else ''} only in the labs: drop --no-lab"
                        if request.no_lab else f"{what} ha{'s' if one else 've'} "
                        "nothing to measure natively: drop --lab-only")
    return _measure(request, experiments, native, arches, out, err)


def _labs(request: ReproduceRequest, experiments: tuple[Experiment, ...]) -> tuple[str, ...]:
    from ..lab.machines import arch as lab_arch
    from .experiments import LAB_ARCHES

    wanted = tuple(dict.fromkeys(lab_arch(a).name for a in request.arches))
    used = tuple(a for a in LAB_ARCHES if any(a in e.labs for e in experiments))
    if request.no_lab:
        for given, option in ((request.arches, "--arch chooses labs"),
                              (request.source, "--source builds the labs' guest programs")):
            if given:
                raise UserError(f"{option}: not with --no-lab")
        return ()
    for a in wanted:
        if a not in used:
            names = ", ".join(e.name for e in experiments) if len(experiments) == 1 else \
                "these experiments"
            raise UserError(f"--arch {a}: {names} run{'s' if len(experiments) == 1 else ''} "
                            f"in no {a} lab (labs: {', '.join(used) or 'none'})")
    return wanted or used


def _measure(request: ReproduceRequest, experiments: tuple[Experiment, ...], native: bool,
             arches: tuple[str, ...], out: Console, err: Console) -> int:
    from ..reproduce import measure
    from ..reproduce.experiments import LAB_ARCHES
    from ..reproduce.outcome import outcomes
    from ..run import harness
    from ..store import store_for_writing

    # Everything that can be refused is refused before anything runs, builds or boots.
    plan = measure.plan(experiments, native=native, arches=arches)
    command = harness.locate(request.harness) if native else None
    if command is not None:
        names = [f"{r.get('suite')}/{r.get('name')}"
                 for r in harness.collect(command, ["list", "--json"]) if r.get("type") == "bench"]
        measure.check_names(experiments, names)
    source = measure.check_labs(arches, request.source, plan)
    remove = None
    if request.no_store:
        db, remove = measure.scratch_db() if native else (None, None)
    else:
        db = request.db
        store_for_writing(db, lazy=True)
    argv = ["reproduce", *request.argv]
    found: list[measure.Measured] = []
    kept: list[measure.Measured] = []
    failed: dict[tuple[str, str], str] = {}
    try:
        if command is not None and plan.native:
            store = store_for_writing(db, lazy=True)
            try:
                found += measure.native_runs(plan, command, store, argv, out, err)
            finally:
                store.close()
        if arches:
            assert source is not None
            factory = None if request.no_store else (lambda: store_for_writing(db))

            def keep(booted: measure.Booted) -> measure.Measured:
                m = measure.store_boot(booted, factory, argv)
                kept.append(m)   # stored: said even when a later boot is interrupted
                return m

            lab = measure.lab_runs(plan, source, timeout=request.timeout,
                                   say=lambda line: say(err, line), keep=keep)
            found += lab.measured   # the boots kept, with their profiles
            failed = lab.failed
    except Interrupted:
        _say_stored(err, [*found, *kept], request.no_store)
        raise
    finally:
        if remove is not None:
            remove()
    skipped = {a: "--no-lab" if request.no_lab else "not chosen (--arch)"
               for a in LAB_ARCHES if a not in arches}
    if request.lab_only:
        skipped["native"] = "--lab-only"
    results = outcomes(experiments, found, skipped=skipped, failed=failed)
    from ..views.reproduce import print_outcome, record

    if request.json_output:
        print_json([record(o) for o in results])
    else:
        for o in results:
            print_outcome(out, o)
    _say_stored(err, found, request.no_store)
    if failed:
        return EXIT_BROKEN   # a boot failed: its rows say why
    failed_check = any(r.get("status") == "failed" for m in found for r in m.results)
    return EXIT_CHECK_FAILED if failed_check else EXIT_OK


def _say_stored(err: Console, found: Sequence[Measured], no_store: bool) -> None:
    ids = sorted({m.run_id for m in found if m.run_id is not None})
    if ids and not no_store:
        say(err, f"kcross reproduce: stored as run {', '.join(map(str, ids))}; the HTML page: "
                 f"kcross report {' '.join(map(str, ids))} -o reproduce.html")
