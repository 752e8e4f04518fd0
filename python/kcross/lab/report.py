"""The rows of the lab's tables: a comparison of two counting runs, and the mitigation
table (issue 8), from counting runs (session.Counted), judged by kcross.judge and shown by
kcross.views.lab.  Figures are instructions per operation by the statistics rule
(kcross.stats: the empty loop's count subtracted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kcross.fingerprint import VULNERABILITIES
from kcross.judge.categories import Category
from kcross.judge.verdict import TIMER_SHARE, Judgement, path_changed
from kcross.lab.session import Counted, rows_by_name
from kcross.views import lab as view
from kcross.views.lab import CountRow, MitigationLine
from kcross.views.table import Table


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


def reason(c: Counted, name: str) -> str:
    """Why run ``c`` has no figure of benchmark ``name`` (suite/name): its status and
    reason; "" when it has one (or no record of it)."""
    for r in c.stream.results:
        if f"{r['suite']}/{r['name']}" == name and r["status"] != "ok":
            return f"{r['status']}: {r['reason']}"
    return ""


def compare_table(a: Counted, b: Counted, label_a: str, label_b: str) -> Table:
    """Per benchmark: A, B, B - A and (B - A)/A, in instructions per operation, as
    kcross.judge judges exact counts (identical, or changed by the difference); "changed"
    counts the changes of the path, the rows that moved by the timer's share are said apart
    (kcross.judge.verdict.path_changed)."""
    from kcross.judge.verdict import timer_share

    verdicts = judged(a, b, label_a, label_b)
    changed = sum(1 for j in verdicts.values() if path_changed(j))
    names = rows_by_name((a, b))
    rows = []
    shares = []
    for name, shown in zip(names, view.shown_names(names), strict=True):
        x, y = a.median(name), b.median(name)
        j = verdicts.get(name)
        if x is None or y is None:
            j = None
        rows.append(CountRow(shown, x, y, j, reason(a, name) or reason(b, name)
                             or "not measured"))
        if j is not None and timer_share(j):
            shares.append(shown)
    return view.compare_table(f"{a.guest.arch.name}: {label_a} vs {label_b}, instructions/op "
                              f"(counting mode; {changed} of {len(verdicts)} changed)",
                              label_a, label_b, rows, shares)


@dataclass(frozen=True)
class MitigationRow:
    """One variant of a mitigation table: its run, or why there is none."""

    name: str
    what: str
    run: Counted | None = None
    refused: str | None = None     # QEMU refused or crashed on the configuration
    expect: str = ""               # why it may change nothing (mitigations.Variant.expect)


def _vulnerabilities(c: Counted) -> Mapping[str, Any]:
    return VULNERABILITIES.members(c.stream.fingerprint)


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
    lines = []
    for row in rows:
        if row.run is None:
            lines.append(MitigationLine(row.name, refused=row.refused))
            continue
        verdicts = judged(base, row.run, baseline_name, row.name)
        moved = [verdicts[n] for n in paths if n in verdicts]
        deltas = [j for j in moved if j.delta is not None]
        key_judgement = verdicts.get(f"syscall/{KEY_BENCH}")
        changes = vulnerability_changes(base, row.run)
        # Judged on the null syscall, the path every variant's `expect` speaks of: the
        # path-walking calls (stat, open) also move by a few instructions between any two
        # configurations (memory layout), which the footnote says.  A move by the timer's
        # share is no change of the path (kcross.judge.verdict.path_changed).
        unchanged = key_judgement is not None and not path_changed(key_judgement)
        if unchanged:
            assert key_judgement is not None
            why = row.expect or ("" if changes else "nor does what the kernel reports")
            said = f"no instruction changed on {KEY_BENCH}" \
                if key_judgement.category is Category.IDENTICAL \
                else f"{KEY_BENCH}'s path unchanged ({TIMER_SHARE})"
            note = "\n".join(changes + [said + (f": {why}" if why else "")])
        elif row.expect:
            note = "\n".join(changes + [f"expected no change: {row.expect}; yet "
                                         f"{KEY_BENCH} moved"])
        else:
            note = "\n".join(changes) if changes else \
                "same vulnerability report; the code path changed"
        lines.append(MitigationLine(
            row.name, row.run.median(KEY_BENCH), key_judgement,
            low=min(moved, key=lambda j: j.delta or 0.0) if moved else None,
            high=max(moved, key=lambda j: j.delta or 0.0) if moved else None,
            any_figure=bool(deltas),
            identical=all(j.category is Category.IDENTICAL for j in moved), note=note))
    title = (f"{arch} mitigations against {baseline_name} ({KEY_BENCH} "
             f"{view.figure(base.median(KEY_BENCH))} instructions/op)")
    return view.mitigation_table(title, KEY_BENCH, len(paths), lines, INCIDENTAL)
