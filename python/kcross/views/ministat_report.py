"""``kcross compare --format ministat``: what ``ministat -A`` prints for each benchmark's
samples (the plot left out), from kcross.stats's reproduction of ministat's arithmetic
(a mean and Student's t with pooled s: ministat's method, not kcross's verdict); a lab's
instruction counts get no test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import UserError
from ..judge.pairing import pair
from ..schema import UNIT_INSTRUCTIONS
from ..sides import Side
from ..stats import StatsError

MINISTAT_SYMBOLS = "x+*%#@O"


def ministat_text(sides: Sequence[Side], level: float = 95.0) -> tuple[str, list[str]]:
    """What ``ministat -A`` prints for each benchmark's samples (the plot left out), and
    the benchmarks that could not be shown (their reason).

    One block per benchmark; a block is preceded by the benchmark's name when the sides
    are whole runs.  Raises :class:`UserError` when no block could be printed.
    """
    from .. import stats

    if len(sides) > len(MINISTAT_SYMBOLS):
        raise UserError(f"ministat compares at most {len(MINISTAT_SYMBOLS)} data sets, "
                        f"got {len(sides)}")
    pairing = pair(sides)
    blocks, errors = [], []
    for row in pairing.rows:
        present = [(i, s) for i, s in enumerate(row.series) if s is not None]
        try:
            vit = [(i, s, stats.vitals(s.samples)) for i, s in present]
        except StatsError as exc:
            errors.append(f"{row.name}: {exc}")
            continue
        lines = [] if all(s.single for s in sides) else [f"== {row.name}"]
        for i, s, _ in vit:
            lines.append(f"{MINISTAT_SYMBOLS[i]} {s.source}")
        lines.append("    N           Min           Max        Median           Avg        "
                     "Stddev")
        base = vit[0][2]
        for k, (i, _, v) in enumerate(vit):
            lines.append(f"{MINISTAT_SYMBOLS[i]} {v.n:3d} {v.min:13.8g} {v.max:13.8g} "
                         f"{v.median:13.8g} {v.avg:13.8g} {v.stddev:13.8g}")
            if k > 0 and UNIT_INSTRUCTIONS in (vit[0][1].unit, vit[k][1].unit):
                # a lab's instruction counts are compared by value, never tested
                lines.append("Exact counts: no test (kcross compare's table gives the "
                             "difference by value)")
            elif k > 0:
                lines += _relative(stats.student_t(base, v, level))
        blocks.append("\n".join(lines))
    if not blocks:
        raise UserError(errors[0] if len(errors) == 1 else "; ".join(errors))
    return "\n\n".join(blocks) + "\n", errors


def _relative(t: Any) -> list[str]:
    """ministat's own lines, byte for byte as it prints them (its "+/-" too: the point of this
    format is that its output is ministat's; test_ministat.py holds it to the real one)."""
    if not t.significant:
        return [f"No difference proven at {t.level:.1f}% confidence"]
    return [f"Difference at {t.level:.1f}% confidence",
            f"\t{t.difference:g} +/- {t.error:g}",
            f"\t{t.percent:g}% +/- {t.percent_error:g}%",
            f"\t(Student's t, pooled s = {t.pooled_s:g})"]


# benchstat (golang.org/x/perf/cmd/benchstat, v2) -----------------------------------------
#
# The layout: a label column, then per side a group of three columns (center, "± range",
# footnotes) and, for every side after the base, three more (delta, "(p=... n=...)",
# footnotes).  Two header rows: the sources centred over their groups, then the unit over
# each center group and "vs base" over each delta group, boxed by "│".  Column widths grow
# to fit their cells; a header wider than its group widens the group's columns, the
# widest first, the interior columns of a group never (they stay as narrow as their
# contents).  Numbers in a row share one SI prefix and precision, chosen so that the
# smallest value has four significant digits.
