"""The entry point's collector settings: a first generation of 10,000 allocations while the
command runs, and every object frozen at its exit, whatever the exit (kcross/__main__.py
says why: a start's imports and the interpreter's last pass, 0.05-0.1 s of each command)."""

from __future__ import annotations

import gc
import signal

import kcross.cli
import pytest
from kcross.__main__ import entry


@pytest.mark.parametrize("ending", [SystemExit(3), RuntimeError("a bug")])
def test_threshold_while_running_and_frozen_at_any_exit(monkeypatch: pytest.MonkeyPatch,
                                                         ending: BaseException) -> None:
    seen: list[tuple[int, ...]] = []

    def main() -> None:
        seen.append(gc.get_threshold())
        assert gc.get_freeze_count() == 0
        raise ending

    threshold = gc.get_threshold()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    monkeypatch.setattr(kcross.cli, "main", main)
    gc.unfreeze()
    try:
        with pytest.raises(type(ending)):
            entry()
        assert seen == [(10_000, 50, 50)]
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
