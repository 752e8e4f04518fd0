"""Eight ``kcross run`` at once on one store, fresh or existing, SQLite and PostgreSQL: all succeed.

Each writer is a separate process (forked from the test, like the ``kcross``
fixture) and all start at the same moment, so their first transactions
(migration, machine row, run row) really collide.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

import pytest
from conftest import HANG, Kcross, fake_capture

WRITERS = 8
RUN = ("run", "--quick", "--suite", "syscall", "--bench", "getppid*")


def parallel_kcross(argvs: list[list[str]], environ: dict[str, str],
                    timeout: float = HANG) -> list[tuple[int, str]]:
    """Run ``kcross ARGV`` for every ARGV in forked processes released together.

    Returns (exit status, stderr) per process, in order.
    """
    from kcross import cli

    release_r, release_w = os.pipe()
    children = []
    for argv in argvs:
        err = tempfile.TemporaryFile()  # noqa: SIM115  (closed after the child is reaped)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(release_w)
                os.environ.clear()
                os.environ.update(environ)
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0)
                os.dup2(devnull, 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
                signal.signal(signal.SIGINT, signal.default_int_handler)
                os.read(release_r, 1)  # wait until every writer exists
                cli.main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # noqa: BLE001  (a child must never return into pytest)
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        children.append((pid, err))
    os.close(release_r)
    os.write(release_w, b"x" * len(argvs))
    os.close(release_w)
    outcome = []
    for pid, err in children:
        _, status = os.waitpid(pid, 0)
        err.seek(0)
        outcome.append((os.waitstatus_to_exitcode(status), err.read().decode()))
        err.close()
    return outcome


def stored_runs(url: str) -> dict[int, tuple[str, int, int]]:
    """run id -> (status, results stored, benchmarks planned), read through kcross's store."""
    from kcross.store import Store, resolve

    store = Store.open(resolve(url), write=False)
    assert store is not None
    try:
        found = {}
        for summary in store.list_runs():
            run = store.load_run(str(summary.id))
            found[summary.id] = (run.status, len(run.results),
                                 len(run.plan["benchmarks"]) if run.plan else -1)
        return found
    finally:
        store.close()


def _other_machine_capture(tmp_path: Path) -> Path:
    """A capture from another machine, so that the parallel runs must add a new machine row."""
    lines = [json.loads(line) for line in fake_capture("--quick", "--suite", "syscall",
                                                       "--bench", "getppid*").splitlines()]
    lines[0]["host"]["hostname"] = "some-other-host"
    lines[0]["kernel"]["release"] = "0.0.1-other"
    path = tmp_path / "other.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _eight_runs(kcross: Kcross, env: dict[str, str], url: str, *, fresh: bool,
                tmp_path: Path) -> None:
    if not fresh:
        imported = kcross("import", str(_other_machine_capture(tmp_path)), "--db", url)
        assert imported.returncode == 0, imported.stderr
    before = stored_runs(url) if not fresh else {}
    outcome = parallel_kcross([[*RUN, "--db", url] for _ in range(WRITERS)], env)
    failures = [err for code, err in outcome if code != 0]
    assert not failures, f"{len(failures)} of {WRITERS} failed: {failures[0]}"
    after = stored_runs(url)
    new = {k: v for k, v in after.items() if k not in before}
    assert len(new) == WRITERS
    for status, results, planned in new.values():
        assert status == "complete"
        assert results == planned and planned > 0


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "existing"])
def test_eight_writers_sqlite(kcross: Kcross, env: dict[str, str], tmp_path: Path,
                              fresh: bool) -> None:
    _eight_runs(kcross, env, str(tmp_path / "k.db"), fresh=fresh, tmp_path=tmp_path)


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "existing"])
def test_eight_writers_postgres(kcross: Kcross, env: dict[str, str], tmp_path: Path,
                                pg_schema: str, fresh: bool) -> None:
    _eight_runs(kcross, env, pg_schema, fresh=fresh, tmp_path=tmp_path)
