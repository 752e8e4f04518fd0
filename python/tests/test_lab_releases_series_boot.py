"""A release series on a real kernel of each arch (issue 23; ./check's lab tier): ``kcross lab
ARCH --releases bookworm,trixie`` twice: both kernels' counts identical from one command to
the other (two boots of each kernel), both runs stored as one lab machine with two kernels,
standard output JSON lines only; and the explanation of the changed step names functions
that really differ: each one's instructions per op on each kernel are what a profile of that
kernel alone (``kcross lab ARCH --release NAME --profile``, a boot of its own) finds.

Needs what the lab tier needs (labs.py) and the mirror for a release's kernel the first time
(a skip says so when it cannot be reached); the kernels are then cached.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import query
from kcross import fingerprint as fields
from kcross.errors import LabError
from kcross.lab import kernel as K
from labs import lab_prerequisites

REAL_CACHE = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
TREE = Path(__file__).resolve().parents[2]
RELEASES = ("bookworm", "trixie")       # both on every arch
ROW = "syscall/getppid-inline"
ARGS = ("--suite", "syscall", "--bench", "getppid-inline")
ENV = {"XDG_CACHE_HOME": REAL_CACHE, "KCROSS_SOURCE": str(TREE)}


def kernels_or_skip(arch: str) -> None:
    """Both releases' kernels cached (fetched when not), or a skip saying why."""
    for release in RELEASES:
        try:
            K.fetch(arch, release=release, cache_dir=Path(REAL_CACHE) / "kcross" / "lab")
        except LabError as e:
            if "cannot reach the package registry" in str(e):
                pytest.skip(f"{release}'s {arch} kernel is not cached and the mirror cannot be "
                            f"reached: {e}")
            raise


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]     # every line: one record


@pytest.mark.parametrize("arch", ["x86_64", "aarch64", "ppc64le"])
def test_a_release_series_is_exact_and_explained(kcross, tmp_path: Path, arch: str) -> None:  # type: ignore[no-untyped-def]
    lab_prerequisites(arch)
    kernels_or_skip(arch)
    db = str(tmp_path / "k.db")
    releases = ",".join(RELEASES)
    first = kcross("lab", arch, "--releases", releases, *ARGS, "--json", "--db", db,
                   extra_env=ENV, timeout=1800)
    assert first.returncode == 0, first.stderr
    again = kcross("lab", arch, "--releases", releases, *ARGS, "--json", "--no-explain",
                   "--no-store", extra_env=ENV, timeout=1800)
    assert again.returncode == 0, again.stderr
    found, repeated = records(first.stdout), records(again.stdout)

    def figures(rs: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
        return {(r["release"], r["row"]): r["figure"] for r in rs
                if r["type"] == "lab-release-row"}

    # two boots of each kernel: every row's count the same, to the last bit
    assert figures(found) == figures(repeated) and figures(found)
    assert {r["type"] for r in repeated} == {"lab-release-row"}
    # stored: one lab machine with two kernels, in release order
    prints = [json.loads(text) for (text,) in
              query(Path(db), "SELECT fingerprint FROM runs ORDER BY id")]
    assert [fields.LAB_KERNEL_RELEASE.of(fp) for fp in prints] == list(RELEASES)
    assert fields.identity(prints[0]) == fields.identity(prints[1])
    (row,) = [r for r in found if r["type"] == "lab-release-row" and r["row"] == ROW
              and r["release"] == RELEASES[1]]
    explained = [r for r in found if r["type"] == "lab-explanation"]
    if not row["step"]["path_changed"]:
        assert explained == [], "a step that did not change is not explained"
        pytest.skip(f"{ROW} did not change from {RELEASES[0]} to {RELEASES[1]} on {arch}: "
                    "nothing to explain")
    (e,) = explained
    assert (e["a"], e["b"], e["row"]) == (*RELEASES, ROW) and e["profile_missing"] is None
    assert e["config"]["missing"] is None and e["config"]["where"]   # two configurations
    moved = {f["what"]: f for f in e["profile"]["functions"] if f["space"] == "kernel"}
    assert moved, e["profile"]
    # each kernel profiled alone, in a boot of its own: the functions' figures are its
    per_op = {}
    for release in RELEASES:
        proc = kcross("lab", arch, "--release", release, *ARGS, "--profile", "--json",
                      "--no-store", extra_env=ENV, timeout=1800)
        assert proc.returncode == 0, proc.stderr
        (profile,) = [r for r in records(proc.stdout)
                      if r["type"] == "profile" and r["name"] == ROW]
        per_op[release] = {f["function"]: f["per_op"] for f in profile["functions"]
                           if f["space"] == "kernel"}
    for name, f in moved.items():
        a, b = (per_op[r].get(name, 0.0) for r in RELEASES)
        assert (a, b) == pytest.approx((f["a"], f["b"]), abs=1e-6), name
        assert abs(b - a) >= 1.0, name      # it really differs
        if f["kind"] == "appeared":
            assert a < 1.0 <= b, name
        if f["kind"] == "gone":
            assert b < 1.0 <= a, name
