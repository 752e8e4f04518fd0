"""``kcross history``: a benchmark's trend over stored runs, as a table and a plot.

The store holds copies of the captured real run (the fake harness's records)
imported with chosen dates, hosts, kernels and scaled samples, so every figure
and verdict is known in advance.
"""

from __future__ import annotations

import shutil
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error, captured
from test_check import edited, write

QUIET = "syscall/getppid-inline"

# (hostname, host.time, kernel release, scale of every sample): runs 1..5 in import order
RUNS = [
    ("vm", "2026-01-01T10:00:00Z", "6.1.0-a", 1.00),
    ("vm", "2026-01-02T10:00:00Z", "6.1.0-a", 1.00),
    ("other", "2026-01-02T12:00:00Z", "6.1.0-a", 0.50),
    ("vm", "2026-01-03T10:00:00Z", "6.6.0-b", 1.10),
    ("vm", "2026-01-04T10:00:00Z", "6.6.0-b", 1.10),
]


def rows_of(stdout: str) -> list[list[str]]:
    """The data rows of the plain (ASCII, piped) tables."""
    rows = []
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows.append(cells)
    return rows


RUN, DATE, MACHINE, KERNEL, MEDIAN, CI, VS, CHANGE, P, DETECTABLE, VERDICT, NOTE = range(12)


def store_runs(tmp_path: Path, db: str) -> None:
    """Import RUNS into ``db`` (in this process: the CLI's import is tested elsewhere)."""
    from kcross.importer import import_file
    from kcross.store import Store, resolve

    def open_store() -> Store:
        store = Store.open(resolve(db), write=True)
        assert store is not None
        return store

    for i, (host, time, kernel, scale) in enumerate(RUNS, start=1):
        records = edited(captured(), scale=scale, time=time, hostname=host)
        records[0]["kernel"]["release"] = kernel
        assert import_file(open_store, write(tmp_path / f"{i}.jsonl", records)).run_id == i


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history")
    store_runs(root, str(root / "k.db"))
    return root / "k.db"


@pytest.fixture
def db(template: Path, tmp_path: Path) -> str:
    """A private copy of the five runs of RUNS."""
    path = tmp_path / "k.db"
    shutil.copyfile(template, path)
    return str(path)


def test_trend_table_oldest_first_with_changes_per_host(kcross: Kcross, db: str) -> None:
    proc = kcross("history", QUIET, "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == QUIET
    rows = rows_of(proc.stdout)
    assert [r[RUN] for r in rows] == ["1", "2", "3", "4", "5"]
    assert [r[DATE] for r in rows] == ["2026-01-01 10:00", "2026-01-02 10:00",
                                       "2026-01-02 12:00", "2026-01-03 10:00",
                                       "2026-01-04 10:00"]
    assert [r[MACHINE].split()[0] for r in rows] == ["vm", "vm", "other", "vm", "vm"]
    assert rows[0][MACHINE] == rows[1][MACHINE] != rows[3][MACHINE]  # the kernel is identity
    assert [r[KERNEL] for r in rows] == [k for _, _, k, _ in RUNS]
    # each run against the previous one of its host; the first of a host has none
    assert [r[VS] for r in rows] == ["-", "run 1", "-", "run 2", "run 4"]
    assert [r[VERDICT] for r in rows] == ["first", "~", "first", "slower", "~"]
    assert rows[3][CHANGE].startswith("+10.0% [+")
    assert rows[3][NOTE] == "kernel 6.1.0-a -> 6.6.0-b"
    assert rows[1][CHANGE].startswith("0.0% [") and rows[1][P] == "p=1.000"   # no signed 0
    from kcross.stats import median, summarize_record
    from kcross.views.text import in_unit as format_value

    base = median(summarize_record(next(r for r in captured() if r.get("name") ==
                                        QUIET.split("/")[1])).samples)
    assert rows[0][MEDIAN] == format_value(base, "ns/op")
    assert rows[2][MEDIAN] == format_value(base * 0.5, "ns/op")
    assert "(3 changes shown)" in proc.stdout
    assert proc.stdout.isascii()


def test_machine_filter_by_hostname_and_hash_prefix(kcross: Kcross, db: str) -> None:
    rows = rows_of(kcross("history", QUIET, "--machine", "other", "--db", db).stdout)
    assert [r[RUN] for r in rows] == ["3"]
    every = rows_of(kcross("history", QUIET, "--db", db).stdout)
    prefix = every[3][MACHINE].split()[1][:6]  # the 6.6 kernel's machine hash
    rows = rows_of(kcross("history", QUIET, "--machine", prefix, "--db", db).stdout)
    assert [r[RUN] for r in rows] == ["4", "5"]
    assert [r[VS] for r in rows] == ["run 2", "run 4"]  # the host's previous run, not shown
    assert_one_line_error(kcross("history", QUIET, "--machine", "nosuch", "--db", db), 2,
                          "no stored run of 'syscall/getppid-inline' on machine 'nosuch'")


def test_last_n_runs_still_compare_with_the_run_before(kcross: Kcross, db: str) -> None:
    rows = rows_of(kcross("history", QUIET, "--last", "2", "--db", db).stdout)
    assert [r[RUN] for r in rows] == ["4", "5"]
    assert rows[0][VS] == "run 2" and rows[0][VERDICT] == "slower"


def test_glob_and_bare_names_show_every_match(kcross: Kcross, db: str) -> None:
    proc = kcross("history", "getppid-*", "--last", "1", "--db", db)
    assert proc.returncode == 0, proc.stderr
    ok = [f"syscall/{r['name']}" for r in captured() if r["type"] == "result"
          and r["suite"] == "syscall" and r["name"].startswith("getppid-")]
    titles = [line for line in proc.stdout.splitlines() if line.startswith("syscall/")]
    assert titles == ok
    # a bare name in two suites
    proc = kcross("history", "getcpu-vdso", "--last", "1", "--db", db)
    titles = [line for line in proc.stdout.splitlines() if line.endswith("/getcpu-vdso")]
    assert titles == ["syscall/getcpu-vdso", "cpuid/getcpu-vdso"]


def test_skipped_and_failed_results_are_rows_without_figures(kcross: Kcross, db: str) -> None:
    proc = kcross("run", "--quick", "--suite", "syscall", "--db", db,
                  extra_env={"KCROSS_FAKE_SKIP": "getppid-inline"})
    assert proc.returncode == 0, proc.stderr
    proc = kcross("run", "--quick", "--suite", "syscall", "--db", db,
                  extra_env={"KCROSS_TEST_FAIL": "getppid-inline"})
    assert proc.returncode == 1  # a failed check
    rows = rows_of(kcross("history", QUIET, "--last", "3", "--db", db).stdout)
    assert [r[RUN] for r in rows] == ["5", "6", "7"]
    assert rows[1][VERDICT].startswith("skipped: ") and rows[1][MEDIAN] == "-"
    assert rows[2][VERDICT].startswith("failed: ") and rows[2][MEDIAN] == "-"


def test_plot_svg_and_png(kcross: Kcross, db: str, tmp_path: Path) -> None:
    svg = tmp_path / "trend.svg"
    proc = kcross("history", "getppid-i*", "--plot", str(svg), "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert f"plot written to {svg}" in proc.stderr
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = svg.read_text()
    for label in ("syscall/getppid-inline", "syscall/getppid-int80", "median ns/op", "other"):
        assert label in text, label  # each text drawn as paths follows a comment quoting it
    png = tmp_path / "trend.png"
    assert kcross("history", QUIET, "--plot", str(png), "--db", db).returncode == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 500 and height > 200


@pytest.mark.parametrize("args, message", [
    (["nosuch"], "no stored run has a benchmark matching 'nosuch'"),
    (["getppid-inlin"], "(did you mean getppid-inline"),
    ([QUIET, "--plot", "trend.pdf"], "--plot trend.pdf: the file must end in .svg or .png"),
    ([QUIET, "--plot", "/nonexistent/dir/t.svg"], "directory '/nonexistent/dir' does not exist"),
    ([QUIET, "--last", "0"], "must be a whole number of runs, 1 or more"),
    ([QUIET, "--machine", "zz"], "on machine 'zz'"),
], ids=lambda x: x if isinstance(x, str) else " ".join(x))
def test_errors_are_one_line(kcross: Kcross, db: str, args: list[str], message: str) -> None:
    assert_one_line_error(kcross("history", *args, "--db", db), 2, message)


def test_empty_store(kcross: Kcross, tmp_path: Path) -> None:
    assert_one_line_error(kcross("history", QUIET, "--db", str(tmp_path / "none.db")), 2,
                          "none.db: no such file")
    assert not (tmp_path / "none.db").exists()


def test_postgres_store_gives_the_same_table(kcross: Kcross, tmp_path: Path, db: str,
                                             pg_schema: str) -> None:
    store_runs(tmp_path, pg_schema)
    sqlite = kcross("history", QUIET, "--db", db)
    postgres = kcross("history", QUIET, "--db", pg_schema)
    assert postgres.returncode == 0, postgres.stderr
    assert rows_of(postgres.stdout) == rows_of(sqlite.stdout)
