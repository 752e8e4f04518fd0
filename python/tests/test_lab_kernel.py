"""kcross.lab.kernel: this machine's apt sources, the private APT configuration, the cache,
the kernel file checks and the one-line errors, without network; and one real fetch
(marked ``network``) of Debian's ppc64le kernel."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from kcross.errors import KcrossError, LabError, UserError
from kcross.lab import kernel as K
from kcross.lab.kernel import Kernel

# ---------------------------------------------------------------------------------------
# fake kernel files


def elf_header(machine: int, ei_class: int = 2, ei_data: int = 1) -> bytes:
    endian = "<" if ei_data == 1 else ">"
    ident = b"\x7fELF" + bytes([ei_class, ei_data, 1, 0]) + bytes(8)
    return ident + struct.pack(endian + "HHI", 2, machine, 1) + bytes(4096 - 24)


def arm64_image() -> bytes:
    head = bytearray(4096)
    head[0x38:0x3C] = b"ARM\x64"
    return bytes(head)


def bzimage(protocol: int = 0x20F, xloadflags: int = 1) -> bytes:
    head = bytearray(4096)
    head[0x1FE:0x200] = b"\x55\xaa"
    head[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", head, 0x206, protocol)
    struct.pack_into("<H", head, 0x236, xloadflags)
    return bytes(head)


PPC64LE_ELF = elf_header(K.EM_PPC64)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------------------------------
# arch names


def test_arch_mapping() -> None:
    assert [K.debian_arch(a) for a in K.ARCHES] == ["ppc64el", "arm64", "amd64"]
    assert [K.flavour(a) for a in K.ARCHES] == ["powerpc64le", "arm64", "amd64"]


@pytest.mark.parametrize("bad", ["sparc", "ppc64el", "amd64", ""])
def test_unknown_arch_is_one_line_naming_the_valid_ones(bad: str, tmp_path: Path) -> None:
    for call in (lambda: K.fetch(bad, cache_dir=tmp_path), lambda: Kernel.from_file(tmp_path, bad)):
        with pytest.raises(UserError) as e:
            call()
        msg = str(e.value)
        assert "\n" not in msg and "valid: ppc64le, aarch64, x86_64" in msg
    assert not list(tmp_path.iterdir())


def test_unknown_arch_suggests_the_kcross_name() -> None:
    with pytest.raises(UserError, match=r"did you mean ppc64le\?"):
        K.check_arch("ppc64el")


# ---------------------------------------------------------------------------------------
# this machine's apt sources

ONE_LINE = """\
# the main archive
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian \
bookworm main contrib
deb-src http://mirror.example/debian bookworm main
deb http://mirror.example/debian bookworm-updates main   # trailing comment
deb http://security.example/debian-security bookworm-security main
"""

DEB822 = """\
Types: deb
# http://snapshot.example/archive/debian/20250520T000000Z
URIs: http://mirror.example/debian
Suites: bookworm-updates bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb deb-src
URIs: http://inline.example/debian http://inline2.example/debian
Suites: bookworm
Components: contrib main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NdOOHwPIJlgPu6JDcKw/NZJPJ/x
 -----END PGP PUBLIC KEY BLOCK-----
"""


def test_parse_one_line_format() -> None:
    got = K.parse_one_line(ONE_LINE, "x.list")
    assert [(s.uri, s.suite, s.components, s.signed_by) for s in got] == [
        ("http://mirror.example/debian", "bookworm", ("main", "contrib"),
         "/usr/share/keyrings/debian-archive-keyring.gpg"),
        ("http://mirror.example/debian", "bookworm-updates", ("main",), None),
        ("http://security.example/debian-security", "bookworm-security", ("main",), None),
    ]
    assert all(s.origin == "x.list" for s in got)


def test_parse_deb822_format() -> None:
    got = K.parse_deb822(DEB822, "debian.sources")
    assert [(s.uri, s.suite, s.components) for s in got] == [
        ("http://mirror.example/debian", "bookworm-updates", ("main",)),
        ("http://mirror.example/debian", "bookworm", ("main",)),
        ("http://inline.example/debian", "bookworm", ("contrib", "main")),
        ("http://inline2.example/debian", "bookworm", ("contrib", "main")),
    ]
    assert got[1].signed_by == "/usr/share/keyrings/debian-archive-keyring.gpg"
    inline = got[2].signed_by or ""
    assert inline.startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINB")
    assert inline.endswith("-----END PGP PUBLIC KEY BLOCK-----")


def etc_apt(tmp: Path, *, sources_list: str = "", parts: dict[str, str] | None = None) -> Path:
    etc = tmp / "etc-apt"
    (etc / "sources.list.d").mkdir(parents=True)
    if sources_list:
        (etc / "sources.list").write_text(sources_list)
    for name, text in (parts or {}).items():
        (etc / "sources.list.d" / name).write_text(text)
    return etc


def test_host_sources_reads_both_formats_and_ignores_other_files(tmp_path: Path) -> None:
    etc = etc_apt(tmp_path, parts={
        "debian.sources": DEB822,
        "other.list": "deb http://other.example/x stable main\n",
        "nodesource.sources.disabled-by-farm": "Types: deb\nURIs: http://no.example\nSuites: bookworm\n"
                                              "Components: main\n",
        "google.list.disabled": "deb http://no.example/ bookworm main\n",
    })
    got = K.host_sources(etc)
    assert {s.uri for s in got} == {"http://mirror.example/debian", "http://inline.example/debian",
                                    "http://inline2.example/debian", "http://other.example/x"}
    picked = K.pick_source(got, etc)
    assert (picked.uri, picked.suite) == ("http://mirror.example/debian", "bookworm")
    assert picked.origin.endswith("debian.sources")


def test_pick_source_from_sources_list(tmp_path: Path) -> None:
    etc = etc_apt(tmp_path, sources_list=ONE_LINE)
    picked = K.pick_source(K.host_sources(etc), etc)
    assert (picked.uri, picked.suite, picked.origin) == ("http://mirror.example/debian", "bookworm",
                                                         str(etc / "sources.list"))


def test_no_bookworm_main_entry_is_one_line(tmp_path: Path) -> None:
    etc = etc_apt(tmp_path, sources_list="deb http://m.example/debian bookworm-updates main\n"
                                         "deb http://m.example/debian bookworm contrib\n"
                                         "deb cdrom:[Debian 12]/ bookworm main\n")
    with pytest.raises(LabError) as e:
        K.pick_source(K.host_sources(etc), etc)
    assert "\n" not in str(e.value) and "no 'bookworm main' entry" in str(e.value)


def test_keyring_inline_block_is_written_to_a_file(tmp_path: Path) -> None:
    inline = K.parse_deb822(DEB822)[2]
    path = K.resolve_keyring(inline, tmp_path)
    assert path == str(tmp_path / "signed-by.asc")
    assert Path(path).read_text().startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQ")
    listed = K.AptSource("http://m/", "bookworm", ("main",), "/k/a.gpg,/k/b.gpg", "x")
    assert K.resolve_keyring(listed, tmp_path) == "/k/a.gpg"


# ---------------------------------------------------------------------------------------
# the private APT configuration

SOURCE = K.AptSource("http://mirror.example/debian", "bookworm", ("main",), None, "test")


@pytest.mark.parametrize(("arch", "deb"), [("ppc64le", "ppc64el"), ("aarch64", "arm64"), ("x86_64", "amd64")])
def test_source_line(arch: str, deb: str) -> None:
    assert K.source_line(SOURCE, arch, "/k.gpg") == \
        f"deb [arch={deb} signed-by=/k.gpg] http://mirror.example/debian bookworm main\n"
    assert K.source_line(SOURCE, arch, None) == \
        f"deb [arch={deb}] http://mirror.example/debian bookworm main\n"


def test_apt_config_text_is_private_and_for_the_target_arch(tmp_path: Path) -> None:
    acquire = ['Acquire::http::Proxy "http://proxy.example:3128";']
    text = K.apt_config_text(tmp_path, "ppc64le", acquire, as_root=False)
    lines = text.splitlines()
    for line in (f'Dir::State::Lists "{tmp_path}/lists";',
                 f'Dir::State::status "{tmp_path}/status";',
                 f'Dir::Cache "{tmp_path}/cache";',
                 f'Dir::Etc::SourceList "{tmp_path}/sources.list";',
                 'Dir::Etc::SourceParts "/dev/null";',
                 'APT::Architecture "ppc64el";',
                 'APT::Architectures { "ppc64el"; };',
                 'Acquire::http::Proxy "http://proxy.example:3128";'):
        assert line in lines
    assert "APT::Sandbox::User" not in text
    assert 'APT::Sandbox::User "root";' in K.apt_config_text(tmp_path, "x86_64", [], as_root=True)


def test_apt_config_is_read_by_apt_config(tmp_path: Path) -> None:
    if shutil.which("apt-config") is None:
        pytest.skip("apt-config not installed (package apt)")
    conf = K.write_apt_config(tmp_path, "aarch64", SOURCE, "/k.gpg",
                              ['Acquire::http::Proxy "http://proxy.example:3128";', 'Acquire::Retries "3";'])
    assert (tmp_path / "status").read_bytes() == b""
    assert (tmp_path / "sources.list").read_text() == \
        "deb [arch=arm64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n"
    env = dict(os.environ, APT_CONFIG=str(conf))
    dump = subprocess.run(["apt-config", "dump"], env=env, capture_output=True, text=True, check=True).stdout
    assert 'APT::Architecture "arm64";' in dump
    assert 'APT::Architectures:: "arm64";' in dump
    assert f'Dir::State::status "{tmp_path}/status";' in dump
    assert 'Acquire::http::Proxy "http://proxy.example:3128";' in dump


def test_filter_acquire_keeps_the_machine_settings_only() -> None:
    dump = """Acquire "";
Acquire::http::Proxy "http://p.example:3128";
Acquire::Check-Valid-Until "false";
Acquire::IndexTargets::deb::DEP-11::MetaKey "x";
Acquire::Languages:: "none";
Acquire::cdrom::mount "/media/cdrom/";
Acquire::Changelogs::URI::Origin::Debian "https://c.example";
APT::Architecture "amd64";
"""
    assert K.filter_acquire(dump) == ['Acquire::http::Proxy "http://p.example:3128";',
                                      'Acquire::Check-Valid-Until "false";']


# ---------------------------------------------------------------------------------------
# the kernel file checks


@pytest.mark.parametrize(("arch", "data"), [
    ("ppc64le", PPC64LE_ELF),
    ("aarch64", arm64_image()),
    ("x86_64", bzimage()),
    ("x86_64", bzimage(protocol=0x20A, xloadflags=0)),  # too old a header to say 32/64-bit
])
def test_from_file_accepts_kernels(arch: str, data: bytes, tmp_path: Path) -> None:
    k = Kernel.from_file(write(tmp_path / "k", data), arch)
    assert (k.arch, k.path, k.source, k.package, k.version) == (arch, tmp_path / "k", "file", None, None)


def test_from_file_accepts_a_gzip_compressed_arm64_image(tmp_path: Path) -> None:
    path = write(tmp_path / "Image.gz", gzip.compress(arm64_image()))
    assert Kernel.from_file(path, "aarch64").path == path


@pytest.mark.parametrize(("arch", "data", "why"), [
    ("ppc64le", elf_header(K.EM_X86_64), "an ELF file for x86-64, 64-bit little-endian"),
    ("ppc64le", elf_header(K.EM_PPC64, ei_data=2), "PowerPC64, 64-bit big-endian; expected a 64-bit little"),
    ("ppc64le", elf_header(20, ei_class=1, ei_data=2), "an ELF file for PowerPC, 32-bit big-endian"),
    ("ppc64le", arm64_image(), "an arm64 Image; expected an ELF vmlinux for PowerPC64 little-endian"),
    ("aarch64", elf_header(K.EM_AARCH64), "an ELF file for AArch64"),
    ("aarch64", bzimage(), "an x86 bzImage; expected an arm64 Image"),
    ("aarch64", gzip.compress(b"not a kernel" * 10), "gzip-compressed data"),
    ("x86_64", PPC64LE_ELF, "an ELF file for PowerPC64"),
    ("x86_64", bzimage(xloadflags=0), "a 32-bit x86 bzImage"),
    ("x86_64", b"#!/bin/sh\necho hello\n", "no kernel header found; expected an x86 bzImage"),
    ("x86_64", b"", "an empty file"),
])
def test_from_file_rejects_what_is_not_a_kernel_for_the_arch(arch: str, data: bytes, why: str,
                                                             tmp_path: Path) -> None:
    path = write(tmp_path / "kernel-file", data)
    with pytest.raises(UserError) as e:
        Kernel.from_file(path, arch)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path} is not a kernel for {arch} (") and msg.endswith(")")
    assert why in msg


def test_from_file_missing_or_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"^\S+/nope: no such kernel file$"):
        Kernel.from_file(tmp_path / "nope", "ppc64le")
    with pytest.raises(UserError, match=r"is not a kernel for aarch64 \(a directory\)$"):
        Kernel.from_file(tmp_path, "aarch64")


# ---------------------------------------------------------------------------------------
# the cache, and fetch against fake apt tools


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fake_entry(cache: Path, arch: str, version: str, *, meta: bool = True) -> Path:
    name = "vmlinux-6.1.0-99-powerpc64le" if arch == "ppc64le" else "vmlinuz-6.1.0-99-x"
    entry = cache / arch / version
    kernel = write(entry / "boot" / name, PPC64LE_ELF)
    if meta:
        (entry / "kernel.json").write_text(json.dumps({
            "arch": arch, "package": f"linux-image-{version}", "version": version,
            "kernel": f"boot/{name}", "kernel_sha256": sha256_of(kernel),
            "kernel_size": len(PPC64LE_ELF), "deb_sha256": "ab" * 32}))
    return entry


def no_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A PATH with nothing on it: any attempt to run apt fails the test with LabError."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


def test_cache_is_reused_without_apt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    fake_entry(cache, "ppc64le", "6.1.9-1")
    newest = fake_entry(cache, "ppc64le", "6.1.10-1")
    no_tools(monkeypatch, tmp_path)
    k = K.fetch("ppc64le", cache_dir=cache)
    assert (k.version, k.package, k.source) == ("6.1.10-1", "linux-image-6.1.10-1", "debian")
    assert k.path == newest / "boot" / "vmlinux-6.1.0-99-powerpc64le"
    assert k.config is None
    assert K.fetch("ppc64le", cache_dir=cache, version="6.1.9-1").version == "6.1.9-1"


def test_cache_root_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert K.cache_root() == tmp_path / "xdg" / "kcross" / "lab"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert K.cache_root() == tmp_path / "home" / ".cache" / "kcross" / "lab"
    fake_entry(tmp_path / "home" / ".cache" / "kcross" / "lab", "ppc64le", "6.1.1-1")
    no_tools(monkeypatch, tmp_path)
    assert K.fetch("ppc64le").version == "6.1.1-1"


def test_half_entries_are_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    fake_entry(cache, "ppc64le", "6.1.10-1", meta=False)          # killed non-atomic writer
    tmp_entry = fake_entry(cache, "ppc64le", "6.1.11-1")            # an unrenamed temp entry
    tmp_entry.rename(cache / "ppc64le" / ".tmp-abc")
    other = fake_entry(cache, "ppc64le", "6.1.12-1")
    (other / "boot" / "vmlinux-6.1.0-99-powerpc64le").unlink()     # kernel file gone
    fake_entry(cache, "x86_64", "6.1.13-1").rename(cache / "ppc64le" / "6.1.13-1")  # another arch's
    assert K.cached("ppc64le", cache_dir=cache) is None
    no_tools(monkeypatch, tmp_path)
    with pytest.raises(LabError, match=r"^apt-get not found: .*\(install apt, or pass --kernel PATH\)$"):
        K.fetch("ppc64le", cache_dir=cache)


FAKE_APT_GET = """#!/bin/sh
echo "apt-get $*" >> "$FAKE_LOG"
lists=$(sed -n 's/^Dir::State::Lists "\\(.*\\)";$/\\1/p' "$APT_CONFIG")
case " $* " in
  *" update "*)
    if [ -n "$FAKE_UPDATE_FAIL" ]; then
      echo "Err:1 http://mirror.example/debian bookworm InRelease" >&2
      echo "E: Failed to fetch http://mirror.example/debian/dists/bookworm/InRelease  Could not resolve" >&2
      exit 100
    fi
    touch "$lists/mirror.example_debian_dists_bookworm_main_binary-ppc64el_Packages" ;;
  *" download "*) cp "$FAKE_DEB" . ;;
esac
"""

FAKE_APT_CACHE = """#!/bin/sh
echo "apt-cache $*" >> "$FAKE_LOG"
case "$3" in
  linux-image-powerpc64le) printf 'Package: linux-image-powerpc64le\\nVersion: 6.1.999-1\\n'
    printf 'Depends: linux-image-6.1.0-99-powerpc64le (= 6.1.999-1)\\nDescription: x\\n more\\n\\n' ;;
  linux-image-6.1.0-99-powerpc64le) printf 'Package: %s\\nVersion: 6.1.999-1\\nSHA256: %s\\n\\n' "$3" \\
    "${FAKE_INDEX_SHA256:-$(sha256sum "$FAKE_DEB" | cut -d' ' -f1)}" ;;
  *) echo "E: No packages found" >&2; exit 100 ;;
esac
"""


@pytest.fixture
def fake_apt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """apt-get and apt-cache stand-ins on PATH (the real dpkg), a .deb built with dpkg-deb, and
    the machine's sources in a temp /etc/apt."""
    if shutil.which("dpkg") is None or shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg not installed")
    root = tmp_path / "pkg"
    write(root / "boot" / "vmlinux-6.1.0-99-powerpc64le", PPC64LE_ELF)
    write(root / "boot" / "config-6.1.0-99-powerpc64le", b"CONFIG_RSEQ=y\n")
    write(root / "lib" / "modules" / "6.1.0-99-powerpc64le" / "kernel" / "x.ko", b"module")
    deb = make_deb(root, tmp_path / "linux-image-6.1.0-99-powerpc64le_6.1.999-1_ppc64el.deb",
                   "linux-image-6.1.0-99-powerpc64le", "ppc64el")
    return fake_registry(tmp_path, monkeypatch, deb, FAKE_APT_CACHE)


def make_deb(root: Path, deb: Path, package: str, arch: str) -> Path:
    """``root`` (its files) made the .deb ``deb`` of ``package`` 6.1.999-1 with dpkg-deb."""
    (root / "DEBIAN").mkdir(exist_ok=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: 6.1.999-1\nArchitecture: {arch}\n"
        "Maintainer: test <t@example.invalid>\nDescription: fake package\n")
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root), str(deb)], check=True,
                   capture_output=True)
    return deb


def fake_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deb: Path,
                  apt_cache: str) -> dict[str, Path]:
    """PATH holding only the stand-ins for apt-get (FAKE_APT_GET, serving ``deb``) and
    apt-cache (``apt_cache``), the real dpkg and the tools the stand-ins use; the machine's
    sources in a temp /etc/apt; the cache dir and the stand-ins' log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("apt-get", FAKE_APT_GET), ("apt-cache", apt_cache)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    for name in ("dpkg", "dpkg-deb", "tar", "sh", "sed", "cp", "touch", "rm", "sha256sum", "cut"):
        real = shutil.which(name)
        if real:
            (bin_dir / name).symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("FAKE_DEB", str(deb))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log"))
    etc = etc_apt(tmp_path, parts={"debian.sources": DEB822})
    return {"bin": bin_dir, "etc": etc, "cache": tmp_path / "cache", "log": tmp_path / "log"}


def test_fetch_downloads_extracts_and_then_reuses(fake_apt: dict[str, Path]) -> None:
    cache = fake_apt["cache"]
    k = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"])
    assert (k.arch, k.package, k.version, k.source) == \
        ("ppc64le", "linux-image-6.1.0-99-powerpc64le", "6.1.999-1", "debian")
    entry = cache / "ppc64le" / "6.1.999-1"
    assert k.path == entry / "boot" / "vmlinux-6.1.0-99-powerpc64le"
    assert k.config == entry / "boot" / "config-6.1.0-99-powerpc64le"
    assert sorted(p.name for p in entry.iterdir()) == ["boot", "kernel.json"]   # modules not kept
    assert [p.name for p in (cache / "ppc64le").iterdir() if p.name.startswith(".tmp-")] == []
    apt = cache / "ppc64le" / "apt"
    assert (apt / "sources.list").read_text() == ("deb [arch=ppc64el signed-by=/usr/share/keyrings/"
                                                  "debian-archive-keyring.gpg] http://mirror.example/debian "
                                                  "bookworm main\n")
    log = fake_apt["log"].read_text().splitlines()
    assert log[0] == "apt-get -q update --error-on=any"
    assert "apt-get -q download linux-image-6.1.0-99-powerpc64le=6.1.999-1" in log
    # the second call: from the cache, no apt at all
    fake_apt["log"].unlink()
    assert K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"]) == k
    assert not fake_apt["log"].exists()
    # refresh asks the registry, finds the same version cached, downloads nothing
    assert K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"], refresh=True) == k
    assert not any("download" in ln for ln in fake_apt["log"].read_text().splitlines())


def test_a_version_the_registry_does_not_have(fake_apt: dict[str, Path]) -> None:
    with pytest.raises(LabError, match=r"^kernel package version 5\.10-1 for ppc64le is not cached and the "
                                       r"registry's bookworm main has 6\.1\.999-1 \(linux-image-6"):
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"], version="5.10-1")


def test_unreachable_registry_is_one_line(fake_apt: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_UPDATE_FAIL", "1")
    with pytest.raises(LabError) as e:
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("cannot reach the package registry (http://mirror.example/debian bookworm main")
    assert "E: Failed to fetch" in msg and "the lab needs the registry" in msg


def test_failed_extract_leaves_no_cache_entry(fake_apt: dict[str, Path]) -> None:
    (fake_apt["bin"] / "dpkg-deb").unlink()
    (fake_apt["bin"] / "dpkg-deb").write_text(
        "#!/bin/sh\necho 'dpkg-deb: error: unexpected end of file' >&2\nexit 2\n")
    (fake_apt["bin"] / "dpkg-deb").chmod(0o755)
    with pytest.raises(LabError, match=r"^dpkg -x linux-image-6\.1\.0-99.*\.deb failed: "):
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    assert sorted(p.name for p in (fake_apt["cache"] / "ppc64le").iterdir()) == [".lock", "apt"]
    assert K.cached("ppc64le", cache_dir=fake_apt["cache"]) is None


def test_interrupted_download_leaves_no_cache_entry(fake_apt: dict[str, Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    real_apt = K._apt

    def interrupted(argv: list[str], conf: Path, cwd: Path | None = None) -> object:
        if "download" in argv:
            assert cwd is not None
            (cwd / "partial.deb").write_bytes(b"!<arch>\n")  # what a killed download leaves
            raise KeyboardInterrupt
        return real_apt(argv, conf, cwd)

    monkeypatch.setattr(K, "_apt", interrupted)
    with pytest.raises(KeyboardInterrupt):
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    assert sorted(p.name for p in (fake_apt["cache"] / "ppc64le").iterdir()) == [".lock", "apt"]
    monkeypatch.setattr(K, "_apt", real_apt)
    assert K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"]).version == "6.1.999-1"


def test_a_package_holding_no_kernel_for_the_arch(fake_apt: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    write(bad / "boot" / "vmlinux-6.1.0-99-powerpc64le", elf_header(K.EM_X86_64))
    (bad / "DEBIAN").mkdir()
    (bad / "DEBIAN" / "control").write_text("Package: x\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\n"
                                            "Description: x\n")
    subprocess.run(["dpkg-deb", "-b", str(bad), os.environ["FAKE_DEB"]], check=True, capture_output=True)
    with pytest.raises(LabError, match=r"boot/vmlinux-6\.1\.0-99-powerpc64le is not a ppc64le kernel QEMU "
                                       r"boots \(an ELF file for x86-64"):
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    assert K.cached("ppc64le", cache_dir=fake_apt["cache"]) is None


@pytest.mark.parametrize("missing", ["apt-get", "dpkg"])
def test_missing_tools_are_one_line(missing: str, fake_apt: dict[str, Path]) -> None:
    (fake_apt["bin"] / missing).unlink()
    with pytest.raises(LabError) as e:
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    assert str(e.value).startswith(f"{missing} not found: the lab fetches Debian's kernel package with it")
    assert "\n" not in str(e.value)


def test_no_bookworm_source_through_fetch(fake_apt: dict[str, Path]) -> None:
    (fake_apt["etc"] / "sources.list.d" / "debian.sources").unlink()
    with pytest.raises(LabError, match=r"^no 'bookworm main' entry in this machine's apt sources"):
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])


# ---------------------------------------------------------------------------------------
# a damaged cache entry: never booted, never stored under the package's name


def damage(path: Path, how: str) -> None:
    """Cut a cached kernel file in half, cut its tail, or change a byte (same size)."""
    data = path.read_bytes()
    if how == "half":
        path.write_bytes(data[:len(data) // 2])
    elif how == "tail":
        path.write_bytes(data[:-1])
    else:
        path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))


DAMAGES = ["half", "tail", "changed"]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_cached_kernel_is_fetched_again(how: str, fake_apt: dict[str, Path]) -> None:
    cache = fake_apt["cache"]
    k = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"])
    whole = k.path.read_bytes()
    damage(k.path, how)
    assert K.cached("ppc64le", cache_dir=cache) is None
    fake_apt["log"].unlink()
    again = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"])
    assert again.path == k.path and again.path.read_bytes() == whole
    assert "apt-get -q download linux-image-6.1.0-99-powerpc64le=6.1.999-1" in \
        fake_apt["log"].read_text().splitlines()
    assert sorted(p.name for p in (cache / "ppc64le").iterdir()) == [".lock", "6.1.999-1", "apt"]
    assert K.cached("ppc64le", cache_dir=cache) == again


@pytest.mark.parametrize("how", DAMAGES)
def test_refresh_replaces_a_damaged_entry(how: str, fake_apt: dict[str, Path]) -> None:
    cache = fake_apt["cache"]
    k = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"])
    whole = k.path.read_bytes()
    damage(k.path, how)
    again = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"], refresh=True)
    assert again.path.read_bytes() == whole
    assert K.cached("ppc64le", cache_dir=cache) == again


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_cached_kernel_without_the_registry_is_refused(
        how: str, fake_apt: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    cache = fake_apt["cache"]
    k = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"])
    damage(k.path, how)
    monkeypatch.setenv("FAKE_UPDATE_FAIL", "1")
    for refresh in (False, True):
        with pytest.raises(LabError) as e:
            K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"], refresh=refresh)
        msg = str(e.value)
        assert "\n" not in msg
        if not refresh:
            assert msg.startswith(f"the cached ppc64le kernel linux-image-6.1.0-99-powerpc64le "
                                  f"6.1.999-1 is not the package's file ({k.path}: ")
            assert ("SHA-256" if how == "changed" else "bytes where the package's file has") in msg
            assert msg.endswith("; 'kcross lab ppc64le --refresh' replaces it")
        assert "cannot reach the package registry" in msg


def test_an_entry_without_a_record_is_fetched_again(fake_apt: dict[str, Path]) -> None:
    """An entry cached before kcross recorded the package's file cannot be checked."""
    cache = fake_apt["cache"]
    k = K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"])
    meta = cache / "ppc64le" / "6.1.999-1" / "kernel.json"
    record = json.loads(meta.read_text())
    for key in ("kernel_sha256", "kernel_size", "deb_sha256"):
        del record[key]
    meta.write_text(json.dumps(record))
    assert K.cached("ppc64le", cache_dir=cache) is None
    assert K.fetch("ppc64le", cache_dir=cache, etc_apt=fake_apt["etc"]) == k
    assert json.loads(meta.read_text())["kernel_sha256"] == sha256_of(k.path)


def test_the_record_is_the_package_file_and_the_index_deb(fake_apt: dict[str, Path]) -> None:
    k = K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    record = json.loads((k.path.parents[1] / "kernel.json").read_text())
    assert record["kernel_sha256"] == sha256_of(k.path) == k.sha256
    assert record["kernel_size"] == len(PPC64LE_ELF) == k.size
    assert record["deb_sha256"] == sha256_of(Path(os.environ["FAKE_DEB"]))


def test_a_download_that_is_not_the_index_deb_is_refused(fake_apt: dict[str, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_INDEX_SHA256", "0" * 64)
    with pytest.raises(LabError, match=r"^the downloaded linux-image-6\.1\.0-99-powerpc64le_6\.1\.999-1_"
                                       r"ppc64el\.deb is not the one the registry's index names "
                                       r"\(SHA-256 [0-9a-f]{64}, the index has 0{64}\)$"):
        K.fetch("ppc64le", cache_dir=fake_apt["cache"], etc_apt=fake_apt["etc"])
    assert K.cached("ppc64le", cache_dir=fake_apt["cache"]) is None


def test_errors_are_kcross_errors() -> None:
    assert issubclass(LabError, KcrossError) and LabError.__doc__


# ---------------------------------------------------------------------------------------
# the real thing


@pytest.mark.network
def test_fetch_real_ppc64le_kernel(tmp_path: Path) -> None:
    """Downloads Debian's ppc64el kernel package (~50 MB) into a temp cache."""
    if os.environ.get("KCROSS_TEST_NO_NETWORK"):
        pytest.skip("KCROSS_TEST_NO_NETWORK is set")
    try:
        k = K.fetch("ppc64le", cache_dir=tmp_path)
    except LabError as e:
        if "cannot reach the package registry" in str(e):
            pytest.skip(str(e))
        raise
    assert k.package and k.package.startswith("linux-image-") and k.package.endswith("-powerpc64le")
    assert k.version and k.path.name.startswith("vmlinux-")
    head = k.path.read_bytes()[:64]
    assert head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1
    assert struct.unpack_from("<H", head, 18)[0] == K.EM_PPC64
    assert k.path.stat().st_size > 10_000_000
    assert Kernel.from_file(k.path, "ppc64le").path == k.path
    assert k.config is not None and "CONFIG_RSEQ=y" in k.config.read_text()
    assert K.fetch("ppc64le", cache_dir=tmp_path) == k
