"""The fake harness answers bad input and lost output as the real one does.

Tests that use the fake can only catch what the fake reproduces, so its error
paths are checked against the real harness: same exit status, one line on
stderr.  Skipped, with the reason, where no real harness is built.
"""

from __future__ import annotations

import json
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
    ({"KCROSS_TEST_DELAY": "getppid-inline"}, ["run", "--json", "--quick"]),
    ({"KCROSS_TEST_DELAY": ":5"}, ["run", "--json", "--quick"]),
    ({"KCROSS_TEST_DELAY": "getppid-inline:0"}, ["run", "--json", "--quick"]),
    ({"KCROSS_TEST_DELAY": "getppid-inline:ten"}, ["list", "--json"]),
    ({"KCROSS_TEST_DELAY": "getppid-inline:1e7"}, ["sysinfo", "--json"]),
    ({"KCROSS_TEST_DELAY": "no-such-benchmark:5"}, ["run", "--json", "--quick"]),
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


def test_fake_plants_a_delay_as_the_real_harness_does() -> None:
    """KCROSS_TEST_DELAY=GLOB:NS: NS more in every sample of the matching benchmarks (ticks
    likewise), nothing in the others nor in any empty loop; recorded in forced when set."""
    def results(environ: dict[str, str]) -> tuple[dict, dict[str, dict]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KCROSS_")}
        out = subprocess.run([sys.executable, str(FAKE_HARNESS), "run", "--json", "--quick",
                              "--bench", "getppid-*"], env={**env, **environ},
                             capture_output=True, text=True, timeout=60, check=True).stdout
        records = [json.loads(line) for line in out.splitlines()]
        return records[0], {r["name"]: r for r in records if r["type"] == "result"}

    plain_fp, plain = results({})
    planted_fp, planted = results({"KCROSS_TEST_DELAY": "syscall/getppid-inline:5.5"})
    assert "KCROSS_TEST_DELAY" not in plain_fp["forced"]
    assert planted_fp["forced"]["KCROSS_TEST_DELAY"] == "syscall/getppid-inline:5.5"
    for name, rec in planted.items():
        if rec["status"] != "ok":
            continue
        added = 5.5 if name == "getppid-inline" else 0.0
        assert rec["samples"] == pytest.approx([x + added for x in plain[name]["samples"]])
        assert (rec["ticks"] > plain[name]["ticks"]) == bool(added)
        assert rec["overhead"] == plain[name]["overhead"]
