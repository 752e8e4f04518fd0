"""What the lab tests need from this machine, and the skip that names what is missing.

A real boot needs the kernel ($KCROSS_TEST_LAB_KERNEL_PPC64LE: Debian's vmlinux;
_AARCH64: Debian's arm64 Image; _X86_64: Debian's amd64 bzImage — ./check fetches them
with kcross.lab.kernel and sets these), the qemu-system program of the arch (its Debian
package from kcross.lab.machines) and the arch's cross compiler.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG
from kcross.lab import machines

# The boot token of the captured consoles (data/lab-*-console.txt, data/capture-lab-console).
CONSOLE_TOKEN = "0123456789abcdef"


def kernel_variable(arch: str) -> str:
    return f"KCROSS_TEST_LAB_KERNEL_{arch.upper()}"


def lab_kernel(arch: str) -> Path:
    """The kernel to boot for ``arch`` and QEMU on PATH, or a skip saying which is missing."""
    var = kernel_variable(arch)
    kernel = os.environ.get(var)
    if not kernel:
        pytest.skip(f"set {var} to a Debian {arch} kernel (vmlinux, Image or bzImage) to boot one")
    if not Path(kernel).is_file():
        pytest.skip(f"${var}={kernel} is not a file")
    a = machines.arch(arch)
    if not shutil.which(a.qemu):
        pytest.skip(f"no {a.qemu} (apt-get install {a.qemu_package})")
    return Path(kernel)


def lab_prerequisites(arch: str) -> tuple[Path, str]:
    """The kernel and the arch's C compiler (the native one on its own arch), or a skip."""
    kernel = lab_kernel(arch)
    a = machines.arch(arch)
    compiler = shutil.which(a.cross_gcc) or (shutil.which("gcc") if os.uname().machine == arch
                                             else None)
    if not compiler:
        pytest.skip(f"no {a.cross_gcc} (apt-get install {a.cross_package})")
    return kernel, compiler


def kcross(*args: str, env: dict[str, str], timeout: float = HANG) -> subprocess.CompletedProcess:
    """``python -m kcross ARGS`` in a process of its own (a boot's tests: no fork)."""
    return subprocess.run([sys.executable, "-m", "kcross", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def figures(records: list[dict]) -> dict[str, float]:
    """{suite/name: the statistics rule's median} of the ok results among ``records``."""
    from kcross.stats import summarize_record

    return {f"{r['suite']}/{r['name']}": summarize_record(r).median
            for r in records if r.get("type") == "result" and r["status"] == "ok"}
