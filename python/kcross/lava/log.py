"""A LAVA job's log, read back (issue 17).

Two forms, one entry per line: ``lava-run``'s standard output (one YAML flow mapping per
line, ``{"dt": ..., "lvl": ..., "msg": ...}``) and the log a LAVA server serves for a job
(``lavacli jobs logs N --raw``, ``/scheduler/job/N/log_file``: a YAML list of the same
mappings, ``- {...}`` per line).  Both are written by LAVA's YAML dumper (double-quoted
scalars, whose escapes are YAML's, not JSON's), so each line is read with a YAML parser.

Which form a log has is kept (:attr:`JobLog.form`): it is part of the run's identity (a
job run by ``lava-run`` and a server's job of the same definition are two runs).

What :class:`JobLog` takes from them: the console (``target`` and ``feedback`` lines), the
dispatcher's own lines that say what ran (the monitor's start string, the QEMU command, the
QEMU package's version, each downloaded image's SHA-256 whatever the URL's scheme, the job's
id in the dispatcher's work paths), the test cases LAVA recorded (``results`` lines) and the
job's outcome.

LAVA 2023.01's console logger (lava_dispatcher/shell.py, ShellLogger) writes every ``"``
of the console as ``\\"`` and drops ``\\r``; later versions write the line as it came.
:meth:`JobLog.console` undoes the escape when the log has it (a JSON record line then
starts ``{\\"``): every ``"`` of such a line was preceded by the backslash LAVA added.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcross import infile
from kcross.errors import UserError

_START = re.compile(r"^Waiting for start message: (.*)$")
_QEMU_VERSION = re.compile(r"^qemu(?:-system-([^\s,]+))?, installed at version: ([^\s,]+)")
_DISPATCHER = re.compile(r"^lava-dispatcher, installed at version: (\S+)")
_BOOT = re.compile(r"^Boot command: (.*)$")
# The dispatcher's work directory holds the job's id: .../tmp/<job id>/deployimages-...
_JOB_DIR = re.compile(r"/tmp/(\d+(?:\.\d+)?)/")
# The download actions' test cases, each with ``extra: {label, sha256sum, ...}``, by the
# URL's scheme (lava_dispatcher/actions/deploy/download.py): file://, http:// and https://,
# scp://, lxc://.
DOWNLOAD_CASES = ("file-download", "http-download", "scp-download", "lxc-download")
# The log's two forms: lava-run's standard error (one mapping a line) and a server's log
# (lavacli jobs logs N --raw, the REST API's /jobs/N/logs/: a YAML list, "- " a line).
LAVA_RUN, SERVER = "lava-run", "server"


class LogError(UserError):
    """The file is not a usable LAVA job log (one line)."""


def looks_like_log(first_line: str) -> bool:
    """Whether a file whose first non-blank line is this is a LAVA job log."""
    line = first_line.strip()
    if line.startswith("- "):
        line = line[2:].lstrip()
    return line.startswith('{"dt"') or line.startswith("{dt:")


@dataclass
class Case:
    """One test case LAVA recorded (a ``results`` line)."""

    definition: str
    case: str
    result: str
    measurement: str | None
    units: str | None
    raw: dict[str, Any] = field(default_factory=dict)


# The levels of the console's lines.  LAVA's ShellLogger logs whole lines only: when a monitor's
# end string matches before the line's newline is read, the rest is logged later, after the
# monitor stopped, as ``feedback`` (LAVA still passes the job; 2 of 18 jobs on a real server).
CONSOLE_LEVELS = ("target", "feedback")


@dataclass
class JobLog:
    """What a job's log says (:func:`read_log`)."""

    name: str
    entries: list[dict[str, Any]]
    cut_line: int | None = None            # a last line cut mid-entry (dropped)
    form: str = LAVA_RUN                   # LAVA_RUN or SERVER: how its lines are written

    def _messages(self, *levels: str) -> Iterable[str]:
        for e in self.entries:
            if e.get("lvl") in levels and isinstance(e.get("msg"), str):
                yield e["msg"]

    def _first(self, pattern: re.Pattern[str], level: str | None = None) -> re.Match[str] | None:
        for e in self.entries:
            msg = e.get("msg")
            if isinstance(msg, str) and (level is None or e.get("lvl") == level) \
                    and e.get("lvl") not in CONSOLE_LEVELS:
                m = pattern.match(msg)
                if m:
                    return m
        return None

    @property
    def start_messages(self) -> list[str]:
        """The monitors' start strings, as the dispatcher logged them."""
        out = []
        for msg in self._messages("info"):
            m = _START.match(msg)
            if m:
                out.append(m.group(1))
        return out

    @property
    def dispatcher_version(self) -> str | None:
        m = self._first(_DISPATCHER)
        return m.group(1) if m else None

    @property
    def boot_command(self) -> str | None:
        m = self._first(_BOOT)
        return m.group(1) if m else None

    @property
    def qemu_version(self) -> tuple[str | None, str] | None:
        """(the package suffix or None, the version) of "qemu-system-X, installed at
        version: V" (a Debian package's version) or "qemu, installed at version: V"
        (QEMU's own, when LAVA found no package)."""
        m = self._first(_QEMU_VERSION)
        return (m.group(1), m.group(2)) if m else None

    @property
    def job_id(self) -> str | None:
        """The job's id, from the dispatcher's work directory (``.../tmp/<id>/``)."""
        for msg in self._messages("debug"):
            if msg.startswith("saving as "):
                m = _JOB_DIR.search(msg)
                if m:
                    return m.group(1)
        return None

    def downloads(self) -> dict[str, str]:
        """{image label: SHA-256} of the images LAVA downloaded, whatever the URL's scheme."""
        out: dict[str, str] = {}
        for e in self.entries:
            msg = e.get("msg")
            if e.get("lvl") == "results" and isinstance(msg, dict) \
                    and msg.get("case") in DOWNLOAD_CASES:
                extra = msg.get("extra")
                if isinstance(extra, dict) and isinstance(extra.get("label"), str):
                    out[extra["label"]] = str(extra.get("sha256sum"))
        return out

    def cases(self, definition: str) -> list[Case]:
        """The test cases LAVA recorded for the test suite ``definition``."""
        out = []
        for e in self.entries:
            msg = e.get("msg")
            if e.get("lvl") == "results" and isinstance(msg, dict) \
                    and msg.get("definition") == definition:
                m, u = msg.get("measurement"), msg.get("units")
                out.append(Case(definition, str(msg.get("case")), str(msg.get("result")),
                                None if m is None else str(m), None if u is None else str(u),
                                msg))
        return out

    def job_result(self) -> tuple[str, str | None] | None:
        """("pass"/"fail", the error) of the job, or None when the log has no end."""
        for e in reversed(self.entries):
            msg = e.get("msg")
            if e.get("lvl") == "results" and isinstance(msg, dict) \
                    and msg.get("definition") == "lava" and msg.get("case") == "job":
                error = msg.get("error_msg")
                return str(msg.get("result")), None if error is None else str(error)
        return None

    def errors(self) -> list[str]:
        return [m for m in self._messages("error")]

    def console(self) -> list[str]:
        """The console's lines (``target`` and ``feedback`` entries, in the log's order),
        LAVA 2023.01's quote escape undone."""
        lines = list(self._messages(*CONSOLE_LEVELS))
        if any(line.lstrip().startswith('{\\"') for line in lines):
            lines = [line.replace('\\"', '"') for line in lines]
        return lines


def _entry(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)


def read_log(path: Path, data: bytes | None = None) -> JobLog:
    """The entries of a job's log (``-``: standard input; ``data``: its bytes, already
    read).  LogError (one line) for a file that is not one; a last line cut mid-entry is
    dropped (:attr:`JobLog.cut_line`)."""
    import yaml

    name, data = infile.read(path, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LogError(f"{name}: not UTF-8 text (not a LAVA job log)") from None
    lines = text.split("\n")
    last = max((i for i, x in enumerate(lines) if x.strip()), default=-1)
    entries: list[dict[str, Any]] = []
    cut: int | None = None
    form: str | None = None
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if form is None:
            form = SERVER if line.startswith("- ") else LAVA_RUN
        if line.startswith("- "):
            line = line[2:]
        try:
            entry = _entry(line)
        except yaml.YAMLError:
            entry = None
        if not (isinstance(entry, dict) and "lvl" in entry and "msg" in entry):
            if index == last and entries:
                cut = index + 1
                break
            raise LogError(f"{name} line {index + 1}: not a LAVA log entry "
                           "({dt, lvl, msg}); give the job's log (lava-run's output, or "
                           "lavacli jobs logs N --raw)")
        entries.append(entry)
    if not entries:
        raise LogError(f"{name}: empty: no LAVA log entries")
    return JobLog(name=name, entries=entries, cut_line=cut, form=form or LAVA_RUN)

