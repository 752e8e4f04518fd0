"""The lab guest's payload: a reproducible initramfs around kcross-lab-init, and its console's parser.

The guest's /init is ``lab/init.c`` (built as the static ``kcross-lab-init``).  It runs the
commands of ``/lab/plan`` and frames each one's output on the console with marker lines
that carry the boot's token (TOKEN below)::

    @@kcross-lab TOKEN start commands=2 uptime=5.83 waited=0.00
    @@kcross-lab TOKEN begin 1 /bin/hello a b
    ...output...
    @@kcross-lab TOKEN end 1 status=0      (an exit code, SIGNAME, or "timeout")
    @@kcross-lab TOKEN note TEXT           (/lab/note's first line, unless empty)
    @@kcross-lab TOKEN done

or prints one ``@@kcross-lab TOKEN error WHAT: WHY`` line when it cannot go on; then it
powers off.  The token (:func:`new_token`: TOKEN_LENGTH random hex digits, drawn per boot) is
packed as ``/lab/token``, which /init reads and unlinks before the first command:
:func:`parse_console` takes only the marker lines with the token it is given, so a guest
program that prints a marker line cannot end its command or forge a result (the line is its
output).  Its length is fixed: counting boots print as many characters whatever its digits,
and stay identical boot to boot.  :func:`build_initramfs` writes the archive (newc cpio,
written here: sorted entries, uid/gid 0, mtime 0, inode numbers in path order, so two builds
with the same token give the same bytes); :func:`parse_console` reads the console back.

A plan command is a list of tokens: leading ``NAME=VALUE`` tokens are its environment (as
``env`` takes them), ``timeout=SECONDS`` its time limit (default 600 s); then an absolute
program path (there is no PATH search and no shell) and its arguments, none containing
whitespace (:func:`plan_command` builds one).
"""

from __future__ import annotations

import gzip
import math
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kcross.errors import EXIT_BROKEN, KcrossError, UserError
from kcross.outfile import replaced

INIT_PATH = "/init"
PLAN_PATH = "/lab/plan"
TOKEN_PATH = "/lab/token"
# Printed by /init as a `note` marker after the last command (a LAVA job's description:
# kcross.lava.job).  Every initramfs has it, padded to lab/init.c's LAB_MAX_NOTE bytes
# (empty: no marker), so that every boot's file system and /init's work are the same
# whatever the note says (a file more or less moves the count of a path lookup).
NOTE_PATH = "/lab/note"
MAX_NOTE_BYTES = 3072
TOKEN_LENGTH = 16           # hex digits: lab/init.c's LAB_TOKEN_LEN
MARKER = "@@kcross-lab"
# lab/init.c's limits: LAB_MAX_ARGS tokens per line, LAB_MAX_PLAN bytes of plan (exclusive).
MAX_TOKENS = 128
MAX_PLAN_BYTES = 256 * 1024 - 1
# Mounted over by /init: a file packed there would be hidden.
MOUNT_POINTS = ("/dev", "/proc", "/sys")
CONSOLE_TAIL = 5            # lines of console quoted when the guest did not finish

Source = Path | bytes
FileSpec = Source | tuple[Source, int]


class ConsoleError(KcrossError):
    """The guest did not run its plan to the end, or its console is unreadable (one line)."""

    exit_code = EXIT_BROKEN


# ---------------------------------------------------------------- the plan

def _is_assignment(token: str) -> bool:
    """As lab/init.c's is_assignment(): NAME=VALUE, not a path."""
    return token.find("=") > 0 and not token.startswith("/")


def plan_command(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 timeout: float | None = None) -> list[str]:
    """One plan command: ``timeout=`` and ``NAME=VALUE`` tokens, then ``argv``."""
    tokens = [] if timeout is None else [f"timeout={timeout:g}"]
    tokens += [f"{name}={value}" for name, value in (env or {}).items()]
    return tokens + list(argv)


def _check_command(number: int, command: Sequence[str]) -> str:
    where = f"plan command {number}"
    if isinstance(command, str | bytes):
        raise UserError(f"{where}: a list of tokens, not the string {command!r}")
    tokens = list(command)
    if len(tokens) > MAX_TOKENS:
        raise UserError(f"{where}: {len(tokens)} tokens, /init takes at most {MAX_TOKENS}")
    for token in tokens:
        if not isinstance(token, str) or not token or any(c.isspace() or c == "\0" for c in token):
            raise UserError(f"{where}: token {token!r} is empty or holds whitespace "
                            "(the plan has no quoting)")
    program = next((t for t in tokens if not _is_assignment(t)), None)
    if program is None:
        raise UserError(f"{where}: no program to run in {tokens}")
    if not program.startswith("/"):
        raise UserError(f"{where}: program {program!r} is not an absolute path "
                        "(/init neither searches PATH nor runs a shell)")
    for token in tokens[:tokens.index(program)]:
        if token.startswith("timeout="):
            try:
                seconds = float(token[len("timeout="):])
            except ValueError:
                seconds = math.nan
            if not seconds > 0 or math.isinf(seconds):
                raise UserError(f"{where}: {token!r} is not a positive number of seconds")
    return " ".join(tokens)


def format_plan(plan: Sequence[Sequence[str]]) -> str:
    """The text of /lab/plan: one checked command per line."""
    text = "".join(_check_command(n, command) + "\n" for n, command in enumerate(plan, 1))
    if len(text.encode()) > MAX_PLAN_BYTES:
        raise UserError(f"the plan is {len(text.encode())} bytes, /init reads at most {MAX_PLAN_BYTES}")
    return text


# ---------------------------------------------------------------- the token

def new_token() -> str:
    """A boot's token: TOKEN_LENGTH random lowercase hex digits."""
    return secrets.token_hex(TOKEN_LENGTH // 2)


def _check_token(token: str) -> str:
    if not isinstance(token, str) or not re.fullmatch(f"[0-9a-f]{{{TOKEN_LENGTH}}}", token):
        raise UserError(f"a boot's token is {TOKEN_LENGTH} lowercase hex digits, not {token!r}")
    return token


# ---------------------------------------------------------------- the archive

def _guest_name(path: str) -> str:
    """A guest path's name in the archive ("/lab/plan" -> "lab/plan"), checked."""
    parts = path.split("/")
    if (not path.startswith("/") or path == "/" or any(p in ("", ".", "..") for p in parts[1:])
            or "\0" in path or "\n" in path):
        raise UserError(f"initramfs: {path!r} is not a normalized absolute guest path")
    return path[1:]


def _load(path: str, spec: FileSpec) -> tuple[bytes, int]:
    source, mode = spec if isinstance(spec, tuple) else (spec, None)
    if isinstance(source, bytes):
        data = source
        default = 0o644
    else:
        try:
            data = Path(source).read_bytes()
            # Only the execute bit of the host file counts: umask and owner must not.
            default = 0o755 if os.stat(source).st_mode & 0o111 else 0o644
        except OSError as e:
            raise UserError(f"initramfs: {path}: cannot read {source}: {e.strerror}") from None
    if mode is None:
        mode = default
    if not 0 <= mode <= 0o7777:
        raise UserError(f"initramfs: {path}: mode {mode:#o} is not permission bits")
    return data, mode


def _header(ino: int, mode: int, nlink: int, size: int, name: str) -> bytes:
    encoded = name.encode() + b"\0"
    fields = (ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(encoded), 0)
    # magic, ino, mode, uid, gid, nlink, mtime, filesize, dev maj/min, rdev maj/min, namesize, check
    head = b"070701" + b"".join(b"%08X" % f for f in fields) + encoded
    return head + b"\0" * (-len(head) % 4)


def note_bytes(note: str) -> bytes:
    """/lab/note's content: ``note`` (one line) padded to MAX_NOTE_BYTES."""
    data = note.encode()
    if "\n" in note or "\0" in note or len(data) >= MAX_NOTE_BYTES:
        raise UserError(f"a boot's note is one line of under {MAX_NOTE_BYTES} bytes")
    return data + b"\n" + b" " * (MAX_NOTE_BYTES - len(data) - 1)


def initramfs_bytes(init: Path, files: Mapping[str, FileSpec],
                    plan: Sequence[Sequence[str]], token: str, note: str = "") -> bytes:
    """The uncompressed newc archive :func:`build_initramfs` writes."""
    regular: dict[str, tuple[bytes, int]] = {
        _guest_name(INIT_PATH): _load(INIT_PATH, (init, 0o755)),
        _guest_name(PLAN_PATH): (format_plan(plan).encode(), 0o644),
        _guest_name(TOKEN_PATH): (_check_token(token).encode(), 0o600),
        _guest_name(NOTE_PATH): (note_bytes(note), 0o644),
    }
    for path, spec in files.items():
        name = _guest_name(path)
        if name in regular:
            raise UserError(f"initramfs: {path} is /init's own (or given twice)")
        if any(path == m or path.startswith(m + "/") for m in MOUNT_POINTS):
            raise UserError(f"initramfs: {path} would be hidden: /init mounts over "
                            + ", ".join(MOUNT_POINTS))
        regular[name] = _load(path, spec)
    dirs = {name.rsplit("/", i)[0] for name in regular for i in range(1, name.count("/") + 1)}
    clash = sorted(dirs & regular.keys())
    if clash:
        raise UserError(f"initramfs: /{clash[0]} is both a file and a directory")

    out = bytearray()
    names = sorted(dirs | regular.keys(), key=lambda n: n.split("/"))  # parents first
    for ino, name in enumerate(names, 1):
        if name in dirs:
            subdirs = sum(1 for d in dirs if d.rpartition("/")[0] == name and d != name)
            out += _header(ino, 0o040755, 2 + subdirs, 0, name)
        else:
            data, mode = regular[name]
            out += _header(ino, 0o100000 | mode, 1, len(data), name)
            out += data + b"\0" * (-len(data) % 4)
    out += _header(0, 0, 1, 0, "TRAILER!!!")
    return bytes(out)


def build_initramfs(init: Path, files: Mapping[str, FileSpec], plan: Sequence[Sequence[str]],
                    out: Path, *, token: str, compress: bool = False, note: str = "") -> None:
    """Write the guest's initramfs to ``out``: ``init`` as /init, ``plan`` as /lab/plan,
    ``token`` (:func:`new_token`) as /lab/token, and ``files`` ({guest path: host file, bytes,
    or (either, mode)}) with the directories they need.  A host file's mode is 0755 if it is
    executable, else 0644; bytes are 0644.  ``compress``: gzip it (mtime 0: still
    reproducible); QEMU's -initrd takes either.  ``note``: /lab/note's line (:func:`note_bytes`)."""
    data = initramfs_bytes(init, files, plan, token, note)
    if compress:
        data = gzip.compress(data, compresslevel=9, mtime=0)
    try:
        with replaced(out) as tmp:
            tmp.write_bytes(data)
    except OSError as e:
        raise UserError(f"initramfs: cannot write {out}: {e.strerror}") from None


# ---------------------------------------------------------------- the console

@dataclass(frozen=True)
class CommandResult:
    """One plan command as the console showed it."""

    number: int
    command: str            # the plan line's tokens joined by one space
    status: str             # "0".."255", "SIGSEGV"..., or "timeout"
    output: list[str]       # its lines, kernel log lines removed

    @property
    def exit_code(self) -> int | None:
        return int(self.status) if self.status.isdigit() else None

    @property
    def signal(self) -> str | None:
        return self.status if self.status.startswith("SIG") else None

    @property
    def timed_out(self) -> bool:
        return self.status == "timeout"

    @property
    def ok(self) -> bool:
        return self.status == "0"


# A kernel log line: "[    1.234567] ..." (printk time), optionally "<6>" first.
_KERNEL_LINE = re.compile(r"^\s*(<\d+>)?\[\s*\d+\.\d+\]")
def _marker(token: str) -> re.Pattern[str]:
    """A marker line of the boot whose token is ``token`` (none other)."""
    return re.compile(re.escape(f"{MARKER} {_check_token(token)}")
                      + r" (start|begin|end|note|done|error)\b(.*)$")


_BEGIN = re.compile(r" ([1-9]\d*) (.*)$")
_END = re.compile(r" ([1-9]\d*) status=(\d+|SIG[A-Z0-9+-]+|timeout)$")


def _tail(lines: list[str]) -> str:
    shown = [line.strip()[:200] for line in lines if line.strip()][-CONSOLE_TAIL:]
    return " | ".join(shown) if shown else "(the console is empty)"


class ConsoleReader:
    """The console of a boot whose token is ``token``, read line by line as it arrives
    (:meth:`line`, which returns each command's result as its end marker comes), or whole
    (:func:`parse_console`).

    Marker lines are found anywhere in a line (a command's unterminated last line may
    precede one); only those with ``token`` are markers (any other is a command's output);
    kernel log lines that start a line are dropped.  :class:`ConsoleError` (one line) when
    /init reported an error, a marker is out of order, or (:meth:`results`) there was no
    ``done`` line (a kernel panic, a crash, a timeout: the message quotes the console's last
    lines)."""

    def __init__(self, token: str) -> None:
        self._mark = _marker(token)
        self._results: list[CommandResult] = []
        self._running: tuple[int, str, list[str]] | None = None
        self._done = False
        self._tail: list[str] = []
        self.notes: list[str] = []      # the `note` markers' text (/lab/note)

    @property
    def running(self) -> int | None:
        """The number of the command running now, if any."""
        return self._running[0] if self._running else None

    def line(self, line: str) -> CommandResult | None:
        """Read one console line (its newline removed); a command's result when it ends."""
        line = line.rstrip("\r")
        if self._done:
            return None
        if line.strip():
            self._tail = (self._tail + [line])[-CONSOLE_TAIL:]
        if _KERNEL_LINE.match(line):
            return None
        mark = self._mark.search(line)
        running = self._running
        if mark is None:
            if running is not None:
                running[2].append(line)
            return None
        if mark.start() > 0 and running is not None:
            running[2].append(line[:mark.start()])
        kind, rest = mark.groups()
        if kind == "error":
            raise ConsoleError(f"the guest's /init failed:{rest}")
        if kind == "start":
            return None
        if kind == "note" and running is None:
            self.notes.append(rest.strip())
            return None
        if running is not None and kind != "end":
            raise ConsoleError(f"console: '{kind}' while command {running[0]} ({running[1]}) runs")
        if kind == "done":
            self._done = True
            return None
        expected = len(self._results) + 1
        if kind == "begin":
            begin = _BEGIN.fullmatch(rest)
            if begin is None or int(begin[1]) != expected:
                raise ConsoleError(f"console: unexpected marker line (command {expected} next): "
                                   f"{line.strip()[:200]}")
            self._running = (expected, begin[2], [])
            return None
        end = _END.fullmatch(rest)
        if running is None or end is None or int(end[1]) != running[0]:
            raise ConsoleError(f"console: unexpected marker line: {line.strip()[:200]}")
        result = CommandResult(running[0], running[1], end[2], running[2])
        self._results.append(result)
        self._running = None
        return result

    def results(self) -> list[CommandResult]:
        """Every command's result, once the console is read to its ``done`` line."""
        if not self._done:
            where = (f"command {self._running[0]} ({self._running[1]}) was running"
                     if self._running else f"{len(self._results)} command(s) had ended")
            raise ConsoleError(f"the guest never finished its plan (no '{MARKER} done': a "
                               f"kernel panic, a crash or a timeout; {where}); last lines: "
                               f"{_tail(self._tail)}")
        return list(self._results)


def parse_console(text: str, token: str) -> list[CommandResult]:
    """The plan's results from a guest's whole console output (:class:`ConsoleReader`)."""
    reader = ConsoleReader(token)
    for line in text.split("\n"):
        reader.line(line)
    return reader.results()
