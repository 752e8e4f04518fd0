"""The lab's guest payload and correctness mode (issue 8).

Unit tests: CTest's test list (a captured ``ctest --show-only=json-v1`` of a ppc64le build,
data/ctest-ppc64le.json, paths replaced by /BUILD and /SOURCE) turned into guest tests; the
judging of a test's console section by CTest's rules; the one-line errors (no source tree,
no cmake, no cross compiler, a failed build).

The lab tests build the payload for each arch and run the whole suite in a real kernel
under qemu-system with two vCPUs (multi-threaded TCG); each needs the kernel
($KCROSS_TEST_LAB_KERNEL_PPC64LE / _AARCH64 / _X86_64, as test_lab_initramfs.py), the
qemu-system program and the cross compiler, and skips naming whichever is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import harnesses
import pytest
from conftest import HANG
from kcross.errors import LabError, UserError
from kcross.lab import correctness
from kcross.lab.correctness import (
    FAILED,
    PASSED,
    SKIPPED,
    evidence,
    judge,
    plan_timeout,
    run_tests,
    stress_aborts,
    summary,
)
from kcross.lab.initramfs import CommandResult
from kcross.lab.machines import ARCHES, Guest
from kcross.lab.machines import arch as lab_arch
from kcross.lab.payload import (
    GUEST_HARNESS,
    STRESS_SCALE,
    GuestTest,
    Payload,
    build_dir_for,
    build_payload,
    find_source,
    guest_tests,
    harness_benchmarks,
    harness_suites,
    missing_tools,
    syscall_mechanisms,
)
from labs import lab_kernel

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parents[1]
SAMPLE = TESTS / "data" / "ctest-ppc64le.json"
BUILD = Path("/BUILD")


def sample() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SAMPLE.read_text())
    return data


# ---------------------------------------------------------------- ctest's list -> guest tests

def test_captured_list_becomes_guest_tests() -> None:
    data = sample()
    tests, excluded, files = guest_tests(data, BUILD, Path("/SOURCE"))
    by_name = {t.name: t for t in tests}
    # Every test is either run or excluded, in CTest's order.
    assert [t["name"] for t in data["tests"]] == \
        [n for n in (t["name"] for t in data["tests"]) if n in by_name or
         n in {e.name for e in excluded}]
    built = {t["name"] for t in data["tests"] if t["command"][0].startswith("/BUILD/")}
    assert set(by_name) == built
    assert {"test_rseq", "test_select", "test_vdso", "example_percpu",
            "stress_percpu_rseq", "stress_percpu_fallback"} <= built

    clock = by_name["test_clock"]
    assert clock.argv == ["/lab/tests/test_clock"]
    assert (clock.env, clock.timeout, clock.stress, clock.skip_code) == ({}, 120.0, False, 77)
    assert clock.plan_command() == ["timeout=120", "/lab/tests/test_clock"]

    forced = by_name["example_syscall_forced_libc"]
    assert forced.argv == ["/lab/tests/example_syscall"]
    assert forced.env == {"KCROSS_SYSCALL": "libc"}
    assert forced.pass_regex == (r"mechanism in use: libc \(KCROSS_SYSCALL=libc\)",)
    assert forced.plan_command() == ["timeout=60", "KCROSS_SYSCALL=libc", "/lab/tests/example_syscall"]
    example = by_name["example_syscall"]
    assert example.fail_regex == ("ERROR|runtime error",) and example.skip_code is None

    rseq, fallback = by_name["stress_percpu_rseq"], by_name["stress_percpu_fallback"]
    assert rseq.stress and fallback.stress
    # (the sample was captured with the scale 0.2; build_payload sets STRESS_SCALE)
    assert rseq.argv == ["/lab/tests/stress_percpu", "-s", "0.2"]
    assert fallback.argv == ["/lab/tests/stress_percpu", "-s", "0.2", "--fallback"]
    assert rseq.timeout == 900.0
    assert sum(t.stress for t in tests) == 2

    assert files["/lab/tests/stress_percpu"] == BUILD / "tests" / "stress" / "stress_percpu"
    assert files["/lab/tests/example_syscall"] == BUILD / "example_syscall"
    assert set(files) == {t.argv[0] for t in tests}

    reasons = {e.name: e.reason for e in excluded}
    assert reasons["harness_smoke"] == "a CMake script (cmake -P): the guest has no cmake"
    assert reasons["harness_minimal_root"] == "a shell script: the guest has no shell"
    assert reasons["install_consumer"] == "a shell script: the guest has no shell"
    assert set(reasons) == {t["name"] for t in data["tests"]} - built


def _entry(name: str, command: list[str], **props: Any) -> dict[str, Any]:
    return {"name": name, "command": command,
            "properties": [{"name": k, "value": v} for k, v in props.items()]}


@pytest.mark.parametrize("entry, reason", [
    (_entry("off", ["/BUILD/t"], DISABLED=True), "disabled"),
    ({"name": "gone", "properties": []}, "no command"),
    (_entry("host", ["/usr/bin/python3", "x.py"]), "runs /usr/bin/python3 of the host"),
    (_entry("relative", ["t"]), "runs t of the host"),
    (_entry("spaced", ["/BUILD/t", "a b"]), "holds whitespace"),
    (_entry("spacedenv", ["/BUILD/t"], ENVIRONMENT=["A=b c"]), "holds whitespace"),
    (_entry("badenv", ["/BUILD/t"], ENVIRONMENT=["JUSTANAME"]), "not NAME=VALUE"),
    (_entry("hostfile", ["/BUILD/t", "--dlopen", "/BUILD/libkcross.so"]), "names a file of the host"),
    (_entry("srcfile", ["/BUILD/t", "/SOURCE/data.bin"]), "names a file of the host"),
    (_entry("envmod", ["/BUILD/t"], ENVIRONMENT_MODIFICATION=["A=set:b"]), "ENVIRONMENT_MODIFICATION"),
])
def test_tests_the_guest_cannot_run_are_excluded(entry: dict[str, Any], reason: str) -> None:
    tests, excluded, files = guest_tests({"tests": [entry]}, BUILD, Path("/SOURCE"))
    assert tests == [] and files == {}
    assert len(excluded) == 1 and excluded[0].name == entry["name"]
    assert reason in excluded[0].reason


def test_defaults_and_labels() -> None:
    entry = _entry("t", ["/BUILD/sub/t", "-v"], LABELS=["slow", "stress"], WILL_FAIL=True,
                   SKIP_REGULAR_EXPRESSION=["SKIP: "])
    (test,), _, files = guest_tests({"tests": [entry]}, BUILD)
    assert test.argv == ["/lab/tests/t", "-v"] and files == {"/lab/tests/t": BUILD / "sub" / "t"}
    assert test.timeout == 1500.0          # CTest's default without TIMEOUT
    assert test.stress and test.will_fail and test.skip_regex == ("SKIP: ",)


def test_two_programs_with_one_name_are_refused() -> None:
    data = {"tests": [_entry("a", ["/BUILD/x/t"]), _entry("b", ["/BUILD/y/t"])]}
    with pytest.raises(LabError, match="both /lab/tests/t in the guest"):
        guest_tests(data, BUILD)


# ---------------------------------------------------------------- judging

def _test(**kw: Any) -> GuestTest:
    base: dict[str, Any] = dict(name="t", argv=["/lab/tests/t"], env={}, timeout=60.0, stress=False)
    return GuestTest(**{**base, **kw})


def _result(status: str, *lines: str) -> CommandResult:
    return CommandResult(1, "/lab/tests/t", status, list(lines))


@pytest.mark.parametrize("test, result, status, reason", [
    (_test(), _result("0", "ok 1"), PASSED, ""),
    (_test(), _result("1", "not ok 1"), FAILED, "exit status 1"),
    (_test(), _result("SIGSEGV"), FAILED, "killed by SIGSEGV"),
    (_test(), _result("timeout"), FAILED, "timed out after 60 s"),
    (_test(skip_code=77), _result("77", "1..0 # SKIP tmpfile: No such file or directory"),
     SKIPPED, "tmpfile: No such file or directory"),
    (_test(skip_code=77), _result("77"), SKIPPED, "exit status 77"),
    (_test(), _result("77"), FAILED, "exit status 77"),
    (_test(skip_code=77), _result("timeout"), FAILED, "timed out after 60 s"),
    # PASS_REGULAR_EXPRESSION decides, not the exit status (as in CTest).
    (_test(pass_regex=("settings: .*not one of",)), _result("2", "settings: C=x: not one of a, b"),
     PASSED, ""),
    (_test(pass_regex=("example: ok",)), _result("0", "something else"), FAILED,
     "matches none of PASS_REGULAR_EXPRESSION 'example: ok'"),
    (_test(pass_regex=("ok",), fail_regex=("ERROR|runtime error",)),
     _result("0", "ok", "x.c:3: runtime error: overflow"), FAILED,
     "matches FAIL_REGULAR_EXPRESSION 'ERROR|runtime error'"),
    (_test(skip_regex=("SKIP: ",)), _result("0", "SKIP: no x"), SKIPPED,
     "matches SKIP_REGULAR_EXPRESSION 'SKIP: '"),
    (_test(will_fail=True), _result("1"), PASSED, ""),
    (_test(will_fail=True), _result("0"), FAILED, "WILL_FAIL, and it passed"),
    (_test(pass_regex=("a(b",)), _result("0", "xa(by"), PASSED, ""),   # not a Python regex
])
def test_judge_follows_ctest(test: GuestTest, result: CommandResult, status: str,
                             reason: str) -> None:
    outcome = judge(test, result)
    assert (outcome.status, outcome.exit) == (status, result.status)
    assert reason in outcome.reason and (reason or outcome.reason == "")
    assert outcome.output == result.output and outcome.passed == (status == PASSED)


def test_run_tests_boots_once_with_one_plan_line_per_test(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    tests = [_test(name="a", argv=["/lab/tests/a"]),
             _test(name="b", argv=["/lab/tests/b", "-x"], env={"K": "v"}, skip_code=77)]
    payload = Payload("ppc64le", tmp_path, tmp_path / "h", tmp_path / "init",
                      {GUEST_HARNESS: tmp_path / "h"}, tests)
    calls = []

    def fake_run_plan(guest: Any, init: Path, files: Any, plan: Any, *, timeout: float,
                      workdir: Any = None, on_result: Any = None) -> Any:
        calls.append((guest, init, files, plan, timeout))
        results = [CommandResult(1, "x", "0", ["fine"]),
                   CommandResult(2, "y", "77", ["1..0 # SKIP no rseq"])]
        for seconds, result in enumerate(results, 1):   # as the console streams
            if on_result:
                on_result(result, float(seconds))
        return results, "console"

    monkeypatch.setattr(correctness, "run_plan", fake_run_plan)
    guest = Guest(lab_arch("ppc64le"), tmp_path / "vmlinux", mode="correctness")
    progress: list[tuple[str, str, str, float]] = []
    outcomes = run_tests(payload, guest, timeout=99,
                         progress=lambda o, s: progress.append((o.name, o.status, o.reason, s)))
    assert progress == [("a", PASSED, "", 1.0), ("b", SKIPPED, "no rseq", 2.0)]
    assert calls == [(guest, tmp_path / "init", {GUEST_HARNESS: tmp_path / "h"},
                      [["timeout=60", "/lab/tests/a"], ["timeout=60", "K=v", "/lab/tests/b", "-x"]],
                      99)]
    assert [(o.name, o.status, o.reason) for o in outcomes] == \
        [("a", PASSED, ""), ("b", SKIPPED, "no rseq")]
    assert plan_timeout(tests) == correctness.BOOT_ALLOWANCE + 120
    assert summary(outcomes) == "1 passed, 1 skipped"
    assert summary([]) == "0 passed"
    with pytest.raises(UserError, match="^the payload was built for ppc64le, the guest is aarch64$"):
        run_tests(payload, Guest(lab_arch("aarch64"), tmp_path / "Image", mode="correctness"),
                  timeout=99)
    assert len(calls) == 1


def test_evidence_and_aborts() -> None:
    out = correctness.TestOutcome(
        "stress_percpu_rseq", PASSED,
        ["# seed 1 (-S 1 replays the delays and choices), scale 0.2, 8 threads on 2 CPUs, mode rseq",
         "# counter: 4 aborts retried (39.9 per million adds)", "ok 1 - x",
         "# counter: 114 aborts retried (1137.9 per million adds)"])
    assert stress_aborts(out) == 118
    assert evidence([out]) == [f"stress_percpu_rseq: {out.output[0]}",
                               f"stress_percpu_rseq: {out.output[1]}",
                               f"stress_percpu_rseq: {out.output[3]}"]


# ---------------------------------------------------------------- one-line errors

def test_source_tree_is_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KCROSS_SOURCE", raising=False)
    # Run from this checkout, or installed by `pip install .` from it (the wheel records
    # the tree it was built from): either way, this tree.
    assert find_source() == REPO
    assert find_source(REPO) == REPO
    monkeypatch.setenv("KCROSS_SOURCE", str(REPO))
    assert find_source() == REPO


@pytest.mark.parametrize("where", ["option", "env"])
def test_no_source_tree_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                    where: str) -> None:
    (tmp_path / "CMakeLists.txt").write_text("")          # no lab/init.c: not kcross
    missing = tmp_path / "missing"
    for path, message in ((tmp_path, "not a kcross source tree (no CMakeLists.txt and lab/init.c)"),
                          (missing, "no such directory")):
        if where == "env":
            monkeypatch.setenv("KCROSS_SOURCE", str(path))
            args: dict[str, Any] = {}
        else:
            args = {"source": path}
        with pytest.raises(UserError) as caught:
            build_payload("ppc64le", **args, cache_dir=tmp_path / "cache")
        text = str(caught.value)
        assert text == f"{'--source' if where == 'option' else '$KCROSS_SOURCE'} {path}: {message}"


def test_installed_without_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Installed (not run from a checkout): the tree the wheel was built from, while it is
    there; else one line saying what to give."""
    from kcross.lab import payload
    fake = tmp_path / "site" / "kcross" / "lab" / "payload.py"
    monkeypatch.setattr(payload, "__file__", str(fake))
    monkeypatch.delenv("KCROSS_SOURCE", raising=False)
    monkeypatch.setattr(payload, "_built_from", lambda: REPO)
    assert find_source() == REPO
    for gone in (None, tmp_path / "moved-away"):
        monkeypatch.setattr(payload, "_built_from", lambda gone=gone: gone)
        with pytest.raises(UserError, match="installed without them: give --source DIR"):
            find_source()


# ---------------------------------------------------------------- what the guest harness accepts

def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_mechanisms_and_suites_are_read_from_the_tree(tmp_path: Path) -> None:
    """Whatever the C says, in its order: nothing about them is known on the Python side."""
    tree = _tree(tmp_path / "src", {
        "include/kcross/arch/ppc64le.h": '#define KC_SYSMECH_NATIVE_NAME "one"\t/* x */\n'
                                         '#define KC_SYSMECH_ALT_NAME    "two"\n',
        "include/kcross/arch/x86_64.h": '#define KC_SYSMECH_NATIVE_NAME "three"\n',
        "src/syscall.c": 'static const char *n[] = {\n\t[KC_SYSMECH_LIBC] = "via-libc",\n};\n',
        "harness/registry.c": "static const struct kh_suite *const suites[] = {\n"
                              "\t&kh_suite_b,\n\t&kh_suite_a,\n};\n",
        "harness/bench/a.c": 'const struct kh_suite kh_suite_a = { "first-a", benches, 0 };\n',
        "harness/bench/b.c": 'const struct kh_suite kh_suite_b = { "b", benches, KH_X };\n',
    })
    assert syscall_mechanisms("ppc64le", tree) == ("via-libc", "one", "two")
    assert syscall_mechanisms("x86_64", tree) == ("via-libc", "three")
    assert syscall_mechanisms("aarch64", tree) is None        # the tree does not say
    assert harness_suites(tree) == ("b", "first-a")
    (tree / "harness" / "bench" / "a.c").write_text("")        # listed, never named
    assert harness_suites(tree) is None
    assert syscall_mechanisms("ppc64le", tmp_path) is None and harness_suites(tmp_path) is None


BENCH_C = """\
#if defined(KC_ARCH_X86_64)
# define HINTS X(H_A, "pause", "pause", "pause")
#elif defined(KC_ARCH_PPC64LE)
# define HINTS X(H_B, "or27", "or 27,27,27", "or 27,27,27") \\
\t\t    X(H_C, "or1", "or 1,1,1", "or 1,1,1")
#endif
static const struct kh_bench rows[] = {
\t{ "plain", "every arch", f, 0, 0, NULL },
#if defined(KC_ARCH_X86_64)
\t{ "rdtscp", "x86 only", f, 0, 0, NULL },
#elif defined(KC_ARCH_AARCH64)
\t{ "isb", "arm only", f, 0, 0, NULL },
#else
\t{ "other", "neither", f, 0, 0, NULL },
#endif
#if KC_HAVE_SYSCALL_ALT
\t{ "alt", "an alternative syscall instruction", f, 0, 0, NULL },
#endif
#define X(id, name, text, insn) \\
\t{ "hint-" name, "one `" text "`", f, 0, id, NULL },
\tHINTS
#undef X
\t{ NULL, NULL, NULL, 0, 0, NULL },
};
const struct kh_suite kh_suite_s = { "s", rows, 0 };
"""


def test_benchmarks_are_the_rows_each_archs_compiler_sees(tmp_path: Path) -> None:
    """The arch conditions decided (KC_HAVE_SYSCALL_ALT: the arch header's alternative),
    the X-macro rows expanded; a row under a condition not decidable here: None."""
    tree = _tree(tmp_path / "src", {
        "include/kcross/arch/ppc64le.h": '#define KC_SYSMECH_ALT_NAME "scv"\n',
        "include/kcross/arch/x86_64.h": "\n",
        "include/kcross/arch/aarch64.h": "\n",
        "harness/bench/s.c": BENCH_C,
    })
    assert harness_benchmarks("ppc64le", tree) == (
        "s/plain", "s/other", "s/alt", "s/hint-or27", "s/hint-or1")
    assert harness_benchmarks("x86_64", tree) == ("s/plain", "s/rdtscp", "s/hint-pause")
    assert harness_benchmarks("aarch64", tree) is None     # no HINTS on aarch64: unsure
    (tree / "harness" / "bench" / "s.c").write_text(
        BENCH_C.replace("#if KC_HAVE_SYSCALL_ALT", "#if KC_UNKNOWN > 1"))
    assert harness_benchmarks("x86_64", tree) is None      # a row it cannot decide
    assert harness_benchmarks("x86_64", tmp_path) is None


def test_benchmarks_are_the_real_harness_ones() -> None:
    """The rows read from this tree are those a harness built from it lists, on each arch."""
    found = [(a, c) for a, c in _harnesses() if a in ARCHES]
    if not found:
        pytest.skip("no real harness (set KCROSS_TEST_REAL_HARNESS; ./check passes the cross ones)")
    for arch, command in found:
        listed = subprocess.run([*command, "list", "--json"], capture_output=True, text=True,
                                timeout=HANG, check=True)
        rows = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
        assert sorted(harness_benchmarks(arch, REPO) or ()) == sorted(
            f"{r['suite']}/{r['name']}" for r in rows if r["type"] == "bench"), arch


def _harnesses() -> list[tuple[str, list[str]]]:
    """(arch, command) of every real harness this run has: the native one and the cross
    ones ./check passes (each emulator is qemu-ARCH)."""
    found = []
    command, _ = harnesses.native()
    if command is not None:
        found.append((os.uname().machine, command))
    for emulator in harnesses.cross():
        command, _ = harnesses.under_qemu(emulator)
        if command is not None:
            found.append((emulator.removeprefix("qemu-"), command))
    return found


def test_mechanisms_and_suites_are_the_real_harness_ones() -> None:
    """What the lab reads from this tree is what a harness built from it takes: its usage
    names KCROSS_SYSCALL's mechanisms, its refusal of an unknown suite lists the suites."""
    found = [(a, c) for a, c in _harnesses() if a in ARCHES]
    if not found:
        pytest.skip("no real harness (set KCROSS_TEST_REAL_HARNESS; ./check passes the cross ones)")
    for arch, command in found:
        usage = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=HANG)
        (names,) = re.findall(r"KCROSS_SYSCALL=(\S+) forces", usage.stdout + usage.stderr)
        assert syscall_mechanisms(arch, REPO) is not None
        assert sorted(syscall_mechanisms(arch, REPO) or ()) == sorted(set(names.split("|")) - {"auto"}), arch
        refused = subprocess.run([*command, "run", "--suite", "no-such-suite"], capture_output=True,
                                 text=True, timeout=HANG)
        (listed,) = re.findall(r"unknown suite 'no-such-suite' \(suites: ([^)]*)\)", refused.stderr)
        assert harness_suites(REPO) == tuple(listed.split(", ")), arch


def _path_with(tmp_path: Path, *programs: str) -> str:
    """A PATH dir holding only ``programs`` (the real cmake, or stubs for compilers)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in programs:
        if name in ("cmake", "ctest", "ninja", "make"):
            real = shutil.which(name)
            if real:
                (bin_dir / name).symlink_to(real)
        else:
            (bin_dir / name).write_text("#!/bin/sh\nexit 1\n")
            (bin_dir / name).chmod(0o755)
    return str(bin_dir)


@pytest.mark.parametrize("arch, package", [
    ("ppc64le", "gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross"),
    ("aarch64", "gcc-aarch64-linux-gnu libc6-dev-arm64-cross"),
    ("x86_64", "gcc libc6-dev" if os.uname().machine == "x86_64"
     else "gcc-x86-64-linux-gnu libc6-dev-amd64-cross"),
])
def test_no_cross_compiler_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             arch: str, package: str) -> None:
    if not shutil.which("cmake"):
        pytest.skip("no cmake (apt-get install cmake)")
    monkeypatch.setenv("PATH", _path_with(tmp_path, "cmake", "ninja", "make"))
    with pytest.raises(LabError) as caught:
        build_payload(arch, source=REPO, cache_dir=tmp_path / "cache")
    gcc = {"ppc64le": "powerpc64le", "aarch64": "aarch64", "x86_64": "x86_64"}[arch]
    assert str(caught.value) == (f"building the {arch} guest programs needs {gcc}-linux-gnu-gcc "
                                 f"(apt-get install {package})")
    assert not (tmp_path / "cache").exists()


def test_a_compiler_without_its_c_library_names_the_package(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """gcc-*-linux-gnu installed without its Recommends (--no-install-recommends): no
    libc.a to link the static guest programs with."""
    bin_dir = Path(_path_with(tmp_path, "cmake", "ninja", "make"))
    gcc = bin_dir / "powerpc64le-linux-gnu-gcc"
    gcc.write_text('#!/bin/sh\n[ "$1" = -print-file-name=libc.a ] && echo libc.a\n')
    gcc.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(LabError, match=r"^building the ppc64le guest programs needs libc\.a for "
                                       r"powerpc64le-linux-gnu-gcc \(apt-get install "
                                       r"libc6-dev-ppc64el-cross\)$"):
        build_payload("ppc64le", source=REPO, cache_dir=tmp_path / "cache")
    gcc.write_text('#!/bin/sh\necho /usr/powerpc64le-linux-gnu/lib/libc.a\n')   # found
    assert missing_tools("ppc64le") == []


def test_no_cmake_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", _path_with(tmp_path, "powerpc64le-linux-gnu-gcc"))
    with pytest.raises(LabError, match=r"^building the ppc64le guest programs needs cmake, ninja "
                                      r"\(apt-get install cmake ninja-build\)$"):
        build_payload("ppc64le", source=REPO, cache_dir=tmp_path / "cache")


def test_no_build_tool_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not shutil.which("cmake"):
        pytest.skip("no cmake (apt-get install cmake)")
    monkeypatch.setenv("PATH", _path_with(tmp_path, "cmake", "powerpc64le-linux-gnu-gcc"))
    with pytest.raises(LabError, match=r"^building the ppc64le guest programs needs ninja "
                                      r"\(apt-get install ninja-build\)$"):
        build_payload("ppc64le", source=REPO, cache_dir=tmp_path / "cache")


def test_failed_build_names_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not shutil.which("cmake"):
        pytest.skip("no cmake (apt-get install cmake)")
    source = tmp_path / "src"
    (source / "lab").mkdir(parents=True)
    (source / "cmake").mkdir()
    (source / "lab" / "init.c").write_text("")
    (source / "cmake" / "toolchain-powerpc64le.cmake").write_text("")
    (source / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(broken NONE)\n"
        "message(FATAL_ERROR \"no way\")\n")
    monkeypatch.setenv("PATH", _path_with(tmp_path, "cmake", "ninja", "make",
                                          "powerpc64le-linux-gnu-gcc"))
    with pytest.raises(LabError) as caught:
        build_payload("ppc64le", source=source, cache_dir=tmp_path / "cache")
    log = build_dir_for("ppc64le", source, tmp_path / "cache") / "kcross-lab-build.log"
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("configuring the ppc64le guest programs failed (exit 1): CMake Error")
    assert message.endswith(f"; log: {log}")
    assert "no way" in log.read_text()


def _minimal_tree(root: Path) -> Path:
    """A source tree whose 'build' only writes the two programs a payload must have."""
    return _tree(root, {
        "lab/init.c": "", "cmake/toolchain-powerpc64le.cmake": "",
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(minimal NONE)\n"
                          "file(WRITE ${CMAKE_BINARY_DIR}/kcross-harness \"h\")\n"
                          "file(WRITE ${CMAKE_BINARY_DIR}/kcross-lab-init \"i\")\n"
                          "enable_testing()\n"})


def test_two_source_trees_never_share_a_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two labs from two checkouts (at once, or one after the other) each keep their own
    build: one never wipes the other's guest programs, built or in use."""
    if not shutil.which("cmake"):
        pytest.skip("no cmake (apt-get install cmake)")
    monkeypatch.setenv("PATH", _path_with(tmp_path, "cmake", "ctest", "ninja", "make",
                                          "powerpc64le-linux-gnu-gcc"))
    cache = tmp_path / "cache"
    first = build_payload("ppc64le", source=_minimal_tree(tmp_path / "one"), cache_dir=cache)
    second = build_payload("ppc64le", source=_minimal_tree(tmp_path / "two"), cache_dir=cache)
    assert first.build_dir != second.build_dir
    assert first.init.read_text() == "i" and first.harness.read_text() == "h"
    _minimal_tree(tmp_path / "three")
    (tmp_path / "three" / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\n"
                                                       "project(broken NONE)\nmessage(FATAL_ERROR no)\n")
    with pytest.raises(LabError):
        build_payload("ppc64le", source=tmp_path / "three", cache_dir=cache)
    assert first.init.is_file() and second.init.is_file()
    again = build_payload("ppc64le", source=tmp_path / "one", cache_dir=cache)
    assert again.build_dir == first.build_dir


# ---------------------------------------------------------------- the suite in real kernels

# Skips that are right in a guest: (arch, test) -> what the skip reason says.  TCG cannot
# provide an invariant TSC (QEMU: "TCG doesn't support requested feature:
# CPUID.80000007H:EDX.invtsc"), so the harness's timer rightly refuses the TSC there.
EXPECTED_SKIPS = {("x86_64", "test_timer"): "TSC not invariant"}


@pytest.mark.parametrize("arch", ARCHES)
def test_suite_passes_in_the_guest(arch: str) -> None:
    facts = lab_arch(arch)
    kernel = lab_kernel(arch)
    for tool, package in (("cmake", "cmake"), (facts.cross_gcc, facts.cross_package)):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (apt-get install {package})")

    started = time.monotonic()
    payload = build_payload(arch, source=REPO)
    built = time.monotonic()
    guest = Guest(facts, kernel, mode="correctness")
    progress: list[tuple[str, str, float]] = []
    outcomes = run_tests(payload, guest, timeout=plan_timeout(payload.tests),
                         progress=lambda o, s: progress.append((o.name, o.status, s)))
    ran = time.monotonic()
    # A line per test as it ended, from the console as it streamed: every test, in order,
    # with its outcome, and times that add up to no more than the boot's.
    assert [(n, st) for n, st, _ in progress] == [(o.name, o.status) for o in outcomes]
    assert 0 < sum(s for _, _, s in progress) <= ran - built
    for o in outcomes:
        if not o.passed:
            print(f"  {o.name}: {o.status}: {o.reason}")
    print(f"{arch}: payload built in {built - started:.1f} s, {len(outcomes)} tests run in the "
          f"guest in {ran - built:.1f} s (host time, -smp 2, thread=multi, stress -s {STRESS_SCALE})")
    for line in evidence(outcomes):
        print(f"  {line}")

    # A failed test is named with its own failing TAP lines (`not ok ...` and the diagnostics
    # after them), not only its last lines: a flake must say which check it was.
    failed = [f"{o.name}: {o.status} ({o.reason}): "
              f"{' | '.join(_failing_lines(o.output) or o.output[-5:])}"
              for o in outcomes if not o.passed and not
              (o.status == SKIPPED and EXPECTED_SKIPS.get((arch, o.name), "\0") in o.reason)]
    assert not failed, failed
    assert [o.name for o in outcomes] == [t.name for t in payload.tests]
    assert {"test_rseq", "test_percpu", "test_vdso", "stress_percpu_rseq",
            "stress_percpu_fallback"} <= {o.name for o in outcomes}

    out = {o.name: o.output for o in outcomes}
    # rseq registered in the guest (glibc 2.36 registers it; the kernel has rseq) and the
    # sections run under the kernel, not the fallback.
    assert any(line.startswith("rseq: registered by glibc") for line in out["example_cpu"])
    assert any(line.startswith("# mode default: owner glibc,") and line.endswith("error 0 (-)")
               for line in out["test_rseq"])
    assert any("rseq registered: sections run under the kernel" in line
               for line in out["test_rseq_ops"])
    assert any(line.startswith("# seed ") and f"scale {STRESS_SCALE}," in line
               and line.endswith("mode rseq") for line in out["stress_percpu_rseq"])
    # ... and the kernel really aborted some of them (8 threads preempted on 2 vCPUs).
    assert stress_aborts(next(o for o in outcomes if o.name == "stress_percpu_rseq")) > 0
    # The live vDSO parsed.
    assert any("- the live vDSO at" in line and line.startswith("ok ") for line in out["test_vdso"])
    if arch == "ppc64le":     # the kernel advertises PPC_FEATURE2_SCV on POWER9: scv selected
        assert "mechanism in use: scv (KCROSS_SYSCALL=unset)" in out["example_syscall"]
        assert any(line.startswith("# page size") and line.endswith("mechanism scv")
                   for line in out["test_syscall"])


def _failing_lines(output: list[str]) -> list[str]:
    """A TAP test's `not ok` lines, each with the `#` diagnostics just before and after it
    (the attempts a check made, the detail it printed)."""
    lines: list[str] = []
    for i, line in enumerate(output):
        if not line.startswith("not ok"):
            continue
        start = i
        while start > 0 and i - start < 5 and output[start - 1].startswith("#"):
            start -= 1
        end = i + 1
        while end < len(output) and end - i <= 5 and output[end].startswith("#"):
            end += 1
        lines += output[start:end]
    return lines
