"""Exports (kcross.export): every format read back by what reads it.

json goes back through ``kcross import``; csv through the csv module; the
comparison record through the schema file; markdown is checked for its table
shape.  The real ministat and benchstat read theirs in test_export_tools.py.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import pty
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    HANG,
    assert_one_line_error,
    captured,
    terminal_signals,
    wait_for_rows,
)
from kcross import export, stats
from kcross.errors import OutputError, SchemaError, UserError
from kcross.export import ExportData
from kcross.judge.categories import Category
from kcross.judge.verdict import Judgement, Pair, judge
from kcross.schema import SCHEMA_VERSION, parse_line, validate
from kcross.series import Series, series_of_results
from kcross.store import StoredRun
from kcross.views.table import markdown_cell

# --- data --------------------------------------------------------------------------------


def stored_run(run_id: int = 1, records: Sequence[dict[str, Any]] | None = None,
               *, complete: bool = True) -> StoredRun:
    """A StoredRun holding the captured real run (python/tests/data/real-run.jsonl)."""
    records = list(records if records is not None else captured())
    by_type = {r["type"]: r for r in records}
    return StoredRun(id=run_id, started_at=dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC),
                     finished_at=None, status="complete" if complete else "interrupted",
                     source="run", error=None, fingerprint=by_type["fingerprint"],
                     plan=by_type["plan"], results=[r for r in records if r["type"] == "result"],
                     end=by_type["end"] if complete else None)


def scaled(series: Series, factor: float, source: str) -> Series:
    return Series(source=source, name=series.name, unit=series.unit,
                  samples=tuple(x * factor for x in series.samples), record=series.record,
                  fingerprint=series.fingerprint)


SLOWER = "syscall/getppid-inline"  # made 10% slower on the new side
SAME = "syscall/getcpu-syscall"    # the same samples on both sides


def unjudged(name: str, base: Series, new: Series, error: str) -> Judgement:
    return Judgement(name, base.unit or new.unit, base, new, Category.UNJUDGED, error=error)


def comparison() -> list[Judgement]:
    """run 1 against run 2: SLOWER 10% slower in every sample, SAME identical."""
    run = stored_run()
    base = {s.name: s for s in series_of_results("run 1", run.fingerprint, run.results)}
    pairs = [(base[SLOWER], scaled(base[SLOWER], 1.10, "run 2")),
             (base[SAME], scaled(base[SAME], 1.0, "run 2"))]
    return judge([Pair(a.name, a, b) for a, b in pairs])


def render(fmt: str, data: ExportData) -> list[export.Output]:
    return export.exporter(fmt).render(data)


def text_of(fmt: str, data: ExportData) -> str:
    (out,) = render(fmt, data)
    assert out.part is None
    return out.text


# --- the interface -----------------------------------------------------------------------


def test_the_five_formats_behind_one_interface() -> None:
    assert list(export.FORMATS) == ["json", "csv", "markdown", "gobench", "numbers"]
    for fmt in export.FORMATS:
        assert callable(export.exporter(fmt).render)
    with pytest.raises(UserError, match=r"unknown export format 'xml' \(formats: json, csv"):
        export.exporter("xml")


def test_write_to_stdout_and_to_several_files(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = ExportData(runs=[stored_run()])
    assert export.write("csv", "-", data) == ["-"]
    assert capsys.readouterr().out == text_of("csv", data)
    with pytest.raises(UserError, match="one per series.*give a FILE name"):
        export.write("ministat", "-", data)
    with pytest.raises(OutputError, match="--export csv '/dev/full': cannot write it"):
        export.write("csv", "/dev/full", data)
    with pytest.raises(UserError, match="does not exist"):
        export.check_path("csv", tmp_path / "no" / "x.csv", db=str(tmp_path / "k.db"))
    with pytest.raises(UserError, match="is a directory"):
        export.check_path("csv", tmp_path, db=str(tmp_path / "k.db"))


# --- json: the result format -------------------------------------------------------------


def test_json_of_a_run_is_the_harness_stream() -> None:
    text = text_of("json", ExportData(runs=[stored_run()]))
    assert [json.loads(line) for line in text.splitlines()] == captured()


def test_json_holds_one_run_or_a_comparison() -> None:
    with pytest.raises(UserError, match="one run per file, not 2"):
        render("json", ExportData(runs=[stored_run(1), stored_run(2)]))
    rows = comparison()
    with pytest.raises(UserError, match="a run or a comparison"):
        render("json", ExportData(series=[rows[0].base]))


def test_show_export_json_round_trips_through_import(kcross: Any, stored_db: Path,
                                                     tmp_path: Path) -> None:
    exported = tmp_path / "run1.json"
    proc = kcross("show", "1", "--db", str(stored_db), "--export", "json", str(exported))
    assert proc.returncode == 0, proc.stderr
    shown = kcross("show", "1", "--db", str(stored_db), "--json")
    assert exported.read_text() == shown.stdout  # one owner: show --json is the json export
    # The same records: importing into the database they came from is refused as a duplicate.
    again = kcross("import", str(exported), "--db", str(stored_db))
    assert_one_line_error(again, 2, "already stored")
    other = tmp_path / "other.db"
    proc = kcross("import", str(exported), "--db", str(other))
    assert proc.returncode == 0 and "complete, 2 of 2 benchmark(s)" in proc.stdout, proc.stderr
    back = kcross("show", "1", "--db", str(other), "--json")
    assert back.stdout == shown.stdout


def test_run_exports_every_format_when_it_ends(kcross: Any, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    files = {fmt: tmp_path / f"run.{fmt}" for fmt in export.FORMATS}
    args = [a for fmt, path in files.items() for a in ("--export", fmt, str(path))]
    proc = kcross("run", "--quick", "--suite", "syscall", "--db", str(db), *args,
                  extra_env={"KCROSS_FAKE_SKIP": "getppid-call"})  # one row skipped
    assert proc.returncode == 0, proc.stderr
    assert "run 1:" in proc.stdout  # the table is still printed: no export took stdout
    records = [json.loads(line) for line in files["json"].read_text().splitlines()]
    assert [r["type"] for r in records][:2] == ["fingerprint", "plan"]
    assert records[-1]["type"] == "end"
    results = [r for r in records if r["type"] == "result"]
    with files["csv"].open() as f:
        rows = list(csv.DictReader(f))
    assert [row["benchmark"] for row in rows] == [f"{r['suite']}/{r['name']}" for r in results]
    assert any(row["status"] == "skipped" for row in rows)
    assert files["markdown"].read_text().startswith("**run 1** · complete")
    assert files["gobench"].read_text().startswith("goos: linux\n")
    ok = [r for r in results if r["status"] == "ok"]
    numbers = sorted(tmp_path.glob("run.*.numbers"))
    assert len(numbers) == len(ok)
    assert proc.stderr.count("kcross: wrote ") == len(ok)
    proc = kcross("import", str(files["json"]), "--db", str(tmp_path / "other.db"))
    assert proc.returncode == 0, proc.stderr


def test_an_interrupted_run_exports_its_results_so_far(env: dict[str, str],
                                                       tmp_path: Path) -> None:
    db, exported, table = tmp_path / "k.db", tmp_path / "so-far.json", tmp_path / "so-far.csv"
    proc = subprocess.Popen([sys.executable, "-m", "kcross", "run", "--quick", "--suite",
                             "syscall", "--db", str(db), "--export", "json", str(exported),
                             "--export", "csv", str(table)],
                            env={**env, "KCROSS_FAKE_DELAY": "0.4"}, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=terminal_signals)
    try:
        wait_for_rows(proc, db, "results", 1)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    assert records[-1]["type"] == "result"  # no end record: interrupted
    kept = sum(r["type"] == "result" for r in records)
    assert kept >= 1
    with table.open() as f:
        assert len(list(csv.DictReader(f))) == kept
    back = subprocess.run([sys.executable, "-m", "kcross", "import", str(exported), "--db",
                           str(tmp_path / "other.db")], env=env, capture_output=True,
                          text=True, timeout=HANG)
    assert back.returncode == 0 and "interrupted (no end record)" in back.stdout, back.stderr


def test_comparison_record_is_valid_and_holds_what_was_compared() -> None:
    rows = comparison()
    (line,) = text_of("json", ExportData(series=[r.base for r in rows], rows=rows)).splitlines()
    record = parse_line(line, "export", (SCHEMA_VERSION,))  # the schema file's check
    assert record["type"] == "comparison" and record["schema"] == SCHEMA_VERSION
    assert [s["source"] for s in record["sources"]] == ["run 1", "run 2"]
    assert record["sources"][0]["fingerprint"] == rows[0].base.fingerprint
    slower, same = record["rows"]
    assert slower["name"] == SLOWER and slower["unit"] == "ns/op"
    assert slower["base"]["samples"] == list(rows[0].base.samples)
    assert slower["new"]["samples"] == list(rows[0].new.samples)
    assert slower["base"]["overhead_subtracted"] == rows[0].base.overhead_subtracted
    assert slower["verdict"]["significant"] is True
    assert slower["verdict"]["ratio"] == pytest.approx(1.10)
    assert same["verdict"]["significant"] is False and same["verdict"]["ratio"] == 1.0
    ratios = [r["verdict"]["ratio"] for r in record["rows"]]
    assert record["geomean_ratio"] == pytest.approx(stats.geomean(ratios))


def test_comparison_record_without_verdict_says_why() -> None:
    rows = comparison()
    few = Series("a.txt", "a.txt", "", (1.0, 2.0, 3.0))
    failed = [unjudged("a.txt", few, few, "too few samples")]
    (line,) = text_of("json", ExportData(rows=failed)).splitlines()
    record = parse_line(line, "export", (SCHEMA_VERSION,))
    assert record["rows"][0]["verdict"] is None and record["rows"][0]["error"]
    assert record["rows"][0]["unit"] == "" and record["geomean_ratio"] is None
    assert record["sources"] == [{"source": "a.txt", "fingerprint": None}]
    bad = json.loads(line)
    bad["rows"][0]["error"] = None
    with pytest.raises(SchemaError, match="a pair without a verdict says why"):
        validate(bad, "x", (SCHEMA_VERSION,))
    with pytest.raises(SchemaError, match="comparison records exist from schema 2"):
        validate({**json.loads(text_of("json", ExportData(rows=rows))), "schema": 1}, "x", (1, 2))


def test_import_refuses_a_comparison_in_one_line(kcross: Any, tmp_path: Path) -> None:
    path = tmp_path / "cmp.json"
    export.write("json", path, ExportData(rows=comparison()))
    assert_one_line_error(kcross("import", str(path), "--db", str(tmp_path / "k.db")), 2,
                          "line 1: a comparison record (from 'kcross compare --export json') "
                          "is not part of a run stream")


# --- csv -------------------------------------------------------------------------------


def test_csv_of_a_run_has_kcross_figures() -> None:
    run = stored_run()
    rows = list(csv.DictReader(io.StringIO(text_of("csv", ExportData(runs=[run])))))
    assert len(rows) == len(run.results)
    for row, rec in zip(rows, run.results, strict=True):
        assert row["benchmark"] == f"{rec['suite']}/{rec['name']}"
        assert row["status"] == rec["status"] and row["run"] == "1"
        if rec["status"] != "ok":
            assert row["median"] == "" and row["reason"] == rec["reason"]
            continue
        summary = stats.summarize_record(rec)
        assert float(row["median"]) == summary.median  # full precision, not a rounding
        assert float(row["min"]) == summary.min and int(row["n"]) == summary.n
        assert float(row["ci_low"]) == summary.ci.low
        assert float(row["ci_high"]) == summary.ci.high
        assert row["overhead_subtracted"] == ("true" if summary.overhead.subtracted else "false")
        assert int(row["iters"]) == rec["iters"]


def test_csv_of_a_comparison_and_of_series() -> None:
    rows = comparison()
    table = list(csv.DictReader(io.StringIO(text_of("csv", ExportData(rows=rows)))))
    assert [r["benchmark"] for r in table] == [SLOWER, SAME]
    for line, row in zip(table, rows, strict=True):
        assert row.error is None
        assert float(line["ratio"]) == row.ratio
        assert float(line["p_adjusted"]) == row.p_adjusted
        assert line["significant"] == ("true" if row.category.changed else "false")
        assert line["method"] == "samples" and line["category"] == row.category.value
        assert (line["base_source"], line["new_source"]) == ("run 1", "run 2")
        assert float(line["base_median"]) == stats.median(row.base.samples)
    few = Series("a.txt", "a.txt", "", (3.0, 1.0))
    table = list(csv.DictReader(io.StringIO(text_of("csv", ExportData(series=[few])))))
    assert table[0]["median"] == "2.0" and "no CI" in table[0]["note"]


# --- markdown --------------------------------------------------------------------------


def cells(line: str) -> list[str]:
    """A markdown table line split at its unescaped pipes."""
    assert line.startswith("| ") or line.startswith("|:") or line.startswith("|-"), line
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def tables(text: str) -> list[list[list[str]]]:
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(cells(line))
        elif current:
            found.append(current)
            current = []
    return found


def test_markdown_of_a_run_is_one_github_table() -> None:
    run = stored_run()
    text = text_of("markdown", ExportData(runs=[run]))
    assert text.startswith("**run 1** · complete · run · 2026-11-23 12:00:00 UTC · ")
    (table,) = tables(text)
    header, align, *body = table
    assert header[:2] == ["benchmark", "median ns/op"] and align[0] == ":---"
    assert all(len(row) == len(header) for row in body)
    assert [row[0] for row in body] == [f"`{r['suite']}/{r['name']}`" for r in run.results]
    skipped = [r for r in run.results if r["status"] == "skipped"][0]
    assert [row[-1] for row in body if row[0] == f"`{skipped['suite']}/{skipped['name']}`"] == \
        [f"skipped: {skipped['reason']}"]


def test_markdown_of_a_comparison_says_tilde_where_no_difference() -> None:
    text = text_of("markdown", ExportData(rows=comparison()))
    (table,) = tables(text)
    header, _, slower, same, geomean = table
    assert header[1] == "base: run 1, median ns/op" and header[2] == "new: run 2, median ns/op"
    assert slower[0] == f"`{SLOWER}`" and slower[-2] == "10.0% slower"
    assert slower[-1].startswith("±")      # the minimum detectable change
    assert same[-2] == "~" and same[3].startswith("1.000 [")
    assert geomean[0] == "geomean"
    assert "\\|" in markdown_cell("a|b")


# --- gobench (the format; benchstat reads it in test_export_tools.py) -------------------


def bench_lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.startswith("Benchmark")]


def test_gobench_of_a_run_is_one_line_per_sample() -> None:
    run = stored_run()
    text = text_of("gobench", ExportData(runs=[run]))
    head = text.splitlines()[:4]
    assert head == ["goos: linux", "goarch: amd64", "pkg: kcross",
                    f"cpu: {run.fingerprint['cpu']['model']}"]
    assert not re.search(r"^(kernel|host|side):", text, re.M)  # would split benchstat's table
    series = series_of_results("run 1", run.fingerprint, run.results)
    lines = bench_lines(text)
    assert len(lines) == sum(len(s.samples) for s in series)
    first = series[0]
    mine = [line for line in lines if line[0] == "Benchmark" + first.name[0].upper()
            + first.name[1:]]
    assert [float(line[2]) for line in mine] == list(first.samples)
    assert {line[3] for line in lines} == {"ns/op"}
    assert all(int(line[1]) == first.record["iters"] for line in mine)  # type: ignore[index]


def test_gobench_of_a_comparison_labels_the_sides() -> None:
    rows = comparison()
    text = text_of("gobench", ExportData(rows=rows))
    sides = re.findall(r"^side: (.*)$", text, re.M)
    assert sides == ["run 1", "run 2"]  # the base first: benchstat's base column
    assert len(bench_lines(text)) == 2 * sum(len(r.base.samples) for r in rows)
    # Two benchmarks of one run compared with each other: the sides are their names.
    a, b = rows[0].base, rows[1].base
    within = [unjudged("sc-vs-scv", a, b, "x")]
    text = text_of("gobench", ExportData(rows=within))
    assert re.findall(r"^side: (.*)$", text, re.M) == [a.name, b.name]
    assert {line[0] for line in bench_lines(text)} == {"BenchmarkSc-vs-scv"}


def test_gobench_units_and_names() -> None:
    counts = Series("lab ppc64le", "syscall/getppid sc", "instructions/op", (346.0, 346.0))
    plain = Series("a.txt", "a.txt", "", (1.5,))
    text = text_of("gobench", ExportData(series=[counts, plain]))
    assert bench_lines(text) == [["BenchmarkSyscall/getppid_sc", "1", "346.0", "instructions/op"],
                                 ["BenchmarkSyscall/getppid_sc", "1", "346.0", "instructions/op"],
                                 ["BenchmarkA.txt", "1", "1.5", "value/op"]]
    assert re.findall(r"^side: (.*)$", text, re.M) == ["lab ppc64le", "a.txt"]


# --- ministat ----------------------------------------------------------------------------


def numbers(path: Path) -> list[float]:
    return [float(line) for line in path.read_text().splitlines() if not line.startswith("#")]


def test_ministat_one_series_is_file_itself(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    one = comparison()[0].base
    path = tmp_path / "x.txt"
    assert export.write("ministat", path, ExportData(series=[one])) == [str(path)]
    assert numbers(path) == list(one.samples)
    assert path.read_text().startswith(f"# kcross: run 1 {SLOWER} (ns/op)\n")
    assert capsys.readouterr().err == ""


def test_ministat_several_series_are_named_from_file(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    rows = comparison()
    written = export.write("ministat", tmp_path / "cmp.txt", ExportData(rows=rows))
    names = [Path(p).name for p in written]
    assert names == [f"cmp.run-1.{SLOWER.replace('/', '-')}.txt",
                     f"cmp.run-2.{SLOWER.replace('/', '-')}.txt",
                     f"cmp.run-1.{SAME.replace('/', '-')}.txt",
                     f"cmp.run-2.{SAME.replace('/', '-')}.txt"]
    assert numbers(tmp_path / names[1]) == list(rows[0].new.samples)
    err = capsys.readouterr().err.splitlines()
    assert err == [f"kcross: wrote {p}: {s.source} {s.name} (ns/op)" for p, s in
                   zip(written, [rows[0].base, rows[0].new, rows[1].base, rows[1].new],
                       strict=True)]
    with pytest.raises(UserError, match="no benchmark has samples"):
        render("ministat", ExportData())


# --- the command line ----------------------------------------------------------------------


def test_show_export_to_stdout_replaces_the_table(kcross: Any, stored_db: Path) -> None:
    proc = kcross("show", "--db", str(stored_db), "--export", "csv", "-")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [r["benchmark"] for r in rows] == ["syscall/getcpu-vdso", "syscall/getcpu-syscall"]


@pytest.mark.parametrize("args, message", [
    (["--export", "xml", "f"], "unknown export format 'xml'"),
    (["--export", "csv", "/no/such/dir/f"], "directory '/no/such/dir' does not exist"),
    (["--export", "csv", "-", "--json"], "both write to standard output"),
    (["--export", "csv", "-", "--export", "json", "-"], "both write to standard output"),
    (["--export", "ministat", "-"], "give a FILE name"),
])
def test_export_mistakes_are_one_line(kcross: Any, stored_db: Path, args: list[str],
                                      message: str) -> None:
    assert_one_line_error(kcross("show", "--db", str(stored_db), *args), 2, message)


def test_export_mistakes_stop_a_run_before_it_starts(kcross: Any, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    proc = kcross("run", "--quick", "--db", str(db), "--export", "csv", str(tmp_path / "no/f"))
    assert_one_line_error(proc, 2, "does not exist")
    assert not db.exists()


def test_unwritable_export_after_a_run_says_the_run_is_stored(kcross: Any,
                                                              tmp_path: Path) -> None:
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db",
                  str(tmp_path / "k.db"), "--export", "csv", "/dev/full")
    line = assert_one_line_error(proc, 3, "--export csv '/dev/full': cannot write it",
                                 after_progress=True)
    assert line.endswith("run 1 is stored (see 'kcross show 1')")


def test_runs_json_is_one_object_per_run(kcross: Any, stored_db: Path) -> None:
    table = kcross("runs", "--db", str(stored_db))
    proc = kcross("runs", "--db", str(stored_db), "--json")
    assert proc.returncode == 0, proc.stderr
    (run,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert run["id"] == 1 and run["status"] == "complete" and run["results"] == 2
    assert run["unit"] == "ns/op" and run["source"] == "run"
    assert dt.datetime.fromisoformat(run["started_at"]).tzinfo is not None
    assert run["started_at"][:16].replace("T", " ") in table.stdout   # to the minute
    assert {"hostname", "cpu_model", "kernel_release", "hypervisor", "state", "live"} <= set(run)


# --- plain tables when stdout is not a terminal ----------------------------------------------

BOX_DRAWING = re.compile("[\u2500-\u257f]")


def test_tables_are_plain_ascii_when_not_a_terminal(kcross: Any, stored_db: Path) -> None:
    for args in (["show"], ["runs"], ["list"]):
        proc = kcross(*args, "--db", str(stored_db)) if args != ["list"] else kcross("list")
        assert proc.returncode == 0, proc.stderr
        assert not BOX_DRAWING.search(proc.stdout), proc.stdout
        assert "\x1b" not in proc.stdout
        if args != ["list"]:  # the run table, runs: columns under a rule of dashes
            assert re.search(r"^-+( +-+)+ *$", proc.stdout, re.M), proc.stdout
            continue
        assert re.search(r"^\+-+\+$", proc.stdout, re.M), proc.stdout  # rich's box.ASCII
        assert re.search(r"^\| \S", proc.stdout, re.M)


def test_tables_on_a_terminal_keep_their_box(env: dict[str, str], stored_db: Path) -> None:
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kcross", "list"],
                            env={**env, "TERM": "xterm-256color"}, stdout=child,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert proc.wait(timeout=HANG) == 0
    text = b"".join(chunks).decode()
    assert BOX_DRAWING.search(text), text
    assert "\x1b[" in text  # colours and bold, as before


def test_gobench_of_a_lab_run_counts_instructions() -> None:
    from test_lab_store import lab_records

    records = lab_records()
    records[0]["arch"] = "ppc64le"
    text = text_of("gobench", ExportData(runs=[stored_run(7, records)]))
    assert "goarch: ppc64le\n" in text
    assert re.search(r"^# lab: qemu-system-ppc64 -M .* \(counting\)$", text, re.M), text
    assert {line[3] for line in bench_lines(text)} == {"instructions/op"}
    assert "| median instructions/op |" in text_of("markdown", ExportData(
        runs=[stored_run(7, records)]))


def test_run_export_to_stdout_replaces_the_table(kcross: Any, tmp_path: Path) -> None:
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db",
                  str(tmp_path / "k.db"), "--export", "json", "-")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]  # nothing else on stdout
    assert [r["type"] for r in records] == ["fingerprint", "plan", "result", "result", "end"]
    shown = kcross("show", "--db", str(tmp_path / "k.db"), "--json")
    assert shown.stdout == proc.stdout
