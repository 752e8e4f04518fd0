"""A run of several harness processes: K fresh executions, one after another, each
measuring every benchmark, combined into one run stream.

The combined stream (docs/result-format.md, "Runs of several processes") is the first
process's fingerprint, its plan with ``processes: K``, every process's results each
marked with its ``process`` (0..K-1), and one end record counting them all.  Every
later process must report the same machine configuration (kcross.judge.machine) and
plan the same run as the first.  ``kcross run`` combines live (kcross.run.runner, storing
each result as it arrives); ``kcross aa`` combines whole runs (:func:`combine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import HarnessError
from ..judge.machine import differences, same_machine

PLAN_KEYS = ("benchmarks", "samples", "min_batch_ms", "warmup_ms", "interleave", "cpu")


def check_machine(first: dict[str, Any], other: dict[str, Any], process: int) -> None:
    """A later process must run on the machine configuration of the first."""
    if not same_machine(first, other):
        raise HarnessError(f"harness process {process} reported another machine configuration "
                           f"than process 0 ({', '.join(differences([first, other]))} "
                           "differ): the run's processes must measure one machine")


def check_plan(first: dict[str, Any], other: dict[str, Any], process: int) -> None:
    if any(first.get(k) != other.get(k) for k in PLAN_KEYS):
        raise HarnessError(f"harness process {process} planned another run than process 0: "
                           "the run's processes must run the same benchmarks the same way")


def plan_of(plan: dict[str, Any], processes: int) -> dict[str, Any]:
    return {**plan, "processes": processes} if processes > 1 else plan


def result_of(result: dict[str, Any], process: int, processes: int) -> dict[str, Any]:
    return {**result, "process": process} if processes > 1 else result


def combined_end(ends: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The end record of a run of several processes: counts and time of all of them."""
    end = dict(ends[-1])
    for key in ("ok", "skipped", "failed"):
        end[key] = sum(int(e[key]) for e in ends)
    end["elapsed_s"] = sum(float(e["elapsed_s"]) for e in ends)
    return end


def combine(streams: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The records of K whole harness runs (each fingerprint, plan, results, end) as one
    run stream of K processes."""
    k = len(streams)
    first_fp = first_plan = None
    results: list[dict[str, Any]] = []
    ends: list[dict[str, Any]] = []
    for process, records in enumerate(streams):
        for record in records:
            rtype = record.get("type")
            if rtype == "fingerprint":
                if first_fp is None:
                    first_fp = record
                else:
                    check_machine(first_fp, record, process)
            elif rtype == "plan":
                if first_plan is None:
                    first_plan = record
                else:
                    check_plan(first_plan, record, process)
            elif rtype == "result":
                results.append(result_of(record, process, k))
            elif rtype == "end":
                ends.append(record)
    if first_fp is None or first_plan is None or len(ends) != k:
        raise HarnessError(f"{len(ends)} of {k} harness process(es) ended their run")
    return [first_fp, plan_of(first_plan, k), *results, combined_end(ends)]
