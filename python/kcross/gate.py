"""``kcross check``: the regression gate, a run against a baseline, benchmark by benchmark.

Each benchmark present on both sides is judged by the verdict rule of
:mod:`kcross.stats` (Mann-Whitney U, Holm-Bonferroni across the benchmarks
compared at once, the ratio of medians with its bootstrap CI).  The gate
fails on a benchmark only when both hold:

- it is significantly different (Holm-adjusted p < alpha), and
- the *lower end* of the CI of its ratio (current / base) is above
  ``1 + max_regression``: the data show, at the CI's confidence, a slowdown
  larger than the tolerance.

The point ratio alone is not used: on a noisy machine a benchmark whose true
slowdown is 2% shows point ratios of 1.06 now and then, and a gate that fails
on noise teaches people to ignore it.  A significant slowdown that is not shown
to exceed the tolerance is reported as ``slower`` and does not fail.  Lower is
better for both units (ns/op and lab instruction counts, instructions/op).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .schema import UNIT_INSTRUCTIONS, dig, unit_of
from .series import Series, bench_name, series_of_results
from .stats import ALPHA, StatsError, Verdict, compare_many, summarize_record

if TYPE_CHECKING:  # the store loads SQLAlchemy: only when a run reference is given
    from .store import Store

MISSING_POLICIES = ("warn", "fail")

# The verdicts of a row, in the order the summary names them.
REGRESSION = "regression"    # fails the gate
SLOWER = "slower"            # significantly slower, not shown to exceed the tolerance
IMPROVEMENT = "improvement"  # significantly faster: never fails
SAME = "~"                   # no difference shown
ERROR = "error"              # on both sides but cannot be judged (too few samples...)
MISSING = "missing"          # in the baseline, not judged in the current run
NEW = "new"                  # only in the current run: nothing to compare with


@dataclass(frozen=True)
class Side:
    """One side of a check: a stored run or a harness JSON-lines file."""

    label: str                          # "run 12", "base.jsonl"
    fingerprint: Mapping[str, Any] | None
    unit: str
    series: dict[str, Series]           # "suite/name" -> the ok results with figures
    unjudged: dict[str, str]            # "suite/name" -> why it has no figures ("skipped: ...")
    when: str | None = None             # "2026-11-23 18:14 UTC", when known
    state: str = "complete"             # a stored run's state; "interrupted" for a cut file

    @property
    def host(self) -> str:
        return str(dig(self.fingerprint, "host", "hostname") or "?")


def side_of(label: str, fingerprint: Mapping[str, Any] | None,
            results: Sequence[Mapping[str, Any]], when: str | None = None,
            state: str = "complete") -> Side:
    """A side from a run's fingerprint and result records."""
    series = {s.name: s for s in series_of_results(label, fingerprint, results)}
    unjudged: dict[str, str] = {}
    for record in results:
        name = bench_name(record)
        if name in series:
            continue
        status = record.get("status")
        if status != "ok":
            reason = record.get("reason")
            unjudged[name] = f"{status}: {reason}" if reason else str(status)
        else:
            unjudged[name] = "no figures"
            try:
                summarize_record(record)
            except StatsError as exc:
                unjudged[name] = f"no figures: {exc}"
    return Side(label=label, fingerprint=fingerprint, unit=unit_of(fingerprint, results),
                series=series, unjudged=unjudged, when=when, state=state)


def load_side(ref: str, open_store: Callable[[], Store]) -> Side:
    """The side ``ref`` names: a harness ``run --json`` file (an existing file, or ``-``),
    else a stored run reference (``Store.load_run``: id, ``latest``, ``latest~N``, a tag,
    ``latest@HOST``), told apart as ``kcross compare`` tells them."""
    from .compare import read_records

    found = read_records(ref, open_store)
    return side_of(found.label, found.fingerprint, found.results, when=found.when,
                   state=found.state)


@dataclass(frozen=True)
class Row:
    """One benchmark of the check."""

    name: str
    verdict: str                        # one of REGRESSION ... NEW
    base: Series | None
    current: Series | None
    compared: Verdict | None = None     # the statistics, when the benchmark could be judged
    note: str | None = None             # why it cannot be judged, or the verdict's note

    @property
    def fails(self) -> bool:
        return self.verdict == REGRESSION


@dataclass(frozen=True)
class Outcome:
    """The check of ``current`` against ``base``."""

    base: Side
    current: Side
    rows: list[Row]
    max_regression: float               # fraction: 0.05 for 5%
    alpha: float
    missing: str                        # "warn" or "fail"
    notes: list[str] = field(default_factory=list)

    @property
    def unit(self) -> str:
        return self.base.unit

    def count(self, verdict: str) -> int:
        return sum(row.verdict == verdict for row in self.rows)

    @property
    def failed(self) -> bool:
        """Any regression; with ``missing == "fail"`` also a baseline benchmark not judged."""
        if any(row.fails for row in self.rows):
            return True
        return self.missing == "fail" and any(row.verdict in (MISSING, ERROR) for row in self.rows)

    def summary(self) -> str:
        """The one-line result: what failed, or that nothing did."""
        tolerance = f"+{self.max_regression * 100:g}%"
        judged = sum(row.compared is not None for row in self.rows)
        counts = [f"{self.count(v)} {label}" for v, label in (
            (REGRESSION, "regression(s)"), (SLOWER, "slower within tolerance"),
            (IMPROVEMENT, "improvement(s)"), (SAME, "unchanged"), (ERROR, "not judged"),
            (MISSING, "missing"), (NEW, "new")) if self.count(v)]
        tail = f" ({', '.join(counts)}; {judged} compared)" if counts else ""
        if not self.failed:
            return f"PASS: no benchmark slower than {tolerance}{tail}"
        why = []
        if self.count(REGRESSION):
            why.append(f"{self.count(REGRESSION)} benchmark(s) slower than {tolerance}")
        unjudged = self.count(MISSING) + self.count(ERROR)
        if self.missing == "fail" and unjudged:
            why.append(f"{unjudged} baseline benchmark(s) not judged (--missing fail)")
        return f"FAIL: {'; '.join(why)}{tail}"


def classify(verdict: Verdict, max_regression: float) -> str:
    if not verdict.significant:
        return SAME
    if verdict.ratio < 1.0:
        return IMPROVEMENT
    if verdict.ratio_low > 1.0 + max_regression:
        return REGRESSION
    return SLOWER


def fingerprint_note(base: Side, current: Side) -> str | None:
    """A note when the two sides were measured on different machines or configurations,
    naming the fingerprint fields that differ (kcross compare's list of them)."""
    if base.fingerprint is None or current.fingerprint is None:
        return None
    from . import compare
    from .store.repo import machine_identity

    a, b = (machine_identity(dict(s.fingerprint)) for s in (base, current))  # type: ignore[arg-type]
    if a == b:
        return None
    fields = compare.fingerprint_differences(
        [compare.Side(s.label, (), False, s.fingerprint) for s in (base, current)])
    what = ", ".join(fields) or "other fingerprint fields"
    return (f"measured on different machines or configurations ({base.host} {a[:8]}, "
            f"{current.host} {b[:8]}); differing: {what}")


def check(base: Side, current: Side, *, max_regression: float, missing: str = "warn",
          alpha: float = ALPHA) -> Outcome:
    """Judge every benchmark of ``base`` and ``current``; :class:`UserError` when nothing can be."""
    if missing not in MISSING_POLICIES:
        raise UserError(f"--missing must be one of {', '.join(MISSING_POLICIES)}, not {missing!r}")
    if base.unit != current.unit:
        raise UserError(f"{base.label} is in {base.unit} and {current.label} in {current.unit}: "
                        "a lab's instruction counts and wall-clock times cannot be compared")
    names = list(base.series) + [n for n in base.unjudged if n not in base.series]
    names += [n for n in (*current.series, *current.unjudged) if n not in names]
    both = [n for n in names if n in base.series and n in current.series]
    if not both:
        raise UserError(f"{base.label} and {current.label} have no benchmark with figures in "
                        "common: nothing to check")
    verdicts = dict(zip(both, compare_many(
        [(base.series[n].samples, current.series[n].samples) for n in both], alpha=alpha),
        strict=True))
    rows = []
    for name in names:
        b, c = base.series.get(name), current.series.get(name)
        if b is not None and c is not None:
            found = verdicts[name]
            if isinstance(found, StatsError):
                rows.append(Row(name, ERROR, b, c, note=str(found)))
                continue
            note = found.note
            if b.overhead_subtracted != c.overhead_subtracted:
                note = "; ".join(filter(None, [note, "empty-loop overhead subtracted on one "
                                               "side only"]))
            rows.append(Row(name, classify(found, max_regression), b, c, found, note))
        elif b is None and c is None:
            continue  # neither side has figures: not a benchmark this check is about
        elif c is None:
            why = current.unjudged.get(name)
            rows.append(Row(name, MISSING, b, None,
                            note=f"{current.label}: {why}" if why else
                            f"not in {current.label}"))
        else:
            why = base.unjudged.get(name)
            rows.append(Row(name, NEW, None, c,
                            note=f"{base.label}: {why}" if why else f"not in {base.label}"))
    notes = [n for n in [fingerprint_note(base, current)] if n]
    notes += [f"{s.label} is not complete ({s.state}): the benchmarks it did not reach are "
              f"{'missing' if s is current else 'new'}" for s in (base, current)
              if s.state != "complete"]
    return Outcome(base=base, current=current, rows=rows, max_regression=max_regression,
                   alpha=alpha, missing=missing, notes=notes)


# --- output ------------------------------------------------------------------------------

COLUMNS = ("benchmark", "base", "current", "ratio", "CI of ratio", "p", "verdict", "note")


def format_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def cells(row: Row, unit: str) -> list[str]:
    """A row's cells, plain ASCII text (CI logs and patch mail)."""
    from .render import format_value

    def median(series: Series | None) -> str:
        if series is None:
            return "-"
        from .stats import median as median_of

        return format_value(median_of(series.samples), unit)

    v = row.compared
    if v is None:
        return [row.name, median(row.base), median(row.current), "-", "-", "-", row.verdict,
                row.note or ""]
    return [row.name, format_value(v.median_a, unit), format_value(v.median_b, unit),
            f"{v.ratio:.3f}", f"{v.ratio_low:.3f}-{v.ratio_high:.3f}", format_p(v.p_adjusted),
            row.verdict, row.note or ""]


def headers(outcome: Outcome) -> list[str]:
    conf = next((r.compared.confidence for r in outcome.rows if r.compared), 0.95)
    names = list(COLUMNS)
    names[1], names[2] = f"base {outcome.unit}", f"current {outcome.unit}"
    names[4] = f"{conf:.0%} CI of ratio"
    return names


def title(outcome: Outcome) -> str:
    def side(s: Side) -> str:
        return f"{s.label} ({s.host}{', ' + s.when if s.when else ''})"

    return (f"kcross check: {side(outcome.current)} against baseline {side(outcome.base)}; "
            f"fails on a slowdown shown to exceed +{outcome.max_regression * 100:g}%")


def legend(outcome: Outcome) -> list[str]:
    """What the columns mean and the notes, one line each."""
    compared = sum(r.compared is not None for r in outcome.rows)
    return [
        f"ratio = current/base median (>1: "
        f"{'more instructions' if outcome.unit == UNIT_INSTRUCTIONS else 'slower'}); "
        f"p = Mann-Whitney U, Holm-adjusted across "
        f"{compared} benchmark(s); significant when p < {outcome.alpha:g}",
        f"regression: significant and the CI's low end above "
        f"{1 + outcome.max_regression:.3f}; slower: significant, not shown beyond that",
        *outcome.notes,
    ]


def markdown(outcome: Outcome) -> str:
    """The check as GitHub-flavoured Markdown: a pull request comment."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    heads = headers(outcome)
    lines = [f"**{esc(outcome.summary())}**", "", esc(title(outcome)), "",
             "| " + " | ".join(heads) + " |",
             "|" + "|".join(":---" if i in (0, 6, 7) else "---:" for i in range(len(heads))) + "|"]
    for row in outcome.rows:
        texts = [esc(c) for c in cells(row, outcome.unit)]
        if row.fails:
            texts[6] = f"**{texts[6]}**"
        lines.append("| " + " | ".join(texts) + " |")
    lines.append("")
    lines += [f"- {esc(line)}" for line in legend(outcome)]
    return "\n".join(lines) + "\n"


def table(outcome: Outcome, *, ascii_only: bool) -> Any:
    """The check as a rich table: ASCII borders and no colour for a log or a mail."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    styles = {REGRESSION: "bold red", SLOWER: "yellow", IMPROVEMENT: "green", ERROR: "yellow",
              MISSING: "yellow", NEW: "cyan"}
    out = Table(box=box.ASCII if ascii_only else box.HEAVY_HEAD,
                header_style="" if ascii_only else "bold")
    for i, name in enumerate(headers(outcome)):
        out.add_column(name, justify="left" if i in (0, 6, 7) else "right",
                       overflow="fold")
    for row in outcome.rows:
        texts = cells(row, outcome.unit)
        style = "" if ascii_only else styles.get(row.verdict, "")
        out.add_row(*(Text(t, style=style if i == 6 else "") for i, t in enumerate(texts)))
    return out
