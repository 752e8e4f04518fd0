"""kcross on LAVA (issue 17), without booting: the import of a real lava-run log
(data/lava/x86_64-getppid.log, made by `kcross lava job x86_64 --bench 'getppid-*'` and
LAVA 2023.01's lava-run on Debian 12: see data/README.md), duplicates, cut and failed logs,
the results export's cross-check, the job definition's contents, and `kcross lava job`'s
refusals.  The real boot is test_lab_lava.py's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import DATA, HANG, assert_one_line_error, query
from kcross.lab.machines import Guest, arch
from kcross.lava import job as lava_job
from kcross.lava import qemu

LOG = DATA / "lava" / "x86_64-getppid.log"
SYSTEM_PYTHON = "/usr/bin/python3"


def entries(path: Path = LOG) -> list[dict[str, Any]]:
    return [yaml.safe_load(line) for line in path.read_text().splitlines() if line.strip()]


def lava_cases(path: Path = LOG) -> dict[str, dict[str, Any]]:
    """LAVA's test cases of suite kcross in the log, read here independently."""
    return {e["msg"]["case"]: e["msg"] for e in entries(path)
            if e["lvl"] == "results" and e["msg"].get("definition") == "kcross"}


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def edited(tmp_path: Path, edit: Any, name: str = "job.log") -> Path:
    """The fixture with ``edit(lines) -> lines`` applied."""
    return write_lines(tmp_path / name, edit(LOG.read_text().splitlines()))


def stored_figures(db: Path) -> dict[str, float]:
    rows = query(db, "SELECT suite, name, median_ns FROM results ORDER BY seq")
    return {f"{s}/{n}": m for s, n, m in rows}


# ---------------------------------------------------------------- importing the log

def test_the_log_is_stored_with_the_lab_and_lava_groups(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = kcross("import", str(LOG))
    assert proc.returncode == 0, proc.stderr
    assert "(LAVA job 7, device type qemu, counting (lab group)) as run 1: 6 of 6" in proc.stdout
    assert "6 LAVA test case(s) checked" in proc.stdout
    (source, fingerprint), = query(db_path, "SELECT source, fingerprint FROM runs")
    assert source == "lava"
    fp = json.loads(fingerprint)
    assert fp["lava"] == {"job_id": "7", "device": None, "device_type": "qemu",
                          "dispatcher_version": "2023.01", "log": "lava-run", "server": None}
    assert fp["lab"]["mode"] == "counting" and fp["lab"]["icount"] == "shift=0,align=off,sleep=off"
    assert fp["lab"]["kernel"]["package"] == "linux-image-6.1.0-50-amd64"
    # The worker's QEMU package is the one the job was made with: the lab's version string.
    assert fp["lab"]["emulator_version"] == "7.2.22"
    # Every stored figure is LAVA's test case's measurement (the harness's line), exactly.
    cases = lava_cases()
    figures = stored_figures(db_path)
    assert len(cases) == len(figures) == 6
    for name, figure in figures.items():
        case = cases[name.replace("/", "_").replace("-", "_")]
        assert f"{figure:.10g}" == case["measurement"] and case["units"] == "instructions/op"


FUTURE_WARNING = ("kcross: warning: {name} started at {start} UTC, in the future (the "
                  "capturing machine's clock is wrong?); stored as run {run} all the same "
                  "('latest' is the newest run stored, whatever its start)")


def in_the_future(lines: list[str]) -> list[str]:
    """The log as a dispatcher whose clock is in 2099 writes it: every entry's time moved on
    (the run's start is its log's); the console's lines, the harness's records, unchanged."""
    return [re.sub(r'"dt": "\d{4}-', '"dt": "2099-', line) for line in lines]


def test_a_job_logged_in_the_future_is_stored_with_a_captures_warning(  # type: ignore[no-untyped-def]
        kcross, db_path: Path, tmp_path: Path) -> None:
    """A LAVA job's run is dated by its log (the dispatcher's clock; a lab guest's is fixed):
    a start in the future is stored with the warning a capture's gets (kcross.importer)."""
    proc = kcross("import", str(LOG), "--db", str(tmp_path / "a.db"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    log = edited(tmp_path, in_the_future)
    assert '"dt": "2026-' not in log.read_text()
    proc = kcross("import", str(log))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == FUTURE_WARNING.format(name=log, start="2099-11-26 14:27", run=1) + "\n"
    assert "as run 1: 6 of 6 benchmark(s)" in proc.stdout
    assert str(query(db_path, "SELECT started_at FROM runs")[0][0]).startswith("2099-11-26")
    # the guest's clock (the fingerprint's host.time) is no run's start: no warning
    guest = edited(tmp_path, lambda lines: [line.replace("2024-01-01T00:00:06Z",
                                                         "2099-01-01T00:00:06Z")
                                            for line in lines], "guest.log")
    assert "2099-01-01T00:00:06Z" in guest.read_text()
    proc = kcross("import", str(guest), "--db", str(tmp_path / "b.db"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_the_same_log_twice_is_stored_once(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert kcross("import", str(LOG)).returncode == 0
    assert_one_line_error(kcross("import", str(LOG)), 2,
                          "already stored: run 1 (imported from a LAVA job) holds the same records")
    assert query(db_path, "SELECT count(*) FROM runs") == [(1,)]


def server_form(tmp_path: Path) -> Path:
    """The log as a server serves it (lavacli jobs logs N --raw): a YAML list, and the
    console as LAVA after 2023.01 logs it (quotes not escaped)."""
    out = []
    for e in entries():
        if e["lvl"] == "target":
            e["msg"] = e["msg"].replace('\\"', '"')
        out.append("- " + yaml.dump(e, default_flow_style=True, default_style='"',
                                    width=10**6).strip())
    return write_lines(tmp_path / "server.log", out)


def test_a_servers_form_of_the_log_is_a_run_of_its_own(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                       tmp_path: Path) -> None:
    """The same records, in a server's form (a YAML list): a server's job, not lava-run's
    (issue 25: a lava-run log and a server's of one job definition were taken for one run).
    Its second import is refused."""
    server = server_form(tmp_path)
    assert kcross("import", str(LOG)).returncode == 0
    proc = kcross("import", str(server))
    assert proc.returncode == 0, proc.stderr
    logs = [json.loads(f)["lava"]["log"] for f, in query(db_path, "SELECT fingerprint FROM runs")]
    assert logs == ["lava-run", "server"]
    assert_one_line_error(kcross("import", str(server)), 2, "already stored: run 2")


def test_a_device_given_by_hand_is_refused(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--lava-device put the user's word in the run's identity (the same log stored twice
    under two names, issue 25): the device is the server's to say."""
    assert_one_line_error(kcross("import", str(LOG), "--lava-device", "qemu-07"), 2,
                          "--lava-device: LAVA's log does not name the device")
    assert not db_path.exists()


def _cut_after(marker: str) -> Any:
    def edit(lines: list[str]) -> list[str]:
        return lines[:next(i for i, line in enumerate(lines) if marker in line) + 1]
    return edit


@pytest.mark.parametrize("edit, message", [
    (_cut_after('"kcross-result: syscall/getppid-inline'), "the log is cut: it has no job result"),
    (_cut_after("done"), "the log is cut: it has no job result"),
    (lambda lines: lines[:-1] + [lines[-1][:40]], "the log is cut: it has no job result (line"),
    (lambda lines: [line.replace('"case": "job", "definition": "lava", "result": "pass"',
                                 '"case": "job", "definition": "lava", "error_msg": "lava-test-'
                                 'monitor timed out", "error_type": "Test", "result": "fail"')
                    for line in lines], "the LAVA job failed (lava-test-monitor timed out)"),
    (lambda lines: [line for line in lines if "Waiting for start message" not in line],
     "not a kcross job (no kcross monitor"),
    (lambda lines: [line for line in lines
                    if not ('"lvl": "results"' in line and "syscall_getppid_int80" in line)],
     "5 test case(s) in suite kcross, the harness reported 6 result(s); missing: "
     "syscall_getppid_int80"),
    (lambda lines: [line.replace('"measurement": "336.0026042"', '"measurement": "335.0026042"')
                    for line in lines],
     "test case syscall_getppid_inline is pass 335.0026042, the harness's record says pass "
     "336.0026042"),
    # the harness's console lines, which LAVA's test cases were made from, edited or gone
    (lambda lines: [line.replace("kcross-result: syscall/getppid-inline pass 336.0026042",
                                 "kcross-result: syscall/getppid-inline pass 335.0026042")
                    for line in lines],
     "job.log (the harness's kcross-result lines): syscall/getppid-inline is pass "
     "335.0026042, the harness's record says pass 336.0026042"),
    (lambda lines: [line for line in lines if "kcross-result: syscall/getppid-int80" not in line],
     "job.log (the harness's kcross-result lines): 5 line(s), the harness reported 6 "
     "result(s); missing: syscall/getppid-int80"),
    (lambda lines: [line.replace("kcross-result: syscall/getppid-call pass",
                                 "kcross-result: syscall/getppid-call fail") for line in lines],
     "syscall/getppid-call is fail 338.0013021, the harness's record says pass 338.0013021"),
    (lambda lines: [line.replace("kcross-result: syscall/getppid-glibc pass 338.0013021 "
                                 "instructions/op", "kcross-result: syscall/getppid-glibc pass "
                                 "338.0013021 ns/op") for line in lines],
     "syscall/getppid-glibc is in ns/op, the harness's record says instructions/op"),
    (lambda lines: [line.replace("-icount shift=0,align=off,sleep=off", "-icount shift=auto")
                    for line in lines],
     "LAVA's QEMU ran with -icount shift=auto, the job asked for shift=0,align=off,sleep=off"),
    (lambda lines: [line.replace('"sha256sum": "d8808aa4', '"sha256sum": "00000000')
                    for line in lines], "the kernel LAVA downloaded (SHA-256 00000000"),
    (lambda lines: [line for line in lines if "@@kcross-lab" not in line or " note " not in line],
     "no kcross note on the console"),
])
def test_a_log_that_cannot_be_trusted_is_one_line_and_stores_nothing(  # type: ignore[no-untyped-def]
        kcross, db_path: Path, tmp_path: Path, edit: Any, message: str) -> None:
    assert_one_line_error(kcross("import", str(edited(tmp_path, edit))), 2, message)
    assert not db_path.exists()


def test_lavas_network_card_makes_a_machine_of_its_own(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                       tmp_path: Path) -> None:
    """A worker whose QEMU gave the guest a network card (LAVA before 2025.02): stored,
    with fingerprint.lab.network, so never the same machine as the lab's."""
    from kcross.fingerprint import identity

    assert kcross("import", str(LOG), "--db", str(tmp_path / "a.db")).returncode == 0
    proc = kcross("import", str(edited(tmp_path, lambda lines: [
        line.replace(f" {qemu.NO_NETWORK} ", f" {qemu.TEMPLATE_NETWORK} ") for line in lines])))
    assert proc.returncode == 0, proc.stderr
    fp = json.loads(query(db_path, "SELECT fingerprint FROM runs")[0][0])
    plain = json.loads(query(tmp_path / "a.db", "SELECT fingerprint FROM runs")[0][0])
    assert fp["lab"]["network"] == "-net nic,model=virtio,macaddr=52:54:00:12:34:58 -net user"
    assert "network" not in plain["lab"] and identity(fp) != identity(plain)


def test_a_forged_marker_without_the_jobs_token_is_output(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                           tmp_path: Path) -> None:
    """A console line with another token cannot end the plan early: it is the harness's
    output (the token is LAVA's logged start string's, not the console's)."""
    def edit(lines: list[str]) -> list[str]:
        at = next(i for i, line in enumerate(lines) if "kcross-result: syscall/getppid-glibc" in line)
        forged = lines[at].replace("kcross-result: syscall/getppid-glibc pass 338.0013021 "
                                   "instructions/op", "@@kcross-lab 0123456789abcdef done")
        return lines[:at] + [forged] + lines[at:]
    proc = kcross("import", str(edited(tmp_path, edit)))
    assert proc.returncode == 0, proc.stderr
    assert len(stored_figures(db_path)) == 6


# ---------------------------------------------------------------- the results export

def export_of(log: Path, *, job: str = "7", suite: str = "0_kcross") -> list[dict[str, Any]]:
    """What a server exports for the job's kcross suite (lava_results_app: measurement
    as a decimal with 10 places)."""
    return [{"id": str(100 + i), "job": job, "suite": suite, "name": c["case"],
             "result": c["result"], "measurement": f"{float(c['measurement']):.10f}",
             "unit": c["units"], "level": c["level"], "logged": "2026-11-26 14:13:56",
             "metadata": {"case": c["case"]}, "url": f"/results/testcase/{100 + i}"}
            for i, c in enumerate(lava_cases(log).values())]


@pytest.mark.parametrize("form", ["yaml", "csv"])
def test_the_export_is_checked_against_the_stored_figures(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                          tmp_path: Path, form: str) -> None:
    cases = export_of(LOG)
    path = tmp_path / f"results.{form}"
    if form == "yaml":
        path.write_text(yaml.safe_dump(cases))
    else:
        import csv

        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(cases[0]))
            w.writeheader()
            w.writerows({**c, "metadata": json.dumps(c["metadata"])} for c in cases)
    proc = kcross("import", str(LOG), "--lava-results", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "6 LAVA test case(s) checked, 6 in the results export" in proc.stdout


def test_an_export_that_disagrees_stores_nothing(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                 tmp_path: Path) -> None:
    cases = export_of(LOG)
    cases[2]["measurement"] = "336.0100000000"
    path = tmp_path / "results.yaml"
    path.write_text(yaml.safe_dump(cases))
    assert_one_line_error(kcross("import", str(LOG), "--lava-results", str(path)), 2,
                          "(the results export): test case syscall_getppid_inline is pass "
                          "336.0100000000, the harness's record says pass 336.0026042")
    assert not db_path.exists()
    path.write_text(yaml.safe_dump(export_of(LOG, job="8")))
    assert_one_line_error(kcross("import", str(LOG), "--lava-results", str(path)), 2,
                          "the results export says job 8, the log's job is 7")


def test_an_export_says_none_for_no_measurement() -> None:
    """lava_results_app writes str(None) for a case without a measurement (a skip)."""
    from kcross.lava.results import parse_export

    cases = parse_export(yaml.safe_dump([
        {"job": "7", "suite": "0_kcross", "name": "cpuid_rdpid", "result": "skip",
         "measurement": "None", "unit": ""},
        {"job": "7", "suite": "0_kcross", "name": "syscall_getppid_inline", "result": "pass",
         "measurement": "336.0026042000", "unit": "instructions/op"}]))
    assert cases is not None
    assert (cases[0].measurement, cases[0].unit) == (None, None)
    assert cases[1].measurement == "336.0026042000"


def test_an_export_alone_is_refused(kcross, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "results.yaml"
    path.write_text(yaml.safe_dump(export_of(LOG)))
    assert_one_line_error(kcross("import", str(path)), 2,
                          "is a LAVA results export: it has LAVA's test cases but no "
                          "fingerprint")
    assert not db_path.exists()


def test_lava_options_need_a_lava_log(kcross, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    capture = DATA / "real-run.jsonl"
    assert_one_line_error(kcross("import", str(capture), "--lava-job", "3"), 2,
                          "--lava-job: for a LAVA job's log")


# ---------------------------------------------------------------- the job definition

@pytest.mark.parametrize("name", ["ppc64le", "aarch64", "x86_64"])
@pytest.mark.parametrize("old_lava", [False, True])
def test_lavas_qemu_command_is_the_labs_machine(name: str, old_lava: bool, tmp_path: Path) -> None:
    """What qemu.jinja2 renders for the job's context holds every option of the lab's QEMU
    command line (machines.Guest's), LAVA's arch name, and no KVM; no network card unless
    the server is too old for no_network."""
    guest = Guest(arch(name), Path("/k"))
    ctx = qemu.context(guest, old_lava=old_lava)
    assert ctx["arch"] == {"ppc64le": "ppc64"}.get(name, name) and ctx["no_kvm"] is True
    params = qemu.boot_parameters(ctx)
    rendered = [params["command"], *" ".join([*params["options"], *params["extra"]]).split()]
    lab = guest.argv(tmp_path / "initrd")
    assert rendered[0] == lab[0]
    pairs = {(lab[i], lab[i + 1]) for i in range(1, len(lab) - 1) if lab[i].startswith("-")
             and not lab[i + 1].startswith("-")}
    pairs -= {("-nic", "none"), ("-kernel", "/k"), ("-initrd", str(tmp_path / "initrd")),
              ("-append", guest.cmdline())}
    got = {("-M" if a == "-machine" else a, b) for a, b in zip(rendered, rendered[1:], strict=False)}
    assert pairs <= got, pairs - got
    assert "-no-reboot" in rendered and "-enable-kvm" not in rendered
    network = qemu.TEMPLATE_NETWORK if old_lava else qemu.NO_NETWORK
    assert network in params["options"] and ("no_network" in ctx) != old_lava
    assert qemu.kernel_image_arg(guest) == f'-kernel {{kernel}} -append "{guest.cmdline()}"'


def jobs(tmp_path: Path) -> list[Path]:
    guest = Guest(arch("ppc64le"), Path("/k"))
    made = [lava_job.qemu_job(name="kcross counting ppc64le", ctx=qemu.context(guest, old_lava=True),
                              kernel_url="file:///tmp/vmlinux", kernel_arg=qemu.kernel_image_arg(guest),
                              ramdisk_url="https://example.org/kcross.cpio.gz",
                              token="0123456789abcdef", minutes=20, metadata={"kcross.arch": "ppc64le"}),
            lava_job.board_job(name="kcross timing aarch64", device_type="bcm2711-rpi-4-b",
                               kernel_url="https://example.org/Image", kernel_type="image",
                               ramdisk_url="https://example.org/kcross.cpio.gz",
                               dtb_url="https://example.org/board.dtb", console="ttyS1",
                               token="0123456789abcdef", minutes=20,
                               metadata={"kcross.arch": "aarch64"}, append="")]
    paths = []
    for i, job in enumerate(made):
        path = tmp_path / f"job{i}.yaml"
        path.write_text(yaml.safe_dump(job, sort_keys=False))
        paths.append(path)
    return paths


def test_the_job_definitions_are_valid_for_lava(tmp_path: Path) -> None:
    """LAVA's own job schema (lava_common, installed with lava-dispatcher) takes them; it
    is the system Python's, which the project's virtual environment does not see.  The
    default qemu job's no_network is LAVA 2025.02's context variable: 2023.01's schema
    takes it when told of it (as a server configured with it as an extra variable)."""
    if not Path(SYSTEM_PYTHON).exists() or subprocess.run(
            [SYSTEM_PYTHON, "-c", "import lava_common.schemas, yaml"],
            capture_output=True).returncode != 0:
        pytest.skip("no lava_common for /usr/bin/python3 (apt-get install lava-dispatcher)")
    paths = jobs(tmp_path)
    current = yaml.safe_load(paths[0].read_text())
    current["context"] = qemu.context(Guest(arch("ppc64le"), Path("/k")))
    paths.append(tmp_path / "current.yaml")
    paths[-1].write_text(yaml.safe_dump(current))
    for path, extra in zip(paths, ([], [], ["no_network"]), strict=True):
        proc = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import sys, yaml\nfrom lava_common.schemas import validate\n"
             "validate(yaml.safe_load(open(sys.argv[1])), strict=True, "
             "extra_context_variables=sys.argv[2:])", str(path), *extra],
            capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-500:]


def test_the_monitor_reads_the_harness_lines_as_lava_does() -> None:
    """The pattern takes each form of the harness's line as LAVA's console delivers it
    (\\r\\r\\n), and nothing of a half-arrived line."""
    import re

    pattern = re.compile(lava_job.RESULT_LINE)
    m = pattern.search("kcross-result: syscall/getppid-inline pass 336.0026042 instructions/op\r\r\n")
    assert m and m.group("test_case_id", "result", "measurement", "units") == (
        "syscall/getppid-inline", "pass", "336.0026042", "instructions/op")
    m = pattern.search("kcross-result: cpuid/rdpid skip\r\r\n")
    assert m and m.group("result", "measurement") == ("skip", None)
    assert pattern.search("kcross-result: syscall/getppid-inline pass 336.00") is None
    assert lava_job.case_id("syscall", "getppid-inline") == "syscall_getppid_inline"


@pytest.mark.parametrize("args, message", [
    (["sparc", "-o", "{tmp}/out"], "unknown lab arch 'sparc'"),
    (["x86_64", "-o", "{tmp}/out", "--kernel", "/nonexistent/bzImage"],
     "/nonexistent/bzImage: no such kernel file"),
    (["x86_64", "-o", "{tmp}/out", "--bench", "nosuch"],
     "--bench nosuch: no such benchmark in x86_64's suites syscall, cpuid, percpu"),
    (["x86_64", "-o", "{tmp}/file/out"], "-o {tmp}/file/out: cannot write there"),
    (["x86_64", "-o", "{tmp}/out", "--kernel", "/k", "--kernel-url", "http://x/k"],
     "--kernel and --kernel-url name the kernel twice"),
    (["x86_64", "-o", "{tmp}/out", "--image-url-base", "storage/kcross"],
     "--image-url-base 'storage/kcross': give an http://, https:// or file:// URL"),
    (["x86_64", "-o", "{tmp}/out", "--device-type", "rpi4", "--cpu", "max"],
     "--cpu and --machine-opt set QEMU's machine: not for the board device type rpi4"),
    (["x86_64", "-o", "{tmp}/out", "--suite", "syscall,nosuch"], "no suite 'nosuch'"),
    (["x86_64", "-o", "{tmp}/out", "--env", "KCROSS_RSEQ=of"],
     "--env 'KCROSS_RSEQ=of': KCROSS_RSEQ=of: not one of auto, on, off"),
    (["x86_64", "-o", "{tmp}/out", "--env", "TMPDIR=/tmp"],
     "--env 'TMPDIR=/tmp': TMPDIR is not one of the harness's settings"),
    (["x86_64", "-o", "{tmp}/out", "--env", "KCROSS_SYSCALL=svc"],
     "--env KCROSS_SYSCALL=svc: x86_64's harness takes libc, syscall, auto"),
])
def test_bad_input_is_one_line_before_anything_is_built(  # type: ignore[no-untyped-def]
        kcross, tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "file").write_text("")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    cache = tmp_path / "cache"
    proc = kcross("lava", "job", *args, extra_env={"XDG_CACHE_HOME": str(cache),
                                                    "KCROSS_SOURCE": str(DATA.parents[2])})
    assert_one_line_error(proc, 2, message.replace("{tmp}", str(tmp_path)))
    assert not cache.exists()
    assert not (tmp_path / "out").exists()      # not even the directory


@pytest.mark.parametrize("board", [False, True])
def test_the_jobs_plan_gives_the_harness_its_settings(board: bool) -> None:
    """--env: the plan's NAME=VALUE tokens before the harness (the lab's /init puts them in
    its environment), on QEMU as on a board; without --env the plan is the lab's, as before."""
    from kcross.lab.request import GuestOptions
    from kcross.lab.session import harness_argv
    from kcross.lava.make import JobRequest, _harness

    def plan(env: tuple[str, ...]) -> list[str]:
        request = JobRequest(arch="x86_64", output=Path("/out"),
                             device_type="rpi4" if board else "qemu",
                             timeout=30, guest=GuestOptions(env=env))
        return _harness(request, ("syscall",))[0]

    plain = plan(())
    assert plain[0] == "/lab/kcross-harness"
    if not board:
        assert plain == harness_argv(suites=("syscall",))
    assert plan(("KCROSS_RSEQ=off", "KCROSS_VDSO=0")) == ["KCROSS_RSEQ=off", "KCROSS_VDSO=0",
                                                          *plain]


# ---------------------------------------------------------------- the harness's line

def test_the_harness_line_is_the_stored_figure(tmp_path: Path) -> None:
    """kcross-harness --result-lines: each line's figure is the statistics rule's median of
    the record beside it, as kcross computes it from the JSON (to the printed digit)."""
    from harnesses import native
    from kcross.stats import summarize_record

    command, why = native()
    if command is None:
        pytest.skip(why)
    proc = subprocess.run([*command, "run", "--suite", "syscall", "--bench", "getppid-*",
                           "--quick", "--json", "--result-lines", "ns/op"],
                          capture_output=True, text=True, timeout=HANG)
    if "--result-lines" in proc.stderr:
        pytest.skip(f"{command[0]} predates --result-lines (rebuild it)")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    checked = 0
    for i, line in enumerate(lines):
        if line.startswith("{") and json.loads(line)["type"] == "result":
            record = json.loads(line)
            words = lines[i + 1].split()
            assert words[:3] == ["kcross-result:", f"syscall/{record['name']}", "pass"]
            assert words[3] == f"{summarize_record(record).median:.10g}" and words[4] == "ns/op"
            checked += 1
    assert checked >= 5


# ---------------------------------------------------------------- the test shell

@pytest.mark.parametrize("settings", [{}, {"KCROSS_RSEQ": "off", "KCROSS_VDSO": "0"}])
def test_the_test_shell_steps_report_every_result(tmp_path: Path,
                                                  settings: dict[str, str]) -> None:
    """The Lava-Test-Shell steps, run by sh with a fake lava-test-case on PATH that records
    its arguments, fed by the real harness: one call per result (pass with the figure and
    unit; a skip without), named as a monitor names them, the JSON records on the console,
    and the harness's exit status."""
    import os
    import shlex

    from harnesses import native
    from kcross.lava import testshell
    from kcross.stats import summarize_record

    command, why = native()
    if command is None:
        pytest.skip(why)
    work = tmp_path / "work"
    bin_dir = tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    fake = bin_dir / "lava-test-case"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(str(calls))}\n')
    harness = work / "kcross-harness"
    harness.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(c) for c in command)
                       + ' "$@" --quick\n')
    for f in (fake, harness):
        f.chmod(0o755)
    params = testshell.definition(harness_url="", suites="syscall,cpuid",
                                  bench="getppid-i*", env=settings)["params"]
    assert ("SETTINGS" in params) == bool(settings)   # a job without --env: as before
    script = "".join(f"{k}={shlex.quote(v)}\n" for k, v in params.items()) + testshell.STEPS
    proc = subprocess.run(["sh", "-c", script], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
                          timeout=HANG)
    if "--result-lines" in proc.stdout and "unknown option" in proc.stdout:
        pytest.skip(f"{command[0]} predates --result-lines (rebuild it)")
    assert proc.returncode == 0, proc.stdout[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    results = [r for r in records if r["type"] == "result"]
    assert records[0]["type"] == "fingerprint" and records[-1]["type"] == "end" and results
    for name, value in settings.items():     # the harness got them: its fingerprint says
        assert records[0]["forced"][name] == value
    recorded = calls.read_text().splitlines()
    assert len(recorded) == len(results)
    for record, call in zip(results, recorded, strict=True):
        name = lava_job.case_id(record["suite"], record["name"])
        if record["status"] == "ok":
            assert call == (f"{name} --result pass --measurement "
                            f"{summarize_record(record).median:.10g} --units ns/op")
        else:
            assert call == f"{name} --result {'skip' if record['status'] == 'skipped' else 'fail'}"


def test_the_test_shell_says_why_it_has_no_harness(tmp_path: Path) -> None:
    from kcross.lava import testshell

    proc = subprocess.run(["sh", "-c", "HARNESS_URL=\n" + testshell.STEPS], cwd=tmp_path,
                          capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 2 and "no ./kcross-harness and no HARNESS_URL" in proc.stdout


def test_the_log_from_standard_input(env: dict[str, str], db_path: Path) -> None:
    """lavacli jobs logs N --raw | kcross import -: recognised by its content, read once."""
    proc = subprocess.run([sys.executable, "-m", "kcross", "import", "-"], input=LOG.read_text(),
                          env=env, capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("imported stdin (LAVA job 7, device type qemu")
    [(source, command)] = query(db_path, "SELECT source, command FROM runs")
    assert (source, json.loads(command)) == ("lava", ["import", "-"])


def test_a_servers_rounded_measurement_still_agrees() -> None:
    """A LAVA server keeps 10 decimal places: 0.04432187654 comes back as 0.0443218765."""
    from kcross.lava.imports import _same_figure

    assert _same_figure("0.0443218765", "0.04432187654")
    assert _same_figure("348", "348")
    assert not _same_figure("0.0443218766", "0.04432187654")
    assert not _same_figure("349", "348")
    assert not _same_figure("n/a", "348")


# ---------------------------------------------------------------- the log, kept as lava-run writes it

def test_the_lava_run_hint_keeps_its_standard_error(kcross) -> None:  # type: ignore[no-untyped-def]
    """lava-run writes its log on standard error (its standard output stays nearly empty):
    the command kcross prints and its --help redirect that, and nothing shows '> job.log'
    for lava-run (lavacli's '> job.log' is right: it writes the log on standard output)."""
    from kcross.cli.lava import lava_run

    line = lava_run("d/device.yaml", "d/dispatcher.yaml", "d/job.yaml")
    assert line.endswith(" 2> job.log") and line.startswith("lava-run --device d/device.yaml")
    shown = " ".join(kcross("lava", "--help").stdout.split())
    assert "DIR/job.yaml 2> job.log" in shown, shown
    root = DATA.parents[2]
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md")),
                 *sorted((root / "python" / "kcross").rglob("*.py"))]:
        text = " ".join(path.read_text().split())
        for start in [i for i in range(len(text)) if text.startswith("lava-run --device", i)]:
            redirect = text[start:].split("job.log", 1)[0][-4:]
            assert redirect.endswith("2> "), (path, text[start:start + 200])


@pytest.mark.parametrize("content", ["", "\n  \n"], ids=["empty", "blank"])
@pytest.mark.parametrize("name", ["job.log", "c.jsonl"])
def test_an_empty_file_is_said_to_be_empty(kcross, db_path: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                           name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert_one_line_error(kcross("import", str(path)), 2,
                          f"{path}: empty file (nothing to import; a LAVA job's log: "
                          "lava-run writes it on standard error, 2> job.log)")
    assert not db_path.exists()


def test_empty_standard_input_is_said_to_be_empty(kcross, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert_one_line_error(kcross("import", "-"), 2, "stdin: empty (nothing to import")
    assert not db_path.exists()


def test_an_end_line_logged_as_feedback_is_the_consoles(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                        tmp_path: Path) -> None:
    """LAVA's ShellLogger logs whole lines: when the monitor's end string matches before the
    line's newline is read, the line comes later as ``feedback``, after the console's next
    lines (CI's lava-run did so once; 2 of 18 jobs on a real server).  The job passed; so does
    the import."""
    def late_done(lines: list[str]) -> list[str]:
        done = next(i for i, line in enumerate(lines) if line.endswith(' done"}'))
        moved = lines.pop(done).replace('"lvl": "target"', '"lvl": "feedback", "ns": "common"')
        stop = next(i for i, line in enumerate(lines) if "monitoring stopped" in line)
        return lines[:stop + 1] + [moved] + lines[stop + 1:]

    log = edited(tmp_path, late_done)
    assert [line for line in log.read_text().splitlines() if line.endswith(' done"}')
            and '"lvl": "feedback"' in line]
    proc = kcross("import", str(log))
    assert proc.returncode == 0, proc.stderr
    assert query(db_path, "SELECT count(*) FROM results") == [(6,)]
