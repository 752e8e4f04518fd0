"""The LAVA server tier (issue 25): kcross's jobs on a real LAVA server and worker.

``scripts/local-lava up`` stands up Debian 12's LAVA 2023.01 on this machine (PostgreSQL,
gunicorn, the publisher and the scheduler, each bound to 127.0.0.1 on a free port, their
data in a temporary directory; a worker with two QEMU devices).  Then, for x86_64 and
ppc64le, jobs of the getppid rows made by ``kcross lava job ARCH --old-lava`` (2023.01
refuses the no_network context: checked too, with the trap that ``lavacli jobs submit``
exits 0 when it refuses a job) are submitted with lavacli, one with ``file://`` images and
one with ``http://`` images (a ``python3 -m http.server`` on 127.0.0.1 serving them), and
waited for.  Each job's log (``lavacli jobs logs N --raw``) and results (``lavacli results N
--yaml``) are imported, or the job is imported straight from the server (``kcross import
--lava-server URL --lava-job N``); the other route's import of the same job, and the same
import again, are refused; every stored figure equals the figure of ``kcross lab``'s
counting boot of the same kernel and plan, and the device stored is the server's.  Last,
everything started is stopped by PID (``scripts/local-lava down``, the HTTP server).

Runs when KCROSS_TEST_LAVA_SERVER=1 (./check's LAVA server tier sets it) as root with
lava-server, lava-dispatcher and lavacli installed (scripts/install-deps lava-server) and
the two lab kernels ($KCROSS_TEST_LAB_KERNEL_X86_64, _PPC64LE); skips, naming what is
missing, elsewhere.  KCROSS_TEST_LAVA_CAPTURE=DIR keeps the logs, results and server
answers there (python/tests/data/lava/'s server files were made so: data/README.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import HANG
from labs import figures, kcross, lab_prerequisites

ROOT = Path(__file__).resolve().parents[2]
LOCAL_LAVA = ROOT / "scripts" / "local-lava"
ARCHES = ("x86_64", "ppc64le")
SCHEMES = ("file", "http")
BENCH = "getppid-*"
CANNOT = 77     # local-lava: this machine cannot run a LAVA server (the line says why)


def lab_counts(arch: str, kernel_file: Path) -> list[dict]:
    """The records of kcross lab's counting boot of ``BENCH`` with LAVA's network card."""
    from kcross.lab.kernel import Kernel
    from kcross.lab.machines import Guest
    from kcross.lab.machines import arch as arch_of
    from kcross.lab.payload import build_payload
    from kcross.lab.session import count
    from kcross.lava.qemu import TEMPLATE_NETWORK

    kernel = Kernel.from_file(kernel_file, arch)
    guest = Guest(arch_of(arch), kernel.path, extra=tuple(TEMPLATE_NETWORK.split()))
    return list(count(guest, kernel, build_payload(arch), bench=BENCH).stream.results)


def http_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return dict(json.loads(response.read()))


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass
class Lava:
    """The server local-lava stood up: its URL and its lavacli."""

    directory: Path
    url: str
    lavacli: str

    def cli(self, *args: str, timeout: float = HANG) -> subprocess.CompletedProcess:
        return subprocess.run([self.lavacli, *args], capture_output=True, text=True,
                              timeout=timeout)


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory the users postgres and lavaserver can reach (pytest's tmp_path is closed
    to them)."""
    if os.environ.get("KCROSS_TEST_LAVA_SERVER") != "1":
        pytest.skip("set KCROSS_TEST_LAVA_SERVER=1 to stand up a LAVA server here "
                    "(./check's LAVA server tier does)")
    for arch in ARCHES:
        lab_prerequisites(arch)
    if os.geteuid() != 0:
        pytest.skip("a LAVA worker runs its jobs as root")
    path = Path(tempfile.mkdtemp(prefix="kcross-lava-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def running(pid: int, start: str) -> bool:
    """Whether process ``pid`` started at ``start`` (/proc/PID/stat's field 22) still runs: a
    zombie has ended (its parent gone, it waits for init to reap it)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] != "Z"


@contextlib.contextmanager
def local_lava(directory: Path) -> Iterator[Callable[[], Lava]]:
    """scripts/local-lava up DIR, started at once; the callable waits for it (or skips with
    its reason: exit 77).  At the end, local-lava down DIR, and every process it started
    is checked gone."""
    up = subprocess.Popen([str(LOCAL_LAVA), "up", str(directory), "--devices", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ready() -> Lava:
        out, err = up.communicate(timeout=HANG)
        if up.returncode == CANNOT:
            pytest.skip(err.strip().splitlines()[-1])
        assert up.returncode == 0, err + "".join(
            p.read_text()[-3000:] for p in sorted((directory / "log").glob("*.log")))
        said = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return Lava(directory, said["url"], said["lavacli"])

    try:
        yield ready
    finally:
        if up.poll() is None:
            up.communicate(timeout=HANG)
        down = subprocess.run([str(LOCAL_LAVA), "down", str(directory)], capture_output=True,
                              text=True, timeout=HANG)
        print(down.stderr, end="")
        state = directory / "local-lava.json"
        for p in json.loads(state.read_text())["processes"] if state.exists() else []:
            assert not running(p["pid"], p["start"]), f"{p['name']} (pid {p['pid']}) still runs"


@pytest.fixture
def http_server(base: Path) -> Iterator[tuple[Path, str]]:
    """python3 -m http.server on 127.0.0.1 serving base/www, stopped by its PID."""
    import socket

    root = base / "www"
    root.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                             str(port), "--directory", str(root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield root, url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def submitted(lava: Lava, job: Path) -> str:
    """lavacli jobs submit, checked as docs/lava.md says a script checks it: it exits 0 when
    the server refuses the job, so the job's number must be what it printed."""
    done = lava.cli("jobs", "submit", str(job))
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"[0-9]+\n", done.stdout), done.stdout + done.stderr
    return done.stdout.strip()


def test_kcross_jobs_on_a_real_lava_server(base: Path, http_server: tuple[Path, str],
                                           tmp_path: Path) -> None:

    t0 = time.monotonic()
    env = {**os.environ, "KCROSS_DB": str(tmp_path / "k.db"), "COLUMNS": "200"}
    www, www_url = http_server
    kernels = {arch: lab_prerequisites(arch)[0] for arch in ARCHES}
    with local_lava(base / "lava") as lava_ready, ThreadPoolExecutor(len(ARCHES)) as pool:
        # The jobs, while the server starts: each arch, file:// and http:// images.
        jobs: dict[tuple[str, str], Path] = {}
        for arch in ARCHES:
            for scheme in SCHEMES:
                out = (base / "jobs" if scheme == "file" else www) / f"{arch}-{scheme}"
                extra = ["--image-url-base", f"{www_url}/{out.name}"] \
                    if scheme == "http" else []
                made = kcross("lava", "job", arch, "--kernel", str(kernels[arch]), "--bench",
                              BENCH, "--old-lava", "-o", str(out), *extra, env=env)
                assert made.returncode == 0, made.stderr
                assert "the job is for LAVA before 2025.02" in made.stdout
                jobs[arch, scheme] = out / "job.yaml"
        lava = lava_ready()
        t_up = time.monotonic()
        # 2023.01 refuses a job with the no_network context, and lavacli still exits 0.
        refused = yaml.safe_load(jobs["x86_64", "file"].read_text())
        refused["context"]["no_network"] = True
        (base / "refused.yaml").write_text(yaml.safe_dump(refused))
        done = lava.cli("jobs", "submit", str(base / "refused.yaml"))
        assert done.returncode == 0 and "no_network" in done.stdout \
            and not re.fullmatch(r"[0-9]+\n", done.stdout), done.stdout
        ids = {key: submitted(lava, job) for key, job in jobs.items()}
        # Meanwhile, the lab's counting boots of the same kernels, plan and machine: LAVA
        # 2023.01's QEMU template gives the guest a network card, which moves where the
        # kernel's objects land (docs/lava.md, --old-lava): the lab's guest gets the card.
        counting = {arch: pool.submit(lab_counts, arch, kernels[arch]) for arch in ARCHES}
        for job_id in ids.values():
            done = lava.cli("jobs", "wait", job_id, "--polling", "1")
            assert done.returncode == 0, done.stderr
        t_ran = time.monotonic()
        counted = {arch: future.result() for arch, future in counting.items()}
        t_counted = time.monotonic()
        check_imports(lava, ids, jobs, counted, env, tmp_path)
    print(f"\nLAVA server tier: {len(ids)} jobs; server up and jobs made in {t_up - t0:.0f} s, "
          f"jobs run in {t_ran - t_up:.0f} s (the lab's boots {t_counted - t_up:.0f} s), "
          f"imported in {time.monotonic() - t_counted:.0f} s; {time.monotonic() - t0:.0f} s "
          "with the server's stop")


def check_imports(lava: Lava, ids: dict[tuple[str, str], str],
                  jobs: dict[tuple[str, str], Path], counted: dict[str, list[dict]],
                  env: dict[str, str], tmp_path: Path) -> None:
    """Each job imported from its log and results (file:// jobs) or from the server
    (http:// jobs); the other route's import of the same job is refused, and for the first
    job the same import again; every stored figure the lab's; the stored LAVA group the
    log's and the server's."""
    from kcross.lab.machines import DEFAULT_SUITES
    from kcross.lab.payload import benchmarks_named, find_source

    capture = os.environ.get("KCROSS_TEST_LAVA_CAPTURE")
    planned = {arch: benchmarks_named(BENCH, arch, find_source(), DEFAULT_SUITES)
               for arch in ARCHES}
    stored_runs = set()
    for n, ((arch, scheme), job_id) in enumerate(ids.items()):
        where = f"{arch} {scheme}:// job {job_id}"
        server_job = http_json(f"{lava.url}/api/v0.2/jobs/{job_id}/")
        assert server_job["health"] == "Complete", where
        log = tmp_path / f"{arch}-{scheme}.log"
        got = lava.cli("jobs", "logs", job_id, "--raw")
        assert got.returncode == 0, got.stderr
        log.write_text(got.stdout)
        from_file = ["import", str(log)]
        if scheme == "file":
            results = tmp_path / f"{arch}-{scheme}.results.yaml"
            got = lava.cli("results", job_id, "--yaml")
            assert got.returncode == 0, got.stderr
            results.write_text(got.stdout)
            from_file += ["--lava-results", str(results)]
        else:
            assert '"case": "http-download"' in log.read_text()
        if capture:
            keep = Path(capture)
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(log, keep / log.name)
            shutil.copy(jobs[arch, scheme], keep / f"{arch}-{scheme}.job.yaml")
            (keep / f"{arch}-{scheme}.job.json").write_text(json.dumps(server_job, indent=1))
            with urllib.request.urlopen(f"{lava.url}/api/v0.2/jobs/{job_id}/yaml/") as r:
                (keep / f"{arch}-{scheme}.results.yaml").write_bytes(r.read())

        # One route, then the other (and for the first job the same again): refused.
        from_server = ["import", "--lava-server", lava.url, "--lava-job", job_id]
        first, second = (from_file, from_server) if scheme == "file" else \
            (from_server, from_file)
        imported = kcross(*first, env=env)
        assert imported.returncode == 0, f"{where}: {imported.stderr}"
        assert f"{len(planned[arch])} LAVA test case(s) checked, {len(planned[arch])} in " \
               "the results export" in imported.stdout, imported.stdout
        for again in (second, first) if n == 0 else (second,):
            refused_import = kcross(*again, env=env)
            assert refused_import.returncode == 2, f"{where}: {refused_import.stdout}"
            assert "already stored: run" in refused_import.stderr, refused_import.stderr
        run_id = re.search(r" as run (\d+):", imported.stdout)
        assert run_id is not None
        stored_runs.add(run_id.group(1))
        shown_run = kcross("show", run_id.group(1), "--json", env=env)
        assert shown_run.returncode == 0, shown_run.stderr
        stored = json_lines(shown_run.stdout)
        assert stored[0]["lava"] == {
            "job_id": job_id, "log": "server", "device_type": "qemu",
            "dispatcher_version": "2023.01",
            "device": server_job["actual_device"] if first is from_server else None,
            "server": lava.url if first is from_server else None}, where
        # Every figure is the lab's counting boot's (the same machine), exactly.
        assert len(figures(stored)) == len(planned[arch]) > 0, where
        assert figures(stored) == figures(counted[arch]), where
    assert len(stored_runs) == len(ids)
