"""``kcross check``: the regression gate.

Sample sets are built deterministically: runs stored from the fake harness (the
captured real records), copies of them with chosen benchmarks' samples scaled,
and synthetic noisy samples drawn with fixed seeds into harness JSON files.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import Kcross, assert_one_line_error, captured, ruled_table

QUIET = "syscall/getppid-inline"  # a benchmark with little noise in the capture (spread ~2%)
NOISY = "syscall/getppid-int80"   # one with more


def records_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def edited(records: Sequence[dict[str, Any]], *, glob: str = "*",
           change: Callable[[str, list[float]], list[float]] | None = None,
           scale: float | None = None, time: str | None = None,
           hostname: str | None = None) -> list[dict[str, Any]]:
    """A copy of a run's records with the matching ok results' samples changed.

    ``scale`` multiplies the samples and the empty loop's samples alike, so the
    overhead decision stays the same and the ratio of medians is exactly ``scale``.
    """
    out = copy.deepcopy(list(records))
    for record in out:
        if record["type"] == "fingerprint":
            if time:
                record["host"]["time"] = time
            if hostname:
                record["host"]["hostname"] = hostname
        if record["type"] != "result" or record["status"] != "ok":
            continue
        name = f"{record['suite']}/{record['name']}"
        if not fnmatch.fnmatchcase(name, glob):
            continue
        if scale is not None:   # the ticks too: a lab's counts are judged in its clock's ticks
            record["samples"] = [x * scale for x in record["samples"]]
            record["overhead"]["samples"] = [x * scale for x in record["overhead"]["samples"]]
            record["ticks"] = [x * scale for x in record["ticks"]]
            record["overhead"]["ticks"] = [x * scale for x in record["overhead"]["ticks"]]
        if change is not None:
            record["samples"] = change(name, record["samples"])
            record["ticks"] = []
            record["disturbed"] = []
    return out


def suite_only(records: Sequence[dict[str, Any]], suite: str) -> list[dict[str, Any]]:
    """The records of one suite as the harness writes a run of it (plan and end to match)."""
    out = [copy.deepcopy(r) for r in records if r["type"] != "result" or r["suite"] == suite]
    results = [r for r in out if r["type"] == "result"]
    for record in out:
        if record["type"] == "plan":
            record["benchmarks"] = [b for b in record["benchmarks"] if b["suite"] == suite]
        if record["type"] == "end":
            for status in ("ok", "skipped", "failed"):
                record[status] = sum(r["status"] == status for r in results)
    return out


def lognormal(seed: int, shift: float = 1.0, sigma: float = 0.03,
              n: int = 51) -> Callable[[str, list[float]], list[float]]:
    """Replace each benchmark's samples by n lognormal draws around its captured median
    (times ``shift``), seeded by ``seed`` and the benchmark's name: deterministic."""
    def change(name: str, samples: list[float]) -> list[float]:
        rng = random.Random(f"{seed}:{name}")
        centre = sorted(samples)[len(samples) // 2] * shift
        return [centre * rng.lognormvariate(0.0, sigma) for _ in range(n)]
    return change


def table_rows(stdout: str) -> dict[str, list[str]]:
    """benchmark -> cells of the plain (ASCII, piped) table."""
    return ruled_table(stdout)[1]


VERDICT = 7  # the verdict's column


@pytest.fixture
def two_runs(kcross: Kcross, tmp_path: Path) -> Path:
    """A database with two runs of the syscall suite from the fake harness (an A/A pair)."""
    db = tmp_path / "k.db"
    for _ in range(2):
        proc = kcross("run", "--quick", "--suite", "syscall", "--db", str(db))
        assert proc.returncode == 0, proc.stderr
    return db


def stored(kcross: Kcross, db: Path | str, run: str) -> list[dict[str, Any]]:
    proc = kcross("show", "--json", run, "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    return records_of(proc.stdout)


def test_planted_ten_percent_regression_fails(kcross: Kcross, two_runs: Path,
                                              tmp_path: Path) -> None:
    slow = write(tmp_path / "slow.jsonl", edited(stored(kcross, two_runs, "1"), glob=QUIET,
                                                  scale=1.10, time="2026-11-24T00:00:00Z"))
    proc = kcross("import", str(slow), "--db", str(two_runs))
    assert proc.returncode == 0, proc.stderr
    proc = kcross("check", "--baseline", "1", "3", "--db", str(two_runs))
    assert proc.returncode == 1, proc.stderr
    rows = table_rows(proc.stdout)
    assert rows[QUIET][VERDICT] == "regression"
    assert rows[QUIET][3] == "1.100"
    low, high = (float(x) for x in rows[QUIET][4].strip("[]").split(", "))
    assert 1.05 < low < 1.10 < high
    others = {name: cells[VERDICT] for name, cells in rows.items() if name != QUIET}
    assert set(others.values()) == {"~"}, others
    assert proc.stdout.strip().splitlines()[-1].startswith("FAIL: 1 benchmark(s) beyond +5%")
    # the same files without the store: a committed baseline in CI
    base = write(tmp_path / "base.jsonl", stored(kcross, two_runs, "1"))
    proc = kcross("check", "--baseline", str(base), str(slow))
    assert proc.returncode == 1, proc.stderr
    assert table_rows(proc.stdout)[QUIET][VERDICT] == "regression"


def test_aa_pair_passes(kcross: Kcross, two_runs: Path) -> None:
    proc = kcross("check", "--baseline", "1", "--db", str(two_runs))  # current: latest (run 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = table_rows(proc.stdout)
    assert len(rows) == len([r for r in captured() if r["type"] == "result"
                             and r["suite"] == "syscall" and r["status"] == "ok"])
    assert {cells[VERDICT] for cells in rows.values()} == {"~"}
    assert proc.stdout.strip().splitlines()[-1].startswith("PASS: no benchmark shown beyond +5%")


@pytest.mark.parametrize("seeds", [(1, 2), (3, 4)])
def test_noisy_aa_pair_passes(kcross: Kcross, tmp_path: Path, seeds: tuple[int, int]) -> None:
    """Two independent draws from the same distributions (3% lognormal noise, 51 samples,
    every benchmark of the capture): no regression, whatever the noise does."""
    a, b = (write(tmp_path / f"{s}.jsonl", edited(captured(), change=lognormal(s)))
            for s in seeds)
    proc = kcross("check", "--baseline", str(a), str(b))
    assert proc.returncode == 0, proc.stdout
    verdicts = [cells[VERDICT] for cells in table_rows(proc.stdout).values()]
    assert len(verdicts) == sum(r["type"] == "result" and r["status"] == "ok" for r in captured())
    assert "regression" not in verdicts


def test_noisy_regression_fails(kcross: Kcross, tmp_path: Path) -> None:
    base = write(tmp_path / "a.jsonl", edited(captured(), change=lognormal(1)))
    slow = write(tmp_path / "b.jsonl", edited(captured(), change=lognormal(2, shift=1.10)))
    proc = kcross("check", "--baseline", str(base), str(slow))
    assert proc.returncode == 1
    verdicts = [cells[VERDICT] for cells in table_rows(proc.stdout).values()]
    assert verdicts.count("regression") > len(verdicts) * 0.9, verdicts


def test_improvements_never_fail(kcross: Kcross, tmp_path: Path) -> None:
    base = write(tmp_path / "a.jsonl", captured())
    fast = write(tmp_path / "b.jsonl", edited(captured(), scale=0.5))
    proc = kcross("check", "--baseline", str(base), str(fast), "--max-regression", "0")
    assert proc.returncode == 0, proc.stdout
    verdicts = {cells[VERDICT] for cells in table_rows(proc.stdout).values()}
    assert "faster" in verdicts and "regression" not in verdicts


def test_slowdown_within_tolerance_is_slower_not_a_failure(kcross: Kcross,
                                                           tmp_path: Path) -> None:
    """A clear 3% slowdown (0.3% noise): 'slower' under the default 5%, a regression at 1%."""
    base = write(tmp_path / "a.jsonl", edited(captured(), glob=QUIET,
                                              change=lognormal(1, sigma=0.003)))
    slow = write(tmp_path / "b.jsonl", edited(captured(), glob=QUIET,
                                              change=lognormal(2, shift=1.03, sigma=0.003)))
    proc = kcross("check", "--baseline", str(base), str(slow))
    assert proc.returncode == 0, proc.stdout
    assert table_rows(proc.stdout)[QUIET][VERDICT] == "slower"
    proc = kcross("check", "--baseline", str(base), str(slow), "--max-regression", "1")
    assert proc.returncode == 1, proc.stdout
    assert table_rows(proc.stdout)[QUIET][VERDICT] == "regression"


def test_the_ci_low_end_not_the_point_ratio_decides(kcross: Kcross, tmp_path: Path) -> None:
    """A noisy benchmark whose point ratio is above the tolerance but whose CI reaches below
    it does not fail: the data do not show a slowdown beyond the tolerance."""
    base = write(tmp_path / "a.jsonl", edited(captured(), glob=QUIET,
                                              change=lognormal(1, sigma=0.08, n=31)))
    slow = write(tmp_path / "b.jsonl", edited(captured(), glob=QUIET,
                                              change=lognormal(2, shift=1.08, sigma=0.08, n=31)))
    proc = kcross("check", "--baseline", str(base), str(slow))
    cells = table_rows(proc.stdout)[QUIET]
    ratio, low = float(cells[3]), float(cells[4].strip("[]").split(", ")[0])
    assert ratio > 1.05 > low, cells
    assert cells[VERDICT] in ("slower", "~") and proc.returncode == 0, proc.stdout


def test_markdown_is_a_valid_table(kcross: Kcross, tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    base = write(tmp_path / "a.jsonl", captured())
    slow = write(tmp_path / "b.jsonl", edited(captured(), glob=QUIET, scale=1.10))
    proc = kcross("check", "--baseline", str(base), str(slow), "--format", "markdown")
    assert proc.returncode == 1
    # the summary last, as in the terminal's
    assert proc.stdout.splitlines()[-1].startswith("**FAIL: 1 benchmark(s) beyond +5%")
    html = MarkdownIt("commonmark").enable("table").render(proc.stdout)
    assert html.count("<table>") == 1
    header = re.search(r"<thead>(.*?)</thead>", html, re.S)
    assert header is not None
    columns = header.group(1).count("<th")
    assert columns == 9
    body = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>")[1], re.S)
    ok = sum(r["type"] == "result" and r["status"] == "ok" for r in captured())
    assert len(body) == ok  # skipped on both sides: nothing to list
    assert all(row.count("<td") == columns for row in body)
    assert any("<strong>regression</strong>" in row and QUIET in row for row in body)


def test_plain_output_is_ascii_when_piped(kcross: Kcross, two_runs: Path) -> None:
    proc = kcross("check", "--baseline", "1", "2", "--db", str(two_runs))
    assert proc.returncode == 0
    assert proc.stdout.isascii()
    assert "\x1b" not in proc.stdout


def test_missing_benchmarks_are_listed_and_fail_only_when_asked(kcross: Kcross,
                                                                 tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    assert kcross("run", "--quick", "--suite", "syscall", "--db", str(db),
                  extra_env={"KCROSS_FAKE_SKIP": "getcpu-*"}).returncode == 0
    assert kcross("run", "--quick", "--suite", "syscall", "--db", str(db),
                  extra_env={"KCROSS_FAKE_SKIP": "stat-root"}).returncode == 0
    proc = kcross("check", "--baseline", "1", "2", "--db", str(db))
    assert proc.returncode == 0, proc.stdout
    rows = table_rows(proc.stdout)
    assert rows["syscall/stat-root"][VERDICT] == "missing"
    assert "run 2: skipped" in rows["syscall/stat-root"][8]
    assert rows["syscall/getcpu-vdso"][VERDICT] == "new"
    proc = kcross("check", "--baseline", "1", "2", "--db", str(db), "--missing", "fail")
    assert proc.returncode == 1
    assert "1 baseline benchmark(s) not judged (--missing fail)" in proc.stdout
    # the other way round only new benchmarks are missing from the baseline: never a failure
    proc = kcross("check", "--baseline", "2", "1", "--db", str(db), "--missing", "fail")
    assert proc.returncode == 1  # getcpu-* are missing from run 1
    proc = kcross("check", "--baseline", "2", "1", "--db", str(db), "--missing", "warn")
    assert proc.returncode == 0


def test_too_few_samples_is_an_error_row_not_a_verdict(kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    for _ in range(2):
        assert kcross("run", "--processes", "1", "--samples", "3", "--bench",
                      "syscall/getppid-*", "--db", str(db)).returncode == 0
    proc = kcross("check", "--baseline", "1", "2", "--db", str(db))
    assert proc.returncode == 0, proc.stdout
    rows = table_rows(proc.stdout)
    assert {cells[VERDICT] for cells in rows.values()} == {"not judged"}
    assert all("too few" in cells[8] for cells in rows.values())
    assert kcross("check", "--baseline", "1", "2", "--db", str(db),
                  "--missing", "fail").returncode == 1


def test_lab_counts_are_compared_in_their_unit(kcross: Kcross, tmp_path: Path) -> None:
    from test_lab_store import lab_records

    base = write(tmp_path / "a.jsonl", lab_records())
    more = write(tmp_path / "b.jsonl", edited(lab_records(), glob=QUIET, scale=1.10))
    proc = kcross("check", "--baseline", str(base), str(more))
    assert proc.returncode == 1
    assert "base, current: the medians (instructions/op)" in proc.stdout
    assert table_rows(proc.stdout)[QUIET][VERDICT] == "regression"
    wall = write(tmp_path / "c.jsonl", captured())
    assert_one_line_error(kcross("check", "--baseline", str(wall), str(base)), 2,
                          "kcross never compares time with instruction counts")


def test_different_machines_are_named(kcross: Kcross, tmp_path: Path) -> None:
    base = write(tmp_path / "a.jsonl", captured())
    other = write(tmp_path / "b.jsonl", edited(captured(), hostname="elsewhere"))
    proc = kcross("check", "--baseline", str(base), str(other))
    assert proc.returncode == 0
    assert re.search(r"measured on different machines or configurations \(vm \w{8}, "
                     r"elsewhere \w{8}\); differing: hostname$", proc.stdout, re.M), proc.stdout
    kernel = edited(captured())
    kernel[0]["kernel"]["release"] = "6.6.0"
    proc = kcross("check", "--baseline", str(base), str(write(tmp_path / "c.jsonl", kernel)))
    assert re.search(r"\(vm \w{8}, vm \w{8}\); differing: kernel release$", proc.stdout,
                     re.M), proc.stdout


@pytest.mark.parametrize("args, message", [
    (["--baseline", "nosuch.jsonl"], "no file 'nosuch.jsonl'"),
    (["--baseline", "7"], "no run 7 in"),
    (["--baseline", "1", "9"], "no run 9 in"),
    (["--baseline", "1", "--max-regression", "-3"], "must be a percentage from 0 to 1000"),
    (["--baseline", "1", "--max-regression", "x"], "must be a percentage"),
    (["--baseline", "1", "--missing", "ignore"], "'ignore' is not one of warn, fail"),
    (["--baseline", "1", "--format", "html"], "'html' is not one of plain, markdown"),
    (["--baseline", "-", "-"], "cannot both be stdin"),
    (["1"], "the following arguments are required: --baseline"),
], ids=lambda x: x if isinstance(x, str) else " ".join(x))
def test_bad_input_is_one_line_exit_2(kcross: Kcross, stored_db: Path, args: list[str],
                                      message: str) -> None:
    assert_one_line_error(kcross("check", *args, "--db", str(stored_db)), 2, message)


def test_bad_files_and_empty_store(kcross: Kcross, tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n{}\n")
    assert_one_line_error(kcross("check", "--baseline", str(junk), str(junk)), 2, "junk.jsonl")
    base = write(tmp_path / "a.jsonl", captured())
    assert_one_line_error(kcross("check", "--baseline", str(base), "--db",
                                 str(tmp_path / "none.db")), 2, "none.db: no such file")
    assert not (tmp_path / "none.db").exists()
    # nothing in common: a syscall-only run against a cpuid-only one
    syscall = write(tmp_path / "s.jsonl", suite_only(captured(), "syscall"))
    cpuid = write(tmp_path / "c.jsonl", suite_only(captured(), "cpuid"))
    assert_one_line_error(kcross("check", "--baseline", str(syscall), str(cpuid)), 2,
                          "no benchmark with figures in common")


def test_options_agree_with_the_gate() -> None:
    from kcross.cli import check
    from kcross.judge import gate

    assert check.MISSING_POLICIES == gate.MISSING_POLICIES


def test_constant_lab_counts(kcross: Kcross, tmp_path: Path) -> None:
    """Counting mode gives the same instruction count every sample: equal counts are identical
    (exact: by value, no p), a higher count beyond the tolerance is a regression."""
    from test_lab_store import lab_records

    def constant(value: float) -> list[dict[str, Any]]:
        records = edited(lab_records(), glob=QUIET,
                         change=lambda name, samples: [value] * len(samples))
        for record in records:  # an empty loop of no instructions: nothing to subtract
            if record["type"] == "result" and record["status"] == "ok":
                record["overhead"] = {"samples": [0.0] * 11, "ticks": []}
        return records

    base = write(tmp_path / "a.jsonl", constant(346))
    same = write(tmp_path / "b.jsonl", constant(346))
    more = write(tmp_path / "c.jsonl", constant(380))
    proc = kcross("check", "--baseline", str(base), str(same))
    assert proc.returncode == 0
    cells = table_rows(proc.stdout)[QUIET]
    assert cells[1:4] == ["346.0", "346.0", "1.000"] and cells[VERDICT] == "identical"
    assert cells[4:6] == ["-", "-"] and cells[6] == "exact"   # no interval, no p: by value
    proc = kcross("check", "--baseline", str(base), str(more))
    assert proc.returncode == 1
    cells = table_rows(proc.stdout)[QUIET]
    assert cells[1:6] == ["346.0", "380.0", "1.098", "-", "-"]
    assert cells[VERDICT] == "regression"
    assert "+34.0 instructions (+9.8%): beyond +5%" in cells[8]


def test_stored_runs_on_postgres(kcross: Kcross, tmp_path: Path, pg_schema: str) -> None:
    for _ in range(2):
        assert kcross("run", "--quick", "--suite", "syscall", "--db", pg_schema).returncode == 0
    slow = write(tmp_path / "slow.jsonl", edited(stored(kcross, pg_schema, "1"),
                                                 glob=QUIET, scale=1.10,
                                                 time="2027-01-01T00:00:00Z"))
    assert kcross("import", str(slow), "--db", pg_schema).returncode == 0
    assert kcross("check", "--baseline", "1", "2", "--db", pg_schema).returncode == 0
    proc = kcross("check", "--baseline", "2", "--db", pg_schema)  # latest: the import (2027)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert table_rows(proc.stdout)[QUIET][VERDICT] == "regression"


def test_an_incomplete_current_run_is_said_and_its_missing_benchmarks_listed(
        kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    assert kcross("run", "--quick", "--suite", "syscall", "--db", str(db)).returncode == 0
    proc = kcross("run", "--quick", "--suite", "syscall", "--db", str(db),
                  extra_env={"KCROSS_FAKE_DIE_AFTER": "3"})
    assert proc.returncode != 0
    proc = kcross("check", "--baseline", "1", "2", "--db", str(db))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"run 2 is not complete \(\w+", proc.stdout), proc.stdout
    verdicts = [cells[VERDICT] for cells in table_rows(proc.stdout).values()]
    assert verdicts[:3] == ["~"] * 3 and set(verdicts[3:]) == {"missing"}
    assert kcross("check", "--baseline", "1", "2", "--db", str(db),
                  "--missing", "fail").returncode == 1


def test_store_references(kcross: Kcross, two_runs: Path, tmp_path: Path) -> None:
    """The references Store.load_run takes (issue 10: latest~N, tags, latest@HOST)."""
    proc = kcross("check", "--baseline", "latest~1", "--db", str(two_runs))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("kcross check: latest (run 2) on vm at ")
    assert "against baseline latest~1 (run 1) on vm at " in proc.stdout
    proc = kcross("check", "--baseline", "latest@vm", "1", "--db", str(two_runs))
    assert proc.returncode == 0, proc.stderr
    assert "against baseline latest@vm (run 2) on vm at " in proc.stdout
    assert proc.stdout.startswith("kcross check: run 1 on vm at ")


def test_a_sample_below_the_empty_loop_is_no_traceback(kcross: Kcross, tmp_path: Path) -> None:
    """One sample faster than the empty loop (after subtraction below 0): check judges the
    pair on raw samples, says so, and exits by its verdicts (before: a traceback, exit 1,
    which CI reads as a regression; compare refused the whole table)."""
    def dip(name: str, samples: list[float]) -> list[float]:
        out = lognormal(1, sigma=0.003)(name, samples)
        out[3] = 0.01
        return out

    base = write(tmp_path / "a.jsonl", edited(captured(), glob=QUIET, change=dip))
    new = write(tmp_path / "b.jsonl", edited(captured(), glob=QUIET,
                                             change=lognormal(2, sigma=0.003)))
    proc = kcross("check", "--baseline", str(base), str(new))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "judged on both sides' raw samples" in " ".join(proc.stdout.split())
    proc = kcross("compare", str(base), str(new))
    assert proc.returncode == 0, proc.stderr


def test_check_shows_the_median_compare_and_show_give(kcross: Kcross, tmp_path: Path) -> None:
    """The empty loop subtracted from clock_gettime-vdso in the base, not in the current
    (its loop made dearer than half the median there): compare, check and show give each
    side's own median (the base's with the loop subtracted); check's note says the verdict
    judged the raw ones, and which (before: check showed the raw medians, compare the
    others)."""
    from kcross.stats import median, raw_samples, summarize_record
    from kcross.views.text import ns

    name = "syscall/clock_gettime-vdso"
    records = captured()
    flipped = copy.deepcopy(records)
    for r in flipped:
        if r["type"] == "result" and f"{r['suite']}/{r['name']}" == name:
            middle = sorted(r["samples"])[len(r["samples"]) // 2]
            r["overhead"]["samples"] = [middle * 0.6] * len(r["overhead"]["samples"])
    medians = [summarize_record(next(r for r in rs if r.get("name") == "clock_gettime-vdso"))
               for rs in (records, flipped)]
    assert medians[0].overhead.subtracted and not medians[1].overhead.subtracted
    base, current = write(tmp_path / "a.jsonl", records), write(tmp_path / "b.jsonl", flipped)
    checked = table_rows(kcross("check", "--baseline", str(base), str(current)).stdout)[name]
    compared = ruled_table(kcross("compare", str(base), str(current), "--bench", name).stdout)
    shown = [compared[1][name][i].split(" [")[0] for i in (1, 2)]
    assert checked[1:3] == shown == [ns(m.median) for m in medians]
    assert "judged on both sides' raw samples" in checked[8]
    raw = [ns(median(raw_samples(next(r for r in rs if r.get("name") == "clock_gettime-vdso"))))
           for rs in (records, flipped)]
    assert checked[8].endswith(f"the raw medians {raw[0]} -> {raw[1]}"), checked[8]
