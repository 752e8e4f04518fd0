"""``kcross reproduce``'s lab part on a real ppc64le kernel (lab tier): the POWER experiments'
three boots (POWER9, POWER9 with KCROSS_SYSCALL=sc, POWER8), booted once for the module,
a few seconds each (the syscall suite only), and the profiled boot of getppid-inline."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import HANG
from kcross.judge.categories import Category
from kcross.lab.kernel import Kernel
from kcross.reproduce import experiments as ex
from kcross.reproduce import measure
from kcross.reproduce.outcome import Place, outcomes
from labs import lab_prerequisites

SOURCE = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def power() -> dict[str, Place]:
    kernel_path, _ = lab_prerequisites("ppc64le")
    chosen = ex.chosen("power-entry") + ex.chosen("glibc-scv")
    plan = measure.plan(chosen, native=False, arches=("ppc64le",))
    lab = measure.lab_runs(plan, SOURCE, timeout=HANG, say=lambda _line: None,
                           keep=lambda b: measure.store_boot(b, None, ["reproduce"]),
                           kernels={"ppc64le": Kernel.from_file(kernel_path, "ppc64le")})
    assert lab.failed == {}
    found = lab.measured
    assert {(m.variant, m.fingerprint["syscall"]["mechanism"]) for m in found} == {
        ("default", "scv"), ("sc", "sc"), ("power8", "sc")}
    return {o.experiment.name: o.places[0] for o in outcomes(chosen, found)}


def test_the_plan_boots_the_syscall_suite_three_times() -> None:
    chosen = ex.chosen("power-entry") + ex.chosen("glibc-scv")
    plan = measure.plan(chosen, native=False, arches=("ppc64le",))
    assert sorted((b.variant, b.suites) for b in plan.boots) == [
        ("default", ("syscall",)), ("power8", ("syscall",)), ("sc", ("syscall",))]


def test_power_entry_counts_scv_below_sc_with_the_profiles_kernel_share(
        power: dict[str, Place]) -> None:
    rows = {r.figure.key: r for r in power["power-entry"].rows}
    assert rows["scv"].cell.value < rows["sc"].cell.value   # type: ignore[operator]
    # the profile's kernel instructions of one sc getppid: most of the op, never all of
    # it (the loop and the sc itself are the user's)
    kernel = rows["kernel"].cell.value
    assert kernel is not None, rows["kernel"].cell.reason
    assert 0.8 * rows["sc"].cell.value < kernel < rows["sc"].cell.value  # type: ignore[operator]
    (change,) = power["power-entry"].changes
    assert change.judgement is not None and change.judgement.category is Category.LOWER


def test_glibcs_own_calls_take_sc_on_power8_and_scv_on_power9(power: dict[str, Place]) -> None:
    place = power["glibc-scv"]
    rows = {r.figure.key: r for r in place.rows}
    for key in ("getpid", "syscall", "stat", "dispatch"):
        sc, scv = rows[f"{key}-sc"].cell, rows[f"{key}-scv"].cell
        assert sc.value is not None and scv.value is not None, key
    assert rows["getpid-sc"].cell.variant == "power8" and rows["stat-sc"].cell.variant == "sc"
    verdicts = {c.a: c.judgement for c in place.changes}
    for a, j in verdicts.items():
        assert j is not None and j.category is Category.LOWER, a   # scv: fewer instructions
