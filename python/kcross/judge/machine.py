"""Is it the same machine, and what differs?  The one rule, three questions:

- :func:`same_machine`: whether two fingerprints have one machine identity
  (:func:`kcross.fingerprint.identity`, the store's, which stands below the store and the
  judge: runs of one identity are repetitions of one measurement, their spread is the
  machine's run-to-run noise).
- :func:`host`: the box a trend follows (hostname, arch, CPU model; a lab's emulated
  machine, CPU and mode): a new kernel on the same box is a point of its trend.
- :func:`differences`: the fields that differ between fingerprints, named in the order a
  reader checks them (kcross.fingerprint's registry: its ``named`` fields, else the rest
  of the machine identity), for the warning beside a comparison of different machines.

A lab machine's kernel is its axis, not its identity (kcross.fingerprint.KERNEL_AXIS): its
runs with several kernels are one machine's, a release series (kcross.fingerprint's
release_series puts them in their kernels' order).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .. import fingerprint as fields
from ..fingerprint import identity


def same_machine(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return identity(a) == identity(b)


def host(fingerprint: Mapping[str, Any]) -> tuple[str, ...]:
    """What "the same host" means for a trend: hostname, arch, CPU model (and a lab's
    emulated machine, CPU model and mode)."""
    key = [str(f.of(fingerprint) or "?") for f in (fields.HOSTNAME, fields.ARCH, fields.CPU_MODEL)]
    if fields.lab(fingerprint) is not None:
        key += ["lab", *(str(f.of(fingerprint)) for f in (fields.LAB_MACHINE, fields.LAB_CPU,
                                                            fields.LAB_MODE))]
    return tuple(key)


# How many of the fields named when none of the registry's ``named`` ones differ (the last
# place says how many more).
NAMED_MOST = 10


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _differ(values: Sequence[Any]) -> bool:
    return len({_canon(v) for v in values}) > 1


def _named(found: Sequence[Mapping[str, Any]]) -> list[str]:
    """The registry's ``named`` fields that differ, in its order, as they are written."""
    differ: list[str] = []
    for field in fields.FIELDS:
        if field.named == fields.WHOLE and field.kind == fields.MAP:
            keys = sorted({k for fp in found for k in field.members(fp)})
            changed = [k for k in keys if _differ([field.members(fp).get(k) for fp in found])]
            if changed:
                differ.append(f"{field.label} ({', '.join(changed)})")
        elif field.named == fields.WHOLE:
            if _differ([field.of(fp) for fp in found]):
                differ.append(field.label)
        elif field.named == fields.EACH:
            keys = fields.ordered(field.path, {k for fp in found for k in field.members(fp)})
            differ += [fields.label_of((*field.path, k)) for k in keys
                       if _differ([field.members(fp).get(k) for fp in found])]
    return differ


def _settled(value: Any) -> Any:
    """A group none of whose fields could be read says no more than a null one."""
    if isinstance(value, Mapping) and all(v is None for _, v in fields.leaves(value)):
        return None
    return value


def _at(part: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = part
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _differing(parts: Sequence[Mapping[str, Any]], path: tuple[str, ...] = ()) -> list[str]:
    """The labels of the fields at and below ``path`` that differ between the machine parts
    (kcross.fingerprint.machine_part): a group one has not, as the group; a field the
    registry does not know, by its path."""
    values = [_at(part, path) for part in parts]
    if not _differ([_settled(v) for v in values]):
        return []
    if not all(isinstance(v, Mapping) for v in values):
        return [fields.label_of(path)]
    keys = fields.ordered(path, {k for v in values for k in v})
    field = fields.known(path) if path else None
    if field is not None and field.kind == fields.MAP:
        changed = [k for k in keys if _differ([_settled(v.get(k)) for v in values])]
        return [f"{field.label} ({', '.join(changed)})"]
    return [name for key in keys for name in _differing(parts, (*path, key))]


def differences(prints: Sequence[Mapping[str, Any] | None]) -> list[str]:
    """Labels of the fingerprint fields that differ between the fingerprints given (None: a
    side without one, plain numbers, is left out): the registry's ``named`` fields in its
    order (kcross.fingerprint.FIELDS); when none of them differ, the other fields of the
    machine identity that do (a field the registry does not know by its path; past
    NAMED_MOST, how many more)."""
    found = [fp for fp in prints if fp is not None]
    if len(found) < 2 or len({identity(fp) for fp in found}) == 1:
        return []
    differ = _named(found)
    if differ:
        return differ
    differ = _differing([fields.machine_part(fp) for fp in found])
    if len(differ) > NAMED_MOST:
        differ = [*differ[:NAMED_MOST - 1], f"{len(differ) - NAMED_MOST + 1} more fields"]
    return differ or ["other fingerprint fields"]


def differences_line(prints: Sequence[Mapping[str, Any] | None]) -> str | None:
    """The one warning line for sides from different machines or settings, or None."""
    differ = differences(prints)
    if not differ:
        return None
    return ("the sides' fingerprints differ in " + ", ".join(differ)
            + ": their figures come from different machines or settings")
