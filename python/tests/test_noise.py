"""The noise a verdict leans on is the machine's (issue 24): only runs that repeat the
measurement compared feed it (kcross.judge.noise.select: the configuration; not partial,
--quick, planted or excluded), an absurd run is named and left out, exact counts have none;
`latest` is the newest run stored; every comparing command says a side is partial."""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conftest import PYTHON_DIR, Kcross
from kcross.judge.noise import HISTORY, RunPoint, estimate

BENCH = "syscall/getppid-inline"
RESAMPLE = {"KCROSS_FAKE_RESAMPLE": "1"}
PROCESSES = ("--processes", "3", "--samples", "9", "--bench", "getppid-inline")


def records_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def shown(kcross: Kcross, db: Path, run: str) -> list[dict[str, Any]]:
    proc = kcross("show", "--json", run, "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    return records_of(proc.stdout)


def edited(records: Sequence[dict[str, Any]], *, scale: float = 1.0, later_s: float = 0.0,
           time: str | None = None, add: float = 0.0,
           git_rev: str | None = None) -> list[dict[str, Any]]:
    """A copy of a run's records: every sample of BENCH times ``scale`` plus ``add``, its
    start ``later_s`` seconds later (or ``time``), its harness revision ``git_rev``."""
    out = copy.deepcopy(list(records))
    fp = out[0]
    start = dt.datetime.fromisoformat(fp["host"]["time"])
    fp["host"]["time"] = time or (start + dt.timedelta(seconds=later_s)).isoformat()
    if git_rev is not None:
        fp["kcross"]["git_rev"] = git_rev
    for r in out:
        if r["type"] == "result" and f"{r['suite']}/{r['name']}" == BENCH:
            r["samples"] = [x * scale + add for x in r["samples"]]
            r["ticks"] = [x * scale + add for x in r["ticks"]]
    return out


def imported(kcross: Kcross, db: Path, path: Path, records: Sequence[dict[str, Any]]
             ) -> tuple[int, str]:
    """Import the records; the new run's id, and stderr."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    proc = kcross("import", str(path), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"as run (\d+)", proc.stdout).group(1)), proc.stderr  # type: ignore[union-attr]


def runs(kcross: Kcross, db: Path, n: int, *args: str, env: dict[str, str] | None = None
         ) -> None:
    for _ in range(n):
        proc = kcross("run", *args, "--db", str(db), extra_env={**RESAMPLE, **(env or {})})
        assert proc.returncode == 0, proc.stderr


def noise_finding(kcross: Kcross, db: Path) -> dict[str, Any]:
    proc = kcross("sysinfo", "--readiness", "--json", "--db", str(db))
    (found,) = [f for f in json.loads(proc.stdout)["findings"] if f["name"] == "run-to-run noise"]
    return found


# --------------------------------------------------------------------- an absurd run

def test_one_absurd_run_does_not_disarm_the_gate_and_is_named(kcross: Kcross,
                                                               tmp_path: Path) -> None:
    """A base run, five A/A runs and a +25% regression fail the gate; one more run of the
    machine with figures x100 (a capture gone wrong) must not make it pass: it is an
    outlier, left out of the noise and named."""
    db = tmp_path / "k.db"
    runs(kcross, db, 6, *PROCESSES)
    slow, _ = imported(kcross, db, tmp_path / "slow.jsonl",
                       edited(shown(kcross, db, "6"), scale=1.25, later_s=600))
    proc = kcross("check", "--baseline", "1", str(slow), "--db", str(db))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    absurd, _ = imported(kcross, db, tmp_path / "absurd.jsonl",
                         edited(shown(kcross, db, "2"), scale=100, later_s=1200))
    proc = kcross("check", "--baseline", "1", str(slow), "--db", str(db))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    flat = " ".join(proc.stdout.split())
    assert f"outlier run {absurd} left out" in flat, proc.stdout
    # history and sysinfo name the runs the estimate came from, and the outlier
    proc = kcross("history", "getppid-inline", "--db", str(db))
    # the regression is no noise either: both left out
    assert f"left out as outliers: runs {slow}-{absurd}" in proc.stdout, proc.stdout
    found = noise_finding(kcross, db)
    assert f"outliers left out: runs {slow}-{absurd}" in found["seen"], found


def test_check_json_names_the_runs_of_its_noise_and_the_outlier(kcross: Kcross,
                                                                 tmp_path: Path) -> None:
    """A base run, same-configuration runs and one absurd run (figures x100): check --json
    names, in the verdict's noise, the runs the estimate came from (the two compared left
    out) and the absurd run left out as an outlier, by id, as history --json does."""
    db = tmp_path / "k.db"
    runs(kcross, db, 6, *PROCESSES)
    absurd, _ = imported(kcross, db, tmp_path / "absurd.jsonl",
                         edited(shown(kcross, db, "2"), scale=100, later_s=1200))
    proc = kcross("check", "--baseline", "1", "6", "--json", "--db", str(db))
    assert proc.returncode in (0, 1), proc.stderr
    (row,) = json.loads(proc.stdout)["rows"]
    noise = row["verdict"]["noise"]
    assert noise["from_runs"] == [2, 3, 4, 5] and noise["outliers"] == [absurd], noise
    assert noise["runs"] == 4
    proc = kcross("history", "getppid-inline", "--json", "--db", str(db))
    (told,) = [r for r in records_of(proc.stdout) if r["type"] == "run-to-run noise"]
    assert told["outliers"] == [absurd] and told["from_runs"] == [1, 2, 3, 4, 5, 6], told


def test_noise_runs_names_stored_runs_by_id_and_other_runs_by_label() -> None:
    from kcross.judge.verdict import noise_runs

    points = [RunPoint(label, x, 1e-6) for label, x in (
        ("run 9", 0.0), ("A 2", 0.004), ("run 3", -0.003), ("B 1", 0.002), ("run 10", 4.6))]
    assert noise_runs(estimate(points, HISTORY)) == {"from_runs": [3, 9, "A 2", "B 1"],
                                                     "outliers": [10]}
    assert noise_runs(None) == {"from_runs": [], "outliers": []}


def test_the_robust_estimate_names_its_runs_and_leaves_out_only_the_absurd() -> None:
    logs = [0.0, 0.004, -0.003, 0.002, -0.001]
    points = [RunPoint(f"run {i + 1}", x, 1e-6) for i, x in enumerate(logs)]
    plain = estimate(points, HISTORY)
    assert plain.outliers == () and plain.used == tuple(f"run {i}" for i in range(1, 6))
    absurd = estimate([*points, RunPoint("run 6", 4.6, 1e-6)], HISTORY)
    assert absurd.outliers == ("run 6",) and absurd.var == plain.var
    assert absurd.runs == 5


# ----------------------------------------------------------------- the configuration

def test_a_quick_run_does_not_feed_the_noise(kcross: Kcross, tmp_path: Path) -> None:
    """Five runs of 3 processes, one --quick smoke run 60% off: sysinfo's noise is the five
    runs', quiet, and names them."""
    db = tmp_path / "k.db"
    runs(kcross, db, 5, *PROCESSES)
    runs(kcross, db, 1, "--quick", "--bench", "getppid-inline",
         env={"KCROSS_FAKE_SCALE": "1.6"})
    found = noise_finding(kcross, db)
    cv = float(re.match(r"([\d.]+)%", found["seen"]).group(1))  # type: ignore[union-attr]
    assert cv < 2.0 and found["state"] == "info", found
    assert "runs 1-5" in found["seen"], found


def test_exact_counts_have_no_run_to_run_noise(kcross: Kcross, tmp_path: Path) -> None:
    """Lab counting runs of two harness revisions, one of them +20 instructions/op: history
    shows the change and no run-to-run noise (a change of a count is a change)."""
    db = tmp_path / "k.db"
    lab = records_of((PYTHON_DIR / "tests" / "data" / "lab-ppc64le-sc.jsonl").read_text())
    for i in range(3):
        imported(kcross, db, tmp_path / f"a{i}.jsonl", edited(lab, later_s=60 * i))
    imported(kcross, db, tmp_path / "b.jsonl",
             edited(lab, later_s=600, add=20, git_rev="0123456789ab"))
    proc = kcross("history", "getppid-inline", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert "none, exact counts" in proc.stdout, proc.stdout
    assert "% of the median beyond" not in proc.stdout, proc.stdout
    (last,) = [line for line in proc.stdout.splitlines() if line.startswith("|   4 ")]
    assert "more instructions" in last, last


def test_select_takes_one_configuration_and_no_run_left_out() -> None:
    from kcross.judge.noise import Candidate, Config, left_out, select
    from kcross.views.text import runs_listed

    a = Config("m", ("0.1", "rev-a", "static"), 3, 9)
    b = Config("m", ("0.1", "rev-b", "static"), 3, 9)
    quick = Config("m", ("0.1", "rev-a", "static"), 1, 11)
    offered = [Candidate(RunPoint(f"run {i}", 0.0, 0.0, started=float(i)), c, why, stored=i)
               for i, (c, why) in enumerate([(a, None), (a, None), (b, None), (quick, None),
                                             (a, "not complete (interrupted)"), (a, None),
                                             (b, None)], start=1)]
    assert [p.run for p in select(offered, a)] == ["run 1", "run 2", "run 6"]
    assert [p.run for p in select(offered, a, exclude=["run 2"],
                                  exclude_started=[6.0])] == ["run 1"]
    assert [p.run for p in select(offered)] == ["run 3", "run 7"]   # the newest's: b
    assert left_out(status="complete", quick=True) == "--quick"
    assert left_out(status="interrupted") == "not complete (interrupted)"
    assert left_out(status="complete", excluded="") == "excluded"
    assert left_out(status="complete", fingerprint={"forced": {
        "KCROSS_TEST_DELAY": "getppid-inline:5", "KCROSS_SYSCALL": None}}) \
        == "forced KCROSS_TEST_DELAY"
    assert left_out(status="complete", fingerprint={"forced": {"KCROSS_SYSCALL": "int80"}}) \
        is None
    assert runs_listed(["run 3", "run 1", "run 2", "run 9"]) == "runs 1-3, 9"


def test_an_excluded_run_feeds_no_estimate(kcross: Kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    runs(kcross, db, 5, *PROCESSES)
    proc = kcross("exclude", "3", "--reason", "backup ran", "--db", str(db))
    assert proc.returncode == 0 and "run 3 is now left out" in proc.stdout, proc.stderr
    listed = kcross("exclude", "--db", str(db))
    assert listed.stdout.split() == ["run", "3", "backup", "ran"], listed.stdout
    assert "runs 1-2, 4-5" in noise_finding(kcross, db)["seen"]
    proc = kcross("history", "getppid-inline", "--db", str(db))
    assert "from 4 runs" in proc.stdout and "runs 1-2, 4-5" in proc.stdout, proc.stdout
    proc = kcross("compare", "1", "2", "--db", str(db))
    assert "run-to-run noise (2 stored runs" not in proc.stdout
    other = tmp_path / "other.db"   # a push takes the exclusion along
    assert kcross("push", str(other), "--db", str(db)).returncode == 0
    assert kcross("exclude", "--db", str(other)).stdout.split() == ["run", "3", "backup", "ran"]
    assert kcross("exclude", "3", "--undo", "--db", str(db)).returncode == 0
    assert "runs 1-5" in noise_finding(kcross, db)["seen"]
    assert kcross("exclude", "--undo", "--db", str(db)).returncode == 2
    assert kcross("delete", "3", "--db", str(db)).returncode == 0


# ----------------------------------------------------------------------------- latest

def test_a_run_from_the_future_does_not_stay_latest(kcross: Kcross, tmp_path: Path) -> None:
    """A capture whose clock is years ahead is stored with one warning, and the run made
    after it is `latest`: the CI pattern `kcross run && kcross check` judges that run."""
    db = tmp_path / "k.db"
    runs(kcross, db, 1, "--quick", "--suite", "syscall")
    future, err = imported(kcross, db, tmp_path / "future.jsonl",
                           edited(shown(kcross, db, "1"), time="2099-01-01T00:00:00+00:00"))
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and "in the future" in lines[0] and "2099-01-01" in lines[0], err
    runs(kcross, db, 1, "--quick", "--suite", "syscall")
    proc = kcross("check", "--baseline", "1", "--db", str(db))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"kcross check: latest (run {future + 1}) on" in proc.stdout, proc.stdout
    by_start = json.loads(kcross("runs", "--json", "--by-start", "--db", str(db)
                                 ).stdout.splitlines()[0])
    assert by_start["id"] == future


# ---------------------------------------------------------------------- partial sides

def test_a_partial_side_is_said_by_compare_report_and_history(kcross: Kcross,
                                                              tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    runs(kcross, db, 1, "--quick", "--suite", "syscall")
    proc = kcross("run", "--quick", "--suite", "syscall", "--db", str(db),
                  extra_env={"KCROSS_FAKE_DIE_AFTER": "3"})
    assert proc.returncode != 0
    said = re.compile(r"run 2 is not complete \(\w+")
    proc = kcross("compare", "1", "2", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert said.search(proc.stderr), proc.stderr
    proc = kcross("report", "1", "2", "-o", str(tmp_path / "r.html"), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert said.search((tmp_path / "r.html").read_text())
    proc = kcross("history", "getppid-glibc", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert said.search(" ".join(proc.stdout.split())), proc.stdout
