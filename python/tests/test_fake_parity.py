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
from conftest import FAKE_HARNESS, HANG

REAL, WHY = harnesses.native()

CASES = [  # (environment, arguments): bad forcings, bad options, lost output
    ({"KCROSS_SYSCALL": "bogus"}, ["run", "--json", "--quick"]),
    ({"KCROSS_VDSO": "off"}, ["run", "--json", "--quick"]),
    ({"KCROSS_TIMER": "bogus"}, ["list", "--json"]),
    ({"KCROSS_RSEQ": "0"}, ["run", "--json", "--quick"]),
    ({"KCROSS_RSEQ": "OFF"}, ["sysinfo", "--json"]),
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
                              text=True, env=env, timeout=HANG, check=False)
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
                             capture_output=True, text=True, timeout=HANG, check=True).stdout
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


@pytest.mark.skipif(REAL is None, reason=WHY)
@pytest.mark.parametrize("value", ["off", "on"])
def test_fake_obeys_kcross_rseq_as_the_real_harness_does(value: str) -> None:
    """KCROSS_RSEQ recorded in forced (only when set), and with off the fingerprint's rseq
    group and the rows that need rseq as the real harness says them."""
    assert REAL is not None

    def records(command: list[str], environ: dict[str, str], *args: str) -> list[dict]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("KCROSS_") and k != "GLIBC_TUNABLES"}
        out = subprocess.run([*command, *args, "--json"], env={**env, **environ},
                             capture_output=True, text=True, timeout=HANG, check=True).stdout
        return [json.loads(line) for line in out.splitlines()]

    def seen(command: list[str]) -> tuple[dict, dict, dict[str, tuple[bool, str | None]]]:
        (fp,) = records(command, {"KCROSS_RSEQ": value}, "sysinfo")
        listed = records(command, {"KCROSS_RSEQ": value}, "list", "--suite", "cpuid")
        plain = records(command, {}, "sysinfo")[0]
        rows = {b["name"]: (b["available"], b["reason"]) for b in listed
                if b["name"] in ("rseq-load", "kc_cpu")}
        rseq = {k: fp["rseq"][k] for k in ("registered", "owner", "unavailable_reason",
                                           "percpu_mode")}
        assert "KCROSS_RSEQ" not in plain["forced"]
        return fp["forced"], rseq, rows

    real, fake = seen(REAL), seen([sys.executable, str(FAKE_HARNESS)])
    assert real[0]["KCROSS_RSEQ"] == fake[0]["KCROSS_RSEQ"] == value
    assert list(real[0]) == list(fake[0])           # in the same place among the others
    if value == "off":
        assert real[1:] == fake[1:]
