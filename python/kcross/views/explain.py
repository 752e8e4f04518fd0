"""The explanation of a lab comparison's changed rows (issue 23): the terminal view and the
JSON records.  Pure functions of kcross.lab.explain's objects; nothing is computed here.

The view: what the profiled boots ran, the configurations' difference (the crossing's
options that differ, each with its reason, and how many others differ; or why there is no
comparison), then per changed row its verdict, the profiled boots' instructions, user and
kernel per op, and the functions and costly instructions that appeared, are gone, grew or
shrank, with what is left; the rows that moved by the timer's share, named apart.

The records (``--json``): one ``lab-explanation`` per changed row (docs/lab.md, "The
explanation of a change").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..judge.verdict import record
from .table import BARE, RIGHT, Column, Styled, Table, terminal
from .text import NONE, arrow, count, counted
from .verdict import timer_share_note, words

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ..lab.explain import ConfigDiff, Explained, Explanation, Moved

EXPLANATION = "lab-explanation"
NOT_SET = "not set"


def _value(v: str | None) -> str:
    """An option's value as a configuration gives it; "not set", or a dash when the
    configuration does not name it."""
    if v is None:
        return NONE
    return NOT_SET if v == "n" else v


def config_lines(c: ConfigDiff, labels: tuple[str, str]) -> RenderableType:
    """The crossing's options that differ between the two configurations, each with its
    reason; or why there is no comparison."""
    from rich.text import Text

    if c.missing is not None:
        return Text(f"kernel configuration: {c.missing}")
    a, b = labels
    table = Table([Column("option", wrap=False), Column(a, fold=True), Column(b, fold=True),
                   Column("why it touches a crossing")], frame=BARE)
    assert c.where is not None
    table.title = (f"kernel configuration ({a}: {c.where[0]}; {b}: {c.where[1]}): "
                   + (f"{counted(len(c.changes), 'option')} of the crossing's list differ"
                      if c.changes else "no option of the crossing's list differs"))
    for change in c.changes:
        table.add(change.option, _value(change.a), _value(change.b), change.reason)
    table.notes.append(f"{counted(c.others, 'other option')} differ (not on the crossing's "
                       "list: kcross.lab.crossing_config)")
    return terminal(table)


def _moved(table: Table, title: str, moves: tuple[Moved, ...], function: bool) -> None:
    if not moves:
        table.add(Styled(f"  no {title} moved by 1 instruction per op or more", "dim"),
                  "", "", "")
        return
    for m in moves:
        what = f"{m.space} {m.what}" if function else m.what
        table.add(f"  {title} {m.kind}: {what}", count(m.a), count(m.b), words(m.judgement))


def step_view(e: Explanation, labels: tuple[str, str]) -> RenderableType:
    """One changed row: its verdict, then the profiled boots' figures and what moved."""
    a, b = labels
    table = Table([Column("", fold=True), Column(a, RIGHT, wrap=False),
                   Column(b, RIGHT, wrap=False), Column("change", wrap=False)],
                  title=f"{e.row}: {arrow(a, b)} {words(e.judgement)} (counting boots)",
                  frame=BARE)
    if e.missing is not None:
        table.add(Styled(f"  not explained: {e.missing}", "yellow"), "", "", "")
        return terminal(table)
    for c in e.totals:
        table.add(f"{c.what} (profiled boots)", count(c.a), count(c.b), words(c.judgement))
    _moved(table, "function", e.functions, True)
    _moved(table, "costly instruction", e.costly, False)
    rest = "the rest: moves under 1 instruction per op each" + \
        ("" if e.user_changed else ", and the user side's (unchanged)")
    table.add(Styled(f"  {rest}", "dim"), "", "", count(e.rest))
    return terminal(table)


def explanation_view(x: Explained) -> RenderableType:
    """Every changed row's explanation between the two sides, the configurations'
    difference first."""
    from rich.console import Group
    from rich.text import Text

    a, b = x.labels
    parts: list[Any] = []
    if x.steps:
        parts.append(Text(f"Why {counted(len(x.steps), 'row')} changed, {arrow(a, b)} "
                          f"(one profiled boot per side of {x.profiled})", style="bold"))
    else:
        parts.append(Text(f"{arrow(a, b)}: no row changed by 1 instruction per op or more: "
                          "nothing to explain", style="bold"))
    parts.append(config_lines(x.config, x.labels))
    for e in x.steps:
        parts.append(step_view(e, x.labels))
    if x.timer_share:
        parts.append(Text(timer_share_note([n.split("/", 1)[-1] for n in x.timer_share]),
                          style="dim"))
    return Group(*parts, Text(""))


# ---------------------------------------------------------------- JSON


def _line(kind: str | None, what: str, a: float, b: float, space: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {"what": what, "a": a, "b": b, "delta": b - a}
    if kind is not None:
        found = {"kind": kind, "space": space, **found}
    return found


def explanation_records(x: Explained) -> list[dict[str, Any]]:
    """One ``lab-explanation`` record per changed row: the row, the sides, the counting
    boots' verdict (kcross.judge.verdict.record), the profile difference or why there is
    none, the configurations' difference or why there is none."""
    c = x.config
    config = {"changes": [{"option": ch.option, "a": ch.a, "b": ch.b, "reason": ch.reason}
                          for ch in c.changes],
              "others": c.others, "where": list(c.where) if c.where else None,
              "missing": c.missing}
    records = []
    for e in x.steps:
        profile = None if e.missing is not None else {
            "totals": [_line(None, t.what, t.a, t.b) for t in e.totals],
            "functions": [_line(m.kind, m.what, m.a, m.b, m.space) for m in e.functions],
            "costly": [_line(m.kind, m.what, m.a, m.b, m.space) for m in e.costly],
            "rest": e.rest, "user_listed": e.user_changed}
        records.append({"type": EXPLANATION, "row": e.row, "a": x.labels[0],
                        "b": x.labels[1], "verdict": record(e.judgement),
                        "profile": profile, "profile_missing": e.missing, "config": config})
    return records
