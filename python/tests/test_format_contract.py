"""One contract: the output of the real harness (native and, where available, cross-built
under qemu-user) and of the fake harness validates against python/kcross/result-format.schema.json.

Each line is checked twice: by jsonschema directly against the schema file (so
the test does not depend on kcross.schema's wrapping) and through
kcross.schema.parse_line with the stream order (what kcross itself does).
"""

from __future__ import annotations

import json
import subprocess
import sys

import harnesses
import pytest
from conftest import FAKE_HARNESS, HANG, captured
from jsonschema import Draft202012Validator
from kcross.schema import SCHEMA_VERSION, RunStream, load_schema, parse_line

FAIL_REASON = "forced failure (KCROSS_TEST_FAIL, for tests)"


def check_output(text: str, *, stream: bool) -> list[dict]:
    validator = Draft202012Validator(load_schema())
    records = []
    run = RunStream()
    for i, line in enumerate(text.splitlines(), 1):
        record = json.loads(line)
        errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
        assert not errors, f"line {i}: {errors[0].json_path}: {errors[0].message[:300]}"
        parse_line(line, f"line {i}")
        if stream:
            run.add(record, f"line {i}")
        records.append(record)
    assert records, "no output"
    if stream:
        assert run.complete
    return records


def run(command: list[str], *args: str, env: dict[str, str] | None = None,
        expect: int = 0, timeout: float = HANG) -> str:
    import os

    environ = {k: v for k, v in os.environ.items() if not k.startswith("KCROSS_")}
    environ.update(env or {})
    proc = subprocess.run([*command, *args], capture_output=True, text=True, env=environ,
                          timeout=timeout, check=False)
    assert proc.returncode == expect, (proc.returncode, proc.stderr[-2000:])
    return proc.stdout


def check_harness(command: list[str], run_args: list[str], fail_bench: str) -> None:
    records = check_output(run(command, "run", *run_args, "--json"), stream=True)
    assert {r["schema"] for r in records} == {SCHEMA_VERSION}
    assert any(r["type"] == "result" and r["status"] == "ok" for r in records)
    check_output(run(command, "list", "--json"), stream=False)
    (fp,) = check_output(run(command, "sysinfo", "--json"), stream=False)
    assert fp["forced"] == {"KCROSS_SYSCALL": None, "KCROSS_VDSO": None, "KCROSS_TIMER": None,
                            "KCROSS_TEST_FAIL": None}
    # A forced failure is a valid failed result; the run is complete and exits 1.
    failed = check_output(run(command, "run", *run_args, "--bench", fail_bench, "--json",
                              env={"KCROSS_TEST_FAIL": fail_bench}, expect=1), stream=True)
    assert failed[0]["forced"]["KCROSS_TEST_FAIL"] == fail_bench
    (result,) = [r for r in failed if r["type"] == "result"]
    assert (result["status"], result["reason"], result["overhead"]) == ("failed", FAIL_REASON,
                                                                         None)


def _schema2(command: list[str]) -> None:
    schema = harnesses.writes_schema(command)
    if schema == 1:
        pytest.skip(f"{command[-1]} writes schema 1: the schema-2 harness (format-c branch) is "
                    "not built here")
    assert schema == SCHEMA_VERSION, f"{command[-1]} writes schema {schema}"


def test_real_harness_output_validates() -> None:
    command, why = harnesses.native()
    if command is None:
        pytest.skip(why)
    _schema2(command)
    check_harness(command, ["--quick"], "getppid-inline")


@pytest.mark.parametrize("emulator", sorted(harnesses.cross()) or ["qemu-user"])
def test_real_harness_under_qemu_output_validates(emulator: str) -> None:
    command, why = harnesses.under_qemu(emulator)
    if command is None:
        pytest.skip(why)
    _schema2(command)
    # All suites, few and short samples: qemu-user is slow, and only the format matters here.
    check_harness(command, ["--samples", "3", "--min-batch-ms", "0.2", "--warmup-ms", "1"],
                  "syscall/getppid-inline")


FAKE = [sys.executable, str(FAKE_HARNESS)]


@pytest.mark.parametrize("args, env, expect", [
    (["run", "--quick"], {}, 0),
    (["run"], {}, 0),
    (["run", "--suite", "percpu-scaling", "--samples", "5", "--cpu", "0", "--interleave"], {}, 0),
    (["run", "--quick", "--bench", "getppid*"], {"KCROSS_TEST_FAIL": "getppid-inline"}, 1),
    (["run", "--quick", "--bench", "syscall/*"], {"KCROSS_FAKE_SKIP": "getppid-int80"}, 0),
    (["run", "--quick", "--suite", "syscall"], {"KCROSS_VDSO": "0", "KCROSS_SYSCALL": "libc"}, 0),
])
def test_fake_harness_run_output_validates(args: list[str], env: dict, expect: int) -> None:
    records = check_output(run(FAKE, *args, "--json", env=env, expect=expect), stream=True)
    statuses = {r["status"] for r in records if r["type"] == "result"}
    # Rows the captured machine itself skipped stay skipped (e.g. an across-CPU row).
    natural = {"skipped"} & {c["status"] for c in captured() if c["type"] == "result" and
                             (c["suite"], c["name"]) in
                             {(r["suite"], r["name"]) for r in records if r["type"] == "result"}}
    assert statuses == natural | ({"ok", "failed"} if expect else
                                  {"ok", "skipped"} if "KCROSS_FAKE_SKIP" in env else {"ok"})
    assert records[0]["forced"] == {name: env.get(name) for name in
                                    ("KCROSS_SYSCALL", "KCROSS_VDSO", "KCROSS_TIMER",
                                     "KCROSS_TEST_FAIL")}


def test_fake_harness_list_and_sysinfo_validate() -> None:
    benches = check_output(run(FAKE, "list", "--json", env={"KCROSS_FAKE_SKIP": "rdpid"}),
                           stream=False)
    assert {b["suite"] for b in benches} == {b["suite"] for b in captured("list")}
    assert {"syscall", "cpuid", "percpu", "percpu-scaling", "ctxsw"} <= {b["suite"] for b in benches}
    assert [b["available"] for b in benches if b["name"] == "rdpid"] == [False]
    check_output(run(FAKE, "sysinfo", "--json"), stream=False)


@pytest.mark.parametrize("env, message", [
    ({"KCROSS_VDSO": "off"}, "kcross-harness: KCROSS_VDSO=off: "),
    ({"KCROSS_TIMER": "bogus"}, "kcross-harness: KCROSS_TIMER=bogus: "),
    ({"KCROSS_SYSCALL": "int80"}, "kcross-harness: KCROSS_SYSCALL=int80: "),
])
def test_fake_harness_refuses_bad_forcings_like_the_real_one(env: dict, message: str) -> None:
    import os

    proc = subprocess.run([*FAKE, "run", "--json"], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=HANG, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(message) and ": not one of " in proc.stderr  # as src/settings.c
    assert len(proc.stderr.splitlines()) == 1
