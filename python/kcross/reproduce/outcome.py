"""Each experiment's outcome from the measurements: per place (natively, each lab) its
figures beside the published ones, and our own changes judged by kcross.judge.

A published figure against ours is not a test (another machine, often another unit): the
row carries both, and their ratio only where both are of one kind (instructions against
instructions, time against time; cycles against instructions has none, and the row says
so), and the experiment says what differs.  Two figures of
ours are compared only by :func:`kcross.judge.comparison.compare_together` (exact counts
by value, timings over their processes; Holm across the experiment's changes), never here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kcross import fingerprint as fields
from kcross.judge.verdict import Judgement
from kcross.reproduce.experiments import DEFAULT, NATIVE, Experiment, Figure, Ours
from kcross.reproduce.measure import Measured
from kcross.series import Series
from kcross.sides import Side

NOT_PROFILED = ("no figure of the lab profile's (--profile): printed by kcross reproduce, "
                "never stored")


@dataclass(frozen=True)
class Cell:
    """Our figure for one published figure in one place, or why there is none."""

    value: float | None
    unit: str
    bench: str | None
    status: str                  # ok, skipped, failed, not measured
    reason: str = ""
    run_id: int | None = None
    mechanism: str | None = None
    variant: str = DEFAULT

    @property
    def text_reason(self) -> str:
        return self.reason or self.status


@dataclass(frozen=True)
class FigureRow:
    """A published figure and ours beside it, in one place."""

    figure: Figure
    cell: Cell
    ratio: float | None          # ours / published, when both are figures of one kind
    no_ratio: str = ""           # why there is no ratio although both are figures

    @property
    def published(self) -> float | None:
        return self.figure.published


@dataclass(frozen=True)
class ChangeRow:
    """A change A → B: as published (a change published as such, or the two published
    figures), and ours judged by kcross.judge."""

    a: str                       # figure labels
    b: str
    published: str               # the change as published ("" where figures were)
    judgement: Judgement | None
    reason: str = ""             # why ours is not judged
    figures: tuple[float, float] | None = None    # the published A and B, when both are
    unit: str = ""               # the published figures' unit
    ours: str = ""               # the unit of ours (the place's)

    @property
    def across(self) -> bool:
        """The published figures and ours are of different kinds (cycles or time against
        instructions): their ratios are not to be set side by side (a change published as
        such is as it was published)."""
        return self.figures is not None and not self.published and \
            unit_kind(self.unit) != unit_kind(self.ours)

    @property
    def reverses(self) -> bool:
        """Ours, of another kind, changed the other way from the published figures (an
        atomic is one instruction and many cycles: a count does not rank times)."""
        j = self.judgement
        if not self.across or self.figures is None or j is None or not j.category.changed \
                or j.median_a is None or j.median_b is None:
            return False
        published_a, published_b = self.figures
        return published_a != published_b and \
            (published_b < published_a) != (j.median_b < j.median_a)


@dataclass(frozen=True)
class Place:
    """Where one experiment's figures were measured: natively or one lab."""

    name: str                    # NATIVE or a lab arch
    machine: str                 # the CPU, kernel and emulator, in one line
    unit: str
    rows: tuple[FigureRow, ...]
    changes: tuple[ChangeRow, ...]
    ministat: tuple[Side, ...] = ()
    runs: tuple[int, ...] = ()


@dataclass(frozen=True)
class Outcome:
    experiment: Experiment
    places: tuple[Place, ...]
    missing: tuple[str, ...] = field(default=())   # places not measured, and why


def _merged(m: Measured) -> dict[str, dict[str, Any]]:
    from kcross.series import bench_name, merge_results

    return {bench_name(r): r for r in merge_results(m.results)}


def _machine(m: Measured) -> str:
    fp = m.fingerprint
    model = str(fields.CPU_MODEL.of(fp) or "?")
    release = str(fields.KERNEL_RELEASE.of(fp) or "?")
    if fields.lab(fp) is not None:
        version = fields.LAB_KERNEL_VERSION.of(fp)
        return (f"{fields.LAB_EMULATOR.of(fp)} {fields.LAB_EMULATOR_VERSION.of(fp) or ''} TCG "
                f"-icount, {fields.LAB_MACHINE.of(fp)}, -cpu {fields.LAB_CPU.of(fp)}, "
                f"Linux {release}{' (Debian ' + str(version) + ')' if version else ''}: "
                "instructions, not cycles").replace("  ", " ")
    where = ""
    if fields.HYPERVISOR_FLAG.of(fp):
        hypervisor = fields.HYPERVISOR_TYPE.of(fp)
        where = f", a {hypervisor} VM" if hypervisor else ", a VM"
    return f"{model}{where}, Linux {release}: this machine, ns/op"


def _syscall_path(measured: Sequence[Measured]) -> str:
    """The syscall mechanism kcross's selected path took in each boot or run."""
    said = []
    for m in measured:
        mechanism = fields.SYSCALL_MECHANISM.of(m.fingerprint)
        if mechanism:
            said.append(f"{mechanism}" if m.variant == DEFAULT else f"{mechanism} [{m.variant}]")
    return f"; kcross's selected syscall path: {', '.join(dict.fromkeys(said))}" if said else ""


def _ours_for(figure: Figure, place: str, arch: str) -> Ours | None:
    for o in figure.ours:
        if o.arch not in (None, arch):
            continue
        if place == NATIVE and o.variant != DEFAULT:
            continue
        return o
    return None


class _Runs:
    """The measurements of one place, by variant, and their records by benchmark."""

    def __init__(self, measured: Sequence[Measured]) -> None:
        self.by_variant: dict[str, list[tuple[Measured, dict[str, dict[str, Any]]]]] = {}
        for m in measured:
            self.by_variant.setdefault(m.variant, []).append((m, _merged(m)))

    def find(self, variant: str, bench: str) -> tuple[Measured, dict[str, Any]] | None:
        for m, records in self.by_variant.get(variant, []):
            if bench in records:
                return m, records[bench]
        return None

    def series(self, variant: str, bench: str) -> Series | None:
        from kcross.series import series_of_results

        found = self.find(variant, bench)
        if found is None:
            return None
        m, record = found
        for s in series_of_results(f"{m.label}: {bench}", m.fingerprint, [record],
                                   run=f"{m.label} ({m.run_id or id(m)})"):
            return s
        return None


def _cell(runs: _Runs, place: str, arch: str, figure: Figure, unit: str,
          failed: Mapping[str, str]) -> Cell:
    from kcross import stats

    ours = _ours_for(figure, place, arch)
    if ours is None:
        why = "no such benchmark on " + arch if figure.ours else "not a benchmark"
        return Cell(None, unit, None, "not measured", why)
    if ours.variant not in runs.by_variant:
        return Cell(None, unit, ours.bench, "not measured",
                    failed.get(ours.variant) or f"no {ours.variant} boot", variant=ours.variant)
    found = runs.find(ours.variant, ours.bench)
    if found is None:
        return Cell(None, unit, ours.bench, "not measured", "not in the runs",
                    variant=ours.variant)
    m, record = found
    mechanism = record.get("mechanism")
    if record.get("status") != "ok":
        return Cell(None, unit, ours.bench, str(record.get("status")),
                    str(record.get("reason") or ""), m.run_id, variant=ours.variant)
    try:
        value = stats.summarize_record(record).median
    except stats.StatsError as exc:
        return Cell(None, unit, ours.bench, "not measured", str(exc), m.run_id,
                    variant=ours.variant)
    return Cell(value, str(record.get("unit") or unit), ours.bench, "ok", "", m.run_id,
                str(mechanism) if mechanism else None, ours.variant)


def _profiled(runs: _Runs, place: str, arch: str, figure: Figure) -> Cell:
    """A figure of the lab profile's (kernel instructions per op): what the boot's
    profile gave (kcross.reproduce.measure.profile_kernel_instructions), or why none."""
    ours = _ours_for(figure, place, arch)
    found = runs.find(ours.variant, ours.bench) if ours is not None else None
    value = None if found is None or ours is None or place == NATIVE else \
        found[0].profile.get(ours.bench)
    if value is None:
        error = found[0].profile_errors.get(ours.bench) if found and ours else None
        return Cell(None, "instructions/op", ours.bench if ours else None, "not measured",
                    error or NOT_PROFILED)
    return Cell(value, "instructions/op", ours.bench if ours else None, "ok",
                run_id=found[0].run_id if found else None)


def unit_kind(unit: str) -> str:
    """What a unit measures, per operation or not: cycles, instructions, or time (ns and
    s are both time, but a whole loop's seconds are not one iteration's: see
    Experiment.ratio)."""
    u = unit.strip().lower().removesuffix("/op").strip()
    if u in ("cycle", "cycles"):
        return "cycles"
    if u in ("instruction", "instructions", "insn", "insns"):
        return "instructions"
    if u in ("ns", "us", "ms", "s"):
        return "time"
    return u


def _ratio(e: Experiment, f: Figure, cell: Cell) -> tuple[float | None, str]:
    """Ours / published only where both are of one kind (instructions against
    instructions, time against time); otherwise none, and why."""
    if cell.value is None or not f.published:
        return None, ""
    published, ours = f.unit or e.unit, cell.unit
    if unit_kind(published) != unit_kind(ours):
        def said(unit: str) -> str:
            kind = unit_kind(unit)
            return unit.strip().removesuffix("/op") if kind == "time" else kind

        return None, f"{said(published)} vs {said(ours)}: no ratio"
    if not e.ratio:
        return None, "a whole loop vs one iteration: no ratio"
    return cell.value / f.published, ""


def _one_value_per_process(s: Series) -> Series:
    """ministat's data points as published (one per run of the test): each harness
    process's median, where the run has several processes (each is one observation of
    the run); a lab boot's samples as they are (one process: exact counts)."""
    import dataclasses

    from kcross import stats

    if s.process_count < 2:
        return s
    medians = stats.process_medians(s.by_process())
    return dataclasses.replace(s, source=f"{s.source} (the median of each of "
                               f"{len(medians)} processes)", samples=tuple(medians),
                               processes=None)


def place_outcome(e: Experiment, place: str, measured: Sequence[Measured],
                  failed: Mapping[str, str] | None = None) -> Place:
    """``failed``: boots of this place that failed, by variant, with their error."""
    from dataclasses import replace

    from kcross.judge.comparison import compare_together

    runs = _Runs(measured)
    first = measured[0]
    arch = first.arch
    unit = str((first.results[0].get("unit") if first.results else None)
               or ("instructions/op" if first.where != NATIVE else "ns/op"))
    rows = []
    for f in e.figures:
        if f.key == e.profile:
            cell = _profiled(runs, place, arch, f)
        else:
            cell = _cell(runs, place, arch, f, unit, failed or {})
        ratio, why = _ratio(e, f, cell)
        rows.append(FigureRow(f, cell, ratio, why))
    changes: list[ChangeRow] = []
    pairs: list[tuple[int, list[Side]]] = []
    for c in e.changes:
        fa, fb = e.figure(c.a), e.figure(c.b)
        oa, ob = _ours_for(fa, place, arch), _ours_for(fb, place, arch)
        sa = runs.series(oa.variant, oa.bench) if oa else None
        sb = runs.series(ob.variant, ob.bench) if ob else None
        figures = (fa.published, fb.published) \
            if fa.published is not None and fb.published is not None else None
        row = ChangeRow(fa.label, fb.label, c.published or "", None, figures=figures,
                        unit=fa.unit or e.unit, ours=unit)
        if sa is None or sb is None:
            changes.append(replace(row, reason="not measured here (a side skipped or not run)"))
            continue
        pairs.append((len(changes), [Side(label=fa.key, series=(sa,), single=True),
                                     Side(label=fb.key, series=(sb,), single=True)]))
        changes.append(row)
    # our changes judged together (Holm across the experiment's changes at this place)
    compared = compare_together([sides for _, sides in pairs], refuse_values=False)
    for (index, _), comparison in zip(pairs, compared, strict=True):
        changes[index] = replace(changes[index], judgement=comparison.rows[0].judgements[1])
    ministat: list[Side] = []
    for key in e.ministat:
        o = _ours_for(e.figure(key), place, arch)
        s = runs.series(o.variant, o.bench) if o else None
        if s is not None:
            s = _one_value_per_process(s)
            ministat.append(Side(label=s.name, series=(s,), single=True,
                                 fingerprint=s.fingerprint))
    ids = tuple(sorted({r.cell.run_id for r in rows if r.cell.run_id is not None}))
    return Place(place, _machine(first) + _syscall_path(measured), unit, tuple(rows), tuple(changes),
                 tuple(ministat) if len(ministat) == len(e.ministat) else (), ids)


def outcomes(experiments: Sequence[Experiment], measured: Sequence[Measured],
             skipped: Mapping[str, str] | None = None,
             failed: Mapping[tuple[str, str], str] | None = None) -> list[Outcome]:
    """Each experiment at each place it has measurements for (natively first, then the
    labs in the experiment's order); ``skipped``: places not measured, with why;
    ``failed``: boots that failed, by (arch, variant), with their error (the rows they
    measure say it; a failed default boot: the place is not measured, with it)."""
    found = []
    for e in experiments:
        places: list[Place] = []
        missing: list[str] = []
        wanted = ([NATIVE] if e.native else []) + list(e.labs)
        for where in wanted:
            ms = [m for m in measured if m.where == where and m.variant in
                  ((DEFAULT, *e.variants(where)) if where != NATIVE else (DEFAULT,))]
            if not any(m.variant == DEFAULT for m in ms) and where != NATIVE:
                ms = []
            here = {v: why for (a, v), why in (failed or {}).items() if a == where}
            if ms:
                ms.sort(key=lambda m: m.variant != DEFAULT)
                places.append(place_outcome(e, where, ms, here))
            else:
                why = here.get(DEFAULT) or (skipped or {}).get(where, "not measured")
                missing.append(f"{where}: {why}")
        found.append(Outcome(e, tuple(places), tuple(missing)))
    return found
