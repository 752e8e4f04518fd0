"""A real `kcross lab ppc64le --compare sc scv` pair (Debian's 6.1 kernel, POWER9 pseries,
counting mode; data/lab-ppc64le-sc.jsonl and -scv.jsonl, as `kcross show --json` wrote the
two stored runs) is judged the same way by compare, check, the report, history and the
lab's own table: exact counts by value, the same changed rows everywhere, never a p-value.

Issue 15 found these five disagreeing: compare called a row of 29.0 and 29.0
"+0.00% (p=0.028)" and a row 124.6 instructions cheaper "~", check counted 12
improvements, the report showed 7 "-0.0% (less)" rows.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import PYTHON_DIR, Kcross
from kcross.judge.verdict import TIMER_SHARE

DATA = PYTHON_DIR / "tests" / "data"
SC, SCV = DATA / "lab-ppc64le-sc.jsonl", DATA / "lab-ppc64le-scv.jsonl"

# What the pair changed, by the ticks of the guest's clock: scv's entry and exit on every
# path through the run-time selected mechanism (53 instructions per call; open-close makes
# two calls), and fractions of an instruction per operation on rows whose amortised
# kernel work (a timer interrupt's share of a batch) moved with the boot's other work.
CHANGED = {
    "syscall/getppid-dispatch", "syscall/stat-root", "syscall/read-devzero",
    "syscall/write-devnull", "syscall/open-close",
    "syscall/clock_gettime-vdso", "syscall/clock_gettime-syscall", "cpuid/kc_cpu",
    "percpu/add-getcpu-atomic", "percpu/counter-kc", "percpu/list-mutex",
    "percpu/list-treiber", "percpu/pool-kc",
}
# Of those, the changes of the operation's path (by one instruction per op or more).
PATH = {"syscall/getppid-dispatch", "syscall/stat-root", "syscall/read-devzero",
        "syscall/write-devnull", "syscall/open-close"}


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored(kcross: Kcross, tmp_path: Path) -> str:
    db = str(tmp_path / "k.db")
    for path in (SC, SCV):
        assert kcross("import", str(path), "--db", db).returncode == 0
    return db


def test_compare_check_report_history_and_the_lab_table_agree(kcross: Kcross,
                                                              tmp_path: Path) -> None:
    db = stored(kcross, tmp_path)

    # compare: the comparison record of the two stored runs
    proc = kcross("compare", "1", "2", "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(line) for line in proc.stdout.splitlines()]
    verdicts = {r["name"]: r["verdict"] for r in record["rows"]}
    assert all(v["method"] == "exact" and v["p"] is None and v["ratio_low"] is None
               for v in verdicts.values())
    compared = {n for n, v in verdicts.items() if v["significant"]}
    assert compared == CHANGED
    assert verdicts["syscall/getppid-dispatch"]["category"] == "lower"
    assert verdicts["percpu/add-getcpu-atomic"]["category"] == "lower"   # 29.0 and 29.0
    # the 5 changes of the op's path by whole instructions; the 8 fractions said to be
    # the timer's share (kcross.judge.verdict's rule of a change), not the op's path
    assert {n for n in compared if not (verdicts[n]["note"] or "").startswith(TIMER_SHARE)} \
        == PATH
    table = kcross("compare", "1", "2", "--db", db)
    assert "(p=" not in table.stdout and "-53.0 instructions (-13.1%)" in table.stdout

    # check: the gate's rows, identical where compare says so, no p
    proc = kcross("check", "--baseline", "1", "2", "--db", db, "--json")
    assert proc.returncode == 0, proc.stdout
    (outcome,) = [json.loads(line) for line in proc.stdout.splitlines()]
    checked = {r["benchmark"] for r in outcome["rows"] if r["category"] != "identical"}
    assert checked == CHANGED
    assert all(r["verdict"]["method"] == "exact" and r["verdict"]["p_adjusted"] is None
               and r["fails_at"] is None for r in outcome["rows"])

    # compare --format ministat: ministat's figures, but no Student's t for counts
    proc = kcross("compare", "1", "2", "--db", db, "--format", "ministat")
    assert proc.returncode == 0, proc.stderr
    assert "Student's t" not in proc.stdout and "No difference proven" not in proc.stdout
    assert proc.stdout.count("Exact counts: no test") == 36

    # history: every benchmark's change from run 1 to run 2
    proc = kcross("history", "*", "--db", db, "--json")
    assert proc.returncode == 0, proc.stderr
    points = [json.loads(line) for line in proc.stdout.splitlines()]
    second = [p for p in points if p.get("type") == "history" and p["run"] == 2
              and p["status"] == "ok"]
    assert len(second) == 36 and all(p["change"]["p"] is None for p in second)
    moved = {p["benchmark"] for p in second if p["change"]["category"] != "identical"}
    assert moved == CHANGED

    # the report's comparison of the two runs
    from kcross import report
    from kcross.store import Store, resolve

    store = Store.open(resolve(db), write=False)
    assert store is not None
    try:
        runs = [store.load_run("1"), store.load_run("2")]
    finally:
        store.close()
    (comparison,) = report.build(runs).comparisons
    shown = {row.bench for row in comparison.rows
             if row.value is not None and row.value.category.changed}
    assert shown == PATH    # the timer's share is no change (test_timer_share: every view)
    assert all(row.p == "no p (exact)" for row in comparison.rows)


def test_the_lab_table_says_the_same(tmp_path: Path) -> None:
    import os

    from kcross.importer import stream_of
    from kcross.lab import machines
    from kcross.lab.kernel import Kernel
    from kcross.lab.report import compare_table
    from kcross.lab.session import Counted
    from kcross.views.table import terminal
    from rich.console import Console

    kernel_file = tmp_path / "vmlinux"
    kernel_file.write_bytes(b"k")
    guest = machines.Guest(machines.arch("ppc64le"), kernel_file)
    runs = [Counted(guest=guest, kernel=Kernel("ppc64le", kernel_file), variant=None,
                    stream=stream_of(records(path), path.name)) for path in (SC, SCV)]
    console = Console(width=300, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(terminal(compare_table(runs[0], runs[1], "sc", "scv")))
    text = console.export_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│")[1:-1]]
        if len(cells) in (5, 6) and cells[0] and cells[0] != "benchmark":
            rows[cells[0]] = cells
    changed = {name for name, cells in rows.items() if cells[3] not in ("0", "–")}
    suites = {n.split("/", 1)[1]: n.split("/", 1)[0] for n in CHANGED}
    assert {n if "/" in n else f"{suites.get(n, '?')}/{n}" for n in changed} == CHANGED
    assert rows["getppid-dispatch"][3] == "-53.0" and rows["getppid-inline"][3] == "0"
    assert "syscall/getcpu-vdso" in rows and "cpuid/getcpu-vdso" in rows   # told apart
    # "changed" counts the changes of the path; the timer's share is said apart
    assert f"{len(PATH)} of 36 changed" in text
    shares = sorted(CHANGED - PATH)
    assert f"{len(shares)} rows moved by {TIMER_SHARE}" in text
