"""The Debian releases whose kernels the lab boots (``kcross lab ARCH --release NAME``):
one table, :data:`RELEASES`, that everything reads.

Each :class:`Release` is a name (what ``--release`` takes), the Debian suite it is fetched
from (``dists/SUITE`` on this machine's mirror), the lab arches the suite has (its Release
file's ``Architectures``, in kcross's names), and the package layout of its kernels; the
table's order is the releases' order, oldest kernel first (which is also their kernels'
version order: 5.10, 6.1, 6.12, 6.12, 7.2).

Two layouts (:class:`Layout`): up to trixie, ``linux-image-ABI`` holds the kernel at
``/boot/vmlinu[xz]-ABI`` and its configuration at ``/boot/config-ABI``; from sid's 7.x on,
``linux-image-ABI`` is a stub of ~2 kB that depends on ``linux-binary-ABI``, which holds the
kernel at ``usr/lib/modules/ABI/vmlinuz`` (an ELF vmlinux on ppc64el despite the name), and
on ``linux-base-ABI``, which holds the configuration at ``usr/lib/modules/ABI/config``.  ABI
is the package name's part after ``linux-image-`` (``7.2.13+deb14-amd64``).

``--releases A,B,...`` or ``all`` names several (:func:`series`: in release order; every
release the arch has for ``all``): kcross.lab.series counts them.

Facts read from the mirror's indexes and packages (2026-11-28): buster is gone from it;
bullseye's Release lists no ppc64el any more.
"""

from __future__ import annotations

from dataclasses import dataclass

from kcross.errors import UserError


@dataclass(frozen=True)
class Layout:
    """Where a release's kernel packages keep the kernel and its configuration."""

    name: str
    # The packages holding the kernel file and the configuration, from the image package's
    # ABI ("{abi}"): the image package itself, or packages it depends on.
    kernel_package: str
    config_package: str
    # Their paths inside those packages ("{abi}"; "{kname}": the arch's kernel file name in
    # /boot, vmlinux or vmlinuz).
    kernel_member: str
    config_member: str


BOOT = Layout("boot", kernel_package="linux-image-{abi}", config_package="linux-image-{abi}",
              kernel_member="boot/{kname}-{abi}", config_member="boot/config-{abi}")
MODULES = Layout("usr/lib/modules", kernel_package="linux-binary-{abi}",
                 config_package="linux-base-{abi}",
                 kernel_member="usr/lib/modules/{abi}/vmlinuz",
                 config_member="usr/lib/modules/{abi}/config")

ALL_ARCHES = ("ppc64le", "aarch64", "x86_64")


@dataclass(frozen=True)
class Release:
    """A Debian release the lab fetches kernels from."""

    name: str                    # what --release takes
    suite: str                   # dists/SUITE on the mirror
    arches: tuple[str, ...]      # the lab arches the suite has
    layout: Layout
    line: str                    # its kernels' line, for people ("6.1")


# In release order, oldest kernel first.
RELEASES: tuple[Release, ...] = (
    Release("bullseye", "bullseye", ("aarch64", "x86_64"), BOOT, "5.10"),
    Release("bookworm", "bookworm", ALL_ARCHES, BOOT, "6.1"),
    Release("bookworm-backports", "bookworm-backports", ALL_ARCHES, BOOT, "6.12"),
    Release("trixie", "trixie", ALL_ARCHES, BOOT, "6.12"),
    Release("sid", "sid", ALL_ARCHES, MODULES, "7.2"),
)
# The lab's kernel when no release is asked: the one the lab was made with.
DEFAULT = "bookworm"
NAMES = tuple(r.name for r in RELEASES)


def release(name: str | None = None, arch: str | None = None, option: str = "--release"
            ) -> Release:
    """The release ``name`` (None: the default), for ``arch`` when given; UserError (one line,
    naming ``option``) for a release the table lacks (with the closest names) or one the
    arch lacks."""
    name = DEFAULT if name is None else name
    for r in RELEASES:
        if r.name == name:
            if arch is not None and arch not in r.arches:
                raise UserError(f"{option} {name}: Debian {name} has no {arch} kernel on the "
                                f"mirror (its arches: {', '.join(r.arches)})")
            return r
    from kcross.errors import did_you_mean, shown

    hint = did_you_mean(name, NAMES)
    raise UserError(f"{option} {shown(name)}: no such Debian release ({hint + ' ' if hint else ''}"
                    f"the lab knows: {', '.join(NAMES)})")


ALL = "all"


def series(text: str, arch: str) -> tuple[Release, ...]:
    """What ``--releases`` names for ``arch``: ``all`` (every release the arch has), or
    release names separated by commas, each known and the arch's, none twice, at least
    two; in release order whatever the order given.  UserError, one line, for the first
    that is not."""
    from kcross.errors import shown

    if text == ALL:
        return tuple(r for r in RELEASES if arch in r.arches)
    names = text.split(",")
    if not all(names):
        raise UserError(f"--releases {shown(text)}: give release names separated by commas, "
                        f"or {ALL}")
    chosen = [release(name, arch, "--releases") for name in names]
    for name in names:
        if names.count(name) > 1:
            raise UserError(f"--releases {shown(text)}: {name} given twice")
    if len(chosen) < 2:
        raise UserError(f"--releases {shown(text)}: give two releases or more (a series steps "
                        f"from kernel to kernel), or {ALL}; one release's kernel is --release "
                        f"{text}")
    return tuple(sorted(chosen, key=lambda r: order(r.name)))


def order(name: str) -> int:
    """A release's place in the table (the releases' order)."""
    return NAMES.index(name)
