"""The run table of ``kcross run`` and ``kcross show`` for people: 120 columns by default,
the full table with ``--wide``, counters per operation, short footer lines."""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path

from conftest import Kcross, captured, run_table
from kcross.views import run as render
from kcross.views.table import Table, terminal
from rich.console import Console

DEFAULT = ["benchmark", "median ns/op", "per switch", "CI95 of median, %", "spread", "N",
           "disturbed", "status"]
NOT_PERMITTED = "not permitted (perf_event_paranoid or missing CAP_PERFMON)"


def _ok(results: list[dict]) -> list[str]:
    return [f"{r['suite']}/{r['name']}" for r in results if r["status"] == "ok"]


def test_default_table_fits_120_columns_unsqueezed(kcross: Kcross, db_path: Path) -> None:
    """Every suite (the per-switch column too), piped, COLUMNS=120: no line is wider, and
    every benchmark is one line with all its figures (rich squeezes a table too wide for
    the console into wrapped, cut cells: `stat…`)."""
    for args in (["run", "--quick"], ["show"]):
        proc = kcross(*args, extra_env={"COLUMNS": "120"})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert max(map(len, lines)) <= 120, max(lines, key=len)
        assert "…" not in proc.stdout
        heads, rows = run_table(proc.stdout)
        assert heads == DEFAULT
        results = [r for r in captured() if r["type"] == "result"]
        assert list(rows) == [f"{r['suite']}/{r['name']}" for r in results]
        for name in _ok(results):
            assert all(rows[name]), rows[name]  # a figure (or a dash) in every cell
            # one line: the next line is the next row (or the footer), not a continuation
            after = lines[next(i for i, x in enumerate(lines) if x.startswith(f"{name} ")) + 1]
            assert after.split(" ")[0], after
    assert "kcross show 1 --wide" in proc.stdout  # where the details went


def test_wide_adds_min_counters_and_reasons(kcross: Kcross, db_path: Path) -> None:
    assert kcross("run", "--quick", "--suite", "percpu-scaling").returncode == 0
    for args in (["run", "--quick", "--suite", "percpu-scaling", "--wide"], ["show", "--wide"]):
        proc = kcross(*args, extra_env={"COLUMNS": "120"})
        assert proc.returncode == 0, proc.stderr
        heads, rows = run_table(proc.stdout)
        assert heads == ["benchmark", "median ns/op", "CI95 of median, %", "min", "spread", "N",
                         "disturbed", "counters/op", "status"]
        # at its natural width, not squeezed into the console's 120 columns
        assert max(map(len, proc.stdout.splitlines())) > 120 and "…" not in proc.stdout


def test_counters_column_is_per_op(kcross: Kcross) -> None:
    """Every figure of the counters/op column is per operation: the software counters
    too (before: their totals over all samples, `csw 11` under a header saying /op)."""
    proc = kcross("run", "--quick", "--suite", "percpu-scaling", "--wide")
    assert proc.returncode == 0, proc.stderr
    heads, rows = run_table(proc.stdout)
    column = heads.index("counters/op")
    seen = 0
    for rec in captured():
        if rec["type"] != "result" or rec["suite"] != "percpu-scaling":
            continue
        cell = rows[f"{rec['suite']}/{rec['name']}"][column]
        for event, short in (("context-switches", "csw"), ("cpu-migrations", "mig"),
                             ("page-faults", "pf")):
            counter = rec["counters"][event]
            (shown,) = re.findall(rf"\b{short} (\S+)", cell)
            assert abs(float(shown) - counter["per_op"]) <= 0.05 * counter["per_op"], cell
            seen += counter["total"] > 0
    assert seen, "the capture should have a benchmark with a context switch"


def _text(*renderables: object, width: int = 120) -> str:
    with open(os.devnull, "w") as devnull:
        console = Console(width=width, record=True, color_system=None, file=devnull)
        for item in renderables:
            console.print(terminal(item) if isinstance(item, Table) else item)
    return console.export_text()


def test_unavailable_counters_fold_into_one_line() -> None:
    """Every counter refused for one reason (a non-root user, perf_event_paranoid 2): one
    line giving the reason once; --wide keeps each event's reason."""
    fingerprint = copy.deepcopy(captured()[0])
    results = [copy.deepcopy(r) for r in captured() if r["type"] == "result"][:3]
    events = [*render.HW_EVENTS, *render.SW_ALL]
    for rec in results:
        rec["counters"] = {}
        rec["counters_unavailable"] = dict.fromkeys(events, NOT_PERMITTED)
    text = _text(render.run_footer(fingerprint, results))
    assert text.count(NOT_PERMITTED) == 1
    (line,) = [x for x in text.splitlines() if x.startswith("counters")]
    assert line == f"counters: none; hardware, software unavailable: {NOT_PERMITTED}"
    wide = _text(render.run_footer(fingerprint, results, wide=True), width=1000)
    assert wide.count(NOT_PERMITTED) == 1 + len(render.SW_ALL)  # the hardware line, each other


def test_footer_fits_120_columns_on_a_wide_console() -> None:
    """A lab run's footer (its kernel, command line, mitigations) on a console of 250
    columns (a pipe: COLUMNS unset is 200): the default lines wrap at 120.  Its table
    cannot be written in 120 columns with every name and flag whole (the median's header
    names instructions/op): it takes the few columns more the console has, cutting
    nothing."""
    from test_lab_store import lab_records, results_of

    records = lab_records(variant="intel + mitigations=off", append="mitigations=off")
    with open(os.devnull, "w") as devnull:
        console = Console(width=250, record=True, color_system=None, file=devnull)
        render.print_run(console, results_of(records), records[0], title="lab")
    lines = console.export_text().splitlines()
    footer = lines[lines.index(next(x for x in lines if x.startswith("emulated "))):]
    assert max(map(len, footer)) <= 120, max(footer, key=len)
    table = lines[:len(lines) - len(footer)]
    assert max(map(len, table)) <= 135 and "…" not in "".join(table)


def test_a_run_of_ten_processes_fits_120_columns_with_every_flag_whole() -> None:
    """The default run (10 processes, a benchmark flagged twice): the status cell holds one
    flag per line, each whole, and the CI95 footer line naming the processes is one line
    (before: 126 columns, wrapped at 120)."""
    from kcross.series import merge_results

    fingerprint = copy.deepcopy(captured()[0])
    records = []
    for process in range(10):
        for rec in (r for r in captured() if r["type"] == "result"):
            rec = copy.deepcopy(rec)
            rec["process"] = process
            # processes that differ by up to 90% (as an oversubscribed benchmark's do):
            # its CI cell is wide, `-22.2% +28.5%`, leaving the status column little room
            rec["samples"] = [x * (1 + 0.1 * process) for x in rec["samples"]]
            if rec["status"] == "ok" and rec["name"].endswith("x2N"):
                rec["flags"] = [{"flag": "threads-share-cpus", "detail": "d"},
                                {"flag": "batches-disagree", "detail": "d"}]
            records.append(rec)
    results = merge_results(records)
    assert any(r["name"].endswith("x2N") and r["status"] == "ok" for r in results)
    with open(os.devnull, "w") as devnull:
        console = Console(width=200, record=True, color_system=None, file=devnull)
        render.print_run(console, results, fingerprint, title="run 1", run_id=1)
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    assert max(map(len, lines)) <= 120, max(lines, key=len)
    text = "\n".join(lines)
    assert "…" not in text
    assert text.count("⚑threads-share-cpus") == text.count("⚑batches-disagree") > 0
    (ci95,) = [line for line in lines if line.startswith("CI95: Student's t over the 10 processes")]
    assert ci95.endswith("of all samples"), ci95  # one line, not wrapped


def test_the_footer_says_what_n_and_disturbed_count() -> None:
    """The N and disturbed columns explained under the table, as CI95 and spread are: the
    samples of every process, those a migration or a preemption hit, kept in the figures
    (before: two headers nothing explained)."""
    from kcross.series import merge_results

    results = [r for r in captured() if r["type"] == "result"]
    several = []
    for process in range(10):
        several += [{**copy.deepcopy(r), "process": process} for r in results]
    for records, of in ((results, ""), (merge_results(several), " (all 10 processes')")):
        with open(os.devnull, "w") as devnull:
            console = Console(width=200, record=True, color_system=None, file=devnull)
            render.print_run(console, records, captured()[0], title="run 1", run_id=1)
        lines = console.export_text().splitlines()
        assert f"N: samples{of}; disturbed: those a CPU migration or a preemption hit (kept " \
               "in the figures)" in lines, lines[-4:]
