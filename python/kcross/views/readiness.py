"""The view of ``kcross sysinfo --readiness``: each check of the machine, its state, what it
saw and what to do (the checks are kcross.run.readiness's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .table import FITS, Column, Styled, Table
from .text import NONE

if TYPE_CHECKING:  # the type of what is shown, defined with the checks
    from ..run.readiness import Finding

# A finding's state (readiness.STATES, the JSON record's "state") and its colour.
_STYLES = {"ok": "green", "warn": "yellow", "info": "cyan", "unknown": "dim"}


def table(findings: Sequence[Finding], cpu: int) -> Table:
    """Check, state, seen, what to do."""
    out = Table([Column(c, fold=True) for c in ("check", "state", "seen", "what to do")],
                title=f"machine readiness (measuring CPU {cpu})", fits=FITS)
    for f in findings:
        out.add(f.name, Styled(f.state, _STYLES.get(f.state, "")), f.seen, f.todo or NONE)
    return out
