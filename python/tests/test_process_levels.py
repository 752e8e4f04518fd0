"""A run of several harness processes is stored with each benchmark's process level (store
schema 9, kcross.store.writing.process_levels): the level kcross.judge.noise.run_point makes
of its pooled samples, so that the run-to-run noise of the newest runs of a machine is read,
not computed again from their records.  The stored levels give the verdicts the records
give, to the byte; every writer stores them (a live run, an import, a push); a run of one
process has none; a run stored before schema 9 has none and is read from its records."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from conftest import Kcross, query
from kcross.judge.noise import run_point
from kcross.series import series_of_results
from test_noise import BENCH, PROCESSES, edited, imported, noise_finding, runs, shown

LEVELS = "SELECT run_id, suite, name, processes, per_process, log, var FROM process_levels " \
         "ORDER BY run_id, suite, name"


def test_stored_levels_are_run_points_and_give_the_verdicts_of_the_records(
        kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    runs(kcross, db, 5, *PROCESSES)                             # live runs: finish_run
    one = shown(kcross, db, "1")
    copy_id, _ = imported(kcross, db, tmp_path / "c.jsonl", edited(one, later_s=60))  # import
    assert kcross("run", "--processes", "1", "--samples", "9", "--bench", "getppid-inline",
                  "--db", str(db)).returncode == 0             # one process: no level
    levels = query(db, LEVELS)
    assert [row[0] for row in levels] == [1, 2, 3, 4, 5, copy_id]
    for run_id, suite, name, processes, per_process, log, var in levels:
        assert f"{suite}/{name}" == BENCH
        records = shown(kcross, db, str(run_id))
        (series,) = series_of_results(f"run {run_id}", records[0],
                                      [r for r in records if r["type"] == "result"])
        point = run_point(series)
        assert (processes, per_process, log, var) == \
            (series.process_count, series.per_process, point.log, point.var)   # to the bit
    assert query(db, "SELECT count(*) FROM process_levels WHERE processes = 3") == [(6,)]

    def verdicts() -> list[str]:
        outs = []
        for args in (("compare", "4", "5", "--json"), ("compare", "2", "5"),
                     ("check", "5", "--baseline", "1", "--json"),
                     ("history", "getppid-inline"), ("history", "getppid-inline", "--json")):
            proc = kcross(*args, "--db", str(db))
            assert proc.returncode in (0, 1), proc.stderr
            outs.append(proc.stdout)
        return [*outs, json.dumps(noise_finding(kcross, db))]   # sysinfo --readiness's

    stored = verdicts()
    noise = json.loads(stored[0])["rows"][0]["verdict"]["noise"]
    assert noise["source"] == "stored runs of this machine" and noise["from_runs"], noise
    conn = sqlite3.connect(db)
    with conn:   # the noise is the stored levels': moved, it moves
        conn.execute("UPDATE process_levels SET log = log + 0.05 * run_id WHERE run_id < 4")
    moved = verdicts()
    assert moved[0] != stored[0] and moved[3] != stored[3], moved[3]   # compare, history
    with conn:
        conn.execute("DELETE FROM process_levels")   # as a store of runs stored before them
    conn.close()
    assert verdicts() == stored


def test_push_copies_the_levels_and_delete_takes_them(kcross: Kcross, tmp_path: Path) -> None:
    db, other = tmp_path / "k.db", tmp_path / "o.db"
    runs(kcross, db, 2, *PROCESSES)
    assert kcross("push", str(other), "--db", str(db)).returncode == 0
    assert [row[1:] for row in query(other, LEVELS)] == [row[1:] for row in query(db, LEVELS)]
    assert len(query(other, LEVELS)) == 2
    assert kcross("delete", "1", "--db", str(db)).returncode == 0
    assert [row[0] for row in query(db, LEVELS)] == [2]


def test_only_a_complete_run_stores_levels(kcross: Kcross, tmp_path: Path) -> None:
    """Only a complete run feeds the noise: a live run finished otherwise (interrupted,
    failed) stores its results of several processes, and no level."""
    from kcross.store import Store, resolve

    db = tmp_path / "k.db"
    runs(kcross, db, 1, *PROCESSES)
    records = shown(kcross, db, "1")
    store = Store.open(resolve(str(db)), write=True)
    assert store is not None
    try:
        for status in ("interrupted", "failed", "complete"):
            run_id = store.start_run(records[0], records[1], command=["kcross", "run"])
            for seq, record in enumerate(r for r in records if r["type"] == "result"):
                store.add_result(run_id, seq, record)
            store.finish_run(run_id, status)
    finally:
        store.close()
    assert query(db, "SELECT id, status FROM runs") == \
        [(1, "complete"), (2, "interrupted"), (3, "failed"), (4, "complete")]
    assert query(db, "SELECT count(DISTINCT process) FROM results WHERE run_id = 2") == [(3,)]
    levels = query(db, LEVELS)
    assert [row[0] for row in levels] == [1, 4] and levels[0][1:] == levels[1][1:]


def only_process_0(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records, BENCH skipped by every process but the first."""
    return [{**r, "status": "skipped", "reason": "not here", "iters": 0, "samples": [],
             "ticks": [], "overhead": None, "counters": {}, "disturbed": [], "flags": []}
            if r["type"] == "result" and f"{r['suite']}/{r['name']}" == BENCH
            and r.get("process", 0) != 0 else r for r in records]


def test_a_benchmark_one_process_of_several_measured(kcross: Kcross, tmp_path: Path) -> None:
    """Its level is one process's (the median's CI), as run_point makes it: not none (the
    review of schema 9 found history's noise gone and sysinfo's "not known" with it)."""
    db = tmp_path / "k.db"
    runs(kcross, db, 1, *PROCESSES)
    base = shown(kcross, db, "1")
    ids = [imported(kcross, db, tmp_path / f"c{i}.jsonl",
                    only_process_0(edited(base, later_s=60 * (i + 1), scale=scale)))[0]
           for i, scale in enumerate((1.0, 1.01, 0.99, 1.02, 0.98, 1.005))]
    levels = query(db, LEVELS + "")
    assert [row[0] for row in levels] == [1, *ids]
    assert all(row[3:5] == (1, 9) and row[5] is not None for row in levels[1:]), levels

    def outs() -> list[str]:
        got = []
        for args in (("compare", str(ids[-2]), str(ids[-1]), "--json"),
                     ("history", "getppid-inline", "--json"),
                     ("check", str(ids[-1]), "--baseline", str(ids[0]), "--json")):
            proc = kcross(*args, "--db", str(db))
            assert proc.returncode in (0, 1), proc.stderr
            got.append(proc.stdout)
        return [*got, json.dumps(noise_finding(kcross, db))]

    stored = outs()
    assert '"from_runs": []' not in stored[1]
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM process_levels")
    conn.close()
    assert outs() == stored
