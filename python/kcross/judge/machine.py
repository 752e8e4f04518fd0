"""Is it the same machine, and what differs?  The one rule, three questions:

- :func:`same_machine`: whether two fingerprints have one machine identity
  (:func:`kcross.fingerprint.identity`, the store's, which stands below the store and the
  judge: runs of one identity are repetitions of one measurement, their spread is the
  machine's run-to-run noise).
- :func:`host`: the box a trend follows (hostname, arch, CPU model; a lab's emulated
  machine, CPU and mode): a new kernel on the same box is a point of its trend.
- :func:`differences`: the fields that differ between fingerprints, named in the order a
  reader checks them, for the warning beside a comparison of different machines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..fingerprint import identity
from ..schema import dig


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
