"""The lab's kernel: Debian's kernel package for the target arch, or the user's own file.

``fetch(arch, release=NAME)`` gets the current kernel image package of a Debian release
(kcross.lab.releases: bookworm's by default) for ``arch`` without adding a foreign
architecture to this system: a private APT configuration per arch and release under the
cache dir (its own lists, an empty dpkg status, its own cache, one source line: the
release's suite for the target arch, the mirror and keyring taken from this machine's own
apt sources), used through ``APT_CONFIG`` for ``apt-get update`` / ``apt-get download``;
then ``dpkg -x`` into a temporary dir that is renamed into place only once complete, so an
interrupted fetch never leaves a cache entry a later call trusts.  Only the kernel, its
configuration (and, from a package that has ``boot/``, the rest of ``boot/``) are kept, as
``boot/vmlinu[xz]-ABI`` and ``boot/config-ABI`` whatever the release's package layout.  An
index can list a version whose ``.deb`` the mirror's pool no longer has (404): the newest
listed version that downloads is taken, and said.

Cache: ``${XDG_CACHE_HOME:-~/.cache}/kcross/lab/<arch>/<package version>/`` for bookworm
(where the lab's kernels were cached before there were releases), ``.../<arch>/<release>/
<package version>/`` for the others.  Once a release has an entry for the arch, ``fetch``
uses its newest one without touching the network (the lab's counts depend on the kernel:
it must not change under the user); ``refresh=True`` asks the mirror.  An entry's
``kernel.json`` records its release and what the package's kernel file and configuration
are (their sizes and SHA-256, taken at extraction from the .debs whose SHA-256 are the
ones in the index APT verified, also recorded); every use checks the files against that
record.  An entry that fails the check (cut, changed, or cached before there were records)
is never booted: ``fetch`` downloads the package again and replaces it, or, without the
registry, refuses it in one line.

``Kernel.from_file(path, arch)`` checks a user's own kernel (``--kernel PATH``).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import gzip
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kcross.errors import LabError, UserError, did_you_mean
from kcross.fingerprint import version_order as version_key
from kcross.lab.releases import BOOT, DEFAULT, Release, release

SUITE = DEFAULT  # the default release's suite (the lab's only one before there were releases)
COMPONENT = "main"
ARCHES = ("ppc64le", "aarch64", "x86_64")
# kcross arch -> (Debian architecture, kernel flavour, kernel file in the package's boot/)
DEBIAN: dict[str, tuple[str, str, str]] = {
    "ppc64le": ("ppc64el", "powerpc64le", "vmlinux"),
    "aarch64": ("arm64", "arm64", "vmlinuz"),
    "x86_64": ("amd64", "amd64", "vmlinuz"),
}
DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
META = "kernel.json"
APT_DIR = "apt"
TMP_PREFIX = ".tmp-"
STALE_TMP_SECONDS = 24 * 3600
APT_TIMEOUT = 1800  # seconds; apt has its own per-connection timeouts, this only stops a hang

EM_PPC64 = 21
EM_AARCH64 = 183
EM_X86_64 = 62
ELF_MACHINES = {EM_PPC64: "PowerPC64", EM_AARCH64: "AArch64", EM_X86_64: "x86-64", 3: "i386",
                40: "ARM", 20: "PowerPC", 243: "RISC-V", 2: "SPARC", 22: "S390", 8: "MIPS"}


# ---------------------------------------------------------------------------------------
# arch names

def debian_arch(arch: str) -> str:
    """Debian's name for a kcross arch (ppc64le -> ppc64el, aarch64 -> arm64, x86_64 -> amd64)."""
    return DEBIAN[check_arch(arch)][0]


def flavour(arch: str) -> str:
    """The Debian kernel flavour: ``linux-image-<flavour>`` is its metapackage."""
    return DEBIAN[check_arch(arch)][1]


def check_arch(arch: str) -> str:
    if arch not in DEBIAN:
        # Debian's names (and x86-64) are the names people type: each suggests its arch
        aliases = {"ppc64el": "ppc64le", "arm64": "aarch64", "amd64": "x86_64", "x86-64": "x86_64"}
        hint = did_you_mean(aliases.get(arch, arch), ARCHES)
        raise UserError(f"unknown lab arch {arch!r}{f' ({hint})' if hint else ''}; "
                        f"valid: {', '.join(ARCHES)}")
    return arch


# ---------------------------------------------------------------------------------------
# the kernel

@dataclass(frozen=True)
class Kernel:
    """A kernel file the lab can boot with QEMU's ``-kernel``."""

    arch: str
    path: Path
    package: str | None = None   # Debian binary package, e.g. linux-image-6.1.0-40-powerpc64le
    version: str | None = None   # its package version, e.g. 6.1.153-1
    source: str = "debian"       # "debian" or "file"
    # What the package's kernel file is, recorded when it was extracted (cache entries):
    # the file must still be that to be booted or stored under the package's name.
    sha256: str | None = None
    size: int | None = None
    release: str | None = None   # the Debian release it was fetched from (kcross.lab.releases)
    # What the package's configuration is, recorded as the kernel file is (None: an entry
    # cached before it was recorded, whose configuration is read as it is).
    config_sha256: str | None = None
    config_size: int | None = None

    @property
    def config(self) -> Path | None:
        """The kernel's build configuration (``boot/config-*`` beside it), when there is one."""
        name = self.path.name
        for prefix in ("vmlinux-", "vmlinuz-"):
            if name.startswith(prefix):
                candidate = self.path.with_name("config-" + name[len(prefix):])
                return candidate if candidate.is_file() else None
        return None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], arch: str) -> Kernel:
        """The user's own kernel for ``arch``; UserError (one line) when it is not one."""
        check_arch(arch)
        p = Path(path)
        try:
            with open(p, "rb") as f:
                head = f.read(4096)
        except IsADirectoryError:
            raise UserError(f"{p} is not a kernel for {arch} (a directory)") from None
        except FileNotFoundError:
            raise UserError(f"{p}: no such kernel file") from None
        except OSError as e:
            raise UserError(f"{p}: cannot read the kernel file: {e.strerror or e}") from None
        problem = kernel_problem(head, arch, p)
        if problem:
            raise UserError(f"{p} is not a kernel for {arch} ({problem})")
        return cls(arch=arch, path=p.resolve(), package=None, version=None, source="file")


def _elf_machine(head: bytes) -> tuple[int, int, int] | None:
    """(class, data, e_machine) of an ELF header, or None when ``head`` is not ELF."""
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    ei_class, ei_data = head[4], head[5]
    endian = "<" if ei_data == 1 else ">"
    (machine,) = struct.unpack_from(endian + "H", head, 18)
    return ei_class, ei_data, machine


def _describe(head: bytes) -> str:
    """What a file that is not the expected kernel looks like, in a few words."""
    elf = _elf_machine(head)
    if elf is not None:
        ei_class, ei_data, machine = elf
        bits = {1: "32-bit", 2: "64-bit"}.get(ei_class, "odd-class")
        endian = {1: "little-endian", 2: "big-endian"}.get(ei_data, "odd-endian")
        return f"an ELF file for {ELF_MACHINES.get(machine, f'e_machine {machine}')}, {bits} {endian}"
    if len(head) >= 0x3C and head[0x38:0x3C] == b"ARM\x64":
        return "an arm64 Image"
    if len(head) >= 0x206 and head[0x202:0x206] == b"HdrS":
        return "an x86 bzImage"
    if head[:2] == b"\x1f\x8b":
        return "gzip-compressed data"
    if not head:
        return "an empty file"
    return "no kernel header found"


def kernel_problem(head: bytes, arch: str, path: Path | None = None) -> str | None:
    """None when ``head`` (a file's first bytes) starts a kernel QEMU boots for ``arch``;
    else what is wrong, in a few words for the one-line error."""
    if arch == "ppc64le":
        elf = _elf_machine(head)
        if elf == (2, 1, EM_PPC64):
            return None
        if elf is not None and elf[2] == EM_PPC64:
            return f"{_describe(head)}; expected a 64-bit little-endian ELF vmlinux for PowerPC64"
        return f"{_describe(head)}; expected an ELF vmlinux for PowerPC64 little-endian"
    if arch == "aarch64":
        if len(head) >= 0x3C and head[0x38:0x3C] == b"ARM\x64":
            return None
        if head[:2] == b"\x1f\x8b" and path is not None:
            inner = _gunzip_head(path)
            if inner is not None and inner[0x38:0x3C] == b"ARM\x64":
                return None  # QEMU's -kernel takes a gzip-compressed arm64 Image too
        return f"{_describe(head)}; expected an arm64 Image (magic ARM\\x64 at 0x38, arch/arm64/boot/Image)"
    # x86_64
    if len(head) >= 0x206 and head[0x202:0x206] == b"HdrS":
        (protocol,) = struct.unpack_from("<H", head, 0x206)
        if protocol >= 0x20C and len(head) >= 0x238:
            (xloadflags,) = struct.unpack_from("<H", head, 0x236)
            if not xloadflags & 1:
                return "a 32-bit x86 bzImage; expected a 64-bit one (XLF_KERNEL_64)"
        return None
    return f"{_describe(head)}; expected an x86 bzImage (HdrS at 0x202, arch/x86/boot/bzImage)"


def _gunzip_head(path: Path) -> bytes | None:
    try:
        with gzip.open(path, "rb") as f:
            return f.read(0x40)
    except (OSError, EOFError):
        return None


# The longest version text kept, and the largest image searched for it.
VERSION_STRING_MAX = 300
VERSION_SCAN_MAX = 512 * 1024 * 1024


def version_string(path: Path) -> str | None:
    """The version text a kernel image carries, or None: what follows ``Linux version`` (a
    vmlinux, an arm64 Image, gzip-compressed or not: ``6.1.0-50-arm64 (debian-kernel@...)
    (gcc-12 ...) #1 SMP Debian 6.1.176-1 (2026-07-02)``), else an x86 bzImage header's
    ``kernel_version`` string (its kernel is compressed: ``6.1.0-50-amd64 (debian-kernel@...)
    #1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2026-07-02)``).  Both start with the release."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _version_string(str(path), st.st_size, st.st_mtime_ns)


@functools.cache
def _version_string(path: str, size: int, mtime_ns: int) -> str | None:
    if size > VERSION_SCAN_MAX:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as g:
                data = g.read(VERSION_SCAN_MAX)
    except (OSError, EOFError, zlib.error):
        return None
    m = re.search(rb"Linux version (\d[^\0\n]*)", data)
    if m is not None:
        return m[1][:VERSION_STRING_MAX].decode(errors="replace").strip() or None
    if len(data) >= 0x210 and data[0x202:0x206] == b"HdrS":
        (offset,) = struct.unpack_from("<H", data, 0x20E)
        if offset:
            text = data[0x200 + offset:0x200 + offset + VERSION_STRING_MAX].split(b"\0")[0]
            return text.decode(errors="replace").strip() or None
    return None


# ---------------------------------------------------------------------------------------
# this machine's apt sources

@dataclass(frozen=True)
class AptSource:
    """One ``deb`` source of this machine: where the lab's private APT configuration points."""

    uri: str
    suite: str
    components: tuple[str, ...]
    signed_by: str | None
    origin: str  # the file it came from, for messages


def parse_one_line(text: str, origin: str = "sources.list") -> list[AptSource]:
    """The ``deb`` entries of a one-line-style sources.list text."""
    out: list[AptSource] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        options: dict[str, str] = {}
        m = re.match(r"^(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        kind, opts, uri, suite, comps = m.groups()
        if kind != "deb":
            continue
        for opt in (opts or "").split():
            if "=" in opt:
                key, _, value = opt.partition("=")
                options[key.strip().lower()] = value.strip()
        out.append(AptSource(uri=uri, suite=suite, components=tuple(comps.split()),
                             signed_by=options.get("signed-by"), origin=origin))
    return out


def parse_deb822(text: str, origin: str = "debian.sources") -> list[AptSource]:
    """The ``deb`` entries of a deb822-style ``.sources`` text (every URI x suite)."""
    out: list[AptSource] = []
    stanzas: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    key: str | None = None
    for raw in text.splitlines() + [""]:
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if fields:
                stanzas.append(fields)
            fields, key = {}, None
            continue
        if raw[0] in " \t" and key is not None:
            cont = raw.strip()
            fields[key] += "\n" + ("" if cont == "." else cont)
            continue
        name, sep, value = raw.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        fields[key] = value.strip()
    for st in stanzas:
        if st.get("enabled", "yes").strip().lower() in ("no", "false", "0"):
            continue
        if "deb" not in st.get("types", "").split():
            continue
        signed_by = st.get("signed-by", "").strip() or None
        comps = tuple(st.get("components", "").split())
        for uri in st.get("uris", "").split():
            for suite in st.get("suites", "").split():
                out.append(AptSource(uri=uri, suite=suite, components=comps,
                                     signed_by=signed_by, origin=origin))
    return out


def host_sources(etc_apt: Path = Path("/etc/apt")) -> list[AptSource]:
    """Every ``deb`` entry of this machine: sources.list, sources.list.d/*.list and *.sources."""
    out: list[AptSource] = []
    files = [etc_apt / "sources.list"]
    parts = etc_apt / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        parse = parse_deb822 if f.suffix == ".sources" else parse_one_line
        out += parse(text, str(f))
    return out


def pick_source(sources: list[AptSource], etc_apt: Path = Path("/etc/apt"),
                suite: str = SUITE) -> AptSource:
    """The mirror to fetch ``suite`` from: this machine's entry for ``suite`` main, else its
    entry for another release the lab knows (the same mirror serves them all: its URI and
    keyring are taken, with ``suite`` in the private source line); LabError when this
    machine has none."""
    from kcross.lab.releases import RELEASES

    known = [r.suite for r in RELEASES]
    found = [s for s in sources
             if s.suite in known and COMPONENT in s.components and not s.uri.startswith("cdrom:")]
    if found:
        return min(found, key=lambda s: (s.suite != suite, s.suite != SUITE))
    others = f" (nor one of another Debian release: {', '.join(k for k in known if k != suite)})" \
        if suite != SUITE else ""
    raise LabError(f"no '{suite} {COMPONENT}' entry in this machine's apt sources{others} "
                   f"({etc_apt}/sources.list, {etc_apt}/sources.list.d/): the lab fetches Debian's "
                   "kernel package from that mirror; add one, or pass --kernel PATH")


# ---------------------------------------------------------------------------------------
# the private APT configuration

def host_acquire_settings() -> list[str]:
    """This machine's ``Acquire::`` settings (proxies, timeouts, date checks...), as config
    lines, without the ones the private configuration sets itself or does not want."""
    apt_config = shutil.which("apt-config")
    if apt_config is None:
        return []
    env = dict(os.environ, LC_ALL="C")
    env.pop("APT_CONFIG", None)
    try:
        r = subprocess.run([apt_config, "dump", "Acquire"], capture_output=True, text=True,
                           env=env, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if r.returncode != 0:
        return []
    return filter_acquire(r.stdout)


_SKIP_ACQUIRE = ("acquire::indextargets", "acquire::changelogs", "acquire::cdrom", "acquire::languages")


def filter_acquire(dump: str) -> list[str]:
    out = []
    for line in dump.splitlines():
        line = line.strip()
        if not line.lower().startswith("acquire::") or not line.endswith(";"):
            continue
        if line.lower().startswith(_SKIP_ACQUIRE):
            continue
        out.append(line)
    return out


def _q(value: str | Path) -> str:
    s = str(value)
    if '"' in s or "\n" in s:
        raise LabError(f"cannot use {s!r} in an APT configuration (a quote or newline in it)")
    return f'"{s}"'


def source_line(source: AptSource, arch: str, keyring: str | None, suite: str = SUITE) -> str:
    """The private configuration's one source line: ``suite`` of the mirror, for the arch."""
    opts = [f"arch={debian_arch(arch)}"]
    if keyring:
        opts.append(f"signed-by={keyring}")
    return f"deb [{' '.join(opts)}] {source.uri} {suite} {COMPONENT}\n"


def apt_config_text(apt_dir: Path, arch: str, acquire: list[str], as_root: bool) -> str:
    """The private APT configuration's text: everything under ``apt_dir``, the target arch only."""
    deb_arch = debian_arch(arch)
    lines = [
        "// kcross lab: a private APT configuration for fetching one foreign kernel package;",
        "// nothing of this system's apt or dpkg state is read or changed through it.",
        f"Dir::State {_q(apt_dir / 'state')};",
        f"Dir::State::Lists {_q(apt_dir / 'lists')};",
        f"Dir::State::status {_q(apt_dir / 'status')};",
        f"Dir::State::extended_states {_q(apt_dir / 'state' / 'extended_states')};",
        f"Dir::Cache {_q(apt_dir / 'cache')};",
        # no binary package caches on disk (2 x ~36 MB per arch): apt builds them in memory
        'Dir::Cache::pkgcache "";',
        'Dir::Cache::srcpkgcache "";',
        f"Dir::Etc::SourceList {_q(apt_dir / 'sources.list')};",
        'Dir::Etc::SourceParts "/dev/null";',
        f"Dir::Etc::Parts {_q(apt_dir / 'apt.conf.d')};",
        'Dir::Etc::Main "/dev/null";',
        'Dir::Etc::Preferences "/dev/null";',
        f"Dir::Etc::PreferencesParts {_q(apt_dir / 'preferences.d')};",
        f"Dir::Log {_q(apt_dir / 'log')};",
        f"APT::Architecture {_q(deb_arch)};",
        f"APT::Architectures {{ {_q(deb_arch)}; }};",
        'APT::Get::List-Cleanup "true";',
        'Acquire::Languages "none";',
        'Acquire::IndexTargets::deb::Translations::DefaultEnabled "false";',
    ]
    if as_root:
        # apt drops to _apt for downloads; under a private dir in root's home (mode 0700)
        # that user can write nowhere, and apt would warn and go on unsandboxed anyway.
        lines.append('APT::Sandbox::User "root";')
    lines += ["// this machine's Acquire settings (apt-config dump Acquire)"] + acquire
    return "\n".join(lines) + "\n"


def write_apt_config(apt_dir: Path, arch: str, source: AptSource, keyring: str | None,
                     acquire: list[str], suite: str = SUITE) -> Path:
    for d in ("state", "lists/partial", "cache/archives/partial", "apt.conf.d", "preferences.d", "log"):
        (apt_dir / d).mkdir(parents=True, exist_ok=True)
    status = apt_dir / "status"
    if not status.exists():
        status.write_bytes(b"")
    (apt_dir / "sources.list").write_text(source_line(source, arch, keyring, suite))
    conf = apt_dir / "apt.conf"
    conf.write_text(apt_config_text(apt_dir, arch, acquire, as_root=os.geteuid() == 0))
    return conf


def resolve_keyring(source: AptSource, apt_dir: Path) -> str | None:
    """The keyring for the source line: the entry's own Signed-By file (an inline key block is
    written under ``apt_dir``), else Debian's archive keyring when installed, else none (apt
    then uses this machine's trusted keys)."""
    sb = source.signed_by
    if sb and "BEGIN PGP" in sb:
        path = apt_dir / "signed-by.asc"
        path.write_text(sb.strip() + "\n")
        return str(path)
    if sb:
        return sb.split(",")[0].strip()
    return DEFAULT_KEYRING if Path(DEFAULT_KEYRING).is_file() else None


# ---------------------------------------------------------------------------------------
# the cache

def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """``cache_dir``, else ``${XDG_CACHE_HOME:-~/.cache}/kcross/lab``."""
    if cache_dir is not None:
        return Path(cache_dir)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "kcross" / "lab"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file (hex), computed once per file state (path, size, mtime)."""
    st = path.stat()
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


@functools.cache
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_dir(arch: str, name: str = DEFAULT,
                cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where a release's entries for ``arch`` are cached, with its private APT state:
    ``<arch>/`` for the default release (as before there were releases), ``<arch>/<name>/``
    for the others."""
    adir = cache_root(cache_dir) / check_arch(arch)
    return adir if name == DEFAULT else adir / name


def damage(kernel: Kernel) -> str | None:
    """None when a cached kernel file is the package's (the size and SHA-256 recorded when it
    was extracted), and so is its configuration when that was recorded; else what is wrong,
    in a few words."""
    if kernel.sha256 is None or kernel.size is None:
        return "no record of the package's file to check it against: cached by an older kcross"
    checked = [(kernel.path, kernel.size, kernel.sha256, "")]   # what: "" the kernel file
    if kernel.config_sha256 is not None and kernel.config_size is not None:
        config = kernel.config
        if config is None:
            return "its configuration file is missing"
        checked.append((config, kernel.config_size, kernel.config_sha256, "its configuration: "))
    for path, size, sha256, what in checked:
        try:
            got = path.stat().st_size
            if got != size:
                return f"{what}{got} bytes where the package's file has {size}: cut or changed"
            if file_sha256(path) != sha256:
                return f"{what}its SHA-256 is not the package's file's: changed"
        except OSError as e:
            return f"{what}cannot read it: {e.strerror or e}"
    return None


def _load_entry(entry: Path, arch: str, name: str = DEFAULT) -> Kernel | None:
    """The kernel of a complete cache entry of release ``name`` (an entry that records no
    release was cached before there were releases: bookworm's), or None (incomplete or
    foreign); not checked against its record (:func:`damage`)."""
    try:
        meta = json.loads((entry / META).read_text())
        path = entry / meta["kernel"]
        if meta["arch"] != arch or meta.get("release", DEFAULT) != name or not path.is_file() \
                or path.resolve().parent != (entry / "boot").resolve():
            return None

        def number(key: str) -> int | None:
            return meta.get(key) if isinstance(meta.get(key), int) else None

        def text(key: str) -> str | None:
            return meta.get(key) if isinstance(meta.get(key), str) else None

        return Kernel(arch=arch, path=path, package=str(meta["package"]),
                      version=str(meta["version"]), source="debian", sha256=text("kernel_sha256"),
                      size=number("kernel_size"), release=name,
                      config_sha256=text("config_sha256"), config_size=number("config_size"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _usable(k: Kernel | None) -> Kernel | None:
    return k if k is not None and damage(k) is None else None


def _newest(arch: str, cache_dir: str | os.PathLike[str] | None, version: str | None,
            name: str = DEFAULT) -> Kernel | None:
    """The complete cache entry of release ``name`` of that version, or (no version) its
    newest one, unchecked."""
    rdir = release_dir(arch, name, cache_dir)
    if version is not None:
        if "/" in version or version.startswith("."):
            raise UserError(f"bad kernel package version {version!r}")
        return _load_entry(rdir / version, arch, name)
    try:
        entries = [e for e in rdir.iterdir() if not e.name.startswith(".") and e.name != APT_DIR]
    except OSError:
        return None
    found = [k for k in (_load_entry(e, arch, name) for e in entries) if k is not None]
    if not found:
        return None
    return max(found, key=lambda k: version_key(k.version or ""))


def cached(arch: str, *, cache_dir: str | os.PathLike[str] | None = None,
           version: str | None = None, release: str | None = None) -> Kernel | None:
    """The cached kernel of release ``release`` (None: the default) of that version, or (no
    version) its newest cached one, when its file is the package's (:func:`damage`); None
    if none is, or the newest is not."""
    return _usable(_newest(arch, cache_dir, version, release_of(release, arch).name))


def release_of(name: str | None, arch: str) -> Release:
    """The release ``name`` (None: the default) for ``arch``: UserError when the lab does
    not know it or the arch lacks it (kcross.lab.releases)."""
    return release(name, check_arch(arch))


def remove_stale_tmp(adir: Path) -> None:
    now = time.time()
    with contextlib.suppress(OSError):
        for e in adir.iterdir():
            if e.name.startswith(TMP_PREFIX):
                with contextlib.suppress(OSError):
                    if now - e.stat().st_mtime > STALE_TMP_SECONDS:
                        shutil.rmtree(e, ignore_errors=True)


@contextlib.contextmanager
def arch_lock(adir: Path) -> Iterator[None]:
    """One fetch per arch and cache at a time (apt's own lock would fail the second one)."""
    with open(adir / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------
# apt

# The programs a fetch runs, and their Debian packages.
FETCH_TOOLS = {"apt-get": "apt", "apt-cache": "apt", "dpkg": "dpkg"}


def missing_tools() -> list[tuple[str, tuple[str, ...]]]:
    """The programs a fetch needs that this host lacks: (program, its Debian packages)."""
    return [(name, (package,)) for name, package in FETCH_TOOLS.items() if shutil.which(name) is None]


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise LabError(f"{name} not found: the lab fetches Debian's kernel package with it "
                       f"(install {FETCH_TOOLS[name]}, or pass --kernel PATH)")
    return path


def _last_message(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for prefix in ("E:", "W:", "Err:"):
        hits = [ln for ln in lines if ln.startswith(prefix)]
        if hits:
            return hits[0]
    return lines[-1] if lines else "no message"


def _apt(argv: list[str], conf: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, APT_CONFIG=str(conf), LC_ALL="C", DEBIAN_FRONTEND="noninteractive")
    try:
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=APT_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise LabError(f"{' '.join(argv[:2])} did not finish within {APT_TIMEOUT} s") from None
    except OSError as e:
        raise LabError(f"cannot run {argv[0]}: {e.strerror or e}") from None


def update(apt_get: str, conf: Path, apt_dir: Path, source: AptSource, suite: str = SUITE,
           arch: str | None = None) -> None:
    """``apt-get update`` of the private configuration.  UserError when the mirror does not
    serve ``suite`` (no Release file) or its Release lists no packages for ``arch``; LabError
    when the registry cannot be reached."""
    r = _apt([apt_get, "-q", "update", "--error-on=any"], conf)
    lists = apt_dir / "lists"
    has_packages = any(p.name.endswith(("_Packages", "_Packages.gz", "_Packages.xz", "_Packages.lz4"))
                       for p in lists.iterdir()) if lists.is_dir() else False
    if r.returncode != 0 and "does not have a Release file" in r.stderr:
        raise UserError(f"the mirror {source.uri} (from {source.origin}) does not serve Debian "
                        f"{suite}: it has no dists/{suite}/Release file")
    if r.returncode == 0 and not has_packages and arch is not None:
        listed = release_architectures(lists, suite)
        if listed is not None and debian_arch(arch) not in listed:
            raise UserError(f"the mirror's Debian {suite} has no {debian_arch(arch)} packages (its "
                            f"Release file lists {', '.join(listed) or 'none'}): no {arch} kernel")
    if r.returncode != 0 or not has_packages:
        raise LabError(f"cannot reach the package registry ({source.uri} {suite} {COMPONENT}, from "
                       f"{source.origin}): apt-get update failed: {_last_message(r.stderr)}; the lab "
                       "needs the registry to fetch the kernel package (or pass --kernel PATH)")


def release_architectures(lists: Path, suite: str) -> list[str] | None:
    """The ``Architectures`` a suite's Release file (as APT fetched it into ``lists``)
    names, or None when there is none to read."""
    try:
        files = sorted(lists.glob(f"*_dists_{suite}_*Release"))
        for f in files:
            for line in f.read_text(errors="replace").splitlines():
                if line.startswith("Architectures:"):
                    return line.partition(":")[2].split()
    except OSError:
        return None
    return None


def _stanzas(text: str) -> list[dict[str, str]]:
    """The stanzas of ``apt-cache show`` output (a Packages index's form), each its fields."""
    found: list[dict[str, str]] = []
    fields: dict[str, str] = {}
    key = None
    for line in text.splitlines() + [""]:
        if not line.strip():
            if fields:
                found.append(fields)
            fields, key = {}, None
            continue
        if line[0] in " \t" and key:
            fields[key] += "\n" + line.strip()
            continue
        k, _, v = line.partition(":")
        key = k.strip()
        fields[key] = v.strip()
    return found


def show_package(apt_cache: str, conf: Path, package: str, suite: str = SUITE) -> dict[str, str]:
    """The index's stanza of ``package`` (its candidate version; ``package=version`` for that
    one)."""
    r = _apt([apt_cache, "show", "--no-all-versions", package], conf)
    found = _stanzas(r.stdout) if r.returncode == 0 else []
    if not found:
        raise LabError(f"the registry's {suite} {COMPONENT} has no package {package}: "
                       f"{_last_message(r.stderr)}")
    return found[0]


@dataclass(frozen=True)
class Deb:
    """One .deb of a kernel: its package, version and the SHA-256 the index names."""

    package: str
    version: str
    sha256: str
    size: int | None = None


@dataclass(frozen=True)
class Candidate:
    """A kernel the index lists: its image package (``linux-image-ABI``) and version, and
    the .debs that hold its kernel file and configuration (the release's layout)."""

    package: str
    version: str
    abi: str
    debs: tuple[Deb, ...]


def _deb(fields: dict[str, str], suite: str) -> Deb:
    name, version, sha256 = fields.get("Package", "?"), fields.get("Version", ""), \
        fields.get("SHA256", "").lower()
    if not version:
        raise LabError(f"the registry's {name} has no Version field")
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise LabError(f"the registry's {name} {version} has no SHA256 field in its index")
    size = fields.get("Size", "")
    return Deb(name, version, sha256, int(size) if size.isdigit() else None)


def _depends(fields: dict[str, str]) -> list[tuple[str, str | None]]:
    """(package, the version it must be when ``(= V)``) of each first alternative of Depends."""
    found = []
    for alternative in fields.get("Depends", "").split(","):
        first = alternative.split("|")[0].strip()
        m = re.match(r"^([^\s(:]+)(?::\S+)?\s*(?:\(\s*=\s*([^)\s]+)\s*\))?", first)
        if m:
            found.append((m[1], m[2]))
    return found


def image_pattern(arch: str) -> re.Pattern[str]:
    """The names of the arch's versioned kernel image packages (``linux-image-ABI``, ABI
    ending in the flavour; signed or ``-unsigned``)."""
    return re.compile(rf"^linux-image-(\d[\w.+~-]*-{re.escape(flavour(arch))})(?:-unsigned)?$")


def candidate(apt_cache: str, conf: Path, arch: str, rel: Release,
              image: dict[str, str]) -> Candidate:
    """The kernel of an image package's index stanza: the .debs its release's layout keeps
    the kernel file and configuration in (the image package itself, or, in sid's layout,
    the packages it depends on at its version)."""
    name, version = image.get("Package", ""), image.get("Version", "")
    m = image_pattern(arch).match(name)
    if m is None:
        raise LabError(f"{name} is not a {arch} kernel image package")
    abi = m[1]
    layout = rel.layout
    wanted = [layout.kernel_package.format(abi=abi), layout.config_package.format(abi=abi)]
    if layout == BOOT:
        wanted = [name]
    depends = dict(_depends(image))
    debs = []
    for package in dict.fromkeys(wanted):
        if package == name:
            debs.append(_deb(image, rel.suite))
            continue
        if package not in depends:
            raise LabError(f"{name} {version} does not depend on {package} (Depends: "
                           f"{image.get('Depends') or 'none'}): not the {layout.name} layout "
                           f"of Debian {rel.name}")
        at = depends[package] or version
        debs.append(_deb(show_package(apt_cache, conf, f"{package}={at}", rel.suite), rel.suite))
    return Candidate(name, version, abi, tuple(debs))


def resolve(apt_cache: str, conf: Path, arch: str, rel: Release | None = None) -> Candidate:
    """The kernel the metapackage ``linux-image-<flavour>`` depends on (the release's
    current one)."""
    rel = rel or release_of(None, arch)
    meta = f"linux-image-{flavour(arch)}"
    fields = show_package(apt_cache, conf, meta, rel.suite)
    pattern = image_pattern(arch)
    for name, _version in _depends(fields):
        if pattern.match(name):
            return candidate(apt_cache, conf, arch, rel, show_package(apt_cache, conf, name, rel.suite))
    raise LabError(f"{meta} depends on no versioned kernel image package (Depends: "
                   f"{fields.get('Depends') or 'none'})")


def listed(apt_cache: str, conf: Path, arch: str, rel: Release) -> list[Candidate]:
    """Every versioned kernel image package of the arch the index lists, newest first (a
    signed one before its -unsigned twin): where to look when the current one's .deb is not
    in the mirror's pool."""
    r = _apt([apt_cache, "pkgnames", "linux-image-"], conf)
    names = sorted(n for n in r.stdout.split() if image_pattern(arch).match(n)) \
        if r.returncode == 0 else []
    stanzas = []
    for name in names:
        shown = _apt([apt_cache, "show", name], conf)
        stanzas += _stanzas(shown.stdout) if shown.returncode == 0 else []
    stanzas.sort(key=lambda f: (version_key(f.get("Version", "")),
                                not f.get("Package", "").endswith("-unsigned")), reverse=True)
    found = []
    for fields in stanzas:
        try:
            found.append(candidate(apt_cache, conf, arch, rel, fields))
        except LabError:
            continue   # a listed package whose files are not all listed: not a candidate
    return found


def check_version(version: str) -> None:
    if not re.fullmatch(r"[0-9][A-Za-z0-9.+~:-]*", version):
        raise LabError(f"the registry gave an odd package version {version!r}")


class NotInPool(LabError):
    """The index lists a .deb the mirror's pool does not have (HTTP 404)."""


def download_deb(apt_get: str, conf: Path, directory: Path, package: str, version: str,
                 deb_sha256: str) -> Path:
    """``apt-get download package=version`` into ``directory``: the .deb, whose SHA-256 must
    be the one in the index APT verified (LabError otherwise; NotInPool when the mirror
    answers 404)."""
    r = _apt([apt_get, "-q", "download", f"{package}={version}"], conf, cwd=directory)
    debs = sorted(directory.glob("*.deb"))
    if r.returncode != 0 or len(debs) != 1:
        why = _last_message(r.stderr)
        if re.search(r"\b404\s+Not Found", r.stderr):
            raise NotInPool(f"apt-get download {package}={version} failed: the mirror's pool has "
                            f"no such file (404): {why}")
        raise LabError(f"apt-get download {package}={version} failed: {why}")
    got = file_sha256(debs[0])
    if got != deb_sha256:
        raise LabError(f"the downloaded {debs[0].name} is not the one the registry's index names "
                       f"(SHA-256 {got}, the index has {deb_sha256})")
    return debs[0]


def put_in_place(entry: Path, final: Path, tmp: Path) -> None:
    """Rename a complete cache entry to ``final``, in place of an entry of that name that is
    not usable (moved into ``tmp``, which the caller removes)."""
    if os.path.lexists(final):
        os.rename(final, tmp / "replaced")
    os.rename(entry, final)


def private_apt(adir: Path, arch: str, source: AptSource, apt_get: str,
                suite: str = SUITE) -> Path:
    """The private APT configuration under ``adir`` for ``suite`` and the arch, its lists
    updated (call with ``adir``'s lock held): its apt.conf."""
    apt_dir = adir / APT_DIR
    apt_dir.mkdir(exist_ok=True)
    keyring = resolve_keyring(source, apt_dir)
    conf = write_apt_config(apt_dir, arch, source, keyring, host_acquire_settings(), suite)
    update(apt_get, conf, apt_dir, source, suite, arch)
    return conf


def _extract(dpkg: str, deb: Path, tree: Path) -> None:
    try:
        x = subprocess.run([dpkg, "-x", str(deb), str(tree)], capture_output=True, text=True,
                           check=False, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise LabError(f"cannot run {dpkg}: {e.strerror or e}") from None
    if x.returncode != 0:
        raise LabError(f"dpkg -x {deb.name} failed: {_last_message(x.stderr)}")


def download_and_extract(apt_get: str, dpkg: str, conf: Path, adir: Path, arch: str,
                         chosen: Candidate, rel: Release | None = None) -> Kernel:
    """Download the .debs of ``chosen`` (each the one the index names), extract its kernel
    file and configuration into a temp dir (as ``boot/vmlinu[xz]-ABI`` and
    ``boot/config-ABI``, whatever the layout; a package's whole ``boot/`` when it has one),
    record what they are, rename the entry into place (in place of an entry of that version
    that is not usable).  Called with ``adir``'s lock held; NotInPool when a .deb is not in
    the mirror's pool (nothing is left)."""
    rel = rel or release_of(None, arch)
    check_version(chosen.version)
    final = adir / chosen.version
    kname = DEBIAN[arch][2]
    layout = rel.layout
    members = {"kernel": layout.kernel_member.format(abi=chosen.abi, kname=kname),
               "config": layout.config_member.format(abi=chosen.abi, kname=kname)}
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=adir))
    try:
        debs = []
        for i, wanted in enumerate(chosen.debs):
            dl = tmp / f"deb{i}"
            dl.mkdir()
            debs.append((wanted, download_deb(apt_get, conf, dl, wanted.package, wanted.version,
                                              wanted.sha256)))
        tree = tmp / "tree"
        for _wanted, deb in debs:
            _extract(dpkg, deb, tree)
        entry = tmp / "entry"
        entry.mkdir()
        if layout == BOOT:
            if not (tree / "boot").is_dir():
                raise LabError(f"{chosen.package} {chosen.version} has no boot/ directory")
            os.rename(tree / "boot", entry / "boot")  # only boot/ is kept: the modules are not needed
            kernels = sorted((entry / "boot").glob(f"{kname}-*"))
            if len(kernels) != 1:
                raise LabError(f"{chosen.package} {chosen.version} holds {len(kernels)} "
                               f"boot/{kname}-* files, expected one")
            kernel = kernels[0]
            config = entry / "boot" / f"config-{kernel.name[len(kname) + 1:]}"
        else:
            (entry / "boot").mkdir()
            kernel, config = entry / "boot" / f"{kname}-{chosen.abi}", entry / "boot" / f"config-{chosen.abi}"
            for what, path in (("kernel", kernel), ("config", config)):
                member = tree / members[what]
                if not member.is_file():
                    raise LabError(f"{chosen.package} {chosen.version}: no {members[what]} in "
                                   f"{', '.join(d.package for d in chosen.debs)}")
                os.rename(member, path)
        shutil.rmtree(tree, ignore_errors=True)
        with open(kernel, "rb") as f:
            problem = kernel_problem(f.read(4096), arch, kernel)
        if problem:
            raise LabError(f"{chosen.package} {chosen.version}: {members['kernel']} is not a {arch} "
                           f"kernel QEMU boots ({problem})")
        first, first_deb = debs[0]
        meta: dict[str, object] = {
            "arch": arch, "package": chosen.package, "version": chosen.version, "source": "debian",
            "release": rel.name, "suite": rel.suite, "layout": layout.name,
            "kernel": f"boot/{kernel.name}", "kernel_sha256": file_sha256(kernel),
            "kernel_size": kernel.stat().st_size, "kernel_member": members["kernel"],
            "deb": first_deb.name, "deb_size": first_deb.stat().st_size,
            "deb_sha256": first.sha256}
        if config.is_file():
            meta.update({"config": f"boot/{config.name}", "config_sha256": file_sha256(config),
                         "config_size": config.stat().st_size, "config_member": members["config"]})
        meta["debs"] = [{"package": d.package, "version": d.version, "deb": deb.name,
                         "size": deb.stat().st_size, "sha256": d.sha256} for d, deb in debs]
        meta["fetched"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        (entry / META).write_text(json.dumps(meta, indent=2) + "\n")
        put_in_place(entry, final, tmp)
    except OSError as e:
        raise LabError(f"cannot write the lab's kernel cache in {adir}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    k = _usable(_load_entry(final, arch, rel.name))
    if k is None:
        raise LabError(f"the kernel cache entry {final} is incomplete after fetching it")
    return k


# ---------------------------------------------------------------------------------------
# fetch

def fetch(arch: str, *, release: str | None = None,
          cache_dir: str | os.PathLike[str] | None = None, version: str | None = None,
          refresh: bool = False, etc_apt: str | os.PathLike[str] = "/etc/apt",
          say: Callable[[str], None] | None = None) -> Kernel:
    """The kernel of Debian ``release`` (None: bookworm) for ``arch`` (ppc64le, aarch64,
    x86_64), from the cache when there.

    ``version`` (a package version, e.g. ``6.1.153-1``) asks for that one: from the cache, else
    from the mirror when it is the mirror's current one.  Without it, the release's newest
    cached kernel, else (or with ``refresh``) the mirror's current one.  A cached kernel whose
    file is not the package's (:func:`damage`) is fetched again, and replaced.  Failures are
    LabError/UserError (one line).  ``say`` is told, in a line, what takes time (a download,
    and why) and a version taken in place of one the mirror's pool lacks.
    """
    rel = release_of(release, arch)
    tell = say or (lambda _line: None)
    if refresh:
        return _from_registry(arch, rel, cache_dir, version, refresh, Path(etc_apt), tell)
    k = _newest(arch, cache_dir, version, rel.name)
    if k is None:
        return _from_registry(arch, rel, cache_dir, version, refresh, Path(etc_apt), tell)
    wrong = damage(k)
    if wrong is None:
        return k
    tell(f"the cached {arch} kernel {k.package} {k.version} is not the package's file ({wrong}): "
         "fetching it again")
    try:
        return _from_registry(arch, rel, cache_dir, version, refresh, Path(etc_apt), tell)
    except LabError as e:
        again = f"kcross lab {arch}" + (f" --release {rel.name}" if rel.name != DEFAULT else "")
        raise LabError(f"the cached {arch} kernel {k.package} {k.version} is not the package's file "
                       f"({k.path}: {wrong}) and fetching it again failed: {e}; "
                       f"'{again} --refresh' replaces it") from None


def _from_registry(arch: str, rel: Release, cache_dir: str | os.PathLike[str] | None,
                   version: str | None, refresh: bool, etc: Path,
                   tell: Callable[[str], None]) -> Kernel:
    """The release's current kernel for ``arch`` (or the newest listed one the mirror's pool
    has), from the cache when a usable entry has it."""
    apt_get, apt_cache, dpkg = (tool(name) for name in FETCH_TOOLS)
    source = pick_source(host_sources(etc), etc, rel.suite)
    adir = release_dir(arch, rel.name, cache_dir)
    try:
        adir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise LabError(f"cannot create the lab's kernel cache {adir}: {e.strerror or e}") from None
    remove_stale_tmp(adir)
    with arch_lock(adir):
        if not refresh:  # a concurrent fetch may have filled it while we waited
            k = cached(arch, cache_dir=cache_dir, version=version, release=rel.name)
            if k is not None:
                return k
        conf = private_apt(adir, arch, source, apt_get, rel.suite)
        current = resolve(apt_cache, conf, arch, rel)
        if version is not None and version != current.version:
            raise LabError(f"kernel package version {version} for {arch} is not cached and the registry's "
                           f"{rel.suite} {COMPONENT} has {current.version} ({current.package})")

        def in_turn() -> Iterator[Candidate]:
            """The current kernel, then (asked only if its .deb is not in the pool, and no
            version was asked) the older ones the index lists, newest first."""
            yield current
            if version is None:
                yield from (c for c in listed(apt_cache, conf, arch, rel)
                            if version_key(c.version) < version_key(current.version))

        skipped: list[Candidate] = []
        for chosen in in_turn():
            k = _usable(_load_entry(adir / chosen.version, arch, rel.name))
            if k is not None:
                return k
            size = f"{sum(d.size or 0 for d in chosen.debs) / 1e6:.0f} MB"
            tell(f"downloading Debian's {arch} kernel {chosen.package} {chosen.version} from "
                 f"{source.uri}..." if rel.name == DEFAULT else
                 f"downloading the {arch} kernel of Debian {rel.name}, {chosen.package} "
                 f"{chosen.version} ({size}), from {source.uri}...")
            try:
                k = download_and_extract(apt_get, dpkg, conf, adir, arch, chosen, rel)
            except NotInPool:
                skipped.append(chosen)
                continue
            if skipped:
                tell(f"{', '.join(f'{c.package} {c.version}' for c in skipped)}: listed in "
                     f"{rel.suite}'s index but not in the mirror's pool (404); took {chosen.version}, "
                     "the newest listed version that downloads")
            return k
        if version is not None:
            raise LabError(f"kernel package {current.package} {version} for {arch} is listed in "
                           f"{rel.suite}'s index but not in the mirror's pool (404)")
        raise LabError(f"no {arch} kernel of Debian {rel.name} downloads from {source.uri}: the "
                       f"mirror's pool has none of the versions its index lists (404: "
                       f"{', '.join(c.version for c in skipped)})")
