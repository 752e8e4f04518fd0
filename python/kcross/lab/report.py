"""The lab's tables: a comparison of two counting runs, and the mitigation table (issue 8).

Pure functions from counting runs (session.Counted) to rich tables.  Figures are
instructions per operation by the statistics rule (kcross.stats: the empty loop's count
subtracted), shown with one decimal: a fraction is the share of periodic kernel work
(timer ticks, batched refills) and of the timer read spread over a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from kcross.judge.categories import Category
from kcross.judge.verdict import Judgement, exact_change
from kcross.lab.session import Counted, rows_by_name
from kcross.render import clip_words


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def judged(a: Counted, b: Counted, label_a: str = "A", label_b: str = "B"
           ) -> dict[str, Judgement]:
    """Each benchmark both runs have figures for, B judged against A by kcross.judge (lab
    counts: exact, by value), by suite/name."""
    from kcross.judge.comparison import compare
    from kcross.judge.pairing import NothingToCompare
    from kcross.series import series_of_results
    from kcross.sides import Side

    def side(c: Counted, label: str) -> Side:
        return Side(label=label, single=False, fingerprint=c.stream.fingerprint,
                    series=tuple(series_of_results(label, c.stream.fingerprint, c.stream.results,
                                                   run=f"{label} ({id(c)})")))

    try:
        compared = compare([side(a, label_a), side(b, label_b)], refuse_values=False)
    except NothingToCompare:
        return {}
    return {row.name: row.judgements[1] for row in compared.rows}  # type: ignore[misc]


def delta_text(j: Judgement | None) -> str:
    """B − A as the judge words it: ``0`` for identical, else the signed exact change."""
    if j is None or j.delta is None:
        return "—"
    if j.category is Category.IDENTICAL:
        return "0"
    return exact_change(j).split(" ")[0]


REASON_WIDTH = 60   # a skip reason or a judgement's error in the compare table


def _reason(c: Counted, name: str) -> str:
    for r in c.stream.results:
        if f"{r['suite']}/{r['name']}" == name and r["status"] != "ok":
            return f"{r['status']}: {r['reason']}"
    return ""


def compare_table(a: Counted, b: Counted, label_a: str, label_b: str) -> Table:
    """Per benchmark: A, B, B − A and (B − A)/A, in instructions per operation, as
    kcross.judge judges exact counts (identical, or changed by the difference)."""
    verdicts = judged(a, b, label_a, label_b)
    changed = sum(1 for j in verdicts.values() if j.category.changed)
    table = Table(title=f"{a.guest.arch.name}: {label_a} vs {label_b}, instructions/op "
                  f"(counting mode; {changed} of {len(verdicts)} changed)",
                  title_justify="left")
    table.add_column("benchmark", no_wrap=True)
    table.add_column(label_a, justify="right")
    table.add_column(label_b, justify="right")
    table.add_column(f"{label_b} − {label_a}", justify="right")
    table.add_column("change", justify="right")
    names = rows_by_name((a, b))
    bare = [n.split("/", 1)[1] for n in names]
    for name, short in zip(names, bare, strict=True):
        shown = name if bare.count(short) > 1 else short   # a name in two suites: both
        x, y = a.median(name), b.median(name)
        j = verdicts.get(name)
        if x is None or y is None or j is None:
            why = _reason(a, name) or _reason(b, name) or "not measured"
            table.add_row(Text(shown), fmt(x), fmt(y), "—", Text(clip_words(why, REASON_WIDTH)))
            continue
        if j.error is not None:
            table.add_row(Text(shown), fmt(x), fmt(y), "—", Text(clip_words(j.error, REASON_WIDTH)))
            continue
        pct = "0" if j.category is Category.IDENTICAL else \
            ("—" if j.ratio is None else exact_change(j).split("(")[-1].rstrip(")"))
        table.add_row(Text(shown), fmt(x), fmt(y), delta_text(j), pct)
    return table


@dataclass(frozen=True)
class MitigationRow:
    """One variant of a mitigation table: its run, or why there is none."""

    name: str
    what: str
    run: Counted | None = None
    refused: str | None = None     # QEMU refused or crashed on the configuration
    expect: str = ""               # why it may change nothing (mitigations.Variant.expect)


def _vulnerabilities(c: Counted) -> dict[str, Any]:
    fp = c.stream.fingerprint or {}
    return fp.get("vulnerabilities") or {}


def vulnerability_changes(base: Counted, variant: Counted) -> list[str]:
    """The /sys/devices/system/cpu/vulnerabilities lines that differ, "name → new" (the
    baseline's own lines are printed under the table: :func:`baseline_report`)."""
    a, b = _vulnerabilities(base), _vulnerabilities(variant)
    return [f"{k} → {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def baseline_report(base: Counted) -> list[str]:
    """The baseline's vulnerabilities lines that report a mitigation or a vulnerability."""
    return [f"{k}: {v}" for k, v in sorted(_vulnerabilities(base).items())
            if v and v != "Not affected"]


KEY_BENCH = "getppid-inline"


INCIDENTAL = ("the range over all syscall paths includes incidental differences: the "
              "path-walking calls (stat, open) move by a few to some tens of instructions "
              "between any two configurations (another command line or machine option is "
              "another memory layout); the null syscall's count does not")


def mitigation_table(arch: str, baseline_name: str, base: Counted,
                     rows: Sequence[MitigationRow]) -> Table:
    """Each variant against the baseline: the null syscall's count and its change, the
    range of changes over every syscall-suite path, and what the kernel says changed."""
    paths = [f"syscall/{r['name']}" for r in base.stream.results if r["suite"] == "syscall"]
    table = Table(title=f"{arch} mitigations against {baseline_name} "
                  f"({KEY_BENCH} {fmt(base.median(KEY_BENCH))} instructions/op)",
                  title_justify="left", caption=INCIDENTAL, caption_justify="left")
    table.add_column("variant", no_wrap=True)
    table.add_column(KEY_BENCH, justify="right")
    table.add_column("Δ", justify="right")
    table.add_column(f"Δ over {len(paths)} syscall paths", justify="right")
    table.add_column("what the kernel reports / why unchanged")
    for row in rows:
        if row.run is None:
            table.add_row(Text(row.name), "—", "—", "—",
                          Text(f"not a result: {row.refused}", style="red"))
            continue
        verdicts = judged(base, row.run, baseline_name, row.name)
        moved = [verdicts[n] for n in paths if n in verdicts]
        deltas = [j.delta for j in moved if j.delta is not None]
        key = row.run.median(KEY_BENCH)
        key_judgement = verdicts.get(f"syscall/{KEY_BENCH}")
        if not deltas:
            span = "—"
        elif all(j.category is Category.IDENTICAL for j in moved):
            span = "0"
        else:
            low = min(moved, key=lambda j: j.delta or 0.0)
            high = max(moved, key=lambda j: j.delta or 0.0)
            span = delta_text(low) if low is high else f"{delta_text(low)} … {delta_text(high)}"
        changes = vulnerability_changes(base, row.run)
        # Judged on the null syscall, the path every variant's `expect` speaks of: the
        # path-walking calls (stat, open) also move by a few instructions between any two
        # configurations (memory layout), which the footnote says.
        unchanged = key_judgement is not None and key_judgement.category is Category.IDENTICAL
        if unchanged:
            why = row.expect or ("" if changes else "nor does what the kernel reports")
            note = "\n".join(changes + [f"no instruction changed on {KEY_BENCH}"
                                         + (f": {why}" if why else "")])
        elif row.expect:
            note = "\n".join(changes + [f"expected no change ({row.expect}), yet "
                                         f"{KEY_BENCH} moved"])
        else:
            note = "\n".join(changes) if changes else \
                "same vulnerability report; the code path changed"
        table.add_row(Text(row.name), fmt(key), delta_text(key_judgement), span, Text(note))
    return table
