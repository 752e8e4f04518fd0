"""The terminal views of lab profiles (issue 16): one benchmark's profile, one operation's
trace, and what changed between two profiles.  Pure functions from kcross.lab.profile /
kcross.lab.profile_diff objects to rich renderables; nothing is computed here."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kcross.judge.verdict import words
from kcross.lab.profile import BenchProfile, TraceLine
from kcross.lab.profile_diff import SHOWN_PER_OP, ProfileDiff

TOP_FUNCTIONS = 25


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value == value else "—"


def profile_view(p: BenchProfile, *, top: int = TOP_FUNCTIONS) -> RenderableType:
    """Per op: user and kernel instructions (and the harness's own figure of the boot),
    the functions by instructions per op, the costly instructions by category."""
    counting = "—" if p.counting is None else f"{p.counting:.2f}"
    head = Text(f"{p.name}: {_n(p.figure)} instructions/op = {_n(p.user)} user + "
                f"{_n(p.kernel)} kernel (counting mode, the same boot: {counting}; median "
                f"of {p.windows} batches of {p.iters}"
                f"{', the empty loop subtracted' if p.subtracted else ''})", style="bold")
    functions = Table(title_justify="left", box=None, pad_edge=False)
    functions.add_column("instr/op", justify="right", no_wrap=True)   # a figure is never cut
    functions.add_column("space")
    functions.add_column("function", no_wrap=True)
    shown = [f for f in p.functions if abs(f.per_op) >= SHOWN_PER_OP][:top]
    for f in shown:
        functions.add_row(_n(f.per_op), f.space, f.function)
    rest = sum(f.per_op for f in p.functions if f not in shown)
    if abs(rest) >= 0.005:
        functions.add_row(_n(rest), "", "(the rest: under "
                          f"{SHOWN_PER_OP} per op each, or past the top {top})")
    costly = Table(box=None, pad_edge=False)
    costly.add_column("per op", justify="right", no_wrap=True)
    costly.add_column("costly instruction")
    costly.add_column("space")
    costly.add_column("in", no_wrap=True)
    listed = [c for c in p.costly if abs(c.per_op) >= SHOWN_PER_OP]
    for c in listed:
        costly.add_row(_n(c.per_op), f"{c.category}: {c.mnemonic}", c.space, c.function)
    parts: list[RenderableType] = [head, functions]
    parts.append(costly if listed else Text("  no costly instruction on this path"))
    return Group(*parts, Text(""))


def trace_view(p: BenchProfile) -> RenderableType:
    """One operation's instructions in order: index, user/kernel, address, symbol+offset,
    disassembly."""
    lines: Sequence[TraceLine] = p.trace or []
    kernel = sum(1 for t in lines if t.space == "kernel")
    table = Table(title=f"{p.name}: one operation, {len(lines)} instructions in order "
                  f"({len(lines) - kernel} user, {kernel} kernel; from one execution of the "
                  "loop's first instruction to the next)", title_justify="left", box=None,
                  pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("", no_wrap=True)
    table.add_column("address", no_wrap=True)
    table.add_column("symbol+offset", no_wrap=True)
    table.add_column("instruction", no_wrap=True)
    for i, t in enumerate(lines, 1):
        table.add_row(str(i), "K" if t.space == "kernel" else "U", f"{t.address:#x}", t.place,
                      t.disassembly, style="" if t.space == "kernel" else "cyan")
    return table


def diff_view(d: ProfileDiff, labels: tuple[str, str]) -> RenderableType:
    """The per-op figures of both sides with the judge's words, then the functions and
    costly instructions that changed."""
    a, b = labels
    table = Table(title=f"{d.name}: {a} → {b}", title_justify="left", box=None,
                  pad_edge=False)
    table.add_column("", overflow="fold")       # the line's name folds; its figures never cut
    table.add_column(a, justify="right", no_wrap=True)
    table.add_column(b, justify="right", no_wrap=True)
    table.add_column("change", no_wrap=True)
    for c in d.totals:
        table.add_row(c.what, _n(c.a), _n(c.b), words(c.judgement))
    sections: list[tuple[str, list]] = [("function", d.functions),
                                        ("costly instruction", d.costly)]
    for title, rows in sections:
        if not rows:
            table.add_row(Text(f"  no {title} changed", style="dim"), "", "", "")
            continue
        for c in rows:
            table.add_row(f"  {title}: {c.what}", _n(c.a), _n(c.b), words(c.judgement))
    return Group(table, Text(""))
