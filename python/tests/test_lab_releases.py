"""``kcross lab ARCH --release NAME`` (issue 23): the releases' table, the two package
layouts, a version the mirror's pool lacks, the cache per release, the refusals, and the
kernel in the fingerprint.  Without network: the mirror's captured stanzas and member lists
(data/debian, README.md) are served by stand-ins for apt-get and apt-cache, with .debs built
from the member lists."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    DATA,
    SCHEMA_8_RUN_COLUMNS,
    SCHEMA_9_INDEX,
    SCHEMA_9_TABLE,
    assert_one_line_error,
    ruled_table,
)
from kcross import fingerprint as fields
from kcross.errors import LabError, UserError
from kcross.lab import kconfig
from kcross.lab import kernel as K
from kcross.lab import releases as R
from kcross.lab.session import kernel_identity
from test_lab_kernel import DEB822, PPC64LE_ELF, bzimage, elf_header, etc_apt, fake_entry, write

DEBIAN = DATA / "debian"

# ---------------------------------------------------------------- the table


def test_the_table_is_in_release_order_and_names_every_layout() -> None:
    assert R.NAMES == ("bullseye", "bookworm", "bookworm-backports", "trixie", "sid")
    assert R.DEFAULT == "bookworm" == K.SUITE
    lines = [r.line for r in R.RELEASES]
    assert lines == sorted(lines, key=fields.version_order)     # release order: kernels'
    assert [R.order(n) for n in R.NAMES] == list(range(len(R.NAMES)))
    assert {r.layout for r in R.RELEASES} == {R.BOOT, R.MODULES}
    assert R.release("sid").layout is R.MODULES and R.release().name == "bookworm"
    for r in R.RELEASES:
        assert set(r.arches) <= set(K.ARCHES) and r.suite
    assert "ppc64le" not in R.release("bullseye").arches


@pytest.mark.parametrize(("name", "arch", "message"), [
    ("trixy", None, "--release 'trixy': no such Debian release (did you mean trixie? the lab "
                    "knows: bullseye, bookworm, bookworm-backports, trixie, sid)"),
    ("buster", None, "--release 'buster': no such Debian release (the lab knows: bullseye,"),
    ("bullseye", "ppc64le", "--release bullseye: Debian bullseye has no ppc64le kernel on the "
                            "mirror (its arches: aarch64, x86_64)"),
])
def test_a_release_the_lab_or_the_arch_lacks_is_one_line(name: str, arch: str | None,
                                                         message: str) -> None:
    with pytest.raises(UserError) as e:
        R.release(name, arch)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_dpkg_version_order() -> None:
    listed = ["7.2.13-1", "6.12.95-1", "6.1.10-1", "6.12.95-1~bpo12+1", "6.1.9-1", "5.10.223-1",
              "6.12.117-1", "6.12.107-1", "1:0.1-1"]
    assert sorted(listed, key=K.version_key) == [
        "5.10.223-1", "6.1.9-1", "6.1.10-1", "6.12.95-1~bpo12+1", "6.12.95-1", "6.12.107-1",
        "6.12.117-1", "7.2.13-1", "1:0.1-1"]


# ---------------------------------------------------------------- the captured indexes


def stanzas(name: str) -> list[dict[str, str]]:
    """A captured .Packages file's stanzas (no continuation lines: descriptions were cut)."""
    found = []
    for block in (DEBIAN / name).read_text().split("\n\n"):
        fields_ = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields_:
            found.append(fields_)
    return found


def members(name: str) -> list[tuple[str, str, str | None]]:
    """A captured member list (``dpkg-deb -c``): (kind, path, symlink target)."""
    found = []
    for line in (DEBIAN / f"{name}.contents").read_text().splitlines():
        perms, _owner, _size, _date, _time, rest = line.split(None, 5)
        path, _, target = rest.partition(" -> ")
        found.append((perms[0], path.removeprefix("./"), target or None))
    return found


def test_the_captured_layouts_are_what_the_table_says() -> None:
    """sid's image package is a stub; linux-binary holds the kernel, linux-base the
    configuration (the table's MODULES); trixie's image package holds both in boot/."""
    abi = "7.2.13+deb14-amd64"
    files = {name: [p for kind, p, _ in members(name) if kind == "-"]
             for name in (f"linux-image-{abi}", f"linux-binary-{abi}", f"linux-base-{abi}")}
    assert not any(p.startswith(("boot/", "usr/lib/modules/")) for p in files[f"linux-image-{abi}"])
    assert R.MODULES.kernel_member.format(abi=abi) in files[R.MODULES.kernel_package.format(abi=abi)]
    assert R.MODULES.config_member.format(abi=abi) in files[R.MODULES.config_package.format(abi=abi)]
    old = "6.12.107+deb13-powerpc64le"
    boot = [p for kind, p, _ in members(f"linux-image-{old}") if kind == "-"]
    assert R.BOOT.kernel_member.format(abi=old, kname="vmlinux") in boot
    assert R.BOOT.config_member.format(abi=old, kname="vmlinux") in boot
    sid = {s["Package"]: s for s in stanzas("sid-amd64.Packages")}
    assert int(sid[f"linux-image-{abi}"]["Size"]) < 4096        # the ~2 kB stub
    assert dict(K._depends(sid[f"linux-image-{abi}"]))[f"linux-binary-{abi}"] == "7.2.13-1"


# ---------------------------------------------------------------- a registry of stand-ins

FAKE_APT = """#!{python}
import json, os, re, shutil, sys
reg = json.load(open(os.environ["FAKE_REGISTRY"]))
prog, args = os.path.basename(sys.argv[0]), sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join([prog, *args]) + "\\n")

def key(v):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\\d+)", v)]

if prog == "apt-get" and "update" in args:
    if reg["no_release"]:
        print("Err:2 http://mirror.example/debian " + reg["suite"] + " Release", file=sys.stderr)
        print("E: The repository 'http://mirror.example/debian " + reg["suite"] +
              " Release' does not have a Release file.", file=sys.stderr)
        sys.exit(100)
    conf = open(os.environ["APT_CONFIG"]).read()
    lists = re.search(r'^Dir::State::Lists "(.*)";$', conf, re.M).group(1)
    base = lists + "/mirror.example_debian_dists_" + reg["suite"]
    open(base + "_InRelease", "w").write("Suite: x\\nArchitectures: all " +
                                         " ".join(reg["arches"]) + "\\n")
    if reg["arch"] in reg["arches"]:
        open(base + "_main_binary-" + reg["arch"] + "_Packages", "w").write("")
    sys.exit(0)
if prog == "apt-get" and "download" in args:
    wanted = args[-1]
    if wanted in reg["pool"]:
        shutil.copy(reg["pool"][wanted], os.getcwd())
        sys.exit(0)
    print("Err:1 http://mirror.example/debian sid/main " + wanted, file=sys.stderr)
    print("  404  Not Found [IP: 192.0.2.1 80]", file=sys.stderr)
    print("E: Failed to fetch http://mirror.example/debian/pool/main/l/x.deb  404  Not Found "
          "[IP: 192.0.2.1 80]", file=sys.stderr)
    sys.exit(100)
if prog == "apt-cache" and args[0] == "pkgnames":
    print("\\n".join(sorted({s["Package"] for s in reg["stanzas"]
                            if s["Package"].startswith(args[1])})))
    sys.exit(0)
if prog == "apt-cache" and args[0] == "show":
    name, _, version = args[-1].partition("=")
    found = sorted((s for s in reg["stanzas"] if s["Package"] == name
                    and (not version or s["Version"] == version)),
                   key=lambda s: key(s["Version"]), reverse=True)
    if not found:
        print("E: No packages found", file=sys.stderr)
        sys.exit(100)
    for s in found[:1] if "--no-all-versions" in args else found:
        print("".join(k + ": " + v + "\\n" for k, v in s.items()))
    sys.exit(0)
sys.exit(1)
"""

SID_KERNEL = bytearray(bzimage())
struct.pack_into("<H", SID_KERNEL, 0x20E, 0x100)      # kernel_version at 0x300
SID_VERSION = "7.2.13+deb14-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 7.2.13-1"
SID_KERNEL[0x300:0x300 + len(SID_VERSION) + 1] = SID_VERSION.encode() + b"\0"
TRIXIE_VERSION = "6.12.107+deb13-powerpc64le (debian-kernel@lists.debian.org) (gcc-14) #1 SMP"
TRIXIE_KERNEL = PPC64LE_ELF + b"Linux version " + TRIXIE_VERSION.encode() + b"\n\0"
CONFIG = b"CONFIG_RSEQ=y\nCONFIG_BLK_DEV_INITRD=y\n"


def build_deb(name: str, stanza: dict[str, str], kernel: bytes, out: Path) -> Path:
    """The .deb of a captured member list: its files (the kernel given ``kernel``, the
    configuration CONFIG, the rest a byte), directories and symlinks."""
    root = out / f"root-{name}"
    for kind, path, target in members(name):
        where = root / path
        if kind == "d":
            where.mkdir(parents=True, exist_ok=True)
        elif kind == "l":
            where.parent.mkdir(parents=True, exist_ok=True)
            where.symlink_to(target or "x")
        else:
            base = where.name
            data = kernel if base == "vmlinuz" or base.startswith(("vmlinux-", "vmlinuz-")) else \
                CONFIG if base == "config" or base.startswith("config-") else b"x"
            write(where, data)
    (root / "DEBIAN").mkdir(parents=True, exist_ok=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {stanza['Package']}\nVersion: {stanza['Version']}\nArchitecture: "
        f"{stanza['Architecture']}\nMaintainer: t <t@example.invalid>\nDescription: x\n")
    deb = out / f"{stanza['Package']}_{stanza['Version']}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True,
                   capture_output=True)
    return deb


class Registry:
    """The stand-ins' registry: the stanzas (their SHA256 and Size those of the built
    .debs), the pool (package=version -> .deb; one left out answers 404), the suite and the
    arches its Release file lists."""

    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch, packages: str, arch: str,
                 suite: str, built: dict[str, bytes], missing: tuple[str, ...] = ()) -> None:
        if shutil.which("dpkg") is None or shutil.which("dpkg-deb") is None:
            pytest.skip("dpkg not installed")
        self.path, self.log, self.cache = tmp / "registry.json", tmp / "log", tmp / "cache"
        listed, pool = [], {}
        for stanza in stanzas(packages):
            name = stanza["Package"]
            if name in built:
                deb = build_deb(name, stanza, built[name], tmp)
                stanza = {**stanza, "SHA256": hashlib.sha256(deb.read_bytes()).hexdigest(),
                          "Size": str(deb.stat().st_size)}
                if name not in missing:
                    pool[f"{name}={stanza['Version']}"] = str(deb)
            listed.append(stanza)
        self.data: dict[str, Any] = {"stanzas": listed, "pool": pool, "suite": suite,
                                     "arch": arch, "arches": [arch], "no_release": False}
        self.save()
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for name in ("apt-get", "apt-cache"):
            (bin_dir / name).write_text(FAKE_APT.replace("{python}", sys.executable))
            (bin_dir / name).chmod(0o755)
        for name in ("dpkg", "dpkg-deb", "tar", "rm"):
            if shutil.which(name):
                (bin_dir / name).symlink_to(shutil.which(name))   # type: ignore[arg-type]
        monkeypatch.setenv("PATH", str(bin_dir))
        monkeypatch.setenv("FAKE_REGISTRY", str(self.path))
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        self.etc = etc_apt(tmp, parts={"debian.sources": DEB822})

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data))

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def fetch(self, arch: str, release: str | None, said: list[str] | None = None,
              **kw: Any) -> K.Kernel:
        return K.fetch(arch, release=release, cache_dir=self.cache, etc_apt=self.etc,
                       say=(said.append if said is not None else None), **kw)


SID_ABI = "7.2.13+deb14-amd64"


@pytest.fixture
def sid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    return Registry(tmp_path, monkeypatch, "sid-amd64.Packages", "amd64", "sid",
                    {f"linux-binary-{SID_ABI}": bytes(SID_KERNEL), f"linux-base-{SID_ABI}": b""})


TRIXIE = ("linux-image-6.12.117+deb13-powerpc64le", "linux-image-6.12.107+deb13-powerpc64le")


@pytest.fixture
def trixie(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    """trixie ppc64el as the mirror had it: its current kernel's .deb is not in the pool."""
    return Registry(tmp_path, monkeypatch, "trixie-ppc64el.Packages", "ppc64el", "trixie",
                    {TRIXIE[1]: TRIXIE_KERNEL}, missing=(TRIXIE[0],))


# ---------------------------------------------------------------- sid's layout


def test_sid_kernel_from_its_binary_and_base_packages(sid: Registry) -> None:
    k = sid.fetch("x86_64", "sid")
    entry = sid.cache / "x86_64" / "sid" / "7.2.13-1"
    assert (k.package, k.version, k.release, k.source) == \
        (f"linux-image-{SID_ABI}", "7.2.13-1", "sid", "debian")
    assert k.path == entry / "boot" / f"vmlinuz-{SID_ABI}" and k.path.read_bytes() == SID_KERNEL
    assert k.config == entry / "boot" / f"config-{SID_ABI}" and k.config.read_bytes() == CONFIG
    assert sorted(p.name for p in entry.iterdir()) == ["boot", "kernel.json"]
    record = json.loads((entry / "kernel.json").read_text())
    assert (record["release"], record["suite"], record["layout"]) == ("sid", "sid", "usr/lib/modules")
    assert record["kernel_member"] == f"usr/lib/modules/{SID_ABI}/vmlinuz"
    assert [d["package"] for d in record["debs"]] == [f"linux-binary-{SID_ABI}",
                                                      f"linux-base-{SID_ABI}"]
    assert record["config_sha256"] == hashlib.sha256(CONFIG).hexdigest() == k.config_sha256
    # the stub is never downloaded; the source line is sid's, on this machine's mirror
    downloads = [ln for ln in sid.lines() if " download " in ln]
    assert downloads == [f"apt-get -q download linux-binary-{SID_ABI}=7.2.13-1",
                         f"apt-get -q download linux-base-{SID_ABI}=7.2.13-1"]
    assert (sid.cache / "x86_64" / "sid" / "apt" / "sources.list").read_text() == (
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://mirror.example/debian sid main\n")
    # again: from the cache, no apt at all
    sid.log.unlink()
    assert sid.fetch("x86_64", "sid") == k and sid.lines() == []


def test_a_changed_configuration_is_fetched_again(sid: Registry) -> None:
    k = sid.fetch("x86_64", "sid")
    assert k.config is not None
    k.config.write_bytes(CONFIG + b"CONFIG_X=y\n")
    assert K.damage(k) is not None and K.cached("x86_64", cache_dir=sid.cache, release="sid") is None
    again = sid.fetch("x86_64", "sid")
    assert again.config is not None and again.config.read_bytes() == CONFIG


def test_an_interrupted_download_of_the_second_deb_leaves_no_entry(
        sid: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    real = K._apt

    def interrupted(argv: list[str], conf: Path, cwd: Path | None = None) -> Any:
        if "download" in argv and argv[-1].startswith("linux-base-"):
            raise KeyboardInterrupt
        return real(argv, conf, cwd)

    monkeypatch.setattr(K, "_apt", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sid.fetch("x86_64", "sid")
    assert sorted(p.name for p in (sid.cache / "x86_64" / "sid").iterdir()) == [".lock", "apt"]
    monkeypatch.setattr(K, "_apt", real)
    assert sid.fetch("x86_64", "sid").version == "7.2.13-1"


# ---------------------------------------------------------------- a version the pool lacks


def test_a_listed_version_the_pool_lacks_gives_the_newest_that_downloads(trixie: Registry) -> None:
    said: list[str] = []
    k = trixie.fetch("ppc64le", "trixie", said)
    assert (k.package, k.version, k.release) == (TRIXIE[1], "6.12.107-1", "trixie")
    assert k.path.read_bytes() == TRIXIE_KERNEL
    notes = [s for s in said if "404" in s]
    assert notes == [f"{TRIXIE[0]} 6.12.117-1: listed in trixie's index but not in the mirror's "
                     "pool (404); took 6.12.107-1, the newest listed version that downloads"]
    assert sorted(p.name for p in (trixie.cache / "ppc64le" / "trixie").iterdir()) == \
        [".lock", "6.12.107-1", "apt"]


def test_no_listed_version_downloads_is_one_line(trixie: Registry) -> None:
    trixie.data["pool"] = {}
    trixie.save()
    with pytest.raises(LabError) as e:
        trixie.fetch("ppc64le", "trixie")
    assert str(e.value) == ("no ppc64le kernel of Debian trixie downloads from "
                            "http://mirror.example/debian: the mirror's pool has none of the "
                            "versions its index lists (404: 6.12.117-1, 6.12.107-1)")
    assert K.cached("ppc64le", cache_dir=trixie.cache, release="trixie") is None


def test_a_version_asked_is_not_replaced_by_another(trixie: Registry) -> None:
    with pytest.raises(LabError, match=r"^kernel package linux-image-6\.12\.117\+deb13-powerpc64le "
                                       r"6\.12\.117-1 for ppc64le is listed in trixie's index but "
                                       r"not in the mirror's pool \(404\)$"):
        trixie.fetch("ppc64le", "trixie", version="6.12.117-1")


# ---------------------------------------------------------------- the mirror's Release


def test_a_suite_the_mirror_does_not_serve_is_one_line_before_any_download(sid: Registry) -> None:
    sid.data["no_release"] = True
    sid.save()
    with pytest.raises(UserError) as e:
        sid.fetch("x86_64", "sid")
    assert str(e.value) == ("the mirror http://mirror.example/debian (from "
                            f"{sid.etc}/sources.list.d/debian.sources) does not serve Debian sid: "
                            "it has no dists/sid/Release file")
    assert not any(" download " in ln for ln in sid.lines())
    assert K.cached("x86_64", cache_dir=sid.cache, release="sid") is None


def test_a_release_file_without_the_arch_is_one_line(sid: Registry) -> None:
    sid.data["arches"] = ["arm64", "i386"]
    sid.save()
    with pytest.raises(UserError, match=r"^the mirror's Debian sid has no amd64 packages \(its "
                                        r"Release file lists all, arm64, i386\): no x86_64 kernel$"):
        sid.fetch("x86_64", "sid")


def test_the_mirror_is_this_machines_for_every_release(tmp_path: Path) -> None:
    """No sid entry on this machine: its bookworm entry's mirror and keyring, with sid."""
    sources = K.parse_deb822(DEB822)
    picked = K.pick_source(sources, tmp_path, "sid")
    assert (picked.uri, picked.suite) == ("http://mirror.example/debian", "bookworm")
    assert K.source_line(picked, "x86_64", "/k.gpg", "sid") == \
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian sid main\n"
    with pytest.raises(LabError, match=r"^no 'sid main' entry in this machine's apt sources \(nor "
                                       r"one of another Debian release: bullseye, bookworm, "):
        K.pick_source([], tmp_path, "sid")


# ---------------------------------------------------------------- the cache per release


def test_the_default_stays_bookworms_whatever_else_is_cached(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    bookworm = fake_entry(cache, "ppc64le", "6.1.10-1")          # cached before releases
    sid_entry = fake_entry(cache / "ppc64le", "sid", "7.2.13-1")  # <arch>/sid/<version>
    record = json.loads((sid_entry / "kernel.json").read_text())
    record["arch"], record["release"] = "ppc64le", "sid"
    (sid_entry / "kernel.json").write_text(json.dumps(record))
    # an entry in bookworm's place that records another release is not bookworm's
    stray = fake_entry(cache, "ppc64le", "9.9-1")
    meta = json.loads((stray / "kernel.json").read_text())
    (stray / "kernel.json").write_text(json.dumps({**meta, "release": "trixie"}))
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))            # no apt: from the cache only
    k = K.fetch("ppc64le", cache_dir=cache)
    assert (k.version, k.release, k.path.parents[1]) == ("6.1.10-1", "bookworm", bookworm)
    s = K.fetch("ppc64le", release="sid", cache_dir=cache)
    assert (s.version, s.release, s.path.parents[1]) == ("7.2.13-1", "sid", sid_entry)
    assert K.cached("ppc64le", cache_dir=cache, release="trixie") is None
    assert K.cached("ppc64le", cache_dir=cache, release="bookworm") == k
    with pytest.raises(UserError, match="did you mean trixie"):
        K.cached("ppc64le", cache_dir=cache, release="trixi")


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize(("args", "message"), [
    (["lab", "ppc64le", "--release", "bullseye"],
     "--release bullseye: Debian bullseye has no ppc64le kernel on the mirror"),
    (["lab", "x86_64", "--release", "trixi"], "(did you mean trixie? the lab knows: bullseye,"),
    (["lab", "x86_64", "--release", "sid", "--kernel", "/no/vmlinuz"],
     "--release sid boots Debian's kernel: not with --kernel (which boots yours)"),
    (["lava", "job", "aarch64", "-o", "DIR", "--release", "sidd"],
     "--release 'sidd': no such Debian release (did you mean sid?"),
    (["lava", "job", "x86_64", "-o", "DIR", "--release", "sid", "--kernel-url", "http://k/bz"],
     "--release sid boots Debian's kernel: not with --kernel-url"),
])
def test_bad_release_input_is_one_line_before_anything(kcross, db_path: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                       args: list[str], message: str) -> None:
    args = [str(tmp_path / "out") if a == "DIR" else a for a in args]
    assert_one_line_error(kcross(*args, extra_env={"PATH": str(tmp_path)}), 2, message)
    assert not db_path.exists() and not (tmp_path / "out").exists()
    assert not (tmp_path / "home" / ".cache").exists()


# ---------------------------------------------------------------- the kernel in the fingerprint


def test_a_debian_kernels_fingerprint(sid: Registry) -> None:
    k = sid.fetch("x86_64", "sid")
    group = kernel_identity(k)
    assert group == {"source": "debian", "package": f"linux-image-{SID_ABI}", "version": "7.2.13-1",
                     "release": "sid", "path": str(k.path),
                     "sha256": hashlib.sha256(SID_KERNEL).hexdigest(),
                     "config_sha256": hashlib.sha256(CONFIG).hexdigest(),
                     "version_string": SID_VERSION}


def test_a_files_fingerprint_says_what_is_known_of_it(tmp_path: Path) -> None:
    """--kernel FILE: its SHA-256, its version string, its configuration's SHA-256 when
    one is found (beside it, in the build tree, or embedded), else null."""
    image = write(tmp_path / "tree" / "arch" / "powerpc" / "boot" / "vmlinux", TRIXIE_KERNEL)
    k = K.Kernel.from_file(image, "ppc64le")
    group = kernel_identity(k)
    assert (group["source"], group["package"], group["version"], group["release"]) == \
        ("file", None, None, None)
    assert group["version_string"] == TRIXIE_VERSION and group["config_sha256"] is None
    write(tmp_path / "tree" / ".config", CONFIG)
    assert kernel_identity(k)["config_sha256"] == hashlib.sha256(CONFIG).hexdigest()
    embedded = write(tmp_path / "own" / "vmlinux", TRIXIE_KERNEL + kconfig.IKCFG_START
                     + gzip.compress(CONFIG) + kconfig.IKCFG_END)
    group = kernel_identity(K.Kernel.from_file(embedded, "ppc64le"))
    assert group["config_sha256"] == hashlib.sha256(CONFIG).hexdigest()
    bare = write(tmp_path / "bare" / "vmlinux", elf_header(K.EM_PPC64))
    assert kernel_identity(K.Kernel.from_file(bare, "ppc64le"))["version_string"] is None


def test_a_gzip_compressed_arm64_images_version_string(tmp_path: Path) -> None:
    head = bytearray(4096)
    head[0x38:0x3C] = b"ARM\x64"
    data = bytes(head) + b"Linux version 6.13.0-rc1 (me@host) #1 SMP\n\0"
    image = tmp_path / "Image.gz"
    image.write_bytes(gzip.compress(data))
    assert K.version_string(image) == "6.13.0-rc1 (me@host) #1 SMP"


# ---------------------------------------------------------------- one lab machine, two kernels


def lab_fingerprint() -> dict[str, Any]:
    line = next(ln for ln in (DATA / "lab-ppc64le-sc.jsonl").read_text().splitlines()
                if ln.startswith("{"))
    return json.loads(line)


def other_kernel(fp: dict[str, Any], release: str, version: str, abi: str) -> dict[str, Any]:
    """``fp`` booted with another Debian kernel: its lab.kernel and what the guest reads of
    it changed (as between bookworm's and trixie's, seen on a real boot)."""
    fp = fields.LAB_KERNEL.put(fp, {**fields.LAB_KERNEL.members(fp), "release": release,
                                    "version": version, "package": f"linux-image-{abi}",
                                    "path": f"/cache/{release}/{version}/boot/vmlinux-{abi}",
                                    "sha256": hashlib.sha256(abi.encode()).hexdigest(),
                                    "config_sha256": "c" * 64, "version_string": f"{abi} #1"})
    for field, value in ((fields.KERNEL_RELEASE, abi), (fields.KERNEL_VERSION, f"#1 SMP {version}"),
                         (fields.RSEQ_FEATURE_SIZE, 33), (fields.AUXV_RSEQ_FEATURE_SIZE, 33),
                         (fields.AUXV_RSEQ_ALIGN, 64), (fields.RSEQ_ALIGN, 64),
                         (fields.SMT_CONTROL, "notsupported"), (fields.NOHZ_FULL, ""),
                         (fields.CPU_FLAGS, ["fpu"]),
                         (fields.VULNERABILITIES, {**fields.VULNERABILITIES.members(fp),
                                                   "ghostwrite": "Not affected"})):
        fp = field.put(fp, value)
    return fp


def test_two_kernels_are_one_lab_machine_but_not_one_real_machine() -> None:
    a = lab_fingerprint()
    b = other_kernel(a, "trixie", "6.12.107-1", "6.12.107+deb13-powerpc64le")
    assert fields.identity(a) == fields.identity(b)
    assert fields.kernel_label(a) == "Debian 6.1.176-1"          # made before releases
    assert fields.kernel_label(b) == "trixie 6.12.107-1"
    assert fields.kernel_order(a) < fields.kernel_order(b)
    # without the lab group (a real machine) the same change is another machine
    real_a, real_b = ({k: v for k, v in fp.items() if k != "lab"} for fp in (a, b))
    assert fields.identity(real_a) != fields.identity(real_b)
    assert fields.kernel_label(real_a) is None
    # what the lab sets up is still the lab machine: another CPU model is another machine
    assert fields.identity(fields.LAB_CPU.put(b, "power10")) != fields.identity(b)


def test_a_files_label_and_order() -> None:
    fp = fields.LAB_KERNEL.put(lab_fingerprint(), {
        "source": "file", "package": None, "version": None, "path": "/k", "sha256": "ab" * 32,
        "version_string": "6.13.0-rc1 (me@host) #1 SMP"})
    assert fields.kernel_label(fp) == "6.13.0-rc1 abababab"
    assert fields.kernel_order(fp) > fields.kernel_order(lab_fingerprint())   # 6.13 after 6.1


# ---------------------------------------------------------------- stored: one machine, a series

TRIXIE_ABI = "6.12.107+deb13-powerpc64le"
MORE = 38.0     # trixie's getppid-inline over bookworm's on ppc64le, as a real boot counted it


def two_kernels(tmp_path: Path) -> tuple[Path, Path]:
    """The captured bookworm lab run, and the same run as if booted with trixie's kernel:
    its fingerprint's kernel axis changed, getppid-inline MORE instructions dearer."""
    records = [json.loads(line) for line in (DATA / "lab-ppc64le-sc.jsonl").read_text().splitlines()
               if line.startswith("{")]
    other = []
    for record in records:
        if record["type"] == "fingerprint":
            record = other_kernel(record, "trixie", "6.12.107-1", TRIXIE_ABI)
            hz = fields.TIMER_HZ.of(record)
        elif record["type"] == "result" and record["name"] == "getppid-inline":
            record = {**record, "samples": [s + MORE for s in record["samples"]],
                      "ticks": [t + MORE * hz / 1e9 for t in record["ticks"]]}
        other.append(record)
    paths = tmp_path / "bookworm.jsonl", tmp_path / "trixie.jsonl"
    for path, found in zip(paths, (records, other), strict=True):
        path.write_text("".join(json.dumps(r) + "\n" for r in found))
    return paths


def stored_series(kcross, tmp_path: Path, db: str | None = None) -> str:  # type: ignore[no-untyped-def]
    """A store (``db``, else a SQLite file) holding trixie's run (run 1) and bookworm's (run
    2) of one lab machine."""
    bookworm, trixie = two_kernels(tmp_path)
    db = db or str(tmp_path / "k.db")
    for path in (trixie, bookworm):
        proc = kcross("import", str(path), "--db", db)
        assert proc.returncode == 0, proc.stderr
    return db


def test_two_kernels_are_one_machine_in_the_store_and_compared_exactly(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = stored_series(kcross, tmp_path)
    from conftest import query

    assert query(Path(db), "SELECT count(*) FROM machines") == [(1,)]
    assert query(Path(db), "SELECT DISTINCT machine_id FROM runs") == [(1,)]
    runs = [json.loads(line) for line in kcross("runs", "--json", "--db", db).stdout.splitlines()]
    assert {r["id"]: r["kernel_release"] for r in runs} == {1: TRIXIE_ABI, 2: "6.1.0-50-powerpc64le"}
    proc = kcross("compare", "2", "1", "--db", db)
    assert proc.returncode == 0 and "fingerprints differ" not in proc.stderr, proc.stderr
    heads = ruled_table(proc.stdout)[0]
    assert "run 2 (Debian 6.1.176-1) (base)" in heads and "run 1 (trixie 6.12.107-1)" in heads
    (record,) = [json.loads(line) for line in
                 kcross("compare", "2", "1", "--json", "--db", db).stdout.splitlines()]
    verdicts = {r["name"]: r["verdict"] for r in record["rows"]}
    assert all(v["method"] == "exact" and v["p"] is None for v in verdicts.values())
    changed = {n: v for n, v in verdicts.items() if v["significant"]}
    assert list(changed) == ["syscall/getppid-inline"]
    inline = changed["syscall/getppid-inline"]
    assert inline["category"] == "higher"
    assert inline["median_b"] - inline["median_a"] == pytest.approx(MORE, abs=1e-6)
    # given newest kernel first, the series is still shown oldest first: bookworm the base
    heads = ruled_table(kcross("compare", "1", "2", "--db", db).stdout)[0]
    assert heads[1:3] == ["run 2 (Debian 6.1.176-1) (base)", "run 1 (trixie 6.12.107-1)"]


def test_history_and_report_show_the_release_series(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = stored_series(kcross, tmp_path)
    points = [json.loads(line) for line in
              kcross("history", "getppid-inline", "--json", "--db", db).stdout.splitlines()]
    rows = [p for p in points if p["type"] == "history"]
    assert [p["run"] for p in rows] == [2, 1]                 # bookworm's kernel first
    assert [p["kernel"] for p in rows] == ["6.1.0-50-powerpc64le", TRIXIE_ABI]
    assert rows[1]["against"] == 2 and rows[1]["note"] == "kernel Debian 6.1.176-1 -> trixie 6.12.107-1"
    assert rows[1]["change"]["method"] == "exact" and rows[1]["verdict"] == "more instructions"
    assert len({p["machine"] for p in rows}) == 1
    noise = [p for p in points if p["type"] == "run-to-run noise"]
    assert sorted(p["kernel"] for p in noise) == ["Debian 6.1.176-1", "trixie 6.12.107-1"]
    page = tmp_path / "r.html"
    proc = kcross("report", "1", "2", "-o", str(page), "--db", db)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert ("run 1 · lab ppc64le trixie 6.12.107-1 KCROSS_SYSCALL=sc vs run 2 · lab ppc64le "
            "Debian 6.1.176-1 KCROSS_SYSCALL=sc" in html)
    assert "a lab machine's runs with several kernels in" in html
    assert html.index("<b>run 1 against run 2</b>") > 0 and "<b>run 2 against run 1</b>" not in html


def unmerge(url: str) -> None:
    """The store as kcross kept it before schema 6: run 2's kernel its own machine row (an
    earlier first_seen), both rows under hashes of the old rule, schema version 5."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        row = conn.execute(sa.text("SELECT * FROM machines WHERE id = 1")).mappings().one()
        fp = conn.execute(sa.text("SELECT fingerprint FROM runs WHERE id = 2")).scalar_one()
        fp = fp if isinstance(fp, str) else json.dumps(fp)
        conn.execute(sa.text("UPDATE machines SET fingerprint_hash = :h WHERE id = 1"),
                     {"h": "a" * 64})
        conn.execute(sa.text(
            "INSERT INTO machines (id, fingerprint_hash, hostname, arch, cpu_model, "
            "kernel_release, hypervisor, fingerprint, first_seen) VALUES (2, :h, :host, :arch, "
            ":cpu, :kernel, :hyp, :fp, :seen)"),
            {"h": "b" * 64, "host": row["hostname"], "arch": row["arch"], "cpu": row["cpu_model"],
             "kernel": "6.1.0-50-powerpc64le", "hyp": row["hypervisor"], "fp": fp,
             "seen": row["first_seen"].replace(year=2000)
             if isinstance(row["first_seen"], dt.datetime) else "2000-01-01 00:00:00.000000"})
        conn.execute(sa.text("UPDATE runs SET machine_id = 2 WHERE id = 2"))
        conn.execute(sa.text("DROP TABLE noise_exclusions"))   # schema 7's
        conn.execute(sa.text(f"DROP TABLE {SCHEMA_9_TABLE}"))
        conn.execute(sa.text(f"DROP INDEX {SCHEMA_9_INDEX}"))
        for column in SCHEMA_8_RUN_COLUMNS:
            conn.execute(sa.text(f"ALTER TABLE runs DROP COLUMN {column}"))
        conn.execute(sa.text("UPDATE kcross_schema SET version = 5"))
    engine.dispose()


def test_schema_6_merges_a_lab_machines_rows_of_two_kernels(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from conftest import query
    from kcross.store import migrations

    db = stored_series(kcross, tmp_path)
    capture = tmp_path / "real.jsonl"      # the real run's records, its header left out
    capture.write_text("".join(line for line in (DATA / "real-run.jsonl").read_text()
                               .splitlines(keepends=True) if not line.startswith("#")))
    real = kcross("import", str(capture), "--db", db)
    assert real.returncode == 0, real.stderr
    real_row = query(Path(db), "SELECT * FROM machines WHERE id = 2")
    unmerge_sqlite(Path(db))
    assert query(Path(db), "SELECT count(*) FROM machines") == [(3,)]
    assert kcross("tag", "1", "trixie", "--db", db).returncode == 0       # a write: upgraded
    assert query(Path(db), "SELECT version FROM kcross_schema") == [(migrations.LATEST,)]
    machines = query(Path(db), "SELECT id, fingerprint_hash, first_seen FROM machines ORDER BY id")
    fp1 = json.loads(query(Path(db), "SELECT fingerprint FROM runs WHERE id = 1")[0][0])
    assert [m[:2] for m in machines] == [(1, fields.identity(fp1)), (3, real_row[0][1])]
    assert machines[0][2].startswith("2000-01-01")            # the earliest first_seen
    assert query(Path(db), "SELECT id, machine_id FROM runs ORDER BY id") == [(1, 1), (2, 1), (3, 3)]
    assert query(Path(db), "SELECT * FROM machines WHERE id = 3")[0][1:] == real_row[0][1:]


def unmerge_sqlite(db: Path) -> None:
    """:func:`unmerge` on a SQLite store whose real machine is row 2: it moves to row 3."""
    import sqlite3

    conn = sqlite3.connect(db)
    with conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("UPDATE machines SET id = 3 WHERE id = 2")
        conn.execute("UPDATE runs SET machine_id = 3 WHERE machine_id = 2")
    conn.close()
    unmerge(f"sqlite:///{db}")
