"""``kcross reproduce [NAME]``: the published experiments kcross started from, measured here
and in the labs, each published figure printed beside ours with what differs.

The experiments and their published figures are kcross.reproduce.experiments' table;
this module builds a kcross.reproduce.job.ReproduceRequest, whose job measures
(kcross.reproduce.measure), makes the rows (kcross.reproduce.outcome) and prints them
(kcross.views.reproduce)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import EXIT_OK
from .options import Common, lab_guest_options

if TYPE_CHECKING:
    from rich.console import Console

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


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.list:
        from ..reproduce.experiments import chosen
        from ..views.reproduce import list_table
        from ..views.table import terminal

        out.print(terminal(list_table(chosen(args.name))))
        return EXIT_OK
    from ..reproduce.job import ReproduceRequest, run

    request = ReproduceRequest(
        name=args.name, no_lab=args.no_lab, lab_only=args.lab_only, arches=tuple(args.arch or ()),
        source=args.source, timeout=args.timeout, harness=args.harness, no_store=args.no_store,
        db=args.db, json_output=args.json, argv=tuple(args.argv))
    return run(request, out, err)
