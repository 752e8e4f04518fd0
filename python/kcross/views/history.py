"""The views of ``kcross history``: one table per benchmark, the machine's run-to-run
noise under it, and the plot (matplotlib)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from .. import outfile
from ..errors import UserError, shown
from ..history.trend import Point, Trend, TrendRow
from ..judge.categories import DETECTABLE_RULE, EXACT_RULE, STYLE, TIMING_RULE
from ..judge.verdict import RunNoise, noise_runs, record
from ..stats import MedianCI, StatsError
from .table import LEFT, RIGHT, Column, Styled, Table
from .text import (
    NONE,
    change_percent,
    counted,
    in_unit,
    interval,
    machine_hash,
    p_text,
    runs_listed,
    with_interval,
)
from .verdict import detectable_text, words

PLOT_FORMATS = ("svg", "png")
VERDICT = 10


def cells(row: TrendRow, unit: str | None) -> list[str]:
    """A row's cells, plain text; ``unit`` None: the values carry their own unit."""
    p = row.point
    own = p.unit if unit is None else None

    def value(x: float) -> str:
        return in_unit(x, p.unit) + (f" {own}" if own else "")

    median = value(p.median) if p.median is not None else NONE
    ci = p.ci
    ci_text = NONE if ci is None else (str(ci) if isinstance(ci, StatsError) else
                                       interval(in_unit(ci.low, p.unit), in_unit(ci.high, p.unit)))
    change, p_cell, detectable = NONE, NONE, NONE
    j = row.change
    if j is not None and j.error is None:
        if j.ratio is not None and j.ratio_low is not None and j.ratio_high is not None:
            change = with_interval(change_percent(j.ratio), change_percent(j.ratio_low),
                                   change_percent(j.ratio_high))
        else:
            change = words(j)
        p_cell = NONE if j.p_adjusted is None else p_text(j.p_adjusted)
        detectable = detectable_text(j)
    elif j is not None:
        change = str(j.error)
    against = f"run {row.previous.run_id}" if row.previous is not None else NONE
    return [str(p.run_id), p.started_at.strftime("%Y-%m-%d %H:%M"), p.host_label, p.kernel,
            median, ci_text, against, change, p_cell, detectable, row.verdict, row.note or ""]


def headers(t: Trend) -> tuple[list[str], str | None]:
    unit = t.units[0] if len(t.units) == 1 else None
    unit_text = f" {unit}" if unit else ""
    return (["run", "started (UTC)", "machine", "kernel", f"median{unit_text}", "95% CI",
             "vs", "change [95% CI]", "p", "detectable", "verdict", "note"], unit)


def tables(t: Trend) -> list[Table]:
    """One table per benchmark (its name the title), the machine's run-to-run noise as its
    notes."""
    names, unit = headers(t)
    found = []
    for bench in t.names:
        out = Table([Column(name, RIGHT if i in (0, 4, 8, 9) else LEFT)
                     for i, name in enumerate(names)], title=bench)
        for row in t.rows:
            if row.point.name != bench:
                continue
            texts: list[str | Styled] = list(cells(row, unit))
            category = row.category
            texts[VERDICT] = Styled(str(texts[VERDICT]),
                                    "" if category is None else STYLE.get(category, ""))
            out.add(*texts)
        out.notes = noise_lines(t, bench)
        found.append(out)
    return found


def noise_lines(t: Trend, bench: str) -> list[str]:
    """The run-to-run noise of ``bench`` on each machine shown: what a change must exceed."""
    lines = []
    for n in t.noise:
        if n.name != bench:
            continue
        where = f"{n.hostname} {machine_hash(n.machine)}" + (f" ({n.kernel})" if n.kernel else "")
        if n.exact:
            lines.append(f"run-to-run noise on {where}: none, exact counts (a change of a "
                         "count is a change)")
        elif n.noise is None:
            lines.append(f"run-to-run noise on {where}: not known from {counted(n.runs, 'run')}; "
                         "it needs 3 runs of one configuration ('kcross aa BENCH' measures it)")
        else:
            lines.append(f"run-to-run noise on {where}: {n.noise.cv:.2%} of the median beyond "
                         f"each run's own noise, from {n.noise.runs} runs ({n.noise.df:g} "
                         f"degrees of freedom): {fed_by(n.noise)}")
    return lines


def fed_by(noise: RunNoise) -> str:
    """The runs a noise estimate comes from, and those left out of it as outliers."""
    text = runs_listed(noise.used)
    if noise.outliers:
        text += f"; left out as outliers: {runs_listed(noise.outliers)}"
    return text


def json_records(t: Trend) -> list[dict[str, Any]]:
    """``kcross history --json``: one object per point, then one per machine's noise."""
    found: list[dict[str, Any]] = []
    for row in t.rows:
        p, j = row.point, row.change
        ci = p.ci
        entry: dict[str, Any] = {
            "type": "history", "benchmark": p.name, "run": p.run_id,
            "started_at": p.started_at.isoformat(), "hostname": p.hostname,
            "machine": p.machine, "kernel": p.kernel, "unit": p.unit, "status": p.status,
            "median": p.median, "ci_low": ci.low if isinstance(ci, MedianCI) else None,
            "ci_high": ci.high if isinstance(ci, MedianCI) else None,
            "against": row.previous.run_id if row.previous is not None else None,
            "verdict": row.verdict, "note": row.note}
        if j is not None and j.error is None:
            entry["change"] = record(j)
        found.append(entry)
    for n in t.noise:
        found.append({"type": "run-to-run noise", "benchmark": n.name, "hostname": n.hostname,
                      "machine": n.machine, "runs": n.runs,
                      "cv": n.noise.cv if n.noise else None,
                      "df": n.noise.df if n.noise else None,
                      **noise_runs(n.noise),
                      "exact": n.exact,
                      # a lab machine shown with several kernels: one record per kernel
                      **({"kernel": n.kernel} if n.kernel else {})})
    return found


def legend(t: Trend) -> str:
    series = "; a lab machine's runs in its kernels' order" if t.release_series else ""
    return (f"change: against the previous run of the same host (hostname, arch, CPU{series}), "
            f"ratio of medians - 1 with its 95% CI, judged as 'kcross compare' judges (the "
            f"machine's run-to-run noise included where known); {TIMING_RULE} "
            f"({counted(t.compared, 'change')} shown); {EXACT_RULE}; {DETECTABLE_RULE}")


def check_plot_path(path: Path) -> str:
    """The plot's format from its suffix; :class:`UserError` before any work if unsupported."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise UserError(f"--plot {path}: the file must end in .svg or .png")
    return fmt


def plot(t: Trend, path: Path) -> None:
    """Median with its CI as error bars over time: one panel per benchmark (and unit), one
    line per host."""
    fmt = check_plot_path(path)
    from ..outfile import quiet_matplotlib

    quiet_matplotlib()
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    panels: dict[tuple[str, str], dict[tuple[str, ...], list[Point]]] = {}
    for row in t.rows:
        p = row.point
        if p.series is not None:
            panels.setdefault((p.name, p.unit), {}).setdefault(p.host_key, []).append(p)
    if not panels:
        raise UserError(f"nothing to plot: no run of {shown(t.pattern)} shown has figures")
    hostnames = {key[0] for lines in panels.values() for key in lines}
    hosts = {key for lines in panels.values() for key in lines}
    fig = Figure(figsize=(9, 2.6 * len(panels) + 0.6), layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False, sharex=True)[:, 0]
    for ax, ((name, unit), lines) in zip(axes, panels.items(), strict=True):
        for key, pts in lines.items():
            x = [p.started_at.replace(tzinfo=None) for p in pts]
            y = [float(p.median) for p in pts]  # type: ignore[arg-type]
            low, high = [], []
            for p, m in zip(pts, y, strict=True):
                ci = p.ci
                low.append(m - ci.low if isinstance(ci, MedianCI) else 0.0)
                high.append(ci.high - m if isinstance(ci, MedianCI) else 0.0)
            label = key[0] if len(hostnames) == len(hosts) else " ".join(key[:3])
            ax.errorbar(x, y, yerr=[low, high], marker="o", markersize=4, capsize=3,
                        linewidth=1.2, label=label)
        ax.set_title(name, fontsize="medium", loc="left")
        ax.set_ylabel(f"median {unit}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", title="host", title_fontsize="small")
    locator = AutoDateLocator()
    axes[-1].xaxis.set_major_locator(locator)
    axes[-1].xaxis.set_major_formatter(ConciseDateFormatter(locator))
    fig.suptitle(f"kcross history: {t.pattern} (median, 95% CI)")
    drawn = io.BytesIO()
    fig.savefig(drawn, format=fmt, dpi=120)
    outfile.write(path, drawn.getvalue(), "--plot")

