"""``kcross lab ARCH --releases A,B,...`` or ``--releases all`` (issue 23): the crossing
across Debian releases, exact, each change explained.

What it does, in order: the refusals (:func:`check_options`, then everything
kcross.lab.jobs.check refuses), every release's kernel fetched (kcross.lab.kernel.fetch
through kcross.lab.boots.resolve_kernel, the fetches at once: each release has its cache
directory and lock), the guest programs built once, then one counting boot per kernel
(``--compare M1 M2`` or ``--compare-env NAME=VALUE``: two per kernel, its sides), all of
them two at a time (kcross.lab.boots.parallel_boots), every run stored (the runs of one lab
machine with several kernels: the release series ``compare``, ``history`` and ``report``
show), then one table of rows × runs (kcross.views.series) and the explanations.

The steps (:class:`~kcross.views.series.SeriesStep`): each kernel against the one before
it, in release order; with two sides, each release's B against its A.  Each step is judged
by kcross.judge, exactly (kcross.lab.report.judged: one comparison, by value, never a
p-value; a row that moved by under one instruction per op is the timer's share, never a
change).  Every row whose path changed in a step is explained (kcross.lab.explain: the
profiled boots of every step made together, a kernel between two steps profiled once; by
default for the kernels alone, with ``--explain`` for two sides; ``--no-explain`` skips
it).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from rich.console import Console

from kcross.errors import UserError
from kcross.judge.verdict import Judgement, path_changed
from kcross.lab import jobs
from kcross.lab.boots import (
    exit_status,
    make_guest,
    resolve_kernel,
    stop_on_signals,
    store_runs,
)
from kcross.lab.explain import Explained, Subject
from kcross.lab.kernel import Kernel
from kcross.lab.machines import arch
from kcross.lab.payload import Payload, find_source
from kcross.lab.report import judged, reason
from kcross.lab.request import LabRequest, settings_text
from kcross.lab.session import UNIT, Counted, rows_by_name
from kcross.views.explain import explanation_records, explanation_view
from kcross.views.lines import print_json, say
from kcross.views.series import (
    KernelColumn,
    SeriesLine,
    SeriesStep,
    run_label,
    series_records,
    series_table,
)
from kcross.views.table import terminal
from kcross.views.text import counted

# ---------------------------------------------------------------- refusals


def check_options(request: LabRequest) -> tuple[str, ...]:
    """The releases --releases names (kcross.lab.releases.series refuses the names), and
    what it cannot go with: one line each, before anything is fetched, built or booted."""
    given = request.releases
    assert given is not None
    names = request.release_series()
    other = [o for o, v in (("--release", request.release), ("--kernel", request.kernel),
                            ("--against", request.against),
                            ("--against-source", request.against_source),
                            ("--mitigations", request.mitigations),
                            ("--trace", request.trace), ("--profile", request.profile),
                            ("--peers", request.peers)) if v]
    if other:
        raise UserError(f"--releases {given} counts each release's Debian kernel, alone or "
                        f"with --compare or --compare-env: not with {', '.join(other)}")
    if request.mode != "counting":
        raise UserError(f"--releases counts each release's kernel: not with --mode "
                        f"{request.mode}")
    return names


# ---------------------------------------------------------------- the series


@dataclass(frozen=True)
class Counting:
    """One counting run of the series: the release, what was booted (its subject: the
    kernel, guest, programs and settings), the side of the axis (None: kernels alone)."""

    release: str
    subject: Subject
    side: str | None
    run: Counted

    def column(self) -> KernelColumn:
        k = self.subject.kernel
        return KernelColumn(self.release, k.version or str(k.path), k.package, self.side)


@dataclass(frozen=True)
class ReleaseSeries:
    """The series counted: its runs in release order (each release's A then B with two
    sides), its steps, each step's verdicts by row (suite/name), the rows in order."""

    arch: str
    runs: tuple[Counting, ...]
    steps: tuple[SeriesStep, ...]
    verdicts: tuple[dict[str, Judgement], ...]
    rows: tuple[str, ...]

    @property
    def sided(self) -> bool:
        return any(c.side is not None for c in self.runs)

    def lines(self) -> list[SeriesLine]:
        """Each row across the runs: figures, reasons, the steps' judgements."""
        found = []
        for name in self.rows:
            figures = tuple(c.run.median(name) for c in self.runs)
            reasons = tuple("" if f is not None else (reason(c.run, name) or "not measured")
                            for c, f in zip(self.runs, figures, strict=True))
            steps = tuple(None if figures[s.a] is None or figures[s.b] is None
                          else v.get(name) for s, v in zip(self.steps, self.verdicts,
                                                           strict=True))
            found.append(SeriesLine(name, figures, reasons, steps))
        return found

    def changed(self) -> int:
        return sum(path_changed(j) for v in self.verdicts for j in v.values())

    def judged(self) -> int:
        return sum(len(v) for v in self.verdicts)


def series_of(arch_name: str, runs: Sequence[Counting]) -> ReleaseSeries:
    """The series of ``runs`` (in release order; with two sides, A then B per release): each
    kernel against the one before it, or each release's B against its A, judged."""
    sided = any(c.side is not None for c in runs)
    pairs = [(i, i + 1) for i in range(0, len(runs), 2)] if sided else \
        [(i - 1, i) for i in range(1, len(runs))]
    steps = tuple(SeriesStep(a, b) for a, b in pairs)
    verdicts = tuple(judged(runs[s.a].run, runs[s.b].run, runs[s.a].subject.label,
                            runs[s.b].subject.label) for s in steps)
    return ReleaseSeries(arch_name, tuple(runs), steps, verdicts,
                         tuple(rows_by_name(c.run for c in runs)))


def title(s: ReleaseSeries) -> str:
    """The table's title: the arch, what is compared, the CPU model, the changes counted."""
    cpu = s.runs[0].run.guest.cpu_model.split(",", 1)[0]   # the model, not its features
    changed = f"{s.changed()} of {s.judged()} changed"
    if s.sided:
        a, b = s.runs[0].side, s.runs[1].side
        return (f"{s.arch}: {a} vs {b} on each Debian release's kernel, instructions/op "
                f"(counting mode, {cpu}; {changed})")
    steps = counted(len(s.steps), "step")
    return (f"{s.arch}: instructions/op across Debian releases, {steps} from kernel to kernel "
            f"(counting mode, {cpu}; {changed})")


def notes(s: ReleaseSeries, request: LabRequest) -> list[str]:
    """The lines under the table: what a step is; with two sides, each side's settings."""
    if s.sided:
        sides = request.sides()
        assert sides is not None
        return [f"{s.runs[1].side} - {s.runs[0].side}: judged exactly on each release's "
                "kernel (by value, never a p-value)", *jobs.sides_notes(request, sides)]
    given = settings_text(request.guest.settings())
    return ["Δ: the kernel against the one before it, judged exactly (by value, never a "
            "p-value)", *([f"every run: {given} (--env)"] if given else [])]


# ---------------------------------------------------------------- the job


def fetch_kernels(request: LabRequest, names: Sequence[str], err: Console) -> list[Kernel]:
    """Each release's kernel (cached, or fetched and cached), the fetches at once: each
    release has its own cache directory and lock (kcross.lab.kernel)."""
    with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
        futures = [pool.submit(resolve_kernel, request.arch, None, refresh=request.refresh,
                               err=err, release=name) for name in names]
        return [f.result() for f in futures]


def subjects(request: LabRequest, name: str, kernel: Kernel, payload: Payload
             ) -> list[tuple[str | None, Subject]]:
    """What a release's counting boots boot: its kernel alone (the variant a plain
    ``kcross lab ARCH --release NAME`` gives its run), or each side of the axis, labelled
    by release and side."""
    sides = request.sides()
    if sides is None:
        env = request.guest.environment()
        return [(None, Subject(name, make_guest(request, kernel, "counting"), kernel,
                               payload, env=env,
                               variant=settings_text(request.guest.settings()) or None))]
    a, b = jobs.env_subjects(request, kernel, payload, sides)
    return [(s.label, replace(s, label=run_label(name, s.label))) for s in (a, b)]


def counting(request: LabRequest, names: Sequence[str], kernels: Sequence[Kernel],
             payload: Payload, out: Console, err: Console) -> int:
    """Every release's counting boots, the table (or its records), the runs stored, then
    the explanation of each step's changed rows (when the request explains)."""
    booted = [(name, side, subject) for name, k in zip(names, kernels, strict=True)
              for side, subject in subjects(request, name, k, payload)]
    runs = jobs.count_subjects(request, [s for _, _, s in booted], err)
    series = series_of(request.arch, [Counting(name, subject, side, run) for
                                      (name, side, subject), run in zip(booted, runs,
                                                                        strict=True)])
    columns = [c.column() for c in series.runs]
    if request.json_output:
        print_json(series_records(request.arch, UNIT, columns, series.steps, series.lines()))
    else:
        out.print(terminal(series_table(title(series), columns, series.steps,
                                        series.lines(), notes(series, request))))
    store_runs(request, runs, err)
    if request.explained:
        for x in explain(request, series, err):
            if request.json_output:
                print_json(explanation_records(x))
            elif x.steps:
                out.print(explanation_view(x))
    return exit_status(runs)


def explain(request: LabRequest, s: ReleaseSeries, err: Console) -> list[Explained]:
    """Every step's changed rows explained (kcross.lab.explain.explain_steps: the profiled
    boots of every step made together), the host time said in one line."""
    from kcross.lab.explain import explain_steps

    found = explain_steps([(s.runs[step.a].subject, s.runs[step.b].subject, verdicts)
                           for step, verdicts in zip(s.steps, s.verdicts, strict=True)],
                          source=find_source(request.source), timeout=request.timeout,
                          say=lambda line: say(err, line), glob=request.guest.bench)
    rows = sum(len(x.steps) for x in found)
    if rows:
        stepped = sum(1 for x in found if x.steps)
        say(err, f"kcross lab: {counted(rows, 'changed row')} in {counted(stepped, 'step')} "
                 f"explained in {max(x.seconds for x in found):.0f} s of host time")
    return found


def run(request: LabRequest, out: Console, err: Console) -> int:
    """``kcross lab ARCH --releases ...``: refused, fetched, built, counted, shown, stored,
    explained."""
    arch(request.arch)   # an unknown arch: one line, before anything else
    names = check_options(request)
    checked = jobs.check(request, err)
    stop_on_signals()
    kernels = fetch_kernels(request, names, err)
    payload = jobs.build(request.arch, checked.src, err)
    return counting(request, names, kernels, payload, out, err)
