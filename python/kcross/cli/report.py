"""``kcross report [RUN...] -o FILE``: stored runs as one self-contained static HTML page."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from .options import stores

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_OUTPUT = "report.html"


HELP = "write stored runs as one self-contained HTML page (tables, plots, comparisons)"
DESCRIPTION = ("Write one static HTML page of stored runs: the fingerprints, a table and the "
               "samples' distribution per suite, the comparisons of each run with the first, "
               "thread-scaling curves, and lab instruction counts by arch. The page has no "
               "script and loads nothing from elsewhere.")
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Any) -> None:
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="run id, latest, latest~N, a tag or latest@HOST (default: latest); "
                        "the first is the base the others are compared with")
    p.add_argument("-o", "--output", default=DEFAULT_OUTPUT, metavar="FILE",
                   help=f"where to write the page (default: {DEFAULT_OUTPUT}; - for stdout)")


def _check_writable(path: Path) -> None:
    """Refuse, before any work, a path the page could not be written to."""
    parent = path.parent
    if path.is_dir():
        raise UserError(f"cannot write the report to {path}: it is a directory")
    if not parent.is_dir():
        raise UserError(f"cannot write the report to {path}: no directory {parent}")
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"cannot write the report to {path}: permission denied")
    # A new or regular file is written through a temporary file beside it (_write): that
    # needs the directory; a device or FIFO (/dev/stdout, /dev/full) is written into.
    replaced = not path.exists() or path.is_file()
    if replaced and not os.access(parent, os.W_OK | os.X_OK):
        raise UserError(f"cannot write the report to {path}: permission denied (directory "
                        f"{parent})")


def _write(path: Path, text: str) -> None:
    """Write a file through a temporary file in the same directory, so that a reader never
    sees half a page; anything else that is not a file (/dev/stdout, a FIFO) directly."""
    data = text.encode()
    try:
        if path.exists() and not path.is_file():
            with path.open("wb") as f:
                f.write(data)
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UserError(f"cannot write the report to {path}: "
                        f"{exc.strerror or exc}") from None


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from rich.text import Text

    from .. import report
    from ..judge.comparison import history_noise
    from ..series import series_of_results

    to_stdout = args.output == "-"
    path = Path(args.output)
    if not to_stdout:
        _check_writable(path)
    refs = list(dict.fromkeys(args.runs or ["latest"]))   # a run named twice is shown once
    with stores(args.db) as opened:
        store = opened.reading()
        runs = [store.load_run(ref) for ref in refs]
        unique = list({run.id: run for run in runs}.values())  # latest and its id: one run
        wanted = {run.id for run in unique}
        tags = {s.id: s.tags for s in store.list_runs() if s.id in wanted}
        noise = history_noise(store, [s for run in unique for s in series_of_results(
            f"run {run.id}", run.fingerprint, run.results)])
        page = report.html(unique, tags=tags, noise=noise)
    if to_stdout:
        sys.stdout.write(page)
        return 0
    _write(path, page)
    size = len(page.encode())
    what = ", ".join(f"run {r.id}" for r in unique)
    err.print(Text(f"wrote {path} ({what}; {size / 1024:,.0f} KiB)"))
    return 0
