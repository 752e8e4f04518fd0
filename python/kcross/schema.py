"""Validation of the JSON-lines records written by ``kcross-harness`` (docs/result-format.md).

The harness is a separate C program, possibly built from another revision or
run on another machine (``kcross import``), so nothing it writes is trusted
until it has been checked here.  Every error names where the record was read
("harness output line 3", "run.jsonl line 7") so the user can find it.

Only what the format document promises is checked: required keys (a value
that could not be read is ``null``, never omitted) and the types of the values
kcross computes with.  Extra keys are accepted so that the harness may add
information without breaking older front ends within the same schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import SchemaError

# Schema history (keep in step with docs/result-format.md):
#   1 (kcross 0.1.0): first version: fingerprint, plan, result, end records;
#                     bench records for `list`.
SCHEMA_VERSION = 1

RECORD_TYPES = ("fingerprint", "plan", "result", "end", "bench")
RESULT_STATUSES = ("ok", "skipped", "failed")

# Top-level fingerprint keys and, for those that are objects, their keys.
# ``None`` means "any object" (e.g. vulnerabilities are named by the kernel).
_FINGERPRINT_KEYS: dict[str, tuple[str, ...] | None] = {
    "kcross": ("version", "git_rev", "build", "compiler"),
    "arch": None,
    "cpu": ("vendor", "model", "family", "model_id", "stepping", "microcode",
            "flags", "online", "possible"),
    "kernel": ("release", "version", "cmdline"),
    "vulnerabilities": None,
    "virtualization": ("hypervisor_flag", "hypervisor_type", "dmi_sys_vendor",
                       "dmi_product_name"),
    "power": ("governor", "driver"),
    "smt": ("control", "active"),
    "isolation": ("isolcpus", "nohz_full"),
    "libc": ("name", "version"),
    "rseq": ("registered", "owner", "size", "libc_size", "feature_size", "align"),
    "auxv": ("hwcap", "hwcap2", "rseq_feature_size", "rseq_align", "sysinfo_ehdr"),
    "perf": ("paranoid", "hardware", "software", "reasons"),
    "syscall": ("mechanism", "available", "forced"),
    "timer": ("source", "hz", "invariant", "calibration"),
    "host": ("hostname", "time"),
}

_RESULT_KEYS = ("suite", "name", "summary", "status", "reason", "unit", "cpu", "iters",
                "samples", "ticks", "overhead", "counters", "counters_unavailable",
                "disturbed", "mechanism", "timer", "elapsed_s")
_PLAN_KEYS = ("benchmarks", "samples", "min_batch_ms", "warmup_ms", "cpu")
_END_KEYS = ("ok", "skipped", "failed", "elapsed_s")
_BENCH_KEYS = ("suite", "name", "summary", "needs", "available", "reason")


class MalformedLine(SchemaError):
    """The line is not JSON at all (as opposed to a JSON record that breaks the schema).

    Told apart because an unterminated last line of this kind is what a
    capture cut off mid-write looks like.
    """


def _reject_constant(name: str) -> float:
    """Refuse NaN/Infinity: Python's json accepts them, JSON (and the harness contract) does not."""
    raise ValueError(f"{name} is not valid JSON")


def parse_line(line: str, where: str) -> dict[str, Any]:
    """Parse one JSON line into a validated record; ``where`` names the line in errors."""
    try:
        obj = json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        text = line.strip()
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise MalformedLine(f"{where}: not a JSON record ({exc}): {shown!r}") from None
    if not isinstance(obj, dict):
        raise SchemaError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    validate(obj, where)
    return obj


def validate(record: Mapping[str, Any], where: str) -> None:
    """Check one record against schema 1; raise :class:`SchemaError` naming ``where``."""
    if "schema" not in record:
        raise SchemaError(f"{where}: record has no 'schema' key")
    schema = record["schema"]
    if schema != SCHEMA_VERSION or isinstance(schema, bool):
        raise SchemaError(
            f"{where}: record is schema {schema!r}, this kcross reads schema {SCHEMA_VERSION} "
            "(use a kcross and a kcross-harness of matching versions)")
    rtype = record.get("type")
    if rtype not in RECORD_TYPES:
        raise SchemaError(f"{where}: unknown record type {rtype!r} "
                          f"(expected one of {', '.join(RECORD_TYPES)})")
    _VALIDATORS[rtype](record, f"{where}: {rtype} record")


# --- per-type checks -------------------------------------------------------------------

def _require(obj: Mapping[str, Any], keys: Iterable[str], ctx: str) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise SchemaError(f"{ctx}: missing key{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(repr(k) for k in missing)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(cond: bool, ctx: str, what: str) -> None:
    if not cond:
        raise SchemaError(f"{ctx}: {what}")


def _number(obj: Mapping[str, Any], key: str, ctx: str, *, nullable: bool = False) -> None:
    value = obj[key]
    if nullable and value is None:
        return
    _check(_is_number(value), ctx, f"{key!r} must be a number, got {value!r}")


def _integer(obj: Mapping[str, Any], key: str, ctx: str, *, nullable: bool = False,
             minimum: int = 0) -> None:
    value = obj[key]
    if nullable and value is None:
        return
    _check(isinstance(value, int) and not isinstance(value, bool) and value >= minimum,
           ctx, f"{key!r} must be an integer >= {minimum}, got {value!r}")


def _string(obj: Mapping[str, Any], key: str, ctx: str, *, nullable: bool = False) -> None:
    value = obj[key]
    if nullable and value is None:
        return
    _check(isinstance(value, str), ctx, f"{key!r} must be a string, got {value!r}")


def _fingerprint(rec: Mapping[str, Any], ctx: str) -> None:
    _require(rec, _FINGERPRINT_KEYS, ctx)
    for key, subkeys in _FINGERPRINT_KEYS.items():
        value = rec[key]
        if value is None or subkeys is None:
            continue
        _check(isinstance(value, dict), ctx, f"{key!r} must be an object or null")
        _require(value, subkeys, f"{ctx}: {key}")
    for key in ("syscall", "timer"):
        _check(isinstance(rec[key], dict), ctx, f"{key!r} must be an object")
    _string(rec["syscall"], "mechanism", f"{ctx}: syscall")
    _string(rec["timer"], "source", f"{ctx}: timer")
    _number(rec["timer"], "hz", f"{ctx}: timer", nullable=True)


def _plan(rec: Mapping[str, Any], ctx: str) -> None:
    _require(rec, _PLAN_KEYS, ctx)
    benches = rec["benchmarks"]
    _check(isinstance(benches, list), ctx, "'benchmarks' must be a list")
    for i, bench in enumerate(benches):
        _check(isinstance(bench, dict), ctx, f"benchmarks[{i}] must be an object")
        _require(bench, ("suite", "name"), f"{ctx}: benchmarks[{i}]")
        _string(bench, "suite", f"{ctx}: benchmarks[{i}]")
        _string(bench, "name", f"{ctx}: benchmarks[{i}]")
    _integer(rec, "samples", ctx, minimum=1)
    _number(rec, "min_batch_ms", ctx)
    _number(rec, "warmup_ms", ctx)
    _integer(rec, "cpu", ctx, nullable=True)


def _result(rec: Mapping[str, Any], ctx: str) -> None:
    _require(rec, _RESULT_KEYS, ctx)
    for key in ("suite", "name", "summary", "unit", "mechanism", "timer"):
        _string(rec, key, ctx, nullable=key in ("mechanism", "timer"))
    ctx = f"{ctx} {rec['suite']}/{rec['name']}"
    status = rec["status"]
    _check(status in RESULT_STATUSES, ctx,
           f"'status' must be one of {', '.join(RESULT_STATUSES)}, got {status!r}")
    if status == "ok":
        _string(rec, "reason", ctx, nullable=True)
    else:
        _check(isinstance(rec["reason"], str) and rec["reason"] != "", ctx,
               f"status {status!r} needs a 'reason' text")
    _integer(rec, "cpu", ctx, nullable=True)
    _integer(rec, "iters", ctx, nullable=True)
    for key in ("samples", "ticks"):
        values = rec[key]
        _check(isinstance(values, list) and all(_is_number(v) for v in values), ctx,
               f"{key!r} must be a list of numbers")
    _check(len(rec["ticks"]) in (0, len(rec["samples"])), ctx,
           "'ticks' and 'samples' differ in length")
    disturbed = rec["disturbed"]
    _check(isinstance(disturbed, list)
           and all(isinstance(i, int) and 0 <= i < len(rec["samples"]) for i in disturbed),
           ctx, "'disturbed' must list sample indices")
    overhead = rec["overhead"]
    if overhead is not None:
        _check(isinstance(overhead, dict), ctx, "'overhead' must be an object or null")
        _require(overhead, ("ns", "ticks", "subtracted", "why"), f"{ctx}: overhead")
        _number(overhead, "ns", f"{ctx}: overhead", nullable=True)
    counters = rec["counters"]
    _check(isinstance(counters, dict), ctx, "'counters' must be an object")
    for event, value in counters.items():
        _check(isinstance(value, dict), ctx, f"counter {event!r} must be an object")
        _require(value, ("total", "per_op", "scaled"), f"{ctx}: counter {event!r}")
        _number(value, "per_op", f"{ctx}: counter {event!r}", nullable=True)
    _check(isinstance(rec["counters_unavailable"], dict), ctx,
           "'counters_unavailable' must be an object")
    _number(rec, "elapsed_s", ctx, nullable=True)


def _end(rec: Mapping[str, Any], ctx: str) -> None:
    _require(rec, _END_KEYS, ctx)
    for key in ("ok", "skipped", "failed"):
        _integer(rec, key, ctx)
    _number(rec, "elapsed_s", ctx)


def _bench(rec: Mapping[str, Any], ctx: str) -> None:
    _require(rec, _BENCH_KEYS, ctx)
    for key in ("suite", "name", "summary"):
        _string(rec, key, ctx)
    _check(isinstance(rec["available"], bool), ctx, "'available' must be true or false")
    _check(isinstance(rec["needs"], list), ctx, "'needs' must be a list")
    if not rec["available"]:
        _string(rec, "reason", ctx)


_VALIDATORS = {"fingerprint": _fingerprint, "plan": _plan, "result": _result,
               "end": _end, "bench": _bench}


@dataclass
class RunStream:
    """Checks the order of a ``run --json`` stream and collects what it carried.

    The order is part of the contract: one fingerprint first, one plan, one
    result per planned benchmark, then one end record.  A stream that stops
    early is valid up to where it stopped (``complete`` stays False).
    """

    fingerprint: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    _pending: set[tuple[str, str]] = field(default_factory=set)

    @property
    def complete(self) -> bool:
        return self.end is not None

    def add(self, record: dict[str, Any], where: str) -> None:
        """Accept an already validated record or raise :class:`SchemaError` if out of order."""
        rtype = record["type"]
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
            self._pending = {(b["suite"], b["name"]) for b in record["benchmarks"]}
        elif self.plan is None:
            raise SchemaError(f"{where}: {rtype} record before the plan record")
        elif rtype == "result":
            key = (record["suite"], record["name"])
            if key not in self._pending:
                seen = any((r["suite"], r["name"]) == key for r in self.results)
                raise SchemaError(f"{where}: result for {key[0]}/{key[1]} "
                                  + ("was already reported" if seen else "which is not in the plan"))
            self._pending.discard(key)
            self.results.append(record)
        elif rtype == "end":
            counted = record["ok"] + record["skipped"] + record["failed"]
            if counted != len(self.results) or self._pending:
                raise SchemaError(f"{where}: end record counts {counted} results, the stream "
                                  f"carried {len(self.results)} of {len(self.plan['benchmarks'])} "
                                  "planned")
            self.end = record
        else:
            raise SchemaError(f"{where}: {rtype} record inside a run stream")


def dig(obj: Any, *path: str) -> Any:
    """Nested lookup that tolerates null objects (fingerprint fields may be null)."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj
