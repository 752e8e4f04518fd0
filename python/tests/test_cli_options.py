"""The command line says what it does: help texts, options reaching the
harness, figures never shown in a unit they are not in."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FAKE_HARNESS, Kcross, assert_one_line_error, fake_capture

ENVIRONMENT = ("KCROSS_SYSCALL", "KCROSS_VDSO", "KCROSS_TIMER", "KCROSS_DB", "KCROSS_HARNESS")


def test_run_help_lists_defaults_environment_suites_and_exit_codes(kcross: Kcross) -> None:
    # --help must never depend on the harness: point it nowhere
    proc = kcross("run", "--help", extra_env={"KCROSS_HARNESS": "/nonexistent"})
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())  # argparse wraps lines
    for name in ENVIRONMENT:
        assert name in text, name
    assert ("suites: syscall, cpuid, percpu, percpu-scaling, ctxsw, uctx, spin "
            "(see 'kcross list'") in text
    from kcross.run.defaults import DEFAULT_PROCESSES, PROCESS_SAMPLES, PROCESS_WARMUP_MS

    assert (f"{DEFAULT_PROCESSES} fresh harness processes, one after another, each running "
            f"every benchmark: {PROCESS_SAMPLES} samples per benchmark and process after a "
            f"{PROCESS_WARMUP_MS} ms warm-up") in text
    assert "--processes 1: one harness process with the harness's own defaults (201 samples, "\
        "200 ms warm-up)" in text
    assert "at least 2 ms" in text
    assert "11 samples after a 20 ms warm-up" in text and "batches keep their length" in text
    assert "shorter batches" not in text
    for option in ("--warmup-ms", "--min-batch-ms", "3 to 100000"):
        assert option in text, option
    for status in ("130", "141", "a benchmark failed its own check"):
        assert status in text, status


def test_top_level_help_has_exit_codes_and_environment(kcross: Kcross) -> None:
    proc = kcross("--help")
    assert proc.returncode == 0
    for text in ("exit status:", "bad input", *ENVIRONMENT):
        assert text in proc.stdout, text


def test_every_option_reaches_the_harness(kcross: Kcross, tmp_path: Path) -> None:
    """A shim harness records its command line, then is the fake harness."""
    argv_file = tmp_path / "argv.json"
    shim = tmp_path / "shim.py"
    shim.write_text(f"import json, runpy, sys\n"
                    f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n"
                    f"sys.argv[0] = {str(FAKE_HARNESS)!r}\n"
                    f"runpy.run_path({str(FAKE_HARNESS)!r}, run_name='__main__')\n")
    proc = kcross("run", "--suite", "syscall", "--bench", "getppid*", "--samples", "5",
                  "--warmup-ms", "7", "--min-batch-ms", "0.5", "--cpu", "0", "--json",
                  "--harness", str(shim))
    assert proc.returncode == 0, proc.stderr
    argv = json.loads(argv_file.read_text())
    assert argv == ["run", "--json", "--suite", "syscall", "--bench", "getppid*",
                    "--samples", "5", "--warmup-ms", "7.0", "--min-batch-ms", "0.5",
                    "--cpu", "0"]
    plan = [json.loads(line) for line in proc.stdout.splitlines()][1]
    assert (plan["samples"], plan["warmup_ms"], plan["min_batch_ms"]) == (5, 7.0, 0.5)


def test_a_unit_other_than_ns_per_op_is_refused_not_mislabelled(kcross: Kcross,
                                                                 tmp_path: Path) -> None:
    """`unit: "ms/op"` used to be shown as ns/op; the format has two units (ns/op, and
    instructions/op in lab runs), and a record with another is refused in one line (the
    schema says which)."""
    records = [json.loads(line) for line in
               fake_capture("--suite", "syscall", "--quick").splitlines()]
    ok = [r for r in records if r["type"] == "result" and r["status"] == "ok"]
    ok[0]["unit"] = "ms/op"
    capture = tmp_path / "capture.jsonl"
    capture.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert_one_line_error(kcross("import", str(capture)), code=2,
                          contains='$.unit: must be "ns/op" or "instructions/op", got "ms/op"')
