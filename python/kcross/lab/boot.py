"""Booting a lab guest: QEMU run to the guest's power-off, its console read back (issue 8).

:func:`boot` runs one ``qemu-system-*`` command (machines.Guest.argv) with the console on
its standard output, written to a file (a console can hold megabytes of JSON lines), and
returns the text.  Everything that can go wrong is one line : QEMU missing (with its
package) or refusing the configuration (its own message): LabError, exit 2; QEMU dying,
the guest running past its time (killed; the console's last lines quoted): GuestError,
exit 3.  :func:`cancel_all` stops every guest still running (an interrupted lab).  :func:`run_plan` adds the
initramfs and the console's parser: a list of plan commands in, their results out.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from kcross.errors import GuestError, Interrupted, LabError, signal_name
from kcross.lab.initramfs import (
    CommandResult,
    ConsoleError,
    ConsoleReader,
    FileSpec,
    build_initramfs,
    new_token,
    parse_console,
)
from kcross.lab.machines import Guest

# QEMU's own warnings that say nothing about the run: TCG lacks a feature the
# machine's defaults ask for (pseries' speculation capabilities), and it boots anyway.
HARMLESS_WARNINGS = ("TCG doesn't support requested feature",)
TAIL_LINES = 5


CHECK_TIMEOUT = 60.0   # seconds for QEMU to set a paused machine up and quit


def qemu_path(guest: Guest) -> str:
    found = shutil.which(guest.arch.qemu)
    if found is None:
        raise LabError(f"no {guest.arch.qemu} on PATH (apt-get install {guest.arch.qemu_package})")
    return found


def _refused(guest: Guest, how: str, detail: str) -> LabError:
    return LabError(f"{guest.arch.qemu} refused the configuration ({how}): {detail}")


def check_configuration(guest: Guest) -> None:
    """QEMU sets ``guest``'s machine up, paused, and quits (machines.Guest.check_argv): a
    CPU model, machine option or value it does not take is refused now (LabError, QEMU's
    own message), before any kernel is fetched or anything built.  A QEMU that neither
    refuses nor quits in time is left for the boot to judge."""
    argv = guest.check_argv()
    argv[0] = qemu_path(guest)
    try:
        proc = subprocess.run(argv, input=b"quit\n", capture_output=True, timeout=CHECK_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired:
        return
    except OSError as e:
        raise LabError(f"cannot run {argv[0]}: {e.strerror or e}") from None
    if proc.returncode != 0:
        said = _meaningful(proc.stderr.decode(errors="replace"))
        how = (f"was killed by {signal_name(-proc.returncode)}" if proc.returncode < 0
               else f"exited {proc.returncode}")
        raise _refused(guest, how, said[0] if said else "no message")


def _meaningful(stderr: str) -> list[str]:
    return [line.strip() for line in stderr.splitlines()
            if line.strip() and not any(w in line for w in HARMLESS_WARNINGS)]


def _tail(text: str) -> str:
    lines = [line.strip()[:200] for line in text.splitlines() if line.strip()][-TAIL_LINES:]
    return " | ".join(lines) if lines else "(the console is empty)"


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


# Every QEMU this process runs, so that an interrupted lab (Ctrl-C, SIGTERM, a failed
# boot among parallel ones) stops them all: each runs in its own session, out of reach
# of the terminal's signals.
_running: set[subprocess.Popen[bytes]] = set()
_lock = threading.Lock()
_cancelled = threading.Event()


def cancel_all() -> None:
    """Stop every running guest and refuse new boots until :func:`allow_boots`."""
    _cancelled.set()
    with _lock:
        running = list(_running)
    for proc in running:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def allow_boots() -> None:
    _cancelled.clear()


POLL_SECONDS = 0.2   # how often a boot's console is read for on_line while it runs


def _wait(proc: subprocess.Popen[bytes], timeout: float, console: Path,
          on_line: Callable[[str], None] | None) -> None:
    """Wait for ``proc`` (subprocess.TimeoutExpired after ``timeout`` s); meanwhile give
    ``on_line`` each complete line the console file gains, and the rest at the end."""
    if on_line is None:
        proc.wait(timeout=timeout)
        return
    deadline = time.monotonic() + timeout
    pending = b""
    with open(console, "rb") as reader:
        while True:
            try:
                proc.wait(timeout=POLL_SECONDS)
                ended = True
            except subprocess.TimeoutExpired:
                ended = False
            pending += reader.read()
            *lines, pending = pending.split(b"\n")
            for line in lines:
                on_line(line.decode(errors="replace"))
            if ended:
                if pending:
                    on_line(pending.decode(errors="replace"))
                return
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout)


def boot(guest: Guest, initrd: Path, *, timeout: float, workdir: Path | None = None,
         on_line: Callable[[str], None] | None = None) -> str:
    """Boot ``guest`` with ``initrd`` until it powers off; return its console's text.
    ``on_line``: called with each console line as it arrives (newline removed)."""
    argv = guest.argv(initrd)
    argv[0] = qemu_path(guest)
    with tempfile.TemporaryDirectory(prefix="kcross-boot-", dir=workdir) as tmp:
        out, err = Path(tmp) / "console", Path(tmp) / "stderr"
        with open(out, "wb") as o, open(err, "wb") as e:
            # Its own session: a timeout kills QEMU's whole group, and the terminal's
            # Ctrl-C reaches kcross, which stops QEMU (below), not QEMU directly.
            with _lock:
                if _cancelled.is_set():
                    raise Interrupted(signal.SIGINT, "interrupted before the guest booted")
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                        start_new_session=True)
                _running.add(proc)
            started = time.monotonic()
            try:
                _wait(proc, timeout, out, on_line)
            except subprocess.TimeoutExpired:
                _kill(proc)
                console = out.read_text(errors="replace")
                raise GuestError(f"the {guest.arch.name} guest did not power off within "
                                 f"{timeout:g} s (a hang, a panic with no reboot, or a "
                                 f"kernel that never reached /init); last console lines: "
                                 f"{_tail(console)}") from None
            except BaseException:
                _kill(proc)
                raise
            finally:
                with _lock:
                    _running.discard(proc)
            if _cancelled.is_set():
                raise Interrupted(signal.SIGINT, "interrupted: the guest was stopped")
        console = out.read_text(errors="replace")
        stderr = err.read_text(errors="replace")
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        said = _meaningful(stderr)
        how = (f"was killed by {signal_name(-proc.returncode)}" if proc.returncode < 0
               else f"exited {proc.returncode}")
        detail = said[0] if said else f"last console lines: {_tail(console)}"
        if elapsed < 5 and not console.strip():
            raise _refused(guest, how, detail)
        raise GuestError(f"{guest.arch.qemu} {how} after {elapsed:.0f} s: {detail}")
    return console


def run_plan(guest: Guest, init: Path, files: Mapping[str, FileSpec],
             plan: Sequence[Sequence[str]], *, timeout: float,
             workdir: Path | None = None,
             on_result: Callable[[CommandResult, float], None] | None = None,
             ) -> tuple[list[CommandResult], str]:
    """Pack ``init``, ``files`` and ``plan`` into an initramfs with a new token, boot
    ``guest`` with it, and return the plan's results (only the marker lines with that token
    count) with the whole console text.  ConsoleError (one line) when the guest did not run
    the plan to its end.  ``on_result``: called as each command ends, while the guest runs,
    with its result and the host seconds since its begin marker was read (progress only:
    the results returned are read from the whole console)."""
    token = new_token()
    on_line = None
    if on_result is not None:
        reader: ConsoleReader | None = ConsoleReader(token)
        began = time.monotonic()

        def on_line(line: str) -> None:
            nonlocal reader, began
            if reader is None:
                return
            try:
                before = reader.running
                result = reader.line(line)
            except ConsoleError:
                reader = None   # progress stops here; the whole console's parse says why
                return
            if before is None and reader.running is not None:
                began = time.monotonic()
            if result is not None:
                on_result(result, time.monotonic() - began)

    with tempfile.TemporaryDirectory(prefix="kcross-lab-", dir=workdir) as tmp:
        image = Path(tmp) / "initramfs.cpio"
        build_initramfs(init, files, plan, image, token=token)
        console = boot(guest, image, timeout=timeout, workdir=Path(tmp), on_line=on_line)
    return parse_console(console, token), console
