"""`kcross compare`: stored runs, captures and files of numbers; Holm across the table; the
geomean row; the fingerprint warning; one-line errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG, Kcross, assert_one_line_error, fake_capture, isolated_env, ruled_table
from kcross import sides as compare
from kcross import stats
from kcross.errors import UserError
from kcross.judge import pairing
from kcross.judge.comparison import compare as build
from kcross.judge.comparison import overhead_notes
from kcross.series import Series
from kcross.views import benchstat as benchstat_view

SLOWER = ("syscall/getppid-inline", "syscall/stat-root")


def _records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="module")
def base_capture() -> list[dict]:
    return _records(fake_capture("--quick", "--suite", "syscall"))


def _slower(records: list[dict], names: tuple[str, ...], factor: float = 1.1) -> list[dict]:
    """A copy in which the named benchmarks' samples (and their empty loop's) are ``factor``
    times longer: a planted regression of that size."""
    out = json.loads(json.dumps(records))
    for r in out:
        if r["type"] == "result" and f"{r['suite']}/{r['name']}" in names:
            r["samples"] = [x * factor for x in r["samples"]]
            r["overhead"]["samples"] = [x * factor for x in r["overhead"]["samples"]]
    return out


def _no_store() -> None:
    raise AssertionError("files must not open the store")


def test_captures_table_holm_and_geomean(tmp_path: Path, kcross: Kcross,
                                         base_capture: list[dict]) -> None:
    a = _write(tmp_path / "base.jsonl", base_capture)
    b = _write(tmp_path / "new.jsonl", _slower(base_capture, SLOWER))
    proc = kcross("compare", str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # same machine, same overhead decisions
    rows = {name: " ".join(cells) for name, cells in ruled_table(proc.stdout)[1].items()}
    assert len(rows) == sum(1 for r in base_capture
                            if r["type"] == "result" and r["status"] == "ok")
    for name, line in rows.items():
        if name in SLOWER:
            assert " 10.0% slower (p" in line, line
        else:
            assert "~ (p=1.000" in line, line
    assert "geomean" in proc.stdout

    # The figures behind it: Holm over every comparison of the table, the geomean of medians.
    sides = compare.load_sides([str(a), str(b)], _no_store)  # type: ignore[arg-type]
    table = build(sides)
    judged = [row.judgements[1] for row in table.rows]
    assert all(j is not None and j.method == "samples" for j in judged)
    unadjusted = [stats.sample_test(row.cells[0].series.samples,  # type: ignore[union-attr]
                                    row.cells[1].series.samples).p  # type: ignore[union-attr]
                  for row in table.rows]
    assert [j.p_adjusted for j in judged] == stats.holm(unadjusted)  # type: ignore[union-attr]
    assert any(j.p_adjusted > j.p for j in judged)  # type: ignore[union-attr,operator]
    medians = [[row.cells[i].median for row in table.rows] for i in (0, 1)]  # type: ignore[union-attr]
    assert table.geomean_medians == [stats.geomean(medians[0]), stats.geomean(medians[1])]


def test_holm_makes_a_borderline_row_not_significant() -> None:
    """Alone, p < 0.05; in a table of five, Holm lifts it over alpha and the row shows '~'."""
    base = tuple(float(x) for x in range(100, 120))
    shifted = tuple(x + 5.0 for x in base)  # p = 0.0185 alone, 0.093 after Holm over 5
    alone = stats.sample_test(base, shifted)
    assert alone.p < 0.05
    def side(label: str, values: tuple[float, ...]) -> compare.Side:
        return compare.Side(label=label, single=False, series=tuple(
            Series(source=label, name=f"s/b{i}", unit="ns/op", samples=values)
            for i in range(5)))
    table = build([side("A", base), side("B", shifted)])
    from kcross.judge.categories import Category
    from kcross.views.comparison import verdict_text

    for row in table.rows:
        v = row.judgements[1]
        assert v is not None and v.p == alone.p and v.p_adjusted == min(1.0, 5 * alone.p)
        assert v.category is Category.SAME
        assert verdict_text(v).startswith("~ (p=")


def test_stored_runs_and_benchmarks_within_one_run(stored_db: Path, kcross: Kcross) -> None:
    proc = kcross("compare", "1", "latest", "--db", str(stored_db))
    assert proc.returncode == 0, proc.stderr
    assert "syscall/getcpu-vdso" in proc.stdout and "geomean" in proc.stdout
    assert "run 1 (base)" in proc.stdout and "latest (run 1)" in proc.stdout

    proc = kcross("compare", "latest:getcpu-vdso", "latest:getcpu-syscall", "--db",
                  str(stored_db))
    assert proc.returncode == 0, proc.stderr
    assert "syscall/getcpu-vdso vs syscall/getcpu-syscall" in proc.stdout
    assert "geomean" not in proc.stdout  # one row
    (cells,) = ruled_table(proc.stdout, key=lambda cell: "getcpu-vdso vs" in cell)[1].values()
    assert "% slower (p" in cells[4] and "~" not in cells[4]  # vDSO against a real syscall


def test_bench_option_and_missing_benchmarks(tmp_path: Path, kcross: Kcross,
                                             base_capture: list[dict]) -> None:
    a = _write(tmp_path / "a.jsonl", base_capture)
    fewer = [r for r in json.loads(json.dumps(base_capture))
             if not (r["type"] == "result" and r["name"] == "getppid-call")]
    for r in fewer:
        if r["type"] == "plan":
            r["benchmarks"] = [b for b in r["benchmarks"] if b["name"] != "getppid-call"]
        if r["type"] == "end":
            r["ok"] -= 1
    b = _write(tmp_path / "b.jsonl", fewer)
    proc = kcross("compare", str(a), str(b), "--bench", "getppid-*")
    assert proc.returncode == 0, proc.stderr
    assert f"syscall/getppid-call: not in {b}" in proc.stdout
    assert "syscall/stat-root" not in proc.stdout


def test_number_files_columns_and_formats(tmp_path: Path, kcross: Kcross,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    a = Path("a.txt")
    a.write_text("# before\n" + "".join(f"{i} {100 + i % 7}\n" for i in range(30)))
    b = Path("b.txt")
    b.write_text("".join(f"{i}\t{120 + i % 5}  # after\n" for i in range(30)))
    proc = kcross("compare", f"{a}:2", f"{b}:2")
    assert proc.returncode == 0, proc.stderr
    assert f"{a}:2 vs {b}:2" in proc.stdout and "(p" in proc.stdout
    proc = kcross("compare", f"{a}:2", f"{b}:2", "--format", "benchstat")
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()
    # piped: the box in ASCII, as every other table's
    assert head[0].rstrip().endswith("|") and "vs base" in head[1] and "value" in head[1]
    assert "%" in head[2] and " ± " in head[2]
    proc = kcross("compare", f"{a}:2", f"{b}:2", "--format", "ministat", "-c", "99")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [f"x {a}:2", f"+ {b}:2"]
    assert "Difference at 99.0% confidence" in proc.stdout


def test_stdin_side(tmp_path: Path) -> None:
    b = tmp_path / "b.txt"
    b.write_text("".join(f"{10 + i % 3}\n" for i in range(20)))
    proc = subprocess.run([sys.executable, "-m", "kcross", "compare", "-", str(b)],
                          input="".join(f"{12 + i % 3}\n" for i in range(20)), text=True,
                          capture_output=True, env=isolated_env(tmp_path), timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert f"stdin vs {b}" in proc.stdout


def test_fingerprint_warning_and_strict(tmp_path: Path, kcross: Kcross,
                                        base_capture: list[dict]) -> None:
    a = _write(tmp_path / "a.jsonl", base_capture)
    other = json.loads(json.dumps(base_capture))
    fp = other[0]
    fp["kernel"]["release"] = "6.1.0-other"
    fp["cpu"]["microcode"] = "0xdead"
    fp["vulnerabilities"]["spectre_v2"] = "Vulnerable"
    b = _write(tmp_path / "b.jsonl", other)
    proc = kcross("compare", str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    warning = proc.stderr.strip()
    assert warning.startswith("kcross: warning: ") and "\n" not in warning
    for field in ("microcode", "kernel release", "mitigations (spectre_v2)"):
        assert field in warning, warning
    assert "CPU model" not in warning
    assert_one_line_error(kcross("compare", str(a), str(b), "--strict"), 2, "--strict")


def test_overhead_decisions_that_differ_are_said() -> None:
    def series(source: str, subtracted: bool) -> Series:
        samples = [100.0 + i for i in range(11)]
        overhead = [60.0] * 11 if not subtracted else [5.0] * 11
        record = {"status": "ok", "schema": 2, "samples": samples,
                  "overhead": {"samples": overhead}}
        return Series(source=source, name="s/x", unit="ns/op", samples=tuple(samples),
                      record=record)
    notes = overhead_notes("s/x", [series("run 1", True), series("run 2", False)])
    assert len(notes) == 1 and "subtracted in run 1" in notes[0]
    assert "not subtracted in run 2" in notes[0]
    assert overhead_notes("s/x", [series("run 1", True), series("run 2", True)]) == []


@pytest.mark.parametrize(("a", "b", "message"), [
    ("1\n2\n3\n", "4\n5\n6\n", "too few for Mann-Whitney U"),
    ("1\n2\nnan\n4\n5\n6\n", "4\n5\n6\n7\n8\n9\n", "value 3 is nan (not a finite number)"),
    ("1\n2\n3\n4\n5\n6\n", "4\n5\n-6\n7\n8\n9\n", "value 3 is negative (-6)"),
    ("1\n2\nx3\n", "1\n", "line 3: 'x3' is not a number"),
    ("# nothing\n", "1\n", "no numbers"),
    ("5\n5\n5\n5\n5\n", "5\n5\n5\n5\n5\n", None),  # both constant: exact, identical
])
def test_number_file_errors(tmp_path: Path, kcross: Kcross, a: str, b: str,
                            message: str | None) -> None:
    (tmp_path / "a").write_text(a)
    (tmp_path / "b").write_text(b)
    proc = kcross("compare", "a", "b")   # in tmp_path: side labels short enough not to fold
    if message is None:
        assert proc.returncode == 0, proc.stderr
        (cells,) = ruled_table(proc.stdout, key=lambda cell: " vs" in cell)[1].values()
        assert cells[4] == "identical"  # exact: by value, no p
        assert "(p=" not in proc.stdout
        assert cells[1] == "5 ¹"  # no CI of the median: a footnote
        assert "¹ no CI: n=5: too few for a 95% CI (need 6)" in proc.stdout
    else:
        assert_one_line_error(proc, 2, message)


def test_whole_comparison_errors(tmp_path: Path, kcross: Kcross, stored_db: Path,
                                 base_capture: list[dict]) -> None:
    a = _write(tmp_path / "a.jsonl", base_capture)
    assert_one_line_error(kcross("compare", str(a), "latest:no-such-bench", "--db",
                                 str(stored_db)), 2, "no benchmark matches 'no-such-bench'")
    assert_one_line_error(kcross("compare", str(a), "42", "--db", str(stored_db)), 2,
                          "no run 42")
    assert_one_line_error(kcross("compare", str(a)), 2, "at least two sides")
    assert_one_line_error(kcross("compare", str(tmp_path), str(a)), 2, "is a directory")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe1\n")
    assert_one_line_error(kcross("compare", str(tmp_path / "bad.txt"), str(a)), 2,
                          "not UTF-8")
    (tmp_path / "broken.jsonl").write_text('{"type": "result"}\n')
    assert_one_line_error(kcross("compare", str(tmp_path / "broken.jsonl"), str(a)), 2,
                          "broken.jsonl")
    assert_one_line_error(kcross("compare", f"{a}:getcpu-vdso", str(a)), 2,
                          "one benchmark but another side is a whole run")
    assert_one_line_error(kcross("compare", str(a), str(a), "--format", "ministat", "-c", "97"),
                          2, "-c")


def test_different_units_are_refused() -> None:
    def side(label: str, unit: str) -> compare.Side:
        return compare.Side(label=label, single=True, series=(
            Series(source=label, name="s/x", unit=unit, samples=(1.0, 2.0, 3.0)),))
    with pytest.raises(UserError, match="different units: A is in ns/op, B in instructions/op"):
        pairing.pair([side("A", "ns/op"), side("B", "instructions/op")])
    pairing.pair([side("A", "ns/op"), side("B", "")])  # plain numbers go with either


def test_three_sides_against_the_base(tmp_path: Path, kcross: Kcross,
                                      base_capture: list[dict]) -> None:
    a = _write(tmp_path / "a.jsonl", base_capture)
    b = _write(tmp_path / "b.jsonl", _slower(base_capture, SLOWER))
    c = _write(tmp_path / "c.jsonl", _slower(base_capture, SLOWER, 0.8))
    proc = kcross("compare", a.name, b.name, c.name, "--bench", "getppid-inline")  # (in tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = " ".join(ruled_table(proc.stdout)[1]["syscall/getppid-inline"])
    assert " 10.0% slower (p" in line and " 20.0% faster (p" in line
    sides = compare.load_sides([str(a), str(b), str(c)], _no_store,  # type: ignore[arg-type]
                               bench="getppid-inline")
    (row,) = build(sides).rows
    assert all(j is not None and j.error is None for j in row.judgements[1:])
    assert math.isclose(row.judgements[2].ratio, 0.8, rel_tol=1e-9)  # type: ignore[union-attr,arg-type]


def _masked(text: str) -> str:
    """The layout only: digits become 9 (kcross's p is Holm-adjusted and scipy's
    Mann-Whitney p is not benchstat's exact one; its CI of the median for small n is
    kcross's rule), footnotes keep their mark, not their wording."""
    import re

    text = re.sub(r"(?m)^([¹²³⁴⁵⁶⁷⁸⁹]+) .*$", r"\1 NOTE", text)
    return re.sub(r"[0-9]", "9", text)


@pytest.mark.parametrize("shape", ["two rows", "three sides", "too few for a CI"])
@pytest.mark.network
def test_benchstat_layout_is_benchstats(tmp_path: Path, shape: str, benchstat: Path) -> None:
    """The same samples through the real benchstat (conftest's fixture: golang.org/x/perf's
    benchstat built from the Go module proxy) and --format benchstat."""
    import random

    tool = str(benchstat)
    rng = random.Random(shape)

    def draw(n: int, center: float) -> tuple[float, ...]:
        return tuple(center + rng.random() * center * 0.03 for _ in range(n))

    names = ["Foo", "Bar/size=1k"]
    if shape == "two rows":
        labels = ["old.txt", "new.txt"]
        sets = [[draw(10, 100), draw(10, 50)], [draw(10, 104), draw(10, 50)]]
    elif shape == "three sides":
        labels = ["a.txt", "b.txt", "c.txt"]
        sets = [[draw(10, 100), draw(12, 2e5)], [draw(10, 104), draw(12, 2e5)],
                [draw(10, 90), draw(12, 2.4e5)]]
    else:
        labels = ["before", "after-with-a-long-name"]
        sets = [[draw(5, 100), draw(8, 1e6)], [draw(5, 100), draw(8, 1.2e6)]]
    for label, rows in zip(labels, sets, strict=True):
        (tmp_path / label).write_text("".join(
            f"Benchmark{name} 1 {x!r} ns/op\n" for name, xs in zip(names, rows, strict=True)
            for x in xs))
    theirs = subprocess.run([tool, *labels], cwd=tmp_path, capture_output=True, text=True,
                            timeout=HANG)
    assert theirs.returncode == 0, theirs.stderr
    sides = [compare.Side(label=label, single=False, series=tuple(
        Series(source=label, name=name, unit="ns/op", samples=xs)
        for name, xs in zip(names, rows, strict=True)))
        for label, rows in zip(labels, sets, strict=True)]
    ours = benchstat_view.benchstat_text(build(sides))
    assert _masked(ours) == _masked(theirs.stdout), f"\n{ours}\n{theirs.stdout}"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_runs_on_both_backends(request: pytest.FixtureRequest, tmp_path: Path, kcross: Kcross,
                               base_capture: list[dict], backend: str) -> None:
    """Two imported runs (the second 10% slower on two benchmarks) compared by reference."""
    db = str(tmp_path / "k.db") if backend == "sqlite" else request.getfixturevalue("pg_schema")
    a = _write(tmp_path / "a.jsonl", base_capture)
    b = _write(tmp_path / "b.jsonl", _slower(base_capture, SLOWER))
    for path in (a, b):
        assert kcross("import", str(path), "--db", db).returncode == 0
    proc = kcross("compare", "1", "latest", "--db", db, "--bench", "getppid-*")
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if "getppid-inline" in ln)
    assert " 10.0% slower (p" in line
    assert "latest (run 2)" in proc.stdout
    assert_one_line_error(kcross("compare", "1", "nosuchfile.txt", "--db", db), 2,
                          "'nosuchfile.txt' is neither an existing file nor a stored run")


def test_ministat_blocks_for_whole_runs(stored_db: Path, kcross: Kcross) -> None:
    proc = kcross("compare", "1", "latest", "--db", str(stored_db), "--format", "ministat")
    assert proc.returncode == 0, proc.stderr
    blocks = proc.stdout.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["== syscall/getcpu-vdso",
                                                   "== syscall/getcpu-syscall"]
    for block in blocks:
        lines = block.splitlines()
        assert lines[1:3] == ["x run 1", "+ latest (run 1)"]
        assert lines[4][2:] == lines[5][2:]  # the same run twice: the same figures
        assert lines[6] == "No difference proven at 95.0% confidence"


def test_export_of_a_comparison(tmp_path: Path, kcross: Kcross, base_capture: list[dict]) -> None:
    """--export writes the comparison the table shows: the json record validates, the csv
    rows carry the same verdicts, and an export to - replaces the table."""
    from kcross import schema

    a = _write(tmp_path / "base.jsonl", base_capture)
    b = _write(tmp_path / "new.jsonl", _slower(base_capture, SLOWER))
    proc = kcross("compare", str(a), str(b), "--export", "json", str(tmp_path / "c.json"),
                  "--export", "csv", str(tmp_path / "c.csv"))
    assert proc.returncode == 0, proc.stderr
    assert "geomean" in proc.stdout
    (record,) = _records((tmp_path / "c.json").read_text())
    schema.validate(record, "c.json")
    assert record["type"] == "comparison"
    called = {r["name"] for r in record["rows"] if (r.get("verdict") or {}).get("significant")}
    assert called == set(SLOWER)
    import csv

    with open(tmp_path / "c.csv", newline="") as fh:
        rows = {r["benchmark"]: r for r in csv.DictReader(fh)}
    assert {n for n, r in rows.items() if r["significant"] == "true"} == set(SLOWER)
    proc = kcross("compare", str(a), str(b), "--export", "markdown", "-")
    assert proc.returncode == 0 and proc.stdout.startswith("| benchmark")
    bad = kcross("compare", str(a), str(b), "--export", "xml", str(tmp_path / "x"))
    assert_one_line_error(bad)
    assert "unknown export format" in bad.stderr


def test_separate_runs_say_what_they_cannot_see(tmp_path: Path, kcross: Kcross,
                                                base_capture: list[dict]) -> None:
    """Two runs of one process each: the verdict says it cannot see process-to-process or
    run-to-run variation; two benchmarks of one run do not need to."""
    a = _write(tmp_path / "base.jsonl", base_capture)
    other = json.loads(json.dumps(base_capture))
    other[0]["host"]["time"] = "2026-01-01T00:00:00Z"   # another run: another fingerprint
    b = _write(tmp_path / "new.jsonl", other)
    two_runs = kcross("compare", str(a), str(b))
    assert two_runs.returncode == 0, two_runs.stderr
    text = " ".join(two_runs.stdout.split())
    assert "cannot see process-to-process or run-to-run variation" in text
    assert "--processes K" in text
    one_run = kcross("compare", f"{a}:getppid-inline", f"{a}:getppid-glibc")
    assert one_run.returncode == 0, one_run.stderr
    assert "cannot see" not in one_run.stdout


def test_exports_with_ministat_format_and_three_sides(tmp_path: Path, kcross: Kcross) -> None:
    """--format ministat still writes the exports; with three sides C/A and B/A each get
    their own geomean (never averaged together)."""
    rng = np.random.default_rng(4)
    paths = []
    for name, scale in (("a", 1.0), ("b", 1.2), ("c", 1.0)):
        p = tmp_path / f"{name}.txt"
        p.write_text("".join(f"{x}\n" for x in rng.normal(100 * scale, 1, 30)))
        paths.append(str(p))
    out = tmp_path / "c.json"
    proc = kcross("compare", *paths, "--format", "ministat", "--export", "json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "Difference at 95.0% confidence" in proc.stdout
    (record,) = _records(out.read_text())
    assert record["geomean_ratio"] is None
    ratios = {g["new"]: g["ratio"] for g in record["geomeans"]}
    assert ratios[paths[1]] == pytest.approx(1.2, rel=0.02)
    assert ratios[paths[2]] == pytest.approx(1.0, rel=0.02)


def test_runs_compared_as_files_are_not_their_own_noise(kcross: Kcross, tmp_path: Path) -> None:
    """Two stored runs exported and compared as files, with the store as the machine's
    history: the noise comes from the other runs, as when they are compared by id (before:
    matched by label only, the files' own runs counted among the noise's 5 runs)."""
    db = str(tmp_path / "k.db")
    for _ in range(5):
        proc = kcross("run", "--processes", "3", "--samples", "9", "--bench", "getppid-inline",
                      "--db", db, extra_env={"KCROSS_FAKE_RESAMPLE": "1"})
        assert proc.returncode == 0, proc.stderr
    files = []
    for run in ("4", "5"):
        files.append(str(tmp_path / f"run{run}.jsonl"))
        assert kcross("show", run, "--db", db, "--export", "json", files[-1]).returncode == 0

    def noise_runs(*sides: str) -> int:
        proc = kcross("compare", *sides, "--db", db, "--json")
        assert proc.returncode == 0, proc.stderr
        (row,) = json.loads(proc.stdout)["rows"]
        assert row["base"]["processes"] and len(set(row["base"]["processes"])) == 3
        return row["verdict"]["noise"]["runs"]

    assert noise_runs("4", "5") == 3
    assert noise_runs(*files) == 3
