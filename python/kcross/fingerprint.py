"""A run's fingerprint (its first record: the machine, its kernel and settings, the kcross
build) as the store and the judge read it: the machine identity rule.

:func:`identity` is the store's machine identity, a SHA-256 over every fingerprint field
that changes what is measured (the kernel and its command line, the CPU and its
microcode, the forced settings, a lab's emulated machine...), without per-run values
(time, the calibrated timer frequency, the kcross build).  Runs of one identity are
repetitions of one measurement: their spread is the machine's run-to-run noise.  The
store keys its machine rows by it; kcross.judge.machine asks it whether two runs are of
one machine.  It stands below both, here, and imports nothing of kcross.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

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

# How much of a machine's identity is shown to a person (``kcross runs``, history, check):
# short enough to type (latest@PREFIX takes it), long enough to mean something.
HASH_SHOWN = 8


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
