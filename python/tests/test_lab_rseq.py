"""Lab tier: what rseq costs each crossing, ``kcross lab ARCH --compare-env KCROSS_RSEQ=off``
on a real kernel (issue 23).

One counting boot as the guest is (A: glibc registers rseq in every thread, the static
harness uses its registration) and one with KCROSS_RSEQ=off (B: the harness executes itself
again with glibc.pthread.rseq=0, so nothing is registered).  The fingerprints say so, and
the counts show where the kernel does rseq work on the way back to user space:

- a crossing that does not switch (getppid-inline): none on a kernel without
  CONFIG_DEBUG_RSEQ, whose rseq work runs only on a return flagged by a preemption, a
  migration or a signal (TIF_NOTIFY_RESUME: rseq_handle_notify_resume); with
  CONFIG_DEBUG_RSEQ every system call's return checks the area (rseq_syscall), and B is
  cheaper;
- a crossing that switches (yield-same-cpu: sched_yield between two threads on one CPU,
  two switches per operation): the resumed thread's area is updated on its way back, a
  few hundred instructions more per operation in A (Debian's 6.1: 342 on x86-64, 426 on
  aarch64, 728 on ppc64le).

Needs the arch's kernel ($KCROSS_TEST_LAB_KERNEL_<ARCH>, ./check sets it), its
qemu-system program and its cross compiler; about a minute of host time per arch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG
from labs import lab_prerequisites

ROWS = ("syscall/getppid-inline", "ctxsw/yield-same-cpu")
SWITCH_COST = (100.0, 2000.0)   # instructions per yield-same-cpu operation (two switches)


def medians(records: list[dict]) -> dict[str, float]:
    from kcross.stats import summarize_record

    return {f"{r['suite']}/{r['name']}": summarize_record(r).median
            for r in records if r["type"] == "result" and r["status"] == "ok"}


@pytest.mark.parametrize("arch", ["x86_64", "ppc64le", "aarch64"])
def test_rseq_off_against_on(arch: str, tmp_path: Path) -> None:
    from kcross.lab.kconfig import find
    from kcross.lab.kernel import Kernel

    kernel, _ = lab_prerequisites(arch)
    env = {**os.environ, "KCROSS_SOURCE": str(Path(__file__).resolve().parents[2]),
           "XDG_DATA_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "kcross", "lab", arch, "--kernel", str(kernel),
                           "--compare-env", "KCROSS_RSEQ=off", "--suite", "syscall,ctxsw",
                           "--no-store", "--json"],
                          env=env, capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    starts = [i for i, r in enumerate(records) if r["type"] == "fingerprint"]
    assert len(starts) == 2 and records[-1]["type"] == "comparison"
    a, b = records[starts[0]:starts[1]], records[starts[1]:-1]

    # The fingerprints say what ran: A with glibc's registration, B with none.
    fa, fb = a[0], b[0]
    assert "KCROSS_RSEQ" not in fa["forced"] and fa["lab"]["variant"] is None
    assert fa["rseq"]["registered"] is True and fa["rseq"]["owner"] == "glibc", fa["rseq"]
    assert fb["forced"]["KCROSS_RSEQ"] == "off" and fb["lab"]["variant"] == "KCROSS_RSEQ=off"
    assert fb["rseq"] == {**fb["rseq"], "registered": False, "owner": None, "size": None,
                          "libc_size": 0, "percpu_mode": "atomic",
                          "unavailable_reason": "KCROSS_RSEQ=off: rseq left unregistered"}

    ma, mb = medians(a), medians(b)
    figures = {row: (ma[row], mb[row], ma[row] - mb[row]) for row in ROWS}
    print(f"{arch}: instructions/op with rseq, without, what rseq costs:", figures)
    found = find(Kernel.from_file(kernel, arch))
    debug = None if found is None else found[0].get("CONFIG_DEBUG_RSEQ") == "y"
    getppid = figures["syscall/getppid-inline"][2]
    # Exact counts; two boots' timers may read one tick of the guest's counter apart over
    # a batch (ppc64le's timebase: ~1.95 instructions; aarch64's 62.5 MHz counter: 16): a
    # few hundredths per op, never a whole instruction.
    if debug is False:
        assert abs(getppid) < 0.5, figures      # no rseq work on a return not flagged
    elif debug:
        assert getppid >= 1, figures            # rseq_syscall on every return
    else:
        assert getppid > -0.5, figures
    low, high = SWITCH_COST
    assert low < figures["ctxsw/yield-same-cpu"][2] < high, figures
