"""The ``kcross`` command line: argument parsing and dispatch to one function per subcommand.

Every expected failure ends as one ``kcross: error: ...`` line on stderr with
the exit status of :mod:`kcross.errors` (README, "Exit codes"); only bugs in
kcross itself may show a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from rich.console import Console
from rich.text import Text

from . import __version__
from .errors import (
    EXIT_BROKEN,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Interrupted,
    KcrossError,
    OutputClosed,
    OutputError,
    SchemaError,
    UserError,
)

# Subcommands import their modules when they run: SQLAlchemy, numpy and scipy
# together take most of a second to import, which argument errors, --help,
# list and sysinfo should not pay.

# What kcross-harness does when not told otherwise (harness/main.c, parse()).
# The ranges are the harness's own, checked here too so that a run the harness
# would refuse is refused before anything starts.
DEFAULT_SAMPLES, QUICK_SAMPLES, SAMPLES_RANGE = 201, 11, (3, 100_000)
DEFAULT_WARMUP_MS, QUICK_WARMUP_MS, WARMUP_MS_RANGE = 200, 20, (0, 100_000)
DEFAULT_MIN_BATCH_MS, MIN_BATCH_MS_RANGE = 2, (0.01, 10_000)
CPU_RANGE = (0, 1023)  # CPU_SETSIZE - 1
SUITES = ("syscall", "cpuid", "percpu", "percpu-scaling")  # for --help only; see `kcross list`

EXIT_CODES = """\
exit status:
  0    every benchmark ok or skipped
  1    a benchmark failed its own check (a result: the run is complete and stored,
       the table shows the failed row and its reason)
  2    bad input: options, files, database (one line on stderr)
  3    the harness failed (crashed, wrote garbage, could not write its output),
       kcross could not write its output, or a module it needs cannot be imported
  130  interrupted by SIGINT (Ctrl-C); 143 SIGTERM, 129 SIGHUP: results so far are
       kept, the run is marked interrupted
  141  standard output closed by its reader (e.g. `kcross run --json | head`)"""

ENVIRONMENT = """\
environment:
  KCROSS_DB         the database (SQLAlchemy URL or SQLite path); default
                    $XDG_DATA_HOME/kcross/kcross.db
  KCROSS_HARNESS    the kcross-harness to run; default the installed one
  KCROSS_SYSCALL    force the syscall mechanism: a name this architecture has
                    (kcross sysinfo lists them under "available"), libc or auto
  KCROSS_VDSO       0: the library ignores the vDSO; 1 or unset: it uses it
  KCROSS_TIMER      clock_gettime: time without the cycle counter; auto: default
  KCROSS_TEST_FAIL  a GLOB of benchmark names whose check is forced to fail
                    (for tests of failure handling)
  KCROSS_TEST_SYSROOT  a directory holding a copy of /proc and /sys that the
                    readiness checks read instead of the machine's (for tests)
  An empty variable counts as unset; a bad value is refused (exit status 2)."""


SYSINFO_CHECK_EPILOG = """\
--check looks at the measuring CPU's frequency governor and turbo, a busy SMT
sibling, its isolation (isolcpus, nohz_full, rcu_nocbs) and load, ASLR,
transparent huge pages, the NMI watchdog, the IRQs arriving on it, perf
counters and whether this is a VM. Load and IRQs are sampled over 100 ms.
States: ok; warn (moves or disturbs the figures; the row says what to do); info
(worth knowing, nothing to fix for timing); unknown (the machine does not say).
It reads /proc and /sys only: it never changes the system.

exit status (with --check):
  0    no check warns (ok, info or unknown only)
  1    at least one check warns
  2    bad input; 3 the harness failed (as for every command)"""


class Parser(argparse.ArgumentParser):
    """argparse that reports mistakes in one line (no usage dump) and exits 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"kcross: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def _number(lo: float, hi: float, *, whole: bool) -> Callable[[str], float]:
    """An argparse type: a number in [lo, hi] (whole numbers only if ``whole``)."""
    kind = "whole number" if whole else "number"

    def convert(text: str) -> float:
        try:
            value: float = int(text) if whole else float(text)
        except ValueError:
            value = float("nan")
        if not lo <= value <= hi:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be a {kind} from {lo:g} to {hi:g}, "
                                             f"not {text!r}")
        return value

    return convert


class _Once(argparse.Action):
    """Store an option's value, refusing a second one: the harness takes one of each."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        previous = getattr(namespace, self.dest, None)
        if previous is not None:
            hint = "one GLOB that matches both, or " if self.metavar == "GLOB" else ""
            parser.error(f"{option_string} given twice ({previous!r} and {values!r}): the "
                         f"harness takes one {'GLOB' if hint else self.dest}; use {hint}one "
                         "run for each")
        setattr(namespace, self.dest, values)


def _export_option(parser: argparse.ArgumentParser, when: str) -> None:
    from .export import add_option  # light: the exporters load when they write

    add_option(parser, when)


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
                    "space and the Linux kernel (syscalls, vDSO, rseq).",
                    epilog=f"{EXIT_CODES}\n\n{ENVIRONMENT}",
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"kcross {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run_epilog = f"""\
suites: {", ".join(SUITES)}
  (see 'kcross list' for every benchmark, and what this machine cannot run and why)

defaults: {DEFAULT_SAMPLES} samples per benchmark after a {DEFAULT_WARMUP_MS} ms warm-up, \
each sample
  a batch of at least {DEFAULT_MIN_BATCH_MS} ms; the measuring thread pinned to the highest
  allowed CPU; every benchmark; results shown as a table, stored in the database

{ENVIRONMENT}

{EXIT_CODES}"""
    p = sub.add_parser("run", parents=[db, hp, js], help="run benchmarks and store the results",
                       description="Run benchmarks with kcross-harness, store each result as "
                       "it arrives, and print the table.", epilog=run_epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", metavar="S", action=_Once, help="only this suite")
    p.add_argument("--bench", metavar="GLOB", action=_Once,
                   help="only benchmarks whose name or suite/name matches GLOB (fnmatch: "
                        "*, ?, [...]; one GLOB)")
    p.add_argument("--quick", action="store_true",
                   help=f"{QUICK_SAMPLES} samples after a {QUICK_WARMUP_MS} ms warm-up "
                        f"(instead of {DEFAULT_SAMPLES} and {DEFAULT_WARMUP_MS} ms); batches "
                        "keep their length: a smoke test, not a figure")
    p.add_argument("--samples", type=_number(*SAMPLES_RANGE, whole=True), metavar="N",
                   help=f"samples per benchmark, {SAMPLES_RANGE[0]} to {SAMPLES_RANGE[1]} "
                        f"(default {DEFAULT_SAMPLES}; --quick {QUICK_SAMPLES})")
    p.add_argument("--warmup-ms", type=_number(*WARMUP_MS_RANGE, whole=False), metavar="MS",
                   help=f"warm-up before each benchmark's samples, {WARMUP_MS_RANGE[0]} to "
                        f"{WARMUP_MS_RANGE[1]} ms (default {DEFAULT_WARMUP_MS}; --quick "
                        f"{QUICK_WARMUP_MS})")
    p.add_argument("--min-batch-ms", type=_number(*MIN_BATCH_MS_RANGE, whole=False),
                   metavar="MS",
                   help=f"shortest timed batch (one sample), {MIN_BATCH_MS_RANGE[0]} to "
                        f"{MIN_BATCH_MS_RANGE[1]} ms (default {DEFAULT_MIN_BATCH_MS})")
    p.add_argument("--cpu", type=_number(*CPU_RANGE, whole=True), metavar="C",
                   help="pin the measuring thread to CPU C (default: the highest CPU "
                        "kcross may run on)")
    p.add_argument("--interleave", action="store_true",
                   help="take the benchmarks' samples in turn: robust ratios on a drifting "
                        "machine (results arrive together at the end)")
    p.add_argument("--remote", action="append", metavar="ssh://[USER@]HOST[:PORT]",
                   help="run on that machine over ssh (BatchMode: a key or an agent): the "
                        "static harness is copied to a temporary directory there, run, and "
                        "removed; the run is stored here with that machine's fingerprint; "
                        "repeat for several machines at once")
    p.add_argument("-o", "--ssh-option", action="append", metavar="OPTION",
                   help="an ssh -o option for --remote, e.g. IdentityFile=~/.ssh/lab or "
                        "ConnectTimeout=30 (repeatable; wins over kcross's defaults)")
    _export_option(p, "when the run ends, also an interrupted one's results so far")
    p.add_argument("--no-check", action="store_true",
                   help="do not check the machine first (by default one stderr line names "
                        "what is not tuned for measuring: see 'kcross sysinfo --check'; it "
                        "never stops the run)")
    p.add_argument("--tag", metavar="NAME",
                   help="tag the run NAME once it is stored complete (see 'kcross tag')")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("list", parents=[hp, js], help="list the benchmarks the harness knows")
    p.add_argument("--suite", help="only this suite")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("runs", parents=[db, js], help="list stored runs, newest first")
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
    _export_option(p, "the run shown")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("sysinfo", parents=[hp, js], help="describe this machine as kcross sees it",
                       description="Describe this machine as kcross sees it (the harness's "
                       "fingerprint); with --check, whether it is tuned for measuring.",
                       epilog=SYSINFO_CHECK_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true",
                   help="check the machine is ready to measure on: a table of checks, each "
                        "with what was seen and the command that fixes it (nothing is "
                        "changed); exit status 1 when any check warns")
    p.add_argument("--cpu", type=_number(*CPU_RANGE, whole=True), metavar="C",
                   help="with --check: the measuring CPU (default: the highest CPU kcross "
                        "may run on, the one 'kcross run' pins to)")
    p.set_defaults(func=cmd_sysinfo)

    p = sub.add_parser("import", parents=[db],
                       help="store the output of 'kcross-harness run --json' from elsewhere")
    p.add_argument("file", type=Path, metavar="FILE", help="a JSON-lines capture, or - for stdin")
    p.add_argument("--force", action="store_true",
                   help="store it even if the same records are already stored")
    p.set_defaults(func=cmd_import)

    from .lab import command as lab_command
    lab_command.add_parser(sub, [db])
    from . import commands
    commands.add_parsers(sub, commands.Parents(db=db, harness=hp, json=js))
    return parser


class _PlainConsole(Console):
    """Standard output that is not a terminal (a file, a pipe, a mail): plain text.

    It says its encoding is ASCII, so rich draws every table's box with ASCII
    characters (``+ - |``: rich substitutes box.ASCII for any other box when the
    output is ASCII-only), and it writes no colour or style codes.  The text in
    the cells is written as it is (UTF-8).
    """

    @property
    def encoding(self) -> str:
        return "ascii"


def _consoles() -> tuple[Console, Console]:
    """stdout for results, stderr for progress and messages; wide plain tables when piped."""
    out = Console()
    if not out.is_terminal:
        out = _PlainConsole(width=int(os.environ.get("COLUMNS", "200")), color_system=None)
    return out, Console(stderr=True)


def _write_exports(pairs: Sequence[tuple[str, str]], run: Any) -> None:
    from . import export

    for fmt, path in pairs:
        export.write(fmt, path, export.ExportData(runs=[run]))


def _print_json(records: Sequence[dict[str, Any]]) -> None:
    for record in records:
        sys.stdout.write(json.dumps(record) + "\n")


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from . import harness

    with harness.stop_signals_held():  # numpy's BLAS threads leave them to this one
        from .runner import RunRequest, run
        from .store import Store, resolve
        from .store.refs import check_tag_name

    if args.tag is not None:
        check_tag_name(args.tag)
    # Checked now, created only when the harness's first record arrives: a run
    # refused for bad arguments leaves no database file behind.
    store = Store.open(resolve(args.db), write=True, lazy=True)
    assert store is not None
    forwarded: list[str] = []
    for option in ("suite", "bench", "samples", "warmup_ms", "min_batch_ms", "cpu"):
        value = getattr(args, option)
        if value is not None:
            forwarded += [f"--{option.replace('_', '-')}", str(value)]
    for flag in ("quick", "interleave"):
        if getattr(args, flag):
            forwarded.append(f"--{flag}")
    from . import export

    exports = export.requested(args)  # checked before anything runs

    def export_run(run_id: int) -> None:
        try:
            _write_exports(exports, store.load_run(str(run_id)))
        except OutputClosed:
            raise
        except KcrossError as exc:
            raise type(exc)(f"{exc}; run {run_id} is stored (see 'kcross show {run_id}')") \
                from None

    delivery: dict[str, Any] = {"print_table": all(path != export.STDOUT for _, path in exports),
                                "on_end": export_run if exports else None}
    if args.remote:
        from .remote import cmd_run_remote
        if exports and len(args.remote) > 1:
            raise UserError("--export with several --remote hosts would write one file from "
                            "each: export each stored run with 'kcross show RUN --export ...'")
        try:
            return cmd_run_remote(store, args, forwarded, out, err, **delivery)
        finally:
            store.close()
    if args.ssh_option:
        raise KcrossError("--ssh-option is for runs with --remote")
    check = not args.no_check
    request = RunRequest(harness=harness.locate(args.harness), harness_args=forwarded,
                         command=args.argv, json_output=args.json, tag=args.tag,
                         notice=(lambda: _not_tuned(args.cpu)) if check else None,
                         **delivery)
    try:
        return run(store, request, out, err)
    finally:
        store.close()


def _sysroot() -> str:
    return os.environ.get("KCROSS_TEST_SYSROOT") or "/"


def _not_tuned(cpu: int | None) -> str | None:
    """The line `kcross run` prints when the machine is not tuned for measuring (taken
    before the harness starts, printed once it has: it never stops the run)."""
    from . import readiness

    findings = readiness.run_checks(_sysroot(), cpu, checks=readiness.RUN_CHECKS)
    return readiness.warning_line(findings, cpu)


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
    if args.json:
        _print_json([_run_json(run) for run in runs])
        return 0
    out.print(render.runs_table(runs))
    return 0


def _run_json(run: Any) -> dict[str, Any]:
    """One line of ``kcross runs --json``: what the table shows, as JSON values."""
    return {"id": run.id, "started_at": run.started_at.isoformat(), "status": run.status,
            "state": run.state or run.status, "live": run.live, "source": run.source,
            "unit": run.unit, "hostname": run.hostname, "cpu_model": run.cpu_model,
            "kernel_release": run.kernel_release, "hypervisor": run.hypervisor,
            "results": run.results}


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
    from . import export

    exports = export.requested(args)
    stored = store.load_run(args.run)
    _write_exports(exports, stored)
    if args.json:
        # The harness's own format, so that a shown run can be imported elsewhere.
        export.write("json", export.STDOUT, export.ExportData(runs=[stored]))
        return 0
    if any(path == export.STDOUT for _, path in exports):
        return 0  # the export took standard output
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

    if args.cpu is not None and not args.check:
        raise UserError("--cpu goes with --check (the fingerprint describes the whole machine)")
    records = harness.collect(harness.locate(args.harness), ["sysinfo", "--json"])
    if [r["type"] for r in records] != ["fingerprint"]:
        raise SchemaError("harness 'sysinfo' must write exactly one fingerprint record, wrote "
                          + (", ".join(r["type"] for r in records) or "nothing"))
    if args.check:
        from . import readiness

        cpu = readiness.measuring_cpu(args.cpu)
        findings = readiness.run_checks(_sysroot(), cpu, fingerprint=records[0])
        if args.json:
            _print_json([readiness.as_json(findings, cpu)])
        else:
            out.print(readiness.table(findings, cpu))
        return 1 if readiness.warnings(findings) else 0
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


class _GuardedStdout:
    """sys.stdout whose write errors become kcross errors: :class:`OutputClosed`
    for a reader that went away, :class:`OutputError` for anything else
    (``> /dev/full``), instead of a traceback or Python's complaint at exit."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream  # None when kcross was started with fd 1 closed

    def _fail(self, exc: OSError) -> NoReturn:
        if isinstance(exc, BrokenPipeError):
            raise OutputClosed("") from None
        raise OutputError(f"cannot write to standard output: "
                          f"{exc.strerror or exc}") from None

    def write(self, text: str) -> int:
        if self._stream is None:
            raise OutputError("cannot write to standard output: it is closed")
        try:
            return self._stream.write(text)
        except OSError as exc:
            self._fail(exc)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            self._fail(exc)

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _drop_stdout() -> None:
    """Point fd 1 at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def _failed_import(exc: ImportError) -> str:
    """The module that failed: its name, else the file whose import raised."""
    if exc.name:
        return exc.name
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename if tb is not None else "a module"


def main(argv: Sequence[str] | None = None) -> NoReturn:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not isinstance(sys.stdout, _GuardedStdout):
        sys.stdout = _GuardedStdout(sys.stdout)
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(arguments)
        except SystemExit:  # --help, --version (or a usage error, on stderr)
            sys.stdout.flush()  # argparse would ignore a failed write
            raise
        if args.command is None:  # `kcross` alone: say what it can do
            parser.print_help(sys.stderr)
            sys.exit(EXIT_USAGE)
        args.argv = arguments
        out, err = _consoles()
        status = args.func(args, out, err)
        sys.stdout.flush()
    except OutputClosed as exc:
        # Piped into e.g. `head`: stop quietly, like any filter; say only what
        # became of a run in progress.
        _drop_stdout()
        if str(exc):
            sys.stderr.write(f"kcross: {exc}\n")
        sys.exit(exc.exit_code)
    except Interrupted as exc:
        sys.stderr.write(f"kcross: {exc}\n")
        sys.exit(exc.exit_code)
    except KcrossError as exc:
        if isinstance(exc, OutputError):
            _drop_stdout()
        else:
            try:
                sys.stdout.flush()
            except KcrossError:
                _drop_stdout()
        message = " ".join(str(exc).splitlines())  # the contract is one line
        sys.stderr.write(f"kcross: error: {message}\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("kcross: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except ImportError as exc:
        # A dependency that is missing or broken: the installation's fault, not a bug.
        notes = "; ".join(getattr(exc, "__notes__", []))
        sys.stderr.write(f"kcross: error: cannot import {_failed_import(exc)}: "
                         f"{' '.join(str(exc).splitlines())}"
                         f"{'; ' + notes if notes else ''} (the installation is incomplete: "
                         f"reinstall kcross with its dependencies)\n")
        sys.exit(EXIT_BROKEN)
    sys.exit(status)
