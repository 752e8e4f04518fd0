"""The kernel's own selftest sources, from Debian's ``linux-source-X.Y`` package (issue 16).

``fetch_source(arch, version, wanted)`` gets the few files of the kernel tree the lab's
selftests need (:data:`kcross.lab.selftests.WANTED`) out of the Debian release's (the
kernel's; bookworm by default) ``linux-source-X.Y`` package (architecture all, ~139 MB:
one ``.tar.xz`` of the whole tree), through the same private APT configuration as the lab's kernel
(:mod:`kcross.lab.kernel`: the guest arch's own lists; nothing of the system's apt or
dpkg state changes; no foreign architecture).  The ``.deb`` is checked against the
SHA-256 of the index APT verified, streamed through ``dpkg-deb --fsys-tarfile`` and
Python's xz reader, and only the wanted files are written; the ``.deb`` itself is not
kept.

The version: the lab kernel's own package version when the registry has it (the same
source upload as the booted kernel), else the registry's current ``linux-source-X.Y`` of
the same line (said in a line).  :attr:`Source.version` says which was used.

Cache: ``${XDG_CACHE_HOME:-~/.cache}/kcross/lab/linux-source/<version>/`` holding
``tree/`` and ``source.json`` (the package, its version, the .deb's size and SHA-256 as
the index names it, the wanted paths, and the size and SHA-256 of every file written).
Every use checks every file against that record: an entry that is cut, changed, or
extracted for another set of wanted paths is never used; it is fetched again and
replaced (an entry is renamed into place only once complete).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from kcross.errors import LabError, UserError
from kcross.lab import kernel as debian
from kcross.lab.kernel import cache_root, file_sha256

CACHE_DIR = "linux-source"
META = "source.json"
TREE = "tree"
# bookworm's kernel line: the source package when the kernel has no Debian version
# (a user's own --kernel).
DEFAULT_LINE = "6.1"
_INNER = re.compile(r"^\./usr/src/linux-source-[0-9.]+\.tar\.xz$")


@dataclass(frozen=True)
class Source:
    """The extracted selftest sources of one ``linux-source-X.Y`` version."""

    package: str            # linux-source-6.1
    version: str            # its package version, e.g. 6.1.176-1
    tree: Path              # the kernel tree's root (holds Makefile, tools/...)
    kernel_release: str     # VERSION.PATCHLEVEL.SUBLEVEL of the tree's Makefile
    deb_sha256: str


def source_package(kernel_version: str | None) -> str:
    """``linux-source-6.1`` for a kernel package version ``6.1.176-1`` (or bookworm's line)."""
    if kernel_version:
        m = re.match(r"^(\d+\.\d+)", kernel_version)
        if m:
            return f"linux-source-{m[1]}"
    return f"linux-source-{DEFAULT_LINE}"


def _wanted(rel: str, wanted: Sequence[str]) -> bool:
    """A path of the tree is wanted when it is one of ``wanted`` or under one ending in /."""
    return any(rel == w or (w.endswith("/") and rel.startswith(w)) for w in wanted)


# ---------------------------------------------------------------- the cache

def _entry_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    return cache_root(cache_dir) / CACHE_DIR


def damage(entry: Path, wanted: Sequence[str]) -> str | None:
    """None when ``entry`` is a complete extraction of ``wanted`` whose every file is still
    what was written; else what is wrong, in a few words."""
    try:
        meta = json.loads((entry / META).read_text())
        files = meta["files"]
        if sorted(meta["wanted"]) != sorted(wanted):
            return "extracted for another set of files"
        if not files:
            return "no files recorded"
        for rel, (size, sha256) in files.items():
            path = entry / TREE / rel
            if path.stat().st_size != size:
                return f"{rel} is {path.stat().st_size} bytes where the package's has {size}: cut or changed"
            if file_sha256(path) != sha256:
                return f"{rel}: its SHA-256 is not the package's file's: changed"
    except FileNotFoundError as e:
        return f"{e.filename} is missing"
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"unreadable record ({e.__class__.__name__})"
    return None


def _load(entry: Path) -> Source:
    meta = json.loads((entry / META).read_text())
    return Source(package=meta["package"], version=meta["version"], tree=entry / TREE,
                  kernel_release=meta["kernel_release"], deb_sha256=meta["deb_sha256"])


def cached(version: str, wanted: Sequence[str], *,
           cache_dir: str | os.PathLike[str] | None = None) -> Source | None:
    """The cached sources of that version when every file is the package's; else None."""
    if "/" in version or version.startswith("."):
        raise UserError(f"bad source package version {version!r}")
    entry = _entry_dir(cache_dir) / version
    return _load(entry) if damage(entry, wanted) is None else None


def newest(package: str, wanted: Sequence[str], *,
           cache_dir: str | os.PathLike[str] | None = None) -> Source | None:
    """The newest usable cached version of ``package`` (for a kernel of no Debian version:
    the cache is used without asking the registry, as for the lab's kernel)."""
    try:
        entries = [e for e in _entry_dir(cache_dir).iterdir() if not e.name.startswith(".")]
    except OSError:
        return None
    usable = [_load(e) for e in entries if damage(e, wanted) is None]
    usable = [s for s in usable if s.package == package]
    if not usable:
        return None
    return max(usable, key=lambda s: debian.version_key(s.version))


# ---------------------------------------------------------------- extraction

def _release(makefile: bytes) -> str:
    fields = dict(re.findall(rb"^(VERSION|PATCHLEVEL|SUBLEVEL)\s*=\s*(\d+)", makefile, re.M))
    try:
        return ".".join(fields[k].decode() for k in (b"VERSION", b"PATCHLEVEL", b"SUBLEVEL"))
    except KeyError:
        raise LabError("the source package's Makefile names no kernel version") from None


def _extract_inner(stream: IO[bytes], dest: Path, wanted: Sequence[str]) -> dict[str, list[object]]:
    """The wanted regular files of the tree's .tar.xz ``stream`` written under ``dest``."""
    files: dict[str, list[object]] = {}
    with tarfile.open(fileobj=stream, mode="r|xz") as inner:
        for member in inner:
            parts = PurePosixPath(member.name).parts
            if len(parts) < 2 or not member.isfile():
                continue
            rel = "/".join(parts[1:])          # linux-source-6.1/tools/... -> tools/...
            if ".." in parts or not _wanted(rel, wanted):
                continue
            data = inner.extractfile(member)
            if data is None:
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as out:
                shutil.copyfileobj(data, out)
            files[rel] = [target.stat().st_size, file_sha256(target)]
    return files


def extract(deb: Path, dest: Path, wanted: Sequence[str]) -> dict[str, list[object]]:
    """The wanted files of the kernel tree inside the ``linux-source`` ``deb``, written under
    ``dest``: {path: [size, sha256]}.  LabError (one line) when the package is not one."""
    dpkg_deb = shutil.which("dpkg-deb")
    if dpkg_deb is None:
        raise LabError("dpkg-deb not found: the lab reads the source package with it "
                       "(apt-get install dpkg)")
    proc = subprocess.Popen([dpkg_deb, "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    files: dict[str, list[object]] | None = None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as outer:
            for member in outer:
                if _INNER.match(member.name) and member.isfile():
                    stream = outer.extractfile(member)
                    if stream is not None:
                        files = _extract_inner(stream, dest, wanted)
                    break
    except (tarfile.TarError, EOFError, OSError) as e:
        raise LabError(f"{deb.name}: cannot read the kernel tree in it ({e})") from None
    finally:
        proc.stdout.close()
        error = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
        proc.wait()
    if files is None:
        raise LabError(f"{deb.name} holds no usr/src/linux-source-*.tar.xz"
                       + (f" (dpkg-deb: {error.splitlines()[-1]})" if error else ""))
    missing = [w for w in wanted if not any(r == w or r.startswith(w) for r in files)]
    if missing:
        raise LabError(f"{deb.name}: the kernel tree has no {', '.join(missing)}")
    return files


# ---------------------------------------------------------------- fetch

def fetch_source(arch: str, kernel_version: str | None, wanted: Sequence[str], *,
                 release: str | None = None,
                 cache_dir: str | os.PathLike[str] | None = None,
                 etc_apt: str | os.PathLike[str] = "/etc/apt",
                 say: Callable[[str], None] | None = None) -> Source:
    """The selftest sources for a guest of ``arch`` whose kernel is Debian ``release``'s
    (None: bookworm's) ``kernel_version`` (None: a user's own kernel; bookworm's line is
    used): from the cache when a usable entry has them, else from the release's registry
    (see the module's doc).  LabError/UserError: one line."""
    tell = say or (lambda _line: None)
    package = source_package(kernel_version)
    found = (cached(kernel_version, wanted, cache_dir=cache_dir) if kernel_version is not None
             else newest(package, wanted, cache_dir=cache_dir))
    if found is not None:
        return found
    apt_get, apt_cache, _dpkg = (debian.tool(name) for name in debian.FETCH_TOOLS)
    rel = debian.release_of(release, arch)
    source = debian.pick_source(debian.host_sources(Path(etc_apt)), Path(etc_apt), rel.suite)
    adir = debian.release_dir(arch, rel.name, cache_dir)
    sdir = _entry_dir(cache_dir)
    try:
        adir.mkdir(parents=True, exist_ok=True)
        sdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise LabError(f"cannot create the lab's cache {sdir}: {e.strerror or e}") from None
    debian.remove_stale_tmp(sdir)     # a fetch killed mid-way (its .deb: ~139 MB)
    with debian.arch_lock(adir):      # the arch's private APT state, as the kernel fetch
        conf = debian.private_apt(adir, arch, source, apt_get, rel.suite)
        fields = None
        if kernel_version is not None:
            try:
                fields = debian.show_package(apt_cache, conf, f"{package}={kernel_version}",
                                             rel.suite)
            except LabError:
                fields = None
        if fields is None:
            fields = debian.show_package(apt_cache, conf, package, rel.suite)
            if kernel_version is not None:
                tell(f"the registry has no {package} {kernel_version} (the kernel's version): "
                     f"using {package} {fields.get('Version', '?')}")
        version, deb_sha256 = fields.get("Version", ""), fields.get("SHA256", "").lower()
        debian.check_version(version)
        if not re.fullmatch(r"[0-9a-f]{64}", deb_sha256):
            raise LabError(f"the registry's {package} {version} has no SHA256 field in its index")
        found = cached(version, wanted, cache_dir=cache_dir)
        if found is not None:
            return found
        entry = sdir / version
        if entry.exists():
            tell(f"the cached {package} {version} sources are not the package's files "
                 f"({damage(entry, wanted)}): fetching them again")
        size = fields.get("Size", "?")
        tell(f"downloading Debian's {package} {version} ({size} bytes) from {source.uri} "
             "for the kernel's selftests...")
        return _download(apt_get, conf, sdir, package, version, deb_sha256, wanted)


def _download(apt_get: str, conf: Path, sdir: Path, package: str, version: str,
              deb_sha256: str, wanted: Sequence[str]) -> Source:
    tmp = Path(tempfile.mkdtemp(prefix=debian.TMP_PREFIX, dir=sdir))
    try:
        dl = tmp / "deb"
        dl.mkdir()
        deb = debian.download_deb(apt_get, conf, dl, package, version, deb_sha256)
        entry = tmp / "entry"
        files = extract(deb, entry / TREE, wanted)
        makefile = entry / TREE / "Makefile"
        release = _release(makefile.read_bytes()) if makefile.is_file() else "unknown"
        meta = {"package": package, "version": version, "deb": deb.name,
                "deb_size": deb.stat().st_size, "deb_sha256": deb_sha256,
                "kernel_release": release, "wanted": sorted(wanted), "files": files,
                "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (entry / META).write_text(json.dumps(meta, indent=1) + "\n")
        debian.put_in_place(entry, sdir / version, tmp)
    except OSError as e:
        raise LabError(f"cannot write the lab's source cache in {sdir}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    found = cached(version, wanted, cache_dir=sdir.parent)
    if found is None:
        raise LabError(f"the source cache entry {sdir / version} is incomplete after fetching it")
    return found
