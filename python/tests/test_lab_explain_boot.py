"""The explanation of a changed step on a real kernel (issue 23; ./check's lab tier): a change
planted in a copy of the source tree, ``kcross lab x86_64 --against-source COPY``, and the
explanation names the function the change added, which really differs between the two
builds of the guest programs; every line of standard output is a JSON record.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from kcross.lab.payload import GUEST_SOURCES, build_dir_for
from labs import lab_prerequisites

TREE = Path(__file__).resolve().parents[2]
REAL_CACHE = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
HOOK = "kc__planted_hook"


def planted_copy(tmp_path: Path) -> Path:
    """A copy of the tree's guest sources in which kc_sys0 (getppid-dispatch's path) calls
    an out-of-line function first."""
    copy = tmp_path / "planted"
    copy.mkdir()
    for top in GUEST_SOURCES:
        (shutil.copytree if (TREE / top).is_dir() else shutil.copy2)(TREE / top, copy / top)
    header = copy / "include" / "kcross" / "syscall.h"
    text = header.read_text()
    old = "static inline long kc_sys0(long n)\n{ KC__SYS_BODY("
    assert old in text
    header.write_text(text.replace(old, f"void {HOOK}(void);\n"
                                        "static inline long kc_sys0(long n)\n"
                                        f"{{ {HOOK}(); KC__SYS_BODY("))
    with open(copy / "src" / "syscall.c", "a") as f:
        f.write(f"\n__attribute__((noinline)) void {HOOK}(void)\n"
                "{\n\t__asm__ volatile(\"\" ::: \"memory\");\n}\n")
    return copy


def test_against_source_explains_a_planted_change(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    kernel, _ = lab_prerequisites("x86_64")
    copy = planted_copy(tmp_path)
    try:
        proc = kcross("lab", "x86_64", "--kernel", str(kernel), "--against-source", str(copy),
                      "--source", str(TREE), "--suite", "syscall", "--bench", "getppid-*",
                      "--no-store", "--json",
                      extra_env={"XDG_CACHE_HOME": REAL_CACHE})
    finally:   # the copy's build dir, made for this test's tmp path, is not kept
        shutil.rmtree(build_dir_for("x86_64", copy), ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]   # JSON alone
    (comparison,) = [r for r in records if r["type"] == "comparison"]
    moved = {r["name"]: r["verdict"]["median_b"] - r["verdict"]["median_a"]
             for r in comparison["rows"]}
    # the call and its function on getppid-dispatch's path, nowhere else
    assert moved["syscall/getppid-dispatch"] >= 1.0
    assert all(abs(d) < 1.0 for n, d in moved.items() if n != "syscall/getppid-dispatch")
    (e,) = [r for r in records if r["type"] == "lab-explanation"]
    assert e["row"] == "syscall/getppid-dispatch" and e["profile_missing"] is None
    assert e["config"]["missing"] == "one kernel on both sides: no configuration differs"
    totals = {t["what"]: t for t in e["profile"]["totals"]}
    assert totals["user"]["delta"] >= 1.0 and totals["kernel"]["delta"] == 0.0
    functions = {f["what"]: f for f in e["profile"]["functions"]}
    assert functions[HOOK]["kind"] == "appeared" and functions[HOOK]["space"] == "user"
    assert all(f["space"] == "user" for f in functions.values())    # the kernel's path same
    assert "explained in" in proc.stderr
