"""``kcross import FILE``: store a capture of ``kcross-harness run --json`` from elsewhere,
or the log of a LAVA job made by ``kcross lava job`` (docs/lava.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .. import infile
from ..errors import UserError, clipped
from ..views.lines import say
from .options import Common

if TYPE_CHECKING:
    import datetime as dt

    from rich.console import Console

    from ..lava.imports import LavaImportRequest

HELP = "store the output of 'kcross-harness run --json' or a LAVA job's log from elsewhere"
EPILOG = (
    "A LAVA job's log (lava-run's output, or lavacli jobs logs N --raw) of a job made by "
    "'kcross lava job' is recognised by its content and stored with source 'lava', after "
    "checking LAVA's test cases against the harness's records. A LAVA results export alone "
    "is refused: it has no fingerprint (give it with --lava-results beside the log). "
    "--lava-server URL --lava-job N takes a job straight from its server: the log, the "
    "results export and the device that ran it.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Common) -> None:
    p.add_argument("file", type=Path, metavar="FILE", nargs="?",
                   help="a JSON-lines capture or a LAVA job's log, or - for stdin (none with "
                        "--lava-server)")
    p.add_argument("--force", action="store_true",
                   help="store it even if the same records are already stored")
    p.add_argument("--lava-results", metavar="EXPORT", type=Path,
                   help="a LAVA job's results export (lavacli results N --yaml, or the "
                        "server's /results/N/yaml or /csv): every test case's measurement "
                        "must equal the figure stored from the log")
    p.add_argument("--lava-server", metavar="URL",
                   help="take the job straight from this LAVA server (its REST API): its log, "
                        "its results export and the device that ran it (with --lava-job)")
    p.add_argument("--lava-job", metavar="ID",
                   help="the LAVA job's id: the job to take from --lava-server, or, with a "
                        "log file, checked against the log's")
    # Gone (issue 25): a device named by hand is not proof; the server says it.
    p.add_argument("--lava-device", metavar="NAME", help=argparse.SUPPRESS)


def _kind(data: bytes) -> str:
    """'lava' (a job's log), 'export' (a results export), or 'capture'."""
    from ..lava.log import looks_like_log
    from ..lava.results import looks_like_export

    text = data[:1 << 16].decode("utf-8", errors="replace")
    first = next((line for line in text.splitlines() if line.strip()), "")
    if looks_like_log(first):
        return "lava"
    if not first.lstrip().startswith("{") and looks_like_export(text):
        return "export"
    return "capture"


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.lava_device is not None:
        raise UserError("--lava-device: LAVA's log does not name the device, and a name "
                        "given by hand is not proof: take the job from its server, which "
                        "says it (kcross import --lava-server URL --lava-job N)")
    if args.lava_server is not None:
        from ..lava.imports import LavaImportRequest

        request = LavaImportRequest(file=args.file, job_id=args.lava_job,
                                    server=args.lava_server, export=args.lava_results,
                                    force=args.force)
        request.check()   # before anything is downloaded
        return _lava(args, out, err, request, f"{args.lava_server} job {args.lava_job}")
    if args.file is None:
        raise UserError("give the file to import (a capture or a LAVA job's log; - for "
                        "standard input), or a LAVA job on its server: --lava-server URL "
                        "--lava-job N")
    # The input is read once, here: its kind is known only from its content, and a pipe,
    # a FIFO or standard input cannot be read a second time.
    _, data = infile.read(args.file, empty="nothing to import; a LAVA job's log: lava-run "
                                           "writes it on standard error, 2> job.log")
    kind = _kind(data)
    lava_options = [o for o, v in (("--lava-results", args.lava_results),
                                   ("--lava-job", args.lava_job)) if v]
    name = "stdin" if str(args.file) == infile.STDIN else str(args.file)
    if kind == "export":
        raise UserError(f"{clipped(name)} is a LAVA results export: it has LAVA's test cases "
                        "but no fingerprint (kernel, CPU, machine, harness), so kcross does "
                        "not store it alone; give the job's log (lavacli jobs logs N --raw > "
                        f"job.log) and this file with it: kcross import job.log "
                        f"--lava-results {clipped(name)}")
    if kind == "lava":
        from ..lava.imports import LavaImportRequest

        request = LavaImportRequest(file=args.file, data=data, export=args.lava_results,
                                    job_id=args.lava_job, force=args.force)
        request.check()
        return _lava(args, out, err, request, name)
    if lava_options:
        raise UserError(f"{', '.join(lava_options)}: for a LAVA job's log; {clipped(name)} "
                        "is not one")
    from ..importer import import_file
    from ..store import stores

    with stores(args.db) as opened:
        imported = import_file(opened.writing, args.file, force=args.force, data=data)
    if imported.dropped_partial_line is not None:
        say(err, f"kcross: {name} line {imported.dropped_partial_line} was cut off "
                 "mid-record and is ignored")
    _future(err, name, imported.future, imported.run_id)
    state = "complete" if imported.complete else "interrupted (no end record)"
    say(out, f"imported {name} as run {imported.run_id}: {state}, "
             f"{imported.results} of {imported.planned} benchmark(s)")
    return 0


def _future(err: Console, name: str, future: dt.datetime | None, run_id: int) -> None:
    """On stderr, for every import (a capture, a LAVA job): a run stored with a start in the
    future (kcross.importer: a wrong clock where it was measured)."""
    if future is not None:
        say(err, f"kcross: warning: {name} started at {future:%Y-%m-%d %H:%M} UTC, "
                 "in the future (the capturing machine's clock is wrong?); stored as run "
                 f"{run_id} all the same ('latest' is the newest run stored, "
                 "whatever its start)")


def _lava(args: argparse.Namespace, out: Console, err: Console, request: LavaImportRequest,
          name: str) -> int:
    """A LAVA job's log imported (from a file or from its server), and the line saying so."""
    from ..lava.imports import import_log
    from ..store import stores

    with stores(args.db) as opened:
        done = import_log(opened.writing, request)
    _future(err, name, done.future, done.run_id)
    what = "counting (lab group)" if done.counting else "timing"
    checked = f"{done.cases_checked} LAVA test case(s) checked"
    if request.export is not None or request.server is not None:
        checked += f", {done.export_checked} in the results export"
    device = f", device {done.device}" if done.device else ""
    say(out, f"imported {name} (LAVA job {done.job_id or '?'}{device}, device type "
             f"{done.device_type}, {what}) as run {done.run_id}: "
             f"{done.results} of {done.planned} benchmark(s); {checked}")
    return 0
