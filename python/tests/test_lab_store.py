"""Lab results in the store: a run counted in a QEMU guest (fingerprint.lab, unit
instructions/op) is validated, stored as source "lab" on a machine of its own, shown with
its unit and its emulation, and never mixed with wall-clock runs."""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, Kcross, assert_one_line_error, captured, query, run_table, runs_rows
from kcross import fingerprint as fields
from kcross import importer
from kcross.errors import SchemaError, UserError
from kcross.fingerprint import identity as machine_identity
from kcross.schema import (
    IMPORT_VERSIONS,
    UNIT_INSTRUCTIONS,
    RunStream,
    parse_line,
    validate,
)
from kcross.stats import summarize_record
from kcross.store import DuplicateImport, Store, resolve
from kcross.views import fingerprint
from kcross.views import run as render
from kcross.views.table import Table, terminal
from kcross.views.text import in_unit
from kcross.views.text import ns as format_ns
from rich.console import Console

EMULATED = "emulated (QEMU TCG, icount): instruction counts, not time"
GUEST_TIME = "2024-01-01T00:00:03Z"  # -rtc base=2024-01-01,clock=vm: the guest's fixed date


def lab_object(**changes: Any) -> dict[str, Any]:
    lab = {
        "mode": "counting", "unit": "instructions/op",
        "emulator": "qemu-system-ppc64", "emulator_version": "7.2.11",
        "accel": "tcg", "icount": "shift=0,align=off,sleep=off", "seed": 1,
        "machine": "pseries,x-vof=on", "cpu": "power9", "smp": 1,
        "kernel": {"source": "debian", "package": "linux-image-6.1.0-28-powerpc64le",
                   "version": "6.1.119-1", "path": "/cache/kcross/lab/vmlinux-6.1.0-28",
                   "sha256": "ab" * 32},
        "append": "", "variant": None,
    }
    lab.update(changes)
    return lab


def lab_records(**lab_changes: Any) -> list[dict[str, Any]]:
    """The real captured run as the lab would store it: fingerprint.lab added, every
    unit instructions/op, the guest's fixed clock in host.time."""
    records = copy.deepcopy(captured())
    fingerprint = records[0]
    assert fingerprint["type"] == "fingerprint"
    fingerprint["lab"] = lab_object(**lab_changes)
    fingerprint["host"]["time"] = GUEST_TIME
    for record in records:
        if record["type"] == "result":
            record["unit"] = UNIT_INSTRUCTIONS
    return records


def results_of(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "result"]


def factory(db: Path) -> Callable[[], Store]:
    def open_store() -> Store:
        store = Store.open(resolve(str(db)), write=True)
        assert store is not None
        return store
    return open_store


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- schema -----------------------------------------------------------------------------

def test_every_captured_file_still_validates() -> None:
    """The schema grew (unit enum, fingerprint.lab): every capture in tests/data still
    passes, as records and as a stream."""
    files = sorted(DATA.glob("*.jsonl"))
    assert len(files) >= 4
    for path in files:
        stream = RunStream()
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            record = parse_line(line, f"{path.name} line {lineno}", IMPORT_VERSIONS)
            if path.name.endswith("run.jsonl") or path.name.startswith("schema1"):
                stream.add(record, f"{path.name} line {lineno}")
        if path.name.endswith("run.jsonl") or path.name.startswith("schema1"):
            assert stream.complete, path.name


def test_lab_stream_is_valid_and_complete() -> None:
    stream = importer.stream_of(lab_records(), "lab ppc64le")
    assert stream.complete
    assert {r["unit"] for r in stream.results} == {UNIT_INSTRUCTIONS}


@pytest.mark.parametrize("change, message", [
    (lambda r: r[2].update(unit="ns/op"),
     "lab ppc64le record 3: result record {name} is in ns/op, but the fingerprint has a lab "
     "object"),
    (lambda r: r[0].pop("lab"),
     "lab ppc64le record 3: result record {name} is in instructions/op, but the fingerprint "
     "has no lab object"),
    (lambda r: r[0]["lab"].update(mode="correctness"),
     "lab ppc64le record 1: fingerprint record: $.lab.mode: must be \"counting\", got "
     "\"correctness\""),
])
def test_mixing_units_is_one_line_naming_the_record(change: Callable[[list], Any],
                                                    message: str) -> None:
    records = lab_records()
    change(records)
    name = f"{records[2]['suite']}/{records[2]['name']}"
    with pytest.raises(SchemaError) as info:
        importer.stream_of(records, "lab ppc64le")
    assert str(info.value).startswith(message.format(name=name)), str(info.value)
    assert "\n" not in str(info.value)


def test_wall_clock_run_with_a_lab_fingerprint_is_refused() -> None:
    """A lab fingerprint on ns/op results (the unit was not rewritten) is refused, as is
    one ns/op record slipped into an otherwise counted run."""
    records = copy.deepcopy(captured())
    records[0]["lab"] = lab_object()
    with pytest.raises(SchemaError, match="must all be instructions/op, never wall-clock"):
        importer.stream_of(records, "lab x")
    records = lab_records()
    results_of(records)[-1]["unit"] = "ns/op"
    with pytest.raises(SchemaError, match=f"record {len(records) - 1}: result record"):
        importer.stream_of(records, "lab x")


@pytest.mark.parametrize("change, path", [
    (lambda lab: lab.pop("emulator"), "$.lab: missing key 'emulator'"),
    (lambda lab: lab.update(unit="ns/op"), "$.lab.unit: must be \"instructions/op\""),
    (lambda lab: lab.update(mode="fast"), "$.lab.mode: must be \"counting\", got \"fast\""),
    (lambda lab: lab["kernel"].update(sha256="xyz"), "$.lab.kernel.sha256"),
    (lambda lab: lab.update(smp=0), "$.lab.smp: must be >= 1"),
])
def test_lab_object_is_checked(change: Callable[[dict], Any], path: str) -> None:
    fingerprint = lab_records()[0]
    change(fingerprint["lab"])
    with pytest.raises(SchemaError) as info:
        validate(fingerprint, "lab record 1", IMPORT_VERSIONS)
    assert f"lab record 1: fingerprint record: {path}" in str(info.value), str(info.value)


def test_schema_1_has_no_instruction_counts() -> None:
    lines = (DATA / "schema1-syscall.jsonl").read_text().splitlines()
    record = json.loads(lines[2])
    record["unit"] = UNIT_INSTRUCTIONS
    with pytest.raises(SchemaError, match=r"\$\.unit: must be \"ns/op\""):
        validate(record, "x", IMPORT_VERSIONS)


def test_unknown_unit_is_refused() -> None:
    record = results_of(lab_records())[0]
    record["unit"] = "cycles/op"
    with pytest.raises(SchemaError, match=r"\$\.unit: must be \"ns/op\" or \"instructions/op\""):
        validate(record, "x", IMPORT_VERSIONS)


# --- the store --------------------------------------------------------------------------

def test_lab_run_is_stored_as_lab_on_a_machine_of_its_own(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    before = dt.datetime.now(dt.UTC)
    done = importer.import_stream(factory(db), lab_records(), command=["lab", "ppc64le"])
    results = results_of(lab_records())
    assert (done.run_id, done.complete, done.results, done.planned) == \
        (1, True, len(results), len(results))
    (row,) = query(db, "SELECT source, status, started_at, command FROM runs")
    assert row[:2] == ("lab", "complete")
    # dated by the host (now), not by the guest's fixed 2024 clock
    assert row[2] >= before.strftime("%Y-%m-%d %H:%M:%S")
    assert json.loads(row[3]) == ["lab", "ppc64le"]
    # the figures are stored by the one statistics rule, in the record's unit
    stored = query(db, "SELECT name, median_ns FROM results ORDER BY seq")
    for (name, median), rec in zip(stored, results, strict=True):
        assert name == rec["name"]
        if rec["status"] == "ok":
            assert median == pytest.approx(summarize_record(rec).median)

    # the same machine without the lab, and the same lab with another variant or CPU:
    # each a machine of its own
    plain = copy.deepcopy(captured())
    importer.import_stream(factory(db), plain, command=["import"], source="import")
    importer.import_stream(factory(db), lab_records(variant="mitigations=off",
                                                    append="mitigations=off"),
                           command=["lab"])
    importer.import_stream(factory(db), lab_records(cpu="power10"), command=["lab"])
    machines = query(db, "SELECT id, hypervisor FROM machines ORDER BY id")
    assert len(machines) == 4
    assert [m[1] for m in machines] == ["qemu-tcg-icount", machines[1][1],
                                        "qemu-tcg-icount", "qemu-tcg-icount"]
    assert machines[1][1] != "qemu-tcg-icount"
    assert query(db, "SELECT machine_id FROM runs ORDER BY id") == [(1,), (2,), (3,), (4,)]
    assert machine_identity(lab_records()[0]) != machine_identity(captured()[0])


def test_lab_labels_are_not_identity() -> None:
    """A variant's name and the kernel file's place are labels: the same configuration
    under another name, or the same kernel (same SHA-256) elsewhere, is the same machine.
    Another kernel is the same lab machine too (issue 23): the kernel is its axis, said by
    the kernel's label."""
    a = lab_records()[0]
    b = copy.deepcopy(a)
    b["lab"]["variant"] = "kernel A"
    b["lab"]["kernel"]["path"] = "/elsewhere/vmlinux"
    assert machine_identity(a) == machine_identity(b)
    b["lab"]["kernel"]["sha256"] = "0" * 64
    assert machine_identity(a) == machine_identity(b)
    assert fields.kernel_label(a) == fields.kernel_label(b)     # a package's: by its name
    b["lab"]["kernel"]["version"] = "6.1.999-1"
    assert fields.kernel_label(a) != fields.kernel_label(b)


def test_lab_identity_ignores_only_what_is_volatile() -> None:
    a = lab_records()[0]
    b = copy.deepcopy(a)
    b["host"]["time"] = "2024-01-01T00:00:09Z"
    b["kcross"]["git_rev"] = "0123456789ab"
    assert machine_identity(a) == machine_identity(b)
    for key, value in (("emulator_version", "8.2.0"), ("seed", 2), ("smp", 2),
                       ("machine", "pseries,x-vof=on,cap-cfpc=broken")):
        assert machine_identity(lab_records(**{key: value})[0]) != machine_identity(a), key
    c = copy.deepcopy(a)
    c["lab"]["kernel"]["sha256"] = "cd" * 32     # another kernel: the lab machine's axis
    assert machine_identity(c) == machine_identity(a)


def test_repeated_lab_run_is_a_duplicate_unless_forced(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    importer.import_stream(factory(db), lab_records(), command=["lab"])
    with pytest.raises(DuplicateImport) as info:
        importer.import_stream(factory(db), lab_records(), command=["lab"])
    assert info.value.run_id == 1 and isinstance(info.value, UserError)
    assert "run 1 (stored by kcross lab)" in str(info.value)
    again = importer.import_stream(factory(db), lab_records(), command=["lab"], force=True)
    assert again.run_id == 2
    # the same machine: identical fingerprints
    assert query(db, "SELECT DISTINCT machine_id FROM runs") == [(1,)]


def test_host_times_are_kept_and_interrupted_runs_have_no_finish(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    start = dt.datetime(2026, 11, 23, 17, 0, 0, tzinfo=dt.UTC)
    end = start + dt.timedelta(seconds=14)
    importer.import_stream(factory(db), lab_records(), command=["lab"], started_at=start,
                           finished_at=end)
    cut = lab_records()[:-2]  # the guest died: no end record, one result missing
    done = importer.import_stream(factory(db), cut, command=["lab"], started_at=end)
    assert not done.complete and done.results == done.planned - 1
    assert query(db, "SELECT started_at, finished_at, status FROM runs ORDER BY id") == [
        ("2026-11-23 17:00:00.000000", "2026-11-23 17:00:14.000000", "complete"),
        ("2026-11-23 17:00:14.000000", None, "interrupted")]


def test_bad_stream_stores_nothing_and_creates_no_database(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    records = lab_records()
    records[3]["unit"] = "ns/op"
    with pytest.raises(SchemaError, match="lab aarch64 record 4: result record"):
        importer.import_stream(factory(db), records, command=["lab"], name="lab aarch64")
    with pytest.raises(SchemaError, match="no lab object, so it cannot be stored as a lab run"):
        importer.import_stream(factory(db), copy.deepcopy(captured()), command=["lab"])
    bad = lab_records()
    bad[2]["samples"][0] = float("nan")
    with pytest.raises(SchemaError, match="record 3: not a JSON record"):
        importer.import_stream(factory(db), bad, command=["lab"])
    with pytest.raises(SchemaError, match="no plan record"):
        importer.import_stream(factory(db), lab_records()[:1], command=["lab"])
    assert not db.exists()


def test_a_runstream_is_accepted_and_checked_again(tmp_path: Path) -> None:
    stream = importer.stream_of(lab_records(), "lab")
    stream.results[0]["unit"] = "ns/op"  # changed after it was checked
    with pytest.raises(SchemaError, match="is in ns/op"):
        importer.import_stream(factory(tmp_path / "k.db"), stream, command=["lab"])
    stream.results[0]["unit"] = UNIT_INSTRUCTIONS
    assert importer.import_stream(factory(tmp_path / "k.db"), stream,
                                  command=["lab"]).run_id == 1


# --- what the user sees -----------------------------------------------------------------

def median_header(text: str) -> str:
    """The run table's median header: ``median ns/op``."""
    return next(head for head in run_table(text)[0] if head.startswith("median"))




def test_show_runs_and_json_round_trip(kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    importer.import_stream(factory(db), lab_records(), command=["lab", "ppc64le"])
    shown = kcross("show", "--wide", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert median_header(out).startswith("median instructions/op")
    assert EMULATED in out
    assert "lab: qemu-system-ppc64 7.2.11 -M pseries,x-vof=on -cpu power9, smp 1" in out
    assert "linux-image-6.1.0-28-powerpc64le 6.1.119-1" in out
    assert "instructions/op (median)" in out  # the overhead line carries the unit
    assert " · lab · " in out.splitlines()[0]
    for rec in results_of(lab_records()):
        if rec["status"] != "ok":
            continue
        summary = summarize_record(rec)
        (row,) = [line for line in out.splitlines()
                  if line.startswith(f"{rec['suite']}/{rec['name']} ")]
        mark = "†" if summary.overhead.subtracted else ""
        assert f" {mark}{summary.median:,.1f} " in row, row
        assert f" {summary.min:,.1f} " in row, row

    runs = kcross("runs", "--db", str(db)).stdout
    row = runs_rows(runs)["1"]
    assert (row["source"], row["unit"]) == ("lab", "instructions/op")
    assert "emulated (qemu-tcg-icount)" in row["machine"]

    # written back by `show --json`, the run is the same records: importing it is a
    # duplicate of the lab run, and forced it lands on the same (emulated) machine
    capture = tmp_path / "lab.jsonl"
    capture.write_text(kcross("show", "--json", "--db", str(db)).stdout)
    assert [json.loads(x) for x in capture.read_text().splitlines()] == lab_records()
    assert_one_line_error(kcross("import", str(capture), "--db", str(db)),
                          contains="run 1 (stored by kcross lab)")
    assert kcross("import", "--force", str(capture), "--db", str(db)).returncode == 0
    assert query(db, "SELECT source, machine_id FROM runs ORDER BY id") == \
        [("lab", 1), ("import", 1)]
    runs = kcross("runs", "--db", str(db)).stdout
    row = runs_rows(runs)["2"]
    assert (row["source"], row["unit"]) == ("import", "instructions/op")
    assert "emulated" in row["machine"]


def test_runs_tell_mitigation_variants_apart(kcross: Kcross, tmp_path: Path) -> None:
    """`kcross lab --mitigations` stores one lab run per variant, all of one machine and
    unit: `kcross runs` (and --json) names each run's arch and variant."""
    db = tmp_path / "k.db"
    variants = ["intel", "intel + nopti", "intel + mitigations=off"]
    for variant in variants:
        records = lab_records(variant=variant, append=variant.partition(" + ")[2])
        records[0]["arch"] = "ppc64le"
        importer.import_stream(factory(db), records, command=["lab", "ppc64le"])
    importer.import_stream(factory(db), copy.deepcopy(captured()), command=["import"],
                           source="import")
    proc = kcross("runs", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    rows = runs_rows(proc.stdout)
    heads = list(rows["1"])
    assert heads[heads.index("source") + 1:heads.index("source") + 4] == ["arch", "variant", "unit"]
    for run_id, variant in enumerate(variants, 1):
        assert rows[str(run_id)]["arch"] == "ppc64le"
        assert rows[str(run_id)]["variant"] == variant
    assert (rows["4"]["arch"], rows["4"]["variant"]) == (captured()[0]["arch"], "–")
    listed = [json.loads(x) for x in kcross("runs", "--json", "--db", str(db)).stdout.splitlines()]
    assert {r["id"]: (r["arch"], r["variant"]) for r in listed} == \
        {4: (captured()[0]["arch"], None), **{i: ("ppc64le", v) for i, v in enumerate(variants, 1)}}


def test_import_of_a_mixed_file_is_one_line(kcross: Kcross, tmp_path: Path) -> None:
    records = lab_records()
    results_of(records)[1]["unit"] = "ns/op"
    path = write_jsonl(tmp_path / "mixed.jsonl", records)
    line = assert_one_line_error(kcross("import", str(path), "--db", str(tmp_path / "k.db")),
                                 contains=f"{path} line 4: result record")
    assert "never wall-clock time" in line
    assert not (tmp_path / "k.db").exists()


def test_wall_clock_runs_still_say_ns(kcross: Kcross, stored_db: Path) -> None:
    out = kcross("show", "--db", str(stored_db)).stdout
    assert median_header(out) == "median ns/op" and "emulated" not in out
    assert "ns/op (median)" in kcross("show", "--wide", "--db", str(stored_db)).stdout
    runs = kcross("runs", "--db", str(stored_db)).stdout
    assert " ns/op " in runs and "instructions/op" not in runs
    assert "variant" not in runs  # no lab run: no variant column


def _text(*renderables: Any) -> str:
    console = Console(width=250, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    for item in renderables:
        console.print(terminal(item) if isinstance(item, Table) else item)
    return console.export_text()


def test_renderers_carry_the_unit() -> None:
    records = lab_records()
    results = results_of(records)
    text = _text(render.results_table(results), render.run_footer(records[0], results))
    assert median_header(text) == "median instructions/op" and EMULATED in text
    assert "most VMs expose no PMU" not in text   # the lab's own reason is enough
    assert in_unit(346.0, UNIT_INSTRUCTIONS) == "346.0"
    assert in_unit(12345.25, UNIT_INSTRUCTIONS) == "12,345.2"
    assert in_unit(1234.5, "ns/op") == format_ns(1234.5)
    # an empty lab table still names the unit it would hold
    assert median_header(_text(render.results_table([], unit=UNIT_INSTRUCTIONS))) == \
        "median instructions/op"
    # a hand-edited database mixing units: every foreign cell names its unit
    mixed = copy.deepcopy(results)
    ok = [r for r in mixed if r["status"] == "ok"]
    ok[1]["unit"] = "ns/op"
    text = _text(render.results_table(mixed, wide=True))
    (row,) = [x for x in text.splitlines() if x.startswith(f"{ok[1]['suite']}/{ok[1]['name']} ")]
    assert row.count("ns/op") == 2


def test_sysinfo_renderer_shows_the_lab_group() -> None:
    fp = lab_records(variant="nokaslr", append="nokaslr")[0]
    text = _text(fingerprint.sysinfo(fp))
    assert text.index("Lab (emulated)") < text.index("CPU")
    for expected in (EMULATED, "counting / instructions/op", "qemu-system-ppc64 7.2.11",
                     "pseries,x-vof=on / power9 / 1", "ab" * 32, "nokaslr",
                     "shift=0,align=off,sleep=off"):
        assert expected in text, expected
    assert "Lab" not in _text(fingerprint.sysinfo(captured()[0]))


# --- PostgreSQL (when a server is given, as in test_postgres.py) ------------------------



def test_lab_run_on_postgres(pg_schema: str, kcross: Kcross) -> None:
    def open_store() -> Store:
        store = Store.open(resolve(pg_schema), write=True)
        assert store is not None
        return store

    importer.import_stream(open_store, lab_records(), command=["lab"])
    importer.import_stream(open_store, copy.deepcopy(captured()), command=["import"],
                           source="import")
    with pytest.raises(DuplicateImport):
        importer.import_stream(open_store, lab_records(), command=["lab"])
    store = open_store()
    try:
        runs = {r.id: r for r in store.list_runs()}
        assert (runs[1].source, runs[1].unit, runs[1].hypervisor) == \
            ("lab", UNIT_INSTRUCTIONS, "qemu-tcg-icount")
        assert (runs[2].source, runs[2].unit) == ("import", "ns/op")
        assert store.load_run("1").fingerprint["lab"] == lab_object()
    finally:
        store.close()
    out = kcross("show", "1", "--db", pg_schema).stdout
    assert median_header(out) == "median instructions/op" and EMULATED in out
