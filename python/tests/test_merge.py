"""A run of several processes as one record per benchmark (kcross.series.merge_results):
what each process measured pooled in process order, nothing counted twice or lost."""

from __future__ import annotations

from typing import Any

import pytest
from kcross.series import merge_results
from kcross.stats import PROCESS_OF_SAMPLE


def rec(process: int, status: str = "ok", *, samples: list[float] | None = None,
        disturbed: list[int] | None = None, csw: int = 0, iters: int = 100,
        flags: list[str] = (), reason: str | None = None) -> dict[str, Any]:  # type: ignore[assignment]
    samples = samples if samples is not None else [10.0 + process, 11.0 + process]
    ok = status == "ok"
    return {"type": "result", "schema": 2, "suite": "s", "name": "x", "status": status,
            "reason": reason, "process": process, "iters": iters,
            "samples": samples if ok else [], "ticks": [x * 3 for x in samples] if ok else [],
            "overhead": {"samples": [0.5] * len(samples), "ticks": [1.5] * len(samples)}
            if ok else None,
            "disturbed": disturbed or [], "elapsed_s": 0.25,
            "counters": {"context-switches": {"total": csw, "per_op": None, "scaled": False}}
            if ok else {},
            "flags": [{"flag": f, "detail": "d"} for f in flags]}


def test_samples_ticks_and_disturbed_indices_pooled_in_process_order() -> None:
    (m,) = merge_results([rec(1, disturbed=[1]), rec(0, disturbed=[0])])
    assert m["samples"] == [10.0, 11.0, 11.0, 12.0]
    assert m["ticks"] == [30.0, 33.0, 33.0, 36.0]
    assert m[PROCESS_OF_SAMPLE] == [0, 0, 1, 1] and m["processes"] == 2
    assert m["disturbed"] == [0, 3]                    # process 1's sample 1 is pooled 3
    assert m["overhead"]["samples"] == [0.5] * 4 and m["elapsed_s"] == 0.5
    assert "process" not in m


def test_counters_summed_and_per_op_over_every_operation() -> None:
    """Totals add up; per_op is the total over all operations (iters x samples), not a
    mean of the processes' own per_op."""
    (m,) = merge_results([rec(0, csw=4, iters=100), rec(1, csw=2, iters=50)])
    counter = m["counters"]["context-switches"]
    assert counter["total"] == 6
    assert counter["per_op"] == pytest.approx(6 / (100 * 2 + 50 * 2))


def test_skipped_in_some_processes_is_ok_and_says_where() -> None:
    (m,) = merge_results([rec(0), rec(1, "skipped", reason="no SMT sibling"), rec(2)])
    assert m["status"] == "ok" and m["reason"] == "measured in 2 of 3 processes"
    assert m[PROCESS_OF_SAMPLE] == [0, 0, 2, 2]


def test_failed_in_one_process_fails_the_benchmark() -> None:
    (m,) = merge_results([rec(0), rec(1, "failed", reason="check failed: sum 3 != 4")])
    assert m["status"] == "failed" and m["samples"] == []
    assert m["reason"] == "check failed: sum 3 != 4 (process 1 of 2)"


def test_skipped_everywhere_keeps_the_reason() -> None:
    (m,) = merge_results([rec(0, "skipped", reason="no rseq"), rec(1, "skipped", reason="no rseq")])
    assert m["status"] == "skipped" and m["reason"] == "no rseq"


def test_flags_once_each_with_how_many_processes_raised_them() -> None:
    (m,) = merge_results([rec(0, flags=["batches-disagree"]), rec(1),
                          rec(2, flags=["batches-disagree"])])
    (flag,) = m["flags"]
    assert flag["flag"] == "batches-disagree" and flag["detail"] == "d (in 2 of 3 processes)"


def test_ticks_dropped_when_a_process_has_none() -> None:
    """Ticks pooled only when every sample has one: never misaligned with the samples."""
    bare = rec(1)
    bare["ticks"] = []
    (m,) = merge_results([rec(0), bare])
    assert m["ticks"] == [] and len(m["samples"]) == 4


def test_one_process_is_its_record_unchanged() -> None:
    single = rec(0)
    (m,) = merge_results([single])
    assert m == single
