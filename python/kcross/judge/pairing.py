"""Pairing sides benchmark by benchmark: what is compared with what.

The sides (kcross.sides) are matched by benchmark (suite/name); a benchmark missing
from a side is listed, never dropped in silence.  When every side names one benchmark
(RUN:BENCH, FILE:BENCH or a file of numbers) they are compared as they are.  Sides in
different units are refused: time is never compared with instruction counts.  This is
the one place that pairs sides and refuses mixed units (a test checks that no module
outside kcross.judge does either).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import UserError
from ..series import Series
from ..sides import Side


@dataclass
class PairedRow:
    """One benchmark and its series on each side (None: missing there)."""

    name: str
    series: list[Series | None]

    @property
    def compared(self) -> bool:
        """On the base side and on another: a row of the comparison's table."""
        return self.series[0] is not None and any(s is not None for s in self.series[1:])


@dataclass
class Pairing:
    every: list[PairedRow]       # every benchmark with figures on some side, in order
    unit: str
    missing: list[tuple[str, list[str]]] = field(default_factory=list)  # name, sides lacking it

    @property
    def rows(self) -> list[PairedRow]:
        """The table: the benchmarks on the base side and another."""
        return [row for row in self.every if row.compared]


class NothingToCompare(UserError):
    """No benchmark is on the base side and another: a caller may word it its own way."""


def pair(sides: Sequence[Side]) -> Pairing:
    """Match the sides benchmark by benchmark; one benchmark per side is compared as it is.

    The order is the sides', in turn: each side's benchmarks with figures, then those it
    holds without figures (:attr:`Side.unjudged`), each name where it first appears."""
    if all(s.single for s in sides):
        names = [s.series[0].name for s in sides]
        name = names[0] if len(set(names)) == 1 else " vs ".join(dict.fromkeys(names))
        rows = [PairedRow(name, [s.series[0] for s in sides])]
    else:
        single = [s.label for s in sides if s.single]
        if single:
            raise UserError(f"{single[0]} is one benchmark but another side is a whole run: "
                            "name one benchmark on every side (RUN:BENCH), or use --bench")
        order: dict[str, None] = {}
        by_side: list[dict[str, Series]] = []
        for side in sides:
            found = {s.name: s for s in side.series}
            order.update(dict.fromkeys([*found, *side.unjudged]))
            by_side.append(found)
        rows = [PairedRow(n, [found.get(n) for found in by_side]) for n in order]
        rows = [row for row in rows if any(s is not None for s in row.series)]
    pairing = Pairing(every=rows, unit=_common_unit(sides))
    for row in rows:
        lacking = [side.label for side, s in zip(sides, row.series, strict=True) if s is None]
        if lacking:
            pairing.missing.append((row.name, lacking))
    if not pairing.rows:
        raise NothingToCompare(
            "no benchmark is on the base side and another side: nothing to compare"
            + (f" ({_missing_text(pairing.missing)})" if pairing.missing else ""))
    return pairing


def _missing_text(missing: Sequence[tuple[str, list[str]]]) -> str:
    return "; ".join(f"{name} not in {', '.join(lacking)}" for name, lacking in missing[:5]) \
        + ("; ..." if len(missing) > 5 else "")


def _common_unit(sides: Sequence[Side]) -> str:
    """The unit of every side (a run's own, and its series'); plain numbers (no unit) go
    with any unit, two units never: the one refusal of mixed units."""
    units: dict[str, str] = {}
    for side in sides:
        for unit in (side.unit, *(s.unit for s in side.series)):
            if unit:
                units.setdefault(unit, side.label)
    if len(units) > 1:
        (u1, l1), (u2, l2) = list(units.items())[:2]
        raise UserError(f"different units: {l1} is in {u1}, {l2} in {u2}; kcross never "
                        "compares time with instruction counts")
    return next(iter(units), "")
