"""Where the tests find real kcross-harness binaries, and why a test must skip without one.

Native: $KCROSS_TEST_REAL_HARNESS, then $KCROSS_REAL_HARNESS, then kcross-harness on
PATH (as `pip install .` puts it).  Cross-built static harnesses run under
qemu-user: $KCROSS_TEST_HARNESS_AARCH64 with qemu-aarch64, $KCROSS_TEST_HARNESS_PPC64LE
with qemu-ppc64le (./check passes the ones it built).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

QEMU = {"aarch64": ("KCROSS_TEST_HARNESS_AARCH64", "qemu-aarch64"),
        "ppc64le": ("KCROSS_TEST_HARNESS_PPC64LE", "qemu-ppc64le")}


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


def under_qemu(arch: str) -> tuple[list[str] | None, str]:
    """The command that runs the cross-built harness of ``arch`` under qemu-user."""
    var, qemu = QEMU[arch]
    path = os.environ.get(var)
    if not path:
        return None, f"${var} not set (a cross-built static kcross-harness for {arch})"
    if not Path(path).is_file():
        return None, f"${var}={path} is not a file"
    emulator = shutil.which(qemu)
    if not emulator:
        return None, f"no {qemu} (apt-get install qemu-user)"
    return [emulator, path], ""


def writes_schema(command: list[str]) -> int | None:
    """The schema version the harness writes (from sysinfo --json), None if unreadable."""
    import json

    proc = subprocess.run([*command, "sysinfo", "--json"], capture_output=True, text=True,
                          timeout=120, check=False)
    try:
        return int(json.loads(proc.stdout.splitlines()[0])["schema"])
    except (IndexError, KeyError, ValueError, TypeError):
        return None
