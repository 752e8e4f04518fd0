"""Context switches in the result format (issue 9): switches_per_op, switches_counted_per_op,
the flag counts-mismatch; the table's per-switch column beside the per-op (round trip) median."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from kcross.errors import SchemaError
from kcross.schema import validate
from kcross.stats import summarize_record
from kcross.views import run as render
from kcross.views.table import Table, terminal
from kcross.views.text import ns as format_ns
from rich.console import Console

DATA = Path(__file__).resolve().parent / "data" / "real-run.jsonl"


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text().splitlines()
            if line and not line.startswith("#")]


def _ok_result() -> dict[str, Any]:
    """A captured ok result without switches: the base the tests add them to."""
    rec = next(r for r in _records() if r["type"] == "result" and r["status"] == "ok"
               and not r.get("switches_per_op"))
    return copy.deepcopy(rec)


def _text(*renderables: object) -> str:
    console = Console(width=300, record=True)
    for item in renderables:
        console.print(terminal(item) if isinstance(item, Table) else item)
    return console.export_text()


def _switching(declared: float = 2, counted: float | None = 2.01) -> dict[str, Any]:
    rec = _ok_result()
    rec["suite"], rec["name"] = "ctxsw", "pipe-test"
    rec["switches_per_op"], rec["switches_counted_per_op"] = declared, counted
    return rec


def test_per_switch_column_beside_per_op_round_trip() -> None:
    rec = _switching()
    text = _text(render.results_table([rec], wide=True))
    assert "(per op: round trip)" in text and "(ns/switch)" in text
    median = summarize_record(rec).median
    row = next(line for line in text.splitlines() if "ctxsw/pipe-test" in line)
    assert f"{format_ns(median / 2)} (op ÷ 2; counted 2.01)" in row
    assert format_ns(median) in row
    # By default the column holds the figure; the footer says what it was divided by.
    fingerprint = _records()[0]
    text = _text(render.results_table([rec]), render.run_footer(fingerprint, [rec]))
    row = next(line for line in text.splitlines() if "ctxsw/pipe-test" in line)
    assert f" {format_ns(median / 2)} " in row and "op ÷" not in row
    assert "per switch: the median ÷ the context switches its op makes by design (2: the op " \
           "is a round trip)" in text


def test_not_counted_and_no_declaration() -> None:
    rec = _switching(counted=None)
    plain = _ok_result()
    skipped = {**_ok_result(), "status": "skipped", "reason": "an across-CPU row needs two CPUs",
               "samples": [], "ticks": [], "overhead": None, "switches_per_op": None,
               "switches_counted_per_op": None}
    text = _text(render.results_table([rec, plain, skipped], wide=True))
    lines = text.splitlines()
    assert "(op ÷ 2; not counted)" in next(line for line in lines if "ctxsw/pipe-test" in line)
    plain_row = next(line for line in lines if f"{plain['suite']}/{plain['name']}" in line
                     and "skipped" not in line)
    assert "op ÷" not in plain_row
    assert "skipped: an across-CPU row needs two CPUs" in text
    # No declaration anywhere: the table keeps its single median column.
    assert "per switch" not in _text(render.results_table([plain]))


def test_lab_unit_per_switch_in_instructions() -> None:
    rec = _switching()
    rec["unit"] = "instructions/op"
    text = _text(render.results_table([rec], wide=True))
    assert "(instructions/switch)" in text


def test_schema_accepts_switches_and_the_flag() -> None:
    rec = _switching(2, 1.5)
    rec["flags"] = [{"flag": "counts-mismatch", "detail": "declared 2, counted 1.5"}]
    validate(rec, "test")
    validate(_switching(2, None), "test")
    plain = _ok_result()
    plain.pop("switches_per_op", None)
    plain.pop("switches_counted_per_op", None)
    validate(plain, "older capture without the keys")


@pytest.mark.parametrize("change, message", [
    ({"switches_per_op": None}, "without $.switches_per_op"),
    ({"switches_per_op": 0}, "switches_per_op"),
    ({"switches_counted_per_op": -1}, "switches_counted_per_op"),
    ({"switches_counted_per_op": None,
      "flags": [{"flag": "counts-mismatch", "detail": "x"}]}, "counts-mismatch"),
])
def test_schema_refuses(change: dict[str, Any], message: str) -> None:
    rec = {**_switching(), **change}
    with pytest.raises(SchemaError, match=message.replace("$", r"\$")):
        validate(rec, "test")


def test_captured_ctxsw_rows_declare_and_count() -> None:
    """The real capture: every ctxsw row ran and declared its switches, or says why not."""
    rows = [r for r in _records() if r["type"] == "result" and r["suite"] == "ctxsw"]
    if not rows:
        pytest.skip("the capture predates the ctxsw suite (re-run capture-real-run)")
    for rec in rows:
        if rec["status"] == "ok":
            assert rec["switches_per_op"] == 2, rec["name"]
            assert rec["switches_counted_per_op"] is not None, rec["name"]
        else:
            assert rec["status"] == "skipped" and rec["reason"], rec["name"]
