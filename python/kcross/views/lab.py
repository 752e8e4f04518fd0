"""The lab's tables: two counting runs compared, a mitigation table (issue 8) and the
library's tests in a guest (``kcross lab ARCH --compare / --mitigations / --correctness``).

Figures are instructions per operation (kcross.views.text.count: one decimal, a fraction
being the share of periodic kernel work and of the timer read spread over a batch); the
rows are computed by kcross.lab (kcross.lab.report), judged by kcross.judge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..judge.verdict import Judgement
from .table import RIGHT, Column, Row, Styled, Table
from .text import NONE, clip_words, count, interval
from .verdict import exact_delta, exact_percent, timer_share_note


def figure(value: float | None) -> str:
    return NONE if value is None else count(value)


@dataclass(frozen=True)
class CountRow:
    """One benchmark of two counting runs: A's and B's figures, B judged against A, or why
    there is no judgement (a skip reason, the judge's error)."""

    name: str
    a: float | None
    b: float | None
    judgement: Judgement | None = None
    reason: str = ""


def shown_names(names: Sequence[str]) -> list[str]:
    """Benchmarks (suite/name) as a lab table's rows name them: the name alone, suite/name
    where two suites have the name."""
    bare = [n.split("/", 1)[1] for n in names]
    return [name if bare.count(short) > 1 else short for name, short in zip(names, bare,
                                                                            strict=True)]


REASON_WIDTH = 60   # a skip reason or a judgement's error, in the compare table's note


def compare_table(title: str, label_a: str, label_b: str, rows: Sequence[CountRow],
                  timer_share: Sequence[str] = ()) -> Table:
    """Per benchmark: A, B, B − A and (B − A)/A in instructions per operation, as
    kcross.judge judges exact counts (identical, or changed by the difference); why a row
    has none in its note; the rows that moved by the timer's share only, named under it."""
    table = Table([Column("benchmark", wrap=False), Column(label_a, RIGHT),
                   Column(label_b, RIGHT), Column(f"{label_b} - {label_a}", RIGHT),
                   Column("change", RIGHT), Column("note")], title=title,
                  notes=[timer_share_note(timer_share)] if timer_share else [])
    for r in rows:
        j = r.judgement
        if j is None or j.error is not None:
            why = r.reason if j is None else str(j.error)
            table.add(r.name, figure(r.a), figure(r.b), NONE, NONE,
                      clip_words(why, REASON_WIDTH))
            continue
        table.add(r.name, figure(r.a), figure(r.b), exact_delta(j), exact_percent(j), "")
    if not any(row.cells[-1] for row in table.rows):   # no row needs a note
        table.columns = table.columns[:-1]
        table.rows = [Row(row.cells[:-1], row.style) for row in table.rows]
    return table


@dataclass(frozen=True)
class MitigationLine:
    """One variant against the baseline: the null syscall's figure and its judgement, the
    lowest and highest change over the syscall paths, what the kernel reports (or why
    nothing changed); ``refused``: QEMU refused the configuration (no figures)."""

    name: str
    key: float | None = None
    key_judgement: Judgement | None = None
    low: Judgement | None = None
    high: Judgement | None = None
    any_figure: bool = False
    identical: bool = False
    note: str = ""
    refused: str | None = None


def mitigation_table(title: str, key_bench: str, paths: int, rows: Sequence[MitigationLine],
                     caption: str) -> Table:
    table = Table([Column("variant", wrap=False), Column(key_bench, RIGHT),
                   Column("Δ", RIGHT), Column(f"Δ over {paths} syscall paths", RIGHT),
                   Column("what the kernel reports / why unchanged")], title=title,
                  notes=[caption])
    for r in rows:
        if r.refused is not None:
            table.add(r.name, NONE, NONE, NONE, Styled(f"not a result: {r.refused}", "red"))
            continue
        if not r.any_figure:
            span = NONE
        elif r.identical:
            span = "0"
        else:
            span = interval(exact_delta(r.low), exact_delta(r.high))
        table.add(r.name, figure(r.key), exact_delta(r.key_judgement), span, r.note)
    return table


class TestOutcome(Protocol):
    """What the correctness table shows of a test (kcross.lab.correctness.TestOutcome)."""

    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def output(self) -> Sequence[str]: ...


def correctness_table(title: str, outcomes: Sequence[TestOutcome], notes: Sequence[str]
                      ) -> Table:
    """Each test: its status, and why (a skip's reason) or its last line of output."""
    table = Table([Column("test", wrap=False), Column("status"), Column("why / last line")],
                  title=title, notes=list(notes))
    for o in outcomes:
        last = next((line for line in reversed(o.output) if line.strip()), "")
        style = {"passed": "", "skipped": "yellow"}.get(o.status, "red")
        table.add(o.name, Styled(o.status, style), clip_words(o.reason or last, 100))
    return table


__all__ = ["CountRow", "MitigationLine", "compare_table", "correctness_table",
           "mitigation_table", "shown_names", "timer_share_note"]
