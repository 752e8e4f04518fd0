"""The fake harness answers bad input and lost output as the real one does.

Tests that use the fake can only catch what the fake reproduces, so its error
paths are checked against the real harness: same exit status, one line on
stderr.  Skipped, with the reason, where no real harness is built.
"""

from __future__ import annotations

import os
import subprocess
import sys

import harnesses
import pytest
from conftest import FAKE_HARNESS

REAL, WHY = harnesses.native()

CASES = [  # (environment, arguments): bad forcings, bad options, lost output
    ({"KCROSS_SYSCALL": "bogus"}, ["run", "--json", "--quick"]),
    ({"KCROSS_VDSO": "off"}, ["run", "--json", "--quick"]),
    ({"KCROSS_TIMER": "bogus"}, ["list", "--json"]),
    ({"KCROSS_TEST_FAIL": "no-such-benchmark"}, ["run", "--json", "--quick"]),
    ({}, ["run", "--json", "--quick", "--bench", "getppid-inline", "--bench", "gettid-inline"]),
    ({}, ["list", "--json", "--suite", "syscall", "--suite", "cpuid"]),
    ({}, ["run", "--json", "--quick", "--suite", "no-such-suite"]),
    ({}, ["run", "--json", "--quick", "--bench", "no-such-benchmark"]),
    ({}, ["run", "--json", "--samples", "2"]),
    ({}, ["list", "--json", ">/dev/full"]),
    ({}, ["run", "--json", "--quick", "--bench", "getppid-inline", ">/dev/full"]),
]


def _run(command: list[str], environ: dict[str, str], args: list[str]) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCROSS_")}
    env.update(environ)
    full = "/dev/full" if ">/dev/full" in args else None
    args = [a for a in args if a != ">/dev/full"]
    with open(full or os.devnull, "w") as out:
        proc = subprocess.run([*command, *args], stdout=out, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=120, check=False)
    return proc.returncode, proc.stderr


@pytest.mark.skipif(REAL is None, reason=WHY)
@pytest.mark.parametrize(("environ", "args"), CASES, ids=[" ".join(
    [*(f"{k}={v}" for k, v in e.items()), *a]) for e, a in CASES])
def test_fake_fails_like_the_real_harness(environ: dict[str, str], args: list[str]) -> None:
    assert REAL is not None
    real_rc, real_err = _run(REAL, environ, args)
    fake_rc, fake_err = _run([sys.executable, str(FAKE_HARNESS)], environ, args)
    assert real_rc in (2, 3), real_err
    assert fake_rc == real_rc, (fake_err, real_err)
    for err in (real_err, fake_err):
        assert err.startswith("kcross-harness: ") and err.count("\n") == 1, err
