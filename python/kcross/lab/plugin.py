"""The labs' TCG plugin (lab/plugin/kcross-profile.c): built, cached, checked, loaded (issue 16).

:func:`build_plugin` compiles the plugin from the source tree with this host's ``gcc``
(``-shared -fPIC``: QEMU loads it into itself) into the lab's cache, once per source
tree, again only when its source changed (its SHA-256 is part of the file's name).
:func:`check_plugin` has QEMU load it with no guest (``-M none``, paused, quit at once):
a QEMU whose plugin API the plugin does not fit (the plugin checks the version range QEMU
offers at install), or that cannot load plugins, is refused in one line before any boot.
:func:`qemu_args` is the ``-plugin`` option of a profiled boot.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from kcross.errors import LabError, clipped
from kcross.lab.kernel import cache_root

PLUGIN_SOURCE = Path("lab") / "plugin" / "kcross-profile.c"
HOST_GCC = "gcc"
HOST_GCC_PACKAGE = "gcc"
CFLAGS = ("-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror")
CHECK_TIMEOUT = 60.0


def missing_tools() -> list[tuple[str, tuple[str, ...]]]:
    """What this host lacks to build the plugin: (what, its Debian packages)."""
    return [] if shutil.which(HOST_GCC) else [(HOST_GCC, (HOST_GCC_PACKAGE,))]


def build_plugin(src: Path, *, cache_dir: Path | None = None,
                 defines: Mapping[str, str] | None = None) -> Path:
    """The plugin built from ``src``'s lab/plugin/kcross-profile.c (cached by its SHA-256
    and ``defines``); LabError (one line, the compiler's first error) when it fails."""
    source = src / PLUGIN_SOURCE
    try:
        text = source.read_bytes()
    except OSError as e:
        raise LabError(f"cannot read the profile plugin's source {source}: "
                       f"{e.strerror or e}") from None
    flags = [*CFLAGS, *(f"-D{k}={v}" for k, v in sorted((defines or {}).items()))]
    key = hashlib.sha256(text + "\0".join(flags).encode()).hexdigest()[:16]
    out = cache_root(cache_dir) / "plugin" / f"kcross-profile-{key}.so"
    if out.is_file():
        return out
    gcc = shutil.which(HOST_GCC)
    if gcc is None:
        raise LabError(f"building the profile plugin needs {HOST_GCC} "
                       f"(apt-get install {HOST_GCC_PACKAGE})")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".tmp{id(out)}")
        proc = subprocess.run([gcc, *flags, "-o", str(tmp), str(source)], capture_output=True,
                              text=True, check=False, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            first = next((line for line in proc.stderr.splitlines() if "error" in line),
                         proc.stderr.strip())
            tmp.unlink(missing_ok=True)
            raise LabError(f"building the profile plugin failed: {clipped(first.strip(), 200)}")
        tmp.replace(out)   # whole or not at all: a reader never sees half a plugin
    except OSError as e:
        raise LabError(f"cannot build the profile plugin in {out.parent}: "
                       f"{e.strerror or e}") from None
    return out


# Trace: at most this many instructions of the traced window are recorded (the plugin's
# tracemax=, which it requires with trace=1: this is its one owner).
TRACE_MAX = 1_000_000


def qemu_args(plugin: Path, out: Path, markers: Mapping[str, int], kernel_base: int,
              *, trace: bool = False) -> tuple[str, str]:
    """The ``-plugin`` option: the plugin, its output file, the marker addresses and the
    first kernel address (and for --trace, trace=1 and at most TRACE_MAX instructions)."""
    opts = [str(plugin), f"out={out}", f"kernel={kernel_base:#x}",
            *(f"{name}={addr:#x}" for name, addr in markers.items())]
    if trace:
        opts += ["trace=1", f"tracemax={TRACE_MAX}"]
    for o in opts:
        if "," in o:
            raise LabError(f"the profile plugin's argument {o!r} holds a comma (QEMU's "
                           "option separator): use a path without one")
    return "-plugin", ",".join(opts)


def check_plugin(qemu: str, plugin: Path, workdir: Path) -> None:
    """QEMU loads the plugin and quits: LabError (one line, the plugin's or QEMU's own
    words) when this QEMU cannot load it or offers no plugin API version it fits."""
    path = shutil.which(qemu)
    if path is None:
        raise LabError(f"no {qemu} on PATH")
    markers = {"sample": 1, "empty": 2, "close": 3, "dump": 4}
    argv = [path, "-M", "none", "-display", "none", "-serial", "none", "-S", "-monitor",
            "stdio", *qemu_args(plugin, workdir / "check.profile", markers, 1 << 63)]
    try:
        proc = subprocess.run(argv, input=b"quit\n", capture_output=True,
                              timeout=CHECK_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise LabError(f"{qemu} did not quit within {CHECK_TIMEOUT:g} s after loading the "
                       "profile plugin") from None
    except OSError as e:
        raise LabError(f"cannot run {path}: {e.strerror or e}") from None
    said = [line.replace("(qemu)", "").strip() for line in
            (proc.stdout + proc.stderr).decode(errors="replace").splitlines()
            if "kcross-profile" in line or "plugin" in line.lower()]
    if proc.returncode != 0:
        words = next((s for s in said if "kcross-profile:" in s), said[0] if said else
                     f"exit status {proc.returncode}")
        raise LabError(f"{qemu} cannot run the profile plugin: {words}")
