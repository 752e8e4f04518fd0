"""What the lab is asked to do: :class:`LabRequest` (``kcross lab ARCH``) and the guest's
options it shares with ``kcross lava job`` (:class:`GuestOptions`).

kcross.cli.lab builds a request from the command line; kcross.lab.jobs runs it.  Below the
command line only these objects are seen: values as the user gave them (messages quote
them), checked by the jobs before anything is fetched, built or booted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcross import errors, forcings
from kcross.errors import UserError
from kcross.lab.machines import DEFAULT_SUITES, Guest, arch


def settings_given(option: str, texts: Sequence[str]) -> dict[str, str]:
    """``option``'s NAME=VALUE texts (``--env``, ``--compare-env``) as the guest harness's
    settings: each a forcing of kcross.forcings a user may set, with a value its table
    does not refuse, given once, and one token of the guest's plan (no whitespace: the plan
    has no quoting).  UserError, one line, for the first that is not."""
    found: dict[str, str] = {}
    for text in texts:
        pair = forcings.assignment(text)
        if pair is None:
            raise UserError(f"{option} {errors.shown(text)}: expected NAME=VALUE, e.g. "
                            "KCROSS_RSEQ=off")
        name, value = pair
        if any(c.isspace() or c == "\0" for c in value):
            raise UserError(f"{option} {errors.shown(text)}: a value without spaces (the "
                            "guest's plan has no quoting)")
        why = forcings.refusal(name, value)
        if why is not None:
            raise UserError(f"{option} {errors.shown(text)}: {why}")
        if name in found:
            raise UserError(f"{option}: {name} given twice ({name}={found[name]} and {text})")
        found[name] = value
    return found


def settings_text(env: Mapping[str, str]) -> str:
    """Settings as a person reads them (a boot's variant, a note): NAME=VALUE ..."""
    return " ".join(f"{k}={v}" for k, v in env.items())


@dataclass(frozen=True)
class GuestOptions:
    """The lab guest's configuration and what it counts: ``--append``, ``--cpu``,
    ``--machine-opt``, ``--suite``, ``--bench`` and the harness's settings, ``--env``
    (``kcross lab``, ``kcross lava job``)."""

    append: str = ""                    # added to the kernel command line
    cpu: str | None = None              # QEMU -cpu model; None: the arch's
    machine_opts: tuple[str, ...] = ()  # K=V added to QEMU's -M
    suite: str | None = None            # --suite as given: S[,S...]
    bench: str | None = None            # --bench GLOB
    env: tuple[str, ...] = ()           # --env NAME=VALUE as given, each

    def settings(self) -> dict[str, str]:
        """--env's settings, checked (:func:`settings_given`)."""
        return settings_given("--env", self.env)

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str] | None:
        """The guest harness's environment: --env's settings, then ``extra`` (a side of a
        comparison, the profile plugin's); None when there is none."""
        env = {**self.settings(), **(extra or {})}
        return env or None

    def check_env(self, arch_name: str, src: Path,
                  more: Mapping[str, str] | None = None) -> None:
        """--env's settings (and ``more``: --compare-env's) as ``arch_name``'s guest harness
        built from ``src`` would take them: a syscall mechanism it has, a glob matching its
        benchmarks (kcross.lab.payload reads them from the tree)."""
        from kcross.lab.payload import setting_refusal

        for option, env in (("--env", self.settings()), ("--compare-env", more or {})):
            for name, value in env.items():
                why = setting_refusal(name, value, arch_name, src)
                if why is not None:
                    raise UserError(f"{option} {name}={value}: {why}")

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
    (counting alone, ``--compare``, ``--compare-env``, ``--against``, ``--against-source``,
    ``--mitigations``, each explained or not, ``--profile`` or ``--trace`` with those,
    ``--peers``; ``--releases``, alone or with ``--compare`` or ``--compare-env``;
    correctness), and where its runs go."""

    arch: str
    mode: str                            # counting, correctness or both
    timeout: float                       # host seconds one guest may run
    guest: GuestOptions = field(default_factory=GuestOptions)
    kernel: Path | None = None           # --kernel: the user's; None: Debian's
    refresh: bool = False                # fetch Debian's kernel again
    release: str | None = None           # --release: the Debian release; None: the default
    releases: str | None = None          # --releases as given: A,B,... or all (a series)
    compare: tuple[str, str] | None = None   # two syscall mechanisms
    compare_env: tuple[str, ...] = ()    # --compare-env NAME=VALUE as given: side B's settings
    against: Path | None = None          # a second kernel
    against_source: Path | None = None   # a second kcross source tree (its guest programs)
    mitigations: bool = False
    explain: bool | None = None          # --explain / --no-explain; None: the axis's default
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

    @property
    def two_sided(self) -> bool:
        """A comparison of two sides (--compare, --compare-env, --against,
        --against-source) or of each mitigation variant with its baseline (--mitigations)."""
        return bool(self.compare or self.compare_env or self.against or self.against_source
                    or self.mitigations)

    @property
    def explained(self) -> bool:
        """Whether the changed rows are explained (kcross.lab.explain): --explain, else by
        default where the question is why (--against, --against-source, --releases alone:
        each step from kernel to kernel); never for profiled boots (--profile shows every
        row's profile)."""
        if self.profiled or not (self.two_sided or self.releases):
            return False
        if self.explain is not None:
            return self.explain
        return bool(self.against or self.against_source
                    or (self.releases and not self.two_sided))

    def release_series(self) -> tuple[str, ...]:
        """The releases --releases names for the arch, in release order (kcross.lab.releases
        .series: UserError, one line, for a name it refuses); () without --releases."""
        if self.releases is None:
            return ()
        from kcross.lab.releases import series

        return tuple(r.name for r in series(self.releases, self.arch))

    def sides(self) -> tuple[EnvSide, EnvSide] | None:
        """The two settings ``--compare`` (each mechanism forced: KCROSS_SYSCALL) or
        ``--compare-env`` (A the guest as it is, B with the settings) count the kernel
        with; None for neither."""
        if self.compare:
            return (EnvSide(self.compare[0], {"KCROSS_SYSCALL": self.compare[0]}),
                    EnvSide(self.compare[1], {"KCROSS_SYSCALL": self.compare[1]}))
        if self.compare_env:
            return EnvSide("A", {}), EnvSide("B", settings_given("--compare-env",
                                                                   self.compare_env))
        return None


@dataclass(frozen=True)
class EnvSide:
    """One side of a comparison of settings on one kernel: its label (a column of the
    table) and the settings its guest harness gets beyond ``--env``'s."""

    label: str
    env: Mapping[str, str]
