"""The table of ``kcross lab ARCH --crosscheck``: the kernel's selftests beside kcross's rows
(the figures and agreements are kcross.lab.crosscheck's; this only shows them)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kcross.judge.agreement import Agreement
from kcross.lab.peers import INCLUDES, PeersBeside

_STYLE = {Agreement.AGREE: "", Agreement.DIFFER: "yellow", Agreement.UNJUDGED: "red"}


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}"


def crosscheck_table(checked: PeersBeside, title: str) -> Group:
    table = Table(title=title, title_justify="left")
    table.add_column("selftest (the kernel's)", no_wrap=True)
    table.add_column("its figures")
    table.add_column("instructions\nper op (peer)", justify="right")
    table.add_column("kcross", justify="right")
    table.add_column("kcross rows")
    table.add_column("agreement")
    for r in checked.rows:
        f = r.figures
        reading = f.reading if f.passed else f"failed: {f.problem}"
        table.add_row(Text(f.peer.name), Text(reading), _figure(f.per_op), _figure(r.ours),
                      Text(r.ours_how), Text(r.judged.statement, style=_STYLE[r.judged.agreement]))
    src = checked.source
    lines = [Text(f"selftests from Debian {src.package} {src.version} (kernel tree "
                  f"{src.kernel_release}), built static with the lab's cross compiler; run "
                  "after the harness in the same counting boot")]
    kinds = dict.fromkeys(r.figures.peer.kind for r in checked.rows)
    lines += [Text(f"  {INCLUDES[k]}") for k in kinds]
    lines += [Text(f"  {r.figures.peer.name} differs: {r.figures.peer.differs_because}")
              for r in checked.rows
              if r.judged.agreement is Agreement.DIFFER and r.figures.peer.differs_because]
    lines += [Text(f"  not run: {p.name} ({p.what}; --crosscheck all runs it)")
              for p in checked.left_out]
    if checked.no_peer:
        lines.append(Text(f"  no peer on {checked.arch} for {checked.no_peer}"))
    return Group(table, *lines)
