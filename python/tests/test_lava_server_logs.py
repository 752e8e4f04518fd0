"""kcross and a real LAVA server (issue 25), without one: the logs, results and REST answers
a LAVA 2023.01 server gave in the LAVA server tier (test_lava_server.py), kept in
data/lava/ (data/README.md says how they were made): images fetched over http (LAVA logs an
``http-download``), a run's identity (a lava-run log and a server's of one job definition
are two runs; a job imported from its log and from its server is one), the device the server
says, ``kcross import --lava-server URL --lava-job N`` against a stand-in for the server's
REST API serving those answers, its refusals, and ``kcross lava job``'s target.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, assert_one_line_error, query

LAVA = DATA / "lava"
X86_FILE = "server-x86_64-file"        # server job 1, file:// images, device qemu-02
PPC_HTTP = "server-ppc64le-http"       # server job 4, http:// images
SAME_JOB_RUN = LAVA / "x86_64-old-lava.lava-run.log"     # lava-run --job-id 1 of a job ...
SAME_JOB_SERVER = LAVA / "x86_64-old-lava.server.log"    # ... and the server's job 1 of it


def job_json(name: str) -> dict:
    return dict(json.loads((LAVA / f"{name}.job.json").read_text()))


def lava_groups(db: Path) -> list[dict]:
    return [json.loads(f)["lava"] for f, in query(db, "SELECT fingerprint FROM runs ORDER BY id")]


# ---------------------------------------------------------------- logs of a real server

def test_images_fetched_over_http_are_checked_as_file_ones(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """LAVA logs an http:// image's download as http-download (the kernel's SHA-256 in it):
    such a job was refused ("the kernel LAVA downloaded ... is not the one")."""
    log = LAVA / f"{PPC_HTTP}.log"
    assert '"case": "http-download"' in log.read_text()
    assert '"case": "file-download"' not in log.read_text()
    proc = kcross("import", str(log), "--lava-results", str(LAVA / f"{PPC_HTTP}.results.yaml"))
    assert proc.returncode == 0, proc.stderr
    assert "device type qemu, counting (lab group)) as run 1: 6 of 6" in proc.stdout
    fp = json.loads(query(db_path, "SELECT fingerprint FROM runs")[0][0])
    assert fp["lab"]["kernel"]["path"].startswith("http://127.0.0.1:")
    assert fp["lab"]["network"]         # LAVA 2023.01's card: --old-lava


def test_the_kernel_of_an_http_download_is_still_checked(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    text = (LAVA / f"{PPC_HTTP}.log").read_text()
    kernel_sha = next(line for line in text.splitlines() if '"label": "kernel"' in line)
    start = kernel_sha.index('"sha256sum": "') + len('"sha256sum": "')
    forged = text.replace(kernel_sha, kernel_sha[:start] + "0" * 64 + kernel_sha[start + 64:])
    (tmp_path / "job.log").write_text(forged)
    assert_one_line_error(kcross("import", str(tmp_path / "job.log")), 2,
                          "the kernel LAVA downloaded (SHA-256 0000000000000000...) is not the "
                          "one the job was made with")
    assert not db_path.exists()


def test_a_lava_run_log_and_a_servers_of_one_job_are_two_runs(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """One job definition run by lava-run (--job-id 1) and by a server (its job 1): the
    records are the same (counting is exact) and so was the job's id; they were taken for
    one run.  Each log's second import is refused."""
    for log in (SAME_JOB_RUN, SAME_JOB_SERVER):
        proc = kcross("import", str(log))
        assert proc.returncode == 0, proc.stderr
    assert [(g["job_id"], g["log"]) for g in lava_groups(db_path)] == [("1", "lava-run"),
                                                                      ("1", "server")]
    figures = query(db_path, "SELECT run_id, suite, name, median_ns FROM results ORDER BY seq")
    assert {(s, n, m) for r, s, n, m in figures if r == 1} == \
        {(s, n, m) for r, s, n, m in figures if r == 2}
    for n, log in enumerate((SAME_JOB_RUN, SAME_JOB_SERVER), 1):
        assert_one_line_error(kcross("import", str(log)), 2, f"already stored: run {n}")


# ---------------------------------------------------------------- the server's REST API

class Answers(http.server.BaseHTTPRequestHandler):
    """A stand-in for a LAVA server's REST API: its answers for the jobs of data/lava/."""

    pages: dict[str, tuple[int, bytes]] = {}
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.asked.append(self.path)
        status, body = self.pages.get(self.path, (404, b'{"detail": "Not found."}'))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def serve(pages: dict[str, tuple[int, bytes]]) -> Iterator[str]:
    Answers.pages, Answers.asked = pages, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def job_pages(name: str, job_id: str, **changed: object) -> dict[str, tuple[int, bytes]]:
    job = {**job_json(name), **changed}
    base = f"/api/v0.2/jobs/{job_id}/"
    return {base: (200, json.dumps(job).encode()),
            base + "logs/": (200, (LAVA / f"{name}.log").read_bytes()),
            base + "yaml/": (200, (LAVA / f"{name}.results.yaml").read_bytes())}


@pytest.fixture
def server() -> Iterator[str]:
    yield from serve({**job_pages(X86_FILE, "1"), **job_pages(PPC_HTTP, "4"),
                      **job_pages(X86_FILE, "9", state="Running", health="Unknown")})


def test_a_job_from_its_server_is_stored_with_the_servers_device(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                                 server: str) -> None:
    proc = kcross("import", "--lava-server", server, "--lava-job", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"imported {server} job 1 (LAVA job 1, device qemu-02, "
                                  "device type qemu, counting (lab group)) as run 1: 6 of 6 "
                                  "benchmark(s); 6 LAVA test case(s) checked, 6 in the results "
                                  "export")
    assert lava_groups(db_path) == [{"job_id": "1", "device": "qemu-02", "device_type": "qemu",
                                     "dispatcher_version": "2023.01", "log": "server",
                                     "server": server}]
    assert Answers.asked == ["/api/v0.2/jobs/1/", "/api/v0.2/jobs/1/logs/",
                             "/api/v0.2/jobs/1/yaml/"]
    # lavacli's identity URL names the same server.
    assert_one_line_error(kcross("import", "--lava-server", f"{server}/RPC2", "--lava-job", "1"),
                          2, "already stored: run 1")


@pytest.mark.parametrize("order", ["file first", "server first"])
def test_a_job_from_its_log_and_from_its_server_is_one_run(kcross, db_path: Path, server: str,  # type: ignore[no-untyped-def]
                                                           order: str) -> None:
    """The server's log imported from a file has no device (the log does not say it); from
    the server it has: the same job still, refused the second time whichever came first."""
    from_file = ("import", str(LAVA / f"{X86_FILE}.log"))
    from_server = ("import", "--lava-server", server, "--lava-job", "1")
    first, second = (from_file, from_server) if order == "file first" else (from_server, from_file)
    assert kcross(*first).returncode == 0
    assert_one_line_error(kcross(*second), 2, "already stored: run 1 (imported from a LAVA job)")
    # Another job of the same records is another run (the http job: another definition).
    assert kcross("import", "--lava-server", server, "--lava-job", "4").returncode == 0
    assert query(db_path, "SELECT count(*) FROM runs") == [(2,)]


def test_a_run_imported_before_its_log_was_kept_is_the_same_run(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                                 server: str) -> None:
    """A run imported before issue 25 has no log nor server in its LAVA group, and the
    device the user named then: its log imported again, from a file or from the server, is
    the same run."""
    import sqlalchemy as sa
    from kcross.store.writing import content_hash

    assert kcross("import", str(LAVA / f"{X86_FILE}.log")).returncode == 0
    records = [json.loads(line) for line in kcross("show", "1", "--json").stdout.splitlines()]
    fp = records[0]
    fp["lava"] = {k: v for k, v in fp["lava"].items() if k not in ("log", "server")}
    fp["lava"]["device"] = "typed-by-hand"
    engine = sa.create_engine(f"sqlite:///{db_path}")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE runs SET fingerprint = :fp, content_hash = :h"),
                     {"fp": json.dumps(fp), "h": content_hash(records)})
    engine.dispose()
    assert kcross("check-store").returncode == 0
    for again in (("import", str(LAVA / f"{X86_FILE}.log")),
                  ("import", "--lava-server", server, "--lava-job", "1")):
        assert_one_line_error(kcross(*again), 2, "already stored: run 1")


def test_the_device_the_server_says_is_not_overruled(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                     tmp_path: Path) -> None:
    """Two servers' jobs of the same id and records, on two devices: two runs."""
    pages = job_pages(X86_FILE, "1")
    other = job_pages(X86_FILE, "1", actual_device="qemu-05")
    for answers in (pages, other):
        for url in serve(answers):
            proc = kcross("import", "--lava-server", url, "--lava-job", "1")
            assert proc.returncode == 0, proc.stderr
    assert [g["device"] for g in lava_groups(db_path)] == ["qemu-02", "qemu-05"]


def test_a_job_from_a_server_whose_clock_is_ahead_is_stored_with_a_warning(  # type: ignore[no-untyped-def]
        kcross, db_path: Path) -> None:
    """The job's log as a dispatcher whose clock is in 2099 writes it: the run's start (its
    log's) is in the future, and the import says so as a capture's does."""
    from test_lava import FUTURE_WARNING, in_the_future

    pages = job_pages(X86_FILE, "1")
    status, log = pages["/api/v0.2/jobs/1/logs/"]
    later = "".join(line + "\n" for line in in_the_future(log.decode().splitlines()))
    assert '"dt": "2026-' not in later
    pages["/api/v0.2/jobs/1/logs/"] = (status, later.encode())
    for url in serve(pages):
        proc = kcross("import", "--lava-server", url, "--lava-job", "1")
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == FUTURE_WARNING.format(name=f"{url} job 1", start="2099-11-28 17:22",
                                                    run=1) + "\n"
    assert str(query(db_path, "SELECT started_at FROM runs")[0][0]).startswith("2099-11-28")


@pytest.mark.parametrize("args, message", [
    (("--lava-server", "ftp://lava.example.org", "--lava-job", "1"),
     "--lava-server ftp://lava.example.org: give the LAVA server's http:// or https:// URL"),
    (("--lava-server", "lava.example.org", "--lava-job", "1"), "give the LAVA server's http://"),
    (("--lava-server", "http://127.0.0.1:9", "--lava-job", "12a"),
     "--lava-job 12a: a LAVA job's id is a number"),
    (("--lava-server", "http://127.0.0.1:9"), "--lava-server needs --lava-job N"),
    (("job.log", "--lava-server", "http://127.0.0.1:9", "--lava-job", "1"),
     "--lava-server takes the job's log from the server: give no FILE with it"),
    (("--lava-server", "http://127.0.0.1:9", "--lava-job", "1", "--lava-results", "r.yaml"),
     "no --lava-results with it"),
    ((), "give the file to import"),
    (("--lava-job", "1"), "give the file to import"),
])
def test_bad_input_is_one_line_before_anything_is_downloaded(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                              server: str, args: tuple[str, ...],
                                                              message: str) -> None:
    assert_one_line_error(kcross("import", *args), 2, message)
    assert Answers.asked == [] and not db_path.exists()


@pytest.mark.parametrize("job, message", [
    ("9", "LAVA job 9 of {server} is Running: nothing to import until it has finished "
          "(lavacli jobs wait 9)"),
    ("2", "LAVA job 2 of {server}: HTTP 404: no such job there"),
])
def test_a_job_the_server_cannot_give_is_one_line(kcross, db_path: Path, server: str,  # type: ignore[no-untyped-def]
                                                  job: str, message: str) -> None:
    assert_one_line_error(kcross("import", "--lava-server", server, "--lava-job", job), 2,
                          message.format(server=server))
    assert not db_path.exists()


def test_a_server_that_does_not_answer_is_one_line(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert_one_line_error(kcross("import", "--lava-server", f"http://127.0.0.1:{port}",
                                 "--lava-job", "1"), 2, "cannot reach the server")
    assert not db_path.exists()


# ---------------------------------------------------------------- kcross lava job's target

def test_which_lava_a_job_is_for() -> None:
    from kcross.errors import UserError
    from kcross.lava import qemu

    assert qemu.takes_no_network("2025.02") and qemu.takes_no_network("2026.01.1")
    assert not qemu.takes_no_network("2023.01") and not qemu.takes_no_network("2023.01-2")
    assert qemu.target(True).startswith("for LAVA before 2025.02 (e.g. Debian 12's 2023.01)")
    assert qemu.target(False).startswith("for LAVA 2025.02 or later")
    for bad in ("2023", "23.01", "2023.13", "latest"):
        with pytest.raises(UserError, match="--lava-version"):
            qemu.lava_release(bad)


@pytest.mark.parametrize("old_lava, version, old", [
    (False, None, False), (True, None, True), (False, "2023.01", True),
    (False, "2025.02", False), (True, "2024.09", True)])
def test_the_lava_version_chooses_the_jobs_context(old_lava: bool, version: str | None,
                                                   old: bool) -> None:
    from kcross.lava.make import JobRequest

    request = JobRequest(arch="x86_64", output=Path("job"), device_type="qemu", timeout=20,
                         old_lava=old_lava, lava_version=version)
    assert request.for_old_lava is old


@pytest.mark.parametrize("args, message", [
    (("--lava-version", "2023.1x"), "--lava-version '2023.1x': a LAVA release, YYYY.MM"),
    (("--lava-version", "2025.02", "--old-lava"),
     "--old-lava is for a LAVA before 2025.02, --lava-version 2025.02 is not: give one"),
    (("--lava-version", "2023.01", "--device-type", "rpi4"),
     "--old-lava and --lava-version are for the qemu device type's context"),
])
def test_lava_job_refuses_a_version_it_cannot_target(kcross, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                     args: tuple[str, ...], message: str) -> None:
    assert_one_line_error(kcross("lava", "job", "x86_64", "-o", str(tmp_path / "job"), *args), 2,
                          message)
    assert not (tmp_path / "job").exists()


@pytest.mark.skipif(not __import__("os").environ.get("KCROSS_TEST_POSTGRES_URL"),
                    reason="KCROSS_TEST_POSTGRES_URL not set")
def test_one_job_by_two_routes_is_one_run_on_postgres(kcross, server: str,  # type: ignore[no-untyped-def]
                                                      pg_schema: str) -> None:
    """The stored runs of a job are found by fingerprint.lava.job_id: a JSON path, SQLite's
    and PostgreSQL's."""
    db = ("--db", pg_schema)
    assert kcross("import", str(LAVA / f"{X86_FILE}.log"), *db).returncode == 0
    assert_one_line_error(kcross("import", "--lava-server", server, "--lava-job", "1", *db), 2,
                          "already stored: run")
    proc = kcross("import", "--lava-server", server, "--lava-job", "1", "--force", *db)
    assert proc.returncode == 0, proc.stderr
