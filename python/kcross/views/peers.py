"""The table of ``kcross lab ARCH --peers``: the kernel's selftests beside kcross's rows
(the figures and agreements are kcross.lab.peers's; this only shows them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..judge.agreement import Agreement
from .table import RIGHT, Column, Styled, Table
from .text import NONE, count

if TYPE_CHECKING:  # the type of what is shown, defined with its computation
    from ..lab.peers import PeersBeside

_STYLE = {Agreement.AGREE: "", Agreement.DIFFER: "yellow", Agreement.UNJUDGED: "red"}


def _figure(value: float | None) -> str:
    return NONE if value is None else count(value)


def peers_table(checked: PeersBeside, title: str) -> Table:
    table = Table([Column("selftest (the kernel's)", wrap=False), Column("its figures"),
                   Column("instructions\nper op (peer)", RIGHT), Column("kcross", RIGHT),
                   Column("kcross rows"), Column("agreement")], title=title)
    for r in checked.rows:
        f = r.figures
        reading = f.reading if f.passed else f"failed: {f.problem}"
        table.add(f.peer.name, reading, _figure(f.per_op), _figure(r.ours), r.ours_how,
                  Styled(r.judged.statement, _STYLE[r.judged.agreement]))
    src = checked.source
    table.notes = [f"selftests from Debian {src.package} {src.version} (kernel tree "
                   f"{src.kernel_release}), built static with the lab's cross compiler; run "
                   "after the harness in the same counting boot"]
    table.notes += [f"  {text}" for text in checked.includes()]
    table.notes += [f"  {r.figures.peer.name} differs: {r.figures.peer.differs_because}"
                    for r in checked.rows
                    if r.judged.agreement is Agreement.DIFFER and r.figures.peer.differs_because]
    table.notes += [f"  not run: {p.name}: {p.what}; --peers all runs it"
                    for p in checked.left_out]
    if checked.no_peer:
        table.notes.append(f"  no peer on {checked.arch} for {checked.no_peer}")
    return table
