"""The ``kcross`` command line: argument parsing and dispatch to one function per subcommand.

Every expected failure ends as one ``kcross: error: ...`` line on stderr with
a non-zero status (2 for bad input or an unusable database, 1 when the
harness misbehaves); only bugs in kcross itself may show a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.text import Text

from . import __version__
from .errors import EXIT_INTERRUPTED, KcrossError, SchemaError

# Subcommands import their modules when they run: SQLAlchemy, numpy and scipy
# together take most of a second to import, which argument errors, --help,
# list and sysinfo should not pay.


class Parser(argparse.ArgumentParser):
    """argparse that reports mistakes in one line (no usage dump) and exits 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"kcross: error: {message} (see '{self.prog} --help')\n")
        sys.exit(2)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def _cpu(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a CPU number (0, 1, ...), not {text!r}")
    return value


def build_parser() -> Parser:
    db = Parser(add_help=False)
    db.add_argument("--db", metavar="URL",
                    help="SQLAlchemy URL or SQLite file path (default: $KCROSS_DB, else "
                         "$XDG_DATA_HOME/kcross/kcross.db)")
    hp = Parser(add_help=False)
    hp.add_argument("--harness", metavar="PATH",
                    help="kcross-harness to use (default: $KCROSS_HARNESS, else the installed one)")
    js = Parser(add_help=False)
    js.add_argument("--json", action="store_true", help="write JSON lines instead of a table")

    parser = Parser(prog="kcross", description="Measure the cost of crossing between user "
                    "space and the Linux kernel (syscalls, vDSO, rseq).")
    parser.add_argument("--version", action="version", version=f"kcross {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", parents=[db, hp, js], help="run benchmarks and store the results")
    p.add_argument("--suite", help="only this suite")
    p.add_argument("--bench", metavar="GLOB", help="only benchmarks whose name matches GLOB")
    p.add_argument("--quick", action="store_true", help="fewer samples, shorter batches")
    p.add_argument("--samples", type=_count, metavar="N", help="samples per benchmark")
    p.add_argument("--cpu", type=_cpu, metavar="C", help="pin the measuring thread to CPU C")
    p.add_argument("--interleave", action="store_true",
                   help="take the benchmarks' samples in turn: robust ratios on a drifting "
                        "machine (results arrive together at the end)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("list", parents=[hp, js], help="list the benchmarks the harness knows")
    p.add_argument("--suite", help="only this suite")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("runs", parents=[db], help="list stored runs, newest first")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("mark", parents=[db],
                       help="mark a run stranded in 'running' (its process is gone) as "
                            "failed or interrupted")
    p.add_argument("run", metavar="RUN", help="run id (see 'kcross runs')")
    p.add_argument("status", choices=("failed", "interrupted"), metavar="STATUS",
                   help="failed or interrupted")
    p.add_argument("--force", action="store_true",
                   help="also a run that looks alive or has already finished")
    p.set_defaults(func=cmd_mark)

    p = sub.add_parser("delete", parents=[db], help="delete a run and its results")
    p.add_argument("run", metavar="RUN", help="run id (see 'kcross runs')")
    p.add_argument("--force", action="store_true", help="also a run that looks alive")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("show", parents=[db, js], help="show a stored run")
    p.add_argument("run", nargs="?", default="latest", metavar="RUN",
                   help="run id or 'latest' (default)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("sysinfo", parents=[hp, js], help="describe this machine as kcross sees it")
    p.set_defaults(func=cmd_sysinfo)

    p = sub.add_parser("import", parents=[db],
                       help="store the output of 'kcross-harness run --json' from elsewhere")
    p.add_argument("file", type=Path, metavar="FILE", help="a JSON-lines capture, or - for stdin")
    p.add_argument("--force", action="store_true",
                   help="store it even if the same records are already stored")
    p.set_defaults(func=cmd_import)
    return parser


def _consoles() -> tuple[Console, Console]:
    """stdout for results, stderr for progress and messages; wide tables when piped."""
    out = Console()
    if not out.is_terminal:
        out = Console(width=int(os.environ.get("COLUMNS", "200")))
    return out, Console(stderr=True)


def _print_json(records: Sequence[dict[str, Any]]) -> None:
    for record in records:
        sys.stdout.write(json.dumps(record) + "\n")


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from . import harness
    from .runner import RunRequest, run
    from .store import Store, resolve

    # Checked now, created only when the harness's first record arrives: a run
    # refused for bad arguments leaves no database file behind.
    store = Store.open(resolve(args.db), write=True, lazy=True)
    assert store is not None
    forwarded: list[str] = []
    for option in ("suite", "bench", "samples", "cpu"):
        value = getattr(args, option)
        if value is not None:
            forwarded += [f"--{option}", str(value)]
    for flag in ("quick", "interleave"):
        if getattr(args, flag):
            forwarded.append(f"--{flag}")
    request = RunRequest(harness=harness.locate(args.harness), harness_args=forwarded,
                         command=args.argv, json_output=args.json)
    try:
        return run(store, request, out, err)
    finally:
        store.close()


def cmd_list(args: argparse.Namespace, out: Console, err: Console) -> int:
    from . import harness, render

    extra = ["--suite", args.suite] if args.suite else []
    records = harness.collect(harness.locate(args.harness), ["list", "--json", *extra])
    wrong = [r["type"] for r in records if r["type"] != "bench"]
    if wrong:
        raise SchemaError(f"harness 'list' wrote a {wrong[0]} record, expected bench records")
    if args.json:
        _print_json(records)
    else:
        out.print(render.bench_table(records))
    return 0


def cmd_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    from . import render
    from .store import Store, resolve

    target = resolve(args.db)
    store = Store.open(target, write=False)
    runs = [] if store is None else store.list_runs()
    if not runs:
        err.print(Text(f"no runs stored in {target.display}"))
        return 0
    out.print(render.runs_table(runs))
    return 0


def cmd_mark(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .store import Store, resolve

    store = Store.open_existing(resolve(args.db))
    try:
        was = store.mark_run(args.run, args.status, force=args.force)
    finally:
        store.close()
    out.print(Text(f"run {args.run} marked {args.status} (was {was})"))
    return 0


def cmd_delete(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .store import Store, resolve

    store = Store.open_existing(resolve(args.db))
    try:
        gone = store.delete_run(args.run, force=args.force)
    finally:
        store.close()
    out.print(Text(f"run {args.run} deleted with its {gone} result(s)"))
    return 0


def cmd_show(args: argparse.Namespace, out: Console, err: Console) -> int:
    from . import render
    from .store import Store, resolve

    target = resolve(args.db)
    store = Store.open(target, write=False)
    if store is None:
        raise KcrossError(f"no runs stored in {target.display}")
    stored = store.load_run(args.run)
    if args.json:
        # The harness's own format, so that a shown run can be imported elsewhere.
        _print_json([r for r in (stored.fingerprint, stored.plan, *stored.results, stored.end)
                     if r is not None])
        return 0
    when = stored.started_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    host = (stored.fingerprint.get("host") or {}).get("hostname") or "?"
    title = f"run {stored.id} · {stored.state or stored.status} · {stored.source} · {when} · {host}"
    out.print(render.results_table(stored.results, title=title))
    out.print(render.run_footer(stored.fingerprint, stored.results))
    if stored.status != "complete":
        planned = len(stored.plan["benchmarks"]) if stored.plan else 0
        note = f"{stored.status}: {len(stored.results)} of {planned} benchmark(s) stored"
        if stored.error:
            note += f" ({stored.error})"
        out.print(Text(note, style="yellow"))
    return 0


def cmd_sysinfo(args: argparse.Namespace, out: Console, err: Console) -> int:
    from . import harness, render

    records = harness.collect(harness.locate(args.harness), ["sysinfo", "--json"])
    if [r["type"] for r in records] != ["fingerprint"]:
        raise SchemaError("harness 'sysinfo' must write exactly one fingerprint record, wrote "
                          + (", ".join(r["type"] for r in records) or "nothing"))
    if args.json:
        _print_json(records)
    else:
        out.print(render.sysinfo(records[0]))
    return 0


def cmd_import(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .importer import import_file
    from .store import Store, resolve

    def open_store() -> Store:
        store = Store.open(resolve(args.db), write=True)
        assert store is not None  # opening for writing creates the database
        return store

    done = import_file(open_store, args.file, force=args.force)
    name = "stdin" if str(args.file) == "-" else str(args.file)
    if done.dropped_partial_line is not None:
        err.print(Text(f"kcross: {name} line {done.dropped_partial_line} was cut off "
                       "mid-record and is ignored"))
    state = "complete" if done.complete else "interrupted (no end record)"
    out.print(Text(f"imported {name} as run {done.run_id}: {state}, "
                   f"{done.results} of {done.planned} benchmark(s)"))
    return 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(arguments)
    args.argv = arguments
    out, err = _consoles()
    try:
        status = args.func(args, out, err)
    except KcrossError as exc:
        sys.stdout.flush()
        message = " ".join(str(exc).splitlines())  # the contract is one line
        sys.stderr.write(f"kcross: error: {message}\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("kcross: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        # Output piped into e.g. `head`: stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    sys.exit(status)
