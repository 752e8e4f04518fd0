"""Profiles in the labs (issue 16), without booting: the plugin's output read, the
symbols (KASLR slide, missing symbols, a stub System.map), the costly-instruction table,
the figures' arithmetic, the trace, and bad input refused before any build or boot.

The boots are python/tests/test_lab_profile_boot.py's (the lab tier)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG, assert_one_line_error
from kcross.errors import LabError
from kcross.lab import costly
from kcross.lab.profile import EMPTY_LOOP, KERNEL, USER, Prepared, build
from kcross.lab.profile_data import parse
from kcross.lab.profile_diff import diff
from kcross.lab.symbols import (
    Reference,
    SymbolTable,
    find_system_map,
    kernel_table,
    parse_reference,
    read_system_map,
)

K = 0xC000000000000000


def plugin_file(tmp_path: Path, body: str, *, end: bool = True, windows: int | None = None
                ) -> Path:
    """A plugin output file: ``body`` between the header and the end record (which counts
    the windows, or says ``windows``)."""
    path = tmp_path / "profile.out"
    n = body.count("W ") if windows is None else windows
    path.write_text("kcross-profile 1 ppc64 api=0-1\n" + body + (f"end {n}\n" if end else ""))
    return path


# One benchmark, 5 sample windows (one with a timer tick) and 5 empty ones, of 10 ops:
# user loop 0x1000 (1/op) + sc at 0x1004 (1/op); kernel 0xc...100 (3/op), 0xc...200 (1/op).
def windows(tick: bool = False) -> str:
    kern = 40 + (500 if tick else 0)
    lines = [f"W s 20 {kern}", "C 1000 10", "C 1004 10", f"C {K + 0x100:x} 30",
             f"C {K + 0x200:x} {10 + (500 if tick else 0)}"]
    return "\n".join(lines) + "\n"


EMPTY_WINDOW = "W e 10 0\nC 2000 10\n"
SAMPLES = windows() + windows() + windows(tick=True) + windows() + windows()
DISAS = ("I 1000 00000000 addi r9, r9, -1\nI 1004 02000044 sc\n"
         f"I {K + 0x100:x} 00000000 ori r30, r30, 0\nI {K + 0x200:x} 00000000 rfid\n"
         "I 2000 00000000 bdnz 0x2000\n")


def one_bench(tmp_path: Path) -> Path:
    return plugin_file(tmp_path, SAMPLES + EMPTY_WINDOW * 5 + DISAS + "D\n")


def test_the_plugin_output_is_read(tmp_path: Path) -> None:
    out = parse(one_bench(tmp_path))
    assert out.target == "ppc64"
    assert len(out.benches) == 1 and len(out.benches[0]) == 10
    first = out.benches[0][0]
    assert (first.kind, first.user, first.kernel, first.counts[0x1004]) == ("s", 20, 40, 10)
    assert out.disassembly[0x1004] == (bytes.fromhex("02000044"), "sc")


@pytest.mark.parametrize("body, end, message", [
    ("W s 1 0\nC 1000 1\nD\nend 1\nD\n", False,
     r"malformed at line 6 \(a record after the end\): 'D'"),
    ("W s 1 2\nC 1000\n", True, r"malformed at line 3 \(.*\): 'C 1000'"),
    ("W x 1 2\n", True, r"malformed at line 2 \(window kind 'x'\)"),
    ("C 1000 1\n", True, r"malformed at line 2 \(a count outside a window\)"),
    ("Q\n", True, r"malformed at line 2 \(unknown record\)"),
    ("W s 1 2\nC 1000 3\nD\n", False, r"ends before its end record"),
    ("W s 1 2\nC 1000 2\nD\n", True, r"inconsistent: a window's counts sum to 2, its totals to 3"),
    ("W s 1 0\nC 1000 1\nW s 1 0\nC 1000 1\nW s 1 0\nC 1000 1\nW s 1 0\nC 1000 1\n", True,
     r"4 windows after its last benchmark"),
])
def test_a_damaged_plugin_output_is_one_clear_error(tmp_path: Path, body: str, end: bool,
                                                    message: str) -> None:
    with pytest.raises(LabError, match=message):
        parse(plugin_file(tmp_path, body, end=end))


def test_windows_lost_on_the_way_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LabError, match="inconsistent: 1 windows, its end record says 4"):
        parse(plugin_file(tmp_path, "W s 1 0\nC 1000 1\nD\n", windows=4))


def test_a_file_without_the_header_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("garbage\n")
    with pytest.raises(LabError, match=r"malformed at line 1 \(no 'kcross-profile 1' header\)"):
        parse(tmp_path / "x")
    with pytest.raises(LabError, match="cannot read the profile"):
        parse(tmp_path / "missing")


# ---------------------------------------------------------------- symbols

MAP = """ffffffff81000000 T _text
ffffffff81000100 T entry_SYSCALL_64
ffffffff81000180 t syscall_helper
ffffffff81001000 D some_data
ffffffff81002000 T _etext
"""


def test_the_kaslr_slide_moves_system_map_to_the_running_kernel(tmp_path: Path) -> None:
    path = tmp_path / "System.map"
    path.write_text(MAP)
    slide = 0x1E400000
    table, found = kernel_table(read_system_map(path), Reference(0xFFFFFFFF81000000 + slide,
                                                                 0xFFFFFFFF81002000 + slide),
                                "System.map")
    assert found == slide
    assert str(table.lookup(0xFFFFFFFF81000104 + slide)) == "entry_SYSCALL_64+0x4"
    assert str(table.lookup(0xFFFFFFFF81000190 + slide)) == "syscall_helper+0x10"
    # Without the slide the same address names nothing near it.
    plain, none = kernel_table(read_system_map(path), Reference(None, None), "System.map")
    assert none == 0 and str(plain.lookup(0xFFFFFFFF81000104 + slide)) == "?"


def test_a_map_of_another_kernel_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "System.map"
    path.write_text(MAP)
    with pytest.raises(LabError, match=r"is not the booted kernel's System.map \(its text is "
                                       r"0x2000 bytes, the kernel's 0x3000\)"):
        kernel_table(read_system_map(path), Reference(0xFFFFFFFF91000000, 0xFFFFFFFF91003000),
                     "System.map")


def test_missing_symbols_are_a_question_mark() -> None:
    table = SymbolTable([(0x1000, "f")], ends=[(0x1000, 0x1010)])
    assert str(table.lookup(0x1008)) == "f+0x8"
    assert str(table.lookup(0x1010)) == "?"        # past its end
    assert str(table.lookup(0x0FFF)) == "?"        # below every symbol
    assert str(SymbolTable([]).lookup(0x1000)) == "?"


def test_debians_stub_system_map_is_no_map(tmp_path: Path) -> None:
    kernel = tmp_path / "vmlinuz-6.1.0-50-amd64"
    kernel.write_bytes(b"")
    stub = tmp_path / "System.map-6.1.0-50-amd64"
    stub.write_text("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg "
                    "package\n")
    assert find_system_map(kernel) is None
    stub.write_text(MAP)
    assert find_system_map(kernel) == stub


def test_a_malformed_system_map_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "System.map"
    path.write_text(MAP + "zzz T\n")
    with pytest.raises(LabError, match=r"System.map line 6 is not 'ADDRESS TYPE NAME': 'zzz T'"):
        read_system_map(path)


def test_the_kallsyms_reference_line() -> None:
    assert parse_reference("_text ffffffff9a000000 _etext ffffffff9b000000") == Reference(
        0xFFFFFFFF9A000000, 0xFFFFFFFF9B000000)
    # kptr_restrict: zeros; or not found: '-'
    assert parse_reference("_text 0000000000000000 _etext -") == Reference(None, None)


# ---------------------------------------------------------------- the costly table

@pytest.mark.parametrize("arch, text, function, expected", [
    ("ppc64le", "ori r30, r30, 0", "system_call_common", ("cache flush", "ori r30, r30, 0")),
    ("ppc64le", "ori r3, r3, 0", "f", None),
    ("ppc64le", "ld r11, 0(r10)", "rfi_flush_fallback", ("cache flush", "displacement-flush loop")),
    ("ppc64le", "hwsync", "f", ("barrier", "hwsync")),
    ("ppc64le", "lwsync", "f", ("barrier", "lwsync")),
    ("ppc64le", "rfid", "f", ("privilege switch", "rfid")),
    ("ppc64le", "mtspr 0x372, r0", "f", ("cache flush", "mtspr 0x372, r0")),
    ("ppc64le", "mtspr 0x1d0, r9", "f", ("special register", "mtspr")),
    ("ppc64le", "ori r31, r31, 0", "f", ("barrier", "ori r31, r31, 0")),
    ("ppc64le", "mtmsrd r10, 1", "f", ("special register", "mtmsrd")),
    ("ppc64le", "bctrl", "f", ("indirect branch", "bctrl")),
    ("ppc64le", "mflr r0", "f", None),
    ("x86_64", "verw 0x10(%rip)", "f", ("cache flush", "verw")),
    ("x86_64", "jmpq *%rax", "f", ("indirect branch", "jmpq")),
    ("x86_64", "jmp 0xffffffff81000000", "f", None),
    ("x86_64", "ret", "its_return_thunk", ("indirect branch", "thunk")),
    ("x86_64", "movq %rdi, %cr3", "f", ("special register", "movq %rdi, %cr3")),
    ("x86_64", "lfence", "f", ("barrier", "lfence")),
    ("x86_64", "sysretq", "f", ("privilege switch", "sysretq")),
    ("aarch64", "eret", "f", ("privilege switch", "eret")),
    ("aarch64", "dsb nsh", "f", ("barrier", "dsb")),
    ("aarch64", "msr tpidr_el1, x0", "f", ("special register", "msr")),
    ("aarch64", "blr x1", "f", ("indirect branch", "blr")),
])
def test_costly_instructions_by_arch(arch: str, text: str, function: str,
                                     expected: tuple[str, str] | None) -> None:
    got = costly.classify(arch, text, function)
    assert (None if got is None else (got.category, got.mnemonic)) == expected


def test_what_qemus_ppc_disassembler_lacks_is_decoded_from_the_bytes() -> None:
    """QEMU 7.2 prints scv and rfscv as bytes: decoded from the word (little-endian)."""
    assert costly.decoded("ppc64le", bytes.fromhex("01000044"), ".byte 0x01, 0x00, 0x00, 0x44") \
        == "scv 0"
    assert costly.decoded("ppc64le", bytes.fromhex("a400004c"), ".byte 0xa4, 0x00, 0x00, 0x4c") \
        == "rfscv"
    assert costly.decoded("ppc64le", bytes.fromhex("00000000"), ".long 0x0") == ".long 0x0"
    assert costly.decoded("ppc64le", bytes.fromhex("02000044"), "sc") == "sc"
    # x86's instructions are not 4-byte words: its bytes are left as QEMU printed them.
    assert costly.decoded("x86_64", bytes.fromhex("01000044"), ".byte 0x01, 0x00, 0x00, 0x44") \
        == ".byte 0x01, 0x00, 0x00, 0x44"


def test_the_trace_limit_is_passed_to_the_plugin_which_has_no_default_of_its_own() -> None:
    from kcross.lab.plugin import PLUGIN_SOURCE, TRACE_MAX, qemu_args

    _, traced = qemu_args(Path("/p.so"), Path("/o"), {"sample": 1}, 1 << 63, trace=True)
    assert f"trace=1,tracemax={TRACE_MAX}" in traced
    _, plain = qemu_args(Path("/p.so"), Path("/o"), {"sample": 1}, 1 << 63)
    assert "trace" not in plain
    text = (Path(__file__).parents[2] / PLUGIN_SOURCE).read_text()
    assert "static size_t trace_max;" in text and str(TRACE_MAX) not in text


def test_a_long_malformed_line_is_clipped_as_echoed_input(tmp_path: Path) -> None:
    path = tmp_path / "System.map"
    path.write_text(MAP + "zzz T" + " x" * 100 + "\n")
    with pytest.raises(LabError, match=r"'zzz T x x.*\.\.\. \(205 characters\)'$"):
        read_system_map(path)


# ---------------------------------------------------------------- the figures

class FakeCounted:
    def __init__(self, messages: list[str], results: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.stream = type("S", (), {"results": results})()

    def median(self, name: str) -> float:
        return 5.0


# The harness's own record of the benchmark: 6 instructions/op, the empty loop's 1 (the
# statistics rule subtracts it).
RECORD = {"schema": 2, "suite": "syscall", "name": "x", "status": "ok", "iters": 10,
          "samples": [6.0] * 5, "overhead": {"samples": [1.0] * 5}}


def profiled(tmp_path: Path, trace: str = "", record: dict[str, Any] = RECORD) -> Any:
    data = parse(plugin_file(tmp_path, SAMPLES + EMPTY_WINDOW * 5 + trace + DISAS + "D\n"))
    harness = SymbolTable([(0x1000, "bench_x"), (0x2000, "empty_loop")])
    kallsyms = [f"@@kcross-profile ksym {K + 0x100:x} system_call_common",
                f"@@kcross-profile ksym {K + 0x200:x} interrupt_return"]
    counted = FakeCounted(["@@kcross-profile kallsyms _text - _etext -", *kallsyms],
                          [record])
    p = Prepared(Path("/p.so"), {}, harness, None)
    return build(counted, data, p, None, "ppc64le", trace=bool(trace))  # type: ignore[arg-type]


def test_user_and_kernel_add_up_to_the_statistics_rules_figure(tmp_path: Path) -> None:
    """Median of the sample windows (the tick's window left out) minus the empty loop's:
    (60 - 10) / 10 = 5 per op: 1 user (the loop's 2 minus the empty loop's 1) + 4 kernel."""
    run = profiled(tmp_path)
    p = run["x"]
    assert (p.figure, p.user, p.kernel, p.subtracted) == (5.0, 1.0, 4.0, True)
    assert p.user + p.kernel == p.figure
    by = {(f.space, f.function): f.per_op for f in p.functions}
    assert by == {(KERNEL, "system_call_common"): 3.0, (KERNEL, "interrupt_return"): 1.0,
                  (USER, "bench_x"): 2.0, (USER, EMPTY_LOOP): -1.0}
    assert sum(by.values()) == p.figure
    flags = {(c.category, c.mnemonic, c.function): c.per_op for c in p.costly}
    assert flags == {("cache flush", "ori r30, r30, 0", "system_call_common"): 3.0,
                     ("privilege switch", "rfid", "interrupt_return"): 1.0,
                     ("privilege switch", "sc", "bench_x"): 1.0}
    assert run.kernel_symbols == "the guest's /proc/kallsyms"


def test_the_empty_loop_is_subtracted_as_the_harness_record_decided(tmp_path: Path) -> None:
    """The windows alone would subtract (1 of 6 per op); the record's empty loop is 4 of 6,
    half the median or more: not subtracted, in the profile either."""
    from kcross.stats import summarize_record

    record = {**RECORD, "overhead": {"samples": [4.0] * 5}}
    assert not summarize_record(record).overhead.subtracted
    p = profiled(tmp_path, record=record)["x"]
    assert (p.figure, p.user, p.kernel, p.subtracted) == (6.0, 2.0, 4.0, False)
    assert (USER, EMPTY_LOOP) not in {(f.space, f.function) for f in p.functions}
    with pytest.raises(LabError, match="the harness's record of syscall/x has no overhead "
                                       "decision: no empty-loop samples"):
        profiled(tmp_path, record={**RECORD, "overhead": None})


def test_two_profiles_differ_by_the_judges_exact_comparison(tmp_path: Path) -> None:
    a = profiled(tmp_path)["x"]
    b = profiled(tmp_path)["x"]
    same = diff(a, b)
    assert not same.changed and not same.functions and not same.costly
    assert [c.judgement.category.name for c in same.totals] == ["IDENTICAL"] * 3
    b.costly = [c for c in b.costly if c.mnemonic != "ori r30, r30, 0"]
    changed = diff(a, b, ("on", "off"))
    assert [c.what for c in changed.costly] == [
        "cache flush: ori r30, r30, 0 (kernel system_call_common)"]
    assert changed.costly[0].judgement.category.name == "LOWER"
    assert not changed.changed       # the count itself is the same: only the trigger went


def test_a_function_that_moved_by_the_timers_share_is_no_change(tmp_path: Path) -> None:
    """The rule of a change (kcross.judge.verdict.path_changed): a function's count that
    moved by less than one instruction per op is not listed as changed; by 2, it is."""
    from dataclasses import replace

    a = profiled(tmp_path)["x"]
    b = profiled(tmp_path)["x"]
    moved = {"system_call_common": 0.3, "interrupt_return": 2.0}
    b.functions = [replace(f, per_op=f.per_op + moved.get(f.function, 0.0))
                   for f in b.functions]
    assert [c.what for c in diff(a, b).functions] == ["kernel interrupt_return"]


def test_the_trace_is_one_operation(tmp_path: Path) -> None:
    op = ["1000", "1004", f"{K + 0x100:x}", f"{K + 0x100:x}", f"{K + 0x100:x}", f"{K + 0x200:x}"]
    trace = "".join(f"T {a}\n" for a in op * 4)
    p = profiled(tmp_path, trace)["x"]
    assert p.trace is not None
    assert [(t.space, t.place, t.disassembly) for t in p.trace] == [
        (USER, "bench_x+0x0", "addi r9, r9, -1"), (USER, "bench_x+0x4", "sc"),
        (KERNEL, "system_call_common+0x0", "ori r30, r30, 0"),
        (KERNEL, "system_call_common+0x0", "ori r30, r30, 0"),
        (KERNEL, "system_call_common+0x0", "ori r30, r30, 0"),
        (KERNEL, "interrupt_return+0x0", "rfid")]


def test_benchmarks_and_windows_must_pair(tmp_path: Path) -> None:
    data = parse(plugin_file(tmp_path, windows() + EMPTY_WINDOW + DISAS + "D\n"))
    counted = FakeCounted([], [])
    with pytest.raises(LabError, match="reported 0 benchmarks, the profile plugin saw 1"):
        build(counted, data, Prepared(Path("/p"), {}, SymbolTable([]), None), None,  # type: ignore[arg-type]
              "ppc64le")


# ---------------------------------------------------------------- bad input and the plugin

@pytest.mark.parametrize("args, message", [
    (["ppc64le", "--trace", "nosuch"], "--trace nosuch: no such benchmark"),
    (["ppc64le", "--trace", "getppid-*"], "--trace getppid-*: names 6 benchmarks"),
    # rows of another arch's harness, and a macro row this arch does not make
    (["ppc64le", "--trace", "rdtscp"], "--trace rdtscp: no such benchmark on ppc64le"),
    (["aarch64", "--trace", "getppid-inline-alt"],
     "--trace getppid-inline-alt: no such benchmark on aarch64"),
    (["ppc64le", "--trace", "spin/hint-nosuch"], "--trace spin/hint-nosuch: no such benchmark"),
    (["x86_64", "--trace", "hint-or27"], "--trace hint-or27: no such benchmark on x86_64"),
    (["ppc64le", "--profile", "--bench", "nosuch"], "--bench nosuch: no such benchmark in"),
    (["ppc64le", "--profile", "--suite", "cpuid", "--bench", "getppid-inline"],
     "--bench getppid-inline: no such benchmark in ppc64le's suites cpuid"),
    (["ppc64le", "--profile", "--mitigations", "--bench", "cpuid/*"],
     "--bench cpuid/*: no such benchmark in the syscall suite --profile --mitigations"),
    (["ppc64le", "--trace", "getppid-inline", "--bench", "x"], "--trace names its benchmark"),
    (["ppc64le", "--trace", "getppid-inline", "--compare", "sc", "scv"],
     "--trace shows one boot's operation"),
    (["ppc64le", "--profile", "--mode", "correctness"], "--profile profiles counting runs"),
    (["ppc64le", "--profile", "--peers"], "--profile and --peers are separate boots"),
])
def test_bad_profile_input_is_refused_before_any_build(kcross, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                       args: list[str], message: str) -> None:
    assert_one_line_error(kcross("lab", *args, extra_env={"PATH": str(tmp_path)}), 2, message)
    assert not (tmp_path / "home" / ".cache").exists()


@pytest.mark.parametrize("args, message", [
    (["ppc64le", "--trace", "rdtscp"], "--trace rdtscp: no such benchmark on ppc64le"),
    (["ppc64le", "--profile", "--bench", "nosuch"], "--bench nosuch: no such benchmark"),
])
def test_a_name_the_guest_would_refuse_is_refused_before_any_fetch_build_or_boot(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str], message: str) -> None:
    from kcross.cli import main
    from kcross.lab import jobs, plugin, profile, profile_jobs

    def never(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("fetched, built or booted before the name was checked")

    for module, name in ((jobs, "resolve_kernel"), (jobs, "build"), (plugin, "build_plugin"),
                         (profile, "prepare"), (profile, "profile_counted"),
                         (profile_jobs, "profiling")):
        monkeypatch.setattr(module, name, never)
    with pytest.raises(SystemExit) as exit_:
        main(["lab", *args])
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    # the real benchmarks are taken: the refusal is about the name, not any --profile
    from kcross.lab.payload import harness_benchmarks
    assert "cpuid/rdtscp" in (harness_benchmarks("x86_64", Path(__file__).resolve().parents[2]) or ())


def test_a_qemu_whose_plugin_api_does_not_fit_is_refused(tmp_path: Path) -> None:
    """A plugin built for API version 2 (QEMU 7.2 offers 0 to 1): one line, before any boot."""
    from kcross.lab.plugin import build_plugin, check_plugin

    src = Path(__file__).resolve().parents[2]
    qemu = "qemu-system-ppc64"
    if not shutil.which("gcc") or not shutil.which(qemu):
        pytest.skip(f"needs gcc and {qemu}")
    good = build_plugin(src, cache_dir=tmp_path)
    check_plugin(qemu, good, tmp_path)
    bad = build_plugin(src, cache_dir=tmp_path, defines={"KP_API_VERSION": "2"})
    with pytest.raises(LabError) as e:
        check_plugin(qemu, bad, tmp_path)
    assert "\n" not in str(e.value)
    assert "cannot run the profile plugin" in str(e.value) and "version 2" in str(e.value)


# ---------------------------------------------------------------- the harness's windows

def test_the_harness_opens_profile_windows_only_when_asked() -> None:
    """KCROSS_PROFILE=1: the kallsyms reference on stderr, the setting in the fingerprint,
    the figures unchanged in kind; unset, nothing of it; an invalid value: one line, exit 2."""
    import json
    import os
    import subprocess

    import harnesses

    found, why = harnesses.native()
    if found is None:
        pytest.skip(why)
    argv = [*found, "run", "--bench", "getppid-inline", "--quick", "--json"]
    env = {k: v for k, v in os.environ.items() if k != "KCROSS_PROFILE"}
    plain = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=HANG)
    on = subprocess.run(argv, env={**env, "KCROSS_PROFILE": "1"}, capture_output=True,
                        text=True, timeout=HANG)
    assert plain.returncode == on.returncode == 0
    assert "@@kcross-profile" not in plain.stderr
    assert "KCROSS_PROFILE" not in json.loads(plain.stdout.splitlines()[0])["forced"]
    assert any(line.startswith("@@kcross-profile kallsyms _text ")
               for line in on.stderr.splitlines())
    assert json.loads(on.stdout.splitlines()[0])["forced"]["KCROSS_PROFILE"] == "1"
    bad = subprocess.run(argv, env={**env, "KCROSS_PROFILE": "yes"}, capture_output=True,
                         text=True, timeout=HANG)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == "kcross-harness: KCROSS_PROFILE=yes: not one of 1, kallsyms\n"


def test_a_host_without_gcc_is_told_with_what_else_it_lacks(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--profile's plugin needs the host's gcc: named in the one line of what is missing."""
    assert_one_line_error(kcross("lab", "ppc64le", "--profile", "--no-store",
                                 extra_env={"PATH": str(tmp_path)}),
                          2, "kcross lab ppc64le needs qemu-system-ppc64, ")
    proc = kcross("lab", "ppc64le", "--profile", "--no-store", extra_env={"PATH": str(tmp_path)})
    what, _, packages = proc.stderr.partition("(apt-get install ")
    assert "gcc" in what.strip().split(", ") and "gcc" in packages.rstrip(")\n").split()
    plain = kcross("lab", "ppc64le", "--no-store", extra_env={"PATH": str(tmp_path)})
    assert "gcc" not in plain.stderr.partition("(apt-get install ")[0].strip().split(", ")
    assert not (tmp_path / "home" / ".cache").exists()


def test_a_profile_uses_no_database(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A profiled boot is not stored: an unusable --db is not its concern (the next thing
    refused is what the host lacks)."""
    proc = kcross("lab", "ppc64le", "--profile", "--db", str(tmp_path),
                  extra_env={"PATH": str(tmp_path / "empty")})
    assert_one_line_error(proc, 2, "kcross lab ppc64le needs qemu-system-ppc64, ")


def test_a_system_map_beside_the_kernel_is_moved_by_the_boots_slide(tmp_path: Path) -> None:
    """A user's --kernel with its System.map: the slide from the guest's _text; without a
    _text from the guest the map is used unmoved, and the profile says so."""
    from kcross.lab.profile import kernel_symbols

    path = tmp_path / "System.map"
    path.write_text(MAP)
    p = Prepared(Path("/p.so"), {}, SymbolTable([]), path)
    slide = 0x2A00000
    table, where, found = kernel_symbols(p, [
        f"@@kcross-profile kallsyms _text {0xFFFFFFFF81000000 + slide:x} _etext "
        f"{0xFFFFFFFF81002000 + slide:x}"])
    assert found == slide and where == "System.map (KASLR slide 0x2a00000)"
    assert str(table.lookup(0xFFFFFFFF81000100 + slide)) == "entry_SYSCALL_64+0x0"
    _t, where, found = kernel_symbols(p, ["@@kcross-profile kallsyms _text - _etext -"])
    assert found == 0 and "unmoved" in where


# ---------------------------------------------------------------- the jobs' outcomes

class FakeRun:
    """A profiled boot: the profiles it has and its harness records."""

    def __init__(self, benches: dict[str, Any], results: list[dict[str, Any]]) -> None:
        self.benches = benches
        self.counted = FakeCounted([], results)


def _mitigations_status(monkeypatch: pytest.MonkeyPatch, boot: Any) -> tuple[int, str]:
    import io

    from kcross.lab import profile_jobs
    from kcross.lab.request import LabRequest
    from rich.console import Console

    monkeypatch.setattr("kcross.views.profile.diff_view", lambda d, labels: "a diff")
    monkeypatch.setattr("kcross.lab.profile_diff.diff", lambda a, b, labels: None)
    out = Console(file=io.StringIO(), width=200)
    request = LabRequest(arch="ppc64le", mode="counting", timeout=600.0, mitigations=True,
                         profile=True)
    kernel = type("K", (), {"path": Path("/vmlinux")})()
    status = profile_jobs._mitigations(request, kernel, boot, out, out)  # type: ignore[arg-type]
    return status, out.file.getvalue()  # type: ignore[attr-defined]


OK = [{"suite": "syscall", "name": "getppid-inline", "status": "ok"}]


def test_a_failed_variant_or_benchmark_fails_profile_mitigations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kcross.errors import EXIT_BROKEN, EXIT_CHECK_FAILED, EXIT_OK

    def fine(guest: Any, kernel: Any, label: str, **_: Any) -> FakeRun:
        return FakeRun({"syscall/getppid-inline": object()}, OK)

    status, text = _mitigations_status(monkeypatch, fine)
    assert status == EXIT_OK and "a diff" in text

    def variant_fails(guest: Any, kernel: Any, label: str, **kw: Any) -> FakeRun:
        if " + " in label:
            raise LabError("the guest did not boot")
        return fine(guest, kernel, label)

    status, text = _mitigations_status(monkeypatch, variant_fails)
    assert status == EXIT_BROKEN and "not a result: the guest did not boot" in text

    def bench_fails(guest: Any, kernel: Any, label: str, **kw: Any) -> FakeRun:
        return FakeRun({}, [{**OK[0], "status": "failed", "reason": "wrong pid"}])

    status, text = _mitigations_status(monkeypatch, bench_fails)
    assert status == EXIT_CHECK_FAILED


def test_a_benchmark_one_side_lacks_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from kcross.lab.profile_jobs import _show_pairs
    from rich.console import Console

    a = FakeRun({"s/x": 1, "s/y": 2}, [])
    b = FakeRun({"s/x": 1}, [{"suite": "s", "name": "y", "status": "skipped",
                              "reason": "no rseq"}])
    out = Console(file=io.StringIO(), width=200)
    _show_pairs(a, b, ("A", "B"), out, lambda pa, pb, labels: f"both {pa}")
    assert out.file.getvalue().splitlines() == [  # type: ignore[attr-defined]
        "both 1", "s/y: not in B: skipped (no rseq)"]
    out = Console(file=io.StringIO(), width=200)
    _show_pairs(b, a, ("A", "B"), out, lambda pa, pb, labels: f"both {pa}")
    assert out.file.getvalue().splitlines()[1] == "s/y: not in A: skipped (no rseq)"  # type: ignore[attr-defined]


def _profile(user: float, empty: float) -> Any:
    from kcross.lab.profile import BenchProfile, FunctionCost

    return BenchProfile(name="syscall/x", iters=10, windows=5, figure=user + 4.0, user=user,
                        kernel=4.0, subtracted=True, counting=None,
                        functions=[FunctionCost(USER, "bench_x", user - empty),
                                   FunctionCost(USER, EMPTY_LOOP, empty),
                                   FunctionCost(KERNEL, "system_call_common", 4.0)])


def test_the_empty_loops_line_is_judged_by_its_size_and_unjudged_says_why() -> None:
    import io

    from kcross.views.profile import diff_view
    from rich.console import Console

    d = diff(_profile(1.0, -1.0), _profile(1.0, -2.0), ("A", "B"))
    (loop,) = [c for c in d.functions if c.what == f"{USER} {EMPTY_LOOP}"]
    assert loop.judgement.category.name == "HIGHER" and (loop.a, loop.b) == (-1.0, -2.0)
    # A negative per-op figure is not judged: the judge's own words are shown, never
    # "identical".
    d = diff(_profile(-0.5, -1.0), _profile(-0.5, -1.0), ("A", "B"))
    user = next(c for c in d.totals if c.what == "user")
    assert user.judgement.category.name == "UNJUDGED"
    out = Console(file=io.StringIO(), width=300)
    out.print(diff_view(d, ("A", "B")))
    (line,) = [t for t in out.file.getvalue().splitlines()  # type: ignore[attr-defined]
               if t.lstrip().startswith("user")]
    assert "is negative (-0.5)" in line and "identical" not in line


def test_a_narrow_terminal_folds_the_names_never_the_figures() -> None:
    import io

    from kcross.views.profile import diff_view
    from rich.console import Console

    d = diff(_profile(401.25, 1.0), _profile(349.5, 1.0), ("sc", "scv"))   # one decimal shown
    out = Console(file=io.StringIO(), width=60)
    out.print(diff_view(d, ("sc", "scv")))
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert "401.2" in text and "349.5" in text and "…" not in text
