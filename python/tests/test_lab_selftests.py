"""The kernel's own selftests as lab peers (issue 16), without booting: their output parsers
on a real guest's console (python/tests/data/selftests, captured by
kcross.lab.peers.peer_figures in the ppc64le counting guest), the figures set beside
kcross's rows and the agreement, the source package's fetch and cache (a fake registry
serving a small linux-source .deb: a cut download is refused, a cut cache entry fetched
again), the build's cache (a fake cross compiler), and --peers' refusals."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import assert_one_line_error
from kcross.errors import LabError
from kcross.judge import agreement
from kcross.lab import linux_source as LS
from kcross.lab import peers as PE
from kcross.lab import selftests as ST
from kcross.lab.initramfs import CommandResult
from test_lab_kernel import fake_registry, make_deb

CONSOLE = Path(__file__).parent / "data" / "selftests" / "ppc64le-console.json"


def captured() -> dict[str, CommandResult]:
    """The real guest's results, by plan command."""
    data = json.loads(CONSOLE.read_text())
    return {c["command"]: CommandResult(n, c["command"], c["status"], c["output"])
            for n, c in enumerate(data["commands"], 1)}


def command(peer: ST.Peer) -> str:
    return " ".join([ST.guest_path(peer.program), *peer.args])


def peer(name: str) -> ST.Peer:
    return next(p for p in ST.PEERS if p.name == name)


# ---------------------------------------------------------------- the parsers

def test_every_peer_of_ppc64le_has_a_captured_run_and_parses_as_passed() -> None:
    runs = captured()
    for p in ST.peers("ppc64le", "all"):
        figures = ST.parse(p, runs[command(p)])
        assert figures.passed, (p.name, figures.problem)


def test_null_syscall_ns_per_call_is_instructions_per_call() -> None:
    p = peer("null_syscall")
    figures = ST.parse(p, captured()[command(p)])
    assert figures.per_op == 360.91
    assert figures.reading == "360.91 ns, 360.91 cycles per call"


def test_context_switch_takes_the_last_second() -> None:
    p = peer("context_switch pipe")
    result = captured()[command(p)]
    figures = ST.parse(p, result)
    assert ST.parse_context_switch(result.output) == [111950, 111988]
    assert figures.per_op == pytest.approx(1e9 / 111988)


def test_param_test_counts_threads_and_aborts() -> None:
    p = peer("param_test increment")
    figures = ST.parse(p, captured()[command(p)])
    assert (figures.threads, figures.aborts, p.ops) == (6, 0, 6000)
    assert figures.reading == "6000 operations checked, 0 rseq aborts"


@pytest.mark.parametrize("name, status, output, problem", [
    ("null_syscall", "0", ["garbage"], "no 'ns ... cycles' line"),
    ("null_syscall", "SIGSEGV", ["half a line"], "exit SIGSEGV: half a line"),
    ("context_switch yield", "0", ["Using threads with yield on cpus 0/0 touching", "3"],
     "fewer than two seconds"),
    ("context_switch yield", "0", ["Using threads with yield on cpus 0/0 touching", "3", "0"],
     "no switch in its last second"),
    ("null_syscall", "1", ["the peer's failure message " * 10],
     "exit 1: the peer's failure message the peer's failure message"),
    ("context_switch yield", "0", ["1", "2"], "no 'Using ... on cpus' line"),
    ("param_test spinlock", "0",
     ["tid 1: number of rseq abort: 0, signals delivered: 0"] * 5, "5 of 6 threads reported"),
    ("param_test list", "134", ["param_test: Assertion `sum == expected_sum' failed."],
     "exit 134: param_test: Assertion"),
    ("basic_percpu_ops_test", "0", ["spinlock"], "no 'percpu_list' line"),
])
def test_a_failed_or_garbled_run_is_not_passed(name: str, status: str, output: list[str],
                                               problem: str) -> None:
    figures = ST.parse(peer(name), CommandResult(1, "x", status, output))
    assert not figures.passed
    assert figures.problem is not None and figures.problem.startswith(problem)
    assert figures.per_op is None


def test_the_table_gives_each_arch_its_peers() -> None:
    assert [p.name for p in ST.peers("x86_64")] == ["param_test spinlock", "param_test list",
                                                    "param_test increment"]
    assert [p.name for p in ST.left_out("aarch64")] == ["basic_percpu_ops_test"]
    assert "basic_percpu_ops_test" in [p.name for p in ST.peers("aarch64", "all")]
    assert "null_syscall" in [p.name for p in ST.programs("ppc64le")]
    assert "null_syscall" not in [p.name for p in ST.programs("x86_64")]
    assert {"aarch64", "x86_64"} == set(ST.NO_PEER)
    assert ST.plan("ppc64le")[0] == ["/lab/selftests/null_syscall"]


# ---------------------------------------------------------------- beside kcross

def record(suite: str, name: str, per_op: float, *, loop: float = 1.0, status: str = "ok",
           switches: int | None = None) -> dict[str, Any]:
    """A schema-2 result whose samples are per_op + loop and whose empty loop is loop."""
    r: dict[str, Any] = {"type": "result", "schema": 2, "suite": suite, "name": name,
                         "status": status, "samples": [per_op + loop] * 11,
                         "overhead": {"samples": [loop] * 11}}
    if switches:
        r["switches_per_op"] = switches
    return r


def counted(*records: dict[str, Any]) -> Any:
    return SimpleNamespace(stream=SimpleNamespace(results=list(records)))


KCROSS = counted(
    record("syscall", "getppid-libc-syscall", 364.0), record("syscall", "gettid-inline", 397.0),
    record("syscall", "getppid-inline", 400.0),
    record("ctxsw", "yield-same-cpu", 6433.0, switches=2),
    record("ctxsw", "yield-same-cpu-vec", 6910.0, switches=2),
    record("ctxsw", "pipe-threads-same-cpu", 18200.0, switches=2),
    record("ctxsw", "futex-same-cpu", 13650.0, switches=2),
    record("percpu", "lock-rseq", 56.0), record("percpu", "list-rseq", 53.0),
    record("percpu", "add-rseq", 14.0, status="failed"))


def test_null_syscall_beside_kcross_adds_the_loop_and_gettid_against_getppid() -> None:
    p = peer("null_syscall")
    row = PE.row(KCROSS, p, captured()[command(p)])
    assert row.ours == pytest.approx(364.0 + 397.0 - 400.0 + 1.0)
    assert row.judged.agreement is agreement.Agreement.AGREE
    assert row.judged.statement == "agree: -1.1 instructions (-0.3%), within the tolerance of 1%"
    assert "empty loop 1.0" in row.ours_how


def test_a_switch_peer_beyond_its_tolerance_differs_and_says_why() -> None:
    p = peer("context_switch yield")
    row = PE.row(KCROSS, p, captured()[command(p)])
    assert row.ours == pytest.approx(6433.0 / 2)
    assert row.judged.agreement is agreement.Agreement.DIFFER
    assert row.as_json()["differs_because"] == p.differs_because
    vec = peer("context_switch yield fp+vector")
    assert PE.row(KCROSS, vec, captured()[command(vec)]).judged.agreement \
        is agreement.Agreement.AGREE


def test_rseq_peers_agree_when_both_pass_and_differ_when_one_fails() -> None:
    runs = captured()
    lock = PE.row(KCROSS, peer("param_test spinlock"), runs[command(peer("param_test spinlock"))])
    assert lock.judged.agreement is agreement.Agreement.AGREE and lock.ours == 56.0
    inc = PE.row(KCROSS, peer("param_test increment"),
                 runs[command(peer("param_test increment"))])
    assert inc.judged.statement.startswith("differ: kcross's row is not ok")


def test_rows_not_counted_are_not_judged() -> None:
    p = peer("null_syscall")
    row = PE.row(counted(record("syscall", "gettid-inline", 397.0)), p, captured()[command(p)])
    assert row.judged.agreement is agreement.Agreement.UNJUDGED
    assert row.ours is None and row.ours_how.startswith("syscall/getppid-libc-syscall not counted")


def test_the_agreement_rule() -> None:
    assert agreement.figures(101.0, 100.0, 0.01, "x").agreement is agreement.Agreement.AGREE
    assert agreement.figures(101.5, 100.0, 0.01, "x").agreement is agreement.Agreement.DIFFER
    assert agreement.figures(None, 100.0, 0.01, "x").agreement is agreement.Agreement.UNJUDGED
    assert agreement.checks(False, False, "w").statement == "differ: both fail (w)"
    assert agreement.checks(True, None, "w").agreement is agreement.Agreement.UNJUDGED


# ---------------------------------------------------------------- the source package

def tree_xz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"linux-source-6.1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


TREE = {
    "Makefile": b"VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 999\n",
    "tools/testing/selftests/kselftest.h": b"/* k */\n",
    "tools/testing/selftests/powerpc/harness.c": b"/* h */\n",
    "tools/testing/selftests/powerpc/utils.c": b"/* u */\n",
    "tools/testing/selftests/powerpc/include/utils.h": b"/* i */\n",
    "tools/testing/selftests/powerpc/benchmarks/null_syscall.c": b"int main(void){return 0;}\n",
    "tools/testing/selftests/rseq/rseq.c": b"/* r */\n",
    "tools/include/linux/compiler.h": b"/* c */\n",
    "tools/perf/perf.c": b"/* not wanted */\n",
    "Documentation/x.rst": b"not wanted\n",
}

FAKE_APT_CACHE = """#!/bin/sh
echo "apt-cache $*" >> "$FAKE_LOG"
case "$3" in
  linux-source-6.1|linux-source-6.1=6.1.999-1)
    printf 'Package: linux-source-6.1\\nVersion: 6.1.999-1\\nSize: 1\\nSHA256: %s\\n\\n' \\
    "${FAKE_INDEX_SHA256:-$(sha256sum "$FAKE_DEB" | cut -d' ' -f1)}" ;;
  *) exit 0 ;;
esac
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A fake registry (apt-get, apt-cache on PATH, the real dpkg-deb) serving a small
    linux-source-6.1 .deb whose kernel tree has the wanted files and others."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb not installed")
    root = tmp_path / "pkg"
    (root / "usr" / "src").mkdir(parents=True)
    (root / "usr" / "src" / "linux-source-6.1.tar.xz").write_bytes(tree_xz(TREE))
    deb = make_deb(root, tmp_path / "linux-source-6.1_6.1.999-1_all.deb", "linux-source-6.1",
                   "all")
    return {**fake_registry(tmp_path, monkeypatch, deb, FAKE_APT_CACHE), "deb": deb}


def fetch(reg: dict[str, Path], version: str | None = "6.1.999-1",
          said: list[str] | None = None) -> LS.Source:
    return LS.fetch_source("ppc64le", version, ST.WANTED, cache_dir=reg["cache"],
                           etc_apt=reg["etc"], say=(said.append if said is not None else None))


def test_fetch_extracts_only_the_wanted_files_then_reuses_them(registry: dict[str, Path]) -> None:
    src = fetch(registry)
    assert (src.package, src.version, src.kernel_release) == ("linux-source-6.1", "6.1.999-1",
                                                             "6.1.999")
    assert src.deb_sha256 == hashlib.sha256(registry["deb"].read_bytes()).hexdigest()
    got = sorted(str(p.relative_to(src.tree)) for p in src.tree.rglob("*") if p.is_file())
    assert got == sorted(n for n in TREE if not n.startswith(("tools/perf", "Documentation")))
    assert not list((registry["cache"] / LS.CACHE_DIR).glob("*/*.deb"))   # the .deb is not kept
    registry["log"].unlink()
    assert fetch(registry) == src
    assert not registry["log"].exists()        # from the cache: the registry is not asked


def test_a_cut_cache_entry_is_fetched_again(registry: dict[str, Path]) -> None:
    src = fetch(registry)
    victim = src.tree / "tools/testing/selftests/rseq/rseq.c"
    victim.write_bytes(victim.read_bytes()[:3])
    assert "cut or changed" in (LS.damage(src.tree.parent, ST.WANTED) or "")
    assert LS.cached("6.1.999-1", ST.WANTED, cache_dir=registry["cache"]) is None
    said: list[str] = []
    again = fetch(registry, said=said)
    assert any("not the package's files" in line and "rseq.c" in line for line in said)
    assert " download linux-source-6.1=6.1.999-1" in registry["log"].read_text()
    assert victim.read_bytes() == TREE["tools/testing/selftests/rseq/rseq.c"]
    assert again.tree == src.tree and LS.damage(src.tree.parent, ST.WANTED) is None


def test_a_cut_download_is_refused_and_nothing_cached(registry: dict[str, Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    good = registry["deb"].read_bytes()
    monkeypatch.setenv("FAKE_INDEX_SHA256", hashlib.sha256(good).hexdigest())
    registry["deb"].write_bytes(good[: len(good) // 2])          # cut in transit
    with pytest.raises(LabError, match="is not the one the registry's index names"):
        fetch(registry)
    assert [p.name for p in (registry["cache"] / LS.CACHE_DIR).iterdir()] == []
    registry["deb"].write_bytes(good)                            # the next try gets it whole
    assert fetch(registry).version == "6.1.999-1"


def test_a_version_the_registry_lacks_takes_the_current_and_says_so(
        registry: dict[str, Path]) -> None:
    said: list[str] = []
    assert fetch(registry, "6.1.5-1", said).version == "6.1.999-1"
    assert any("has no linux-source-6.1 6.1.5-1" in line for line in said)
    assert LS.source_package(None) == "linux-source-6.1"
    assert LS.source_package("6.12.3-1") == "linux-source-6.12"


def test_a_package_without_the_tree_is_one_line(registry: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    make_deb(tmp_path / "empty", registry["deb"], "linux-source-6.1", "all")
    with pytest.raises(LabError, match=r"holds no usr/src/linux-source-\*\.tar\.xz"):
        fetch(registry)


# ---------------------------------------------------------------- the build

FAKE_GCC = """#!/bin/sh
echo "gcc $*" >> "$FAKE_LOG"
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
echo built > "$out"
"""


def test_the_build_is_static_cached_and_redone_when_a_program_changed(
        registry: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    src = fetch(registry)
    gcc = registry["log"].parent / "bin" / "powerpc64le-linux-gnu-gcc"
    gcc.write_text(FAKE_GCC)
    gcc.chmod(0o755)
    registry["log"].unlink()
    built = ST.build("ppc64le", src, cache_dir=registry["cache"])
    assert sorted(built.programs) == sorted(p.name for p in ST.programs("ppc64le"))
    assert sorted(built.files()) == sorted(f"/lab/selftests/{n}" for n in built.programs)
    lines = registry["log"].read_text().splitlines()
    assert len(lines) == 4 and all(" -static " in ln for ln in lines)
    assert any("-mabi=altivec" in ln and "context_switch.c" in ln for ln in lines)
    registry["log"].unlink()
    assert ST.build("ppc64le", src, cache_dir=registry["cache"]) == built
    assert not registry["log"].exists()                 # cached
    built.programs["param_test"].write_text("changed")
    ST.build("ppc64le", src, cache_dir=registry["cache"])
    assert len(registry["log"].read_text().splitlines()) == 4     # rebuilt


# ---------------------------------------------------------------- the option

@pytest.mark.parametrize("args, message", [
    (["ppc64le", "--peers", "--compare", "sc", "scv"], "--peers runs the kernel's "
     "selftests beside one counting run of the rows they compare with: not with --compare"),
    (["ppc64le", "--peers", "--bench", "syscall/*"], "not with --bench"),
    (["ppc64le", "--peers", "--mitigations"], "not with --mitigations"),
    (["ppc64le", "--mode", "correctness", "--peers"], "--peers: counting-mode options"),
    # --peers' old name still works (hidden from the help), as scripts use it
    (["ppc64le", "--crosscheck", "--mitigations"], "--peers runs the kernel's selftests"),
])
def test_peers_refusals_are_one_line_before_anything(kcross, db_path: Path,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path, args: list[str],
                                                         message: str) -> None:
    assert_one_line_error(kcross("lab", *args), 2, message)
    assert not db_path.exists()
    assert not (tmp_path / "home" / ".cache").exists()


@pytest.mark.parametrize("option", ["--peers", "--crosscheck"])
def test_peers_takes_only_all(kcross, option: str) -> None:  # type: ignore[no-untyped-def]
    proc = kcross("lab", "ppc64le", option, "some")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'some' is not one of " in proc.stderr


def test_the_help_names_peers_not_its_old_name(kcross) -> None:  # type: ignore[no-untyped-def]
    """``--crosscheck`` is ``--peers``' old name, kept working and left out of the help."""
    proc = kcross("lab", "ppc64le", "--help")
    assert proc.returncode == 0
    assert "--peers [all]" in proc.stdout and "--crosscheck" not in proc.stdout


def test_a_kernel_of_no_version_takes_the_newest_cached_source(registry: dict[str, Path]) -> None:
    src = fetch(registry)
    registry["log"].unlink()
    assert fetch(registry, None) == src             # --kernel PATH: from the cache
    assert not registry["log"].exists()


# ---------------------------------------------------------------- the view

def test_the_table_shows_the_peers_beside_kcross_with_the_agreement() -> None:
    from kcross.views.peers import peers_table
    from kcross.views.table import terminal
    from rich.console import Console

    runs = captured()
    rows = [PE.row(KCROSS, p, runs[command(p)]) for p in ST.peers("ppc64le")]
    source = LS.Source("linux-source-6.1", "6.1.176-1", Path("/x"), "6.1.176", "0" * 64)
    checked = PE.PeersBeside("ppc64le", KCROSS, source, rows, ST.left_out("ppc64le"))
    console = Console(width=250, record=True)
    console.print(terminal(peers_table(checked, "title")))
    text = console.export_text()
    null = next(line for line in text.splitlines() if line[1:].startswith(" null_syscall "))
    assert "360.9" in null and "362.0" in null and "agree: -1.1 instructions" in null
    assert "selftests from Debian linux-source-6.1 6.1.176-1 (kernel tree 6.1.176)" in text
    assert "context_switch yield differs: with --no-fp" in text
    assert "not run: basic_percpu_ops_test" in text
    record = checked.as_json()
    assert record["type"] == "lab-crosscheck" and record["source"]["version"] == "6.1.176-1"
    assert record["peers"][0]["per_op"] == 360.91 and record["peers"][0]["agreement"] == "agree"


def test_a_row_without_figures_says_why() -> None:
    """Statistics never fail silently: a kcross row the rule cannot summarize is named
    with the reason, and the peer is not judged against it."""
    broken = record("ctxsw", "pipe-threads-same-cpu", 18200.0, switches=2)
    del broken["overhead"]
    p = peer("context_switch pipe")
    row = PE.row(counted(broken), p, captured()[command(p)])
    assert row.ours is None and "no empty-loop samples" in row.ours_how
    assert row.judged.agreement is agreement.Agreement.UNJUDGED


def test_only_the_slow_peer_adds_host_time() -> None:
    assert ST.host_seconds("ppc64le") == 0.0
    assert ST.host_seconds("ppc64le", "all") == 900.0


def test_a_long_failure_is_cut_at_a_word() -> None:
    figures = ST.parse(peer("null_syscall"),
                       CommandResult(1, "x", "1", ["the peer's failure message " * 10]))
    assert figures.problem is not None and figures.problem.endswith(" failure…")
