"""kcross.stats is the only statistics code in the project's Python (issue 7: quantiles
were defined four ways); kcross ab's use of it is tested in test_ab.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import PYTHON_DIR
from kcross import stats

ROOT = PYTHON_DIR.parent
QUANTILE_CODE = re.compile(r"\b(statistics\.(median|quantiles)|np\.(percentile|quantile|median)"
                           r"|numpy\.(percentile|quantile|median)|import statistics\b"
                           r"|from scipy\b|import scipy\b)")  # tests, distributions: stats.py's


def python_sources() -> list[Path]:
    files = [p for p in (ROOT / "python" / "kcross").rglob("*.py")]
    scripts = ROOT / "scripts"
    files += [p for p in scripts.iterdir()
              if p.is_file() and p.read_bytes().startswith(b"#!/usr/bin/env python")]
    return files


def test_no_quantile_code_outside_kcross_stats() -> None:
    offenders = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in python_sources()
                 if p.name != "stats.py" or p.parent.name != "kcross"
                 for m in [QUANTILE_CODE.search(p.read_text())] if m]
    assert offenders == []


def test_raw_samples_undo_schema_1_subtraction() -> None:
    path = PYTHON_DIR / "tests" / "data" / "schema1-syscall.jsonl"
    for rec in map(json.loads, path.read_text().splitlines()):
        if rec["type"] == "result" and rec["overhead"]["subtracted"]:
            raw = stats.raw_samples(rec)
            assert raw == [s + rec["overhead"]["ns"] for s in rec["samples"]]
            break
    else:
        raise AssertionError("the schema-1 fixture has no subtracted result")
