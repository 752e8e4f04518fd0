"""The store at scale (schema 5): a result's samples packed beside its record and read back
exactly; the readers that show figures never validate a record again (it was validated when
written); scripts/bench-store measures every figure."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG, PYTHON_DIR, captured
from kcross.errors import StoreError
from kcross.store import Store, resolve
from kcross.store.packing import pack, unpack
from test_history import QUIET, store_runs


def test_packing_gives_back_the_record_number_for_number() -> None:
    """Integers stay integers (also in a list of floats: ticks are often both), key order
    survives, and what cannot be packed exactly stays in the JSON."""
    records = [r for r in captured() if r["type"] == "result"]
    assert records
    for record in records:
        stripped, packed = pack(record)
        back = unpack(json.loads(json.dumps(stripped)), packed)
        assert json.dumps(back) == json.dumps(record)
    odd = {"type": "result", "samples": [1, 2.5, 3], "ticks": [2**60, 1],
           "overhead": {"samples": [True, 1.0], "ticks": [1.5, 2**60]}, "tail": 1}
    stripped, packed = pack(odd)
    assert stripped["samples"] is None and stripped["ticks"] is None
    assert stripped["overhead"] == {"samples": [True, 1.0], "ticks": [1.5, 2**60]}
    back = unpack(json.loads(json.dumps(stripped)), packed)
    assert json.dumps(back) == json.dumps(odd)
    assert [type(x) for x in back["samples"]] == [int, float, int]
    assert odd["samples"] == [1, 2.5, 3]  # the record given is left as it was
    assert pack({"type": "result", "samples": "x"}) == ({"type": "result", "samples": "x"},
                                                          None)


@pytest.mark.parametrize("packed", [b"\x02", b"\x01\x00\x00\x05\x00\x00\x00\x00"])
def test_damaged_packed_samples_are_one_line(tmp_path: Path, packed: bytes) -> None:
    import sqlite3

    db = tmp_path / "k.db"
    store_runs(tmp_path, str(db))
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE results SET samples = ? WHERE id = 1", (packed,))
    conn.close()
    store = Store.open(resolve(str(db)), write=False)
    assert store is not None
    with pytest.raises(StoreError, match=r"run 1 result .* (format|cut short)"):
        store.load_run(1, check=False)
    with pytest.raises(StoreError, match=r"run 1 result .*edited by hand"):
        store.load_run(1)
    store.close()


def test_figures_are_read_without_validating_again(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Records were validated when they were written: history, compare, report's reads,
    runs and push read them without the schema check (kcross show still checks)."""
    from kcross import schema as schema_module
    from kcross import sides
    from kcross.history import trend as history
    from kcross.judge.comparison import compare
    from kcross.store import records, transfer

    db = str(tmp_path / "k.db")
    store_runs(tmp_path, db)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a record was validated again on a read")

    monkeypatch.setattr(schema_module, "validate", refuse)
    monkeypatch.setattr(records, "validate", refuse)
    store = Store.open(resolve(db), write=False)
    assert store is not None
    trend = history.trend(store, QUIET)
    assert [r.point.run_id for r in trend.rows] == [1, 2, 3, 4, 5]
    assert store.list_runs() and store.list_runs(limit=2)[0].id == 5
    both = sides.load_sides(["latest", "latest~1"], lambda: store)
    assert compare(both).rows
    assert len(store.load_run("latest", check=False).results) == len(
        [r for r in captured() if r["type"] == "result"])
    with pytest.raises(AssertionError, match="validated again"):
        store.load_run("latest")   # kcross show's read checks every record
    dest = Store.open(resolve(str(tmp_path / "copy.db")), write=True)
    assert dest is not None
    copied = transfer.transfer(store, dest, [1, 2])
    assert [c.copied for c in copied] == [True, True]
    dest.close()
    store.close()


def test_a_run_reads_back_with_its_content_hash(tmp_path: Path) -> None:
    """What an import stored (packed) reads back as the capture: the same content hash."""
    from kcross.store.writing import content_hash

    db = str(tmp_path / "k.db")
    store_runs(tmp_path, db)
    store = Store.open(resolve(db), write=False)
    assert store is not None
    for run_id in range(1, 6):
        run = store.load_run(run_id)
        import sqlite3

        conn = sqlite3.connect(tmp_path / "k.db")
        (digest,) = conn.execute("SELECT content_hash FROM runs WHERE id = ?",
                                 (run_id,)).fetchone()
        conn.close()
        assert content_hash([run.fingerprint, run.plan, *run.results, run.end]) == digest
    store.close()


def test_bench_store_prints_every_figure(tmp_path: Path) -> None:
    """scripts/bench-store at a tiny size, both kinds of store (no timing asserted: the
    machine is shared)."""
    script = PYTHON_DIR.parent / "scripts" / "bench-store"
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    env.pop("KCROSS_TEST_POSTGRES_URL", None)
    proc = subprocess.run([sys.executable, str(script), "--runs", "20", "--results", "5",
                           "--processes", "2", "--captures", "6", "--repeat", "1",
                           "--no-postgres", "--dir", str(tmp_path / "b"), "--markdown",
                           "--python", sys.executable],
                          capture_output=True, text=True, env=env, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    figures: dict[str, set[str]] = {}
    for m in re.finditer(r"^(?:sqlite|-)\s+(one|several|-)\s+20x5\s+(\S.*?)\s{2,}", proc.stdout,
                         re.MULTILINE):
        figures.setdefault(m[1], set()).add(m[2])
    each = {"generate", "bytes/run", "runs", "history", "history --last", "compare", "report",
            "show --json", "import", "push->sqlite 20"}
    assert figures == {"-": {"start-up", "start-up+store", "libraries"}, "one": each,
                       "several": each}, proc.stdout
    assert f"# kcross run by {sys.executable}: Python " in proc.stdout
    assert "failed" not in proc.stdout and "| sqlite | one | history |" in proc.stdout
    assert "| sqlite | several | history |" in proc.stdout
