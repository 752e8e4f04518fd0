"""The explanation of a changed step (issue 23): why a lab row's count changed between two
sides, by kernel function, costly instruction and kernel configuration.

Two sides of a lab comparison (:class:`Subject`: two kernels, two command lines, two
mechanisms, two builds of the guest programs) were counted; kcross.judge judged each row.
By the rule of a change (kcross.judge.verdict.path_changed), a row that moved by one
instruction per op or more changed its path and is explained; one that moved by less is
the timer's share and is not.  :func:`explain` makes, for the changed rows only, one
profiled counting boot per side (kcross.lab.profile; two at a time, the changed rows'
suites, the row itself when it is one) and returns per row:

- the profile difference (kcross.lab.profile_diff, judged by kcross.judge): the
  instructions, user and kernel per op; the kernel functions that appeared, are gone, grew
  or shrank by one instruction per op or more (the user's too when the user side
  changed); the costly instructions likewise (kcross.lab.costly); what is left, moves under
  one instruction per op each, as one figure;
- the options of kcross.lab.crossing_config whose values differ between the two kernels'
  configurations, each with its reason, or why there is no such comparison (one kernel on
  both sides; a kernel without a configuration found).

Every axis of change takes this one path (kcross.lab.jobs: ``--against``,
``--against-source``, ``--compare --explain``, ``--mitigations --explain``); ``kcross lab
ARCH --releases`` (kcross.lab.series) calls :func:`explain_steps` for every pair of
neighbouring kernels at once, each kernel profiled once.  Shown by
kcross.views.explain (the terminal view and the JSON records).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcross.errors import KcrossError
from kcross.judge.verdict import PATH_STEP, Judgement, path_changed, timer_share
from kcross.lab import crossing_config, kconfig
from kcross.lab.crossing_config import ConfigChange
from kcross.lab.kernel import Kernel
from kcross.lab.machines import Guest
from kcross.lab.payload import Payload
from kcross.lab.profile import USER, BenchProfile, Profiled
from kcross.lab.profile_diff import Changed, diff
from kcross.views.text import counted

APPEARED, GONE, GREW, SHRANK = "appeared", "gone", "grew", "shrank"


@dataclass(frozen=True)
class Subject:
    """What one side of a lab comparison boots: its label, the guest (machine, CPU model,
    command line, kernel file), the kernel, the guest programs, the environment the harness
    runs with and the variant its runs are named by."""

    label: str
    guest: Guest
    kernel: Kernel
    payload: Payload
    env: Mapping[str, str] | None = None
    variant: str | None = None


@dataclass(frozen=True)
class Moved:
    """A function or costly instruction whose count per op changed by one instruction or
    more: it appeared (under one per op on A), is gone (under one on B), grew or shrank."""

    kind: str
    space: str              # user or kernel
    what: str               # the function, or "category: mnemonic (space function)"
    a: float
    b: float
    judgement: Judgement

    @property
    def delta(self) -> float:
        return self.b - self.a


@dataclass(frozen=True)
class ConfigDiff:
    """The options of the crossing's list whose values differ between the two kernels'
    configurations, how many others differ, where each configuration was found; or why
    there is no such comparison (``missing``)."""

    changes: tuple[ConfigChange, ...] = ()
    others: int = 0
    where: tuple[str, str] | None = None
    missing: str | None = None


@dataclass(frozen=True)
class Explanation:
    """Why one row changed between the sides: its verdict (the counting boots'), the
    profiled boots' per-op figures, the functions and costly instructions that moved, the
    rest; or why there is no profile difference (``missing``)."""

    row: str                                # suite/name
    judgement: Judgement                    # the counting boots' verdict: a change of the path
    totals: tuple[Changed, ...] = ()        # instructions, user, kernel (the profiled boots)
    functions: tuple[Moved, ...] = ()
    costly: tuple[Moved, ...] = ()
    rest: float = 0.0                       # the moves not listed (under 1 per op each)
    user_changed: bool = False              # user functions are listed
    missing: str | None = None


@dataclass(frozen=True)
class Explained:
    """The explanation of every changed row between two sides: the rows that moved by the
    timer's share only (named, not explained), the configurations' difference, and the
    host seconds the profiled boots took."""

    labels: tuple[str, str]
    steps: tuple[Explanation, ...]
    config: ConfigDiff
    timer_share: tuple[str, ...] = ()
    seconds: float = 0.0
    profiled: str = ""                   # what the profiled boots ran


# ---------------------------------------------------------------- the rows


def changed_rows(verdicts: Mapping[str, Judgement]) -> list[str]:
    """The rows whose path changed (by one instruction per op or more), in order."""
    return [name for name, j in verdicts.items() if path_changed(j)]


def timer_share_rows(verdicts: Mapping[str, Judgement]) -> list[str]:
    """The rows that moved by the timer's share only (under one instruction per op)."""
    return [name for name, j in verdicts.items() if timer_share(j)]


def selection(rows: Sequence[str], glob: str | None = None) -> tuple[tuple[str, ...], str | None]:
    """What a profiled boot of ``rows`` (suite/name) runs: their suites, and the row itself
    when it is one, else ``glob`` (the --bench the counting boots ran, which took them all).
    The harness's --bench takes one GLOB: several rows without one run their whole suites,
    and only the rows are explained."""
    suites = tuple(dict.fromkeys(r.split("/", 1)[0] for r in rows))
    return suites, (rows[0] if len(rows) == 1 else glob)


# ---------------------------------------------------------------- the configurations


def config_diff(a: Kernel, b: Kernel, arch: str, labels: tuple[str, str] = ("A", "B")
                ) -> ConfigDiff:
    """The crossing's options that differ between the configurations of kernels ``a`` and
    ``b`` (kcross.lab.crossing_config), or why none are compared."""
    if a.path == b.path:
        return ConfigDiff(missing="one kernel on both sides: no configuration differs")
    found = []
    for label, k in zip(labels, (a, b), strict=True):
        text = kconfig.read(k)
        if text is None:
            return ConfigDiff(missing=f"no configuration found for {label}'s kernel {k.path} "
                                      "(config-* beside it, the build tree's .config, "
                                      "CONFIG_IKCONFIG): its options cannot be compared")
        found.append((crossing_config.states(text[0]), text[1]))
    (ca, wa), (cb, wb) = found
    return ConfigDiff(tuple(crossing_config.changes(ca, cb, arch)),
                      crossing_config.others(ca, cb), (wa, wb))


# ---------------------------------------------------------------- one row


def _moves(lines: Sequence[Changed], user: bool) -> list[Moved]:
    """The lines that moved by one instruction per op or more (user ones only when
    ``user``), each with its kind."""
    found = []
    for c in lines:
        if not path_changed(c.judgement) or (c.space == USER and not user):
            continue
        if abs(c.a) < PATH_STEP:
            kind = APPEARED
        elif abs(c.b) < PATH_STEP:
            kind = GONE
        else:
            kind = GREW if abs(c.b) > abs(c.a) else SHRANK
        found.append(Moved(kind, c.space, c.what, c.a, c.b, c.judgement))
    return found


def explain_row(row: str, judgement: Judgement, pa: BenchProfile, pb: BenchProfile,
                labels: tuple[str, str]) -> Explanation:
    """Why ``row`` changed, from its two profiles."""
    d = diff(pa, pb, labels)
    user_changed = path_changed(d.totals[1].judgement)
    functions = _moves(d.functions, user_changed)
    costly = _moves(d.costly, user_changed)
    shown = sum(m.delta for m in functions)
    # A function line of the profile's space is "space name": the listed one's "name".
    moved = tuple(Moved(m.kind, m.space, m.what.split(" ", 1)[1], m.a, m.b, m.judgement)
                  for m in functions)
    return Explanation(row, judgement, tuple(d.totals), moved, tuple(costly),
                       rest=(pb.figure - pa.figure) - shown, user_changed=user_changed)


# ---------------------------------------------------------------- the boots


Boots = Callable[[Sequence[Callable[[], Any]]], list[Any]]
# One step of change: side A, side B, and each row of B judged against A (by suite/name).
Step = tuple[Subject, Subject, Mapping[str, Judgement]]


def explain(a: Subject, b: Subject, verdicts: Mapping[str, Judgement], *, source: Path,
            timeout: float, say: Callable[[str], None], glob: str | None = None,
            boots: Boots | None = None, memo: dict[Any, Any] | None = None) -> Explained:
    """Why each row of ``verdicts`` (B judged against A, by suite/name) whose path changed
    changed: one profiled boot per side of those rows, two at a time (``boots``:
    kcross.lab.boots.parallel_boots), the profile differences and the configurations'.  A
    profiled boot that fails leaves its rows unexplained, with the reason (the counting
    table stands).  ``glob``: the --bench GLOB the counting boots ran (it takes every
    changed row); ``memo``: profiled boots kept by side label and what they ran, for a
    side explained against several (a mitigation table's baseline)."""
    return explain_steps([(a, b, verdicts)], source=source, timeout=timeout, say=say,
                         glob=glob, boots=boots, memo=memo)[0]


def explain_steps(steps: Sequence[Step], *, source: Path, timeout: float,
                  say: Callable[[str], None], glob: str | None = None,
                  boots: Boots | None = None, memo: dict[Any, Any] | None = None
                  ) -> list[Explained]:
    """:func:`explain` of several steps (a release series' neighbouring kernels, each
    release's two sides), their profiled boots made together, two at a time, each running
    what the changed rows of all the steps ask for (:func:`selection`): a side of two steps
    (a kernel between two others) is booted once.  Each step's ``seconds`` is the host time
    of all the boots."""
    from kcross.lab.boots import parallel_boots

    kept = memo if memo is not None else {}
    # One selection for every step: a side of two steps is profiled once whatever rows
    # each step changed.
    every = list(dict.fromkeys(r for _, _, verdicts in steps for r in changed_rows(verdicts)))
    planned = [_plan(step, selection(every, glob)) for step in steps]
    for p in planned:
        if p.keys:
            said = "" if len(steps) == 1 else f" ({p.a.label} → {p.b.label})"
            say(f"kcross lab: explaining {counted(len(p.rows), 'changed row')}{said}: one "
                f"profiled boot per side of {p.ran}...")
    todo: dict[Any, Subject] = {}
    for p in planned:
        for key, s in zip(p.keys, (p.a, p.b), strict=False):
            if key not in kept:
                todo.setdefault(key, s)
    seconds = 0.0
    if any(p.keys for p in planned):
        started = time.monotonic()

        def job(key: Any, s: Subject) -> Callable[[], Profiled]:
            return lambda: _profiled(s, key[1], key[2], source, timeout)

        for key, done in zip(todo, (boots or parallel_boots)(
                [job(k, s) for k, s in todo.items()]), strict=True):
            kept[key] = done
        seconds = time.monotonic() - started
    found = []
    for p in planned:
        labels = (p.a.label, p.b.label)
        if not p.keys:
            found.append(Explained(labels, (), p.config, p.shares))
            continue
        profiles = [kept[k] for k in p.keys]
        found.append(Explained(labels, tuple(_steps(p.a, p.b, p.verdicts, p.rows, profiles)),
                               p.config, p.shares, seconds, p.ran))
    return found


@dataclass(frozen=True)
class _Plan:
    """What one step's explanation needs: its sides, verdicts, changed rows, the
    configurations' difference, the rows of the timer's share, and the profiled boots it
    asks for (each side's key: label, suites, bench; none when no row changed)."""

    a: Subject
    b: Subject
    verdicts: Mapping[str, Judgement]
    rows: list[str]
    config: ConfigDiff
    shares: tuple[str, ...]
    keys: tuple[tuple[str, tuple[str, ...], str | None], ...] = ()
    ran: str = ""


def _plan(step: Step, chosen: tuple[tuple[str, ...], str | None]) -> _Plan:
    """A step's plan, its profiled boots running ``chosen`` (:func:`selection`)."""
    a, b, verdicts = step
    rows = changed_rows(verdicts)
    config = config_diff(a.kernel, b.kernel, a.guest.arch.name, (a.label, b.label))
    shares = tuple(timer_share_rows(verdicts))
    if not rows:
        return _Plan(a, b, verdicts, rows, config, shares)
    suites, bench = chosen
    ran = bench or f"the suite{'' if len(suites) == 1 else 's'} {', '.join(suites)}"
    return _Plan(a, b, verdicts, rows, config, shares,
                 tuple((s.label, suites, bench) for s in (a, b)), ran)


def _steps(a: Subject, b: Subject, verdicts: Mapping[str, Judgement], rows: Sequence[str],
           profiles: Sequence[Any]) -> list[Explanation]:
    """Each changed row's explanation from the two sides' profiled boots (or why none)."""
    labels = (a.label, b.label)
    steps = []
    for row in rows:
        why = next((f"the profiled boot of {s.label} failed: {p}"
                    for s, p in zip((a, b), profiles, strict=True)
                    if isinstance(p, KcrossError)), None)
        if why is not None:
            steps.append(Explanation(row, verdicts[row], missing=why))
            continue
        pa, pb = (p.benches.get(row) for p in profiles)
        if pa is None or pb is None:
            lacking = a if pa is None else b
            steps.append(Explanation(row, verdicts[row], missing=(
                f"{lacking.label}'s profiled boot has no profile of it (skipped or failed)")))
            continue
        steps.append(explain_row(row, verdicts[row], pa, pb, labels))
    return steps


def _profiled(s: Subject, suites: Sequence[str], bench: str | None, source: Path,
              timeout: float) -> Profiled:
    from kcross.lab.profile import prepare, profile_counted

    with tempfile.TemporaryDirectory(prefix="kcross-explain-") as tmp:
        prepared = prepare(s.guest.arch.name, s.kernel, s.payload, source, s.guest.arch.qemu,
                           Path(tmp))
    return profile_counted(s.guest, s.kernel, s.payload, source=source, variant=s.variant,
                           suites=suites, bench=bench, env=s.env, timeout=timeout,
                           prepared=prepared)
