"""What changed between two profiles of one benchmark (issue 16): the per-op figures, the
functions and the costly instructions, each judged by kcross.judge (exact counts: identical,
or changed by the difference); nothing here decides a verdict itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kcross.judge.categories import Category
from kcross.judge.comparison import compare
from kcross.judge.verdict import Judgement, path_changed
from kcross.lab.profile import EMPTY_LOOP, BenchProfile
from kcross.schema import UNIT_INSTRUCTIONS
from kcross.series import Series
from kcross.sides import Side

# A function or costly instruction under this many per op on both sides is not listed
# (what runs once per batch: the timer's reads, spread over hundreds of operations).
SHOWN_PER_OP = 0.05


@dataclass(frozen=True)
class Changed:
    """One line of a profile difference: what it is, A's and B's figure, the verdict."""

    what: str            # "user", "kernel", "kernel system_call_common", "barrier hwsync ..."
    a: float
    b: float
    judgement: Judgement
    space: str = ""      # a function's or costly instruction's: user or kernel


@dataclass(frozen=True)
class ProfileDiff:
    name: str
    totals: list[Changed]          # total, user, kernel: always listed
    functions: list[Changed]       # changed (or unjudged) ones only
    costly: list[Changed]          # changed (or unjudged) ones only

    @property
    def changed(self) -> bool:
        """A change of the path (kcross.judge.verdict.path_changed) in a total."""
        return any(path_changed(c.judgement) for c in self.totals)


def _side(label: str, rows: Sequence[tuple[str, float]]) -> Side:
    """One profile's figures as a side: a series of one exact count per line."""
    return Side(label=label, single=False, series=tuple(
        Series(source=label, name=what, unit=UNIT_INSTRUCTIONS, samples=(value,))
        for what, value in rows))


def _judged(rows: Sequence[tuple[str, float, float]], labels: tuple[str, str],
            spaces: dict[str, str] | None = None) -> list[Changed]:
    """Each row judged (kcross.judge); the empty loop's line, a count subtracted (shown
    negative), by its size."""
    if not rows:
        return []

    def judged(what: str, v: float) -> float:
        return abs(v) if what.endswith(EMPTY_LOOP) else v

    compared = compare([_side(labels[0], [(what, judged(what, a)) for what, a, _ in rows]),
                        _side(labels[1], [(what, judged(what, b)) for what, _, b in rows])],
                       refuse_values=False)
    return [Changed(what, a, b, row.judgements[1], (spaces or {}).get(what, ""))  # type: ignore[arg-type]
            for (what, a, b), row in zip(rows, compared.rows, strict=True)]


def _listed(j: Judgement) -> bool:
    return path_changed(j) or j.category is Category.UNJUDGED


def diff(a: BenchProfile, b: BenchProfile, labels: tuple[str, str] = ("A", "B")) -> ProfileDiff:
    totals = _judged([("instructions", a.figure, b.figure), ("user", a.user, b.user),
                      ("kernel", a.kernel, b.kernel)], labels)
    fa = {f"{f.space} {f.function}": f.per_op for f in a.functions}
    fb = {f"{f.space} {f.function}": f.per_op for f in b.functions}
    spaces = {f"{f.space} {f.function}": f.space for f in (*a.functions, *b.functions)}
    ca: dict[str, float] = {}
    cb: dict[str, float] = {}
    for side, into in ((a, ca), (b, cb)):
        for c in side.costly:
            key = f"{c.category}: {c.mnemonic} ({c.space} {c.function})"
            into[key] = into.get(key, 0.0) + c.per_op
            spaces[key] = c.space

    def rows(x: dict[str, float], y: dict[str, float]) -> list[tuple[str, float, float]]:
        keys = [k for k in dict.fromkeys([*x, *y])
                if max(abs(x.get(k, 0.0)), abs(y.get(k, 0.0))) >= SHOWN_PER_OP]
        return [(k, x.get(k, 0.0), y.get(k, 0.0)) for k in keys]

    # Listed: what changed (by the rule of a change: the timer's share is none), and what
    # the judge could not judge (with its reason).
    functions = [c for c in _judged(rows(fa, fb), labels, spaces) if _listed(c.judgement)]
    costly = [c for c in _judged(rows(ca, cb), labels, spaces) if _listed(c.judgement)]
    functions.sort(key=lambda c: -abs(c.b - c.a))
    costly.sort(key=lambda c: c.what)
    return ProfileDiff(a.name, totals, functions, costly)
