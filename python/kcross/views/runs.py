"""The lists of things kcross knows: the stored runs (``kcross runs``) and the harness's
benchmarks (``kcross list``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..schema import UNIT_NS
from .table import FITS, LEFT, RIGHT, RULES, Column, Styled, Table
from .text import machine_hash, shown_value

if TYPE_CHECKING:  # only types: the store loads SQLAlchemy
    from ..store import RunSummary


def machine_summary(run: RunSummary) -> str:
    parts = [run.hostname or "?", run.cpu_model or "unknown CPU", run.kernel_release or "?"]
    if run.hypervisor:
        emulated = run.unit != UNIT_NS or run.source == "lab"
        parts.append(f"{'emulated' if emulated else 'VM'} ({run.hypervisor})")
    return " · ".join(parts)


# The columns of text, wrapped at spaces to fit 120 columns (history's times, to the minute,
# stay whole, as the other cells).
WRAPPED = ("tags", "status", "machine")
_STATES = {"complete": "green", "interrupted": "yellow", "failed": "red", "running": "cyan"}


def runs_table(runs: Sequence[RunSummary]) -> Table:
    """One row per run.  A lab run shows its guest's arch and its variant (``kcross lab
    --mitigations`` stores one run per mitigation); the variant and tags columns appear
    only when a run has one."""
    shown_if = {"tags": any(run.tags for run in runs),
                "variant": any(run.variant for run in runs)}
    columns = [Column(name, align, wrap=name in WRAPPED) for name, align in (
        ("id", RIGHT), ("tags", LEFT), ("started (UTC)", LEFT), ("status", LEFT),
        ("source", LEFT), ("arch", LEFT), ("variant", LEFT), ("unit", LEFT),
        ("machine hash", LEFT), ("machine", LEFT), ("benchmarks", RIGHT))
        if shown_if.get(name, True)]
    table = Table(columns, frame=RULES, gap=0, fits=FITS)
    for run in runs:
        shown = run.state or run.status  # "dead (pid 123 gone)" for a stranded run
        tags = [Styled(" ".join(run.tags), "bold")] if shown_if["tags"] else []
        variant = [shown_value(run.variant)] if shown_if["variant"] else []
        # The machine hash's prefix: what latest@PREFIX takes besides a hostname.
        table.add(str(run.id), *tags, run.started_at.strftime("%Y-%m-%d %H:%M"),
                  Styled(shown, _STATES.get(shown.split(" ")[0], "red")), run.source,
                  shown_value(run.arch), *variant,
                  Styled(run.unit, "" if run.unit == UNIT_NS else "magenta"),
                  machine_hash(run.machine_hash), machine_summary(run), str(run.results))
    return table


def bench_table(benches: Sequence[dict[str, Any]]) -> Table:
    table = Table([Column(name) for name in ("suite", "name", "summary", "available")])
    for b in benches:
        avail = Styled("yes", "green") if b["available"] else \
            Styled(f"no: {b['reason']}", "yellow")
        table.add(b["suite"], b["name"], b["summary"], avail)
    return table
