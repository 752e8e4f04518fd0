"""What the lab is asked to do: :class:`LabRequest` (``kcross lab ARCH``) and the guest's
options it shares with ``kcross lava job`` (:class:`GuestOptions`).

kcross.cli.lab builds a request from the command line; kcross.lab.jobs runs it.  Below the
command line only these objects are seen: values as the user gave them (messages quote
them), checked by the jobs before anything is fetched, built or booted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcross.errors import UserError
from kcross.lab.machines import DEFAULT_SUITES, Guest, arch


@dataclass(frozen=True)
class GuestOptions:
    """The lab guest's configuration and what it counts: ``--append``, ``--cpu``,
    ``--machine-opt``, ``--suite`` and ``--bench`` (``kcross lab``, ``kcross lava job``)."""

    append: str = ""                    # added to the kernel command line
    cpu: str | None = None              # QEMU -cpu model; None: the arch's
    machine_opts: tuple[str, ...] = ()  # K=V added to QEMU's -M
    suite: str | None = None            # --suite as given: S[,S...]
    bench: str | None = None            # --bench GLOB

    def suites(self, default: tuple[str, ...] = DEFAULT_SUITES) -> tuple[str, ...]:
        """The suites ``--suite`` names, else ``default``."""
        return tuple(self.suite.split(",")) if self.suite else default

    def check_suite(self) -> None:
        """``--suite`` is names separated by commas (no empty one)."""
        if self.suite is not None and not all(self.suite.split(",")):
            raise UserError(f"--suite {self.suite!r}: give suite names separated by commas")

    def guest_of(self, arch_name: str, kernel: Path, mode: str = "counting",
                 **over: Any) -> Guest:
        """The guest of ``arch_name`` booting ``kernel`` in ``mode`` with these options
        (``over``: settings that replace them, e.g. a mitigation variant's)."""
        settings: dict[str, Any] = {"append": self.append, "cpu": self.cpu,
                                    "machine_opts": self.machine_opts}
        settings.update(over)
        return Guest(arch(arch_name), kernel, mode=mode, **settings)


@dataclass(frozen=True)
class LabRequest:
    """``kcross lab ARCH``: the arch, the mode, the kernel, the guest, and the job
    (counting alone, ``--compare``, ``--against``, ``--mitigations``, ``--profile`` or
    ``--trace`` with those, ``--peers``; correctness), and where its runs go."""

    arch: str
    mode: str                            # counting, correctness or both
    timeout: float                       # host seconds one guest may run
    guest: GuestOptions = field(default_factory=GuestOptions)
    kernel: Path | None = None           # --kernel: the user's; None: Debian's
    refresh: bool = False                # fetch Debian's kernel again
    release: str | None = None           # --release: the Debian release; None: the default
    compare: tuple[str, str] | None = None   # two syscall mechanisms
    against: Path | None = None          # a second kernel
    mitigations: bool = False
    profile: bool = False
    trace: str | None = None             # --trace BENCH
    peers: str | None = None             # the selftests' selection (quick, all)
    source: Path | None = None           # the kcross tree the guest programs are built from
    no_store: bool = False
    db: str | None = None
    json_output: bool = False
    argv: tuple[str, ...] = ()           # the command line, stored with each run

    @property
    def profiled(self) -> bool:
        """--profile or --trace: profiled boots, shown, not stored."""
        return self.profile or bool(self.trace)
