"""The exports read by the real tools: ministat (Debian's package) and benchstat
(conftest's ``benchstat`` fixture: built from the Go module proxy, or skipped saying why)."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import HANG, captured
from kcross import export, stats
from kcross.export import ExportData
from kcross.series import Series, series_of_results
from test_export import SAME, SLOWER, comparison, stored_run


def run_tool(*args: str | Path) -> str:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


def csv_tables(text: str) -> list[list[list[str]]]:
    """``benchstat -format csv``: tables separated by blank lines, after the config lines."""
    found: list[list[list[str]]] = []
    for block in text.strip().split("\n\n"):
        rows = list(csv.reader(io.StringIO("\n".join(line for line in block.splitlines()
                                                      if not re.match(r"^\w+: ", line)))))
        found.append(rows)
    return found


def bench(name: str) -> str:
    """How benchstat shows a kcross benchmark: its Go name without ``Benchmark``."""
    return name[0].upper() + name[1:]


# --- ministat ------------------------------------------------------------------------------

needs_ministat = pytest.mark.skipif(shutil.which("ministat") is None,
                                    reason="ministat not installed (Debian: apt-get install "
                                           "ministat)")


def ministat_rows(text: str) -> dict[str, list[float]]:
    """ministat's summary lines: ``x  N  Min  Max  Median  Avg  Stddev`` by symbol."""
    rows = {}
    for line in text.splitlines():
        match = re.match(r"^([x+*%#@O])\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", line)
        if match:
            rows[match[1]] = [float(v) for v in match.groups()[1:]]
    return rows


def assert_ministat_describes(row: Sequence[float], samples: Sequence[float]) -> None:
    n, low, high, median = row[:4]
    assert n == len(samples)
    assert low == pytest.approx(min(samples), rel=1e-7)  # ministat prints 8 digits
    assert high == pytest.approx(max(samples), rel=1e-7)
    assert median == pytest.approx(sorted(samples)[len(samples) // 2], rel=1e-7)


@needs_ministat
def test_ministat_reads_a_runs_files(tmp_path: Path) -> None:
    run = stored_run()
    written = export.write("ministat", tmp_path / "run.txt", ExportData(runs=[run]))
    series = series_of_results("run 1", run.fingerprint, run.results)
    assert len(written) == len(series)
    for path, one in zip(written, series, strict=True):
        rows = ministat_rows(run_tool("ministat", "-n", path))
        assert_ministat_describes(rows["x"], one.samples)


@needs_ministat
def test_ministat_compares_the_sides_of_a_comparison(tmp_path: Path) -> None:
    rows = comparison()
    files = export.write("ministat", tmp_path / "cmp.txt", ExportData(rows=rows))
    slower = run_tool("ministat", files[0], files[1])  # SLOWER: base, new
    same = run_tool("ministat", files[2], files[3])
    assert "Difference at 95.0% confidence" in slower
    assert "No difference proven at 95.0% confidence" in same
    summary = ministat_rows(slower)
    assert_ministat_describes(summary["x"], rows[0].base.samples)
    assert_ministat_describes(summary["+"], rows[0].new.samples)


# --- benchstat -----------------------------------------------------------------------------


@pytest.mark.network
def test_benchstat_reads_a_runs_export(benchstat: Path, tmp_path: Path) -> None:
    run = stored_run()
    path = tmp_path / "run.txt"
    export.write("gobench", path, ExportData(runs=[run]))
    text = run_tool(benchstat, path)
    series = series_of_results("run 1", run.fingerprint, run.results)
    for one in series:
        assert re.search(rf"^{re.escape(bench(one.name))}\s", text, re.M), one.name
    assert "sec/op" in text and "cpu: AMD EPYC" in text
    (table,) = csv_tables(run_tool(benchstat, "-format", "csv", path))
    assert table[1][1] == "sec/op"
    medians = {row[0]: float(row[1]) for row in table[2:] if row[0] != "geomean"}
    assert set(medians) == {bench(s.name) for s in series}
    for one in series:  # benchstat's median (in seconds) is kcross's (n is odd)
        assert medians[bench(one.name)] == pytest.approx(stats.median(one.samples) * 1e-9,
                                                         rel=1e-9)


@pytest.mark.network
def test_benchstat_compares_two_runs_of_one_machine_in_one_table(benchstat: Path,
                                                                 tmp_path: Path) -> None:
    """Kernel, host and run id differ between the files, yet benchstat makes one table:
    only goos/goarch/pkg/cpu are configuration."""
    records = captured()  # a fresh copy
    (fingerprint,) = [r for r in records if r["type"] == "fingerprint"]
    fingerprint["kernel"]["release"] = "6.19.0-new"
    fingerprint["host"]["hostname"] = "elsewhere"
    other = stored_run(2, records)
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    export.write("gobench", old, ExportData(runs=[stored_run()]))
    export.write("gobench", new, ExportData(runs=[other]))
    assert "# kernel: 6.19.0-new" in new.read_text()
    tables = csv_tables(run_tool(benchstat, "-format", "csv", old, new))
    assert len(tables) == 1, tables
    assert tables[0][0][1] == str(old) and str(new) in tables[0][0]
    rows = {row[0]: row for row in tables[0][2:]}
    assert rows[bench(SLOWER)][5] == "~"  # the same samples: no difference


@pytest.mark.network
def test_benchstat_splits_a_comparison_by_side(benchstat: Path, tmp_path: Path) -> None:
    rows = comparison()
    path = tmp_path / "cmp.txt"
    export.write("gobench", path, ExportData(rows=rows))
    text = run_tool(benchstat, "-col", "side", path)
    assert re.search(r"│\s+run 1\s+│\s+run 2\s+│", text), text
    (table,) = csv_tables(run_tool(benchstat, "-col", "side", "-format", "csv", path))
    assert table[0][1] == "run 1" and table[0][3] == "run 2"
    found = {row[0]: row for row in table[2:]}
    slower, same = found[bench(SLOWER)], found[bench(SAME)]
    assert float(slower[1]) == pytest.approx(stats.median(rows[0].base.samples) * 1e-9)
    assert float(slower[3]) == pytest.approx(stats.median(rows[0].new.samples) * 1e-9)
    assert slower[5] == "+10.00%" and float(slower[6].split()[0][2:]) < 0.05
    assert same[5] == "~"


@pytest.mark.network
def test_benchstat_takes_instruction_counts_as_their_own_unit(benchstat: Path,
                                                              tmp_path: Path) -> None:
    counts = [346.0] * 5 + [347.0] * 6
    series = [Series("lab ppc64le sc", "syscall/getppid-inline", "instructions/op", tuple(counts)),
              Series("lab ppc64le scv", "syscall/getppid-inline", "instructions/op",
                     tuple(x - 40 for x in counts))]
    path = tmp_path / "lab.txt"
    export.write("gobench", path, ExportData(series=series))
    (table,) = csv_tables(run_tool(benchstat, "-col", "side", "-format", "csv", path))
    assert table[1][1] == "instructions/op"
    (row,) = [r for r in table[2:] if r[0] == bench("syscall/getppid-inline")]
    assert float(row[1]) == 347.0 and float(row[3]) == 307.0
    assert row[5].startswith("-11.5")  # 307/347 - 1
