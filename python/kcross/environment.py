"""What kcross adds to its own environment, and the environment of a program it measures
without it.

numpy's OpenBLAS starts a thread per CPU, with their buffers, when numpy is imported: half of
numpy's import, a twentieth of a second of every command that stores or shows a figure, and
kcross does no linear algebra.  So a start sets ``OPENBLAS_NUM_THREADS=1`` (unless the user
set it).  The harness, and perf beside it, must not see that setting: a program's
environment is part of what it measures (its size moves the stack, and with it the alignment
of what is on it), and a run must measure what the user's environment gives, as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# name -> the value kcross set (what a start added to the environment; nothing else)
ADDED: dict[str, str] = {}


def quiet_numpy() -> None:
    """One OpenBLAS thread for kcross's own numpy, unless the user chose a number."""
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = ADDED["OPENBLAS_NUM_THREADS"] = "1"


def measured(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (None: kcross's own environment) without what a start added to it: the
    environment of a program kcross measures."""
    base = os.environ if env is None else env
    return {k: v for k, v in base.items() if not (k in ADDED and ADDED[k] == v)}
