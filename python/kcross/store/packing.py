"""A result record's sample arrays, stored compactly (schema 5: results.samples).

A result record is mostly numbers: its samples, the ticks they were measured in, and
the empty loop's samples and ticks.  As JSON text they take 13 to 20 bytes each; as
little-endian float64 they take 8, and reading them back is one ``frombuffer`` instead
of a JSON parse.  :func:`pack` takes those arrays out of a record (their keys stay in
place with the value ``null``, so that the record's key order survives on SQLite) and
:func:`unpack` puts them back: the record comes back equal to the one stored, each
number of the same Python type (an integer tick stays an integer), so the run's
content hash (``store.writing.content_hash``) does not change.

An array is taken out only if it is a list of JSON numbers that float64 (or int64, for
a list of integers) holds exactly; anything else stays in the JSON, as it was.

Layout (format 1, frozen: migration 5 writes it): the byte ``1``, then per array its
key code (``KEYS``), its kind (0 float64, 1 int64, 2 float64 with a bitmap of the
elements that were integers), its length (uint32), the bitmap (kind 2: one bit per
element, little-endian bit order), and its values.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Mapping
from typing import Any

FORMAT = 1
# Where the arrays are: (key,) in the record or (key, subkey) in the record's overhead.
KEYS: tuple[tuple[str, ...], ...] = (("samples",), ("ticks",), ("overhead", "samples"),
                                     ("overhead", "ticks"))
_FLOAT, _INT, _MIXED = 0, 1, 2
_HEAD = struct.Struct("<BBI")
_EXACT_INT = 2**53   # integers a float64 holds exactly (for a mixed array)
_INT64 = 2**63
_SWAP = sys.byteorder != "little"   # the stored arrays are little-endian


def _to_bytes(values: list[Any], typecode: str) -> bytes:
    """``values`` as little-endian float64 ("d") or int64 ("q")."""
    a = array(typecode, values)
    if _SWAP:
        a.byteswap()
    return a.tobytes()


def _from_bytes(data: memoryview, typecode: str) -> list[Any]:
    a = array(typecode)
    a.frombytes(data)
    if _SWAP:
        a.byteswap()
    return a.tolist()


def _kind(values: list[Any]) -> int | None:
    """How a list can be packed exactly, or None (it stays in the JSON)."""
    floats = ints = 0
    for x in values:
        t = type(x)
        if t is float:
            floats += 1
        elif t is int:
            ints += 1
        else:
            return None  # bool, None, a string, a list...
    if ints == 0:
        return _FLOAT
    if floats == 0:
        return _INT if all(-_INT64 <= x < _INT64 for x in values) else None
    return _MIXED if all(type(x) is float or -_EXACT_INT <= x <= _EXACT_INT
                         for x in values) else None


def pack(record: Mapping[str, Any]) -> tuple[dict[str, Any], bytes | None]:
    """The record with its arrays set to null, and the arrays packed (None: none taken)."""
    stripped = dict(record)
    overhead = record.get("overhead")
    if isinstance(overhead, Mapping):
        stripped["overhead"] = dict(overhead)
    parts = [bytes([FORMAT])]
    for code, path in enumerate(KEYS):
        holder = stripped if len(path) == 1 else stripped.get(path[0])
        if not isinstance(holder, dict):
            continue
        values = holder.get(path[-1])
        if not isinstance(values, list):
            continue
        kind = _kind(values)
        if kind is None:
            continue
        parts.append(_HEAD.pack(code, kind, len(values)))
        if kind == _MIXED:
            bits = sum(1 << i for i, x in enumerate(values) if type(x) is int)
            parts.append(bits.to_bytes((len(values) + 7) // 8, "little"))
        parts.append(_to_bytes(values, "q" if kind == _INT else "d"))
        holder[path[-1]] = None
    if len(parts) == 1:
        return dict(record), None
    return stripped, b"".join(parts)


def _arrays(record: Mapping[str, Any], packed: bytes) -> list[tuple[tuple[str, ...], int, int,
                                                                    int]]:
    """The packed arrays' (key, kind, length, offset of the bitmap or values), checked
    against the bytes and the record; ValueError when they do not fit."""
    data = memoryview(packed)
    if not data or data[0] != FORMAT:
        raise ValueError("packed samples of an unknown format")
    found = []
    at = 1
    while at < len(data):
        if at + _HEAD.size > len(data):
            raise ValueError("packed samples are cut short")
        code, kind, n = _HEAD.unpack_from(data, at)
        at += _HEAD.size
        if code >= len(KEYS) or kind not in (_FLOAT, _INT, _MIXED):
            raise ValueError("packed samples are damaged")
        end = at + ((n + 7) // 8 if kind == _MIXED else 0) + 8 * n
        if end > len(data):
            raise ValueError("packed samples are cut short")
        path = KEYS[code]
        holder = record if len(path) == 1 else record.get(path[0])
        if not isinstance(holder, Mapping) or holder.get(path[-1], 0) is not None:
            raise ValueError(f"packed {'.'.join(path)} has no place in the record")
        found.append((path, kind, n, at))
        at = end
    return found


def check(record: Mapping[str, Any], packed: bytes | None) -> None:
    """Raise ValueError unless ``packed`` can be put back into ``record``."""
    if packed is not None:
        _arrays(record, packed)


def unpack(record: dict[str, Any], packed: bytes | None) -> dict[str, Any]:
    """Put the packed arrays back into ``record`` (changed in place and returned).

    Raises ValueError for bytes that are not format 1 or do not fit the record.
    """
    if packed is None:
        return record
    data = memoryview(packed)
    for path, kind, n, at in _arrays(record, packed):
        bits = None
        if kind == _MIXED:
            size = (n + 7) // 8
            bits = int.from_bytes(data[at:at + size], "little")
            at += size
        values = _from_bytes(data[at:at + 8 * n], "q" if kind == _INT else "d")
        if bits is not None:
            values = [int(x) if bits >> i & 1 else x for i, x in enumerate(values)]
        holder = record if len(path) == 1 else record[path[0]]
        holder[path[-1]] = values
    return record
