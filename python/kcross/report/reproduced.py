"""The report's "Reproduced experiments" section: present when the report's runs include
one that ``kcross reproduce`` stored (source ``repro``).  The experiments are read from
reproduce's own runs among the report's, the newest per place and boot
(kcross.reproduce.measure.newest_stored: never a plain ``kcross lab`` run), computed by
kcross.reproduce.outcome and worded by kcross.views.reproduce, as the command prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import StoredRun


@dataclass(frozen=True)
class PlaceView:
    title: str
    rows: list[tuple[str, ...]]    # figure, published, ours, ratio, benchmark
    changes: list[tuple[str, ...]]     # A, B, published, ours
    ministat: str
    notes: list[str]               # under the changes: what a mark in them means


@dataclass(frozen=True)
class ExperimentView:
    name: str
    title: str
    source: str
    conditions: str
    differs: str
    places: list[PlaceView]
    missing: list[str]


def section(runs: Sequence[StoredRun]) -> list[ExperimentView]:
    """The experiments the runs measured (none unless a run's source is ``repro``)."""
    from ..reproduce.experiments import EXPERIMENTS
    from ..reproduce.measure import SOURCE, newest_stored
    from ..reproduce.outcome import outcomes
    from ..views import reproduce as words
    from ..views.ministat_report import ministat_text
    from ..views.table import text_of

    if not any(r.source == SOURCE for r in runs):
        return []
    measured = newest_stored(runs)
    found = []
    for o in outcomes(EXPERIMENTS, measured):
        if not o.places:
            continue
        e = o.experiment
        places = []
        for p in o.places:
            figures = words.figures_table(e, p)     # the terminal's table, cell by cell
            rows = [tuple(text_of(c) for c in row.cells) for row in figures.rows]
            changes_table = words.changes_table(p)
            changes = [tuple(text_of(c) for c in row.cells) for row in changes_table.rows] \
                if changes_table is not None else []
            ministat = ministat_text(list(p.ministat))[0] if p.ministat else ""
            places.append(PlaceView(figures.title, rows, changes, ministat,
                                    changes_table.notes if changes_table is not None else []))
        found.append(ExperimentView(e.name, e.title, e.source, e.conditions, e.differs,
                                    places, list(o.missing)))
    return found
