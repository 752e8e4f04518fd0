"""The same code against PostgreSQL, when a server is provided.

Set KCROSS_TEST_POSTGRES_URL (e.g. postgresql+psycopg://postgres@127.0.0.1:5432/kcross_test)
to run it; the database may already hold runs, the test only counts what it adds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Kcross

URL = os.environ.get("KCROSS_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not URL, reason="KCROSS_TEST_POSTGRES_URL not set")


def test_run_show_import_on_postgres(kcross: Kcross, tmp_path: Path) -> None:
    assert URL is not None
    db = ["--db", URL]
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--json", *db)
    assert proc.returncode == 0, proc.stderr
    shown = kcross("show", "--json", *db)
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [r["type"] for r in records] == ["fingerprint", "plan", "result", "result", "end"]
    assert records == [json.loads(line) for line in proc.stdout.splitlines()]
    capture = tmp_path / "c.jsonl"
    capture.write_text(shown.stdout)
    imported = kcross("import", str(capture), *db)
    assert imported.returncode == 0, imported.stderr
    runs = kcross("runs", *db).stdout
    assert "import" in runs and "complete" in runs
