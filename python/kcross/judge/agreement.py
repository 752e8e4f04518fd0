"""Whether a peer program's figure agrees with kcross's for the same operation (issue 16).

A peer (the kernel's own selftests in a lab guest) measures the same operation by another
program: not a change between A and B, so not a verdict of :mod:`kcross.judge.verdict`,
but a judgement all the same, made here and worded here.  Lab figures are exact counts:
no test, no p-value; the two loops differ by what each includes (its loop, a timer
tick's share, a wrapper), so they agree when they differ by at most a stated tolerance,
relative to kcross's figure.  A pass/fail peer agrees when both sides passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Agreement(Enum):
    AGREE = "agree"
    DIFFER = "differ"
    UNJUDGED = "not judged"


@dataclass(frozen=True)
class Judged:
    """One peer row's agreement, with the figures it was judged on."""

    agreement: Agreement
    statement: str                  # one line: what was compared, the difference, the tolerance
    difference: float | None = None     # peer - kcross (instructions per op)
    relative: float | None = None       # difference / kcross
    tolerance: float | None = None      # relative

    def as_json(self) -> dict[str, object]:
        return {"agreement": self.agreement.value, "statement": self.statement,
                "difference": self.difference, "relative": self.relative,
                "tolerance": self.tolerance}


def figures(peer: float | None, ours: float | None, tolerance: float, unit: str) -> Judged:
    """The peer's figure against kcross's (exact counts): agree within ``tolerance``
    (relative to kcross's), else differ; not judged when either is missing."""
    if peer is None or ours is None or ours <= 0:
        missing = "the peer's" if peer is None else "kcross's"
        return Judged(Agreement.UNJUDGED, f"not judged: no figure of {missing}")
    difference = peer - ours
    relative = difference / ours
    agreement = Agreement.AGREE if abs(relative) <= tolerance else Agreement.DIFFER
    statement = (f"{agreement.value}: {difference:+.1f} {unit} ({relative:+.1%}), "
                 f"{'within' if agreement is Agreement.AGREE else 'beyond'} "
                 f"the tolerance of {tolerance:.0%}")
    return Judged(agreement, statement, difference, relative, tolerance)


def checks(peer_passed: bool, ours_ok: bool | None, what: str) -> Judged:
    """A pass/fail peer (its own checks) against kcross's row (``ok`` after the harness's
    own check of the operation's result): agree when both passed."""
    if ours_ok is None:
        return Judged(Agreement.UNJUDGED, "not judged: kcross's row was not counted")
    if peer_passed and ours_ok:
        return Judged(Agreement.AGREE, f"agree: both pass ({what})")
    side = "the peer fails" if not peer_passed else "kcross's row is not ok"
    if not peer_passed and not ours_ok:
        side = "both fail"
    return Judged(Agreement.DIFFER, f"differ: {side} ({what})")
