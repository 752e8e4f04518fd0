"""The view of a run (``kcross run``, ``kcross show``, a lab's run): its table, one row per
benchmark, and the footer that says how to read it.

Pure functions from records to renderables, shared by ``run`` and ``show`` so that a stored
run looks exactly like a live one.  Where a figure cannot be computed, the cell says why
(the :class:`StatsError` message) instead of showing a number or leaving it blank.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import fingerprint as fields
from ..schema import UNIT_NS, unit_of
from .fingerprint import forced_settings, lab_lines, mechanism_text, timer_text
from .table import FITS, RIGHT, RULES, Column, Drawn, Lines, Styled, Table
from .text import NONE, OVERHEAD_MARK, in_unit, interval, per_op, percent, share

if TYPE_CHECKING:  # only types: the statistics load numpy
    from rich.console import Console

    from ..stats import Summary

# kcross.stats (numpy) is imported by the functions that compute figures, so that the
# tables of stored runs, benchmarks and a fingerprint (`kcross runs`, `list`, `sysinfo`)
# load no numpy.

SHORT_EVENT = {"cycles": "cyc", "instructions": "ins", "branch-misses": "bmiss"}


HW_EVENTS = ("cycles:u", "cycles:k", "instructions:u", "instructions:k",
             "branch-misses:u", "branch-misses:k")


def _error(message: str, wide: bool = True) -> Styled:
    """Why a cell has no figure; folded into lines of 20 characters unless ``wide`` (the
    columns of figures are never wrapped: this keeps the table in its width)."""
    return Styled(message if wide else textwrap.fill(message, 20), style="yellow")


SW_EVENTS = (("context-switches", "csw"), ("cpu-migrations", "mig"), ("page-faults", "pf"))


SW_ALL = ("task-clock", *(event for event, _ in SW_EVENTS))


def _counters_cell(record: dict[str, Any]) -> str:
    """Every counter that could be opened, per operation (the header says so): the
    hardware ones (``cyc:k 812``), then the disturbance-related software ones
    (``csw 3.5e-5 mig 0 pf 0``).  The totals over all samples stay in the JSON."""
    parts = []
    for event in HW_EVENTS:
        counter = record["counters"].get(event)
        if counter is None or counter.get("per_op") is None:
            continue
        base, _, mode = event.partition(":")
        star = "*" if counter.get("scaled") else ""
        parts.append(f"{SHORT_EVENT.get(base, base)}:{mode} {per_op(counter['per_op'])}{star}")
    for event, short in SW_EVENTS:
        counter = record["counters"].get(event)
        if counter is not None and counter.get("per_op") is not None:
            parts.append(f"{short} {per_op(counter['per_op'])}")
    return " ".join(parts) or NONE


def switches_per_op(record: dict[str, Any]) -> float | None:
    """The context switches one iteration of ``record`` declares (result-format.md), or None."""
    value = record.get("switches_per_op")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _per_switch_cell(record: dict[str, Any], median: float, unit: str, wide: bool) -> str:
    """The median per switch; ``wide``: with what it was divided by and what the kernel
    counted, ``3,807 (op ÷ 2; counted 2.01)`` (a disagreement is flagged counts-mismatch)."""
    declared = switches_per_op(record)
    if declared is None:
        return NONE
    value = in_unit(median / declared, unit)
    if not wide:
        return value
    counted = record.get("switches_counted_per_op")
    seen = f"counted {counted:.3g}" if isinstance(counted, (int, float)) else "not counted"
    return f"{value} (op ÷ {declared:g}; {seen})"


def subtracted(figure: str, marked: bool) -> str:
    """A median's figure, marked (before it, so that the column's last digits stay in line)
    when the empty loop's overhead was subtracted from it."""
    return f"{OVERHEAD_MARK}{figure}" if marked else figure


def results_table(results: Sequence[dict[str, Any]], title: str | None = None,
                  unit: str | None = None, *, wide: bool = False) -> Table:
    """One row per benchmark: median, CI of the median (relative to it), spread, N,
    disturbed samples, status with the harness's flags (⚑); ``wide`` adds the minimum and
    the counters per op, and the reasons of skipped and failed rows (which
    :func:`run_footer` lists otherwise).  Without ``wide`` the table fits 120 columns.

    The median column names the unit (``median ns/op``, ``median instructions/op``):
    ``unit``, else the results' own.  A result in another unit (only in a database
    edited by hand: a stream never mixes them) carries its unit in its cells.  When a
    result declares context switches per op (``switches_per_op``), the op is a round
    trip and a ``per switch`` column beside the median shows the median divided by them.
    """
    from ..stats import StatsError, summarize_record

    unit = unit or unit_of(None, results)
    with_switches = any(switches_per_op(rec) for rec in results)

    def figure(header: str) -> Column:  # a column of figures: never wrapped
        return Column(header, RIGHT, wrap=False)

    columns = [Column("benchmark", wrap=False),
               figure(f"median {unit}\n(per op: round trip)" if wide and with_switches
                      else f"median\n{unit}")]
    if with_switches:
        columns.append(figure(f"per switch\n({unit.split('/')[0]}/switch)" if wide
                              else "per\nswitch"))
    columns.append(figure("CI95 of\nmedian, %"))
    if wide:
        columns.append(figure("min"))
    columns += [figure("spread"), figure("N"), figure("disturbed")]
    if wide:
        columns.append(Column("counters/op", wrap=False))
    # One flag per line; a flag too long for the last column ends in "…", never cut silently.
    columns.append(Column("status", wrap=not wide))
    table = Table(columns, title=title or "", frame=RULES, fits=None if wide else FITS)
    switch_dash = [NONE] * with_switches
    for rec in results:
        label = f"{rec['suite']}/{rec['name']}"
        if rec["status"] != "ok":
            style = "dim" if rec["status"] == "skipped" else "red"
            status = f"{rec['status']}: {rec['reason']}" if wide else rec["status"]
            table.add(label, NONE, *switch_dash, NONE, *([NONE] * wide), NONE,
                      str(len(rec["samples"])), NONE, *([NONE] * wide), Styled(status, style))
            continue
        samples = rec["samples"]
        disturbed = str(len(rec["disturbed"])) if rec["disturbed"] else "0"
        counters = [_counters_cell(rec)] if wide else []
        try:
            summary = summarize_record(rec)
        except StatsError as exc:
            table.add(label, _error(str(exc), wide), *switch_dash, NONE, *([NONE] * wide), NONE,
                      str(len(samples)), disturbed, *counters, "ok")
            continue
        try:
            ci_cell: str | Styled = relative_interval(summary.ci.low, summary.median,
                                                      summary.ci.high)
        except StatsError as exc:
            ci_cell = _error(str(exc), wide)
        try:
            spread_cell: str | Styled = share(summary.spread)
        except StatsError as exc:
            spread_cell = _error(str(exc), wide)
        own = rec.get("unit") or UNIT_NS
        suffix = "" if own == unit else f" {own}"
        median_cell = subtracted(in_unit(summary.median, own), summary.overhead.subtracted)
        median_cell += suffix
        flags = [f.get("flag", "?") for f in rec.get("flags") or []]
        status = Styled("ok " + "\n   ".join(f"⚑{name}" for name in flags) if flags else "ok",
                        "yellow" if flags else "")
        switch_cells = [_per_switch_cell(rec, summary.median, own, wide)] if with_switches else []
        minimum = [in_unit(summary.min, own) + suffix] if wide else []
        table.add(label, median_cell, *switch_cells, ci_cell, *minimum, spread_cell,
                  str(summary.n), disturbed, *counters, status)
    return table


def relative_interval(low: float, median: float, high: float) -> str:
    """A CI as percentages of its median, in a column that says so (``CI95 of median,
    %``): ``[-0.9, +2.5]``."""
    if not median:
        return NONE
    return interval(percent((low - median) / median * 100).removesuffix("%"),
                    percent((high - median) / median * 100).removesuffix("%"))


def _flags_text(results: Sequence[dict[str, Any]]) -> list[str]:
    """One line per flag the harness raised: what a reader must weigh (result-format.md)."""
    return [f"⚑ {rec['suite']}/{rec['name']} {flag.get('flag')}: {flag.get('detail')}"
            for rec in results for flag in rec.get("flags") or []]


def _join(items: Iterable[str]) -> str:
    return ", ".join(items) or "none"


def counters_measured(fingerprint: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
                      ) -> tuple[set[str], dict[str, str]]:
    """The counters a run's results carry, and those unavailable (never opened) with why."""
    opened: set[str] = set()
    missing: dict[str, str] = {}
    for rec in results:
        opened.update(rec.get("counters") or {})
        missing.update(rec.get("counters_unavailable") or {})
    if not results:  # nothing ran: fall back to what the fingerprint probed
        reasons = fields.PERF_REASONS.members(fingerprint)
        for group in (fields.PERF_HARDWARE, fields.PERF_SOFTWARE):
            for event, ok in group.members(fingerprint).items():
                if ok:
                    opened.add(event)
                else:
                    missing[event] = reasons.get(event) or "unavailable"
    return opened, {e: r for e, r in missing.items() if e not in opened}


def counters_unavailable(missing: Mapping[str, str]) -> list[tuple[list[str], str]]:
    """The unavailable counters grouped by their reason, each reason once:
    ``[(["cycles:k", ...], "not permitted (...)"), ...]``."""
    by_reason: dict[str, list[str]] = {}
    for event, reason in sorted(missing.items()):
        by_reason.setdefault(reason, []).append(event)
    return [(events, reason) for reason, events in by_reason.items()]


def _in_vm(fingerprint: Mapping[str, Any]) -> str | None:
    """The hypervisor that makes missing hardware counters normal, or None."""
    if fields.lab(fingerprint) is not None:
        return None   # the lab set the guest's counters aside itself, and its reason says why
    if fields.HYPERVISOR_FLAG.of(fingerprint):
        return str(fields.HYPERVISOR_TYPE.of(fingerprint) or "a hypervisor")
    return None


def _named(events: Iterable[str]) -> str:
    """Events for people: a whole group as its name (``hardware``, ``software``)."""
    rest = set(events)
    names = []
    for group, members in (("hardware", HW_EVENTS), ("software", SW_ALL)):
        if rest.issuperset(members):
            names.append(group)
            rest.difference_update(members)
    return _join([*names, *sorted(rest)])


def _counters_line(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]]) -> str:
    """One line: which counters were measured, which not, each reason once."""
    opened, missing = counters_measured(fingerprint, results)
    vm = _in_vm(fingerprint) if any(e in missing for e in HW_EVENTS) else None
    line = f"counters: {_named(opened)}"
    for events, reason in counters_unavailable(missing):
        # only where hardware counters alone are missing: a reason that hit the software
        # ones too (a permission) is not the hypervisor's
        normal = " (normal in a VM)" if vm and set(events) <= set(HW_EVENTS) else ""
        line += f"; {_named(events)} unavailable{normal}: {reason}"
    return line


def _counters_text(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]]) -> list[str]:
    """Which counters were measured; missing hardware counters are explained, not alarming."""
    opened, missing = counters_measured(fingerprint, results)
    lines = [f"counters measured: {_join(sorted(opened))}"]
    hw_missing = [e for e in HW_EVENTS if e in missing]
    if hw_missing:
        reasons = sorted({missing[e] for e in hw_missing})
        which = "all" if len(hw_missing) == len(HW_EVENTS) else _join(hw_missing)
        vm = _in_vm(fingerprint)
        lines.append(f"hardware counters unavailable ({which}): " + "; ".join(reasons)
                     + (f" (normal under {vm}: most VMs expose no PMU)" if vm else ""))
    other = sorted(e for e in missing if e not in HW_EVENTS)
    if other:
        lines.append("other counters unavailable: "
                     + "; ".join(f"{e}: {missing[e]}" for e in other))
    return lines


def _flags_line(results: Sequence[dict[str, Any]], details: str) -> str | None:
    """One line: how many benchmarks each flag was raised on (what they saw: ``details``)."""
    counts: dict[str, int] = {}
    for rec in results:
        for flag in rec.get("flags") or []:
            counts[str(flag.get("flag"))] = counts.get(str(flag.get("flag")), 0) + 1
    if not counts:
        return None
    listed = "; ".join(f"{flag} on {n} benchmark{'s' * (n != 1)}" for flag, n in counts.items())
    return f"⚑ {listed} (what the harness saw: {details})"


def _not_ok_lines(results: Sequence[dict[str, Any]], details: str) -> list[str]:
    """Each failed benchmark with its reason; the skipped ones counted (why: ``details``)."""
    lines = [f"{rec['suite']}/{rec['name']} failed: {rec['reason']}"
             for rec in results if rec["status"] == "failed"]
    skipped = sum(rec["status"] == "skipped" for rec in results)
    if skipped:
        lines.append(f"skipped: {skipped} benchmark{'s' * (skipped != 1)} this machine cannot "
                     f"run (why: {details}, or kcross list)")
    return lines


def _summaries(results: Sequence[dict[str, Any]]) -> list[Summary]:
    """The summaries of the results that have figures (the table says why the others lack them)."""
    from ..stats import StatsError, summarize_record

    summaries = []
    for rec in results:
        if rec["status"] == "ok":
            try:
                summaries.append(summarize_record(rec))
            except StatsError:
                pass
    return summaries


def _overhead_text(summaries: Sequence[Summary], unit: str = UNIT_NS, wide: bool = True) -> str:
    """One line: the empty-loop cost range and where it was subtracted (each benchmark's
    decision follows the statistics rule; see kcross.stats)."""
    from ..stats import SUBTRACTED

    measured = [s.overhead for s in summaries if s.overhead.median is not None]
    if not measured:
        return "overhead: no measured benchmark"
    values = sorted(o.median for o in measured if o.median is not None)
    span = interval(in_unit(values[0], unit), in_unit(values[-1], unit))
    subtracted = sum(1 for o in measured if o.subtracted)
    if not wide:
        return (f"{OVERHEAD_MARK} the empty loop ({span} {unit}) subtracted from {subtracted} of "
                f"{len(measured)} medians (where over the noise, under half the median)")
    text = (f"overhead: empty loop {span} {unit} (median); subtracted ({OVERHEAD_MARK}) for "
            f"{subtracted} of {len(measured)} benchmarks, where it exceeded the benchmark's "
            "noise (IQR/2) and was less than half its median")
    others = sorted({o.reason for o in measured if not o.subtracted and o.reason
                     and o.reason != SUBTRACTED})
    if others and all(r in _DECISIONS for r in others):
        text += f"; not subtracted elsewhere ({', or '.join(others)})"
    return text


_DECISIONS = ("within the noise", "half the median or more")


SHOW_WIDE = "kcross show RUN --wide"


def run_footer(fingerprint: dict[str, Any], results: Sequence[dict[str, Any]], *,
               wide: bool = False, details: str = SHOW_WIDE) -> Lines:
    """The context needed to read the numbers: emulation (a lab run), mechanism, timer,
    counters, overhead, flags, CI.  Without ``wide`` each is one short line, and the
    flags' details and the skipped benchmarks' reasons are left to ``details`` (the
    command that shows them: ``kcross show 12 --wide``)."""
    from ..stats import StatsError

    mech = f"syscall mechanism: {mechanism_text(fingerprint, results)}"
    summaries = _summaries(results)
    forced = forced_settings(fingerprint)
    if forced:
        mech += "; forced by the environment: " + _join(forced)
    lines = [*lab_lines(fingerprint), mech, f"timer: {timer_text(fingerprint)}"]
    overhead = _overhead_text(summaries, unit_of(fingerprint, results), wide)
    if wide:
        lines += [*_counters_text(fingerprint, results), overhead, *_flags_text(results)]
    else:
        flags = _flags_line(results, details)
        lines += [_counters_line(fingerprint, results), overhead,
                  *([flags] if flags else []), *_not_ok_lines(results, details)]
        declared = sorted({d for d in map(switches_per_op, results) if d is not None})
        if declared:
            lines.append(f"per switch: the median ÷ the context switches its op makes by design "
                         f"({_join(f'{d:g}' for d in declared)}: the op is a round trip)")
    lines.append(counted_line(results))
    coverage = []
    for summary in summaries:
        try:
            coverage.append(summary.ci.confidence)
        except StatsError:
            pass  # the table cell already says why this row has no interval
    processes = sorted({s.ci.processes for s in summaries if _has_ci(s)})
    if processes and processes[-1] > 1:
        k = interval(str(processes[0]), str(processes[-1]))
        lines.append(f"CI95: Student's t over the {k} processes' medians (one observation "
                     "each); spread = IQR/median of all samples")
    elif coverage:
        lines.append("CI95: distribution-free order-statistic interval of the median, "
                     f"achieved coverage {interval(share(min(coverage)), share(max(coverage)))}; "
                     "spread = IQR/median")
    return Lines(lines, style="dim")


def counted_line(results: Sequence[dict[str, Any]]) -> str:
    """What the N and disturbed columns count (result-format.md, ``disturbed``: a CPU
    migration or an involuntary context switch, a preemption, during the sample)."""
    k = max((int(r.get("processes") or 1) for r in results), default=1)
    of = f" (all {k} processes')" if k > 1 else ""
    return (f"N: samples{of}; disturbed: those a CPU migration or a preemption hit (kept in the "
            "figures)")


def _has_ci(summary: Summary) -> bool:
    from ..stats import StatsError

    try:
        return summary.ci is not None
    except StatsError:
        return False


def print_run(console: Console, results: Sequence[dict[str, Any]], fingerprint: dict[str, Any],
              *, title: str, wide: bool = False, run_id: int | None = None,
              unit: str | None = None) -> None:
    """A run's table and footer, as ``kcross run`` and ``kcross show`` print it.

    Without ``wide`` the table and the footer's lines fit :data:`FITS` columns (or the
    console, if narrower), piped too; ``wide`` prints the full table at its natural width,
    however wide (for ``less -S``), never squeezed, and the footer's details.
    """
    table = results_table(results, title=title, unit=unit, wide=wide)
    width = console.width if wide else min(console.width, FITS)
    if table.title:
        console.print(Lines([table.title]), width=width)
    console.print(Drawn(table, natural=wide), crop=not wide)
    details = SHOW_WIDE if run_id is None else f"kcross show {run_id} --wide"
    console.print(run_footer(fingerprint, results, wide=wide, details=details), width=width)

