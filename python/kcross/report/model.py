"""What the HTML report shows, computed from stored runs: every figure as display text.

The template only lays out what is built here; the plots (:mod:`.plots`) take the
same objects.  Every figure comes from :mod:`kcross.stats` (summaries, verdicts,
geomean) and every sample series from :mod:`kcross.series`; where a figure cannot
be given, the cell holds the reason, as ``kcross show`` does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .. import fingerprint as fields
from ..fingerprint import identity
from ..schema import LAB_COUNTING, UNIT_INSTRUCTIONS, unit_of
from ..series import Series, bench_name, merge_results, process_count, series_of_results
from ..stats import StatsError, Summary, summarize_record

# kcross show's wording of the same fields, and kcross's vocabulary: one wording for both
from ..views.fingerprint import (
    active_mitigations,
    forced_settings,
    harness_text,
    hypervisor_text,
    lab_rows,
    libc_text,
    mechanism_text,
    timer_text,
    unknown_rows,
    value,
    values,
)
from ..views.run import (
    HW_EVENTS,
    SHORT_EVENT,
    SW_EVENTS,
    counters_measured,
    counters_unavailable,
    subtracted,
)
from ..views.text import NONE as DASH
from ..views.text import in_unit, interval, p_text, per_op, plus_minus, ratio, share, shown_value

if TYPE_CHECKING:  # a type only: the store imports SQLAlchemy
    from ..judge.comparison import NoiseLookup
    from ..judge.verdict import Judgement
    from ..sides import Side
    from ..store import StoredRun

# A thread-sweep row's name ends in its thread multiplier (harness/bench/percpu.c:
# counter-rseq-x1, -xN, -x2N): rows of one suite that differ only there form a sweep.
_SWEEP_SUFFIX = re.compile(r"-x(\d*N|\d+)$")


@dataclass(eq=False)   # a run is itself: compared and hashed by identity
class RunView:
    """One run as the report shows it."""

    run: StoredRun
    label: str                 # "run 12"
    unit: str
    summaries: dict[str, Summary | str]   # "suite/name" of ok results: summary, or why none
    series: dict[str, Series]  # "suite/name" -> the samples compared and plotted
    tags: tuple[str, ...] = ()  # the store's tags naming the run

    @property
    def fingerprint(self) -> dict[str, Any]:
        return self.run.fingerprint

    @property
    def side(self) -> Side:
        """The run as a side of a comparison (kcross.judge.comparison)."""
        from ..sides import Side

        return Side(label=self.label, series=tuple(self.series.values()), single=False,
                    fingerprint=self.fingerprint, unit=self.unit)

    @property
    def lab(self) -> Mapping[str, Any] | None:
        return fields.lab(self.fingerprint)

    @property
    def arch(self) -> str:
        return str(fields.ARCH.of(self.fingerprint) or "?")

    @property
    def host(self) -> str:
        """The machine's name: its hostname, or for a lab run "lab" (a guest has none)."""
        if self.lab is not None:
            return "lab"
        return str(fields.HOSTNAME.of(self.fingerprint) or "?")

    @property
    def cpu(self) -> str:
        return str(fields.CPU_MODEL.of(self.fingerprint) or "unknown CPU")

    @cached_property
    def results(self) -> list[dict[str, Any]]:
        """One record per benchmark, a run of several processes' merged (kcross.series): the
        page counts, tabulates and flags benchmarks of the run, not harness records."""
        return merge_results(self.run.results)

    @property
    def processes(self) -> int:
        return process_count(self.run.results)

    @property
    def kernel(self) -> str | None:
        """A lab run's kernel, as its axis is labelled (``sid 7.2.13-1``); None for a real
        machine's run."""
        return fields.kernel_label(self.fingerprint)

    @property
    def short(self) -> str:
        """The run's label with what tells it apart in a legend: its host, or its lab arch
        and kernel."""
        if self.lab is not None:
            variant = fields.LAB_VARIANT.of(self.fingerprint)
            return f"{self.label} · lab {self.arch} {self.kernel}" + \
                (f" {variant}" if variant else "")
        host = fields.HOSTNAME.of(self.fingerprint)
        return f"{self.label} · {host}" if host else self.label


def run_view(run: StoredRun, tags: Sequence[str] = ()) -> RunView:
    label = f"run {run.id}"
    summaries: dict[str, Summary | str] = {}
    for rec in merge_results(run.results):
        if rec["status"] != "ok":
            continue
        try:
            summaries[bench_name(rec)] = summarize_record(rec)
        except StatsError as exc:
            summaries[bench_name(rec)] = str(exc)
    series = {s.name: s for s in series_of_results(label, run.fingerprint, run.results)}
    return RunView(run=run, label=label, unit=unit_of(run.fingerprint, run.results),
                   summaries=summaries, series=series, tags=tuple(tags))


# --- fingerprints ------------------------------------------------------------------------

@dataclass
class FactRow:
    """One fingerprint field, one cell per run; ``differs`` when the runs disagree."""

    key: str
    cells: list[str]
    differs: bool


@dataclass
class FactGroup:
    title: str
    rows: list[FactRow]


def _virtualization(fp: Mapping[str, Any]) -> str:
    return "emulated (lab)" if fields.lab(fp) is not None else hypervisor_text(fp)


def _mitigations(fp: Mapping[str, Any]) -> str:
    active = active_mitigations(fp)
    if active is None:
        return DASH
    return "; ".join(active) or "none reported"


def _counters_measured(view: RunView) -> tuple[str, str]:
    """The counters the run's results carry, and those unavailable with their reasons."""
    opened, gone = counters_measured(view.fingerprint, view.results)
    unavailable = "; ".join(f"{', '.join(events)}: {reason}"
                            for events, reason in counters_unavailable(gone))
    return ", ".join(sorted(opened)) or "none", unavailable or "none"


def _samples(view: RunView) -> str:
    """The samples each benchmark took: the plan's, in each of the run's processes."""
    samples = shown_value((view.run.plan or {}).get("samples"))
    k = view.processes
    return samples if k < 2 or samples == DASH else f"{samples} in each of {k} processes"


# The fact that names the harness that measured: not the machine's (a new build measures
# the same machine), yet what measured: flagged where runs differ in it, of one machine too.
HARNESS = "kcross-harness"


def _facts(view: RunView) -> dict[str, dict[str, str]]:
    fp = view.fingerprint
    run = view.run
    f = fields
    measured, unavailable = _counters_measured(view)
    facts: dict[str, dict[str, str]] = {
        "Run": {
            "started (UTC)": run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            "status": run.state or run.status,
            "source": run.source,
            "unit": view.unit,
            "benchmarks": f"{sum(r['status'] == 'ok' for r in view.results)} ok, "
                       f"{sum(r['status'] == 'skipped' for r in view.results)} skipped, "
                       f"{sum(r['status'] == 'failed' for r in view.results)} failed",
            "samples per benchmark": _samples(view),
            HARNESS: harness_text(fp) or DASH,
        },
        "Machine": {
            "host": value(fp, f.HOSTNAME),
            "arch": value(fp, f.ARCH),
            "CPU": value(fp, f.CPU_MODEL),
            "microcode": value(fp, f.CPU_MICROCODE),
            "CPUs online": value(fp, f.CPU_ONLINE),
            "virtualization": _virtualization(fp),
            "SMT control / active": values(fp, f.SMT_CONTROL, f.SMT_ACTIVE),
            "governor / driver": values(fp, f.GOVERNOR, f.FREQUENCY_DRIVER),
            "isolcpus / nohz_full": values(fp, f.ISOLCPUS, f.NOHZ_FULL),
        },
        "Kernel": {
            "release": value(fp, f.KERNEL_RELEASE),
            "command line": value(fp, f.KERNEL_CMDLINE),
            "mitigations": _mitigations(fp),
            "libc": libc_text(fp),
        },
        "Measurement": {
            "syscall mechanism": mechanism_text(fp, view.results),
            "forced by the environment": ", ".join(forced_settings(fp)) or "nothing",
            "timer": timer_text(fp),
            "counters measured": measured,
            "counters unavailable": unavailable,
            "perf_event_paranoid": value(fp, f.PERF_PARANOID),
        },
    }
    if view.lab is not None:
        facts["Lab"] = dict(lab_rows(fp, whole=False))
    unknown = unknown_rows(fp)
    if unknown:
        facts["Fields this kcross does not know"] = dict(unknown)
    return facts


def fingerprint_groups(views: Sequence[RunView]) -> list[FactGroup]:
    """The runs' fingerprints side by side, grouped; a group only one run has shows dashes elsewhere."""
    per_run = [_facts(v) for v in views]
    titles: list[str] = []
    for facts in per_run:
        titles += [t for t in facts if t not in titles]
    # Which facts differ is flagged only between runs of different machine configurations
    # (kcross.fingerprint's identity) or, of one lab machine, kernels: one configuration's
    # runs differ in per-run values only (the timer's calibration, the time), which are not
    # differences of the machine.
    machines = len({(identity(v.fingerprint), v.kernel) for v in views})
    groups = []
    for title in titles:
        keys: list[str] = []
        for facts in per_run:
            keys += [k for k in facts.get(title, {}) if k not in keys]
        rows = []
        for key in keys:
            cells = [facts.get(title, {}).get(key, DASH) for facts in per_run]
            # a run's own facts (when, which status) differ by nature: not flagged; the
            # harness that measured, whenever it differs
            rows.append(FactRow(key, cells, differs=len(set(cells)) > 1 and (
                key == HARNESS or (machines > 1 and title != "Run"))))
        groups.append(FactGroup(title, rows))
    return groups


# --- per-suite tables --------------------------------------------------------------------

@dataclass
class ResultRow:
    bench: str
    run: str                   # the run's label
    status: str                # "ok", or "skipped: reason" / "failed: reason"
    status_class: str          # ok / skipped / failed
    cells: dict[str, str]      # column name -> text
    error: str | None = None   # why the figures are missing (ok result, StatsError)
    flags: list[str] = field(default_factory=list)


@dataclass
class SuiteTable:
    suite: str
    anchor: str
    columns: list[str]         # besides benchmark, run and status
    rows: list[ResultRow]
    units: list[str]
    plots: list[tuple[str, str]] = field(default_factory=list)  # (caption, inline SVG)


def _hw_column(event: str) -> str:
    """cycles:k -> cyc:k/op"""
    base, _, mode = event.partition(":")
    return f"{SHORT_EVENT.get(base, base)}:{mode}/op"


def _counter_cells(rec: dict[str, Any]) -> dict[str, str]:
    cells: dict[str, str] = {}
    counters = rec.get("counters") or {}
    for event in HW_EVENTS:
        counter = counters.get(event)
        if counter is None or counter.get("per_op") is None:
            continue
        star = "*" if counter.get("scaled") else ""
        cells[_hw_column(event)] = f"{per_op(counter['per_op'])}{star}"
    for event, short in SW_EVENTS:
        counter = counters.get(event)
        if counter is not None and counter.get("total") is not None:
            cells[short] = str(counter["total"])
    return cells


def _si(value: float) -> str:
    """A rate in three significant digits with its SI prefix: 27.3k, 7.66M, 3.00G."""
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor * 0.9995:       # 999.9 rounds to 1.00k, not 1.00e+03
            return f"{value / factor:#.3g}{prefix}"
    return f"{value:#.3g}"


def _result_row(view: RunView, rec: dict[str, Any]) -> ResultRow:
    status = rec["status"]
    own = rec.get("unit") or view.unit
    if status != "ok":
        return ResultRow(rec["name"], view.label, f"{status}: {rec.get('reason')}", status, {})
    cells: dict[str, str] = {}
    summary = view.summaries.get(bench_name(rec))
    error = None
    flags = [str(f.get("flag")) for f in rec.get("flags") or []]   # details: the Warnings
    if isinstance(summary, Summary):
        cells["median"] = subtracted(in_unit(summary.median, own), summary.overhead.subtracted)
        try:
            ci = summary.ci
            cells["CI95 of median"] = interval(in_unit(ci.low, own), in_unit(ci.high, own))
        except StatsError as exc:
            cells["CI95 of median"] = str(exc)
        cells["min"] = in_unit(summary.min, own)
        try:
            cells["spread"] = share(summary.spread)
        except StatsError as exc:
            cells["spread"] = str(exc)
        cells["n"] = str(summary.n)
        per = rec.get("switches_per_op")
        if isinstance(per, (int, float)) and per > 0:
            counted = rec.get("switches_counted_per_op")
            seen = f"counted {counted:.3g}" if isinstance(counted, (int, float)) else "not counted"
            cells["per switch"] = f"{in_unit(summary.median / per, own)} (÷{per:g}; {seen})"
    else:
        error = summary or "no figures"
        cells["n"] = str(len(rec.get("samples") or []))
    threads = rec.get("threads")
    if isinstance(threads, int) and threads > 1:
        cells["threads"] = str(threads)
    tput = rec.get("throughput_ops_per_s")
    if isinstance(tput, (int, float)) and tput > 0 and own != UNIT_INSTRUCTIONS:
        cells["ops/s"] = _si(tput)
    aborts = rec.get("aborts_per_million")
    if isinstance(aborts, (int, float)):
        cells["aborts/M"] = f"{aborts:.3g}"
    cells["disturbed"] = str(len(rec.get("disturbed") or []))
    cells.update(_counter_cells(rec))
    cells["unit"] = own          # shown only in a table of several units (suite_tables)
    return ResultRow(rec["name"], view.label, "ok", "ok", cells, error=error, flags=flags)


_COLUMN_ORDER = ("median", "per switch", "CI95 of median", "min", "spread", "n", "unit",
                 "threads", "ops/s", "aborts/M", "disturbed",
                 *(_hw_column(e) for e in HW_EVENTS), *(short for _, short in SW_EVENTS))


def anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def suite_tables(views: Sequence[RunView]) -> list[SuiteTable]:
    """One table per suite, its benchmarks in run order, one row per run that has them."""
    order: dict[str, list[str]] = {}
    for view in views:
        for rec in view.results:
            names = order.setdefault(rec["suite"], [])
            if rec["name"] not in names:
                names.append(rec["name"])
    by_key = {(v.label, r["suite"], r["name"]): r for v in views for r in v.results}
    tables = []
    for suite, names in order.items():
        rows = []
        units: list[str] = []
        for name in names:
            for view in views:
                found = by_key.get((view.label, suite, name))
                if found is None:
                    continue
                rows.append(_result_row(view, found))
                unit = found.get("unit") or view.unit
                if unit not in units:
                    units.append(unit)
        if len(units) == 1:
            for row in rows:
                row.cells.pop("unit", None)
        present = {c for row in rows for c in row.cells}
        columns = [c for c in _COLUMN_ORDER if c in present]
        tables.append(SuiteTable(suite, f"suite-{anchor(suite)}", columns, rows, units))
    return tables


# --- comparisons -------------------------------------------------------------------------

@dataclass
class SectionRow:
    """One benchmark of a comparison section, as display text (and its judgement)."""

    bench: str
    base: str                  # base median
    new: str
    ratio: str
    ci: str
    p: str
    verdict: str               # "slower", "faster", "~", or the reason there is none
    verdict_class: str         # slower / faster / same / none
    value: Judgement | None = None


@dataclass
class ComparisonSection:
    """The page's section comparing one run with its base (kcross.judge.comparison's
    result, as display text)."""

    base: RunView
    new: RunView
    anchor: str
    rows: list[SectionRow]
    geomean: str
    note: str = ""             # why nothing was compared, or what to keep in mind
    plot: str | None = None
    # What the page opens with: the counts by verdict, the changes (largest first), the
    # noisiest rows (the largest change they could miss) and what the verdicts saw.
    counts: str = ""
    changed: list[str] = field(default_factory=list)
    shares: list[str] = field(default_factory=list)   # rows moved by the timer's share
    noisy: list[str] = field(default_factory=list)
    sees: list[str] = field(default_factory=list)


def compare_runs(base: RunView, new: RunView,
                 noise: NoiseLookup | None = None) -> ComparisonSection:
    """``new`` against ``base`` on every benchmark both have figures for, judged by
    kcross.judge as 'kcross compare' judges them (Holm across them)."""
    from ..errors import UserError
    from ..judge.categories import CSS_CLASS
    from ..judge.comparison import compare
    from ..judge.machine import differences_line
    from ..judge.pairing import NothingToCompare
    from ..judge.verdict import EXACT
    from ..views.verdict import words

    where = f"cmp-{base.run.id}-{new.run.id}"
    try:
        compared = compare([base.side, new.side], noise=noise, refuse_values=False)
    except NothingToCompare:
        return ComparisonSection(base, new, where, [], DASH,
                                 note="no benchmark with figures in both runs")
    except UserError as exc:   # in different units
        return ComparisonSection(base, new, where, [], DASH, note=f"not compared: {exc}")
    rows = []
    for row in compared.rows:
        name, j, base_series = row.name, row.judgements[1], row.series[0]
        assert j is not None and base_series is not None
        unit = base_series.unit
        b_med = base.summaries.get(name)
        n_med = new.summaries.get(name)
        b_text = in_unit(b_med.median, unit) if isinstance(b_med, Summary) else DASH
        n_text = in_unit(n_med.median, unit) if isinstance(n_med, Summary) else DASH
        if j.error is not None:
            rows.append(SectionRow(name, b_text, n_text, DASH, DASH, DASH, j.error, "none"))
            continue
        word = words(j) + (f"; {j.note}" if j.note else "")
        exact = j.method == EXACT
        shown = DASH if j.ratio is None else ratio(j.ratio)
        ci = "exact" if exact or j.ratio_low is None or j.ratio_high is None else \
            interval(ratio(j.ratio_low), ratio(j.ratio_high))
        p = "no p (exact)" if j.p_adjusted is None else \
            f"{p_text(j.p_adjusted)}, n={j.n_a}+{j.n_b}"
        rows.append(SectionRow(name, b_text, n_text, shown, ci, p, word,
                               CSS_CLASS[j.category], j))
    gm_value = compared.geomeans[1]
    gm = ratio(gm_value) if gm_value is not None else DASH
    line = differences_line([base.fingerprint, new.fingerprint])
    note = line.replace("the sides'", "the runs'") if line else ""
    return ComparisonSection(base, new, where, rows, gm, note=note,
                             **headline(compared.judgements))


# The rows a reader is shown first, at most.
HEADLINE_ROWS = 6
# A timing that could miss a change this large is "noisy" in the page's opening.
NOISY = 0.05


def headline(judged: Sequence[Judgement]) -> dict[str, Any]:
    """What a comparison's opening says: how many rows fall in each category, the changes
    largest first (a move by the timer's share is none: said apart), the rows that could
    miss the largest changes, what the verdicts saw."""
    from ..judge.categories import SUMMARY_ORDER, counted
    from ..views.verdict import seeing_lines, timer_share_lines, words

    unit = judged[0].unit if judged else ""
    counts = ", ".join(counted(c, n, unit) for c in SUMMARY_ORDER
                       if (n := sum(j.category is c for j in judged)))
    changed = sorted((j for j in judged if j.category.changed),
                     key=lambda j: -abs(math.log(j.ratio)) if j.ratio else 0.0)
    noisy = sorted((j for j in judged if j.detectable is not None and j.detectable > NOISY),
                   key=lambda j: -(j.detectable or 0.0))
    return {"counts": counts,
            "changed": [f"{j.name}: {words(j)}" for j in changed[:HEADLINE_ROWS]]
            + ([f"and {len(changed) - HEADLINE_ROWS} more"] if len(changed) > HEADLINE_ROWS
               else []),
            "shares": timer_share_lines(judged),
            "noisy": [f"{j.name} (could miss {plus_minus(share(j.detectable or 0))})"
                      for j in noisy[:HEADLINE_ROWS]],
            "sees": seeing_lines(judged)}


def comparisons(views: Sequence[RunView],
                noise: NoiseLookup | None = None) -> list[ComparisonSection]:
    """Every run against the first run given in its unit (its base): times with times,
    instruction counts with instruction counts; but a lab machine's runs with several
    kernels (:func:`release_series`) step along them: each against the run before it."""
    several = several_kernels(views)
    bases: dict[str, RunView] = {}
    before: dict[str, RunView] = {}
    found = []
    for view in views:
        base = bases.setdefault(view.unit, view)
        machine = identity(view.fingerprint)
        if machine in several and machine in before:
            found.append(compare_runs(before[machine], view, noise))
        elif base is not view:
            found.append(compare_runs(base, view, noise))
        if machine in several:
            before[machine] = view
    return found


def several_kernels(views: Sequence[RunView]) -> set[str]:
    """The lab machines (identities) the views show with several kernels."""
    return fields.several_kernels(v.fingerprint for v in views)


def release_series(views: Sequence[RunView]) -> list[RunView]:
    """The views with each lab machine's runs in its kernels' order (oldest kernel first,
    then as given) at the places they take: a lab machine shown with several kernels is a
    release series, each step judged exactly (:func:`comparisons`)."""
    return fields.release_series(views, lambda v: v.fingerprint)


# --- thread sweeps -----------------------------------------------------------------------

@dataclass
class SweepPoint:
    name: str                  # the row's own name (counter-rseq-xN)
    multiplier: str            # x1, xN, x2N
    threads: int
    median: float | None       # per op, as each thread sees it
    throughput: float | None   # ops/s of all threads together


@dataclass
class Sweep:
    suite: str
    base: str                  # the name without the multiplier (counter-rseq)
    run: RunView
    points: list[SweepPoint]


def sweeps(views: Sequence[RunView]) -> list[Sweep]:
    """Rows of one suite that differ only in the thread multiplier, with 2+ thread counts."""
    found = []
    for view in views:
        groups: dict[tuple[str, str], list[SweepPoint]] = {}
        for rec in view.results:
            match = _SWEEP_SUFFIX.search(rec["name"])
            threads = rec.get("threads")
            if match is None or rec["status"] != "ok" or not isinstance(threads, int):
                continue
            summary = view.summaries.get(bench_name(rec))
            tput = rec.get("throughput_ops_per_s")
            if (rec.get("unit") or view.unit) == UNIT_INSTRUCTIONS:
                tput = None      # a guest's clock counts instructions: no throughput
            groups.setdefault((rec["suite"], rec["name"][:match.start()]), []).append(SweepPoint(
                rec["name"], f"x{match.group(1)}", threads,
                summary.median if isinstance(summary, Summary) else None,
                float(tput) if isinstance(tput, (int, float)) and tput > 0 else None))
        for (suite, base), points in groups.items():
            if len({p.threads for p in points}) >= 2:
                found.append(Sweep(suite, base, view, sorted(points, key=lambda p: p.threads)))
    return found


# --- labs by arch ------------------------------------------------------------------------

@dataclass
class LabTable:
    columns: list[str]         # one per lab run: "ppc64le (run 3)"
    runs: list[RunView]
    rows: list[tuple[str, list[str]]]   # suite/name, the median per column (or a dash)
    medians: dict[str, list[float | None]]
    plot: str | None = None


def is_counting_lab(view: RunView) -> bool:
    lab = view.lab
    return lab is not None and lab.get("mode") == LAB_COUNTING


def lab_table(views: Sequence[RunView]) -> LabTable | None:
    """The counted lab runs' medians (instructions/op) side by side, by arch."""
    labs = [v for v in views if is_counting_lab(v)]
    if not labs:
        return None
    columns = []
    kernels = len({v.kernel for v in labs}) > 1    # then each column names its kernel
    for view in labs:
        lab = view.lab or {}
        extra = [str(lab["variant"])] if lab.get("variant") else []
        if kernels:
            extra.insert(0, str(view.kernel))
        columns.append(" ".join([view.arch, *extra, f"({view.label})"]))
    names: list[str] = []
    for view in labs:
        names += [n for n in view.series if n not in names]
    rows = []
    medians: dict[str, list[float | None]] = {}
    for name in names:
        values: list[float | None] = []
        for view in labs:
            summary = view.summaries.get(name)
            values.append(summary.median if isinstance(summary, Summary) else None)
        medians[name] = values
        rows.append((name, [DASH if v is None else in_unit(v, UNIT_INSTRUCTIONS)
                            for v in values]))
    return LabTable(columns, labs, rows, medians)
