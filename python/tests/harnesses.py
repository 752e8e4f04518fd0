"""Where the tests find real kcross-harness binaries, and why a test must skip without one.

Native: $KCROSS_TEST_REAL_HARNESS, then $KCROSS_REAL_HARNESS, then kcross-harness on
PATH (as `pip install .` puts it).  Cross-built static harnesses run under
qemu-user: $KCROSS_TEST_CROSS_HARNESSES, "EMULATOR=PATH ..." (./check passes the
ones its cross tiers built; no architecture is named here).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conftest import HANG

CROSS_VAR = "KCROSS_TEST_CROSS_HARNESSES"  # "qemu-aarch64=PATH qemu-ppc64le=PATH" (./check)


def native() -> tuple[list[str] | None, str]:
    """The command that runs the native harness, or None and the reason there is none."""
    for var in ("KCROSS_TEST_REAL_HARNESS", "KCROSS_REAL_HARNESS"):
        path = os.environ.get(var)
        if path:
            if not (Path(path).is_file() and os.access(path, os.X_OK)):
                return None, f"${var}={path} is not an executable file"
            return [path], ""
    found = shutil.which("kcross-harness")
    if found:
        return [found], ""
    return None, ("no built kcross-harness (set KCROSS_TEST_REAL_HARNESS, or pip install . "
                  "to put one on PATH)")


def cross() -> dict[str, str]:
    """The cross-built static harnesses ./check passes: {qemu-user program: harness path}."""
    pairs = (item.partition("=") for item in os.environ.get(CROSS_VAR, "").split())
    return {emulator: path for emulator, _, path in pairs if emulator and path}


def under_qemu(emulator: str) -> tuple[list[str] | None, str]:
    """The command that runs the harness built for ``emulator`` (e.g. qemu-ppc64le)."""
    path = cross().get(emulator)
    if not path:
        return None, f"${CROSS_VAR} names no harness for {emulator} (./check passes them)"
    if not Path(path).is_file():
        return None, f"{emulator}: {path} is not a file"
    found = shutil.which(emulator)
    if not found:
        return None, f"no {emulator} (apt-get install qemu-user)"
    return [found, path], ""


def writes_schema(command: list[str]) -> int | None:
    """The schema version the harness writes (from sysinfo --json), None if unreadable."""
    import json

    proc = subprocess.run([*command, "sysinfo", "--json"], capture_output=True, text=True,
                          timeout=HANG, check=False)
    try:
        return int(json.loads(proc.stdout.splitlines()[0])["schema"])
    except (IndexError, KeyError, ValueError, TypeError):
        return None
