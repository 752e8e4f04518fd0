"""One engine for interleaved rounds: ``kcross ab``, ``aa`` and ``crosscheck`` are its clients.

On a machine whose speed drifts (a VM most of all), two things measured one after the
other differ by the drift as well as by what they are.  In rounds, each side runs once
per round and the side that goes first alternates round by round, so drift between
rounds hits every side of a round alike (it cancels in the round's ratio) and drift
within a round favours each side equally often.  The engine only orders and runs: what
a side measures and how the rounds are judged is its client's (kcross.judge judges).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Round(Generic[T]):
    """One round: each side's result, and the order the sides ran in."""

    number: int                 # 1-based
    order: tuple[str, ...]      # the sides' labels, first to run first
    results: dict[str, T]

    @property
    def first(self) -> str:
        return self.order[0]

    def __getitem__(self, label: str) -> T:
        return self.results[label]


def interleave(sides: Sequence[tuple[str, Callable[[], T]]], rounds: int, *,
               on_round: Callable[[Round[T]], None] | None = None) -> list[Round[T]]:
    """``rounds`` rounds of every side, the order reversed every other round (A B, B A...)."""
    labels = [label for label, _ in sides]
    measure = dict(sides)
    if len(measure) != len(labels):
        raise ValueError(f"side labels must differ: {labels}")
    done: list[Round[T]] = []
    for i in range(rounds):
        order = tuple(labels if i % 2 == 0 else labels[::-1])
        results = {label: measure[label]() for label in order}
        found = Round(number=i + 1, order=order, results=results)
        done.append(found)
        if on_round is not None:
            on_round(found)
    return done
