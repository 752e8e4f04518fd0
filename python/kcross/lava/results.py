"""A LAVA server's results export of a job, read back (issue 17).

``/results/JOB/yaml`` and ``lavacli results JOB --yaml``: a YAML list of test cases, each
a mapping with (among others) ``job``, ``suite``, ``name``, ``result``, ``measurement``
and ``unit``, every value a string (lava_results_app/utils.py, export_testcase: a case
without a measurement has ``"None"``); ``/results/JOB/csv``: the same fields as CSV
columns.  The server names a
monitors action's suite after the monitor, possibly with its test's index in front
(``0_kcross``).

An export holds LAVA's test cases only: names, pass/fail and figures, no fingerprint (no
kernel, CPU model, machine or harness build).  kcross never stores a run from one alone
(:mod:`.imports` refuses it in one line): a figure whose machine is unknown cannot be
compared with anything safely, and an instruction count of an unknown kernel is the kind
of number that gets compared anyway.  With the job's log, an export is a cross-check:
every test case's measurement must be the figure stored from the log.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcross.errors import UserError, clipped

_FIELDS = ("suite", "name", "result")


@dataclass(frozen=True)
class ExportCase:
    job: str | None
    suite: str
    name: str
    result: str
    measurement: str | None
    unit: str | None


def _case(raw: Any) -> ExportCase | None:
    if not isinstance(raw, dict) or not all(k in raw for k in _FIELDS):
        return None

    def text(key: str) -> str | None:
        v = raw.get(key)
        # lava_results_app's export_testcase writes str(None) for a case without one.
        return None if v is None or v in ("", "None") else str(v)

    return ExportCase(text("job"), str(raw["suite"]), str(raw["name"]), str(raw["result"]),
                      text("measurement"), text("unit"))


def parse_export(text: str) -> list[ExportCase] | None:
    """The test cases of an export's text (YAML or CSV); None if it is not one."""
    head = text.lstrip()[:200]
    if head.startswith(("job,", '"job"', "id,")) or (
            "," in head.split("\n", 1)[0] and "suite" in head.split("\n", 1)[0]):
        rows = list(csv.DictReader(io.StringIO(text)))
        cases = [_case(r) for r in rows]
    else:
        import yaml

        try:
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            return None
        if not isinstance(data, list):
            return None
        cases = [_case(r) for r in data]
    if not cases or any(c is None for c in cases):
        return None
    return [c for c in cases if c is not None]


def looks_like_export(text: str) -> bool:
    return parse_export(text) is not None


def read_export(path: Path) -> list[ExportCase]:
    name = clipped(str(path))
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    return export_of(text, name)


def export_of(text: str, name: str) -> list[ExportCase]:
    """The test cases of an export's text (``name``: how messages call it); UserError (one
    line) if it is not one."""
    cases = parse_export(text)
    if cases is None:
        raise UserError(f"{name}: not a LAVA results export (a YAML list or CSV of test "
                        "cases with suite, name, result: lavacli results JOB --yaml, or "
                        "/results/JOB/yaml or /csv)")
    return cases


def suite_cases(cases: list[ExportCase], suite: str) -> list[ExportCase]:
    """The cases of the test suite ``suite`` (also named ``N_suite`` by the server)."""
    pattern = re.compile(rf"^(?:\d+_)?{re.escape(suite)}$")
    return [c for c in cases if pattern.match(c.suite)]
