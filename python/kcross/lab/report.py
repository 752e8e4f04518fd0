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

from kcross.lab.session import Counted, rows_by_name


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


UNCHANGED = 0.05   # instructions/op: a difference below this is shown, and taken, as none


def fmt_delta(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) < UNCHANGED:
        return "0"
    return f"{value:+.1f}"


def _reason(c: Counted, name: str) -> str:
    for r in c.stream.results:
        if r["name"] == name and r["status"] != "ok":
            return f"{r['status']}: {r['reason']}"
    return ""


def compare_table(a: Counted, b: Counted, label_a: str, label_b: str) -> Table:
    """Per benchmark: A, B, B − A and (B − A)/A, in instructions per operation."""
    table = Table(title=f"{a.guest.arch.name}: {label_a} vs {label_b}, instructions/op "
                  "(counting mode)", title_justify="left")
    table.add_column("benchmark", no_wrap=True)
    table.add_column(label_a, justify="right")
    table.add_column(label_b, justify="right")
    table.add_column(f"{label_b} − {label_a}", justify="right")
    table.add_column("change", justify="right")
    for name in rows_by_name((a, b)):
        x, y = a.median(name), b.median(name)
        if x is None or y is None:
            why = _reason(a, name) or _reason(b, name) or "not measured"
            table.add_row(Text(name), fmt(x), fmt(y), "—", Text(why[:60]))
            continue
        diff = y - x
        pct = "—" if x == 0 else ("0" if abs(diff) < UNCHANGED else f"{100 * diff / x:+.1f}%")
        table.add_row(Text(name), fmt(x), fmt(y), fmt_delta(diff), pct)
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
    paths = [r["name"] for r in base.stream.results if r["suite"] == "syscall"]
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
        deltas = []
        for name in paths:
            x, y = base.median(name), row.run.median(name)
            if x is not None and y is not None:
                deltas.append(y - x)
        key = row.run.median(KEY_BENCH)
        key_base = base.median(KEY_BENCH)
        key_delta = None if key is None or key_base is None else key - key_base
        span = "—" if not deltas else (
            fmt_delta(min(deltas)) if abs(max(deltas) - min(deltas)) < 0.05
            else f"{fmt_delta(min(deltas))} … {fmt_delta(max(deltas))}")
        changes = vulnerability_changes(base, row.run)
        # Judged on the null syscall, the path every variant's `expect` speaks of: the
        # path-walking calls (stat, open) also move by a few instructions between any two
        # configurations (memory layout), which the footnote says.
        unchanged = key_delta is not None and abs(key_delta) < UNCHANGED
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
        table.add_row(Text(row.name), fmt(key), fmt_delta(key_delta), span, Text(note))
    return table
