"""Validation of the JSON-lines records written by ``kcross-harness`` (docs/result-format.md).

The harness is a separate C program, possibly built from another revision or
run on another machine (``kcross import``), so nothing it writes is trusted
until it has been checked here.  Every error is one line naming where the
record was read ("harness output line 3", "run.jsonl line 7") and the JSON
path inside it, so the user can find it.

The contract is ONE file, ``result-format.schema.json`` (JSON Schema, draft
2020-12), shipped inside this package; every record is validated against it.
This module adds only what JSON Schema cannot say: which schema versions a
caller accepts (a live harness must write :data:`SCHEMA_VERSION`; ``kcross
import`` also reads schema 1), no NaN or Infinity (Python's json would accept
them), parallel arrays of equal length, sample indices in range, and the
order of a ``run --json`` stream (:class:`RunStream`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from .errors import SchemaError
from .fingerprint import LAB_MODE, LAB_UNIT, lab

# Schema history (keep in step with docs/result-format.md and the schema file):
#   1 (kcross 0.1.0): fingerprint, plan, result, end records; bench records for `list`.
#     Samples were corrected by the harness when its overhead rule fired.
#   2: raw samples plus the empty loop's own samples (result.overhead.samples/ticks),
#      result.flags, fingerprint.forced; the reader applies the statistics rule.
#   2, later addition (issue 8, labs): fingerprint.lab and the result unit "instructions/op"
#      (a run made by `kcross lab` in a QEMU guest in counting mode).  The version stays 2:
#      a kcross before this refuses such a file (its schema allows only "ns/op") rather
#      than misreading instruction counts as time.  RunStream keeps the two apart.
#   2, later addition (issue 9): result.switches_per_op, result.switches_counted_per_op and
#      the flag counts-mismatch (the ctxsw suite); new keys, absent in older captures.
#   2, later addition (issue 10): the comparison record (`kcross compare --export json`).
#   2, later addition (issue 15): plan.processes and result.process (a run of several
#      harness processes, written by kcross); the comparison record's verdict names its
#      method (exact counts carry no p-value) and what it saw.
SCHEMA_VERSION = 2
# What a harness run by this kcross must write, and what `kcross import` reads.
LIVE_VERSIONS: tuple[int, ...] = (SCHEMA_VERSION,)
IMPORT_VERSIONS: tuple[int, ...] = (1, 2)

SCHEMA_FILE = "result-format.schema.json"
RECORD_TYPES = ("fingerprint", "plan", "result", "end", "bench", "comparison")
RESULT_STATUSES = ("ok", "skipped", "failed")
# The units of a result: wall-clock time per operation from the harness, and instructions per
# operation from a lab run in counting mode (fingerprint.lab; the guest clock advances one
# nanosecond per instruction).  Never mixed in one run (RunStream) nor on one machine.
UNIT_NS = "ns/op"
UNIT_INSTRUCTIONS = "instructions/op"
UNITS = (UNIT_NS, UNIT_INSTRUCTIONS)
LAB_COUNTING = "counting"


class MalformedLine(SchemaError):
    """The line is not JSON at all (as opposed to a JSON record that breaks the schema).

    Told apart because an unterminated last line of this kind is what a
    capture cut off mid-write looks like.
    """


@lru_cache(maxsize=1)
def schema_text() -> str:
    """The JSON Schema file of the result format, as shipped in this package."""
    return resources.files("kcross").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The JSON Schema of the result format, parsed."""
    schema: dict[str, Any] = json.loads(schema_text())
    return schema


@lru_cache(maxsize=1)
def _validator() -> Any:
    # Imported here: jsonschema costs a noticeable fraction of a second, and
    # commands that read no records (``kcross runs``) should not pay it.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema())


def _reject_constant(name: str) -> float:
    """Refuse NaN/Infinity: Python's json accepts them, JSON (and the harness contract) does not."""
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    """A JSON number that overflows a double (1e999) would become inf: refuse it too."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def parse_line(line: str, where: str,
               versions: tuple[int, ...] = LIVE_VERSIONS) -> dict[str, Any]:
    """Parse one JSON line into a validated record; ``where`` names the line in errors."""
    try:
        obj = json.loads(line, parse_constant=_reject_constant, parse_float=_finite_float)
    except ValueError as exc:  # JSONDecodeError and our own refusals
        text = line.strip()
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise MalformedLine(f"{where}: not a JSON record ({exc}): {shown!r}") from None
    except RecursionError:
        raise MalformedLine(f"{where}: not a JSON record (nested too deeply)") from None
    if not isinstance(obj, dict):
        raise SchemaError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    validate(obj, where, versions)
    return obj


def _version_text(versions: tuple[int, ...]) -> str:
    return " or ".join(str(v) for v in versions)


def validate(record: Mapping[str, Any], where: str,
             versions: tuple[int, ...] = LIVE_VERSIONS) -> None:
    """Check one record against the schema file; raise :class:`SchemaError` naming ``where``.

    ``versions`` are the schema versions the caller can use: a harness this
    kcross runs must write :data:`SCHEMA_VERSION`; ``kcross import`` passes
    :data:`IMPORT_VERSIONS`.
    """
    if "schema" not in record:
        raise SchemaError(f"{where}: record has no 'schema' key")
    schema = record["schema"]
    if isinstance(schema, bool) or schema not in versions:
        hint = ("use a kcross and a kcross-harness of matching versions"
                if schema not in IMPORT_VERSIONS or isinstance(schema, bool) else
                "a capture of that version can still be read with 'kcross import'")
        raise SchemaError(f"{where}: record is schema {_short(schema)}, this kcross reads schema "
                          f"{_version_text(versions)} here ({hint})")
    rtype = record.get("type")
    if rtype not in RECORD_TYPES:
        raise SchemaError(f"{where}: unknown record type {rtype!r} "
                          f"(expected one of {', '.join(RECORD_TYPES)})")
    ctx = f"{where}: {rtype} record"
    if rtype in ("result", "bench") and isinstance(record.get("suite"), str) \
            and isinstance(record.get("name"), str):
        ctx += f" {record['suite']}/{record['name']}"
    error = _first_error(record)
    if error is not None:
        raise SchemaError(f"{ctx}: {error}")
    _check_finite(record, ctx, "$")
    if rtype == "result":
        _result_cross_checks(record, ctx)


# --- jsonschema's error as one readable line --------------------------------------------

def _short(value: Any, limit: int = 40) -> str:
    """A value as JSON, cut to ``limit`` characters (a whole samples list is no message)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


_TYPE_WORDS = {"string": "a string", "number": "a number", "integer": "an integer",
               "boolean": "true or false", "object": "an object", "array": "a list",
               "null": "null"}


def _first_error(record: Mapping[str, Any]) -> str | None:
    from .compiled_schema import checker

    fast = checker(schema_text())
    if fast is not None and fast(record):  # the fast yes; jsonschema judges anything else
        return None
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(record))
    if error is None:
        return None
    path = error.json_path
    kind = error.validator
    if kind == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        what = f"missing key{'s' if len(missing) > 1 else ''} " + \
            ", ".join(repr(k) for k in missing)
        return what if path == "$" else f"{path}: {what}"
    if kind == "type":
        types = error.validator_value if isinstance(error.validator_value, list) \
            else [error.validator_value]
        text = f"must be {' or '.join(_TYPE_WORDS.get(str(t), str(t)) for t in types)}, " \
               f"got {_short(error.instance)}"
    elif kind in ("enum", "const"):
        allowed = error.validator_value if kind == "enum" else [error.validator_value]
        text = f"must be {' or '.join(_short(a) for a in allowed)}, got {_short(error.instance)}"
    elif kind in ("minimum", "exclusiveMinimum"):
        text = f"must be {'>=' if kind == 'minimum' else '>'} {error.validator_value}, " \
               f"got {_short(error.instance)}"
    elif kind == "minItems":
        text = f"must have at least {error.validator_value} item(s), got {_short(error.instance)}"
    elif kind == "minLength":
        text = f"must not be empty, got {_short(error.instance)}"
    elif kind == "maxProperties":
        text = f"must be empty, got {_short(error.instance)}"
    else:
        text = error.message if len(error.message) <= 120 else error.message[:117] + "..."
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if description:
        text += f" ({description})"
    return f"{path}: {text}"


# --- what JSON Schema cannot say ---------------------------------------------------------

def _check_finite(value: Any, ctx: str, path: str) -> None:
    """No NaN or Infinity anywhere, also in records built in Python (not parsed)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SchemaError(f"{ctx}: {path}: {value} is not a finite number "
                              "(the format writes null for a value it cannot compute)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, ctx, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_finite(item, ctx, f"{path}[{i}]")


def _result_cross_checks(rec: Mapping[str, Any], ctx: str) -> None:
    n = len(rec["samples"])
    if len(rec["ticks"]) not in (0, n):
        raise SchemaError(f"{ctx}: $.ticks has {len(rec['ticks'])} values, $.samples {n}")
    bad = [i for i in rec["disturbed"] if i >= n]
    if bad:
        raise SchemaError(f"{ctx}: $.disturbed: index {bad[0]} is not a sample "
                          f"(there are {n})")
    overhead = rec["overhead"]
    if rec["schema"] >= 2 and isinstance(overhead, dict) \
            and len(overhead["ticks"]) not in (0, len(overhead["samples"])):
            raise SchemaError(f"{ctx}: $.overhead.ticks has {len(overhead['ticks'])} values, "
                          f"$.overhead.samples {len(overhead['samples'])}")
    threads = rec.get("threads")
    if rec["status"] == "ok" and isinstance(threads, int) and rec.get("thread_cpus") \
            and len(rec["thread_cpus"]) != threads:
        raise SchemaError(f"{ctx}: $.thread_cpus lists {len(rec['thread_cpus'])} CPUs for "
                          f"{threads} threads")
    # A count is compared with a declaration: neither a count nor a verdict without one.
    declared = rec.get("switches_per_op") is not None
    if rec.get("switches_counted_per_op") is not None and not declared:
        raise SchemaError(f"{ctx}: $.switches_counted_per_op without $.switches_per_op "
                          "(a count needs the declaration it is checked against)")
    if any(f.get("flag") == "counts-mismatch" for f in rec.get("flags") or []) \
            and (not declared or rec.get("switches_counted_per_op") is None):
        raise SchemaError(f"{ctx}: flag counts-mismatch without both $.switches_per_op and "
                          "$.switches_counted_per_op")


@dataclass
class RunStream:
    """Checks the order of a ``run --json`` stream and collects what it carried.

    The order is part of the contract: one fingerprint first, one plan, one
    result per planned benchmark, then one end record.  A stream that stops
    early is valid up to where it stopped (``complete`` stays False).  All
    records of one stream carry the same schema version.
    """

    fingerprint: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    _pending: set[tuple[str, str, int]] = field(default_factory=set)

    @property
    def complete(self) -> bool:
        return self.end is not None

    def add(self, record: dict[str, Any], where: str) -> None:
        """Accept an already validated record or raise :class:`SchemaError` if out of order."""
        rtype = record["type"]
        if rtype == "comparison":
            raise SchemaError(f"{where}: a comparison record (from 'kcross compare --export "
                              "json') is not part of a run stream")
        if self.fingerprint is not None and record["schema"] != self.fingerprint["schema"]:
            raise SchemaError(f"{where}: {rtype} record is schema {record['schema']}, the "
                              f"stream began with schema {self.fingerprint['schema']}")
        if self.end is not None:
            raise SchemaError(f"{where}: {rtype} record after the end record")
        if rtype == "fingerprint":
            if self.fingerprint is not None:
                raise SchemaError(f"{where}: second fingerprint record")
            self.fingerprint = record
        elif self.fingerprint is None:
            raise SchemaError(f"{where}: {rtype} record before the fingerprint record")
        elif rtype == "plan":
            if self.plan is not None:
                raise SchemaError(f"{where}: second plan record")
            self.plan = record
            self._pending = {(b["suite"], b["name"], p) for b in record["benchmarks"]
                             for p in range(int(record.get("processes", 1)))}
        elif self.plan is None:
            raise SchemaError(f"{where}: {rtype} record before the plan record")
        elif rtype == "result":
            check_unit(self.fingerprint, record, where)
            key = (record["suite"], record["name"], int(record.get("process", 0)))
            if key not in self._pending:
                seen = any((r["suite"], r["name"], r.get("process", 0)) == key
                           for r in self.results)
                processes = int(self.plan.get("processes", 1))
                what = f"{key[0]}/{key[1]}" + (f" (process {key[2]})" if processes > 1 or key[2]
                                               else "")
                raise SchemaError(f"{where}: result for {what} " + (
                    "was already reported" if seen else
                    f"of process {key[2]}, but the plan has {processes} process(es)"
                    if key[2] >= processes else "which is not in the plan"))
            self._pending.discard(key)
            self.results.append(record)
        elif rtype == "end":
            counted = record["ok"] + record["skipped"] + record["failed"]
            planned = len(self.plan["benchmarks"]) * int(self.plan.get("processes", 1))
            if counted != len(self.results) or self._pending:
                raise SchemaError(f"{where}: end record counts {counted} results, the stream "
                                  f"carried {len(self.results)} of {planned} planned")
            self.end = record
        else:
            raise SchemaError(f"{where}: {rtype} record inside a run stream")


def check_unit(fingerprint: Mapping[str, Any], result: Mapping[str, Any], where: str) -> None:
    """Refuse a result whose unit does not belong to its run: the one rule that keeps
    instruction counts (lab, counting mode) and wall-clock times apart."""
    unit = result.get("unit")
    what = f"{where}: result record {result.get('suite')}/{result.get('name')}"
    if lab(fingerprint) is not None:
        if unit != UNIT_INSTRUCTIONS:
            raise SchemaError(f"{what} is in {unit}, but the fingerprint has a lab object "
                              "(an emulated QEMU run): a lab run's results must all be "
                              f"{UNIT_INSTRUCTIONS}, never wall-clock time")
        if LAB_MODE.of(fingerprint) != LAB_COUNTING:
            raise SchemaError(f"{what} is in {UNIT_INSTRUCTIONS}, but the fingerprint's "
                              f"lab.mode is {_short(LAB_MODE.of(fingerprint))}: instruction counts "
                              f"come only from {LAB_COUNTING!r} mode (-icount)")
    elif unit != UNIT_NS:
        raise SchemaError(f"{what} is in {unit}, but the fingerprint has no lab object: "
                          f"only a counting-mode lab run (fingerprint.lab) has {unit} "
                          "results")


def unit_of(fingerprint: Mapping[str, Any] | None,
            results: Iterable[Mapping[str, Any]] = ()) -> str:
    """The unit of a run's figures: its lab's, else its results', else ns/op."""
    if lab(fingerprint) is not None and LAB_UNIT.of(fingerprint) in UNITS:
        return str(LAB_UNIT.of(fingerprint))
    for result in results:
        if result.get("unit") in UNITS:
            return str(result["unit"])
    return UNIT_NS

