"""A run's fingerprint (its first record: the machine, its kernel and settings, the kcross
build): its fields, in one registry, and the machine identity rule.

:data:`FIELDS` is the registry (pyperf's ``_metadata.py`` is its model): every field the
result format defines (docs/result-format.md, the schema file's fingerprint), each a
:class:`Field` with its path in the record, its label for people, its kind (how a view
writes it: kcross.views.text.shown_value), its group, and whether it is part of the machine
identity.  Nothing else in kcross spells a field's path, but the producers of the record's
groups (the lab's and LAVA's): a module reads a field as ``CPU_MODEL.of(fingerprint)``
(python/tests/test_fingerprint_fields.py holds both rules).  A field the registry does not
know (a newer harness's) is still part of the identity, compared and shown by its path
(:func:`unknown`, :func:`label_of`).

:func:`identity` is the store's machine identity, a SHA-256 over every fingerprint field
that changes what is measured (the kernel and its command line, the CPU and its
microcode, the forced settings, a lab's emulated machine...): the registry's
:data:`MACHINE` fields, and any it does not know.  Runs of one identity are repetitions of
one measurement (a lab machine's: per kernel): their spread is the machine's run-to-run
noise.  The store keys its machine rows by it; kcross.judge.machine asks it whether two runs
are of one machine.  It stands below both, here, and imports nothing of kcross but the list
of the harness's settings (kcross.forcings), whose fields it names.

A lab machine (a run with the ``lab`` group) is the lab's setup, not the kernel it boots:
the kernel (``lab.kernel``) and what the guest reads of it (its release, its mitigations,
its hwcaps...) are the registry's :data:`KERNEL_AXIS` fields, part of a real machine's
identity but, in a lab run, the lab machine's kernel axis.  Two lab runs that differ only
in the kernel are one lab machine with two kernels: one identity, their counts exact, each
run's kernel said by :func:`kernel_label` and ordered by :func:`kernel_order` (the release
series of ``kcross history``, ``kcross compare`` and ``kcross report``: :func:`release_series`,
:func:`along_kernels`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .forcings import FORCINGS

# How much of a machine's identity is shown to a person (``kcross runs``, history, check):
# short enough to type (latest@PREFIX takes it), long enough to mean something.
HASH_SHOWN = 8

# ---------------------------------------------------------------- what a field is

# Its kind: how it is written for people (kcross.views.text.shown_value).
TEXT = "text"
NUMBER = "number"
BOOL = "bool"          # yes / no
LIST = "list"          # its items, space-separated
HZ = "Hz"              # a frequency: GHz or MHz
HASH = "hash"          # a digest: hex digits, cut where space is short
TIME = "time"          # ISO 8601
GROUP = "group"        # an object of the members listed here
MAP = "map"            # an object of names of its own: {name: value}
KINDS = (TEXT, NUMBER, BOOL, LIST, HZ, HASH, TIME, GROUP, MAP)

# Whether it is part of the machine identity.
MACHINE = "machine"    # it is: it changes what is measured
BOARD = "board"        # it is, but not in a lab run: the emulated machine is the lab group's
PER_RUN = "per run"    # changes between runs of one machine: the time, the timer's
#                        calibration, the kcross build, a LAVA job's id
LABEL = "label"        # a name, not the machine: the same configuration under another name
RECORD = "record"      # the record's own envelope, not the machine's
# It is, but not in a lab run: there it is the lab machine's kernel axis, the kernel booted
# and what the guest reads of it (a lab machine's runs with two kernels are one machine's).
KERNEL_AXIS = "kernel axis"
IDENTITIES = (MACHINE, BOARD, PER_RUN, LABEL, RECORD, KERNEL_AXIS)

# Its group, for people.
G_MACHINE = "machine"
G_CPU = "CPU"
G_KERNEL = "kernel"
G_SETTINGS = "settings"
G_MEASUREMENT = "measurement"
G_TIMER = "timer"
G_LIBC = "libc"
G_RSEQ = "rseq"
G_PERF = "perf"
G_BUILD = "build"
G_RUN = "run"
G_LAB = "lab"
G_LAVA = "lava"
G_RECORD = "record"
GROUPS = (G_MACHINE, G_CPU, G_KERNEL, G_SETTINGS, G_MEASUREMENT, G_TIMER, G_LIBC, G_RSEQ,
          G_PERF, G_BUILD, G_RUN, G_LAB, G_LAVA, G_RECORD)

# How the warning beside a comparison of different machines names it
# (kcross.judge.machine.differences): the fields that make two runs' figures incomparable.
WHOLE = "whole"        # by its label when its value differs (a map: with the names that do)
EACH = "each"          # a group: each member that differs, by the member's label
NAMED = ("", WHOLE, EACH)   # "": named only when none of those differ

Path = tuple[str, ...]


def as_text(value: Any) -> str | None:
    """A field's value as text: None for null or absent, ``str`` of anything else (how a
    configuration names its harness, and the store's text copies of fields)."""
    return None if value is None else str(value)


@dataclass(frozen=True)
class Field:
    """One field of the fingerprint: a value, or a group of fields (kind GROUP or MAP)."""

    path: Path           # in the record: ("cpu", "model")
    label: str           # for people, alone: "CPU model"
    kind: str            # KINDS
    group: str           # GROUPS
    identity: str = MACHINE   # IDENTITIES
    # A group whose members not listed here are not part of the identity either (LAVA's:
    # only what names the board is); elsewhere an unlisted member is, as the harness wrote it.
    closed: bool = False
    named: str = ""      # NAMED

    @property
    def name(self) -> str:
        """The path as the docs write it: ``cpu.model``."""
        return ".".join(self.path)

    def of(self, fingerprint: Mapping[str, Any] | None) -> Any:
        """The field's value; None when it, or a group on its path, is null or absent."""
        node: Any = fingerprint
        for key in self.path:
            if not isinstance(node, Mapping):
                return None
            node = node.get(key)
        return node

    def text(self, fingerprint: Mapping[str, Any] | None) -> str | None:
        """The field's value as text (:func:`as_text`)."""
        return as_text(self.of(fingerprint))

    def members(self, fingerprint: Mapping[str, Any] | None) -> Mapping[str, Any]:
        """A group's (or a map's) members; empty when it is null, absent or not an object."""
        value = self.of(fingerprint)
        return value if isinstance(value, Mapping) else {}

    def put(self, fingerprint: Mapping[str, Any], value: Any) -> dict[str, Any]:
        """A copy of ``fingerprint`` with this field set to ``value`` (a null group on its
        path becomes an object)."""
        def put_in(node: Any, path: Path) -> dict[str, Any]:
            here = dict(node) if isinstance(node, Mapping) else {}
            here[path[0]] = value if len(path) == 1 else put_in(here.get(path[0]), path[1:])
            return here
        return put_in(fingerprint, self.path)

    def in_identity(self, lab_run: bool) -> bool:
        return self.identity == MACHINE or \
            (self.identity in (BOARD, KERNEL_AXIS) and not lab_run)


_ALL: list[Field] = []


def _f(name: str, label: str, kind: str, group: str, identity: str = MACHINE, *,
       closed: bool = False, named: str = "") -> Field:
    field = Field(tuple(name.split(".")), label, kind, group, identity, closed, named)
    _ALL.append(field)
    return field


# ---------------------------------------------------------------- the registry
# In the order a reader checks them (kcross.judge.machine.differences names them so): a
# group, then its members.  ``named``: the fields a warning of different machines names
# first (the others only when none of these differ).

HOST = _f("host", "host", GROUP, G_MACHINE)
HOSTNAME = _f("host.hostname", "hostname", TEXT, G_MACHINE, named=WHOLE)
HOST_TIME = _f("host.time", "start time", TIME, G_RUN, PER_RUN)
ARCH = _f("arch", "arch", TEXT, G_MACHINE, named=WHOLE)

CPU = _f("cpu", "CPU", GROUP, G_CPU)
CPU_MODEL = _f("cpu.model", "CPU model", TEXT, G_CPU, named=WHOLE)
CPU_VENDOR = _f("cpu.vendor", "CPU vendor", TEXT, G_CPU)
CPU_FAMILY = _f("cpu.family", "CPU family", NUMBER, G_CPU)
CPU_MODEL_ID = _f("cpu.model_id", "CPU model number", NUMBER, G_CPU)
CPU_STEPPING = _f("cpu.stepping", "CPU stepping", NUMBER, G_CPU)
CPU_MICROCODE = _f("cpu.microcode", "microcode", TEXT, G_CPU, named=WHOLE)
# The flags /proc/cpuinfo lists: the CPU's, and those the kernel adds (its bug and
# mitigation flags, features it learned to name).
CPU_FLAGS = _f("cpu.flags", "CPU flags", LIST, G_CPU, KERNEL_AXIS)
CPU_ONLINE = _f("cpu.online", "CPUs online", NUMBER, G_CPU)
CPU_POSSIBLE = _f("cpu.possible", "CPUs possible", TEXT, G_CPU)

KERNEL = _f("kernel", "kernel", GROUP, G_KERNEL)
KERNEL_RELEASE = _f("kernel.release", "kernel release", TEXT, G_KERNEL, KERNEL_AXIS,
                    named=WHOLE)
KERNEL_VERSION = _f("kernel.version", "kernel version", TEXT, G_KERNEL, KERNEL_AXIS)
KERNEL_CMDLINE = _f("kernel.cmdline", "kernel command line", TEXT, G_KERNEL, named=WHOLE)

VIRTUALIZATION = _f("virtualization", "virtualization", GROUP, G_MACHINE)
HYPERVISOR_FLAG = _f("virtualization.hypervisor_flag", "hypervisor", BOOL, G_MACHINE,
                     named=WHOLE)
HYPERVISOR_TYPE = _f("virtualization.hypervisor_type", "hypervisor type", TEXT, G_MACHINE,
                     named=WHOLE)
DMI_SYS_VENDOR = _f("virtualization.dmi_sys_vendor", "DMI system vendor", TEXT, G_MACHINE)
DMI_PRODUCT_NAME = _f("virtualization.dmi_product_name", "DMI product name", TEXT, G_MACHINE)

SYSCALL = _f("syscall", "system calls", GROUP, G_MEASUREMENT)
SYSCALL_MECHANISM = _f("syscall.mechanism", "syscall mechanism", TEXT, G_MEASUREMENT,
                       named=WHOLE)
SYSCALL_AVAILABLE = _f("syscall.available", "syscall mechanisms available", LIST,
                       G_MEASUREMENT)
SYSCALL_FORCED = _f("syscall.forced", "syscall mechanism forced", TEXT, G_MEASUREMENT)

TIMER = _f("timer", "timer group", GROUP, G_TIMER)
TIMER_SOURCE = _f("timer.source", "timer", TEXT, G_TIMER, named=WHOLE)
TIMER_HZ = _f("timer.hz", "timer frequency", HZ, G_TIMER, PER_RUN)
TIMER_INVARIANT = _f("timer.invariant", "timer invariant", BOOL, G_TIMER)
TIMER_FALLBACK = _f("timer.fallback_reason", "why not the cycle counter", TEXT, G_TIMER)
TIMER_CALIBRATION = _f("timer.calibration", "timer calibration", GROUP, G_TIMER, PER_RUN)
CALIBRATED_AGAINST = _f("timer.calibration.against", "timer calibrated against", TEXT,
                        G_TIMER, PER_RUN)
CALIBRATION_MS = _f("timer.calibration.ms", "timer calibration time (ms)", NUMBER, G_TIMER,
                    PER_RUN)
CALIBRATION_ERROR = _f("timer.calibration.error_ppm", "timer calibration error (ppm)", NUMBER,
                       G_TIMER, PER_RUN)

POWER = _f("power", "power (cpufreq)", GROUP, G_SETTINGS)
GOVERNOR = _f("power.governor", "frequency governor", TEXT, G_SETTINGS, named=WHOLE)
FREQUENCY_DRIVER = _f("power.driver", "frequency driver", TEXT, G_SETTINGS)
SMT = _f("smt", "simultaneous multithreading", GROUP, G_SETTINGS)
SMT_ACTIVE = _f("smt.active", "SMT", TEXT, G_SETTINGS, named=WHOLE)
SMT_CONTROL = _f("smt.control", "SMT control", TEXT, G_SETTINGS, KERNEL_AXIS)
ISOLATION = _f("isolation", "CPU isolation", GROUP, G_SETTINGS)
# As sysfs shows them: a lab run's setting is its command line (kernel.cmdline, lab.append);
# whether its kernel shows it (an empty file or none) is the kernel's.
ISOLCPUS = _f("isolation.isolcpus", "isolated CPUs", TEXT, G_SETTINGS, KERNEL_AXIS,
              named=WHOLE)
NOHZ_FULL = _f("isolation.nohz_full", "nohz_full", TEXT, G_SETTINGS, KERNEL_AXIS, named=WHOLE)

LAB = _f("lab", "lab", GROUP, G_LAB, named=WHOLE)
LAB_MODE = _f("lab.mode", "lab mode", TEXT, G_LAB)
LAB_UNIT = _f("lab.unit", "lab unit", TEXT, G_LAB)
LAB_EMULATOR = _f("lab.emulator", "emulator", TEXT, G_LAB)
LAB_EMULATOR_VERSION = _f("lab.emulator_version", "emulator version", TEXT, G_LAB)
LAB_ACCEL = _f("lab.accel", "accelerator", TEXT, G_LAB)
LAB_ICOUNT = _f("lab.icount", "icount", TEXT, G_LAB)
LAB_SEED = _f("lab.seed", "seed", NUMBER, G_LAB)
LAB_MACHINE = _f("lab.machine", "emulated machine", TEXT, G_LAB)
LAB_CPU = _f("lab.cpu", "emulated CPU model", TEXT, G_LAB)
LAB_SMP = _f("lab.smp", "vCPUs", NUMBER, G_LAB)
# The kernel booted: the lab machine's kernel axis (KERNEL_AXIS), not its identity.
LAB_KERNEL = _f("lab.kernel", "lab kernel", GROUP, G_LAB, KERNEL_AXIS)
LAB_KERNEL_SOURCE = _f("lab.kernel.source", "lab kernel source", TEXT, G_LAB, KERNEL_AXIS)
LAB_KERNEL_PACKAGE = _f("lab.kernel.package", "lab kernel package", TEXT, G_LAB, KERNEL_AXIS)
LAB_KERNEL_VERSION = _f("lab.kernel.version", "lab kernel version", TEXT, G_LAB, KERNEL_AXIS)
# The Debian release whose package it is (kcross lab --release; absent in runs made before
# there were releases: bookworm's).
LAB_KERNEL_RELEASE = _f("lab.kernel.release", "lab kernel release", TEXT, G_LAB, KERNEL_AXIS)
# Where the kernel file lies: its SHA-256 says which kernel it is.
LAB_KERNEL_PATH = _f("lab.kernel.path", "lab kernel file", TEXT, G_LAB, LABEL)
LAB_KERNEL_SHA256 = _f("lab.kernel.sha256", "lab kernel SHA-256", HASH, G_LAB, KERNEL_AXIS)
LAB_KERNEL_CONFIG_SHA256 = _f("lab.kernel.config_sha256", "lab kernel configuration SHA-256",
                              HASH, G_LAB, KERNEL_AXIS)
# The version text the image carries ("Linux version ..."'s, or a bzImage header's).
LAB_KERNEL_VERSION_STRING = _f("lab.kernel.version_string", "lab kernel version string", TEXT,
                               G_LAB, KERNEL_AXIS)
LAB_APPEND = _f("lab.append", "appended to the kernel command line", TEXT, G_LAB)
# A --mitigations variant's or a --compare side's name: the same configuration under
# another name is the same machine.
LAB_VARIANT = _f("lab.variant", "lab variant", TEXT, G_LAB, LABEL)
LAB_NETWORK = _f("lab.network", "network card", TEXT, G_LAB)

VULNERABILITIES = _f("vulnerabilities", "mitigations", MAP, G_KERNEL, KERNEL_AXIS,
                     named=WHOLE)

FORCED = _f("forced", "forced", GROUP, G_SETTINGS, named=EACH)
# One field per harness setting, named by kcross.forcings (the one list of them).
for _forcing in FORCINGS:
    _f(f"forced.{_forcing.name}", f"forced {_forcing.name}", TEXT, G_SETTINGS)

LIBC = _f("libc", "C library", GROUP, G_LIBC)
LIBC_NAME = _f("libc.name", "libc", TEXT, G_LIBC)
LIBC_VERSION = _f("libc.version", "libc version", TEXT, G_LIBC)

RSEQ = _f("rseq", "rseq", GROUP, G_RSEQ)
RSEQ_REGISTERED = _f("rseq.registered", "rseq registered", BOOL, G_RSEQ)
RSEQ_OWNER = _f("rseq.owner", "rseq owner", TEXT, G_RSEQ)
# The area registered, its alignment and the features it has: as the kernel asks and
# offers them (AT_RSEQ_FEATURE_SIZE, AT_RSEQ_ALIGN: 6.3 on).
RSEQ_SIZE = _f("rseq.size", "rseq size", NUMBER, G_RSEQ, KERNEL_AXIS)
RSEQ_LIBC_SIZE = _f("rseq.libc_size", "libc __rseq_size", NUMBER, G_RSEQ)
RSEQ_FEATURE_SIZE = _f("rseq.feature_size", "rseq feature size", NUMBER, G_RSEQ,
                       KERNEL_AXIS)
RSEQ_ALIGN = _f("rseq.align", "rseq alignment", NUMBER, G_RSEQ, KERNEL_AXIS)
RSEQ_UNAVAILABLE = _f("rseq.unavailable_reason", "why no rseq", TEXT, G_RSEQ)
RSEQ_PERCPU_MODE = _f("rseq.percpu_mode", "per-CPU operations", TEXT, G_RSEQ)

AUXV = _f("auxv", "auxiliary vector", GROUP, G_MACHINE)
# The capabilities the kernel hands the program: of the CPU, as far as the kernel knows them.
HWCAP = _f("auxv.hwcap", "hwcap", TEXT, G_MACHINE, KERNEL_AXIS)
HWCAP2 = _f("auxv.hwcap2", "hwcap2", TEXT, G_MACHINE, KERNEL_AXIS)
AUXV_RSEQ_FEATURE_SIZE = _f("auxv.rseq_feature_size", "auxv rseq feature size", NUMBER,
                            G_RSEQ, KERNEL_AXIS)
AUXV_RSEQ_ALIGN = _f("auxv.rseq_align", "auxv rseq alignment", NUMBER, G_RSEQ, KERNEL_AXIS)
VDSO_MAPPED = _f("auxv.sysinfo_ehdr", "vDSO mapped", BOOL, G_MACHINE)

PERF = _f("perf", "perf events", GROUP, G_PERF)
# What the kernel's perf events offer (its drivers for the CPU's counters, its defaults).
PERF_PARANOID = _f("perf.paranoid", "perf_event_paranoid", NUMBER, G_PERF, KERNEL_AXIS)
PERF_HARDWARE = _f("perf.hardware", "hardware counters", MAP, G_PERF, KERNEL_AXIS)
PERF_SOFTWARE = _f("perf.software", "software counters", MAP, G_PERF, KERNEL_AXIS)
PERF_REASONS = _f("perf.reasons", "why counters are unavailable", MAP, G_PERF, KERNEL_AXIS)

# Added by `kcross import` of a LAVA job's log.  In a lab (QEMU) run the emulated machine is
# the lab group's, whichever worker ran it: the whole group goes.  A board's device and
# device type are the board: they stay; the job's id and the dispatcher's version are per run.
LAVA = _f("lava", "LAVA", GROUP, G_LAVA, BOARD, closed=True)
LAVA_JOB_ID = _f("lava.job_id", "LAVA job", TEXT, G_LAVA, PER_RUN)
LAVA_DEVICE = _f("lava.device", "LAVA device", TEXT, G_LAVA, BOARD)
LAVA_DEVICE_TYPE = _f("lava.device_type", "LAVA device type", TEXT, G_LAVA, BOARD)
LAVA_DISPATCHER = _f("lava.dispatcher_version", "LAVA dispatcher version", TEXT, G_LAVA,
                     PER_RUN)
# Which log it is (lava-run's or a server's) and the server it was taken from: with the job's
# id, what tells one LAVA run from another (kcross.lava.imports).
LAVA_LOG = _f("lava.log", "LAVA log", TEXT, G_LAVA, PER_RUN)
LAVA_SERVER = _f("lava.server", "LAVA server", TEXT, G_LAVA, PER_RUN)

# The harness that measured: another build measures the same machine.
KCROSS = _f("kcross", "kcross-harness", GROUP, G_BUILD, PER_RUN)
KCROSS_VERSION = _f("kcross.version", "kcross version", TEXT, G_BUILD, PER_RUN)
KCROSS_REVISION = _f("kcross.git_rev", "kcross revision", TEXT, G_BUILD, PER_RUN)
KCROSS_BUILD = _f("kcross.build", "kcross build (static, dynamic)", TEXT, G_BUILD, PER_RUN)
# The harness that measured, as a run-to-run configuration names it (kcross.judge.noise).
HARNESS = (KCROSS_VERSION, KCROSS_REVISION, KCROSS_BUILD)
KCROSS_COMPILER = _f("kcross.compiler", "kcross compiler", TEXT, G_BUILD, PER_RUN)

RECORD_TYPE = _f("type", "record type", TEXT, G_RECORD, RECORD)
RECORD_SCHEMA = _f("schema", "schema version", NUMBER, G_RECORD, RECORD)

FIELDS: tuple[Field, ...] = tuple(_ALL)
_AT: dict[Path, Field] = {f.path: f for f in FIELDS}


def known(path: Iterable[str]) -> Field | None:
    """The registry's field at ``path``, or None: a field of a newer harness (or a name
    of a map's: a vulnerability, a perf event)."""
    return _AT.get(tuple(path))


def ordered(path: Path, keys: Iterable[str]) -> list[str]:
    """The members ``keys`` of the group at ``path`` (() the record) in the registry's
    order, those it does not list after them, sorted."""
    keys = set(keys)
    listed = [f.path[-1] for f in FIELDS if f.path[:-1] == path and f.path[-1] in keys]
    return listed + sorted(keys - set(listed))


def label_of(path: Path) -> str:
    """A field's label for people; a field the registry does not know, by its nearest
    known group's label and the rest of its path (``forced KCROSS_NEW``, ``cpu.cache``)."""
    for cut in range(len(path), 0, -1):
        field = _AT.get(path[:cut])
        if field is not None:
            rest = ".".join(path[cut:])
            return f"{field.label} {rest}" if rest else field.label
    return ".".join(path)


def unknown(fingerprint: Mapping[str, Any]) -> list[tuple[Path, Any]]:
    """The fields the registry does not know (a newer harness's), each with its value, in
    the record's order: a map's names are known, so is all beneath an unknown field."""
    found: list[tuple[Path, Any]] = []

    def walk(group: Mapping[str, Any], path: Path) -> None:
        for key, value in group.items():
            at = (*path, key)
            field = _AT.get(at)
            if field is None:
                found.append((at, value))
            elif field.kind == GROUP and isinstance(value, Mapping):
                walk(value, at)
    walk(fingerprint, ())
    return found


def lab(fingerprint: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The lab group (a run made in a QEMU guest), or None: a real machine's run."""
    group = LAB.of(fingerprint)
    return group if isinstance(group, Mapping) else None


# ---------------------------------------------------------------- the machine identity

def machine_part(fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """The fingerprint as the machine identity reads it: without the fields the registry
    says are not the machine's (per-run values, labels, the record's envelope, a lab run's
    LAVA group, in a closed group what it does not list); a field it does not know stays."""
    lab_run = lab(fingerprint) is not None

    def kept(group: Mapping[str, Any], parent: Field | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in group.items():
            path = (*parent.path, key) if parent is not None else (key,)
            field = _AT.get(path)
            if field is None:
                if parent is not None and parent.closed:
                    continue
            elif not field.in_identity(lab_run):
                continue
            elif field.kind == GROUP and isinstance(value, Mapping):
                value = kept(value, field)
            out[key] = value
        return out
    return kept(fingerprint, None)


def identity(fingerprint: Mapping[str, Any]) -> str:
    """SHA-256 over the fingerprint's :func:`machine_part`, in canonical JSON."""
    canonical = json.dumps(machine_part(fingerprint), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every value beneath ``value`` that is not an object, with its path."""
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            yield from leaves(inner, (*path, key))
    else:
        yield path, value


# ---------------------------------------------------------------- the lab's kernel axis

def kernel_axis(fingerprint: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A lab run's kernel (the ``lab.kernel`` group), or None: a real machine's run, whose
    kernel is part of its identity."""
    if lab(fingerprint) is None:
        return None
    group = LAB_KERNEL.of(fingerprint)
    return group if isinstance(group, Mapping) else {}


# How many hex digits of a kernel file's SHA-256 tell a user's own kernels apart in a label.
KERNEL_SHA_LABEL = 8


def kernel_label(fingerprint: Mapping[str, Any] | None) -> str | None:
    """A lab run's kernel as its axis is labelled: Debian's by release and package version
    (``sid 7.2.13-1``; ``Debian 6.1.176-1`` for a run made before there were releases), a
    user's own file by the release its version string starts with and its SHA-256's first
    digits (``6.13.0-rc1 1a2b3c4d``); None for a real machine's run."""
    if kernel_axis(fingerprint) is None:
        return None
    version = LAB_KERNEL_VERSION.of(fingerprint)
    if LAB_KERNEL_SOURCE.of(fingerprint) == "debian" and version:
        return f"{LAB_KERNEL_RELEASE.of(fingerprint) or 'Debian'} {version}"
    sha = str(LAB_KERNEL_SHA256.of(fingerprint) or "")[:KERNEL_SHA_LABEL]
    said = str(LAB_KERNEL_VERSION_STRING.of(fingerprint) or "").split()
    release = said[0] if said else KERNEL_RELEASE.of(fingerprint)
    return " ".join(str(part) for part in (release, sha) if part) or "unknown kernel"


def kernel_order(fingerprint: Mapping[str, Any] | None) -> tuple[Any, ...]:
    """The sort key of a lab run's kernel along its axis, oldest kernel first: Debian's by
    package version (the releases' own order: bullseye's 5.10 before bookworm's 6.1...),
    a user's file by the release its version string names, else the guest's release."""
    version = LAB_KERNEL_VERSION.of(fingerprint)
    if not (LAB_KERNEL_SOURCE.of(fingerprint) == "debian" and version):
        said = str(LAB_KERNEL_VERSION_STRING.of(fingerprint) or "").split()
        version = said[0] if said else KERNEL_RELEASE.of(fingerprint)
    return version_order(str(version or ""))


# A version's parts compared: enough for any kernel's (6.12.95-1~bpo12+1 has 9).
_VERSION_PARTS = 16


def version_order(version: str) -> tuple[Any, ...]:
    """A sort key in Debian's version order (dpkg's: epoch, then the upstream version and
    the revision compared part by part, digits as numbers, ``~`` before anything, even the
    end: ``6.12.95-1~bpo12+1`` before ``6.12.95-1``)."""
    epoch, colon, rest = version.partition(":")
    if not colon or not epoch.isdigit():
        epoch, rest = "0", version
    upstream, dash, revision = rest.rpartition("-")
    if not dash:
        upstream, revision = rest, ""

    def parts(text: str) -> tuple[Any, ...]:
        found: list[Any] = []
        for letters, digits in re.findall(r"(\D*)(\d*)", text)[:_VERSION_PARTS]:
            weights = tuple(-1 if c == "~" else ord(c) if c.isalpha() else ord(c) + 256
                            for c in letters)
            found += [(*weights, 0), int(digits or 0)]
        padding = [(0,), 0] * (_VERSION_PARTS - len(found) // 2)
        return tuple(found + padding)
    return (int(epoch), parts(upstream), parts(revision))


T = TypeVar("T")


def along_kernels(items: Sequence[T], machine: Callable[[T], Hashable | None],
                  order: Callable[[T], Any]) -> list[T]:
    """``items`` with each lab machine's (``machine``: its key, None for what is not a lab
    machine's) put in its kernels' ``order`` at the places its items take: a lab machine
    seen with several kernels is its release series; everything else stays where it is."""
    places: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        key = machine(item)
        if key is not None:
            places.setdefault(key, []).append(i)
    found = list(items)
    for held in places.values():
        for i, item in zip(held, sorted((items[i] for i in held), key=order), strict=True):
            found[i] = item
    return found


def several_kernels(fingerprints: Iterable[Mapping[str, Any] | None]) -> set[str]:
    """The lab machines (identities) the fingerprints show with several kernels."""
    kernels: dict[str, set[str]] = {}
    for fp in fingerprints:
        kernel = kernel_label(fp)
        if fp is not None and kernel is not None:
            kernels.setdefault(identity(fp), set()).add(kernel)
    return {machine for machine, seen in kernels.items() if len(seen) > 1}


def release_series(items: Sequence[T], fingerprint: Callable[[T], Mapping[str, Any] | None]
                   ) -> list[T]:
    """``items`` with each lab machine's shown with several kernels in its kernels' order
    (:func:`kernel_order`, oldest first; then as given) at the places they take: the
    release series ``kcross compare`` and ``kcross report`` step through."""
    several = several_kernels(fingerprint(i) for i in items)
    place = {id(item): n for n, item in enumerate(items)}

    def machine(item: T) -> str | None:
        fp = fingerprint(item)
        return m if fp is not None and (m := identity(fp)) in several else None
    return along_kernels(items, machine,
                         lambda i: (kernel_order(fingerprint(i)), place[id(i)]))
