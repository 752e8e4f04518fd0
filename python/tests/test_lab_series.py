"""``kcross lab ARCH --releases`` (issue 23), without QEMU: the releases it names, its
refusals (one line, exit 2, before anything is fetched, built or booted), the controller
with faked boots (one counting boot per kernel, the steps judged, every changed step
explained with each kernel profiled once, the timer's share not explained; with
``--compare-env``, both sides on every release), its JSON (standard output JSON lines
only), and the kernels fetched at once.  The table's whole output is held by
test_views_exact.py (lab-releases*).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import assert_one_line_error
from kcross.errors import UserError
from kcross.lab import explain, jobs, series
from kcross.lab import releases as R
from kcross.lab.kernel import Kernel
from kcross.lab.payload import Payload
from kcross.lab.profile import Profiled
from kcross.lab.request import LabRequest
from test_views_exact import SC, SERIES, counted, profiles

# ---------------------------------------------------------------- the releases named


def test_all_is_every_release_of_the_arch_in_release_order() -> None:
    assert [r.name for r in R.series("all", "x86_64")] == list(R.NAMES)
    assert [r.name for r in R.series("all", "ppc64le")] == [
        "bookworm", "bookworm-backports", "trixie", "sid"]     # no bullseye on ppc64el
    # given in any order, counted in release order
    assert [r.name for r in R.series("sid,bullseye,trixie", "aarch64")] == [
        "bullseye", "trixie", "sid"]


@pytest.mark.parametrize(("text", "arch", "message"), [
    ("trixi,sid", "x86_64", "--releases 'trixi': no such Debian release (did you mean trixie? "),
    ("bullseye,sid", "ppc64le", "--releases bullseye: Debian bullseye has no ppc64le kernel on "
                                "the mirror (its arches: aarch64, x86_64)"),
    ("sid", "x86_64", "--releases 'sid': give two releases or more (a series steps from kernel "
                      "to kernel), or all; one release's kernel is --release sid"),
    ("sid,sid", "x86_64", "--releases 'sid,sid': sid given twice"),
    ("sid,,trixie", "x86_64", "--releases 'sid,,trixie': give release names separated by "
                              "commas, or all"),
    ("ALL", "x86_64", "--releases 'ALL': no such Debian release"),
])
def test_releases_refused(text: str, arch: str, message: str) -> None:
    with pytest.raises(UserError) as e:
        R.series(text, arch)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


@pytest.mark.parametrize(("args", "message"), [
    (["x86_64", "--releases", "trixi,sid"], "--releases 'trixi': no such Debian release (did "
                                            "you mean trixie?"),
    (["ppc64le", "--releases", "bullseye,sid"], "--releases bullseye: Debian bullseye has no "
                                                "ppc64le kernel"),
    (["x86_64", "--releases", "sid"], "give two releases or more"),
    (["x86_64", "--releases", "trixie,sid,trixie"], "trixie given twice"),
    (["x86_64", "--releases", "all", "--trace", "getppid-inline"],
     "--releases all counts each release's Debian kernel, alone or with --compare or "
     "--compare-env: not with --trace"),
    (["x86_64", "--releases", "all", "--release", "sid"], "not with --release"),
    (["x86_64", "--releases", "all", "--kernel", "/no/vmlinuz"], "not with --kernel"),
    (["x86_64", "--releases", "all", "--against", "/no/vmlinuz"], "not with --against"),
    (["x86_64", "--releases", "all", "--mitigations"], "not with --mitigations"),
    (["x86_64", "--releases", "all", "--profile"], "not with --profile"),
    (["x86_64", "--releases", "all", "--peers"], "not with --peers"),
    (["x86_64", "--releases", "all", "--against-source", "/tmp"], "not with --against-source"),
    (["x86_64", "--releases", "all", "--mode", "both"],
     "--releases counts each release's kernel: not with --mode both"),
    (["x86_64", "--releases", "all", "--compare", "sc", "scv"],
     "--compare sc scv: x86_64 has no syscall mechanism 'sc'"),
    (["x86_64", "--releases", "all", "--suite", "nosuch"], "--suite nosuch: no suite 'nosuch'"),
    (["riscv64", "--releases", "all"], "unknown lab arch 'riscv64'"),
])
def test_bad_releases_input_is_one_line_before_anything(kcross, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                        args: list[str], message: str) -> None:
    """Refused before anything is fetched, built or booted: nothing on PATH (no apt, no
    QEMU, no compiler) and no cache made."""
    db = tmp_path / "k.db"
    assert_one_line_error(kcross("lab", *args, "--db", str(db),
                                 extra_env={"PATH": str(tmp_path)}), 2, message)
    assert not db.exists() and not (tmp_path / "home" / ".cache").exists()


def test_the_host_lacking_a_program_is_said_before_anything(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Good input on a host without QEMU: what it lacks, in one line (the explanation's
    gcc among it: --releases explains by default; apt and dpkg: a release's kernel is not
    cached), nothing fetched."""
    proc = kcross("lab", "x86_64", "--releases", "bookworm,sid", "--no-store",
                  extra_env={"PATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")})
    line = assert_one_line_error(proc, 2, "kcross lab x86_64 needs qemu-system-x86_64")
    assert "gcc" in line and "apt-get" in line and not (tmp_path / "c").exists()


def test_explained_by_default_alone_with_explain_on_two_sides() -> None:
    def request(**kw: Any) -> LabRequest:
        return LabRequest(arch="x86_64", mode="counting", timeout=60, releases="all", **kw)

    assert request().explained and not request(explain=False).explained
    assert not request(compare_env=("KCROSS_RSEQ=off",)).explained
    assert request(compare_env=("KCROSS_RSEQ=off",), explain=True).explained
    assert request().release_series() == R.NAMES


# ---------------------------------------------------------------- the series counted


def kernels(tmp_path: Path) -> list[Kernel]:
    """SERIES's kernels as cache entries: a file and a configuration each (the crossing's
    options differ between them: CONFIG_RSEQ on sid only, for the test)."""
    found = []
    for release, version, abi, _ in SERIES:
        boot = tmp_path / release / "boot"
        boot.mkdir(parents=True)
        (boot / f"vmlinux-{abi}").write_bytes(f"kernel {abi}".encode())
        (boot / f"config-{abi}").write_text("CONFIG_RSEQ=y\n" if release == "sid" else
                                            "# CONFIG_RSEQ is not set\n")
        found.append(Kernel("ppc64le", boot / f"vmlinux-{abi}", package=f"linux-image-{abi}",
                            version=version, release=release))
    return found


def fake_boots(monkeypatch: Any, moved: dict[str, float] | None = None
               ) -> tuple[list[Any], list[str]]:
    """The counting boots give the captured sc run shifted by SERIES's moves for the
    kernel's release (and ``moved`` on a side whose settings turn rseq off); the profiled
    boots give the sc profile on bookworm, the scv one elsewhere.  What was booted, kept."""
    sc, scv, _ = profiles()
    shifts = {release: shift for release, _, _, shift in SERIES}
    booted: list[Any] = []
    profiled: list[str] = []

    def count_boot(request: Any, guest: Any, kernel: Any, payload: Any, variant: Any,
                   err: Any, **kw: Any) -> Any:
        booted.append((kernel.release, variant, dict(kw.get("env") or {})))
        shift = dict(shifts[kernel.release])
        if (kw.get("env") or {}).get("KCROSS_RSEQ") == "off":
            for k, v in (moved or {}).items():
                shift[k] = shift.get(k, 0.0) + v
        run = counted(SC, shift)
        run.kernel = kernel
        run.variant = variant
        return run

    def profile(s: Any, *args: Any) -> Profiled:
        profiled.append(s.label)
        p = sc if s.kernel.release == "bookworm" else scv
        return Profiled(counted(SC), {p.name: p}, "kallsyms", 0)

    monkeypatch.setattr(jobs, "count_boot", count_boot)
    monkeypatch.setattr(series, "find_source", lambda *args: Path("/"))
    monkeypatch.setattr(explain, "_profiled", profile)
    return booted, profiled


def run_series(tmp_path: Path, **kw: Any) -> int:
    from kcross.cli._console import consoles

    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, no_store=True,
                         releases="bookworm,trixie,sid", **kw)
    payload = Payload("ppc64le", tmp_path, tmp_path / "h", tmp_path / "i", {}, [])
    out, err = consoles()
    return series.counting(request, request.release_series(), kernels(tmp_path), payload,
                           out, err)


def test_each_kernel_counted_once_each_changed_step_explained(tmp_path: Path,
                                                              monkeypatch: Any,
                                                              capsys: Any) -> None:
    """bookworm → trixie (getppid-inline +38; getppid-dispatch +0.4: the timer's share) →
    sid (getppid-inline -13, stat-root +120, getppid-dispatch -0.4): one counting boot per
    kernel, both steps explained, each kernel profiled once (trixie is side B of one step
    and side A of the next), the crossing's options that differ named."""
    booted, profiled = fake_boots(monkeypatch)
    assert run_series(tmp_path) == 0
    text = capsys.readouterr().out
    assert sorted(b[0] for b in booted) == ["bookworm", "sid", "trixie"]   # two at a time
    assert all(b[1] is None for b in booted)        # a plain --release run's variant
    assert sorted(profiled) == ["bookworm", "sid", "trixie"]
    assert "Why 1 row changed, bookworm → trixie" in text
    assert "Why 2 rows changed, trixie → sid" in text
    assert "CONFIG_RSEQ" in text                     # trixie → sid: not set → y
    assert "getppid-dispatch (bookworm → trixie), getppid-dispatch (trixie → sid)" in text
    assert "3 of 72 changed" in text


def test_json_is_json_alone_a_record_per_row_per_kernel(tmp_path: Path, monkeypatch: Any,
                                                        capsys: Any) -> None:
    fake_boots(monkeypatch)
    assert run_series(tmp_path, json_output=True) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows = [r for r in records if r["type"] == "lab-release-row"]
    explained = [r for r in records if r["type"] == "lab-explanation"]
    assert len(records) == len(rows) + len(explained)
    assert len(rows) == 39 * 3 and len({r["row"] for r in rows}) == 39   # 3 rows skipped
    inline = [r for r in rows if r["row"] == "syscall/getppid-inline"]
    assert [r["release"] for r in inline] == ["bookworm", "trixie", "sid"]
    assert inline[0]["step"] is None
    assert inline[1]["step"]["against"] == {"release": "bookworm", "side": None}
    assert inline[1]["step"]["path_changed"] and not inline[1]["step"]["timer_share"]
    assert inline[1]["step"]["verdict"]["method"] == "exact"
    assert inline[1]["step"]["verdict"]["p"] is None          # never a p-value
    dispatch = [r for r in rows if r["row"] == "syscall/getppid-dispatch"]
    assert dispatch[1]["step"]["timer_share"] and not dispatch[1]["step"]["path_changed"]
    assert [(e["a"], e["b"], e["row"]) for e in explained] == [
        ("bookworm", "trixie", "syscall/getppid-inline"),
        ("trixie", "sid", "syscall/getppid-inline"), ("trixie", "sid", "syscall/stat-root")]
    assert explained[1]["config"]["changes"][0]["option"] == "CONFIG_RSEQ"
    rdpid = [r for r in rows if r["row"] == "cpuid/rdpid"]
    assert all(r["figure"] is None and r["reason"].startswith("skipped: ") for r in rdpid)


def test_no_explain_profiles_nothing(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    _, profiled = fake_boots(monkeypatch)
    assert run_series(tmp_path, explain=False) == 0
    assert profiled == [] and "Why " not in capsys.readouterr().out


def test_compare_env_counts_both_sides_on_every_release(tmp_path: Path, monkeypatch: Any,
                                                        capsys: Any) -> None:
    """--releases with --compare-env KCROSS_RSEQ=off: two counting boots per kernel (B with
    the setting), each release's B judged against its A; not explained without --explain,
    each release's sides explained with it."""
    booted, profiled = fake_boots(monkeypatch, {"kc_cpu": 60.0})
    assert run_series(tmp_path, compare_env=("KCROSS_RSEQ=off",), json_output=True) == 0
    assert sorted(((b[0], b[2].get("KCROSS_RSEQ")) for b in booted), key=str) == sorted([
        ("bookworm", None), ("bookworm", "off"), ("trixie", None), ("trixie", "off"),
        ("sid", None), ("sid", "off")], key=str)           # the boots run two at a time
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kc = [r for r in rows if r["row"] == "cpuid/kc_cpu"]
    assert [(r["release"], r["side"]) for r in kc] == [
        (release, side) for release, *_ in SERIES for side in ("A", "B")]
    assert [r["step"]["against"] if r["step"] else None for r in kc][:2] == [
        None, {"release": "bookworm", "side": "A"}]
    assert all(r["step"]["verdict"]["median_b"] - r["step"]["verdict"]["median_a"] ==
               pytest.approx(60.0) for r in kc if r["side"] == "B")
    assert profiled == [] and {r["type"] for r in rows} == {"lab-release-row"}
    assert run_series(tmp_path / "x", compare_env=("KCROSS_RSEQ=off",), explain=True) == 0
    assert sorted(profiled) == sorted(f"{r} {s}" for r, *_ in SERIES for s in ("A", "B"))
    assert "Why 1 row changed, sid A → sid B" in capsys.readouterr().out


def test_the_kernels_are_fetched_at_once(monkeypatch: Any) -> None:
    """Every release's kernel fetched in a thread of its own, at the same time (each release
    has its cache directory and lock): three fetches that wait for each other finish."""
    from kcross.cli._console import consoles

    arrived = threading.Barrier(3, timeout=10)
    asked: list[str] = []

    def resolve(arch: str, path: Any, *, refresh: bool, err: Any, release: str) -> Kernel:
        asked.append(release)
        arrived.wait()
        return Kernel(arch, Path(f"/{release}"), release=release)

    monkeypatch.setattr(series, "resolve_kernel", resolve)
    request = LabRequest(arch="x86_64", mode="counting", timeout=60, releases="all")
    _, err = consoles()
    found = series.fetch_kernels(request, ["bookworm", "trixie", "sid"], err)
    assert [k.release for k in found] == ["bookworm", "trixie", "sid"]
    assert sorted(asked) == ["bookworm", "sid", "trixie"]


def test_compare_counts_both_mechanisms_on_every_release(tmp_path: Path, monkeypatch: Any,
                                                        capsys: Any) -> None:
    """--releases with --compare sc scv: each release's kernel with each mechanism forced,
    the sides labelled by their mechanisms."""
    booted, _ = fake_boots(monkeypatch)
    assert run_series(tmp_path, compare=("sc", "scv"), json_output=True) == 0
    assert sorted((b[0], b[2]["KCROSS_SYSCALL"]) for b in booted) == sorted(
        (release, m) for release, *_ in SERIES for m in ("sc", "scv"))   # two at a time
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(r["side"], (r["step"] or {}).get("against", {}).get("side")) for r in rows} == {
        ("sc", None), ("scv", "sc")}


@pytest.mark.parametrize("columns", [109, 100, 90, 80])
def test_the_series_table_cuts_no_cell_in_a_narrow_console(columns: int) -> None:
    """The table of three kernels (SERIES) in a console narrower than it: every figure, step
    and note whole (its note column wraps, then the names fold), no line wider than the
    console (before, below 110 columns: "ski…" notes, below 86 the note column gone)."""
    from kcross.views.series import series_table
    from kcross.views.table import terminal
    from test_views_exact import release_series, rendered

    s = series.series_of("ppc64le", release_series())
    table = series_table(series.title(s), [c.column() for c in s.runs], s.steps, s.lines())
    text = rendered(lambda out: out.print(terminal(table)), columns)
    assert "…" not in text
    assert max(map(len, text.splitlines())) <= columns
    words = " ".join(text.replace("|", " ").split())
    for word in ("4,015.0", "+120.0", "9,073.4", "instruction", "RDPID"):
        assert word in words, word


def test_a_step_has_thousands_separators() -> None:
    """B − A of 1,200 instructions: ``+1,200.0``, as every figure of the vocabulary (before:
    +1200.0 beside 3,895.0)."""
    from kcross.judge.categories import Category
    from kcross.judge.verdict import EXACT, Judgement
    from kcross.views.series import step_cell

    j = Judgement("syscall/stat-root", "instructions/op", None, None,  # type: ignore[arg-type]
                  Category.HIGHER, method=EXACT, median_a=3895.0, median_b=5095.0,
                  ratio=5095.0 / 3895.0)
    assert step_cell(j) == "+1,200.0"
