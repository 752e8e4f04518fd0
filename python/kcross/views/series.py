"""A lab release series (issue 23, ``kcross lab ARCH --releases``): the table of rows ×
kernels and its JSON records.  Pure functions of what kcross.lab.series computed; nothing
is judged here.

The table of kernels alone: a row per benchmark, a column per kernel (its header the
release and the kernel's version), and after each kernel but the first the step from the
one before it: B − A exactly as kcross.judge judged it (``0`` identical, else the signed
difference).  With ``--compare`` or ``--compare-env``, a line per benchmark per release
(A, B, B − A and the change: the table of ``--compare``, release by release; five
releases' sides side by side would not fit a terminal).  A step that moved by the timer's
share only is dimmed and named under the table: not a change.

The records (``--json``): one ``lab-release-row`` per row per run (docs/result-format.md,
"Lab release series"); the explanations' are kcross.views.explain's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..judge.verdict import Judgement, path_changed, record, timer_share
from .lab import REASON_WIDTH, figure, shown_names, timer_share_note
from .table import RIGHT, Column, Row, Styled, Table
from .text import NONE, arrow, clip_words
from .verdict import exact_delta, exact_percent

ROW = "lab-release-row"


@dataclass(frozen=True)
class KernelColumn:
    """One counting run of the series: the release and its kernel (package and version;
    a file's path when it is not a package), and the side of the axis it counted (None: a
    series of kernels alone)."""

    release: str
    version: str
    package: str | None = None
    side: str | None = None

    @property
    def label(self) -> str:
        return run_label(self.release, self.side)


def run_label(release: str, side: str | None) -> str:
    """A run of the series as its notes and explanations name it: the release, and the
    side when there are two (``trixie B``)."""
    return release if side is None else f"{release} {side}"


@dataclass(frozen=True)
class SeriesStep:
    """A step of the series: run ``b`` judged against run ``a`` (indexes of the columns)."""

    a: int
    b: int


@dataclass(frozen=True)
class SeriesLine:
    """One benchmark (suite/name) across the runs: each run's figure (None: not measured,
    with its reason) and each step's judgement (None: not judged)."""

    name: str
    figures: tuple[float | None, ...]
    reasons: tuple[str, ...]
    steps: tuple[Judgement | None, ...]


def _headers(columns: Sequence[KernelColumn], steps: Sequence[SeriesStep]
             ) -> list[tuple[str, int | None, int | None]]:
    """Each table column of a series of kernels after the first: its header (the release
    and the kernel's version; Δ), and the run or the step it shows."""
    found: list[tuple[str, int | None, int | None]] = []
    for i, c in enumerate(columns):
        found.append((f"{c.release}\n{c.version}", i, None))
        found += [("\nΔ", None, k) for k, s in enumerate(steps) if s.b == i]
    return found


def step_cell(j: Judgement | None) -> str | Styled:
    """B − A of a step: the judge's exact difference, dimmed when it is the timer's share;
    a dash where there is no judgement."""
    if j is None or j.error is not None:
        return NONE
    if timer_share(j):
        return Styled(exact_delta(j), "dim")
    return exact_delta(j)


def _why(columns: Sequence[KernelColumn], reasons: Sequence[str]) -> str:
    """Why a row lacks figures: the reason, when every run gives it; else the first run's
    that lacks one, named."""
    if all(reasons) and len(set(reasons)) == 1:
        return reasons[0]
    return next((f"{columns[i].label}: {r}" for i, r in enumerate(reasons) if r), "")


def series_table(title: str, columns: Sequence[KernelColumn], steps: Sequence[SeriesStep],
                 lines: Sequence[SeriesLine], notes: Sequence[str] = ()) -> Table:
    """The series' table: rows × kernels (:func:`kernels_table`), or with two sides a line
    per row per release (:func:`sides_table`); the steps that moved by the timer's share
    only named under it, then ``notes``."""
    sided = any(c.side is not None for c in columns)
    table = (sides_table if sided else kernels_table)(title, columns, steps, lines)
    shares = []
    for line, shown in zip(lines, shown_names([line.name for line in lines]), strict=True):
        for s, j in zip(steps, line.steps, strict=True):
            if j is not None and timer_share(j):
                a, b = columns[s.a], columns[s.b]
                shares.append(f"{shown} ({b.release if sided else arrow(a.release, b.release)})")
    if not any(row.cells[-1] for row in table.rows):   # no row needs a note
        table.columns = table.columns[:-1]
        table.rows = [Row(row.cells[:-1], row.style) for row in table.rows]
    if shares:
        table.notes.append(timer_share_note(shares))
    table.notes += notes
    return table


def kernels_table(title: str, columns: Sequence[KernelColumn], steps: Sequence[SeriesStep],
                  lines: Sequence[SeriesLine]) -> Table:
    """A row per benchmark: each kernel's figure, each step's B − A after the kernel it
    ends at, why the row lacks a figure (its note)."""
    headers = _headers(columns, steps)
    table = Table([Column("benchmark", wrap=False),
                   *(Column(h, RIGHT, wrap=False) for h, _, _ in headers),
                   Column("note")], title=title)
    for line, shown in zip(lines, shown_names([line.name for line in lines]), strict=True):
        cells: list[str | Styled] = [shown]
        for _, run, step in headers:
            if run is not None:
                cells.append(figure(line.figures[run]))
            else:
                assert step is not None
                cells.append(step_cell(line.steps[step]))
        table.add(*cells, clip_words(_why(columns, line.reasons), REASON_WIDTH))
    return table


def sides_table(title: str, columns: Sequence[KernelColumn], steps: Sequence[SeriesStep],
                lines: Sequence[SeriesLine]) -> Table:
    """A line per benchmark per release: the release's kernel, A's and B's figures, B − A
    and (B − A)/A as the judge judged them, why a figure is missing (its note)."""
    first = columns[steps[0].a], columns[steps[0].b]
    a_side, b_side = (c.side or "" for c in first)
    table = Table([Column("benchmark", wrap=False), Column("release", wrap=False),
                   Column("kernel", wrap=False), Column(a_side, RIGHT, wrap=False),
                   Column(b_side, RIGHT, wrap=False),
                   Column(f"{b_side} - {a_side}", RIGHT, wrap=False),
                   Column("change", RIGHT, wrap=False), Column("note")], title=title)
    for line, shown in zip(lines, shown_names([line.name for line in lines]), strict=True):
        for s, j in zip(steps, line.steps, strict=True):
            a, b = columns[s.a], columns[s.b]
            change = NONE if j is None or j.error is not None else exact_percent(j)
            table.add(shown, a.release, a.version, figure(line.figures[s.a]),
                      figure(line.figures[s.b]), step_cell(j), change,
                      clip_words(_why((a, b), (line.reasons[s.a], line.reasons[s.b])),
                                 REASON_WIDTH))
    return table


def series_records(arch: str, unit: str, columns: Sequence[KernelColumn],
                   steps: Sequence[SeriesStep], lines: Sequence[SeriesLine]
                   ) -> list[dict[str, Any]]:
    """One ``lab-release-row`` record per row per run, row by row, runs in the table's
    order: the run's figure (or why there is none) and, for a run a step ends at, the
    step's verdict against the run it starts from."""
    ending = {s.b: (k, s.a) for k, s in enumerate(steps)}
    records = []
    for line in lines:
        for i, c in enumerate(columns):
            step = None
            if i in ending:
                k, a = ending[i]
                j = line.steps[k]
                step = {"against": {"release": columns[a].release, "side": columns[a].side},
                        "verdict": None if j is None else record(j),
                        "path_changed": j is not None and path_changed(j),
                        "timer_share": j is not None and timer_share(j)}
            records.append({"type": ROW, "arch": arch, "row": line.name,
                            "release": c.release, "package": c.package,
                            "version": c.version, "side": c.side, "unit": unit,
                            "figure": line.figures[i], "reason": line.reasons[i] or None,
                            "step": step})
    return records


__all__ = ["ROW", "KernelColumn", "SeriesLine", "SeriesStep", "kernels_table", "run_label",
           "series_records", "series_table", "sides_table", "step_cell"]
