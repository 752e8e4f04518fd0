"""``kcross run --remote ssh://[user@]host[:port]``: run the harness on another machine over ssh.

For each host, with the system's ``ssh`` (``BatchMode=yes``: a key or an
agent, never a password prompt; ``ConnectTimeout``), over one connection: the
first ``ssh`` becomes the master of OpenSSH's connection multiplexing
(``ControlMaster=auto``, its socket in a private directory kcross makes and
removes, ``ControlPersist`` short so that a killed kcross leaves no master
behind for long), every later one a session on that connection, and the
master is told to exit (``ssh -O exit``) when the run ends, however it ends.
The user's own ``-o`` options come first and win (``-o ControlMaster=no``:
one connection per ``ssh``, as before).

1. the first session asks ``uname -m`` and refuses, in one line and before
   anything is copied, a host of another architecture than the static harness
   (:func:`kcross.run.harness.locate`'s; a harness that is not static is refused
   before connecting: the remote's C library is unknown); unless ``--no-readiness``,
   prints what the readiness checks read there (:func:`kcross.run.readiness.gather_script`),
   judged here by the same checks as a local run's, the same line printed when
   the harness starts (naming the host); then makes a
   temporary directory there (``mktemp -d`` under the remote's ``$TMPDIR``,
   else /tmp) and copies the harness into it through ssh's standard input;
2. a session per harness process runs ``kcross-harness run --json`` there (the same
   process tree as a local run: see 3.);
3. the harness gets the options a local run forwards
   (and the harness's own environment variables, kcross.forcings.USER_SET:
   KCROSS_SYSCALL, KCROSS_RSEQ..., when set here), its
   standard output read through the same path as a local run (:func:`kcross.run.runner.run`): each
   result stored as it arrives, Ctrl-C and a lost connection handled alike,
   the table printed as for a local run.  The stored run has the remote
   machine's fingerprint (the harness measured there), ``runs.source`` is
   ``remote``, and ``runs.command`` is ``["run", "--remote", URL, ...the rest
   of the command]`` with the URL as :attr:`Host.url` writes it;
4. a last session removes the temporary directory (stopping the harness
   first if it still runs there), whatever ended the run, Ctrl-C included.

Several ``--remote`` options run in parallel, one ``kcross run --remote URL``
child process per host (each with its own run, store connection and signal
handling); their progress lines are relayed live prefixed with the host,
their tables (or JSON lines) printed whole per host as each finishes, and
the exit status is the worst of theirs.  A host that fails (unreachable, key
refused, wrong architecture, harness crash) is one line; the others still land.
One host given twice (the same user@host:port as ``ssh -G`` resolves it: an
alias, ``-o HostName=...``, the defaults spelt out) is refused before anything
connects: both runs would measure on one machine at once.

A harness given as a ``.py`` file (the tests' stand-in, see
:func:`kcross.run.harness.locate`) is copied alike and run with the remote's
``python3``; only an ELF harness is checked for being static and its architecture.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich.console import Console

from .. import forcings
from ..errors import (
    EXIT_USAGE,
    PATH_ECHO_MAX,
    HarnessError,
    Interrupted,
    KcrossError,
    SchemaError,
    StoreError,
    UserError,
    exit_for_signal,
    shown,
    stop_signals_held,
)
from ..views.lines import say
from .harness import HARNESS_NAME, STOP_SIGNALS

if TYPE_CHECKING:
    from ..store import Store
    from .runner import RunRequest

SCHEME = "ssh://"
CONNECT_TIMEOUT_S = 10
# Whole commands: connecting plus what they do (copying a harness of a few MB).
UPLOAD_TIMEOUT_S = CONNECT_TIMEOUT_S + 120
CLEANUP_TIMEOUT_S = CONNECT_TIMEOUT_S + 20
# After the user's own -o options: for ssh the first value given for an option wins.
SSH_DEFAULTS = ("BatchMode=yes", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                "ServerAliveInterval=15", "ServerAliveCountMax=4", "LogLevel=ERROR")
# What the harness reads from its environment (docs/commands.md, "Environment"; the
# settings a user gives, kcross.forcings): a local run passes them on by inheritance, a
# remote one explicitly.
HARNESS_ENV = forcings.USER_SET
TMP_PREFIX = "kcross-remote."
# Connection multiplexing: how long the master outlives its last session (the gap
# between two harness processes is far shorter; a kcross killed with SIGKILL leaves
# its master this long), and the longest socket path: sun_path holds 108 bytes and
# ssh binds a name 17 characters longer first.
CONTROL_PERSIST_S = 30
CONTROL_PATH_MAX = 108 - 1 - 17
HOST_MAX = 253  # the longest DNS name


class RemoteError(KcrossError):
    """A host cannot run the harness: unreachable, key refused, wrong architecture,
    no room for the copy.  One line naming the host; exit status 2 (like bad input:
    nothing was measured)."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class RemoteRequest:
    """What ``kcross run --remote`` runs, and where.

    ``run`` is the run each host makes, as a local run's request says it (the options
    forwarded to the harness, ``kcross run``'s command line, where the results go); its
    ``harness`` is left empty: each host's is the copy made there, and its ``command``
    becomes the host's (:func:`recorded_command`)."""

    hosts: tuple[str, ...]              # the --remote URLs, as given
    ssh_options: tuple[str, ...]        # -o OPTION, each given to ssh first
    harness: str | None                 # --harness: the static harness to copy there
    check: bool                         # the readiness checks there (not --no-readiness)
    cpu: int | None                     # --cpu: the measuring CPU the checks judge
    run: RunRequest


# --- hosts -------------------------------------------------------------------------

@dataclass(frozen=True)
class Host:
    """One ``--remote`` target."""

    user: str | None
    host: str
    port: int | None

    @property
    def url(self) -> str:
        """``ssh://[user@]host[:port]``: how the host is shown and recorded (no secrets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port is not None else ""
        return f"{SCHEME}{user}{host}{port}"


def parse_host(text: str) -> Host:
    """``ssh://[user@]host[:port]`` (IPv6 in brackets); one line on anything else."""
    said = f"--remote {shown(text, PATH_ECHO_MAX)}"
    if not text.startswith(SCHEME):
        raise UserError(f"{said}: expected ssh://[USER@]HOST[:PORT]")
    parts = urlsplit(text)
    if parts.password is not None:
        raise UserError(f"--remote {SCHEME}...: a password in the URL is refused (ssh runs "
                        "with BatchMode=yes: use a key or an agent)")
    try:
        port = parts.port
    except ValueError:
        raise UserError(f"{said}: the port must be a number from 1 to 65535") from None
    if port == 0:
        raise UserError(f"{said}: the port must be a number from 1 to 65535")
    host = parts.hostname
    if not host or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise UserError(f"{said}: expected ssh://[USER@]HOST[:PORT] (no path)")
    if host.startswith("-") or (parts.username or "").startswith("-"):
        raise UserError(f"{said}: a host or user may not start with '-'")
    if len(host) > HOST_MAX or len(parts.username or "") > HOST_MAX:
        raise UserError(f"{said}: a host name has at most {HOST_MAX} characters (and a user "
                        "name no more)")
    # urlsplit lowercases the host; the user name is case-sensitive and kept.
    return Host(user=parts.username or None, host=host, port=port)


def ssh_command(host: Host, options: Sequence[str], remote: Sequence[str],
                flags: Sequence[str] = ()) -> list[str]:
    """The ``ssh`` argv that runs ``remote`` (words joined by ssh, read by the remote shell).

    ``setsid`` puts ssh in a session of its own, so a Ctrl-C at the terminal
    reaches kcross only, which then stops ssh itself: the run is marked
    interrupted and the remote directory removed in order, never raced.
    ``flags`` go to ssh itself (``-G``).
    """
    argv = ["setsid"] if shutil.which("setsid") else []
    argv += ["ssh", *flags]
    for option in (*options, *SSH_DEFAULTS):
        argv += ["-o", option]
    if host.port is not None:
        argv += ["-p", str(host.port)]
    if host.user:
        argv += ["-l", host.user]
    return [*argv, "--", host.host, *remote]


def destination(host: Host, options: Sequence[str]) -> tuple[str, str, int]:
    """Where ssh would log in for ``host``: (user, hostname, port) after the user's ssh
    configuration and ``-o`` options (``ssh -G``: an alias, ``HostName``, ``User`` and
    ``Port`` resolved, nothing connected to); from the URL alone (the local user, port 22)
    when ``ssh -G`` cannot say."""
    try:
        proc = subprocess.run(ssh_command(host, options, [], flags=["-G"]),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=CONNECT_TIMEOUT_S)
        said = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
        if proc.returncode == 0 and {"user", "hostname", "port"} <= said.keys():
            return said["user"], said["hostname"].lower(), int(said["port"])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    import getpass

    return host.user or getpass.getuser(), host.host.lower(), host.port or 22


def refuse_the_same_host_twice(hosts: Sequence[Host], options: Sequence[str]) -> None:
    """Two ``--remote`` that log in to the same user@host:port would measure on one machine
    at overlapping times, on the same pinned CPU, and store both: one line instead."""
    seen: dict[tuple[str, str, int], Host] = {}
    for host in hosts if len(hosts) > 1 else ():
        where = destination(host, options)
        first = seen.setdefault(where, host)
        if first is not host:
            user, hostname, port = where
            same = "given twice" if first == host else \
                f"and --remote {first.url} are the same host"
            raise UserError(f"--remote {host.url} {same} ({user}@{hostname}:{port}): both "
                            "runs would measure on it at once, on the same pinned CPU; give "
                            "each host once")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- the harness binary --------------------------------------------------------------

# ELF e_machine -> uname -m values that run it; keyed also by (64-bit, little-endian).
_EM_X86_64, _EM_386, _EM_AARCH64, _EM_ARM = 62, 3, 183, 40
_EM_PPC64, _EM_PPC, _EM_S390, _EM_RISCV, _EM_LOONGARCH, _EM_MIPS = 21, 20, 22, 243, 258, 8
_I386 = ("i386", "i486", "i586", "i686")


def _arches(machine: int, is64: bool, little: bool) -> tuple[str, tuple[str, ...]] | None:
    """(what the binary is for, the ``uname -m`` values that run it), None if unknown."""
    if machine == _EM_X86_64 and is64:
        return "x86_64", ("x86_64",)
    if machine == _EM_386:
        return "i386", (*_I386, "x86_64")
    if machine == _EM_AARCH64:
        return ("aarch64", ("aarch64",)) if little else ("aarch64_be", ("aarch64_be",))
    if machine == _EM_ARM:
        return "arm", ("armv6l", "armv7l", "armv8l")
    if machine == _EM_PPC64:
        return ("ppc64le", ("ppc64le",)) if little else ("ppc64", ("ppc64",))
    if machine == _EM_PPC:
        return "ppc", ("ppc", "ppc64")
    if machine == _EM_S390:
        return ("s390x", ("s390x",)) if is64 else ("s390", ("s390", "s390x"))
    if machine == _EM_RISCV:
        return ("riscv64", ("riscv64",)) if is64 else ("riscv32", ("riscv32",))
    if machine == _EM_LOONGARCH:
        return "loongarch64", ("loongarch64",)
    if machine == _EM_MIPS:
        name = ("mips64" if is64 else "mips") + ("el" if little else "")
        return name, ("mips64", "mips") if is64 else ("mips", "mips64")
    return None


@dataclass(frozen=True)
class Binary:
    """The harness to copy: its file, how to start it there, and what it runs on."""

    path: Path
    interpreter: str | None          # "python3" for the tests' .py stand-in
    arch: str | None                 # what an ELF harness is built for
    runs_on: tuple[str, ...] = ()    # uname -m values that run it

    @property
    def remote_name(self) -> str:
        return HARNESS_NAME + (".py" if self.interpreter else "")

    def check_host_arch(self, host: Host, machine: str) -> None:
        if self.arch is not None and machine not in self.runs_on:
            raise RemoteError(f"{host.url} is {machine} but {self.path} is built for "
                              f"{self.arch}; point --harness at a static {machine} build of "
                              f"{HARNESS_NAME}")


def inspect_binary(command: Sequence[str]) -> Binary:
    """What :func:`kcross.run.harness.locate` found, checked for being a static ELF program."""
    path = Path(command[-1])
    if len(command) > 1 or path.suffix == ".py":  # [python, fake.py]: the tests' stand-in
        return Binary(path=path, interpreter="python3", arch=None)
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) \
                    or head[5] not in (1, 2):
                raise RemoteError(f"{path} is not an ELF program: a remote run copies a "
                                  f"static {HARNESS_NAME} build")
            is64, little = head[4] == 2, head[5] == 1
            end = "<" if little else ">"
            machine = struct.unpack_from(end + "H", head, 18)[0]
            if is64:
                phoff = struct.unpack_from(end + "Q", head, 32)[0]
                phentsize, phnum = struct.unpack_from(end + "HH", head, 54)
            else:
                phoff = struct.unpack_from(end + "I", head, 28)[0]
                phentsize, phnum = struct.unpack_from(end + "HH", head, 42)
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    if phentsize < 4 or len(table) < phentsize * phnum:
        raise RemoteError(f"{path} is a damaged ELF file (program headers cut off)")
    pt_interp = 3
    for index in range(phnum):
        if struct.unpack_from(end + "I", table, index * phentsize)[0] == pt_interp:
            raise RemoteError(f"{path} is dynamically linked; a remote run needs the static "
                              f"build of {HARNESS_NAME} (the remote's C library is unknown)")
    known = _arches(machine, is64, little)
    if known is None:
        raise RemoteError(f"{path} is built for ELF machine {machine}, which kcross cannot "
                          "match against a remote 'uname -m'")
    return Binary(path=path, interpreter=None, arch=known[0], runs_on=known[1])


# --- one host ------------------------------------------------------------------------

# One session: the machine first (the copy is made only where the harness
# runs: "$1" lists the `uname -m` values that run it, empty for any), then what the
# readiness checks read ("$2", a script, when kcross checks the machine), then
# mktemp's directory (known even when the copy then fails, so removed), then the copy.
_MACHINE, _DIRECTORY = "@@kcross-machine ", "@@kcross-directory "
_UPLOAD = ('m=$(uname -m) || exit 1; echo "' + _MACHINE + '$m"; '
           'case " $1 " in "  "|*" $m "*) ;; *) exit 0;; esac; '
           'if [ -n "$2" ]; then (eval "$2"); fi; '
           'd=$(mktemp -d "${TMPDIR:-/tmp}/' + TMP_PREFIX + 'XXXXXX") || exit 1; '
           'echo "' + _DIRECTORY + '$d"; cat > "$d/$0" && chmod 700 "$d/$0"')
_RUN = 'cd "$0" && echo $$ > pid && exec "$@"'
# Stop the harness if it still runs there (its directory is its cwd, so a
# reused pid is never hit), then remove the directory.
_CLEANUP = ('if [ -f "$0/pid" ]; then p=$(cat "$0/pid"); '
            'if [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$0" ]; then '
            'kill -TERM "$p" 2>/dev/null; fi; fi; rm -rf -- "$0"')


def _sh(script: str, *args: str) -> list[str]:
    """Words for ssh that run ``script`` with ``sh -c`` whatever the login shell is."""
    return ["sh", "-c", shlex.quote(script), *(shlex.quote(a) for a in args)]


def _control_directory() -> Path:
    """A new private (0700) directory for the master's socket, short enough for one."""
    for parent in (tempfile.gettempdir(), "/tmp"):
        made = Path(tempfile.mkdtemp(prefix="kcross-ssh.", dir=parent))
        if len(str(made / "master")) <= CONTROL_PATH_MAX and "%" not in str(made):
            return made
        made.rmdir()
    raise RemoteError(f"no temporary directory with a path short enough for ssh's control "
                      f"socket (at most {CONTROL_PATH_MAX - len('/master')} characters): "
                      "set TMPDIR to a shorter one")


_MULTIPLEXING = ("controlmaster", "controlpath", "controlpersist")


def _multiplexing_given(options: Sequence[str]) -> bool:
    """Whether the user's ``-o`` options set up connection multiplexing themselves."""
    return any(re.split(r"[\s=]", o.strip(), maxsplit=1)[0].lower() in _MULTIPLEXING
               for o in options)


class Session:
    """What kcross does on one host over ssh: probe, copy, the run's command, clean up;
    every ``ssh`` a session on one multiplexed connection.  :meth:`close` ends it."""

    def __init__(self, host: Host, options: Sequence[str]) -> None:
        self.host = host
        self.user_options = list(options)
        self.directory: str | None = None
        self.facts: str | None = None  # what the readiness checks read there, if asked
        # A user who sets up multiplexing with -o keeps it as given: kcross adds nothing
        # (its ControlPersist would keep the user's master alive past the run).
        self.control: Path | None = (None if _multiplexing_given(options)
                                     else _control_directory())

    @property
    def options(self) -> list[str]:
        """The user's ``-o`` options, then the multiplexing (theirs win: first wins)."""
        if self.control is None:
            return self.user_options
        return [*self.user_options, "ControlMaster=auto",
                f"ControlPath={self.control / 'master'}",
                f"ControlPersist={CONTROL_PERSIST_S}"]

    def close(self) -> None:
        """Tell the master to exit (when there is one) and remove its directory."""
        if self.control is None:
            return
        try:
            if (self.control / "master").exists():
                subprocess.run(ssh_command(self.host, self.options, [], flags=["-O", "exit"]),
                               stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=CLEANUP_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            shutil.rmtree(self.control, ignore_errors=True)
            self.control = None

    def _ssh_raw(self, remote: Sequence[str], *, doing: str, timeout: float,
                 stdin: Any = subprocess.DEVNULL) -> tuple[int, str, str]:
        argv = ssh_command(self.host, self.options, remote)
        try:
            done = subprocess.run(argv, stdin=stdin, capture_output=True, timeout=timeout,
                                  check=False)
        except FileNotFoundError:
            raise RemoteError("ssh not found: install the OpenSSH client (Debian: "
                              "openssh-client)") from None
        except subprocess.TimeoutExpired:
            raise RemoteError(f"{self.host.url}: no answer within {timeout:g} s while "
                              f"{doing}") from None
        return (done.returncode, done.stdout.decode("utf-8", "replace"),
                done.stderr.decode("utf-8", "replace"))

    def _check(self, returncode: int, stderr: str, doing: str) -> None:
        if returncode == 255:  # ssh's own failure: connection, host key, authentication
            why = _last_line(stderr) or "ssh exited with status 255"
            raise RemoteError(f"{self.host.url}: cannot connect ({why}); check the host, "
                              "the port and that your key is accepted (BatchMode=yes)")
        if returncode != 0:
            why = _last_line(stderr) or f"exit status {returncode}"
            raise RemoteError(f"{self.host.url}: {doing} failed: {why}")

    def _ssh(self, remote: Sequence[str], *, doing: str, timeout: float) -> str:
        returncode, stdout, stderr = self._ssh_raw(remote, doing=doing, timeout=timeout)
        self._check(returncode, stderr, doing)
        return stdout

    def upload(self, binary: Binary, *, gather: bool = False) -> str:
        """Check the host's machine, (``gather``) gather what the readiness checks read
        there (:attr:`facts`), then copy the harness into a fresh temporary directory
        there; return the directory."""
        doing = "copying the harness"
        script = ""
        if gather:
            from .readiness import gather_script

            script = gather_script()
        try:
            with binary.path.open("rb") as fh:
                returncode, stdout, stderr = self._ssh_raw(
                    _sh(_UPLOAD, binary.remote_name, " ".join(binary.runs_on), script),
                    doing=doing, timeout=UPLOAD_TIMEOUT_S, stdin=fh)
        except OSError as exc:
            raise UserError(f"cannot read {binary.path}: {exc.strerror or exc}") from None
        said = {marker: line[len(marker):].strip() for line in stdout.splitlines()
                for marker in (_MACHINE, _DIRECTORY) if line.startswith(marker)}
        directory = said.get(_DIRECTORY, "")
        if directory.startswith("/") and f"/{TMP_PREFIX}" in directory:
            self.directory = directory
        if gather:
            self.facts = stdout
        self._check(returncode, stderr, doing)
        machine = said.get(_MACHINE, "")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", machine):
            raise RemoteError(f"{self.host.url}: 'uname -m' answered {machine!r}, not a "
                              "machine name")
        binary.check_host_arch(self.host, machine)
        if self.directory is None:
            raise RemoteError(f"{self.host.url}: mktemp -d answered {directory!r}, not a "
                              "directory")
        return self.directory

    def run_command(self, binary: Binary) -> list[str]:
        """The command prefix :class:`kcross.run.harness.HarnessProcess` starts; it appends the
        harness's arguments, which must therefore be quoted for the remote shell."""
        assert self.directory is not None
        env = [f"{name}={os.environ[name]}" for name in HARNESS_ENV if os.environ.get(name)]
        start = [binary.interpreter, f"./{binary.remote_name}"] if binary.interpreter \
            else [f"./{binary.remote_name}"]
        return ssh_command(self.host, self.options,
                           _sh(_RUN, self.directory, "env", *env, *start))

    def readiness_line(self, cpu: int | None) -> str | None:
        """The line a local ``kcross run`` prints when the machine is not tuned, about this
        host, from what :meth:`upload` gathered; None when nothing warns (or nothing was
        gathered).  A ``--cpu`` the remote shell may not run on: one line."""
        from . import readiness

        if self.facts is None:
            return None
        try:
            machine = readiness.gathered(self.facts).machine(cpu, whose="the remote shell's")
        except UserError as exc:
            raise RemoteError(f"{self.host.url}: {exc}") from None
        if machine is None:
            return None
        findings = readiness.judge(machine, readiness.RUN_CHECKS)
        return readiness.warning_line(findings, cpu, where=self.host.url)

    def cleanup(self) -> str | None:
        """Remove the temporary directory; None, or one line saying why it could not be."""
        if self.directory is None:
            return None
        try:
            self._ssh(_sh(_CLEANUP, self.directory), doing="removing the copy",
                      timeout=CLEANUP_TIMEOUT_S)
        except RemoteError as exc:
            return f"{exc} (left {self.directory} there)"
        self.directory = None
        return None


def recorded_command(host: Host, argv: Sequence[str]) -> list[str]:
    """``runs.command`` of a remote run: ``run --remote URL`` and the rest of the command."""
    rest = without_remotes(argv)
    return ["run", "--remote", host.url, *rest[1:]] if rest[:1] == ["run"] \
        else ["run", "--remote", host.url, *rest]


def without_remotes(argv: Sequence[str]) -> list[str]:
    """``argv`` (``run ...``) less every ``--remote URL`` (also ``--remote=URL`` and the
    abbreviations argparse accepts, such as ``--rem URL``)."""
    kept: list[str] = []
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            kept += words[i:]
            break
        name, eq, _ = word.partition("=")
        if len(name) > 3 and "--remote".startswith(name):
            i += 1 if eq else 2
            continue
        kept.append(word)
        i += 1
    return kept


def _prefixed(host: Host, exc: KcrossError) -> KcrossError:
    """The same error, its line naming the host (errors whose text is only a message)."""
    if type(exc) not in (HarnessError, UserError, SchemaError, StoreError):
        return exc
    text = str(exc)
    if isinstance(exc, HarnessError) and "exited with status 255 " in text:
        # ssh's own status: the harness there died of a signal, or the connection broke.
        text = text.replace("exited with status 255 ", "ended with ssh's status 255 (the "
                            "connection was lost or the harness there was killed) ", 1)
    return type(exc)(text if host.url in text else f"{host.url}: {text}")


def run_host(store: Store, host: Host, binary: Binary, request: RemoteRequest, out: Console,
             err: Console) -> int:
    """One host, in this process: the same run as a local one (``request.run``), over ssh."""
    from .runner import run

    session = Session(host, request.ssh_options)

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum, "interrupted before the run started; nothing stored")

    # Until the runner takes the stop signals over: a Ctrl-C or SIGTERM while the
    # harness is copied ends the copy's ssh and still removes what it made there.
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, stop)
    try:
        session.upload(binary, gather=request.check)
        line = session.readiness_line(request.cpu)
        here = replace(request.run, harness=session.run_command(binary),
                       harness_args=[shlex.quote(a) for a in request.run.harness_args],
                       command=recorded_command(host, request.run.command), source="remote",
                       notice=(lambda: line) if line else None)
        try:
            return run(store, here, out, err)
        except KcrossError as exc:
            raise _prefixed(host, exc) from None
    finally:
        with stop_signals_held():  # a second Ctrl-C must not strand the copy
            try:
                problem = session.cleanup()
            finally:
                session.close()
        if problem:
            say(err, f"kcross: warning: {problem}", "yellow")


# --- several hosts -------------------------------------------------------------------

@dataclass
class _Child:
    host: Host
    proc: subprocess.Popen[bytes]
    stdout: bytes = b""
    status: int | None = None


def run_hosts(hosts: Sequence[Host], request: RemoteRequest, out: Console,
              err: Console) -> int:
    """Several hosts at once: one ``kcross run --remote URL`` child per host."""
    lock = threading.Lock()
    finished: queue.Queue[_Child] = queue.Queue()
    children: list[_Child] = []
    first_signal: list[int] = []

    def relay_stderr(child: _Child) -> None:
        assert child.proc.stderr is not None
        for raw in child.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if not line:
                continue
            text = line if child.host.url in line else f"{child.host.url}: {line}"
            with lock:
                try:
                    sys.stderr.write(text + "\n")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass

    def collect(child: _Child) -> None:
        assert child.proc.stdout is not None
        child.stdout = child.proc.stdout.read()
        child.status = child.proc.wait()
        finished.put(child)

    def forward(signum: int, _frame: FrameType | None) -> None:
        if not first_signal:
            first_signal.append(signum)
        for child in children:
            if child.proc.poll() is None:
                child.proc.send_signal(signum)

    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        if previous[signum] is not signal.SIG_IGN:
            signal.signal(signum, forward)
    threads: list[threading.Thread] = []
    try:
        for host in hosts:
            argv = [sys.executable, "-m", "kcross", *recorded_command(host, request.run.command)]
            # A session of its own: Ctrl-C reaches this process, which passes it
            # on once to each child (the terminal would reach them too).  Started
            # outside stop_signals_held(): a child inherits the signal mask.
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
            child = _Child(host, proc)
            children.append(child)
            with stop_signals_held():  # the relay threads leave the signals to this one
                for target in (relay_stderr, collect):
                    thread = threading.Thread(target=target, args=(child,), daemon=True)
                    thread.start()
                    threads.append(thread)
        worst = 0
        for _ in children:
            child = _wait(finished)
            assert child.status is not None
            status = child.status if child.status >= 0 else exit_for_signal(-child.status)
            worst = max(worst, status)
            if not child.stdout:  # failed before its table: its error line said why
                continue
            with lock:
                if not request.run.json_output:
                    say(out, f"== {child.host.url} ==")
                else:
                    say(err, f"== {child.host.url}: its JSON lines follow ==")
                sys.stdout.write(child.stdout.decode("utf-8", "replace"))
                sys.stdout.flush()
        for thread in threads:
            thread.join(timeout=5)
    finally:
        for child in children:  # only left running if this process is failing
            if child.proc.poll() is None:
                child.proc.terminate()
        for signum, handler in previous.items():
            if handler is not signal.SIG_IGN:
                signal.signal(signum, handler)
    failed = [c for c in children if c.status]
    if len(failed) and not first_signal:
        names = ", ".join(f"{c.host.url} (exit status {c.status})" for c in failed)
        say(err, f"kcross: {len(failed)} of {len(children)} host(s) ended with a "
                 f"non-zero status: {names}")
    if first_signal:
        return max(worst, exit_for_signal(first_signal[0]))
    return worst


def _wait(finished: queue.Queue[_Child]) -> _Child:
    """The next child to finish; a short timeout so that signals are handled meanwhile."""
    while True:
        try:
            return finished.get(timeout=0.5)
        except queue.Empty:
            continue


# --- the command ---------------------------------------------------------------------

def cmd_run_remote(store: Store, request: RemoteRequest, out: Console, err: Console) -> int:
    """``kcross run --remote ...``: every host checked before anything starts."""
    from . import harness

    # The user's own mistakes are named first, then what the machine lacks.
    hosts = [parse_host(text) for text in request.hosts]
    if len(hosts) > 1 and request.run.tag is not None:
        raise UserError("--tag names one run: give it with one --remote (then 'kcross tag "
                        "RUN NAME' for the others)")
    refuse_the_same_host_twice(hosts, request.ssh_options)
    binary = inspect_binary(harness.locate(request.harness))
    if shutil.which("ssh") is None:
        raise RemoteError("ssh not found: install the OpenSSH client (Debian: "
                          "openssh-client)")
    if len(hosts) == 1:
        return run_host(store, hosts[0], binary, request, out, err)
    return run_hosts(hosts, request, out, err)
