"""Lab tier: a job made by ``kcross lava job`` under the real lava-dispatcher counts what
``kcross lab`` counts (issue 17).

One x86-64 job of the getppid rows (the shortest: about 15 s of lava-run here), run by
``lava-run`` as root with the device and dispatcher files ``kcross lava job`` writes;
LAVA's test cases are counted in its log (one per harness result, named after the
benchmarks: LAVA passes a job whose monitor matched nothing), the log is imported, and the
stored figures are compared with a ``kcross lab`` boot of the same kernel, CPU model and
selection, exactly.  Needs lava-dispatcher (.ci/run installs it), root, the x86-64 kernel
($KCROSS_TEST_LAB_KERNEL_X86_64, ./check sets it) and qemu-system-x86.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import HANG
from labs import figures, kcross, lab_prerequisites

ARCH = "x86_64"
BENCH = "getppid-*"


def test_a_lava_job_counts_what_the_lab_counts(tmp_path: Path) -> None:
    from kcross.fingerprint import identity
    from kcross.lab.machines import DEFAULT_SUITES
    from kcross.lab.payload import benchmarks_named, find_source
    from kcross.lava.job import case_id

    kernel, _ = lab_prerequisites(ARCH)
    lava_run = shutil.which("lava-run")
    if lava_run is None:
        pytest.skip("no lava-run (apt-get install --no-install-recommends lava-dispatcher)")
    if os.geteuid() != 0:
        pytest.skip("lava-run runs as root only")
    env = {**os.environ, "KCROSS_DB": str(tmp_path / "k.db"), "COLUMNS": "200"}
    job = tmp_path / "job"
    made = kcross("lava", "job", ARCH, "--kernel", str(kernel), "--bench", BENCH, "-o", str(job),
                  env=env)
    assert made.returncode == 0, made.stderr
    assert yaml.safe_load((job / "dispatcher.yaml").read_text()) == {"dispatcher_ip": "127.0.0.1"}

    log = tmp_path / "job.log"
    with open(log, "w") as f:
        ran = subprocess.run([lava_run, "--device", str(job / "device.yaml"), "--dispatcher",
                              str(job / "dispatcher.yaml"), "--job-id", "1", "--output-dir",
                              str(tmp_path / "out"), str(job / "job.yaml")],
                             stdout=subprocess.DEVNULL, stderr=f, timeout=HANG)
    assert ran.returncode == 0, log.read_text()[-2000:]

    # LAVA's test cases, counted: one per benchmark of the plan, named after it.
    entries = [yaml.safe_load(line) for line in log.read_text().splitlines() if line.strip()]
    cases = [e["msg"] for e in entries if e["lvl"] == "results"
             and e["msg"].get("definition") == "kcross"]
    planned = benchmarks_named(BENCH, ARCH, find_source(), DEFAULT_SUITES)
    assert planned and len(planned) == 6
    assert sorted(c["case"] for c in cases) == sorted(case_id(*b.split("/")) for b in planned)
    assert all(c["result"] == "pass" and c["units"] == "instructions/op" for c in cases)

    imported = kcross("import", str(log), env=env)
    assert imported.returncode == 0, imported.stderr
    assert f"{len(planned)} LAVA test case(s) checked" in imported.stdout
    shown = kcross("show", "1", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    stored = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]

    lab = kcross("lab", ARCH, "--kernel", str(kernel), "--bench", BENCH, "--json",
                 "--no-store", env=env)
    assert lab.returncode == 0, lab.stderr
    counted = [json.loads(line) for line in lab.stdout.splitlines() if line.strip()]

    assert figures(stored) == figures(counted)              # exactly: instruction counts
    assert len(figures(stored)) == len(planned)
    by_case = {c["case"]: c["measurement"] for c in cases}
    for name, figure in figures(stored).items():
        assert by_case[case_id(*name.split("/"))] == f"{figure:.10g}"
    # The same emulated machine (the lab group but for the kernel file's path), and the job.
    assert identity(stored[0]) == identity(counted[0])
    assert stored[0]["lava"]["job_id"] == "1" and stored[0]["lava"]["device_type"] == "qemu"
