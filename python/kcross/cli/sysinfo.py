"""``kcross sysinfo [--readiness]``: this machine as kcross sees it, and whether it is tuned."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import SchemaError, UserError
from ..run.defaults import CPU_RANGE
from ..views.lines import print_json
from .options import Common, number

if TYPE_CHECKING:
    from rich.console import Console

HELP = "describe this machine as kcross sees it"
DESCRIPTION = ("Describe this machine as kcross sees it (the harness's fingerprint); with "
               "--readiness, whether it is tuned for measuring.")
PARENTS = ("db", "harness", "json")
EPILOG = """\
--readiness looks at the measuring CPU's frequency governor and turbo, a busy SMT
sibling, its isolation (isolcpus, nohz_full, rcu_nocbs) and load, ASLR,
transparent huge pages, the NMI watchdog, the IRQs arriving on it, perf
counters and whether this is a VM. Load and IRQs are sampled over 100 ms. It also
says what the store (--db) knows of this configuration's run-to-run noise: the spread
of its repeated runs beyond each run's own noise, which a verdict between two separate
runs must include ('kcross aa' measures it).
States: ok; warn (moves or disturbs the figures; the row says what to do); info
(worth knowing, nothing to fix for timing); unknown (the machine does not say).
It reads /proc and /sys only: it never changes the system.

exit status (with --readiness):
  0    no check warns (ok, info or unknown only)
  1    at least one check warns
  2    bad input; 3 the harness failed (as for every command)"""


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("--readiness", action="store_true",
                   help="check the machine is ready to measure on: a table of checks, each "
                        "with what was seen and the command that fixes it (nothing is "
                        "changed); exit status 1 when any check warns")
    # The old spelling, still taken (scripts use it); help says --readiness.
    p.add_argument("--check", action="store_true", dest="readiness", help=argparse.SUPPRESS)
    p.add_argument("--cpu", type=number(*CPU_RANGE, whole=True), metavar="C",
                   help="with --readiness: the measuring CPU (default: the highest CPU kcross "
                        "may run on, the one 'kcross run' pins to)")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..run import harness
    from ..views.fingerprint import sysinfo

    if args.cpu is not None and not args.readiness:
        raise UserError("--cpu goes with --readiness (the fingerprint describes the whole "
                        "machine)")
    records = harness.collect(harness.locate(args.harness), ["sysinfo", "--json"])
    if [r["type"] for r in records] != ["fingerprint"]:
        raise SchemaError("harness 'sysinfo' must write exactly one fingerprint record, wrote "
                          + (", ".join(r["type"] for r in records) or "nothing"))
    if args.readiness:
        from ..run import readiness
        from ..views import readiness as readiness_view
        from ..views.table import terminal

        cpu = readiness.measuring_cpu(args.cpu, readiness.sysroot())
        findings = readiness.run_checks(readiness.sysroot(), cpu, fingerprint=records[0])
        findings.append(_noise_finding(args.db, records[0]))
        if args.json:
            print_json([readiness.as_json(findings, cpu)])
        else:
            out.print(terminal(readiness_view.table(findings, cpu)))
        return 1 if readiness.warnings(findings) else 0
    if args.json:
        print_json(records)
    else:
        out.print(sysinfo(records[0]))
    return 0


# A machine whose runs differ by more than this (the median over its benchmarks) is worth a
# warning: a change must be several times larger to be shown between two separate runs.
NOISY_CV = 0.02


def _noise_finding(db: str | None, fingerprint: dict[str, Any]) -> Any:
    """What the store knows of this configuration's run-to-run noise, and from which runs."""
    from ..judge.noise import MIN_RUNS, exact_counts, of_machine
    from ..run import readiness
    from ..stats import median
    from ..store import stores
    from ..views.text import runs_listed

    todo = (f"'kcross aa BENCH' (or store {MIN_RUNS} or more runs of this configuration): "
            "compare and check then include it")
    if exact_counts(fingerprint):
        return readiness.Finding("run-to-run noise", readiness.OK,
                                 "none: exact counts (a change of a count is a change)", "")
    with stores(db) as opened:
        store = opened.reading_or_none()
        if store is None:
            return readiness.Finding("run-to-run noise", readiness.INFO,
                                     "not known: no store yet", todo)
        noise, runs = of_machine(store, fingerprint)
    if not noise:
        return readiness.Finding("run-to-run noise", readiness.INFO,
                                 f"not known: {runs} stored run(s) of this configuration",
                                 todo)
    cvs = sorted((n.cv, name) for name, n in noise.items())
    typical = median([cv for cv, _ in cvs])
    worst, name = cvs[-1]
    used = [r for n in noise.values() for r in n.used]
    far = [r for n in noise.values() for r in n.outliers]
    seen = (f"{typical:.2%} of the median (typical of {len(cvs)} benchmarks, from up to "
            f"{len(set(used))} runs: {runs_listed(used)}"
            f"{'; outliers left out: ' + runs_listed(far) if far else ''}); "
            f"largest {worst:.2%} ({name})")
    if typical > NOISY_CV:
        return readiness.Finding("run-to-run noise", readiness.WARN, seen,
                                 "two separate runs differ by this much with nothing changed: "
                                 "decide small changes with 'kcross ab' (interleaved rounds)",
                                 short=f"runs differ by {typical:.1%}")
    return readiness.Finding("run-to-run noise", readiness.INFO, seen, "")
