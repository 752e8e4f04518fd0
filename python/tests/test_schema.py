"""Record validation: every error names the line; the stream order is enforced."""

from __future__ import annotations

import json

import pytest

from conftest import fake_capture
from kcross.errors import SchemaError
from kcross.schema import SCHEMA_VERSION, RunStream, parse_line


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return fake_capture("--quick").splitlines()


def test_fake_capture_is_a_valid_complete_stream(lines: list[str]) -> None:
    stream = RunStream()
    for i, line in enumerate(lines, 1):
        stream.add(parse_line(line, f"line {i}"), f"line {i}")
    assert stream.complete and len(stream.results) == 7
    assert SCHEMA_VERSION == 1


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r.pop("samples"), "line 3: result record: missing key 'samples'"),
    (lambda r: r.update(schema=2), "line 3: record is schema 2, this kcross reads schema 1"),
    (lambda r: r.pop("schema"), "line 3: record has no 'schema' key"),
    (lambda r: r.update(type="bogus"), "line 3: unknown record type 'bogus'"),
    (lambda r: r.update(status="meh"), "'status' must be one of ok, skipped, failed"),
    (lambda r: r.update(status="failed", reason=None), "status 'failed' needs a 'reason'"),
    (lambda r: r["samples"].append("fast"), "'samples' must be a list of numbers"),
    (lambda r: r.update(disturbed=[999]), "'disturbed' must list sample indices"),
])
def test_bad_result_record_is_named(lines: list[str], mutate, message: str) -> None:
    record = json.loads(lines[2])
    mutate(record)
    with pytest.raises(SchemaError, match=message.replace("(", r"\(")):
        parse_line(json.dumps(record), "line 3")


def test_fingerprint_nested_keys_are_checked(lines: list[str]) -> None:
    record = json.loads(lines[0])
    del record["timer"]["hz"]
    with pytest.raises(SchemaError, match="line 1: fingerprint record: timer: missing key 'hz'"):
        parse_line(json.dumps(record), "line 1")
    record = json.loads(lines[0])
    record["power"] = None  # unreadable fields are null, which is valid
    parse_line(json.dumps(record), "line 1")


def test_nan_and_non_objects_are_not_records() -> None:
    with pytest.raises(SchemaError, match="line 4: not a JSON record"):
        parse_line('{"type": "end", "schema": 1, "ok": NaN}', "line 4")
    with pytest.raises(SchemaError, match="line 4: expected a JSON object"):
        parse_line("[1, 2]", "line 4")


def test_stream_order(lines: list[str]) -> None:
    records = [parse_line(line, "x") for line in lines]
    stream = RunStream()
    with pytest.raises(SchemaError, match="plan record before the fingerprint"):
        stream.add(records[1], "line 1")
    stream.add(records[0], "line 1")
    stream.add(records[1], "line 2")
    stream.add(records[2], "line 3")
    with pytest.raises(SchemaError, match="line 4: result for syscall/getpid was already reported"):
        stream.add(records[2], "line 4")
    with pytest.raises(SchemaError, match="end record counts 7 results, the stream carried 1 of 7"):
        stream.add(records[-1], "line 5")
