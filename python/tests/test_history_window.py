"""``kcross history``'s window: the newest runs shown by default, what was left out said,
the Holm family the changes shown, and the work the window's, not the store's.

A store of 30 runs of the captured real run (the fake harness's records) on two hosts,
an hour apart, their samples scaled a little run by run.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import Kcross, captured
from test_check import edited, write
from test_history import QUIET, RUN, VS, rows_of

RUNS = 30


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kcross.importer import import_file
    from kcross.store import Store, resolve

    root = tmp_path_factory.mktemp("window")
    db = str(root / "k.db")

    def open_store() -> Store:
        store = Store.open(resolve(db), write=True)
        assert store is not None
        return store

    for i in range(1, RUNS + 1):
        records = edited(captured(), scale=1 + 0.01 * ((i * 7) % 5),
                         time=f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
                         hostname="vm" if i % 3 else "other")
        assert import_file(open_store, write(root / f"{i}.jsonl", records)).run_id == i
    return root / "k.db"


@pytest.fixture
def db(template: Path, tmp_path: Path) -> str:
    path = tmp_path / "k.db"
    shutil.copyfile(template, path)
    return str(path)


def test_the_newest_runs_are_shown_and_what_was_left_out_is_said(kcross: Kcross,
                                                                   db: str) -> None:
    proc = kcross("history", QUIET, "--last", "5", "--db", db)
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(proc.stdout)
    assert [r[RUN] for r in rows] == ["26", "27", "28", "29", "30"]
    # the first of each host is compared with that host's run before the window
    assert [r[VS] for r in rows[:2]] == ["run 25", "run 24"]
    assert proc.stderr.strip() == (f"the newest 5 of {RUNS} runs holding {QUIET} shown; "
                                   "--last N or --all for more")
    assert "(5 changes shown)" in proc.stdout
    # the default window (50) holds the whole store: nothing said
    every = kcross("history", QUIET, "--db", db)
    assert len(rows_of(every.stdout)) == RUNS and every.stderr == ""
    assert kcross("history", QUIET, "--all", "--db", db).stdout == every.stdout
    # --json says it on stderr too, its stdout JSON only
    proc = kcross("history", QUIET, "--last", "3", "--json", "--db", db)
    assert "the newest 3 of 30 runs" in proc.stderr
    assert '"run": 28' in proc.stdout and '"run": 27' not in proc.stdout


def test_all_and_last_exclude_each_other(kcross: Kcross, db: str) -> None:
    proc = kcross("history", QUIET, "--all", "--last", "3", "--db", db)
    assert proc.returncode == 2 and "not allowed with argument" in proc.stderr


def _trend(db: str, last: int | None) -> Any:
    from kcross.history import trend as history
    from kcross.store import Store, resolve

    store = Store.open(resolve(db), write=False)
    assert store is not None
    try:
        return history.trend(store, QUIET, last=last)
    finally:
        store.close()


def test_the_holm_family_is_the_changes_shown(db: str) -> None:
    from kcross import stats

    for last in (4, 12):
        t = _trend(db, last)
        changes = [r.change for r in t.rows if r.change is not None]
        assert t.compared == len(changes) == last
        raw = [j.p for j in changes]
        assert all(p is not None for p in raw)
        assert [j.p_adjusted for j in changes] == pytest.approx(stats.holm(raw))  # type: ignore[arg-type]
    # the same change, judged in a larger family, gets a larger adjusted p
    small = {r.point.run_id: r.change for r in _trend(db, 4).rows}
    large = {r.point.run_id: r.change for r in _trend(db, 12).rows}
    assert small[30].p == pytest.approx(large[30].p)  # type: ignore[union-attr]
    assert large[30].p_adjusted >= small[30].p_adjusted  # type: ignore[union-attr,operator]


def test_the_noise_is_the_machines_whole_history_whatever_the_window(db: str) -> None:
    narrow, wide = _trend(db, 5), _trend(db, None)
    noise = {(n.name, n.machine): (n.noise, n.runs) for n in wide.noise}
    for n in narrow.noise:
        assert (n.noise, n.runs) == noise[(n.name, n.machine)]
    assert {n.runs for n in narrow.noise} == {10, 20}  # every run of each host


def test_no_result_record_outside_the_window_is_read(db: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from kcross.store import records

    read: list[str] = []
    original = records.stored_record

    def counting(value: Any, where: str, rtype: str, **kw: Any) -> Any:
        if rtype == "result":
            read.append(where)
        return original(value, where, rtype, **kw)

    monkeypatch.setattr(records, "stored_record", counting)
    t = _trend(db, 5)
    assert [r.point.run_id for r in t.rows] == [26, 27, 28, 29, 30]
    runs = {int(w.split(" run ")[1].split()[0]) for w in read}
    # the window's 5, and each host's run before it (the first shown one's previous)
    assert runs == {24, 25, 26, 27, 28, 29, 30}
    assert len(read) == len(runs)  # one result (the benchmark's) per run
    read.clear()
    _trend(db, None)
    assert len(read) == RUNS  # the counter counts: every run read when all are shown
