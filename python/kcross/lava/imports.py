"""``kcross import`` of a LAVA job made by ``kcross lava job`` (issue 17).

From the job's log (:mod:`.log`), in order, each failure one line and nothing stored:

1. the job: it must have ended (a log without the job's result is cut), and passed;
2. kcross's monitor: the token is taken from the dispatcher's own line ("Waiting for
   start message: @@kcross-lab TOKEN begin 1"), never from the console; a log without it
   is not a kcross job;
3. the console (``target`` and ``feedback`` lines) read as a lab console is (:class:`ConsoleReader`, only
   marker lines with that token): the harness's command and its records, and /init's
   ``note`` (:class:`kcross.lava.job.Note`: what the job is);
4. for a QEMU counting job, the lab group of the note checked against what LAVA says it
   ran: the QEMU program and its -machine, -cpu, -smp, -m, -icount, -seed, -rtc and
   -append (from its "Boot command" line), and the kernel's SHA-256 (from its download);
   QEMU's version is the note's when LAVA's logged package version is the one the job was
   made with, else LAVA's (so another QEMU is another machine);
5. the harness's ``kcross-result`` lines on the console, which LAVA's monitor made its
   test cases from: one per harness result, of the same name, result, figure and unit (a
   line edited or removed after the job does not change LAVA's cases: it is found here);
6. LAVA's own test cases (``results`` lines of suite ``kcross``): one per harness result,
   of the same name, result and figure (LAVA 2023.01 passes a job whose monitor matched
   nothing: the cases are counted here);
7. with ``--lava-results`` (a server's results export, :mod:`.results`): the same check
   against the export's cases.

Then the run is stored with source ``lava``: the harness's records, ``fingerprint.lab``
(QEMU jobs) and ``fingerprint.lava`` (:func:`identity`: the job's id, which log it is, the
device and the server when it was taken from the server, the device type, the dispatcher's
version).  With the records, that is the run's identity: what the log proves and what the
server says, never the user's word alone.  A run already stored from the same job by the
other route (the server's log from a file, then from the server) is found too
(:func:`_same_job`).  ``kcross import --lava-server URL --lava-job N`` takes the job, its log
and its results export from the server (:mod:`.server`).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcross.errors import SchemaError, UserError, clipped
from kcross.lab.initramfs import MARKER, ConsoleError, ConsoleReader
from kcross.lab.machines import COUNTING_RTC, Guest, arch
from kcross.lava.job import MONITOR, RESULT_LINE, Note, case_id, end_string, start_string
from kcross.lava.log import CONSOLE_LEVELS, JobLog, read_log
from kcross.lava.results import ExportCase, read_export, suite_cases
from kcross.lava.server import ServerJob
from kcross.schema import unit_of

SOURCE = "lava"   # runs.source (kcross.store.writing.RUN_SOURCES)


class LavaImportError(SchemaError):
    """The job's log cannot be stored as a run (one line; exit 2, nothing stored)."""


@dataclass(frozen=True)
class LavaImported:
    run_id: int
    results: int
    planned: int
    complete: bool
    job_id: str | None
    device_type: str
    counting: bool
    cases_checked: int            # LAVA test cases checked against the stored figures
    export_checked: int           # ... and the export's
    device: str | None = None     # the device that ran it, as the server says
    future: dt.datetime | None = None   # its start, when later than now (kcross.importer)


def _token(log: JobLog) -> str:
    prefix = f"{MARKER} "
    tokens = [s[len(prefix):].split(" ", 1)[0] for s in log.start_messages
              if s.startswith(prefix) and s.endswith(" begin 1")]
    if not tokens:
        raise LavaImportError(f"{log.name}: not a kcross job (no kcross monitor: 'kcross lava "
                              "job' makes one whose start is '@@kcross-lab TOKEN begin 1')")
    if len(set(tokens)) > 1:
        raise LavaImportError(f"{log.name}: {len(set(tokens))} kcross monitors with different "
                              "tokens: import one job's log")
    return tokens[0]


def _check_outcome(log: JobLog) -> None:
    outcome = log.job_result()
    if outcome is None:
        where = f" (line {log.cut_line} is cut mid-entry)" if log.cut_line else ""
        raise LavaImportError(f"{log.name}: the log is cut: it has no job result{where}; "
                              "fetch the whole log once the job has finished")
    result, error = outcome
    if result != "pass":
        errors = log.errors()
        why = error or (errors[-1] if errors else "no error message")
        raise LavaImportError(f"{log.name}: the LAVA job failed ({why}): nothing stored")


def _console(log: JobLog, token: str) -> tuple[list[Any], Note]:
    reader = ConsoleReader(token)
    try:
        for line in log.console():
            reader.line(line)
            if reader.notes and line.find(end_string(token)) >= 0:
                break
        results = reader.results()
    except ConsoleError as exc:
        raise LavaImportError(f"{log.name}: {exc}") from None
    notes = [n for n in (Note.parse(t) for t in reader.notes) if n is not None]
    if not notes:
        raise LavaImportError(f"{log.name}: no kcross note on the console (the job's "
                              "initramfs was not made by 'kcross lava job')")
    if not results:
        raise LavaImportError(f"{log.name}: the guest ran no command")
    return results, notes[0]


def _options(command: str) -> tuple[str, dict[str, str]]:
    """QEMU's program and its options with values, from LAVA's "Boot command"."""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    values: dict[str, str] = {}
    aliases = {"-M": "-machine"}
    for i, a in enumerate(argv[1:], 1):
        if a.startswith("-") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            values[aliases.get(a, a)] = argv[i + 1]
    return os.path.basename(argv[0]) if argv else "", values


def _network(command: str) -> str | None:
    """The network options of a QEMU command that gives the guest a card (LAVA's template
    without no_network), else None (-net none, -nic none)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    shown = [f"{a} {b}" for a, b in zip(argv, argv[1:], strict=False)
             if a in ("-net", "-nic", "-netdev") and b != "none"]
    shown += [f"-device {b}" for a, b in zip(argv, argv[1:], strict=False)
              if a == "-device" and ("net" in b.split(",")[0] or "nic" in b.split(",")[0])]
    return " ".join(shown) or None


def _lab_group(log: JobLog, note: Note) -> dict[str, Any]:
    """The note's lab group, checked against what LAVA ran; QEMU's version settled."""
    assert note.lab is not None
    group = dict(note.lab)
    command = log.boot_command
    if command is None:
        raise LavaImportError(f"{log.name}: no 'Boot command' line: not a LAVA qemu boot, so "
                              "not the lab's counting machine")
    program, values = _options(command)
    try:
        guest = Guest(arch(note.arch), Path("/"), append=str(group.get("append") or ""))
    except UserError as exc:
        raise LavaImportError(f"{log.name}: the job's note is not a lab's: {exc}") from None
    expected = {"-machine": group.get("machine"), "-cpu": group.get("cpu"),
                "-smp": str(group.get("smp")), "-icount": group.get("icount"),
                "-seed": str(group.get("seed")), "-rtc": COUNTING_RTC,
                "-append": guest.cmdline(), "-m": guest.memory}
    if program != group.get("emulator"):
        raise LavaImportError(f"{log.name}: LAVA ran {program or 'nothing'}, the job was made "
                              f"for {group.get('emulator')}: not the lab's machine; not stored")
    for option, want in expected.items():
        got = values.get(option, "1" if option == "-smp" else None)
        if got != want:
            raise LavaImportError(
                f"{log.name}: LAVA's QEMU ran with {option} {got if got is not None else '(none)'}"
                f", the job asked for {want}: its figures are not the lab's counts (the "
                "device's or the job's context differ from what 'kcross lava job' wrote); "
                "not stored")
    network = _network(command)
    if network is not None:
        group["network"] = network       # LAVA's NIC: not the lab's machine (kcross.lava.qemu)
    kernel = group.get("kernel")
    sha = log.downloads().get("kernel")
    if not isinstance(kernel, dict) or sha is None or sha != kernel.get("sha256"):
        raise LavaImportError(f"{log.name}: the kernel LAVA downloaded (SHA-256 "
                              f"{(sha or 'not logged')[:16]}...) is not the one the job was "
                              f"made with ({str((kernel or {}).get('sha256'))[:16]}...); "
                              "not stored")
    version = log.qemu_version
    if version is not None:
        package, v = version
        if package is None:
            group["emulator_version"] = v          # QEMU's own version, as the lab's
        elif v != note.emulator_package:
            group["emulator_version"] = f"qemu-system-{package} {v}"   # another QEMU
    else:
        group["emulator_version"] = None
    return group


def _when(log: JobLog, token: str, marker: str) -> dt.datetime | None:
    text = f"{MARKER} {token} {marker}"
    for e in log.entries:
        if e.get("lvl") in CONSOLE_LEVELS and isinstance(e.get("msg"), str) and text in e["msg"]:
            try:
                when = dt.datetime.fromisoformat(str(e.get("dt")))
            except ValueError:
                return None
            return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when
    return None


def _expected_result(record: dict[str, Any]) -> tuple[str, str | None]:
    """LAVA's result and figure (as the harness's line prints it) for a result record."""
    from kcross.stats import StatsError, summarize_record

    status = record["status"]
    if status != "ok":
        return ("skip" if status == "skipped" else "fail"), None
    try:
        return "pass", f"{summarize_record(record).median:.10g}"
    except StatsError:
        return "unknown", None


def _same_figure(given: str | None, want: str | None) -> bool:
    if want is None or given is None:
        return want is None and given is None
    try:
        figure = float(given)
    except ValueError:
        return False
    # A LAVA server keeps a measurement to 10 decimal places (a Decimal column):
    # below 0.1, the harness's 10 significant digits come back rounded there.
    return f"{figure:.10g}" == want or round(figure, 10) == round(float(want), 10)


def _case_of(record: dict[str, Any]) -> str:
    return case_id(record["suite"], record["name"])


def _line_of(record: dict[str, Any]) -> str:
    return f"{record['suite']}/{record['name']}"


def check_cases(results: Sequence[dict[str, Any]], cases: Sequence[tuple[str, str, str | None]],
                where: str, *, key: Callable[[dict[str, Any]], str] = _case_of,
                rows: str = f"test case(s) in suite {MONITOR}", row: str = "test case ") -> int:
    """LAVA's test cases ((case, result, measurement)) against the harness's result records:
    one per result, the same name, result and figure.  LavaImportError names the first
    difference; returns the number checked.  ``key``, ``rows`` and ``row``: how a record is
    named among ``cases`` and how they are called (the harness's console lines are named
    SUITE/NAME)."""
    by_case: dict[str, tuple[str, str | None]] = {}
    for name, result, measurement in cases:
        if name in by_case:
            raise LavaImportError(f"{where}: {row}{name} twice")
        by_case[name] = (result, measurement)
    wanted = {key(r): r for r in results}
    if len(wanted) != len(results):
        raise LavaImportError(f"{where}: two benchmarks have the same LAVA case name")
    missing = [c for c in wanted if c not in by_case]
    extra = [c for c in by_case if c not in wanted]
    if missing or extra:
        raise LavaImportError(
            f"{where}: {len(by_case)} {rows}, the harness reported {len(results)} result(s)"
            + (f"; missing: {', '.join(missing[:3])}" if missing else "")
            + (f"; not the harness's: {', '.join(extra[:3])}" if extra else "")
            + "; not stored")
    for name, record in wanted.items():
        result, measurement = by_case[name]
        want_result, want_figure = _expected_result(record)
        if result != want_result or not _same_figure(measurement, want_figure):
            raise LavaImportError(
                f"{where}: {row}{name} is {result} {measurement or ''}, the harness's "
                f"record says {want_result} {want_figure or ''}: they must agree; not stored")
    return len(wanted)


def result_lines(log: JobLog, token: str) -> list[tuple[str, str, str | None, str | None]]:
    """The harness's ``kcross-result`` lines on the console ((SUITE/NAME, result, figure,
    unit)), read as LAVA's monitor reads them (kcross.lava.job.RESULT_LINE, between its
    start and end strings): what LAVA's test cases were made from."""
    pattern = re.compile(RESULT_LINE)
    found = []
    inside = False
    for line in log.console():
        if not inside:
            inside = start_string(token) in line
            continue
        if end_string(token) in line:
            break
        match = pattern.search(line.rstrip("\r\n") + "\n")
        if match is not None:
            found.append((match["test_case_id"], match["result"], match["measurement"],
                          match["units"]))
    return found


def check_result_lines(results: Sequence[dict[str, Any]],
                       lines: Sequence[tuple[str, str, str | None, str | None]], unit: str,
                       where: str) -> int:
    """The harness's console lines against its records, as LAVA's test cases are checked
    (a line edited or removed after the job is found here, though LAVA's cases were made
    before): one per result, the same result, figure and unit."""
    checked = check_cases(results, [(name, result, figure) for name, result, figure, _ in lines],
                          where, key=_line_of, rows="line(s)", row="")
    for name, _, _, shown_unit in lines:
        if shown_unit is not None and shown_unit != unit:
            raise LavaImportError(f"{where}: {name} is in {shown_unit}, the harness's record "
                                  f"says {unit}: they must agree; not stored")
    return checked


def _export_job(export: Sequence[ExportCase], where: str) -> str | None:
    jobs = {c.job for c in export if c.job is not None}
    if len(jobs) > 1:
        raise LavaImportError(f"{where}: cases of {len(jobs)} jobs: give one job's export")
    return next(iter(jobs), None)


@dataclass(frozen=True)
class LavaImportRequest:
    """``kcross import`` of a LAVA job (kcross.cli.import builds it): a log file, or a job
    taken straight from its server."""

    file: Path | None = None        # the job's log (- : standard input); None with ``server``
    data: bytes | None = None       # the file's bytes, already read
    export: Path | None = None      # --lava-results: the server's results export, a file
    job_id: str | None = None       # --lava-job: the job's id (with a file: checked against it)
    server: str | None = None       # --lava-server: the server's URL (kcross.lava.server)
    force: bool = False

    def check(self) -> None:
        """The user's input, before anything is read or downloaded (one line, exit 2)."""
        from kcross.lava.server import check_job, check_server

        if self.server is not None:
            check_server(self.server)
            if self.file is not None:
                raise UserError("--lava-server takes the job's log from the server: give no "
                                "FILE with it")
            if self.job_id is None:
                raise UserError("--lava-server needs --lava-job N: the job to import")
            if self.export is not None:
                raise UserError("--lava-server takes the job's results from the server: no "
                                "--lava-results with it")
        elif self.file is None:
            raise UserError("give the job's log (FILE, or - for standard input), or the job "
                            "on its server: --lava-server URL --lava-job N")
        if self.job_id is not None:
            check_job(self.job_id)


def identity(log: JobLog, job_id: str | None, server: ServerJob | None,
             device_type: str) -> dict[str, Any]:
    """fingerprint.lava: what the log proves and what the server says, never what the user
    typed alone.  The job's id is the log's (the dispatcher's work directory); which log it
    is (lava-run's standard error, or a server's: the form of its lines); and, taken from
    the server, the device that ran it and the server's URL.  With the records, it tells one
    run from another: a lava-run log and a server's of one job definition are two runs."""
    return {"job_id": job_id, "device": server.device if server else None,
            "device_type": device_type, "dispatcher_version": log.dispatcher_version,
            "log": log.form, "server": server.server if server else None}


def _same_job(store_factory: Callable[[], Any], stream: Any, lava: dict[str, Any]) -> int | None:
    """A run already stored from the same LAVA job by another route: the same records, but
    for what only the server says (the device, its URL), known on one side and not the other
    (the server's log imported from a file, then from the server); or imported before
    kcross kept which log it was (issue 25), whatever device the user named then."""
    from kcross.store.writing import content_hash

    if lava["job_id"] is None:
        return None
    store = store_factory()
    try:
        stored = store.lava_job_runs(lava["job_id"])
    finally:
        store.close()
    for run in stored:
        if run.content_hash is None:
            continue
        if run.log is None:   # imported before issue 25: no log nor server kept; its device
            group = {k: v for k, v in lava.items() if k not in ("log", "server")}
            group["device"] = run.device      # was the user's word (--lava-device)
        else:
            said = {"device": run.device, "server": run.server}
            if any(lava[k] is not None and v is not None and lava[k] != v
                   for k, v in said.items()):
                continue
            group = {**lava, **said}
        fingerprint = {**stream.fingerprint, "lava": group}
        if content_hash([fingerprint, stream.plan, *stream.results, stream.end]) \
                == run.content_hash:
            return int(run.id)
    return None


def import_log(store_factory: Callable[[], Any], request: LavaImportRequest) -> LavaImported:
    """Check a kcross job's log (and export) as the module says, then store it; with
    ``request.server``, the job, its log and its results export taken from the server."""
    from kcross.importer import import_stream
    from kcross.lab.session import check_harness_status, lab_records
    from kcross.lava.results import export_of
    from kcross.lava.server import fetch_job
    from kcross.store import DuplicateImport

    request.check()
    server = None
    export: list[ExportCase] | None = None
    export_name = ""
    if request.server is not None:
        from kcross.lava.server import check_server

        assert request.job_id is not None
        server = fetch_job(check_server(request.server), request.job_id)
        log = read_log(Path(server.name), server.log)
        export_name = f"{server.name} (its results)"
        export = export_of(server.results, export_name)
    else:
        assert request.file is not None
        log = read_log(request.file, request.data)
        if request.export is not None:
            export_name = clipped(str(request.export))
            export = read_export(request.export)
    _check_outcome(log)
    token = _token(log)
    commands, note = _console(log, token)
    export_job = _export_job(export, export_name) if export is not None else None
    found = log.job_id
    for given, what in ((request.job_id, "--lava-job"), (export_job, "the results export")):
        if given is not None and found is not None and given != found:
            raise LavaImportError(f"{log.name}: {what} says job {given}, the log's job is "
                                  f"{found}")
        found = found or given
    if server is not None and server.device_type not in (None, note.device_type):
        raise LavaImportError(f"{log.name}: the server ran it on device type "
                              f"{server.device_type}, the job was made for {note.device_type}")
    counting = note.lab is not None
    group = _lab_group(log, note) if counting else None
    lava = identity(log, found, server, note.device_type)
    where = f"{log.name} (console)"
    try:
        stream, _records, messages = lab_records(commands[0], group, where,
                                                 fingerprint_extra={"lava": lava})
    except (ConsoleError, SchemaError) as exc:
        raise LavaImportError(str(exc)) from None
    check_harness_status(commands[0], messages, note.arch)
    if stream.fingerprint is None or stream.plan is None:
        raise LavaImportError(f"{log.name}: the harness printed no fingerprint and plan "
                              f"(status {commands[0].status})")
    check_result_lines(stream.results, result_lines(log, token),
                       unit_of(stream.fingerprint, stream.results),
                       f"{log.name} (the harness's kcross-result lines)")
    checked = check_cases(stream.results,
                          [(c.case, c.result, c.measurement) for c in log.cases(MONITOR)],
                          f"{log.name} (LAVA's results)")
    export_checked = 0
    if export is not None:
        export_checked = check_cases(
            stream.results, [(c.name, c.result, c.measurement)
                             for c in suite_cases(list(export), MONITOR)],
            f"{export_name} (the results export)")
    if not request.force:
        same = _same_job(store_factory, stream, lava)
        if same is not None:
            raise UserError(f"{log.name}: already stored: run {same} (imported from a LAVA "
                            "job) holds the same records; use --force to store it again")
    command = ["import", "--lava-server", server.server, "--lava-job", server.job_id] \
        if server is not None else ["import", str(request.file)]
    try:
        done = import_stream(store_factory, stream, command=command, source=SOURCE,
                             force=request.force, name=log.name,
                             started_at=_when(log, token, "begin 1"),
                             finished_at=_when(log, token, "done"))
    except DuplicateImport as exc:
        raise UserError(f"{log.name}: {exc}") from None
    return LavaImported(run_id=done.run_id, results=done.results, planned=done.planned,
                        complete=done.complete, job_id=found, device_type=note.device_type,
                        counting=counting, cases_checked=checked,
                        export_checked=export_checked, device=lava["device"],
                        future=done.future)
