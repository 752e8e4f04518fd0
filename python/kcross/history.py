"""``kcross history``: one benchmark's trend over the stored runs, as a table and a plot.

Each stored run holding the benchmark gives a point: its median with the
distribution-free CI, and the change against the previous point of the same
host, judged by the verdict rule of :mod:`kcross.stats` (Mann-Whitney U,
Holm-Bonferroni across the changes shown at once, the ratio's bootstrap CI).

"The same host" is the hostname, architecture and CPU model (a lab run: also
the emulated machine and CPU), not the store's machine identity: that identity
covers the kernel, its command line and the forced settings, and a change of
kernel on one box is exactly what a trend is for.  Each point shows the store's
machine hash, so a changed configuration is visible, and its note says what
changed (the kernel release) against the previous point.

Only the store's public reading API is used (``list_runs``, ``load_run``).
"""

from __future__ import annotations

import datetime as dt
import difflib
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .schema import dig, unit_of
from .series import Series, bench_name, series_of_results
from .stats import ALPHA, MedianCI, StatsError, Verdict, compare_many, median_ci
from .stats import median as median_of

if TYPE_CHECKING:
    from .store import Store

PLOT_FORMATS = ("svg", "png")


@dataclass(frozen=True)
class Point:
    """One benchmark in one stored run."""

    run_id: int
    started_at: dt.datetime
    name: str                      # suite/name
    hostname: str
    machine: str                   # the store's machine identity (SHA-256 hex)
    host_key: tuple[str, ...]      # what "the same host" means (module docstring)
    kernel: str
    unit: str
    series: Series | None          # None: the result has no figures (skipped, failed...)
    status: str                    # "ok", or why there are no figures ("skipped: no rseq")

    @property
    def host_label(self) -> str:
        """hostname and short machine hash: ``vm 1a2b3c4d``."""
        return f"{self.hostname} {self.machine[:8]}"

    @property
    def median(self) -> float | None:
        return None if self.series is None else median_of(self.series.samples)

    @property
    def ci(self) -> MedianCI | StatsError | None:
        if self.series is None:
            return None
        try:
            return median_ci(self.series.samples)
        except StatsError as exc:
            return exc


@dataclass(frozen=True)
class Row:
    """A point of the trend and its change against the previous point of the same host."""

    point: Point
    previous: Point | None
    change: Verdict | StatsError | None
    note: str | None

    @property
    def verdict(self) -> str:
        if self.point.series is None:
            return self.point.status
        if self.previous is None:
            return "first"
        if isinstance(self.change, StatsError):
            return "error"
        assert self.change is not None
        if not self.change.significant:
            return "~"
        return "slower" if self.change.ratio > 1 else "faster"


@dataclass(frozen=True)
class Trend:
    pattern: str
    rows: list[Row]
    compared: int                  # changes tested together (Holm across them)

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(r.point.name for r in self.rows))

    @property
    def units(self) -> list[str]:
        return list(dict.fromkeys(r.point.unit for r in self.rows))


def host_key(fingerprint: Mapping[str, Any]) -> tuple[str, ...]:
    key = [str(dig(fingerprint, "host", "hostname") or "?"), str(fingerprint.get("arch") or "?"),
           str(dig(fingerprint, "cpu", "model") or "?")]
    lab = fingerprint.get("lab")
    if isinstance(lab, dict):
        key += ["lab", str(lab.get("machine")), str(lab.get("cpu")), str(lab.get("mode"))]
    return tuple(key)


def matches(pattern: str, name: str) -> bool:
    """``pattern`` (fnmatch) names ``suite/name`` or the bare name, as ``run --bench`` takes it."""
    return fnmatch.fnmatchcase(name, pattern) or \
        fnmatch.fnmatchcase(name.partition("/")[2], pattern)


def closest_names(pattern: str, names: Iterable[str]) -> list[str]:
    """The three names (``suite/name`` or bare) closest to a ``pattern`` that named none."""
    known = set(names)
    return difflib.get_close_matches(pattern, sorted(known | {n.partition("/")[2] for n in known}),
                                     n=3)


def _machine_matches(spec: str, hostname: str, machine: str) -> bool:
    return spec == hostname or (len(spec) >= 4 and machine.startswith(spec.lower()))


def points(store: Store, pattern: str) -> list[Point]:
    """Every stored point of the benchmarks ``pattern`` names, oldest first.

    :class:`UserError` when no stored run holds such a benchmark (naming the closest
    stored names).
    """
    from .store.repo import machine_identity

    found: list[Point] = []
    known: set[str] = set()
    runs = sorted(store.list_runs(), key=lambda r: (r.started_at, r.id))
    for summary in runs:
        if summary.results == 0:
            continue
        run = store.load_run(str(summary.id))
        fp = run.fingerprint
        names = [bench_name(r) for r in run.results]
        known.update(names)
        hostname = str(dig(fp, "host", "hostname") or "?")
        ident = machine_identity(fp)
        wanted = [r for r, n in zip(run.results, names, strict=True) if matches(pattern, n)]
        if not wanted:
            continue
        unit = unit_of(fp, run.results)
        with_figures = {s.name: s for s in series_of_results(f"run {run.id}", fp, wanted)}
        for record in wanted:
            name = bench_name(record)
            status = "ok"
            if name not in with_figures:
                status = str(record.get("status"))
                reason = record.get("reason")
                status = f"{status}: {reason}" if reason and status != "ok" else \
                    (status if status != "ok" else "ok but no figures")
            found.append(Point(run_id=run.id, started_at=run.started_at, name=name,
                               hostname=hostname, machine=ident, host_key=host_key(fp),
                               kernel=str(dig(fp, "kernel", "release") or "?"), unit=unit,
                               series=with_figures.get(name), status=status))
    if not any(matches(pattern, n) for n in known):
        close = closest_names(pattern, known)
        hint = f" (closest: {', '.join(close)})" if close else \
            (" (no runs stored)" if not known else " (see 'kcross list')")
        raise UserError(f"no stored run has a benchmark matching {pattern!r}{hint}")
    return found


def trend(store: Store, pattern: str, *, machine: str | None = None, last: int | None = None,
          alpha: float = ALPHA) -> Trend:
    """The trend of ``pattern``: the last ``last`` runs holding it (all by default) of
    ``machine`` (a hostname or machine hash prefix; all by default), oldest first, each point
    with its change against the previous point of its host, shown or not."""
    every = points(store, pattern)
    shown = list(range(len(every)))
    if machine is not None:
        shown = [i for i in shown if _machine_matches(machine, every[i].hostname,
                                                      every[i].machine)]
        if not shown:
            hosts = sorted({p.host_label for p in every})
            raise UserError(f"no stored run of {pattern!r} on machine {machine!r} (a hostname "
                            f"or a machine hash prefix of 4+ digits; stored: {', '.join(hosts)})")
    if last is not None:
        keep = set(list(dict.fromkeys(every[i].run_id for i in shown))[-last:])
        shown = [i for i in shown if every[i].run_id in keep]
    # The previous point with figures of the same benchmark on the same host (shown or not).
    previous: dict[int, int] = {}
    latest: dict[tuple[str, tuple[str, ...]], int] = {}
    for i, p in enumerate(every):
        if p.series is not None:
            key = (p.name, p.host_key)
            if key in latest:
                previous[i] = latest[key]
            latest[key] = i
    pairs = [(previous[i], i) for i in shown if i in previous]
    verdicts = compare_many([(every[a].series.samples,  # type: ignore[union-attr]
                              every[b].series.samples)  # type: ignore[union-attr]
                             for a, b in pairs], alpha=alpha)
    changes = {b: (every[a], v) for (a, b), v in zip(pairs, verdicts, strict=True)}
    rows = []
    for i in shown:
        p = every[i]
        before, change = changes.get(i, (None, None))
        note = None
        if before is not None:
            what = []
            if before.kernel != p.kernel:
                what.append(f"kernel {before.kernel} -> {p.kernel}")
            elif before.machine != p.machine:
                what.append(f"configuration {before.machine[:8]} -> {p.machine[:8]}")
            if isinstance(change, Verdict) and change.note:
                what.append(change.note)
            note = "; ".join(what) or None
        rows.append(Row(point=p, previous=before, change=change, note=note))
    return Trend(pattern=pattern, rows=rows, compared=len(pairs))


# --- output ------------------------------------------------------------------------------

def _pct(ratio: float) -> str:
    return f"{(ratio - 1) * 100:+.1f}%"


def cells(row: Row, unit: str | None) -> list[str]:
    """A row's cells, plain ASCII; ``unit`` None: the values carry their own unit."""
    from .render import format_value

    p = row.point
    own = p.unit if unit is None else None

    def value(x: float) -> str:
        return format_value(x, p.unit) + (f" {own}" if own else "")

    median = value(p.median) if p.median is not None else "-"
    ci = p.ci
    ci_text = "-" if ci is None else (str(ci) if isinstance(ci, StatsError) else
                                      f"{format_value(ci.low, p.unit)}-"
                                      f"{format_value(ci.high, p.unit)}")
    change, p_text = "-", "-"
    if isinstance(row.change, Verdict):
        v = row.change
        change = f"{_pct(v.ratio)} ({_pct(v.ratio_low)} {_pct(v.ratio_high)})"
        p_text = "<0.001" if v.p_adjusted < 0.001 else f"{v.p_adjusted:.3f}"
    elif isinstance(row.change, StatsError):
        change = str(row.change)
    against = f"run {row.previous.run_id}" if row.previous is not None else "-"
    return [str(p.run_id), p.started_at.strftime("%Y-%m-%d %H:%M"), p.host_label, p.kernel,
            median, ci_text, against, change, p_text,
            row.verdict, row.note or ""]


def headers(t: Trend) -> tuple[list[str], str | None]:
    unit = t.units[0] if len(t.units) == 1 else None
    unit_text = f" {unit}" if unit else ""
    return (["run", "started (UTC)", "machine", "kernel", f"median{unit_text}", "95% CI",
             "vs", "change (95% CI)", "p", "verdict", "note"], unit)


def table(t: Trend, *, ascii_only: bool) -> Any:
    """One rich table per benchmark: ASCII borders and no colour for a log or a mail."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    names, unit = headers(t)
    styles = {"slower": "red", "faster": "green", "error": "yellow"}
    parts: list[Any] = []
    for bench in t.names:
        out = Table(box=box.ASCII if ascii_only else box.HEAVY_HEAD,
                    header_style="" if ascii_only else "bold")
        for i, name in enumerate(names):
            out.add_column(name, justify="right" if i in (0, 4, 8) else "left")
        for row in t.rows:
            if row.point.name != bench:
                continue
            texts = cells(row, unit)
            style = "" if ascii_only else styles.get(row.verdict, "")
            out.add_row(*(Text(x, style=style if i == 9 else "") for i, x in enumerate(texts)))
        parts += [Text(bench, style="" if ascii_only else "bold"), out]
    return Group(*parts)


def legend(t: Trend) -> str:
    return (f"change: against the previous run of the same host (hostname, arch, CPU), ratio "
            f"of medians - 1 with its 95% CI; p: Mann-Whitney U, Holm-adjusted across the "
            f"{t.compared} change(s) shown; slower/faster when p < {ALPHA:g}")


def check_plot_path(path: Path) -> str:
    """The plot's format from its suffix; :class:`UserError` before any work if unsupported."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise UserError(f"--plot {path}: the file must end in .svg or .png")
    if not path.parent.is_dir():
        raise UserError(f"--plot {path}: no directory {path.parent}")
    return fmt


def plot(t: Trend, path: Path) -> None:
    """Median with its CI as error bars over time: one panel per benchmark (and unit), one
    line per host."""
    fmt = check_plot_path(path)
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    panels: dict[tuple[str, str], dict[tuple[str, ...], list[Point]]] = {}
    for row in t.rows:
        p = row.point
        if p.series is not None:
            panels.setdefault((p.name, p.unit), {}).setdefault(p.host_key, []).append(p)
    if not panels:
        raise UserError(f"nothing to plot: no run of {t.pattern!r} shown has figures")
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
    try:
        fig.savefig(path, format=fmt, dpi=120)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None

