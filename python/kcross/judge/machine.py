"""Is it the same machine, and what differs?  The one rule, three questions:

- :func:`identity`: the store's machine identity, a SHA-256 over every fingerprint field
  that changes what is measured (the kernel and its command line, the CPU and its
  microcode, the forced settings, a lab's emulated machine...), without per-run values
  (time, the calibrated timer frequency, the kcross build).  Runs of one identity are
  repetitions of one measurement: their spread is the machine's run-to-run noise.
- :func:`host`: the box a trend follows (hostname, arch, CPU model; a lab's emulated
  machine, CPU and mode): a new kernel on the same box is a point of its trend.
- :func:`differences`: the fields that differ between fingerprints, named in the order a
  reader checks them, for the warning beside a comparison of different machines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..schema import dig

# Fingerprint fields that differ between two runs on the same machine configuration and
# therefore must not split it into two machines.  The lab group (fingerprint.lab) has
# nothing volatile: emulator and its version, machine and CPU model, kernel (by its
# SHA-256, also its path), what was appended to the command line and the variant all
# change what is counted, so every one of them makes a machine of its own, and an
# emulated machine never shares a row with a real one.
_VOLATILE: dict[str, tuple[str, ...] | None] = {"kcross": None, "host": ("time",),
                                                "timer": ("hz", "calibration")}
# A LAVA job's group (fingerprint.lava, added by `kcross import` of its log): the job's id
# and the dispatcher's version are per run.  In a lab (QEMU) run the emulated machine is
# the lab group's, whichever worker ran it: the whole group goes.  A board's device and
# device type are the board: they stay.
_LAVA_MACHINE = ("device", "device_type")


def identity(fingerprint: Mapping[str, Any]) -> str:
    """SHA-256 over the fingerprint without per-run values (time, calibrated timer Hz,
    kcross build).

    Everything else is the machine, ``lab`` included but for its labels: the variant's
    name (the same configuration under another name is the same machine) and where the
    kernel file lies (its SHA-256 says which kernel it is); of ``lava``, a board's device
    and device type (see _LAVA_MACHINE).
    """
    ident: dict[str, Any] = {}
    for key, value in fingerprint.items():
        if key in ("type", "schema"):
            continue
        if key in _VOLATILE:
            drop = _VOLATILE[key]
            if drop is None:
                continue
            if isinstance(value, dict):
                value = {k: v for k, v in value.items() if k not in drop}
        if key == "lava" and isinstance(value, dict):
            if isinstance(fingerprint.get("lab"), dict):
                continue
            value = {k: v for k, v in value.items() if k in _LAVA_MACHINE}
        if key == "lab" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != "variant"}
            if isinstance(value.get("kernel"), dict):
                value["kernel"] = {k: v for k, v in value["kernel"].items() if k != "path"}
        ident[key] = value
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def same_machine(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return identity(a) == identity(b)


def host(fingerprint: Mapping[str, Any]) -> tuple[str, ...]:
    """What "the same host" means for a trend: hostname, arch, CPU model (and a lab's
    emulated machine, CPU model and mode)."""
    key = [str(dig(fingerprint, "host", "hostname") or "?"), str(fingerprint.get("arch") or "?"),
           str(dig(fingerprint, "cpu", "model") or "?")]
    lab = fingerprint.get("lab")
    if isinstance(lab, dict):
        key += ["lab", str(lab.get("machine")), str(lab.get("cpu")), str(lab.get("mode"))]
    return tuple(key)


# The fields that make two runs' figures incomparable, in the order they are named.
FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hostname", ("host", "hostname")),
    ("arch", ("arch",)),
    ("CPU model", ("cpu", "model")),
    ("microcode", ("cpu", "microcode")),
    ("kernel release", ("kernel", "release")),
    ("kernel command line", ("kernel", "cmdline")),
    ("hypervisor", ("virtualization", "hypervisor_flag")),
    ("hypervisor type", ("virtualization", "hypervisor_type")),
    ("syscall mechanism", ("syscall", "mechanism")),
    ("timer", ("timer", "source")),
    ("frequency governor", ("power", "governor")),
    ("SMT", ("smt", "active")),
    ("isolated CPUs", ("isolation", "isolcpus")),
    ("nohz_full", ("isolation", "nohz_full")),
    ("lab", ("lab",)),
)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def differences(prints: Sequence[Mapping[str, Any] | None]) -> list[str]:
    """Names of the fingerprint fields that differ between the fingerprints given (None:
    a side without one, plain numbers, is left out)."""
    found = [fp for fp in prints if fp is not None]
    if len(found) < 2 or len({identity(fp) for fp in found}) == 1:
        return []
    differ = [label for label, path in FIELDS
              if len({_canon(dig(fp, *path)) for fp in found}) > 1]
    vulns = sorted({k for fp in found for k in (fp.get("vulnerabilities") or {})})
    changed = [k for k in vulns
               if len({_canon(dig(fp, "vulnerabilities", k)) for fp in found}) > 1]
    if changed:
        differ.append("mitigations (" + ", ".join(changed) + ")")
    forced = sorted({k for fp in found for k in (fp.get("forced") or {})})
    differ += [f"forced {k}" for k in forced
               if len({_canon(dig(fp, "forced", k)) for fp in found}) > 1]
    return differ or ["other fingerprint fields"]


def differences_line(prints: Sequence[Mapping[str, Any] | None]) -> str | None:
    """The one warning line for sides from different machines or settings, or None."""
    differ = differences(prints)
    if not differ:
        return None
    return ("the sides' fingerprints differ in " + ", ".join(differ)
            + ": their figures come from different machines or settings")
