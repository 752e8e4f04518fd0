"""kcross.stats is the only statistics code in the project's Python (issue 7: quantiles
were defined four ways), and scripts/ab-ratio uses it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import FAKE_HARNESS, PYTHON_DIR, captured
from kcross import stats

ROOT = PYTHON_DIR.parent
QUANTILE_CODE = re.compile(r"\b(statistics\.(median|quantiles)|np\.(percentile|quantile|median)"
                           r"|numpy\.(percentile|quantile|median)|import statistics\b)")


def python_sources() -> list[Path]:
    files = [p for p in (ROOT / "python" / "kcross").rglob("*.py")]
    files += [p for p in (ROOT / "scripts").iterdir()
              if p.is_file() and p.read_bytes().startswith(b"#!/usr/bin/env python")]
    return files


def test_no_quantile_code_outside_kcross_stats() -> None:
    offenders = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in python_sources()
                 if p.name != "stats.py" or p.parent.name != "kcross"
                 for m in [QUANTILE_CODE.search(p.read_text())] if m]
    assert offenders == []


def test_ab_ratio_uses_the_rule_on_raw_samples() -> None:
    # The fake harness serves the same records every round: the ratio is exact.
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "ab-ratio"), "getppid-inline",
                           "getppid-dispatch", "--rounds", "3", "--samples", "11",
                           "--harness", str(FAKE_HARNESS)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    raw = {r["name"]: stats.median(r["samples"]) for r in captured()
           if r.get("name") in ("getppid-inline", "getppid-dispatch")}
    ratio = raw["getppid-dispatch"] / raw["getppid-inline"]
    assert f"median ratio {ratio:.3f} (quartiles {ratio:.3f}..{ratio:.3f}, 3 rounds)" \
        in proc.stdout, proc.stdout
    assert proc.stdout.count(f"ratio {ratio:.3f}\n") == 3


def test_raw_samples_undo_schema_1_subtraction() -> None:
    path = PYTHON_DIR / "tests" / "data" / "schema1-syscall.jsonl"
    for rec in map(json.loads, path.read_text().splitlines()):
        if rec["type"] == "result" and rec["overhead"]["subtracted"]:
            raw = stats.raw_samples(rec)
            assert raw == [s + rec["overhead"]["ns"] for s in rec["samples"]]
            break
    else:
        raise AssertionError("the schema-1 fixture has no subtracted result")
