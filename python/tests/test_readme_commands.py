"""The README's "Two commands" section as scripts/fresh-debian-ci checks it before it
builds anything (``--only check``: seconds, no root): .ci/run runs the README's test
command verbatim, and the README says ``apt-get update`` before its ``apt-get install``
(a fresh Debian image has empty package lists).  It reads the committed README (HEAD)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import HANG

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fresh-debian-ci"


def test_fresh_debian_ci_checks_pass() -> None:
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: fresh-debian-ci reads the README from a revision")
    proc = subprocess.run(["bash", str(SCRIPT), "--only", "check"], capture_output=True,
                          text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "README packages: " in proc.stdout
    packages = proc.stdout.split("README packages: ")[1].split("\n")[0].split()
    assert "git" in packages  # the section's way to the source is git clone
