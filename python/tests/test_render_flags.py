"""What the harness flags and forces reaches the reader: table status and footer lines."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from kcross.views import run as render
from kcross.views.table import Table, terminal
from rich.console import Console

DATA = Path(__file__).resolve().parent / "data" / "real-run.jsonl"


def _captured() -> tuple[dict, list[dict]]:
    records = [json.loads(line) for line in DATA.read_text().splitlines()
               if line and not line.startswith("#")]
    fingerprint = next(r for r in records if r["type"] == "fingerprint")
    results = [r for r in records if r["type"] == "result" and r["status"] == "ok"][:2]
    return fingerprint, copy.deepcopy(results)


def _text(*renderables: object) -> str:
    console = Console(width=250, record=True)
    for item in renderables:
        console.print(terminal(item) if isinstance(item, Table) else item)
    return console.export_text()


def test_flags_show_in_the_row_and_the_footer() -> None:
    fingerprint, results = _captured()
    for rec in results:
        rec["flags"] = []
    results[0]["flags"] = [{"flag": "batches-disagree", "detail": "6 sizing batches took 10 to 50 ns/op"}]
    first = f"{results[0]['suite']}/{results[0]['name']}"
    second = f"{results[1]['suite']}/{results[1]['name']}"
    for wide in (False, True):
        text = _text(render.results_table(results, wide=wide),
                     render.run_footer(fingerprint, results, wide=wide, details="kcross show 3 --wide"))
        row = next(line for line in text.splitlines() if first in line and "ok" in line)
        assert "⚑batches-disagree" in row
        assert "⚑" not in next(line for line in text.splitlines() if second in line)
        detail = f"⚑ {first} batches-disagree: 6 sizing batches took 10 to 50 ns/op"
        if wide:  # each flag's detail in a line of its own
            assert detail in text
        else:     # one line: the flags and how many they were raised on; details: --wide
            assert detail not in text
            assert "⚑ batches-disagree on 1 benchmark (what the harness saw: kcross show 3 " \
                   "--wide)" in text


def test_forced_settings_show_in_the_footer() -> None:
    fingerprint, results = _captured()
    fingerprint = {**fingerprint, "forced": {"KCROSS_SYSCALL": None, "KCROSS_VDSO": "0",
                                             "KCROSS_TIMER": None, "KCROSS_TEST_FAIL": None}}
    text = _text(render.run_footer(fingerprint, results))
    assert "forced by the environment: KCROSS_VDSO=0" in text
    fingerprint["forced"]["KCROSS_VDSO"] = None
    assert "forced by the environment" not in _text(render.run_footer(fingerprint, results))
