"""A kernel's build configuration, and whether the lab can boot it (``kcross lab --kernel``).

The configuration is looked for, in order: ``config-VERSION`` beside a Debian kernel
(``boot/vmlinux-VERSION``), ``.config`` at the top of the build tree the kernel file was
built in (``vmlinux`` at its top, ``arch/*/boot/*`` three levels down), and the copy
``CONFIG_IKCONFIG`` embeds in the kernel itself (between the IKCFG_ST and IKCFG_ED
markers, gzip-compressed; found only in an uncompressed vmlinux or Image).  When none is
found the lab says so and boots anyway: a missing option then shows in the guest (no
rseq, or no console and a timeout).
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from pathlib import Path

from kcross.lab.kernel import Kernel
from kcross.lab.machines import arch as lab_arch

# What every lab guest needs from its kernel, and why.
COMMON: tuple[tuple[str, str], ...] = (
    ("CONFIG_BLK_DEV_INITRD", "the initramfs that carries /init and the programs"),
    ("CONFIG_DEVTMPFS", "/dev, which /init mounts"),
    ("CONFIG_PROC_FS", "/proc"),
    ("CONFIG_SYSFS", "/sys"),
    ("CONFIG_BINFMT_ELF", "the static guest programs"),
    ("CONFIG_RSEQ", "restartable sequences (the per-CPU operations' fast paths)"),
)
IKCFG_START = b"IKCFG_ST"
IKCFG_END = b"IKCFG_ED"
MAX_SCAN = 512 * 1024 * 1024


def parse(text: str) -> dict[str, str]:
    """``CONFIG_X=value`` lines; "# CONFIG_X is not set" counts as absent."""
    options: dict[str, str] = {}
    for line in text.splitlines():
        name, eq, value = line.strip().partition("=")
        if eq and name.startswith("CONFIG_"):
            options[name] = value
    return options


def _embedded(path: Path) -> bytes | None:
    try:
        if path.stat().st_size > MAX_SCAN:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    start = data.find(IKCFG_START)
    if start < 0:
        return None
    end = data.find(IKCFG_END, start)
    blob = data[start + len(IKCFG_START):end if end > 0 else None]
    try:
        return gzip.decompress(blob)
    except (OSError, EOFError, zlib.error):
        return None


EMBEDDED = "CONFIG_IKCONFIG (embedded in the kernel)"


def find(kernel: Kernel) -> tuple[dict[str, str], str] | None:
    """The kernel's configuration and where it was found, or None."""
    found = read(kernel)
    return None if found is None else (parse(found[0]), found[1])


def read(kernel: Kernel) -> tuple[str, str] | None:
    """The text of the kernel's configuration and where it was found, or None."""
    found = raw(kernel)
    return None if found is None else (found[0].decode(errors="replace"), found[1])


def raw(kernel: Kernel) -> tuple[bytes, str] | None:
    """The kernel's configuration as it is written (the file's bytes; the embedded copy,
    which is the build's ``.config``) and where it was found, or None."""
    candidates = []
    if kernel.config is not None:
        candidates.append(kernel.config)
    p = kernel.path
    candidates += [p.parent / ".config", p.parent.parent.parent.parent / ".config"]
    for c in candidates:
        if c.is_file():
            try:
                return c.read_bytes(), str(c)
            except OSError:
                continue
    data = _embedded(p)
    if data is not None:
        return data, EMBEDDED
    return None


def sha256(kernel: Kernel) -> str | None:
    """The SHA-256 of the kernel's configuration as it is written, or None when none is
    found: a Debian kernel's recorded one (its file checked against it when it was used),
    else computed."""
    if kernel.config_sha256 is not None:
        return kernel.config_sha256
    found = raw(kernel)
    return hashlib.sha256(found[0]).hexdigest() if found is not None else None


def missing(options: dict[str, str], arch: str) -> list[str]:
    """'CONFIG_X (why)' for each option the lab needs that is not built in.

    =m does not count: the guest loads no modules (its initramfs has none)."""
    needed = COMMON + lab_arch(arch).kconfig
    return [f"{name} ({why})" for name, why in needed if options.get(name) != "y"]
