"""``kcross lab ARCH``: kcross on a real ppc64le, aarch64 or x86-64 kernel under QEMU.

The jobs (the kernel, the guest programs, counting, mitigations, correctness) are
:mod:`kcross.lab.jobs`'s, a release series (``--releases``) :mod:`kcross.lab.series`'s;
this module holds the options and turns them into the request the jobs take
(:class:`kcross.lab.request.LabRequest`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..lab.machines import MODES
from ..lab.selftests import SELECTIONS
from .options import (
    Common,
    benchmark_glob,
    guest_options,
    lab_guest_options,
    lab_machine_options,
    lab_release_option,
)

if TYPE_CHECKING:
    from rich.console import Console

HELP = "run kcross on a real ppc64le, aarch64 or x86-64 kernel under QEMU"
DESCRIPTION = (
    "Boot a real kernel of ARCH under full-system QEMU with kcross inside. Counting mode "
    "(-icount, one vCPU): the harness's figures are exact instructions per operation, "
    "identical from boot to boot, stored as a lab run. Correctness mode (two vCPUs, "
    "multi-threaded TCG): the library's tests and stress tier on the real kernel (rseq, scv, "
    "the live vDSO).")
EPILOG = (
    "The kernel: Debian bookworm's for ARCH by default (--release another release's), "
    "fetched through a private APT configuration and cached (~/.cache/kcross/lab); "
    "--kernel boots your own.\n"
    "The guest programs are built from the kcross source tree (--source, $KCROSS_SOURCE, or "
    "the checkout kcross runs from) with ARCH's cross compiler.")
PARENTS = ("db", "json")


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("arch", metavar="ARCH", help="ppc64le, aarch64 or x86_64")
    p.add_argument("--mode", choices=(*MODES, "both"), default="counting",
                   help="counting (default), correctness, or both")
    p.add_argument("--kernel", metavar="PATH", type=Path,
                   help="boot this kernel (vmlinux for ppc64le, Image for aarch64, bzImage "
                        "for x86_64) instead of Debian's")
    lab_release_option(p)
    p.add_argument("--releases", metavar="A,B,...|all",
                   help="count each of these Debian releases' kernels (all: every release "
                        "ARCH has), one table of rows x kernels, each kernel judged against "
                        "the one before it and every change explained (--no-explain: not); "
                        "with --compare or --compare-env, both sides on each release's kernel")
    lab_machine_options(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--compare", nargs=2, metavar=("MECH_A", "MECH_B"),
                       help="count with the syscall mechanism forced to each (e.g. sc scv "
                            "on ppc64le) and print the difference per benchmark")
    group.add_argument("--compare-env", metavar="NAME=VALUE", action="append", default=[],
                       help="count as the guest is (A) and with this setting of its harness "
                            "(B; repeatable: all of them), e.g. KCROSS_RSEQ=off for what "
                            "rseq costs each crossing, and print the difference per "
                            "benchmark")
    group.add_argument("--against", metavar="KERNEL", type=Path,
                       help="count with the kernel and with KERNEL (e.g. your patch) and "
                            "print the difference per benchmark")
    group.add_argument("--against-source", metavar="DIR", type=Path,
                       help="count with the guest programs built from the source tree "
                            "(--source, or the checkout kcross runs from) and from DIR "
                            "(another kcross tree: your library change), on the same "
                            "kernel, and print the difference per benchmark")
    group.add_argument("--mitigations", action="store_true",
                       help="the arch's mitigation table: each variant's instructions "
                            "against its baseline, on every syscall path")
    p.add_argument("--explain", action=argparse.BooleanOptionalAction, default=None,
                   help="explain every row that changed by 1 instruction per op or more: "
                        "one profiled boot per side of those rows (the kernel functions "
                        "and costly instructions that moved), and the crossing's kernel "
                        "options that differ; on by default with --against, "
                        "--against-source and --releases alone, off with --compare, "
                        "--compare-env and --mitigations")
    p.add_argument("--profile", action="store_true",
                   help="count with the profile plugin: per operation, user and kernel "
                        "instructions, the functions they run through, the costly "
                        "instructions (with --compare, --against, --mitigations: what "
                        "changed); not stored")
    p.add_argument("--trace", metavar="BENCH", type=benchmark_glob,
                   help="one operation of benchmark BENCH, instruction by instruction "
                        "(address, symbol+offset, disassembly; user and kernel marked)")
    p.add_argument("--peers", nargs="?", const="quick", choices=SELECTIONS, metavar="all",
                   help="also run the kernel's own selftests (powerpc null_syscall and "
                        "context_switch, rseq param_test; 'all' adds the slow "
                        "basic_percpu_ops_test) in the same counting boot, built from "
                        "Debian's linux-source, and print their figures beside kcross's "
                        "rows with their agreement")
    # --peers' name before it was named for the peers, kept for scripts that use it.
    p.add_argument("--crosscheck", dest="peers", nargs="?", const="quick", choices=SELECTIONS,
                   help=argparse.SUPPRESS)
    p.add_argument("--refresh", action="store_true",
                   help="fetch Debian's current kernel even if one is cached")
    lab_guest_options(p, "guest")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..lab import jobs, series
    from ..lab.request import LabRequest

    request = LabRequest(
        arch=args.arch, mode=args.mode, timeout=args.timeout, guest=guest_options(args),
        kernel=args.kernel, refresh=args.refresh, release=args.release,
        releases=args.releases,
        compare=(args.compare[0], args.compare[1]) if args.compare else None,
        compare_env=tuple(args.compare_env),
        against=args.against, against_source=args.against_source,
        mitigations=args.mitigations, explain=args.explain, profile=args.profile,
        trace=args.trace, peers=args.peers, source=args.source,
        no_store=args.no_store, db=args.db, json_output=args.json, argv=tuple(args.argv))
    return (series.run if request.releases is not None else jobs.run)(request, out, err)
