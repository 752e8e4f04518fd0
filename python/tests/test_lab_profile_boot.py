"""Profiles in real guests (issue 16; the lab tier): the profile plugin in counting boots
of Debian's kernels.

The boots are made once, two at a time, when the module starts: one profiled boot of the
default suites per arch (every test of its figures reuses it), and on ppc64le three boots
of getppid-inline alone: with ``no_rfi_flush``, with ``cap-cfpc=broken``, and traced.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from kcross.lab import machines
from kcross.lab.kernel import Kernel
from kcross.lab.machines import DEFAULT_SUITES, Guest
from kcross.lab.profile import KERNEL, USER, Profiled, profile_counted
from kcross.lab.profile_diff import diff
from labs import lab_prerequisites

ARCHES = ("ppc64le", "aarch64", "x86_64")
SOURCE = Path(__file__).resolve().parents[2]
PPC_EXTRA = {"no_rfi_flush": {"append": "no_rfi_flush"},
             "cap-cfpc=broken": {"machine_opts": ("cap-cfpc=broken",)},
             "trace": {}}


def _boot(arch: str, variant: str | None) -> Profiled:
    from kcross.lab.payload import build_payload

    kernel_file, _ = lab_prerequisites(arch)
    kernel = Kernel.from_file(kernel_file, arch)
    payload = build_payload(arch, source=SOURCE)
    settings: dict[str, Any] = PPC_EXTRA.get(variant or "", {})
    guest = Guest(machines.arch(arch), kernel.path, mode="counting", **settings)
    if variant is None:
        return profile_counted(guest, kernel, payload, source=SOURCE, suites=DEFAULT_SUITES)
    return profile_counted(guest, kernel, payload, source=SOURCE, suites=("syscall",),
                           bench="getppid-inline", trace=variant == "trace")


@pytest.fixture(scope="module")
def boots() -> Iterator[dict[tuple[str, str | None], Future[Profiled]]]:
    pool = ThreadPoolExecutor(max_workers=2)
    jobs: list[tuple[str, str | None]] = [(a, None) for a in ARCHES]
    jobs += [("ppc64le", v) for v in PPC_EXTRA]
    futures = {job: pool.submit(_boot, *job) for job in jobs}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def profile(boots: dict[tuple[str, str | None], Future[Profiled]], arch: str,
            variant: str | None = None) -> Profiled:
    """The boot's profile (a skip raised in the boot, e.g. no kernel, skips the test)."""
    return boots[(arch, variant)].result()


@pytest.mark.parametrize("arch", ARCHES)
def test_profiles_sum_to_the_counting_figures(boots, arch: str) -> None:  # type: ignore[no-untyped-def]
    """Every default-suite row: user + kernel (the plugin's exact counts, by the counting
    mode's statistics rule) equals the harness's own icount figure of the same boot within
    0.5 instruction per op, and the functions add up to it."""
    run = profile(boots, arch)
    ok = [f"{r['suite']}/{r['name']}" for r in run.counted.stream.results if r["status"] == "ok"]
    assert len(ok) >= 25 and set(ok) == set(run.benches)
    for name, p in run.benches.items():
        assert p.counting is not None, name
        assert abs(p.figure - p.counting) <= 0.5, (name, p.figure, p.counting)
        assert abs(p.user + p.kernel - p.figure) < 1e-9, name
        assert abs(sum(f.per_op for f in p.functions) - p.figure) < 1e-6, name
    # The null syscall enters the kernel, and the kernel's functions are named.
    null = run["syscall/getppid-inline"]
    assert null.kernel > 100 and null.user < 20
    named = sum(f.per_op for f in null.functions if f.space == KERNEL and f.function != "?")
    assert named == pytest.approx(null.kernel), [f for f in null.functions if f.function == "?"]
    assert run["percpu/inc-plain"].kernel == 0


def _functions(p: Any, space: str = KERNEL) -> dict[str, float]:
    return {f.function: f.per_op for f in p.functions if f.space == space}


def _costly(p: Any) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for c in p.costly:
        out[(c.mnemonic, c.function)] = out.get((c.mnemonic, c.function), 0.0) + c.per_op
    return out


def test_sc_and_scv_run_through_different_entry_and_exit_code(boots) -> None:  # type: ignore[no-untyped-def]
    """getppid by `sc` and by `scv 0` in one POWER9 boot: the profile names the entry
    functions that differ and the instructions that switch privilege."""
    run = profile(boots, "ppc64le")
    sc, scv = run["getppid-inline"], run["getppid-inline-alt"]
    d = diff(sc, scv, ("sc", "scv"))
    changed = {c.what for c in d.functions}
    assert "kernel system_call_common" in changed            # sc's entry and exit
    assert "kernel system_call_vectored_common" in changed   # scv's
    assert _functions(sc).get("system_call_vectored_common", 0) == 0
    assert _functions(scv).get("system_call_common", 0) == 0
    assert _costly(sc)[("sc", "bench_getppid_inline")] == 1
    assert _costly(scv)[("scv", "bench_getppid_inline_alt")] == 1
    assert _costly(sc)[("rfid", "system_call_common")] == 1
    assert _costly(scv)[("rfscv", "system_call_vectored_common")] == 1
    assert scv.kernel < sc.kernel


TRIGGER = "ori r30, r30, 0"
MTTRIG = "mtspr 0x372, r0"


def test_no_rfi_flush_removes_the_exit_flush_trigger(boots) -> None:  # type: ignore[no-untyped-def]
    """The exit flush is a same-length slot: the count is the same, its triggers are gone
    (QEMU's pseries reports both flush instructions, so feature-fixups.c patches the slot
    with `ori 31,31,0` (a speculation barrier), `ori 30,30,0` and `mtspr TRIG2`; nops when
    off), the entry flush's stay."""
    base = profile(boots, "ppc64le")["getppid-inline"]
    off = profile(boots, "ppc64le", "no_rfi_flush")["getppid-inline"]
    assert off.figure == base.figure
    assert _costly(base)[(TRIGGER, "system_call_common")] == 1
    assert (TRIGGER, "system_call_common") not in _costly(off)
    assert _costly(off)[(TRIGGER, "exc_virt_0x4c00_system_call")] == 1
    d = diff(base, off, ("power9", "no_rfi_flush"))
    assert not d.changed
    assert [c.what for c in d.costly] == [
        "barrier: ori r31, r31, 0 (kernel system_call_common)",
        f"cache flush: {MTTRIG} (kernel system_call_common)",
        f"cache flush: {TRIGGER} (kernel system_call_common)"]
    assert all(c.b == 0 for c in d.costly)


def test_cap_cfpc_broken_shows_the_displacement_flush_loop(boots) -> None:  # type: ignore[no-untyped-def]
    """No flush instruction reported: the kernel flushes L1D by a loop of loads, on exit and
    on entry, hundreds of instructions each, and the triggers are gone."""
    base = profile(boots, "ppc64le")["getppid-inline"]
    broken = profile(boots, "ppc64le", "cap-cfpc=broken")["getppid-inline"]
    loops = {fn: n for (m, fn), n in _costly(broken).items() if m == "displacement-flush loop"}
    assert set(loops) == {"rfi_flush_fallback", "entry_flush_fallback"}
    assert all(n > 100 for n in loops.values())
    assert not any(m in (TRIGGER, MTTRIG) for m, _ in _costly(broken))
    assert broken.kernel - base.kernel == pytest.approx(sum(loops.values()) - 2, abs=10)


def test_the_trace_is_one_getppid(boots) -> None:  # type: ignore[no-untyped-def]
    """One operation in order: the user part (the loop and `sc`), then exactly the kernel
    instructions the profile counts per op, from the interrupt vector to `rfid`."""
    p = profile(boots, "ppc64le", "trace")["getppid-inline"]
    assert p.trace is not None
    kernel = [t for t in p.trace if t.space == KERNEL]
    user = [t for t in p.trace if t.space == USER]
    assert len(kernel) == p.kernel
    assert len(p.trace) == round(p.user) + p.kernel + 1   # + the loop's counter and branch
    assert [t.disassembly for t in user if t.disassembly.startswith("sc")] == ["sc"]
    assert kernel[-1].disassembly == "rfid" and kernel[-1].place.startswith("system_call_common")
    assert kernel[0].place.startswith("exc_virt_0x4c00_system_call")
