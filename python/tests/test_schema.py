"""Record validation against the schema file: every error is one line naming the line and
the JSON path; versions are checked per caller; the stream order is enforced."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import kcross
import pytest
from conftest import DATA, captured, fake_capture
from jsonschema import Draft202012Validator
from kcross.errors import SchemaError
from kcross.schema import (
    IMPORT_VERSIONS,
    SCHEMA_VERSION,
    RunStream,
    load_schema,
    parse_line,
    validate,
)

ALL = len(captured()[1]["benchmarks"])


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return fake_capture("--quick").splitlines()


def test_schema_file_is_package_data_and_valid_2020_12() -> None:
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert (Path(kcross.__file__).parent / "result-format.schema.json").is_file()
    assert set(schema["properties"]["schema"]["enum"]) == set(IMPORT_VERSIONS)
    assert SCHEMA_VERSION == 2


def test_fake_capture_is_a_valid_complete_stream(lines: list[str]) -> None:
    stream = RunStream()
    for i, line in enumerate(lines, 1):
        stream.add(parse_line(line, f"line {i}"), f"line {i}")
    assert stream.complete and len(stream.results) == ALL
    assert {r["schema"] for r in stream.results} == {2}


def _result(lines: list[str], status: str = "ok") -> dict:
    record = json.loads(lines[2])
    assert record["type"] == "result" and record["status"] == "ok"
    if status != "ok":
        record.update(status=status, reason="gone", samples=[], ticks=[], overhead=None,
                      disturbed=[])
    return record


WHERE = "line 3: result record syscall/getppid-glibc: "


@pytest.mark.parametrize("status, mutate, message", [
    ("ok", lambda r: r.pop("samples"), WHERE + "missing key 'samples'"),
    ("ok", lambda r: r.update(schema=3), "line 3: record is schema 3, this kcross reads schema 2"),
    ("ok", lambda r: r.update(schema=True), "line 3: record is schema true"),
    ("ok", lambda r: r.pop("schema"), "line 3: record has no 'schema' key"),
    ("ok", lambda r: r.update(type="bogus"), "line 3: unknown record type 'bogus'"),
    ("ok", lambda r: r.update(status="meh"),
     WHERE + '$.status: must be "ok" or "skipped" or "failed", got "meh"'),
    ("ok", lambda r: r["samples"].__setitem__(4, "fast"),
     WHERE + '$.samples[4]: must be a number, got "fast"'),
    ("ok", lambda r: r["samples"].__setitem__(2, -1.5),
     WHERE + "$.samples[2]: must be >= 0, got -1.5"),
    ("ok", lambda r: r["overhead"].pop("samples"), WHERE + "$.overhead: missing key 'samples'"),
    ("ok", lambda r: r.update(overhead={"ns": 0.3, "ticks": 1, "subtracted": True, "why": "x"}),
     WHERE + "$.overhead: missing key 'samples'"),
    ("ok", lambda r: r.update(overhead=None), WHERE + "$.overhead: must be an object, got null"),
    ("ok", lambda r: r["overhead"].update(samples=[]),
     WHERE + "$.overhead.samples: must have at least 1 item(s), got []"),
    ("ok", lambda r: r.pop("flags"), WHERE + "missing key 'flags'"),
    ("ok", lambda r: r.update(flags=[{"flag": "batches-disagree"}]),
     WHERE + "$.flags[0]: missing key 'detail'"),
    ("ok", lambda r: r.update(unit="ms/op"),
     WHERE + '$.unit: must be "ns/op" or "instructions/op", got "ms/op"'),
    ("ok", lambda r: r.update(disturbed=[999]),
     WHERE + "$.disturbed: index 999 is not a sample (there are 11)"),
    ("ok", lambda r: r["ticks"].pop(), WHERE + "$.ticks has 10 values, $.samples 11"),
    ("ok", lambda r: r["overhead"]["ticks"].pop(),
     WHERE + "$.overhead.ticks has 10 values, $.overhead.samples 11"),
    ("ok", lambda r: r.update(elapsed_s=float("inf")), WHERE + "$.elapsed_s: inf is not a finite"),
    ("failed", lambda r: r.update(reason=None),
     WHERE + "$.reason: must be a string, got null (a skipped or failed result says why"),
    ("skipped", lambda r: r.update(reason=""), WHERE + '$.reason: must not be empty, got ""'),
    ("failed", lambda r: r.update(overhead={"samples": [1.0], "ticks": [2.0]}),
     WHERE + "$.overhead: must be null, got"),
])
def test_bad_result_record_is_one_line_naming_line_and_path(lines: list[str], status: str,
                                                            mutate, message: str) -> None:
    record = _result(lines, status)
    parse_line(json.dumps(record), "line 3")  # valid before the mutation
    mutate(record)
    with pytest.raises(SchemaError) as info:
        if isinstance(record.get("elapsed_s"), float) and record["elapsed_s"] == float("inf"):
            validate(record, "line 3")  # json cannot carry inf: check the Python-side walk
        else:
            parse_line(json.dumps(record), "line 3")
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text and len(text) < 300, text


def test_failed_result_from_the_fake_is_valid() -> None:
    out = fake_capture("--bench", "getppid-*", extra_env={"KCROSS_TEST_FAIL": "getppid-inline"})
    records = [parse_line(line, f"line {i}") for i, line in enumerate(out.splitlines(), 1)]
    failed = [r for r in records if r["type"] == "result" and r["status"] == "failed"]
    assert [r["name"] for r in failed] == ["getppid-inline"]
    assert failed[0]["reason"] == "forced failure (KCROSS_TEST_FAIL, for tests)"
    assert failed[0]["overhead"] is None
    assert records[0]["forced"]["KCROSS_TEST_FAIL"] == "getppid-inline"


def test_fingerprint_nested_keys_are_checked(lines: list[str]) -> None:
    record = json.loads(lines[0])
    del record["timer"]["hz"]
    with pytest.raises(SchemaError, match=r"^line 1: fingerprint record: \$\.timer: missing "
                                          r"key 'hz'$"):
        parse_line(json.dumps(record), "line 1")
    record = json.loads(lines[0])
    record["power"] = None  # unreadable fields are null, which is valid
    record["cpu"]["online"] = None
    parse_line(json.dumps(record), "line 1")
    record["forced"]["KCROSS_VDSO"] = ""  # an empty forcing is unset: null, never ""
    with pytest.raises(SchemaError, match=r"\$\.forced\.KCROSS_VDSO: must be \"0\" or \"1\" or "
                                          r"null, got \"\""):
        parse_line(json.dumps(record), "line 1")
    del record["forced"]
    with pytest.raises(SchemaError, match="line 1: fingerprint record: missing key 'forced'"):
        parse_line(json.dumps(record), "line 1")


def test_nan_infinity_and_non_objects_are_not_records() -> None:
    with pytest.raises(SchemaError, match="line 4: not a JSON record"):
        parse_line('{"type": "end", "schema": 2, "ok": NaN}', "line 4")
    with pytest.raises(SchemaError, match="line 4: not a JSON record .*out of range"):
        parse_line('{"type": "end", "schema": 2, "ok": 0, "skipped": 0, "failed": 0, '
                   '"elapsed_s": 1e999}', "line 4")
    with pytest.raises(SchemaError, match="line 4: expected a JSON object"):
        parse_line("[1, 2]", "line 4")


def test_schema_1_is_read_only_where_the_caller_accepts_it() -> None:
    text = (DATA / "schema1-syscall.jsonl").read_text().splitlines()
    stream = RunStream()
    for i, line in enumerate(text, 1):
        stream.add(parse_line(line, f"line {i}", IMPORT_VERSIONS), f"line {i}")
    assert stream.complete and stream.fingerprint and stream.fingerprint["schema"] == 1
    with pytest.raises(SchemaError, match="line 1: record is schema 1, this kcross reads "
                                          "schema 2 here .*'kcross import'"):
        parse_line(text[0], "line 1")
    with pytest.raises(SchemaError, match="record is schema 7, this kcross reads schema 1 or 2"):
        parse_line(json.dumps({**json.loads(text[0]), "schema": 7}), "line 1", IMPORT_VERSIONS)
    # schema 1 keeps its own overhead object, and a schema-2 one is not accepted in its place
    result = json.loads(text[2])
    result["overhead"] = {"samples": [1.0], "ticks": [1.0]}
    with pytest.raises(SchemaError, match=r"\$\.overhead: missing keys 'ns', 'ticks'|"
                                          r"\$\.overhead: missing keys 'ns', 'subtracted'"):
        parse_line(json.dumps(result), "line 3", IMPORT_VERSIONS)


def test_stream_order(lines: list[str]) -> None:
    records = [parse_line(line, "x") for line in lines]
    stream = RunStream()
    with pytest.raises(SchemaError, match="plan record before the fingerprint"):
        stream.add(records[1], "line 1")
    stream.add(records[0], "line 1")
    stream.add(records[1], "line 2")
    stream.add(records[2], "line 3")
    with pytest.raises(SchemaError, match="line 4: result for syscall/getppid-glibc was "
                                          "already reported"):
        stream.add(records[2], "line 4")
    with pytest.raises(SchemaError, match=f"end record counts {ALL} results, the stream "
                                          f"carried 1 of {ALL}"):
        stream.add(records[-1], "line 5")


def test_one_stream_one_version(lines: list[str]) -> None:
    v1 = [json.loads(line) for line in (DATA / "schema1-syscall.jsonl").read_text().splitlines()]
    stream = RunStream()
    stream.add(parse_line(lines[0], "line 1"), "line 1")
    plan = copy.deepcopy(v1[1])
    validate(plan, "line 2", IMPORT_VERSIONS)
    with pytest.raises(SchemaError, match="line 2: plan record is schema 1, the stream began "
                                          "with schema 2"):
        stream.add(plan, "line 2")


def test_the_lava_group_is_checked(lines: list[str]) -> None:
    """fingerprint.lava (kcross import of a LAVA job's log, issue 17): the job, device,
    device type and dispatcher version; fingerprint.lab.network: present only with a card."""
    record = json.loads(lines[0])
    record["lava"] = {"job_id": "1234", "device": "rpi4-01", "device_type": "bcm2711-rpi-4-b",
                      "dispatcher_version": "2025.02"}
    parse_line(json.dumps(record), "line 1")
    record["lava"]["device_type"] = ""
    with pytest.raises(SchemaError, match=r"\$\.lava\.device_type"):
        parse_line(json.dumps(record), "line 1")
    del record["lava"]["device_type"]
    with pytest.raises(SchemaError, match=r"\$\.lava: missing key 'device_type'"):
        parse_line(json.dumps(record), "line 1")
    lab = {"mode": "counting", "unit": "instructions/op", "emulator": "qemu-system-x86_64",
           "emulator_version": "7.2.22", "accel": "tcg", "icount": "shift=0", "seed": 1,
           "machine": "q35", "cpu": "max", "smp": 1, "append": "", "variant": None,
           "kernel": {"source": "file", "package": None, "version": None, "path": "/k",
                      "sha256": "0" * 64}}
    record = json.loads(lines[0])
    record["lab"] = {**lab, "network": "-net nic,model=virtio -net user"}
    validate(record, "line 1")
    record["lab"]["network"] = ""
    with pytest.raises(SchemaError, match=r"\$\.lab\.network"):
        validate(record, "line 1")
