"""``kcross reproduce [NAME]``: the published experiments kcross started from, measured here
and in the labs, each published figure printed beside ours with what differs.

The experiments and their published figures are kcross.reproduce.experiments' table;
measuring is kcross.reproduce.measure's, the rows kcross.reproduce.outcome's, the output
kcross.views.reproduce's."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import EXIT_BROKEN, EXIT_CHECK_FAILED, EXIT_OK, Interrupted, UserError, shown
from ..views.lines import print_json, say
from .options import Common, lab_guest_options

if TYPE_CHECKING:
    from rich.console import Console

    from ..reproduce.experiments import Experiment
    from ..reproduce.measure import Measured

HELP = "the published experiments (POWER sc/scv, glibc scv, cpu_switch, spin hint, rseq), " \
    "measured again"
DESCRIPTION = (
    "Run the published experiments kcross started from and print each published figure "
    "beside ours, where ours was measured (this machine, or a lab: instructions under QEMU "
    "TCG -icount) and what differs. Without NAME every experiment runs; --list lists them.")
EPILOG = (
    "Natively each suite an experiment needs runs as 'kcross run --suite S' runs it (10 "
    "fresh processes); in the labs, counting boots (kcross lab). Every run is stored with "
    "the source 'repro'; 'kcross report' of those runs has a section 'Reproduced "
    "experiments'. A published figure against ours is not a test (another machine, often "
    "another unit): both are printed, with their ratio only where both are of one kind; "
    "two figures of ours are compared by kcross's verdicts. Each lab boot is stored as it "
    "finishes: a boot that fails leaves the others' rows, its own say why.")
PARENTS = ("db", "harness", "json")


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("name", nargs="?", metavar="NAME",
                   help="one experiment (default: all; --list names them)")
    p.add_argument("--list", action="store_true", help="list the experiments, run nothing")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--no-lab", action="store_true", help="measure natively only")
    where.add_argument("--lab-only", action="store_true", help="measure in the labs only")
    p.add_argument("--arch", action="append", metavar="ARCH",
                   help="only this lab (ppc64le, aarch64, x86_64); repeatable")
    lab_guest_options(p, "lab guest")


def _labs(args: argparse.Namespace, experiments: tuple[Experiment, ...]) -> tuple[str, ...]:
    from ..lab.machines import arch as lab_arch
    from ..reproduce.experiments import LAB_ARCHES

    wanted = tuple(dict.fromkeys(lab_arch(a).name for a in args.arch or ()))
    used = tuple(a for a in LAB_ARCHES if any(a in e.labs for e in experiments))
    if args.no_lab:
        for given, option in ((args.arch, "--arch chooses labs"),
                              (args.source, "--source builds the labs' guest programs")):
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


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..reproduce.experiments import chosen

    experiments = chosen(args.name)
    if args.list:
        from ..views.reproduce import list_table

        out.print(list_table(experiments))
        return EXIT_OK
    if not args.timeout > 0:
        raise UserError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    arches = _labs(args, experiments)
    native = not args.lab_only and any(e.native for e in experiments)
    if not native and not arches:
        what = shown(args.name) if args.name else "the experiments"
        raise UserError(f"{what} run{'s' if args.name else ''} only in the labs: drop --no-lab"
                        if args.no_lab else f"{what} ha{'s' if args.name else 've'} "
                        "nothing to measure natively: drop --lab-only")
    return _measure(args, experiments, native, arches, out, err)


def _measure(args: argparse.Namespace, experiments: tuple[Experiment, ...], native: bool,
             arches: tuple[str, ...], out: Console, err: Console) -> int:
    from ..reproduce import measure
    from ..reproduce.experiments import LAB_ARCHES
    from ..reproduce.outcome import outcomes
    from ..run import harness
    from ..store import store_for_writing

    # Everything that can be refused is refused before anything runs, builds or boots.
    plan = measure.plan(experiments, native=native, arches=arches)
    command = harness.locate(args.harness) if native else None
    if command is not None:
        names = [f"{r.get('suite')}/{r.get('name')}"
                 for r in harness.collect(command, ["list", "--json"]) if r.get("type") == "bench"]
        measure.check_names(experiments, names)
    source = measure.check_labs(arches, args.source, plan)
    remove = None
    if args.no_store:
        db, remove = measure.scratch_db() if native else (None, None)
    else:
        db = args.db
        store_for_writing(db, lazy=True)
    argv = ["reproduce", *args.argv]
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
            factory = None if args.no_store else (lambda: store_for_writing(db))

            def keep(booted: measure.Booted) -> measure.Measured:
                m = measure.store_boot(booted, factory, argv)
                kept.append(m)   # stored: said even when a later boot is interrupted
                return m

            lab = measure.lab_runs(plan, source, timeout=args.timeout,
                                   say=lambda line: say(err, line), keep=keep)
            found += lab.measured   # the boots kept, with their profiles
            failed = lab.failed
    except Interrupted:
        _say_stored(err, [*found, *kept], args.no_store)
        raise
    finally:
        if remove is not None:
            remove()
    skipped = {a: "--no-lab" if args.no_lab else "not chosen (--arch)"
               for a in LAB_ARCHES if a not in arches}
    if args.lab_only:
        skipped["native"] = "--lab-only"
    results = outcomes(experiments, found, skipped=skipped, failed=failed)
    from ..views.reproduce import print_outcome, record

    if args.json:
        print_json([record(o) for o in results])
    else:
        for o in results:
            print_outcome(out, o)
    _say_stored(err, found, args.no_store)
    if failed:
        return EXIT_BROKEN   # a boot failed: its rows say why
    failed_check = any(r.get("status") == "failed" for m in found for r in m.results)
    return EXIT_CHECK_FAILED if failed_check else EXIT_OK


def _say_stored(err: Console, found: Sequence[Measured], no_store: bool) -> None:
    ids = sorted({m.run_id for m in found if m.run_id is not None})
    if ids and not no_store:
        say(err, f"kcross reproduce: stored as run {', '.join(map(str, ids))}; the HTML page: "
                 f"kcross report {' '.join(map(str, ids))} -o reproduce.html")
