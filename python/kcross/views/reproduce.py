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
from .text import ARROW, NONE, arrow, in_unit, mark, ratio


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


def published_text(c: ChangeRow) -> str:
    """The change as published; of two published figures, B/A where ours are of their
    kind, else the figures themselves (``482 → 346 cycles``): a ratio of cycles or times
    is never set beside a ratio of instructions."""
    if c.published:
        return c.published
    if c.figures is None:
        return NONE
    a, b = c.figures
    if c.across or not a:
        return f"{arrow(f'{a:,g}', f'{b:,g}')} {c.unit.removesuffix('/op')}"
    return f"B/A {ratio(b / a)}"


def reversal_note(c: ChangeRow) -> str:
    """What a change of ours that went the other way from the published figures means."""
    what = _kind(c.unit, "times")
    return (f"ours counted instructions the other way from the published {what}: an atomic "
            f"is one instruction and many cycles, so a count of instructions does not rank "
            f"{what}")


def across_note(c: ChangeRow) -> str:
    """Said under changes whose published figures and ours are of two kinds."""
    published, ours = _kind(c.unit), _kind(c.ours)
    return (f"published {published}, ours {ours}: each change in its own unit (a ratio of "
            f"{published} is not one of {ours})")


def _kind(unit: str, time: str = "") -> str:
    """What a unit counts, as a note names it: cycles, instructions; a time its unit (or
    ``time``)."""
    from ..reproduce.outcome import unit_kind

    kind = unit_kind(unit)
    return (time or unit.removesuffix("/op")) if kind == "time" else kind


def change_notes(changes: Sequence[ChangeRow]) -> tuple[list[str], list[str]]:
    """Each change's mark (``¹`` where ours went the other way from the published figures)
    and the notes the marks refer to, with the note on changes of two kinds."""
    notes: list[str] = []
    marks = []
    for c in changes:
        said = ""
        if c.reverses:
            note = reversal_note(c)
            if note not in notes:
                notes.append(note)
            said = f" {mark(notes.index(note) + 1)}"
        marks.append(said)
    notes = [f"{mark(i)} {n}" for i, n in enumerate(notes, start=1)]
    across = [across_note(c) for c in changes if c.across]
    return marks, notes + list(dict.fromkeys(across))


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
    marks, table.notes = change_notes(place.changes)
    for c, marked in zip(place.changes, marks, strict=True):
        table.add(c.a, c.b, published_text(c), change_text(c) + marked)
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
            "changes": [{"a": c.a, "b": c.b, "published": published_text(c),
                         "verdict": verdict_record(c.judgement) if c.judgement else None,
                         "reason": c.reason or None} for c in p.changes],
        } for p in o.places],
        "not_measured": list(o.missing),
    }
