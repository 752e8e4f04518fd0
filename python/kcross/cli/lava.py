"""``kcross lava job ARCH -o DIR``: a LAVA job definition and its images (docs/lava.md).

The work is :mod:`kcross.lava.make`'s; this module holds the options and turns them into
the request it takes (:class:`kcross.lava.make.JobRequest`).  A job's log (and its results
export) come back with ``kcross import``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..views.lines import say
from .options import Common, guest_options, lab_machine_options, lab_release_option

if TYPE_CHECKING:
    from rich.console import Console

HELP = "make a LAVA job that runs kcross on a board farm: kcross lava job ARCH -o DIR"
DESCRIPTION = (
    "Write into DIR a LAVA job definition (job.yaml) and the images it boots: the kernel "
    "and an initramfs with the lab's /init and the static harness, the plan being the "
    "harness exactly as 'kcross lab' runs it in counting mode. Every result becomes a LAVA "
    "test case (suite 'kcross') with its figure and unit. For the qemu device type the "
    "job's context sets LAVA's QEMU to the lab's machine (the figures are instruction "
    "counts, equal to the lab's), and DIR also gets device.yaml and dispatcher.yaml for "
    "lava-run on this machine.")


def lava_run(device: str, dispatcher: str, job: str, output: str = "OUTDIR") -> str:
    """The command that runs a job here, its log kept in job.log: lava-run writes its log on
    standard error (its standard output stays nearly empty), hence ``2>``."""
    return (f"lava-run --device {device} --dispatcher {dispatcher} --job-id 1 --output-dir "
            f"{output} {job} 2> job.log")


EPILOG = (
    f"Run it here: sudo {lava_run('DIR/device.yaml', 'DIR/dispatcher.yaml', 'DIR/job.yaml', 'OUT')}"
    "; or submit it: lavacli jobs submit DIR/job.yaml (host the images first: "
    "--image-url-base; it prints the job's number, and exits 0 even when the server refuses "
    "the job: check that it printed a number). Then: kcross import job.log, or kcross import "
    "--lava-server URL --lava-job N.\n"
    "--device-type NAME makes a U-Boot/TFTP ramdisk job for a board (untested here).")


# What `kcross lava` makes: one thing today (a positional word rather than a subcommand
# parser: the command table is the only place that registers subcommands).
ACTIONS = ("job",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    job = p
    job.add_argument("action", choices=ACTIONS, metavar="job",
                     help="write a job definition and its images into DIR")
    job.add_argument("arch", metavar="ARCH", help="ppc64le, aarch64 or x86_64")
    job.add_argument("-o", "--output", metavar="DIR", type=Path, required=True,
                     help="the directory to write (created if need be)")
    job.add_argument("--device-type", metavar="NAME", default="qemu",
                     help="LAVA device type: qemu (default; counting mode) or your board's "
                          "(a U-Boot TFTP ramdisk boot, timing mode; untested here)")
    job.add_argument("--kernel", metavar="PATH", type=Path,
                     help="boot this kernel file instead of Debian's (copied into DIR)")
    job.add_argument("--kernel-url", metavar="URL",
                     help="boot the kernel at URL (downloaded once to check it and take its "
                          "SHA-256; the job points at URL)")
    lab_release_option(job)    # Debian's kernel of that release, as kcross lab fetches it
    job.add_argument("--image-url-base", metavar="URL",
                     help="the images' URLs are URL/NAME (where you host DIR's files for a "
                          "LAVA server); default file:// paths into DIR")
    lab_machine_options(job)   # as kcross lab takes them (--cpu, --machine-opt: qemu only)
    job.add_argument("--old-lava", action="store_true",
                     help="for a LAVA server before 2025.02 (Debian 12's 2023.01), whose job "
                          "schema refuses the no_network context: the guest then has LAVA's "
                          "virtio network card, which moves a few path-lookup counts, and the "
                          "run is stored as a machine of its own")
    job.add_argument("--lava-version", metavar="VERSION",
                     help="the LAVA release the job is for (e.g. 2023.01: the server's "
                          "/api/v0.2/system/version/ says it): before 2025.02, as --old-lava")
    job.add_argument("--console", metavar="DEV",
                     help="a board's console device (default: the arch's lab console)")
    job.add_argument("--dtb-url", metavar="URL", help="a board's device tree blob")
    job.add_argument("--test-shell", action="store_true",
                     help="also write kcross-test-shell.yaml, a Lava-Test-Shell definition for "
                          "a board that boots a root filesystem, and the static harness it "
                          "downloads (kcross-harness-ARCH)")
    job.add_argument("--timeout", metavar="MIN", type=int, default=20,
                     help="minutes the test action may take (default 20)")
    job.add_argument("--source", metavar="DIR", type=Path,
                     help="kcross source tree to build the guest programs from")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from ..lava.make import JobRequest, make

    request = JobRequest(
        arch=args.arch, output=args.output, device_type=args.device_type,
        timeout=args.timeout, guest=guest_options(args), kernel=args.kernel,
        kernel_url=args.kernel_url, image_url_base=args.image_url_base,
        old_lava=args.old_lava, lava_version=args.lava_version, console=args.console, dtb_url=args.dtb_url,
        test_shell=args.test_shell, source=args.source, release=args.release)
    made = make(request, err)
    for f in (*made.files, made.job, made.device, made.dispatcher, made.test_shell):
        if f is not None:
            say(out, f"wrote {f}")
    say(out, f"{len(made.cases)} benchmark(s) in the plan: {len(made.cases)} LAVA test "
             "case(s) in suite 'kcross' when the job runs")
    if made.target is not None:
        say(out, f"the job is {made.target}")
    if made.device is not None:
        say(out, f"run it here (as root): "
                 f"{lava_run(str(made.device), str(made.dispatcher), str(made.job))}; "
                 "then: kcross import job.log")
    return 0
