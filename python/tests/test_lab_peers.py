"""``kcross lab ppc64le --peers`` on Debian's kernel, one real boot (issue 16): the kernel's
own selftests, built from Debian's linux-source package, run after the harness in the same
counting guest, their figures beside kcross's rows with the agreement stated.

Needs $KCROSS_TEST_LAB_KERNEL_PPC64LE (./check's lab tier sets it), qemu-system-ppc64, the
ppc64le cross compiler, and the registry or a cached linux-source-6.1 (~139 MB, fetched
once into ~/.cache/kcross/lab/linux-source)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG
from labs import lab_prerequisites

REAL_CACHE = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
SOURCE = str(Path(__file__).resolve().parents[2])


@pytest.fixture(scope="module")
def peers_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One boot: `kcross lab ppc64le --peers --json`, its records by type."""
    import subprocess
    import sys

    from conftest import isolated_env

    kernel, _ = lab_prerequisites("ppc64le")
    root = tmp_path_factory.mktemp("peers")
    env = {**isolated_env(root), "XDG_CACHE_HOME": REAL_CACHE, "KCROSS_SOURCE": SOURCE,
           "PATH": os.environ["PATH"]}
    proc = subprocess.run([sys.executable, "-m", "kcross", "lab", "ppc64le", "--kernel",
                           str(kernel), "--peers", "--json", "--no-store"],
                          env=env, capture_output=True, text=True, timeout=HANG)
    if proc.returncode == 2 and "registry" in proc.stderr:
        pytest.skip(f"no linux-source package: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {"records": records, "stderr": proc.stderr,
            "peers": next(r for r in records if r.get("type") == "lab-crosscheck"),
            "results": {f"{r['suite']}/{r['name']}": r for r in records
                        if r.get("type") == "result"}}


def peer(found: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in found["peers"]["peers"] if p["peer"] == name)


def test_the_selftests_come_from_debians_linux_source(peers_json: dict[str, Any]) -> None:
    source = peers_json["peers"]["source"]
    assert source["package"] == "linux-source-6.1"
    assert source["kernel_release"].startswith("6.1.")
    assert len(source["deb_sha256"]) == 64


def test_null_syscall_sits_beside_kcross_and_agrees(peers_json: dict[str, Any]) -> None:
    null = peer(peers_json, "null_syscall")
    assert null["passed"] and null["per_op"] > 100
    assert null["kcross_rows"] == ["syscall/getppid-libc-syscall", "syscall/gettid-inline",
                                   "syscall/getppid-inline"]
    assert all(r in peers_json["results"] for r in null["kcross_rows"])
    # Exact counts: the peer's loop and kcross's rows differ by a tick share and a loop.
    assert null["agreement"] == "agree", null["statement"]
    assert null["statement"].startswith("agree: ") and "tolerance of 1%" in null["statement"]
    assert abs(null["per_op"] - null["kcross"]) <= 0.01 * null["kcross"]


def test_context_switches_sit_beside_kcross_per_switch(peers_json: dict[str, Any]) -> None:
    for name in ("context_switch yield", "context_switch yield fp+vector",
                 "context_switch pipe", "context_switch futex"):
        p = peer(peers_json, name)
        assert p["passed"], p["problem"]
        assert p["kcross"] is not None and p["per_op"] > 1000
        assert p["agreement"] in ("agree", "differ") and p["statement"]
    # Measured: FP+vector-touching yield agrees with yield-same-cpu-vec; the pipe and
    # futex ping-pongs with their rows.
    for name in ("context_switch yield fp+vector", "context_switch pipe", "context_switch futex"):
        assert peer(peers_json, name)["agreement"] == "agree", name
    plain = peer(peers_json, "context_switch yield")
    if plain["agreement"] == "differ":
        assert plain["differs_because"]


def test_rseq_tests_pass_beside_kcross_percpu_rows(peers_json: dict[str, Any]) -> None:
    for name in ("param_test spinlock", "param_test list", "param_test increment"):
        p = peer(peers_json, name)
        assert p["passed"] and p["ops"] == 6000 and p["threads"] == 6 and p["aborts"] >= 0
        assert p["agreement"] == "agree" and p["statement"].startswith("agree: both pass")
    assert [n["peer"] for n in peers_json["peers"]["not_run"]] == ["basic_percpu_ops_test"]
