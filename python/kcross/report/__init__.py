"""``kcross report``: stored runs as one self-contained static HTML page.

The page holds everything it shows: CSS in a ``<style>`` element, plots as inline
SVG drawn by matplotlib, no script and no external URL, so it can be mailed,
archived or opened offline.  :mod:`.model` computes the figures (all of them from
:mod:`kcross.stats`), :mod:`.plots` draws them, and ``templates/report.html.j2``
lays them out.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import model, plots, reproduced

if TYPE_CHECKING:
    from ..judge.comparison import NoiseLookup
    from ..store import StoredRun

TEMPLATE = "report.html.j2"


@dataclass(frozen=True)
class Flagged:
    """A flag the harness raised on one result of one run."""

    run: str
    bench: str
    flag: str
    detail: str


@dataclass
class Report:
    """What the template receives."""

    title: str
    generated: str
    version: str
    runs: list[model.RunView]
    facts: list[model.FactGroup]
    suites: list[model.SuiteTable]
    comparisons: list[model.ComparisonSection]
    bases: list[model.RunView]                          # the runs others are compared with
    sweeps: list[tuple[str, str, list[model.Sweep]]]   # (suite, svg, sweeps)
    lab: model.LabTable | None
    max_points: int
    notes: list[str]                                   # a run not complete
    warnings: list[Flagged]                            # the harness's flags, in detail
    reproduced: list[reproduced.ExperimentView]        # kcross reproduce's experiments
    series: bool = False                               # a lab machine's runs of several kernels

    @property
    def warned(self) -> dict[str, int]:
        """How many results each flag was raised on."""
        return dict(Counter(w.flag for w in self.warnings))


def _notes(views: Sequence[model.RunView]) -> list[str]:
    """What the top of the page must say: a run that is not complete."""
    from ..sides import not_complete
    from ..views.text import counted

    notes = []
    for view in views:
        run = view.run
        if run.status != "complete":
            planned = len(run.plan["benchmarks"]) if run.plan else 0
            k = int((run.plan or {}).get("processes") or 1)
            stored = f"{len(run.results)} of {planned} benchmarks stored" if k == 1 else \
                (f"{len(run.results)} of {planned * k} results stored ({k} processes of "
                 f"{counted(planned, 'benchmark')})")
            text = f"{not_complete(view.label, run.state or run.status)}: {stored}"
            notes.append(text + (f" ({run.error})" if run.error else ""))
    return notes


def _warnings(views: Sequence[model.RunView]) -> list[Flagged]:
    """The harness's flags with their details: a section of their own below the content
    (the page's top counts them; a suite's row names its flags)."""
    return [Flagged(view.label, f"{rec['suite']}/{rec['name']}", str(flag.get("flag")),
                    str(flag.get("detail")))
            for view in views for rec in view.results for flag in rec.get("flags") or []]


def build(runs: Sequence[StoredRun], *, now: dt.datetime | None = None,
          tags: Mapping[int, Sequence[str]] | None = None,
          noise: NoiseLookup | None = None) -> Report:
    """Everything the page shows, plots drawn, for ``runs`` (the first of each unit is the
    base of its comparisons; a lab machine's runs with several kernels step along them, in
    their order); ``tags``: run id -> the tags naming it."""
    from .. import __version__

    # a lab machine's runs with several kernels: in their order (its release series)
    views = model.release_series([model.run_view(r, (tags or {}).get(r.id, ())) for r in runs])
    suites = model.suite_tables(views)
    for table in suites:
        benches = [f"{table.suite}/{name}" for name in dict.fromkeys(r.bench for r in table.rows)]
        for unit in table.units:
            same = [v for v in views if v.unit == unit]
            svg = plots.distribution(f"{table.anchor}-{model.anchor(unit)}", benches, same, unit)
            if svg:
                caption = f"{table.suite}: samples ({unit})" if len(table.units) > 1 \
                    else f"{table.suite}: samples"
                table.plots.append((caption, svg))
    comparisons = model.comparisons(views, noise)
    for comparison in comparisons:
        comparison.plot = plots.forest(comparison)
    found = model.sweeps(views)
    sweeps = []
    for suite in dict.fromkeys(s.suite for s in found):
        of_suite = [s for s in found if s.suite == suite]
        svg = plots.scaling(f"scaling-{model.anchor(suite)}", of_suite,
                            [v for v in views if any(s.run is v for s in of_suite)])
        if svg:
            sweeps.append((suite, svg, of_suite))
    lab = model.lab_table(views)
    if lab is not None:
        lab.plot = plots.lab_bars(lab)
    when = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    labels = ", ".join(v.label for v in views)
    return Report(title=f"kcross report: {labels}", generated=when, version=__version__,
                  runs=views, facts=model.fingerprint_groups(views), suites=suites,
                  comparisons=comparisons, bases=list(dict.fromkeys(c.base for c in comparisons)),
                  sweeps=sweeps, lab=lab, max_points=plots.MAX_POINTS,
                  notes=_notes(views), warnings=_warnings(views),
                  reproduced=reproduced.section(runs),
                  series=bool(model.several_kernels(views)))


def render(report: Report) -> str:
    """The page's HTML text."""
    import jinja2
    import markupsafe

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("kcross.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True)
    environment.filters["svg"] = markupsafe.Markup   # drawn here, not user text
    return environment.get_template(TEMPLATE).render(r=report)


def html(runs: Sequence[StoredRun], *, now: dt.datetime | None = None,
         tags: Mapping[int, Sequence[str]] | None = None,
         noise: NoiseLookup | None = None) -> str:
    return render(build(runs, now=now, tags=tags, noise=noise))
