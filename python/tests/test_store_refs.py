"""Run references (id, latest, latest~N, latest@HOST, tags) and tags, on SQLite and PostgreSQL.

Every test that takes ``store_url`` runs twice: on an SQLite file and on a fresh
PostgreSQL schema (skipped, saying so, without KCROSS_TEST_POSTGRES_URL).
"""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import (
    SCHEMA_8_RUN_COLUMNS,
    SCHEMA_9_INDEX,
    SCHEMA_9_TABLE,
    Kcross,
    assert_one_line_error,
    captured,
    query,
    runs_rows,
)
from kcross.errors import UserError
from kcross.importer import stream_of
from kcross.store import Store, migrations, resolve
from kcross.store.refs import check_tag_name, parse_ref


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store that does not exist yet: an SQLite file, or an empty PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "k.db")
    return str(request.getfixturevalue("pg_schema"))


KEPT = 6  # results of each stored run: enough to see them copied, few to check quickly


def capture(hostname: str, minute: int) -> list[dict[str, Any]]:
    """The captured run cut to its first KEPT results, as if made on ``hostname`` at
    2026-01-01 00:MM: another machine per hostname, another run per time."""
    records = copy.deepcopy(captured())
    fingerprint, plan, end = records[0], records[1], records[-1]
    results = [r for r in records if r["type"] == "result"][:KEPT]
    fingerprint["host"].update(hostname=hostname, time=f"2026-01-01T00:{minute:02d}:00Z")
    plan["benchmarks"] = [{"suite": r["suite"], "name": r["name"]} for r in results]
    end.update({status: sum(r["status"] == status for r in results)
                for status in ("ok", "skipped", "failed")})
    return [fingerprint, plan, *results, end]


def fill(url: str, *runs: tuple[str, int]) -> list[int]:
    """Import one run per (hostname, minute); return their ids."""
    store = Store.open(resolve(url), write=True)
    assert store is not None
    try:
        return [store.import_stream(stream_of(capture(host, minute), f"{host}:{minute}"),
                                    command=["test"]) for host, minute in runs]
    finally:
        store.close()


def opened(url: str) -> Store:
    store = Store.open(resolve(url), write=False)
    assert store is not None
    return store


def test_ref_grammar() -> None:
    assert parse_ref("12").run_id == 12 and parse_ref(12).run_id == 12
    assert (parse_ref("latest").back, parse_ref("latest").host) == (0, None)
    assert (parse_ref("latest~3").back, parse_ref("latest~3").host) == (3, None)
    assert (parse_ref("latest@box").back, parse_ref("latest@box").host) == (0, "box")
    assert (parse_ref("latest~2@3fa9").back, parse_ref("latest~2@3fa9").host) == (2, "3fa9")
    assert parse_ref("base").tag == "base" and parse_ref("latest-good").tag == "latest-good"
    for bad in ("a b", "latest~x", "~1", "@host", "base@host", ""):
        with pytest.raises(UserError, match="run must be a run id, 'latest'"):
            parse_ref(bad)
    for name in ("base", "v6.8-rc1", "x_1.2"):
        assert check_tag_name(name) == name
    for bad, why in (("latest", "already means a run"), ("latest~1", "already means a run"),
                     ("latest@h", "already means a run"), ("1abc", "starts with a letter"),
                     ("a b", "starts with a letter"), ("a@b", "starts with a letter"),
                     ("a" * 65, "at most 64")):
        with pytest.raises(UserError, match=why):
            check_tag_name(bad)


# Text that int() takes but that is not a run id: underscores, signs, other scripts' digits
# (Arabic-Indic, Devanagari, fullwidth), superscripts.
NOT_IDS = ("0_1", "1_0", "+1", "\u0661", "\u0967", "\uff11", "\u00b9", "latest~0_1",
           "latest~\u0661", "latest~+1")


def test_ref_numbers_are_ascii_digits_within_range() -> None:
    for bad in NOT_IDS:
        with pytest.raises(UserError, match="run must be a run id, 'latest'"):
            parse_ref(bad)
    assert parse_ref("007").run_id == 7 and parse_ref("latest~007").back == 7
    assert parse_ref("2147483647").run_id == 2**31 - 1
    assert parse_ref("latest~2147483647").back == 2**31 - 1
    for bad in ("2147483648", "99999999999999999999", "0", "9" * 10_000, "0" * 5000 + "1" * 11):
        with pytest.raises(UserError, match="a run id is a whole number from 1 to 2147483647"):
            parse_ref(bad)
    for bad in ("latest~2147483648", "latest~99999999999999999999", "latest~" + "9" * 10_000,
                "latest~99999999999999999999@host"):
        with pytest.raises(UserError, match="N in latest~N is a whole number from 0 to 2147483647"):
            parse_ref(bad)


def test_hostile_refs_on_the_command_line(kcross: Kcross, store_url: str) -> None:
    """`kcross delete 0_1` deleted run 1; `latest~99999999999999999999` and `latest~<10,000
    digits>` ended in tracebacks (SQLite's integer overflow, Python's digit limit)."""
    fill(store_url, ("alpha", 1))
    db = ["--db", store_url]
    for ref in NOT_IDS:
        for command in ("delete", "show"):
            assert_one_line_error(kcross(command, ref, *db), 2, "run must be a run id")
    assert [r.id for r in opened(store_url).list_runs()] == [1]   # run 1 is still there
    for ref, message in (("latest~99999999999999999999", "N in latest~N is a whole number"),
                         ("latest~" + "9" * 10_000, "N in latest~N is a whole number"),
                         ("9" * 10_000, "a run id is a whole number"),
                         ("latest~2147483647", "no run latest~2147483647 in"),
                         ("0" * 10_000 + "7", "no run 7 in")):
        for command in ("show", "delete", "tag"):
            args = [command, ref, "x"] if command == "tag" else [command, ref]
            line = assert_one_line_error(kcross(*args, *db), 2, message)
            assert len(line) < 300, line
    assert [r.id for r in opened(store_url).list_runs()] == [1]


def test_latest_back_and_per_host(store_url: str) -> None:
    a, b, c = fill(store_url, ("alpha", 1), ("beta", 2), ("alpha", 3))
    store = opened(store_url)
    try:
        assert [store.load_run(ref).id for ref in ("latest", "latest~1", "latest~2")] == [c, b, a]
        assert store.load_run(str(b)).id == b and store.load_run(b).id == b
        assert store.load_run("latest@alpha").id == c
        assert store.load_run("latest~1@alpha").id == a
        assert store.load_run("latest@beta").id == b
        hashes = {r.hostname: r.machine_hash for r in store.list_runs()}
        assert store.load_run(f"latest@{hashes['beta'][:12]}").id == b
        assert store.load_run(f"latest@{hashes['alpha'][:12].upper()}").id == c
        with pytest.raises(UserError, match=r"no run latest~3 in .*: 3 run\(s\) stored, so "
                                            "latest~2 is the oldest"):
            store.load_run("latest~3")
        with pytest.raises(UserError, match=r"2 run\(s\) of host alpha stored, so "
                                            "latest~1@alpha is the oldest"):
            store.load_run("latest~2@alpha")
        with pytest.raises(UserError, match="no machine 'gamma' in .*: no hostname is that "
                                            "and no machine hash starts with it"):
            store.load_run("latest@gamma")
        with pytest.raises(UserError, match="no run 99 in"):
            store.load_run("99")
    finally:
        store.close()


def test_ambiguous_hash_prefix_lists_the_candidates(store_url: str) -> None:
    fill(store_url, ("alpha", 1), ("beta", 2))
    engine = sa.create_engine(store_url if "://" in store_url else f"sqlite:///{store_url}")
    with engine.begin() as conn:  # two machines whose hashes share "abc"
        for host, digest in (("alpha", "abc1" + "0" * 60), ("beta", "abc2" + "0" * 60)):
            conn.execute(sa.text("UPDATE machines SET fingerprint_hash = :d WHERE hostname = :h"),
                         {"d": digest, "h": host})
    engine.dispose()
    store = opened(store_url)
    try:
        with pytest.raises(UserError) as info:
            store.load_run("latest@abc")
        message = str(info.value)
        assert "latest@abc is ambiguous" in message and "2 machines' hashes start with abc" in message
        assert "abc10000 (alpha)" in message and "abc20000 (beta)" in message
        assert store.load_run("latest@abc2").fingerprint["host"]["hostname"] == "beta"
    finally:
        store.close()


def test_tags_name_one_run_and_move(store_url: str) -> None:
    a, b = fill(store_url, ("alpha", 1), ("beta", 2))
    store = Store.open_existing(resolve(store_url))
    try:
        assert store.tag_run("latest~1", "base") == (a, None)
        assert store.tag_run(b, "new") == (b, None)
        assert store.tag_run("base", "also-a") == (a, None)  # a tag is a RUN too
        assert store.load_run("base").id == a
        assert store.tag_run("latest", "base") == (b, a)  # moved, and says from where
        assert store.tag_run(b, "base") == (b, b)
        assert store.load_run("base").id == b
        assert store.tags() == [("also-a", a), ("base", b), ("new", b)]
        assert {r.id: r.tags for r in store.list_runs()} == {a: ("also-a",), b: ("base", "new")}
        assert store.untag("new") == b
        with pytest.raises(UserError, match="no tag 'new' in"):
            store.untag("new")
        with pytest.raises(UserError, match="no run or tag 'new' in"):
            store.load_run("new")
        store.delete_run(b)  # its tags go with it
        assert store.tags() == [("also-a", a)]
        with pytest.raises(UserError, match="no run or tag 'base'"):
            store.load_run("base")
        with pytest.raises(UserError, match="no runs of host beta stored in"):
            store.load_run("latest@beta")  # its machine is still known
    finally:
        store.close()


def test_tag_and_refs_on_the_command_line(kcross: Kcross, store_url: str) -> None:
    db = ["--db", store_url]
    assert_one_line_error(kcross("tag", "latest", "base", *db),
                          contains="no runs stored" if "://" in store_url else "no such file")
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--tag", "base", *db)
    assert proc.returncode == 0, proc.stderr
    assert "run 1 tagged base" in proc.stderr
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--tag", "base", *db)
    assert "run 2 tagged base (moved from run 1)" in proc.stderr
    assert kcross("tag", "1", "first", *db).stdout == "run 1 tagged first\n"
    assert kcross("tag", "latest", "first", *db).stdout == "tag first moved from run 1 to run 2\n"
    assert kcross("tag", "latest~1", "old", *db).stdout == "run 1 tagged old\n"
    assert kcross("tag", *db).stdout.split() == ["base", "run", "2", "first", "run", "2",
                                                 "old", "run", "1"]
    runs = kcross("runs", *db).stdout
    machine_hash = opened(store_url).list_runs()[0].machine_hash
    row = runs_rows(runs)["2"]
    assert row["tags"] == "base first" and row["machine hash"] == machine_hash[:8]
    assert "run 1 ·" in kcross("show", "old", *db).stdout
    hostname = captured()[0]["host"]["hostname"]  # the fake harness's machine
    assert "run 2 ·" in kcross("show", f"latest@{hostname}", *db).stdout
    assert "run 1 ·" in kcross("show", f"latest~1@{machine_hash[:6]}", *db).stdout
    assert kcross("tag", "--delete", "old", *db).stdout == \
        "tag old deleted (it named run 1, which stays)\n"
    assert_one_line_error(kcross("show", "old", *db), contains="no run or tag 'old'")
    assert_one_line_error(kcross("tag", "--delete", "old", *db), contains="no tag 'old'")
    assert_one_line_error(kcross("tag", "9", "x", *db), contains="no run 9")
    assert_one_line_error(kcross("tag", "1", "latest", *db), contains="cannot be a tag")
    assert_one_line_error(kcross("tag", "1", *db), contains="give the tag's NAME")
    assert_one_line_error(kcross("tag", "1", "x", "--delete", "y", *db), contains="not both")
    assert_one_line_error(kcross("show", "latest~2", *db), contains="latest~1 is the oldest")
    assert_one_line_error(kcross("delete", "latest@nohost", *db), contains="no machine 'nohost'")
    # a bad tag is refused before anything runs
    assert_one_line_error(kcross("run", "--quick", "--tag", "no tag", *db),
                          contains="a tag starts with a letter")
    assert [r.id for r in opened(store_url).list_runs()] == [2, 1]
    assert kcross("delete", "base", *db).returncode == 0  # delete takes a RUN too
    assert kcross("tag", *db).stdout == ""


def test_failed_run_is_not_tagged(kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    proc = kcross("run", "--quick", "--suite", "syscall", "--tag", "base", "--db", str(db),
                  extra_env={"KCROSS_FAKE_DIE_AFTER": "1"})
    assert proc.returncode == 3, proc.stderr
    assert query(db, "SELECT id, status FROM runs") == [(1, "failed")]
    assert query(db, "SELECT count(*) FROM tags") == [(0,)]


def _as_v2(path: Path) -> None:
    """Turn a current SQLite store into what schema 2 left: no tags table (nor schema 7's
    noise_exclusions), the samples in
    the records (schema 5 packs them apart), no schema 5 columns and indexes (the results'
    process column stays: schema 4 rebuilds that table without it first)."""
    import json

    from kcross.store.packing import unpack

    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE tags")
        conn.execute("DROP TABLE noise_exclusions")
        conn.execute(f"DROP TABLE {SCHEMA_9_TABLE}")
        conn.execute(f"DROP INDEX {SCHEMA_9_INDEX}")
        for column in SCHEMA_8_RUN_COLUMNS:
            conn.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        rows = conn.execute("SELECT id, record, samples FROM results").fetchall()
        for row_id, record, packed in rows:
            conn.execute("UPDATE results SET record = ? WHERE id = ?",
                         (json.dumps(unpack(json.loads(record), packed)), row_id))
        for index in ("ix_results_name", "ix_runs_machine_id"):
            conn.execute(f"DROP INDEX {index}")
        for column in ("samples", "overhead_ns", "subtracted", "overhead_reason"):
            conn.execute(f"ALTER TABLE results DROP COLUMN {column}")
        conn.execute("UPDATE kcross_schema SET version = 2")
    conn.close()


def test_schema_2_store_is_upgraded_by_tag(kcross: Kcross, stored_db: Path) -> None:
    _as_v2(stored_db)
    line = assert_one_line_error(kcross("show", "--db", str(stored_db)),
                                 contains="has schema version 2; it is upgraded to "
                                          f"{migrations.LATEST}")
    assert "'tag'" in line
    assert kcross("tag", "1", "base", "--db", str(stored_db)).returncode == 0
    assert query(stored_db, "SELECT version FROM kcross_schema") == [(migrations.LATEST,)]
    assert query(stored_db, "SELECT name, run_id FROM tags") == [("base", 1)]
    assert "syscall/getcpu-vdso" in kcross("show", "base", "--db", str(stored_db)).stdout
