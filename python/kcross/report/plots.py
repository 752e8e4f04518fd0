"""The report's plots: matplotlib figures (no pyplot, no global backend) as inline SVG.

Text stays text (``svg.fonttype: none``): the page is smaller and searchable, and
the browser draws it in the page's sans-serif.  Every SVG's ids are prefixed with
a hash of the plot's own name, so that many plots inlined in one page never share an id.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..judge.categories import Category
from ..outfile import quiet_matplotlib
from ..schema import UNIT_INSTRUCTIONS
from ..stats import StatsError, Summary

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .model import ComparisonSection, LabTable, RunView, Sweep

# Okabe-Ito: told apart with any colour vision; one colour per run, in the order given.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
SLOWER, FASTER, SAME = "#C0392B", "#1E8449", "#7F8C8D"
# Samples drawn per benchmark and run: a default run has 201, and a full run of every
# suite drawn in full makes a page of several MB.  The points kept are the samples of
# evenly spaced ranks, so the shape (and the minimum and maximum) is the samples'.
MAX_POINTS = 60
WIDTH_IN = 9.0
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "kcross-report",     # stable ids: the same run gives the same page
    "font.family": "sans-serif",
    "font.size": 8.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e4e4e4",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "axes.titlesize": 9.5,
    "axes.titleweight": "bold",
    "legend.frameon": False,
}



def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@contextmanager
def _figure(height: float, ncols: int = 1) -> Iterator[tuple[Figure, list[Axes]]]:
    quiet_matplotlib()
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(WIDTH_IN, height), layout="constrained")
        axes = fig.subplots(1, ncols, squeeze=False)[0]
        yield fig, list(axes)


_ID = re.compile(r'\bid="([^"]+)"')
_COORDS = re.compile(r'(\s(?:x|y|d|points)=")([^"]*)"')   # position attributes and path data
_DECIMALS = re.compile(r"(\.\d\d)\d+")


def to_svg(fig: Figure, name: str) -> str:
    """The figure as an ``<svg>`` element for inlining: no XML prolog, ids made unique."""
    buffer = io.StringIO()
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)  # RDF namespaces
    # short (every marker repeats it), deterministic, and one per plot name
    prefix = "k" + hashlib.sha1(name.encode()).hexdigest()[:6] + "-"
    idents = sorted(set(_ID.findall(text)), key=len, reverse=True)
    if idents:   # each id="X", #X" and #X) of them, in one pass (a plot has thousands)
        names = "|".join(re.escape(ident) for ident in idents)
        text = re.sub(f'(?:id="(?=(?:{names})")|#(?=(?:{names})[")]))',
                      lambda m: m.group(0) + prefix, text)
    # Coordinates to 1/100 pt (matplotlib writes 6 decimals): a third smaller, the same picture.
    text = _COORDS.sub(lambda m: m.group(1) + _DECIMALS.sub(r"\1", m.group(2)) + '"', text)
    text = re.sub(r"\n\s+", "\n", text)   # matplotlib's indentation: a tenth of the bytes
    # The page sizes the plot (CSS max-width); the viewBox keeps its proportions.
    text = re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"', r'<svg\1', text, count=1)
    return text.replace("<svg", f'<svg class="plot" role="img" aria-label="{name}"', 1)


def thin(samples: Sequence[float], limit: int = MAX_POINTS) -> list[float]:
    """At most ``limit`` of the sorted samples, at evenly spaced ranks (both ends kept)."""
    ordered = sorted(samples)
    n = len(ordered)
    if n <= limit:
        return ordered
    return [ordered[round(i * (n - 1) / (limit - 1))] for i in range(limit)]


def _log_scale(values: Sequence[float]) -> bool:
    """Log axis when the values span more than 30x (and are all positive)."""
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and bool(positive) and max(positive) / min(positive) > 30


def _log_axis(ax: Axes, values: Sequence[float]) -> None:
    """A log x axis when the values span more than 30x: ticks at 1, 2 and 5 times the powers
    of ten (over more than 3.5 decades at the powers only), labelled as plain numbers (a
    reader of ns/op wants 200, not 2x10^2)."""
    if not _log_scale(values):
        return
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    positive = [v for v in values if v > 0]
    decades = math.log10(max(positive) / min(positive))
    ax.set_xscale("log")
    # 1, 2 and 5 per decade over a few decades; beyond, their labels would run together
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 3.5
                                          else (1.0,)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.6g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _unit_label(unit: str) -> str:
    return "instructions per op (counted)" if unit == UNIT_INSTRUCTIONS else unit


def distribution(name: str, benches: Sequence[str], views: Sequence[RunView],
                 unit: str) -> str | None:
    """A strip plot: each benchmark's samples (thinned), one colour per run, the median and
    its CI95 as a black tick and bar."""
    import numpy as np

    rows = [b for b in benches if any(b in v.series for v in views)]
    if not rows:
        return None
    rng = np.random.default_rng(1)      # the jitter only spreads points; fixed for a stable page
    m = len(views)
    band = 0.8 / m
    height = 0.55 + max(1, len(rows)) * max(0.26, 0.17 * m + 0.09)
    every: list[float] = []
    with _figure(height) as (fig, (ax,)):
        # each kind of mark one artist (a line broken by NaNs, a line of markers): drawn
        # at once, not a matplotlib Line2D per benchmark and run (most of a report's time)
        bars: tuple[list[float], list[float]] = ([], [])
        ticks: tuple[list[float], list[float]] = ([], [])
        for j, view in enumerate(views):
            ys: list[float] = []
            xs: list[float] = []
            for i, bench in enumerate(rows):
                series = view.series.get(bench)
                if series is None:
                    continue
                center = i + (j - (m - 1) / 2) * band
                points = thin(series.samples)
                xs += points
                ys += list(center + rng.uniform(-band * 0.32, band * 0.32, len(points)))
                every += points
                summary = view.summaries.get(bench)
                if isinstance(summary, Summary):
                    try:
                        ci = summary.ci
                        bars[0].extend((ci.low, ci.high, math.nan))
                        bars[1].extend((center, center, math.nan))
                    except StatsError:
                        pass
                    ticks[0].append(summary.median)
                    ticks[1].append(center)
            if xs:
                ax.scatter(xs, ys, s=9, color=color(j), alpha=0.5, linewidths=0,
                           label=view.short, zorder=5)
        if bars[0]:
            ax.plot(*bars, color="#222222", linewidth=2.2, solid_capstyle="butt", zorder=3)
        if ticks[0]:
            ax.plot(*ticks, linestyle="none", marker="|", markersize=10, markeredgewidth=1.6,
                    color="#111111", zorder=4)
        ax.set_yticks(range(len(rows)), [b.split("/", 1)[-1] for b in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        _log_axis(ax, every)
        ax.set_xlabel(_unit_label(unit))
        if m > 1:
            fig.legend(loc="outside lower center", ncols=min(m, 4), fontsize=8, markerscale=2)
        return to_svg(fig, name)


# The forest plot's axis is the log of the ratio of medians, symmetric about no change and
# labelled as changes in percent.  It reaches every median ratio within 2x either way and
# the CIs of nine rows in ten, at least 5% and at most 4x either way: one outlier no longer
# squeezes every other row against the line at 1.  What runs beyond it is clipped at the
# edge, with an arrow there, and a median ratio off the axis is written beside its arrow.
FOREST_REACH = (1.05, 4.0)
FOREST_OUTLIER = 2.0
# Tick ratios, most important first: tiers are added while the ticks stay apart.
_FOREST_TICKS = ((1.0,), (0.5, 2.0, 0.25, 4.0), (2 / 3, 1.5), (0.8, 1.25), (0.9, 1.1),
                 (0.95, 1.05), (0.98, 1.02))


def percent_change(ratio: float) -> str:
    """A ratio of medians as the change it is: 1.25 -> "+25%", 0.8 -> "-20%", 1 -> "0"."""
    change = (ratio - 1) * 100
    if round(change, 1) == 0:
        return "0"
    return f"{change:+.0f}%" if abs(change) >= 9.5 else f"{change:+.2g}%"


def forest_reach(spans: Sequence[tuple[float, float, float]]) -> float:
    """The half-width (in log ratio) of a forest plot of rows whose CI and median ratio are
    ``spans`` (low, median, high; logs): see :data:`FOREST_REACH`."""
    from ..stats import quantile

    low, high = (math.log(x) for x in FOREST_REACH)
    medians = [abs(m) for _, m, _ in spans if abs(m) <= math.log(FOREST_OUTLIER)]
    extents = [max(map(abs, span)) for span in spans]
    wanted = max([*medians, quantile(extents, 0.9) if extents else 0.0]) * 1.1
    return min(max(wanted, low), high)


def _forest_ticks(reach: float) -> list[float]:
    """Tick ratios on an axis of half-width ``reach``: a fifth of it apart at least."""
    ticks: list[float] = []
    for tier in _FOREST_TICKS:
        more = sorted(ticks + [t for t in tier if abs(math.log(t)) <= reach * 1.06])
        logs = [math.log(t) for t in more]
        if any(b - a < reach / 5 for a, b in zip(logs, logs[1:], strict=False)):
            break
        ticks = more
    return ticks


def forest(comparison: ComparisonSection) -> str | None:
    """The change of each benchmark's median (new / base) with its CI, on a log-ratio axis
    around no change, labelled in percent; rows beyond the axis's reach are clipped and
    marked (:data:`FOREST_REACH`)."""
    rows = [r for r in comparison.rows if r.value is not None]
    if not rows:
        return None

    def ln(x: float) -> float:
        return math.log(max(x, 1e-12))

    spans = []
    for row in rows:
        v = row.value
        assert v is not None
        ratio = v.ratio if v.ratio is not None else 1.0
        spans.append((ln(v.ratio_low if v.ratio_low is not None else ratio), ln(ratio),  # exact:
                      ln(v.ratio_high if v.ratio_high is not None else ratio)))   # a point
    reach = forest_reach(spans)
    height = 0.9 + 0.22 * len(rows)
    with _figure(height) as (fig, (ax,)):
        # the CIs and the medians of one colour are one artist each (drawn at once)
        cis: dict[str, tuple[list[float], list[float]]] = {}
        dots: dict[str, tuple[list[float], list[float]]] = {}
        for i, (row, (low, mid, high)) in enumerate(zip(rows, spans, strict=True)):
            c = {Category.HIGHER: SLOWER, Category.LOWER: FASTER}.get(
                row.value.category if row.value else Category.SAME, SAME)
            shown = [min(max(x, -reach), reach) for x in (low, mid, high)]
            xs, ys = cis.setdefault(c, ([], []))
            xs.extend((shown[0], shown[2], math.nan))
            ys.extend((i, i, math.nan))
            for x, edge in ((low, -reach), (high, reach)):
                if abs(x) > reach and (x > 0) == (edge > 0):   # runs off this edge
                    ax.plot([edge], [i], marker=">" if edge > 0 else "<", markersize=5,
                            color=c, clip_on=False, zorder=2.5)
            if abs(mid) <= reach:
                xs, ys = dots.setdefault(c, ([], []))
                xs.append(mid)
                ys.append(i)
            else:   # the median ratio itself is off the axis: say where
                edge = reach if mid > 0 else -reach
                ax.plot([edge], [i], marker=">" if mid > 0 else "<", markersize=8, color=c,
                        clip_on=False, zorder=2.5)
                ax.annotate(percent_change(math.exp(mid)), (edge, i),
                            xytext=(-8 if mid > 0 else 8, 0), textcoords="offset points",
                            ha="right" if mid > 0 else "left", va="center", fontsize=7.5,
                            color=c, bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.6})
        for c, line in cis.items():
            ax.plot(*line, color=c, linewidth=1.6)
        for c, points in dots.items():
            ax.plot(*points, linestyle="none", marker="o", markersize=4.5, color=c)
        ax.axvline(0.0, color="#444444", linewidth=0.9, zorder=1)
        ax.set_xlim(-reach * 1.06, reach * 1.06)   # the ticks at ±5% in view at the least reach
        ticks = _forest_ticks(reach)
        ax.set_xticks([math.log(t) for t in ticks], [percent_change(t) for t in ticks])
        ax.minorticks_off()
        ax.set_yticks(range(len(rows)), [r.bench for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        clipped = sum(max(abs(a), abs(b)) > reach for a, _, b in spans)
        ax.set_xlabel(f"change of the median, {comparison.new.label} against "
                      f"{comparison.base.label} (log scale), with its CI95"
                      + (f"; {clipped} row{'s' * (clipped != 1)} clipped at the edge (▸)"
                         if clipped else "")
                      + "\nred: significantly more, green: less, grey: no difference shown")
        return to_svg(fig, comparison.anchor)


def scaling(name: str, found: Sequence[Sweep], runs: Sequence[RunView]) -> str | None:
    """Throughput (all threads) and the per-op median (each thread) against the thread count."""
    if not found:
        return None
    bases = list(dict.fromkeys(s.base for s in found))
    markers = ("o", "s", "^", "D", "v", "P", "X")
    with _figure(3.4, ncols=2) as (fig, (left, right)):
        ticks: dict[int, str] = {}
        for sweep in found:
            j = next(i for i, r in enumerate(runs) if r is sweep.run)
            k = bases.index(sweep.base)
            style: dict[str, Any] = {"color": color(k), "marker": markers[j % len(markers)],
                                     "linestyle": "-" if j == 0 else "--", "markersize": 4.5,
                                     "linewidth": 1.4}
            label = sweep.base if len(runs) == 1 else f"{sweep.base} ({sweep.run.label})"
            tput = [(p.threads, p.throughput / 1e6) for p in sweep.points if p.throughput]
            if tput:
                left.plot(*zip(*tput, strict=True), label=label, **style)
            per_op = [(p.threads, p.median) for p in sweep.points if p.median is not None]
            if per_op:
                right.plot(*zip(*per_op, strict=True), **style)
            for p in sweep.points:
                ticks.setdefault(p.threads, f"{p.threads}\n{p.multiplier}")
        unit = runs[0].unit if len({r.unit for r in runs}) == 1 else "per op"
        for ax in (left, right):
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(ticks), [ticks[t] for t in sorted(ticks)])
            ax.minorticks_off()
            ax.set_xlabel("threads")
            ax.set_ylim(bottom=0)
        left.set_title("throughput, all threads")
        left.set_ylabel("million ops/s")
        right.set_title("median per op, as each thread sees it")
        right.set_ylabel(_unit_label(unit))
        fig.legend(loc="outside lower center", ncols=min(len(bases) * len(runs), 3), fontsize=8)
        return to_svg(fig, name)


def lab_bars(table: LabTable) -> str | None:
    """Grouped horizontal bars: each benchmark's counted median, one bar per lab run (arch)."""
    names = [n for n, values in table.medians.items() if any(v is not None for v in values)]
    if not names:
        return None
    m = len(table.runs)
    band = 0.8 / m
    height = 0.8 + len(names) * max(0.24, 0.13 * m + 0.08)
    values_all: list[float] = []
    with _figure(height) as (fig, (ax,)):
        for j, column in enumerate(table.columns):
            ys, widths = [], []
            for i, name in enumerate(names):
                value = table.medians[name][j]
                if value is not None:
                    ys.append(i + (j - (m - 1) / 2) * band)
                    widths.append(value)
            values_all += widths
            ax.barh(ys, widths, height=band * 0.9, color=color(j), label=column)
        _log_axis(ax, values_all)
        ax.set_yticks(range(len(names)), names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("median instructions per op (QEMU icount: deterministic)")
        fig.legend(loc="outside lower center", ncols=min(m, 4), fontsize=8)
        return to_svg(fig, "lab-by-arch")
