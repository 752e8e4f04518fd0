"""The terminal views of lab profiles (issue 16): one benchmark's profile, one operation's
trace, and what changed between two profiles.  Pure functions from kcross.lab.profile /
kcross.lab.profile_diff objects to tables (kcross.views.table); nothing is computed here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kcross.lab.profile import BenchProfile, TraceLine
from kcross.lab.profile_diff import SHOWN_PER_OP, ProfileDiff

from .table import BARE, RIGHT, Column, Styled, Table, terminal
from .text import NONE, arrow, count
from .verdict import words

if TYPE_CHECKING:
    from rich.console import RenderableType

TOP_FUNCTIONS = 25


def _n(value: float | None) -> str:
    return NONE if value is None or value != value else count(value)


def profile_view(p: BenchProfile, *, top: int = TOP_FUNCTIONS) -> RenderableType:
    """Per op: user and kernel instructions (and the harness's own figure of the boot),
    the functions by instructions per op, the costly instructions by category."""
    from rich.console import Group
    from rich.text import Text

    head = Text(f"{p.name}: {_n(p.figure)} instructions/op = {_n(p.user)} user + "
                f"{_n(p.kernel)} kernel (counting mode, the same boot: {_n(p.counting)}; "
                f"median of {p.windows} batches of {p.iters}"
                f"{', the empty loop subtracted' if p.subtracted else ''})", style="bold")
    functions = Table([Column("instr/op", RIGHT, wrap=False),   # a figure is never cut
                       Column("space"), Column("function", wrap=False)], frame=BARE)
    shown = [f for f in p.functions if abs(f.per_op) >= SHOWN_PER_OP][:top]
    for f in shown:
        functions.add(_n(f.per_op), f.space, f.function)
    rest = sum(f.per_op for f in p.functions if f not in shown)
    if abs(rest) >= 0.05:      # shown to one decimal: a smaller rest is 0.0
        functions.add(_n(rest), "", f"the rest: under {SHOWN_PER_OP} per op each, or past "
                                    f"the top {top}")
    costly = Table([Column("per op", RIGHT, wrap=False), Column("costly instruction"),
                    Column("space"), Column("in", wrap=False)], frame=BARE)
    listed = [c for c in p.costly if abs(c.per_op) >= SHOWN_PER_OP]
    for c in listed:
        costly.add(_n(c.per_op), f"{c.category}: {c.mnemonic}", c.space, c.function)
    parts: list[Any] = [head, terminal(functions)]
    parts.append(terminal(costly) if listed else Text("  no costly instruction on this path"))
    return Group(*parts, Text(""))


def trace_view(p: BenchProfile) -> RenderableType:
    """One operation's instructions in order: index, user/kernel, address, symbol+offset,
    disassembly."""
    lines: Sequence[TraceLine] = p.trace or []
    kernel = sum(1 for t in lines if t.space == "kernel")
    table = Table([Column("#", RIGHT), Column("", wrap=False), Column("address", wrap=False),
                   Column("symbol+offset", wrap=False), Column("instruction", wrap=False)],
                  title=f"{p.name}: one operation, {len(lines)} instructions in order "
                        f"({len(lines) - kernel} user, {kernel} kernel; from one execution of "
                        "the loop's first instruction to the next)", frame=BARE)
    for i, t in enumerate(lines, 1):
        table.add(str(i), "K" if t.space == "kernel" else "U", f"{t.address:#x}", t.place,
                  t.disassembly, style="" if t.space == "kernel" else "cyan")
    return terminal(table)


def diff_view(d: ProfileDiff, labels: tuple[str, str]) -> RenderableType:
    """The per-op figures of both sides with the judge's words, then the functions and
    costly instructions that changed."""
    from rich.console import Group
    from rich.text import Text

    a, b = labels
    table = Table([Column("", fold=True),   # the line's name folds; its figures are never cut
                   Column(a, RIGHT, wrap=False), Column(b, RIGHT, wrap=False),
                   Column("change", wrap=False)], title=f"{d.name}: {arrow(a, b)}", frame=BARE)
    for c in d.totals:
        table.add(c.what, _n(c.a), _n(c.b), words(c.judgement))
    sections: list[tuple[str, list]] = [("function", d.functions),
                                        ("costly instruction", d.costly)]
    for title, rows in sections:
        if not rows:
            table.add(Styled(f"  no {title} changed", "dim"), "", "", "")
            continue
        for c in rows:
            table.add(f"  {title}: {c.what}", _n(c.a), _n(c.b), words(c.judgement))
    return Group(terminal(table), Text(""))
