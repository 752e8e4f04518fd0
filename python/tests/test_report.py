"""`kcross report`: the HTML page of stored runs, read back with html.parser and drawn by
headless Chromium.

The store holds a run of every suite through the fake harness, the same capture with
some benchmarks planted slower and faster (imported), and two counted lab runs: the
real ppc64le console's, and a copy of it as another arch with shifted counts.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, HANG, Kcross, assert_one_line_error, captured, isolated_env, opens_for_writing

CHROMIUM = "/usr/bin/chromium"
SLOWER = {"syscall/getppid-glibc": 1.25, "syscall/stat-root": 1.10}   # planted in run 2
FASTER = {"cpuid/rdtscp": 0.8}


# --- the store ---------------------------------------------------------------------------

def _kcross(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kcross", *args], env=isolated_env(root),
                          capture_output=True, text=True, timeout=HANG)


def _scale(rec: dict[str, Any], factor: float) -> None:
    """Every figure of a result times ``factor``: its samples and the empty loop's, so the
    overhead decision and the corrected median scale alike."""
    rec["samples"] = [x * factor for x in rec["samples"]]
    rec["overhead"]["samples"] = [x * factor for x in rec["overhead"]["samples"]]
    rec["ticks"] = [x * factor for x in rec["ticks"]]       # a lab's counts: judged in ticks
    rec["overhead"]["ticks"] = [x * factor for x in rec["overhead"]["ticks"]]


def _planted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The capture, on another host, with the SLOWER and FASTER benchmarks scaled."""
    records = copy.deepcopy(records)
    for rec in records:
        if rec["type"] == "fingerprint":
            rec["host"]["hostname"] = "other-host"
        if rec["type"] != "result" or rec["status"] != "ok":
            continue
        factor = {**SLOWER, **FASTER}.get(f"{rec['suite']}/{rec['name']}")
        if factor:
            _scale(rec, factor)
    return records


def _lab_streams(tmp: Path) -> list[Any]:
    """The real ppc64le lab run (its console), and the same as aarch64 with counts + 40%."""
    from kcross.lab import machines
    from kcross.lab.initramfs import parse_console
    from kcross.lab.kernel import Kernel
    from kcross.lab.machines import Guest
    from kcross.lab.session import lab_group, lab_records

    kernel_file = tmp / "vmlinux"
    kernel_file.write_bytes(b"k")
    from labs import CONSOLE_TOKEN

    (result,) = parse_console((DATA / "lab-ppc64le-console.txt").read_text(), CONSOLE_TOKEN)
    guest = Guest(machines.arch("ppc64le"), kernel_file)
    stream, _, _ = lab_records(result, lab_group(guest, Kernel("ppc64le", kernel_file), None),
                               "console")
    other = copy.deepcopy(stream)
    assert other.fingerprint is not None
    other.fingerprint["arch"] = "aarch64"
    other.fingerprint["lab"].update(emulator="qemu-system-aarch64", machine="virt",
                                    cpu="cortex-a72")
    for rec in other.results:
        if rec["status"] == "ok":
            _scale(rec, 1.4)
    return [stream, other]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs 1 (fake harness, every suite), 2 (planted changes), 3 and 4 (lab ppc64le, aarch64)."""
    root = tmp_path_factory.mktemp("report")
    db = root / "k.db"
    proc = _kcross(root, "run", "--quick", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    planted = root / "planted.jsonl"
    planted.write_text("".join(json.dumps(r) + "\n" for r in _planted(captured())))
    proc = _kcross(root, "import", str(planted), "--db", str(db))
    assert proc.returncode == 0, proc.stderr

    from kcross.importer import import_stream
    from kcross.store import Store, resolve

    def open_store() -> Store:
        opened = Store.open(resolve(str(db)), write=True)
        assert opened is not None
        return opened

    for stream in _lab_streams(root):
        import_stream(open_store, stream, command=["lab"], source="lab", name="lab")
    return db


@pytest.fixture(scope="module")
def page(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page")
    out = root / "report.html"
    proc = _kcross(root, "report", "1", "2", "3", "4", "--db", str(store), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stderr and proc.stdout == ""
    return out


# --- reading the page --------------------------------------------------------------------

class Page(HTMLParser):
    """The elements the tests look at: sections, headings, SVGs, tables, links, scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[str] = []
        self.svgs: list[dict[str, str | None]] = []
        self.svg_in: dict[str, int] = {}          # section id -> SVGs in it
        self.ids: list[str] = []
        self.urls: list[str] = []
        self.scripts = 0
        self.text: list[str] = []
        self.tables: dict[str, list[list[list[str]]]] = {}   # section id -> its tables' rows
        self._section = ""
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_svg = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        for key in ("href", "src", "xlink:href"):
            value = a.get(key)
            if value and not value.startswith("#"):
                self.urls.append(value)
        if tag == "section":
            self._section = str(a.get("id"))
            self.sections.append(self._section)
        elif tag == "svg":
            if not self._in_svg:
                self.svgs.append(a)
                self.svg_in[self._section] = self.svg_in.get(self._section, 0) + 1
            self._in_svg += 1
        elif tag == "script":
            self.scripts += 1
        elif tag == "table":
            self.tables.setdefault(self._section, []).append([])
        elif tag == "tr" and not self._in_svg:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._in_svg -= 1
        elif tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._section][-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if not self._in_svg:
            self.text.append(data)


def parse(path: Path) -> Page:
    parsed = Page()
    parsed.feed(path.read_text())
    parsed.close()
    return parsed


def test_page_has_every_section(page: Path) -> None:
    parsed = parse(page)
    suites = list(dict.fromkeys(r["suite"] for r in captured() if r["type"] == "result"))
    assert parsed.sections[:4] == ["summary", "runs", "fingerprint", "comparisons"]
    assert [s for s in parsed.sections if s.startswith("suite-")] == \
        [f"suite-{s}" for s in suites]
    assert "scaling" in parsed.sections and "lab" in parsed.sections
    # a strip plot in every suite with a result that has figures; forest, scaling, lab bars
    for suite in suites:
        if any(r["status"] == "ok" for r in captured() if r["type"] == "result"
               and r["suite"] == suite):
            assert parsed.svg_in.get(f"suite-{suite}", 0) >= 1, suite
    assert parsed.svg_in["comparisons"] == 2      # run 2 vs 1, run 4 vs 3 (same unit only)
    assert parsed.svg_in["scaling"] == 1 and parsed.svg_in["lab"] == 1


def test_page_is_self_contained(page: Path) -> None:
    parsed = parse(page)
    assert parsed.scripts == 0
    assert parsed.urls == []                       # no link, image or font from elsewhere
    text = page.read_text()
    assert not re.search(r"https?://(?!www\.w3\.org/)", text), "a URL besides SVG namespaces"
    assert len(parsed.ids) == len(set(parsed.ids)), "ids shared between inlined SVGs"
    assert page.stat().st_size < 3 * 1024 * 1024


def test_tables_hold_the_stats_figures(page: Path, store: Path) -> None:
    from kcross.stats import summarize_record
    from kcross.views.text import in_unit as format_value

    parsed = parse(page)
    rows = parsed.tables["suite-syscall"][0]
    header = rows[0]
    # the lab runs' rows are there too: two units, each row says its own
    assert header[:3] == ["benchmark", "run", "median"]
    unit = header.index("unit")
    assert {r[1]: r[unit] for r in rows[1:5]} == {"run 1": "ns/op", "run 2": "ns/op",
                                                   "run 3": "instructions/op",
                                                   "run 4": "instructions/op"}
    cpuid = parsed.tables["suite-cpuid"][0][0]       # no lab run has it: one unit
    assert cpuid[:3] == ["benchmark", "run", "median (ns/op)"] and "unit" not in cpuid
    rec = next(r for r in captured() if r["type"] == "result" and r["name"] == "getppid-glibc")
    expected = format_value(summarize_record(rec).median, "ns/op")
    row = next(r for r in rows if r[0] == "getppid-glibc")
    assert row[1] == "run 1" and row[2].rstrip("†") == expected
    skipped = next(r for r in captured() if r["type"] == "result" and r["status"] == "skipped")
    line = next(r for r in parsed.tables[f"suite-{skipped['suite']}"][0]
                if r[0] == skipped["name"])
    assert line[-2:] == [f"skipped: {skipped['reason']}", "skipped"]


def test_comparisons_find_the_planted_changes(page: Path) -> None:
    tables = parse(page).tables["comparisons"]
    assert len(tables) == 2                       # run 2 vs run 1; run 4 vs run 3 (lab)
    rows = tables[0]
    verdicts = {r[0]: r[-1] for r in rows if len(r) == 7 and "/" in r[0]}
    for name, factor in {**SLOWER, **FASTER}.items():
        word = "slower" if factor > 1 else "faster"
        assert verdicts[name].endswith(word), (name, verdicts[name])
        assert verdicts[name].startswith(f"{abs(factor - 1):.1%}"[:2]), verdicts[name]
    unchanged = [v for n, v in verdicts.items() if n.startswith("percpu/")]
    assert unchanged and all(v == "~" for v in unchanged)
    assert any(r[0] == "geomean of ratios" for r in rows)
    text = " ".join(" ".join(parse(page).text).split())
    assert "the runs' fingerprints differ in hostname:" in text    # run 2's other host
    assert "the runs' fingerprints differ in arch," in text        # the labs' arches
    lab = {r[0]: r for r in tables[1] if "/" in r[0]}
    assert lab["syscall/getppid-glibc"][3] == "1.400"                # exact: by value
    assert lab["syscall/getppid-glibc"][-1].startswith("+")          # a count's change


def test_lab_counts_by_arch(page: Path) -> None:
    (rows,) = parse(page).tables["lab"]
    assert rows[0] == ["benchmark", "ppc64le (run 3)", "aarch64 (run 4)"]
    values = {r[0]: r[1:] for r in rows[1:]}
    a, b = (float(x) for x in values["syscall/getppid-glibc"])
    assert b == pytest.approx(a * 1.4, rel=0.01)


def test_scaling_table_lists_the_sweeps(page: Path) -> None:
    (rows,) = parse(page).tables["scaling"]
    sweeps = {r[0] for r in rows[1:] if r[0]}
    assert {"counter-atomic", "counter-rseq", "counter-getcpu-atomic"} <= sweeps
    assert [r[2] for r in rows[1:4]] == ["x1", "xN", "x2N"]


def test_default_is_latest_and_stdout(store: Path, kcross: Kcross) -> None:
    proc = kcross("report", "--db", str(store), "-o", "-")
    assert proc.returncode == 0, proc.stderr
    parsed = Page()
    parsed.feed(proc.stdout)
    assert "comparisons" not in parsed.sections           # one run: nothing to compare with
    assert parsed.sections[:2] == ["runs", "fingerprint"]


def test_errors_are_one_line(store: Path, tmp_path: Path, kcross: Kcross) -> None:
    out = str(tmp_path / "r.html")
    assert_one_line_error(kcross("report", "99", "--db", str(store), "-o", out), 2, "no run 99")
    assert_one_line_error(kcross("report", "--db", str(tmp_path / "none.db"), "-o", out),
                          2, "none.db: no such file")
    assert not (tmp_path / "none.db").exists()
    assert_one_line_error(kcross("report", "--db", str(store),
                                 "-o", str(tmp_path / "no" / "dir" / "r.html")), 2, "dir' does not exist")
    assert_one_line_error(kcross("report", "--db", str(store), "-o", str(tmp_path)),
                          2, "is a directory")
    assert not (tmp_path / "r.html").exists()


def test_failed_and_interrupted_runs(tmp_path: Path, kcross: Kcross) -> None:
    """A run whose harness died, with failed checks, and one that stored nothing: the page
    says so in its notes and its tables, and compares what it can (nothing here)."""
    db = str(tmp_path / "k.db")
    kcross("run", "--quick", "--suite", "syscall", "--db", db,
           extra_env={"KCROSS_TEST_FAIL": "getppid-*", "KCROSS_FAKE_DIE_AFTER": "5"})
    kcross("run", "--quick", "--suite", "syscall", "--db", db,
           extra_env={"KCROSS_FAKE_DIE_AFTER": "0"})
    out = tmp_path / "r.html"
    proc = kcross("report", "1", "2", "--db", db, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    parsed = parse(out)
    text = " ".join(" ".join(parsed.text).split())
    assert "run 1 is not complete (failed): 5 of " in text \
        and "run 2 is not complete (failed): 0 of " in text
    rows = parsed.tables["suite-syscall"][0]
    assert all(r[-1] == "failed" for r in rows[1:]) and len(rows) == 6
    assert "no benchmark with figures in both runs" in text
    assert parsed.svg_in == {}                    # nothing to draw


def test_unwritable_output(store: Path, tmp_path: Path, kcross: Kcross) -> None:
    # written into, never replaced (in a chroot /dev/full may be a node on a nodev mount);
    # a write that fails is status 3 (test_outfile.py has the rule's tests)
    if Path("/dev/full").is_char_device() and opens_for_writing("/dev/full"):
        assert_one_line_error(kcross("report", "--db", str(store), "-o", "/dev/full"),
                              3, "-o '/dev/full': cannot write it: No space left")
        assert Path("/dev/full").is_char_device()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who may write anywhere (root): a read-only "
                        "directory stops nothing")
        assert_one_line_error(kcross("report", "--db", str(store), "-o", str(locked / "r.html")),
                              2, "permission denied")
    finally:
        locked.chmod(0o700)


# --- Chromium ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chromium() -> str:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no {CHROMIUM} (apt-get install chromium): the page is not drawn")
    return CHROMIUM


def _chromium(binary: str, tmp: Path, page: Path, *extra: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
             f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0"]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.run([binary, *flags, *extra, page.as_uri()], capture_output=True,
                          text=True, timeout=HANG, env=env, cwd=tmp)


def _console_errors(log: str) -> list[str]:
    """What the page said to the console, and loads that failed.  The page has no script,
    so any console message at all is wrong (Chromium logs them as INFO:CONSOLE lines)."""
    return [line for line in log.splitlines()
            if ":CONSOLE" in line or "Uncaught" in line or "net::ERR_" in line
            or "Not allowed to load local resource" in line]


def test_console_check_catches_errors(chromium: str, tmp_path: Path) -> None:
    """The console check itself: a page that logs and throws is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><p>x</p><script>console.error("boom"); '
                   "undefinedFunction();</script></body></html>")
    proc = _chromium(chromium, tmp_path, bad, "--dump-dom")
    found = _console_errors(proc.stderr)
    assert any("boom" in line for line in found), proc.stderr[-2000:]
    assert any("Uncaught ReferenceError" in line for line in found)


def test_chromium_draws_the_page(chromium: str, page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    proc = _chromium(chromium, tmp_path, page, f"--screenshot={shot}", "--window-size=1280,2400")
    assert shot.exists(), proc.stderr[-2000:]
    assert _console_errors(proc.stderr) == []
    import numpy as np
    from matplotlib.image import imread

    image = imread(shot)                      # floats 0..1, height x width x RGB(A)
    assert image.shape[:2] == (2400, 1280)
    rgb = (image[..., :3] * 255).round().astype(np.uint32).reshape(-1, 3)
    colours = len(np.unique(rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2]))
    assert colours > 200, f"{colours} colours: a blank or unstyled page?"
    # ink on at least 3% of the page: text, tables and plots, not a white sheet
    assert (rgb.mean(axis=1) < 128).mean() > 0.03
    keep = os.environ.get("KCROSS_TEST_REPORT_SHOT")
    if keep:
        shutil.copyfile(shot, keep)


def test_chromium_dom_has_the_plots(chromium: str, page: Path, tmp_path: Path) -> None:
    proc = _chromium(chromium, tmp_path, page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_errors(proc.stderr) == []
    dom = Page()
    dom.feed(proc.stdout)
    source = parse(page)
    assert len(dom.svgs) == len(source.svgs) >= 10
    assert dom.sections == source.sections
    assert all(s.get("class") == "plot" for s in dom.svgs)


def test_page_is_stable(store: Path, tmp_path: Path) -> None:
    """The same runs make the same page but for the time it was made (fixed jitter, ids)."""
    import datetime as dt

    from kcross import report
    from kcross.store import Store, resolve

    opened = Store.open(resolve(str(store)), write=False)
    assert opened is not None
    try:
        runs = [opened.load_run("3"), opened.load_run("4")]   # the labs: small and quick
    finally:
        opened.close()
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert report.html(runs, now=now) == report.html(runs, now=now)


def test_report_from_postgresql(pg_schema: str, tmp_path: Path, kcross: Kcross) -> None:
    """The page reads runs through the store alone: a PostgreSQL store gives the same page."""
    for _ in range(2):
        proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db", pg_schema)
        assert proc.returncode == 0, proc.stderr
    out = tmp_path / "r.html"
    proc = kcross("report", "1", "latest", "--db", pg_schema, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    parsed = parse(out)
    assert parsed.sections == ["summary", "runs", "fingerprint", "comparisons", "suite-syscall",
                               "method"]
    (rows,) = parsed.tables["comparisons"]
    assert [r[0] for r in rows[1:3]] == ["syscall/getcpu-vdso", "syscall/getcpu-syscall"]


def test_hardware_counters_get_columns() -> None:
    """Per-op hardware counters (none on the captured VM) become columns, scaled ones starred;
    the software counters' totals follow."""
    import datetime as dt

    from kcross import report
    from kcross.store import StoredRun

    records = copy.deepcopy(captured())
    results = [r for r in records if r["type"] == "result" and r["suite"] == "cpuid"]
    results[0]["counters"]["cycles:k"] = {"total": 1000, "per_op": 812.25, "scaled": True}
    results[0]["counters"]["instructions:u"] = {"total": 99, "per_op": 12.0, "scaled": False}
    run = StoredRun(id=7, started_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC), finished_at=None,
                    status="complete", source="run", error=None, fingerprint=records[0],
                    plan=records[1], results=results, end=None)
    (table,) = report.build([run]).suites
    assert table.columns[-5:] == ["cyc:k/op", "ins:u/op", "csw", "mig", "pf"]
    first = table.rows[0].cells
    assert (first["cyc:k/op"], first["ins:u/op"]) == ("812.2*", "12")
    assert "cyc:k/op" not in table.rows[1].cells


def test_runs_by_tag_and_reference(tmp_path: Path, kcross: Kcross) -> None:
    """RUN takes what Store.load_run takes (tags, latest~N); the page shows the tags."""
    db = str(tmp_path / "k.db")
    for extra in ([], ["--tag", "after"]):
        proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db", db, *extra)
        assert proc.returncode == 0, proc.stderr
    assert kcross("tag", "1", "before", "--db", db).returncode == 0
    out = tmp_path / "r.html"
    proc = kcross("report", "before", "latest~0", "--db", db, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    (runs,) = parse(out).tables["runs"]
    assert runs[0][:3] == ["run", "compared", "tags"]
    assert [r[:3] for r in runs[1:]] == [["run 1", "base", "before"], ["run 2", "vs run 1", "after"]]
    assert_one_line_error(kcross("report", "nosuch", "--db", db, "-o", str(out)), 2, "nosuch")


def test_a_run_tagged_base_is_not_base_base(tmp_path: Path, kcross: Kcross) -> None:
    """The base of the comparisons tagged "base": its role and its tag in columns of their
    own (the run's cell said "run 1 base base")."""
    db = str(tmp_path / "k.db")
    for _ in range(2):
        assert kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db", db).returncode == 0
    assert kcross("tag", "1", "base", "--db", db).returncode == 0
    out = tmp_path / "r.html"
    assert kcross("report", "base", "latest", "--db", db, "-o", str(out)).returncode == 0
    parsed = parse(out)
    (runs,) = parsed.tables["runs"]
    assert [r[:3] for r in runs[1:]] == [["run 1", "base", "base"], ["run 2", "vs run 1", ""]]
    assert not any("base base" in cell for row in runs for cell in row)


def test_warnings_fold_below_the_content(page: Path) -> None:
    """The harness's flags: one line at the top counting them, their details in a closed
    <details> after every suite (a wall of lines above the fingerprint before)."""
    flagged = [(r["suite"], r["name"], f) for r in captured() if r["type"] == "result"
               for f in r.get("flags") or []]
    assert flagged, "the capture should have a flagged result"
    parsed = parse(page)
    assert parsed.sections[-2:] == ["warnings", "method"]
    text = page.read_text()
    runs = text[text.index('<section id="runs">'):text.index('<section id="fingerprint">')]
    details = [f["detail"] for _, _, f in flagged]
    assert not any(d in runs for d in details)
    flags = {f["flag"] for _, _, f in flagged}
    # runs 1 and 2 hold the capture's flags; the lab runs none
    assert re.search(rf"⚑ {2 * len(flagged)} warnings from the harness\s+\(", runs), runs
    assert all(f"{flag}: " in runs for flag in flags)
    warnings = text[text.index('<section id="warnings">'):text.index('<section id="method">')]
    assert "<details>" in warnings and "<details open" not in warnings
    assert all(d in warnings for d in details)
    suite, name, flag = flagged[0]
    rows = parsed.tables[f"suite-{suite}"][0]
    row = next(r for r in rows if r[0] == name)
    assert row[-1] == f"ok⚑ {flag['flag']}"   # the name only (after a <br>); the detail below


def _forest(ratios: dict[str, tuple[float, float, float]]) -> str:
    """The forest plot of rows name -> (CI low, ratio, CI high)."""
    from types import SimpleNamespace

    from kcross.judge.categories import Category
    from kcross.report import model, plots

    rows = [model.SectionRow(name, "", "", "", "", "", "~", "same",
                             SimpleNamespace(ratio_low=lo, ratio=r, ratio_high=hi,  # type: ignore[arg-type]
                                             category=Category.SAME))
            for name, (lo, r, hi) in ratios.items()]
    comparison = SimpleNamespace(rows=rows, anchor="cmp-1-2", base=SimpleNamespace(label="run 1"),
                                 new=SimpleNamespace(label="run 2"))
    svg = plots.forest(comparison)  # type: ignore[arg-type]
    assert svg is not None
    return svg


def _reach(ratios: dict[str, tuple[float, float, float]]) -> float:
    import math

    from kcross.report import plots

    return math.exp(plots.forest_reach([tuple(math.log(x) for x in v)  # type: ignore[misc]
                                        for v in ratios.values()]))


def test_forest_scale_is_the_rows_not_an_outlier() -> None:
    """One benchmark 5x slower among 40 within 1%: the axis reaches the others' changes
    (labelled in percent), and the outlier is clipped at the edge with its change written
    there (before: a log axis from 0.2 to 5 squeezed the 40 rows onto the line at 1)."""
    ratios = {f"s/b{i}": (0.99 + i / 4000, 1.0 + i / 4000, 1.01 + i / 4000) for i in range(40)}
    ratios["s/slow"] = (4.8, 5.0, 5.2)
    ratios["s/planted"] = (1.18, 1.2, 1.22)
    svg = _forest(ratios)
    labels = re.findall(r">([^<>]*%)<", svg)    # tick labels and the clipped row's change
    assert "+400%" in labels and {"-10%", "+10%"} <= set(labels), labels
    assert "1 row clipped at the edge" in svg
    assert 1.2 < _reach(ratios) < 1.3           # the +20% row in view, the 5x one not
    narrow = {f"s/b{i}": (0.999, 1.0 + i / 1000, 1.001 + i / 500) for i in range(10)}
    assert {"-5%", "0", "+5%"} <= set(re.findall(r">([^<>]*%|0)<", _forest(narrow)))
    assert _reach(narrow) == pytest.approx(1.05)          # never narrower than ±5%


def test_log_axes_keep_their_labels_apart(page: Path) -> None:
    """A strip plot over many decades (ns/op from a vDSO read to an int 0x80) labels the
    powers of ten only: 1, 2 and 5 per decade ran together ("10,00020,00050,000")."""
    text = page.read_text()
    for section in re.findall(r'<section id="suite-[^"]+">.*?</section>', text, re.S):
        for svg in re.findall(r"<svg.*?</svg>", section, re.S):
            numbers = [float(x.replace(",", "")) for x in
                       re.findall(r">([\d,]+(?:\.\d+)?)</text>", svg)]
            if len(numbers) > 1:
                ratios = [b / a for a, b in zip(numbers, numbers[1:], strict=False) if a > 0]
                assert len(numbers) <= 9 or all(r >= 10 for r in ratios), numbers


def test_the_page_opens_with_what_changed(page: Path) -> None:
    """Before the runs and their fingerprints: each comparison's counts by verdict, its
    changes largest first, and what its verdicts saw."""
    html = page.read_text()
    assert html.index('id="summary"') < html.index('id="runs"')
    summary = html[html.index('id="summary"'):html.index('id="runs"')]
    text = " ".join(re.sub(r"<[^>]+>", "", summary).split())
    assert "run 2 against run 1:" in text and "run 4 against run 3:" in text
    last = summary.index("syscall/stat-root: 10.0% slower")             # the largest first
    assert summary.index("syscall/getppid-glibc: 25.0% slower") < last   # (x1.25 and x0.8
    assert summary.index("cpuid/rdtscp: 20.0% faster") < last           # are as large)
    assert "more instructions" in text                                   # the lab pair
    assert "judged on" in text and "cannot see" in text


def test_one_machines_runs_differ_in_no_fact() -> None:
    """Two runs of one machine configuration: their timer calibrations differ (a per-run
    value, kcross.judge.machine's rule), yet no fact is flagged as a difference (before:
    the timer row flagged ≠ by its text); another host's run is."""
    import datetime as dt

    from kcross import report
    from kcross.store import StoredRun

    def run(id_: int, ppm: float, hostname: str = "vm") -> StoredRun:
        records = copy.deepcopy(captured())
        fingerprint = records[0]
        fingerprint["timer"]["calibration"]["error_ppm"] = ppm
        fingerprint["host"]["hostname"] = hostname
        results = [r for r in records if r["type"] == "result" and r["suite"] == "cpuid"]
        return StoredRun(id=id_, started_at=dt.datetime(2026, 1, id_, tzinfo=dt.UTC),
                         finished_at=None, status="complete", source="run", error=None,
                         fingerprint=fingerprint, plan=records[1], results=results, end=None)

    def flagged(*runs: StoredRun) -> set[str]:
        return {row.key for group in report.build(list(runs)).facts for row in group.rows
                if row.differs}

    assert flagged(run(1, 0.25), run(2, 0.0094)) == set()
    assert flagged(run(1, 0.25), run(2, 0.0094, hostname="other")) >= {"host", "timer"}


def _stored(id_: int, records: list[dict], processes: int = 1, revision: str | None = None,
            flagged: str | None = None) -> Any:
    """A stored run of ``records``'s syscall results, each benchmark measured in
    ``processes`` processes (the first ``flagged`` in every one), its harness at
    ``revision`` (None: the capture's)."""
    import datetime as dt

    from kcross.store import StoredRun

    fingerprint = copy.deepcopy(records[0])
    if revision is not None:
        fingerprint["kcross"]["git_rev"] = revision
    results = []
    for k in range(processes):
        for r in records:
            if r["type"] == "result" and r["suite"] == "syscall":
                r = copy.deepcopy(r)
                if processes > 1:
                    r["process"] = k
                if r["name"] == flagged:
                    r["flags"] = [{"flag": "batches-disagree", "detail": "d"}]
                results.append(r)
    plan = {**records[1], "processes": processes} if processes > 1 else records[1]
    return StoredRun(id=id_, started_at=dt.datetime(2026, 1, id_, tzinfo=dt.UTC),
                     finished_at=None, status="complete", source="run", error=None,
                     fingerprint=fingerprint, plan=plan, results=results, end=None)


def test_a_run_of_processes_is_counted_by_benchmark() -> None:
    """A run of 10 processes of the 16 syscall benchmarks, one flagged in every process:
    the page says 16 benchmarks, 1 warning, one row per benchmark (before: 160, 10, ten
    rows, and each benchmark's figures were its last process's)."""
    from kcross import report

    records = captured()
    ok = sum(r["type"] == "result" and r["suite"] == "syscall" and r["status"] == "ok"
             for r in records)
    built = report.build([_stored(1, records, processes=10, flagged="getppid-inline")])
    (view,) = built.runs
    assert len(view.results) == 16
    facts = {row.key: row.cells[0] for group in built.facts for row in group.rows}
    assert facts["benchmarks"].startswith(f"{ok} ok, ")
    assert facts["samples per benchmark"].endswith(" in each of 10 processes")
    assert [w.bench for w in built.warnings] == ["syscall/getppid-inline"]
    assert len([r for table in built.suites for r in table.rows]) == 16
    page = report.render(built)
    assert re.search(r'<td class="num">16</td></tr>', page)
    assert "⚑ 1 warning from the harness" in page
    assert "160" not in re.sub(r"\d{4,}", "", page.split('<section id="runs">')[1]
                               .split("</section>")[0])


def test_the_harness_revision_is_a_difference() -> None:
    """Two runs of one machine by two builds of the harness: the harness's row differs
    (before: no fact of one machine's runs was flagged, its harness's neither)."""
    from kcross import report

    records = captured()
    built = report.build([_stored(1, records), _stored(2, records, revision="0123456789ab")])
    differs = {row.key for group in built.facts for row in group.rows if row.differs}
    assert differs == {"kcross-harness"}
    assert 'class="differs"><td class="key">kcross-harness</td>' in report.render(built)
