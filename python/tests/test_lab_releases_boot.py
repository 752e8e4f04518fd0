"""Two Debian releases' kernels booted on one arch (issue 23): `kcross lab x86_64` (bookworm's
kernel, the default) and `kcross lab x86_64 --release sid` (sid's, whose packages keep the
kernel under usr/lib/modules/): both runs stored, their fingerprints saying which kernel each
booted, and one lab machine with two kernels in the store.

Needs what the lab tier needs (labs.py) and the mirror for sid's kernel the first time (a
skip says so when it cannot be reached); both kernels are then cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from conftest import query
from kcross import fingerprint as fields
from kcross.errors import LabError
from kcross.lab import kernel as K
from labs import lab_prerequisites

REAL_CACHE = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
ARGS = ("--suite", "syscall", "--bench", "getppid-inline")


def test_two_releases_are_one_lab_machine_with_two_kernels(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                           tmp_path: Path) -> None:
    lab_prerequisites("x86_64")
    try:
        sid = K.fetch("x86_64", release="sid", cache_dir=Path(REAL_CACHE) / "kcross" / "lab")
    except LabError as e:
        if "cannot reach the package registry" in str(e):
            pytest.skip(f"sid's kernel is not cached and the mirror cannot be reached: {e}")
        raise
    db = str(tmp_path / "k.db")
    extra = {"XDG_CACHE_HOME": REAL_CACHE,
             "KCROSS_SOURCE": str(Path(__file__).resolve().parents[2])}
    for release in ((), ("--release", "sid")):
        proc = kcross("lab", "x86_64", *release, *ARGS, "--db", db, extra_env=extra)
        assert proc.returncode == 0, proc.stderr
    prints = [json.loads(text) for (text,) in
              query(Path(db), "SELECT fingerprint FROM runs ORDER BY id")]
    assert [fields.LAB_KERNEL_RELEASE.of(fp) for fp in prints] == ["bookworm", "sid"]
    assert fields.LAB_KERNEL_VERSION.of(prints[1]) == sid.version
    assert fields.LAB_KERNEL_PACKAGE.of(prints[1]) == sid.package
    assert fields.LAB_KERNEL_SHA256.of(prints[1]) == K.file_sha256(sid.path)
    assert sid.config is not None
    assert fields.LAB_KERNEL_CONFIG_SHA256.of(prints[1]) == \
        hashlib.sha256(sid.config.read_bytes()).hexdigest()
    for fp in prints:
        # the image's version string names the release the guest runs
        said = str(fields.LAB_KERNEL_VERSION_STRING.of(fp))
        assert said.split()[0] == fields.KERNEL_RELEASE.of(fp), said
        assert re.fullmatch(r"[0-9a-f]{64}", str(fields.LAB_KERNEL_CONFIG_SHA256.of(fp)))
    assert fields.KERNEL_RELEASE.of(prints[0]) != fields.KERNEL_RELEASE.of(prints[1])
    # one lab machine, two kernels
    assert fields.identity(prints[0]) == fields.identity(prints[1])
    assert query(Path(db), "SELECT count(*) FROM machines") == [(1,)]
    labels = [fields.kernel_label(fp) for fp in prints]
    assert labels == [f"bookworm {fields.LAB_KERNEL_VERSION.of(prints[0])}", f"sid {sid.version}"]
    compared = kcross("compare", "1", "2", "--db", db)
    assert compared.returncode == 0 and "fingerprints differ" not in compared.stderr
    assert f"run 2 ({labels[1]})" in compared.stdout
