"""``kcross reproduce``'s output: each experiment's published figures beside ours, per
place (natively, each lab), our changes in kcross.judge's words, ministat's blocks where
the experiment was published that way; the list of experiments; the JSON records.

Computes nothing: the figures, ratios and verdicts are kcross.reproduce.outcome's and
kcross.judge's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from ..reproduce.experiments import Experiment
from ..reproduce.outcome import Cell, ChangeRow, FigureRow, Outcome, Place
from .table import RIGHT, Column, Table, terminal
from .text import ARROW, NONE, in_unit, ratio


def _published(value: float | None, unit: str) -> str:
    return NONE if value is None else f"{value:g} {unit}"


def ours_text(cell: Cell) -> str:
    if cell.value is None:
        return cell.text_reason
    return f"{in_unit(cell.value, cell.unit)} {cell.unit.removesuffix('/op')}"


def ratio_text(row: FigureRow) -> str:
    """Ours / published, or why none (figures of different kinds: cycles vs instructions)."""
    if row.ratio is not None:
        return ratio(row.ratio)
    return row.no_ratio or NONE


def change_text(c: ChangeRow) -> str:
    from ..judge.verdict import timer_share
    from .verdict import words

    if c.judgement is None:
        return c.reason
    j = c.judgement
    shown = f"B/A {ratio(j.ratio)}" if j.ratio is not None else ""
    said = words(j) + (f"; {j.note}" if timer_share(j) else "")   # no change: its note says
    return f"{shown}: {said}" if shown and said not in ("~",) else \
        (f"{shown}: no difference shown" if shown else said)


def where_of(cell: Cell) -> str:
    parts = [cell.bench or NONE]
    if cell.variant != "default":
        parts.append(f"[{cell.variant}]")
    return " ".join(parts)


def figures_table(e: Experiment, place: Place) -> Table:
    runs = f" (run {', '.join(map(str, place.runs))})" if place.runs else ""
    title = ("natively" if place.name == "native" else f"{place.name} lab") + \
        f": {place.machine}{runs}"
    table = Table([Column("figure"), Column("published", RIGHT), Column("ours", RIGHT),
                   Column("ours/published", RIGHT), Column("benchmark [boot]")], title=title)
    for row in place.rows:
        note = f"; {row.figure.note}" if row.figure.note else ""
        published = _published(row.published, row.figure.unit or e.unit)
        table.add(row.figure.label + note, published, ours_text(row.cell), ratio_text(row),
                  where_of(row.cell))
    return table


def changes_table(place: Place) -> Table | None:
    if not place.changes:
        return None
    table = Table([Column("A"), Column("B"), Column("published"), Column("ours")],
                  title=f"changes A {ARROW} B: published, and ours judged by kcross.judge")
    for c in place.changes:
        table.add(c.a, c.b, c.published, change_text(c))
    return table


def print_outcome(out: Console, o: Outcome) -> None:
    from .ministat_report import ministat_text

    e = o.experiment
    out.print(Text(f"{e.name}: {e.title}", style="bold"))
    out.print(Text(f"  published: {e.source}"))
    out.print(Text(f"  conditions: {e.conditions}; unit: {e.unit}"))
    out.print(Text(f"  what differs: {e.differs}"))
    for place in o.places:
        out.print()
        out.print(terminal(figures_table(e, place)))
        changes = changes_table(place)
        if changes is not None:
            out.print(terminal(changes))
        if place.ministat:
            text, _ = ministat_text(list(place.ministat))
            out.print(Text("ministat (kcross compare --format ministat), as published:"))
            out.print(Text(text.rstrip("\n")))
    for line in o.missing:
        out.print(Text(f"  not measured: {line}", style="yellow"))
    out.print()


def list_table(experiments: Sequence[Experiment]) -> Table:
    table = Table([Column("name", wrap=False), Column("experiment"), Column("where"),
                   Column("takes")],
                  title="published experiments (kcross reproduce NAME runs one)")
    for e in experiments:
        where = (["natively"] if e.native else []) + [f"{a} lab" for a in e.labs]
        table.add(e.name, e.title, ", ".join(where), e.seconds)
    return table


def _cell_record(cell: Cell) -> dict[str, Any]:
    return {"value": cell.value, "unit": cell.unit, "bench": cell.bench,
            "status": cell.status, "reason": cell.reason or None, "run": cell.run_id,
            "variant": cell.variant, "mechanism": cell.mechanism}


def record(o: Outcome) -> dict[str, Any]:
    """One JSON object per experiment (``kcross reproduce --json``)."""
    from ..judge.verdict import record as verdict_record

    e = o.experiment
    return {
        "type": "reproduce", "name": e.name, "title": e.title, "source": e.source,
        "unit": e.unit, "conditions": e.conditions, "differs": e.differs,
        "places": [{
            "place": p.name, "machine": p.machine, "unit": p.unit, "runs": list(p.runs),
            "figures": [{"key": r.figure.key, "label": r.figure.label,
                         "published": r.published, "ours": _cell_record(r.cell),
                         "ratio": r.ratio, "no_ratio": r.no_ratio or None} for r in p.rows],
            "changes": [{"a": c.a, "b": c.b, "published": c.published,
                         "verdict": verdict_record(c.judgement) if c.judgement else None,
                         "reason": c.reason or None} for c in p.changes],
        } for p in o.places],
        "not_measured": list(o.missing),
    }
