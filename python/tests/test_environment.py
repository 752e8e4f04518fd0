"""kcross's own addition to its environment (one OpenBLAS thread for its numpy) never
reaches the programs it measures: the harness sees the user's environment, as before."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FAKE_HARNESS
from kcross import environment


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "ADDED", {})


def test_a_start_sets_one_thread_and_measures_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    environment.quiet_numpy()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "OPENBLAS_NUM_THREADS" not in environment.measured()
    assert "OPENBLAS_NUM_THREADS" not in environment.measured({**os.environ, "X": "y"})


def test_the_users_setting_is_kept_and_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    environment.quiet_numpy()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    assert environment.measured()["OPENBLAS_NUM_THREADS"] == "4"


@pytest.mark.parametrize("user", [None, "3"])
def test_the_harness_sees_the_users_environment(env: dict[str, str], tmp_path: Path,
                                                user: str | None) -> None:
    """A harness that writes its environment down, under the kcross command (its entry
    point sets the thread count): kcross's setting is not in it, the user's is."""
    seen = tmp_path / "harness-env.txt"
    wrapper = tmp_path / "harness"
    wrapper.write_text(f"#!/bin/sh\nenv > {seen}\nexec {sys.executable} {FAKE_HARNESS} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    environ = {k: v for k, v in env.items() if k != "OPENBLAS_NUM_THREADS"}
    environ["KCROSS_HARNESS"] = str(wrapper)
    if user is not None:
        environ["OPENBLAS_NUM_THREADS"] = user
    proc = subprocess.run([sys.executable, "-m", "kcross", "run", "--quick", "--bench",
                           "getppid-inline", "--db", str(tmp_path / "k.db")], env=environ,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = seen.read_text().splitlines()
    assert [line for line in lines if line.startswith("OPENBLAS_NUM_THREADS=")] == \
        ([] if user is None else [f"OPENBLAS_NUM_THREADS={user}"])
