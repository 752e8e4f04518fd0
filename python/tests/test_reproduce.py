"""``kcross reproduce``: the table of published experiments, the native part with the fake
harness, the lab part's figures from captured lab runs (no boot), and bad input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from conftest import assert_one_line_error, captured, query
from kcross.judge.categories import Category
from kcross.reproduce import experiments as ex
from kcross.reproduce import measure
from kcross.reproduce.outcome import NOT_PROFILED, outcomes

DATA = Path(__file__).with_name("data")
HARNESS_SOURCES = Path(__file__).resolve().parents[2] / "harness" / "bench"


# ---------------------------------------------------------------- the table

def test_every_experiment_names_its_source_unit_conditions_and_what_differs() -> None:
    assert len(ex.EXPERIMENTS) >= 6
    for e in ex.EXPERIMENTS:
        for text in (e.name, e.title, e.source, e.unit, e.conditions, e.differs, e.seconds):
            assert text.strip(), e.name
        assert e.native or e.labs, e.name
        assert set(e.labs) <= set(ex.LAB_ARCHES)
        keys = [f.key for f in e.figures]
        assert len(keys) == len(set(keys)), e.name
        for c in e.changes:
            e.figure(c.a), e.figure(c.b)
        for key in (*e.ministat, *([e.profile] if e.profile else [])):
            e.figure(key)
        for f in e.figures:
            for o in f.ours:
                assert o.variant == ex.DEFAULT or o.variant in ex.VARIANTS
                assert o.arch in (None, *ex.LAB_ARCHES)


def test_every_published_figure_of_the_issue_is_in_the_table() -> None:
    """The figures issue 16 and the reference publish, each once, in one table."""
    published = {f.published for e in ex.EXPERIMENTS for f in e.figures}
    for value in (482, 346, 151, 379, 253, 374, 268, 3619, 3535, 5.5, 45, 15.3, 2.0, 53.4,
                  28.6, 0.8, 13.0, 16.6, 53.9):
        assert value in published, value
    changes = [c.published for e in ex.EXPERIMENTS for c in e.changes if c.published]
    assert any("-12.2% +/- 3.1%" in c for c in changes)
    assert all(e.unit for e in ex.EXPERIMENTS)


def _registry_names() -> set[str]:
    """Every benchmark a harness of some arch may list: x86-64's captured list, and the
    per-arch rows of the sources (spin hints, getppid-inline-alt)."""
    names = {f"{r['suite']}/{r['name']}" for r in captured("list") if r.get("type") == "bench"}
    for path in HARNESS_SOURCES.glob("*.c"):
        suite = path.stem
        text = path.read_text()
        names |= {f"{suite}/{n}" for n in re.findall(r'\{ "([a-z0-9_-]+)"', text)}
        names |= {f"{suite}/hint-{n}" for n in re.findall(r'X\(H_\w+, "([a-z0-9-]+)"', text)}
        names |= {f"{suite}/sibling-{n}" for n in re.findall(r'X\(H_\w+, "([a-z0-9-]+)"', text)}
    return names


def test_every_benchmark_named_is_one_the_harness_has() -> None:
    known = _registry_names()
    for e in ex.EXPERIMENTS:
        for bench in e.benches():
            assert bench in known, (e.name, bench)


def test_an_unknown_name_lists_the_experiments() -> None:
    with pytest.raises(Exception, match="no experiment 'nope' .*power-entry"):
        ex.chosen("nope")
    assert ex.chosen("glibc-scv")[0].name == "glibc-scv"
    assert ex.chosen(None) == ex.EXPERIMENTS


def test_the_plan_boots_each_variant_once_with_the_suites_it_needs() -> None:
    plan = measure.plan(ex.EXPERIMENTS, native=True, arches=("ppc64le", "x86_64"))
    boots = {(b.arch, b.variant): b.suites for b in plan.boots}
    assert set(boots) == {("ppc64le", "default"), ("ppc64le", "sc"), ("ppc64le", "power8"),
                          ("x86_64", "default")}
    assert boots[("ppc64le", "sc")] == ("syscall",)
    assert set(boots[("ppc64le", "default")]) == {"syscall", "ctxsw", "spin", "percpu", "cpuid"}
    assert "syscall" not in boots[("x86_64", "default")]   # only POWER's experiments use it
    native = dict(plan.native)
    assert native["ctxsw"] == "ctxsw/yield-same-cpu*"      # not the whole ctxsw suite
    assert "syscall" not in native


# ---------------------------------------------------------------- the lab part, from captures

def _lab(path: str, variant: str) -> measure.Measured:
    records = [json.loads(line) for line in (DATA / path).read_text().splitlines()]
    fp = records[0]
    return measure.Measured("ppc64le", variant, fp,
                            [r for r in records if r["type"] == "result"], run_id=7)


def test_power_entry_sets_sc_and_scv_beside_the_published_cycles() -> None:
    (o,) = outcomes(ex.chosen("power-entry"), [_lab("lab-ppc64le-scv.jsonl", "default")])
    (place,) = o.places
    rows = {r.figure.key: r for r in place.rows}
    assert rows["sc"].published == 482 and rows["scv"].published == 346
    assert 390 < rows["sc"].cell.value < 410 and 340 < rows["scv"].cell.value < 360
    # instructions against cycles: no ratio, and the row says why
    assert rows["sc"].ratio is None and rows["scv"].ratio is None
    assert rows["sc"].no_ratio == "cycles vs instructions: no ratio"
    assert rows["kernel"].cell.value is None and rows["kernel"].cell.reason == NOT_PROFILED
    (change,) = place.changes
    assert change.figures == (482.0, 346.0) and change.published == ""
    assert change.judgement is not None and change.judgement.category is Category.LOWER
    assert change.judgement.exact          # lab counts: by value, no p-value
    assert change.judgement.p is None
    assert "instructions, not cycles" in place.machine


def test_the_profile_hook_is_the_one_place_its_figure_enters(monkeypatch) -> None:
    """A figure the hook gives is the row's, beside the talk's 151; none (a stored run:
    profiles are not stored) says why (the boot is faked: no QEMU here)."""
    import dataclasses

    plan = measure.plan(ex.chosen("power-entry"), native=False, arches=("ppc64le",))
    (boot,) = plan.boots
    assert boot.profile == ("syscall/getppid-inline",)
    m = _lab("lab-ppc64le-scv.jsonl", "default")
    profiled = dataclasses.replace(m, profile={"syscall/getppid-inline": 151.0})
    (o,) = outcomes(ex.chosen("power-entry"), [profiled])
    row = next(r for r in o.places[0].rows if r.figure.key == "kernel")
    assert row.cell.value == 151.0 and row.ratio == 1.0   # instructions vs instructions
    (o,) = outcomes(ex.chosen("power-entry"), [m])
    row = next(r for r in o.places[0].rows if r.figure.key == "kernel")
    assert row.cell.value is None and row.cell.reason == NOT_PROFILED


def test_glibc_scv_needs_its_power8_and_sc_boots_and_says_what_is_missing() -> None:
    default = _lab("lab-ppc64le-scv.jsonl", "default")
    sc = _lab("lab-ppc64le-sc.jsonl", "sc")
    (o,) = outcomes(ex.chosen("glibc-scv"), [default, sc])
    rows = {r.figure.key: r for r in o.places[0].rows}
    assert rows["stat-sc"].cell.value is not None and rows["stat-sc"].cell.variant == "sc"
    assert rows["getpid-sc"].cell.value is None
    assert rows["getpid-sc"].cell.reason == "no power8 boot"
    changes = {c.a: c for c in o.places[0].changes}
    assert changes["getpid() through glibc, sc"].judgement is None
    assert changes["stat, sc"].judgement is not None


def test_an_experiment_not_measured_anywhere_says_where_and_why() -> None:
    (o,) = outcomes(ex.chosen("rseq-percpu"), [], skipped={"native": "--lab-only"})
    assert o.places == ()
    assert "native: --lab-only" in o.missing and "x86_64: not measured" in o.missing


def test_a_stored_lab_run_of_another_variant_is_not_read_as_ours() -> None:
    default = _lab("lab-ppc64le-scv.jsonl", "default")
    fp = dict(default.fingerprint)
    assert measure.from_stored(fp, default.results, 1, "repro") is None   # KCROSS_SYSCALL=scv
    fp["lab"] = {**fp["lab"], "variant": "reproduce sc"}
    assert measure.from_stored(fp, default.results, 1, "repro").variant == "sc"  # type: ignore[union-attr]
    fp["lab"] = {**fp["lab"], "variant": None}
    assert measure.from_stored(fp, default.results, 1, "repro").variant == "default"  # type: ignore[union-attr]
    # a plain kcross lab run (its own -cpu, --append, kernel): never reproduce's boot
    assert measure.from_stored(fp, default.results, 1, "lab") is None


def test_the_ratio_is_only_of_figures_of_one_kind() -> None:
    from kcross.reproduce.outcome import Cell, _ratio, unit_kind

    assert unit_kind("ns/op") == unit_kind("s") == "time"
    assert unit_kind("instructions/op") == unit_kind("instructions") == "instructions"
    rseq = ex.chosen("rseq-percpu")[0]
    counter = rseq.figure("counter-rseq")                       # 2.0 ns/op published
    assert _ratio(rseq, counter, Cell(3.0, "ns/op", "percpu/add-rseq", "ok")) == (1.5, "")
    assert _ratio(rseq, counter, Cell(40.0, "instructions/op", "percpu/add-rseq", "ok")) == \
        (None, "ns vs instructions: no ratio")
    power = ex.chosen("power-entry")[0]
    assert _ratio(power, power.figure("sc"), Cell(400.0, "instructions/op", None, "ok")) == \
        (None, "cycles vs instructions: no ratio")
    assert _ratio(power, power.figure("kernel"), Cell(302.0, "instructions/op", None, "ok")) \
        == (2.0, "")
    spin = ex.chosen("powernv-spin")[0]                         # a whole loop's seconds
    ratio, why = _ratio(spin, spin.figure("sibling-plain"), Cell(3.0, "ns/op", None, "ok"))
    assert ratio is None and "no ratio" in why
    assert _ratio(rseq, counter, Cell(None, "ns/op", None, "skipped")) == (None, "")


def test_the_view_says_why_a_row_has_no_ratio() -> None:
    import io

    from kcross.views.reproduce import print_outcome, record
    from rich.console import Console

    (o,) = outcomes(ex.chosen("power-entry"), [_lab("lab-ppc64le-scv.jsonl", "default")])
    buffer = io.StringIO()
    print_outcome(Console(file=buffer, width=250), o)
    line = next(x for x in buffer.getvalue().splitlines() if "482 cycles" in x)
    assert "cycles vs instructions: no ratio" in line
    figures = {f["key"]: f for f in record(o)["places"][0]["figures"]}
    assert figures["sc"]["ratio"] is None
    assert figures["sc"]["no_ratio"] == "cycles vs instructions: no ratio"


def _stored(tmp_path: Path, name: str, variant: str | None, source: str,
            started: str) -> int:
    """The ppc64le capture stored with lab.variant ``variant`` and ``source``."""
    import datetime as dt

    from kcross.importer import import_stream
    from kcross.store import store_for_writing

    records = [json.loads(line) for line in (DATA / name).read_text().splitlines()]
    records[0]["lab"] = {**records[0]["lab"], "variant": variant}
    when = dt.datetime.fromisoformat(started)
    return import_stream(lambda: store_for_writing(str(tmp_path / "k.db")), records,
                         command=["test"], source=source, force=True, started_at=when,
                         finished_at=when).run_id


def test_the_reports_section_reads_reproduces_own_newest_boots_only(tmp_path: Path) -> None:
    """A plain ``kcross lab`` run (no variant: it would pass for the default boot) beside
    reproduce's: the section reads reproduce's, and of two reproduce boots the newer."""
    from kcross.report.reproduced import section
    from kcross.store import store_for_writing

    older = _stored(tmp_path, "lab-ppc64le-sc.jsonl", None, "repro", "2026-01-01T00:00:00+00:00")
    ours = _stored(tmp_path, "lab-ppc64le-scv.jsonl", None, "repro", "2026-02-01T00:00:00+00:00")
    plain = _stored(tmp_path, "lab-ppc64le-sc.jsonl", None, "lab", "2026-03-01T00:00:00+00:00")
    store = store_for_writing(str(tmp_path / "k.db"))
    try:
        runs = [store.load_run(str(i)) for i in (older, ours, plain)]
    finally:
        store.close()
    (m,) = measure.newest_stored(runs)
    assert m.run_id == ours and m.fingerprint["syscall"]["mechanism"] == "scv"
    views = {v.name: v for v in section(runs)}
    (place,) = views["power-entry"].places
    assert f"(run {ours})" in place.title
    assert str(plain) not in place.title.split("(run ")[1]


# ---------------------------------------------------------------- the boots, faked

def _fake_boots(monkeypatch, tmp_path: Path, fail: dict[str, Exception],
                profile: Exception | float | None = 151.0,
                ) -> tuple[list[tuple[str, int]], list[measure.Measured]]:
    """The lab's boots replaced: each count gives the ppc64le capture with its variant
    (or raises ``fail[variant]``); the profile gives ``profile`` (or raises it).
    Returns (variant, boots kept so far) per boot, in order, and the list _keep fills."""
    from types import SimpleNamespace

    from kcross.importer import read_stream
    from kcross.lab import boots, session
    from kcross.lab import kernel as lab_kernel
    from kcross.lab import payload as lab_payload

    booted: list[tuple[str, int]] = []
    kept: list[measure.Measured] = []

    def count(guest, kernel, payload, *, variant, suites, env, timeout):  # noqa: ARG001
        name = (variant or "").removeprefix(measure.VARIANT_PREFIX) or "default"
        booted.append((name, len(kept)))
        if name in fail:
            raise fail[name]
        records = [json.loads(line) for line in
                   (DATA / "lab-ppc64le-scv.jsonl").read_text().splitlines()]
        records[0]["lab"] = {**records[0]["lab"], "variant": variant}
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        stream, _ = read_stream(path)
        return SimpleNamespace(stream=stream, started_at=None, finished_at=None)

    def profiled(*_args, **_kwargs):
        if isinstance(profile, Exception):
            raise profile
        return profile

    monkeypatch.setattr(session, "count", count)
    monkeypatch.setattr(boots, "stop_on_signals", lambda: None)
    monkeypatch.setattr(lab_kernel, "fetch",
                        lambda _arch, say: SimpleNamespace(path=tmp_path / "vmlinux"))  # noqa: ARG005
    monkeypatch.setattr(lab_payload, "build_payload", lambda _arch, source: None)  # noqa: ARG005
    monkeypatch.setattr(measure, "profile_kernel_instructions", profiled)
    return booted, kept


def _keep(tmp_path: Path, kept: list[measure.Measured]):
    from kcross.store import store_for_writing

    def keep(b: measure.Booted) -> measure.Measured:
        m = measure.store_boot(b, lambda: store_for_writing(str(tmp_path / "k.db")),
                               ["reproduce"])
        kept.append(m)
        return m

    return keep


def test_a_failed_boot_loses_none_of_the_others_and_its_rows_say_why(monkeypatch,
                                                                    tmp_path: Path) -> None:
    from kcross.errors import GuestError, LabError

    booted, kept = _fake_boots(monkeypatch, tmp_path, {"sc": GuestError("the guest hung")},
                               profile=LabError("qemu-system-ppc64 cannot run the profile "
                                                "plugin"))
    chosen = ex.chosen("power-entry") + ex.chosen("glibc-scv")
    plan = measure.plan(chosen, native=False, arches=("ppc64le",))
    lab = measure.lab_runs(plan, tmp_path, timeout=60, say=lambda _line: None,
                           keep=_keep(tmp_path, kept))
    # each boot stored as it finished, before the next one started
    assert booted == [("default", 0), ("power8", 1), ("sc", 2)]
    assert query(tmp_path / "k.db", "SELECT COUNT(*) FROM runs")[0][0] == 2
    assert {m.variant for m in lab.measured} == {"default", "power8"}
    assert all(m.run_id is not None for m in lab.measured)
    assert lab.failed == {("ppc64le", "sc"): "the ppc64le sc boot failed: the guest hung"}
    power, glibc = outcomes(chosen, lab.measured, failed=lab.failed)
    rows = {r.figure.key: r for r in glibc.places[0].rows}
    assert rows["stat-sc"].cell.value is None
    assert rows["stat-sc"].cell.reason == "the ppc64le sc boot failed: the guest hung"
    assert rows["getpid-sc"].cell.value is not None                    # the power8 boot
    kernel = next(r for r in power.places[0].rows if r.figure.key == "kernel")
    assert kernel.cell.value is None
    assert kernel.cell.reason == ("the profiled boot failed: qemu-system-ppc64 cannot run "
                                  "the profile plugin")
    # a failed default boot: the place is not measured, with the error
    (o,) = outcomes(ex.chosen("glibc-scv"), [], failed={("ppc64le", "default"): "boom"})
    assert o.missing == ("ppc64le: boom",)


def test_ctrl_c_in_a_later_boot_keeps_what_finished(monkeypatch, tmp_path: Path) -> None:
    from kcross.errors import Interrupted

    booted, kept = _fake_boots(monkeypatch, tmp_path, {"sc": Interrupted(2)})
    plan = measure.plan(ex.chosen("glibc-scv"), native=False, arches=("ppc64le",))
    with pytest.raises(Interrupted):
        measure.lab_runs(plan, tmp_path, timeout=60, say=lambda _line: None,
                         keep=_keep(tmp_path, kept))
    assert [v for v, _ in booted] == ["default", "power8", "sc"]
    assert [m.variant for m in kept] == ["default", "power8"]
    assert query(tmp_path / "k.db", "SELECT COUNT(*) FROM runs")[0][0] == 2


def test_a_profiled_boot_needs_gcc_and_a_plugin_qemu_loads_before_anything_runs(
        monkeypatch, tmp_path: Path) -> None:
    from kcross.errors import LabError
    from kcross.lab import kernel as lab_kernel
    from kcross.lab import payload as lab_payload
    from kcross.lab import plugin

    checked: list[str] = []
    monkeypatch.setattr(measure.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(lab_payload, "missing_tools", lambda _arch: [])
    monkeypatch.setattr(lab_payload, "source_tree", lambda _arch, _src: tmp_path)
    monkeypatch.setattr(lab_kernel, "cached", lambda _arch: object())
    monkeypatch.setattr(plugin, "missing_tools", lambda: [("gcc", ("gcc",))])
    monkeypatch.setattr(plugin, "build_plugin", lambda _src: tmp_path / "p.so")
    monkeypatch.setattr(plugin, "check_plugin",
                        lambda qemu, _plugin, _work: checked.append(qemu))
    profiled = measure.plan(ex.chosen("power-entry"), native=False, arches=("ppc64le",))
    with pytest.raises(LabError, match=r"need gcc \(apt-get install gcc\)|need .*gcc"):
        measure.check_labs(("ppc64le",), None, profiled)
    plain = measure.plan(ex.chosen("glibc-scv"), native=False, arches=("ppc64le",))
    assert measure.check_labs(("ppc64le",), None, plain) == tmp_path   # no profile: no gcc
    assert checked == []
    monkeypatch.setattr(plugin, "missing_tools", lambda: [])
    assert measure.check_labs(("ppc64le",), None, profiled) == tmp_path
    assert checked == ["qemu-system-ppc64"]

    def refuse(qemu, _plugin, _work):
        raise LabError(f"{qemu} cannot run the profile plugin: no plugin support")

    monkeypatch.setattr(plugin, "check_plugin", refuse)
    with pytest.raises(LabError, match="cannot run the profile plugin"):
        measure.check_labs(("ppc64le",), None, profiled)


# ---------------------------------------------------------------- the command

def test_list_names_every_experiment(kcross) -> None:
    proc = kcross("reproduce", "--list")
    assert proc.returncode == 0, proc.stderr
    for e in ex.EXPERIMENTS:
        assert e.name in proc.stdout


@pytest.mark.parametrize("args, message", [
    (("nosuch",), "no experiment 'nosuch'"),
    (("glibc-scv", "--no-lab"), "runs only in the labs: drop --no-lab"),
    (("glibc-scv", "--arch", "x86_64"), "glibc-scv runs in no x86_64 lab"),
    (("--arch", "sparc"), "unknown lab arch 'sparc'"),
    (("--no-lab", "--arch", "x86_64"), "--arch chooses labs: not with --no-lab"),
    (("--no-lab", "--source", "/tmp"), "--source builds the labs' guest programs: not with "),
    (("--no-lab", "--lab-only"), "not allowed with argument"),
    (("--lab-only", "--source", "/nonexistent"), "--source /nonexistent: no such directory"),
    (("rseq-percpu", "--timeout", "0"), "--timeout 0"),
])
def test_bad_input_is_one_line_before_anything_runs(kcross, tmp_path: Path, args, message) -> None:
    db = tmp_path / "k.db"
    proc = kcross("reproduce", *args, "--db", str(db))
    assert_one_line_error(proc, 2)
    assert message in proc.stderr
    assert not db.exists()


def test_no_lab_runs_natively_as_kcross_run_and_stores_the_runs(kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    proc = kcross("reproduce", "rseq-cpu-number", "--no-lab", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "rseq-cpu-number: Reading the CPU number" in out
    assert "published: the rseq system call's commit" in out
    line = next(x for x in out.splitlines() if "glibc sched_getcpu" in x and "16.6" in x)
    assert "ns" in line and "cpuid/sched_getcpu" in line
    assert "not measured: ppc64le: --no-lab" in out
    rows = query(db, "SELECT source, command FROM runs")
    assert rows and all(source == "repro" for source, _ in rows)
    processes = query(db, "SELECT COUNT(*) FROM results")[0][0]
    assert processes >= 10 * 4   # 10 processes, the cpuid suite's rows
    assert "kcross report" in proc.stderr


def test_json_is_one_record_per_experiment_with_published_and_ours(kcross, tmp_path: Path) -> None:
    proc = kcross("reproduce", "freebsd-cpu-switch", "--no-lab", "--no-store", "--json",
                  "--db", str(tmp_path / "k.db"))
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert record["type"] == "reproduce" and record["name"] == "freebsd-cpu-switch"
    (place,) = record["places"]
    assert place["place"] == "native"
    figures = {f["key"]: f for f in place["figures"]}
    assert figures["yield"]["ours"]["bench"] == "ctxsw/yield-same-cpu"
    assert math.isfinite(figures["yield"]["ours"]["value"])
    (change,) = place["changes"]
    assert change["published"].startswith("-12.2% +/- 3.1%")
    assert change["verdict"]["method"] != "exact"            # timings: over processes
    assert not (tmp_path / "k.db").exists()                  # --no-store


def test_the_cpu_switch_is_printed_in_ministats_format(kcross, tmp_path: Path) -> None:
    proc = kcross("reproduce", "freebsd-cpu-switch", "--no-lab", "--no-store",
                  "--db", str(tmp_path / "k.db"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "ministat (kcross compare --format ministat), as published:" in out
    assert re.search(r"^x native: ctxsw/yield-same-cpu \(the median of each of 10 "
                     r"processes\)$", out, re.M)
    assert re.search(r"^\+ native: ctxsw/yield-same-cpu-fp ", out, re.M)
    assert re.search(r"^x +10 ", out, re.M)           # one value per process, as ministat's runs
    assert "Difference at 95.0% confidence" in out or "No difference proven" in out


def test_a_skipped_sibling_row_says_why(kcross, tmp_path: Path) -> None:
    proc = kcross("reproduce", "powernv-spin", "--no-lab", "--no-store",
                  "--db", str(tmp_path / "k.db"))
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "without a hint" in x and "45 s" in x)
    assert "sibling" in line and ("SMT" in line or "skipped" in line)


def test_the_report_has_a_section_for_reproduces_runs_only(kcross, tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    proc = kcross("reproduce", "rseq-percpu", "--no-lab", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / "r.html"
    proc = kcross("report", "latest", "--db", str(db), "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    text = page.read_text()
    assert '<section id="reproduced">' in text
    assert "rseq-percpu: rseq per-CPU operations" in text
    assert "15.3 ns/op" in text and "percpu/add-getcpu-atomic" in text
    proc = kcross("run", "--quick", "--bench", "cpuid/*", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    proc = kcross("report", "latest", "--db", str(db), "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    assert '<section id="reproduced">' not in page.read_text()   # a plain run: no section


def test_the_view_names_each_boot_and_its_syscall_path_as_text() -> None:
    """A boot's name in brackets is text, never markup (rich would swallow '[sc]')."""
    import io

    from kcross.views.reproduce import print_outcome
    from rich.console import Console

    default = _lab("lab-ppc64le-scv.jsonl", "default")
    sc = _lab("lab-ppc64le-sc.jsonl", "sc")
    (o,) = outcomes(ex.chosen("glibc-scv"), [default, sc])
    assert "kcross's selected syscall path: scv, sc [sc]" in o.places[0].machine
    buffer = io.StringIO()
    print_outcome(Console(file=buffer, width=250), o)
    text = buffer.getvalue()
    assert "syscall path: scv, sc [sc]" in text
    assert "syscall/stat-root [sc]" in text
    assert "3619 cycles" in text and "no power8 boot" in text
    assert "3,619 → 3,535 cycles" in text           # the published stat change


def test_the_native_part_leaves_the_stop_signals_to_the_labs_after_it(tmp_path: Path) -> None:
    """The run engine ignores SIGINT/SIGTERM/SIGHUP once its run is marked; reproduce's
    labs come after its native runs, and Ctrl-C must still stop them."""
    import signal

    from conftest import FAKE_HARNESS
    from kcross.store import store_for_writing
    from rich.console import Console

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    plan = measure.Plan(native=(("cpuid", "cpuid/rseq-load"),), boots=())
    store = store_for_writing(str(tmp_path / "k.db"))
    try:
        (m,) = measure.native_runs(plan, [str(FAKE_HARNESS)], store, ["reproduce"],
                                   Console(file=open("/dev/null", "w")),
                                   Console(file=open("/dev/null", "w")))
    finally:
        store.close()
    assert m.where == "native" and m.run_id == 1
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_lab_this_host_cannot_boot_is_one_line_before_anything_runs(kcross,
                                                                      tmp_path: Path) -> None:
    """No QEMU, no cross compiler (an empty PATH): the packages named, nothing measured,
    no database created, the native part not started either."""
    db = tmp_path / "k.db"
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = kcross("reproduce", "rseq-percpu", "--arch", "ppc64le", "--db", str(db),
                  extra_env={"PATH": str(empty)})
    assert proc.returncode != 0
    (line,) = proc.stderr.strip().splitlines()
    assert "kcross reproduce's labs (ppc64le) need" in line
    assert "qemu-system-ppc" in line and "gcc-powerpc64le-linux-gnu" in line
    assert "--no-lab" in line
    assert not db.exists()


def test_the_command_prints_every_finished_boot_when_one_fails(monkeypatch, capsys,
                                                                tmp_path: Path) -> None:
    """The command (in-process, boots faked): a failed boot leaves the others' rows, its
    own say its error, every finished boot stored, exit 3; Ctrl-C: what finished stored
    and said, exit 130."""
    from kcross.cli import main
    from kcross.errors import GuestError, Interrupted

    monkeypatch.setattr(measure, "check_labs", lambda *_args: tmp_path)
    _fake_boots(monkeypatch, tmp_path, {"sc": GuestError("the guest hung")})
    db = tmp_path / "k.db"
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "glibc-scv", "--db", str(db)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 3
    line = next(x for x in out.splitlines() if "3619 cycles" in x)
    assert "the ppc64le sc boot failed: the guest hung" in line
    assert "cycles vs instructions: no ratio" in next(x for x in out.splitlines()
                                                      if "379 cycles" in x)
    assert query(db, "SELECT COUNT(*), MIN(source), MAX(source) FROM runs")[0] == \
        (2, "repro", "repro")
    assert "stored as run 1, 2" in err

    _fake_boots(monkeypatch, tmp_path, {"sc": Interrupted(2)})
    db = tmp_path / "k2.db"
    with pytest.raises(SystemExit) as exit_:
        main(["reproduce", "glibc-scv", "--db", str(db)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 130
    assert query(db, "SELECT COUNT(*) FROM runs")[0][0] == 2
    assert "stored as run 1, 2" in err


def test_a_published_ratio_of_another_kind_is_never_set_beside_ours() -> None:
    """power-entry's change: 482 → 346 cycles published, ours in instructions: the
    published cell gives the figures, not their ratio beside ours, and the table says why
    (before: B/A 0.718 of cycles beside B/A 0.870 of instructions)."""
    from kcross.views.reproduce import changes_table, published_text

    (o,) = outcomes(ex.chosen("power-entry"), [_lab("lab-ppc64le-scv.jsonl", "default")])
    (place,) = o.places
    (change,) = place.changes
    assert change.across and published_text(change) == "482 → 346 cycles"
    table = changes_table(place)
    assert table is not None
    assert [row.cells[2] for row in table.rows] == ["482 → 346 cycles"]
    assert table.notes == ["published cycles, ours instructions: each change in its own unit "
                           "(a ratio of cycles is not one of instructions)"]


def test_instructions_that_reverse_a_published_time_are_said() -> None:
    """rseq-percpu in the ppc64le lab: the CAS spinlock is 15 instructions, kcross's per-CPU
    lock 56, where the published time fell 53.4 → 28.6 ns: the row is marked and the note
    says why a count does not rank times; the counter (fewer instructions, as the published
    time) is not marked (before: +41.0 instructions beside B/A 0.536, unexplained)."""
    from kcross.views.reproduce import changes_table

    (o,) = outcomes(ex.chosen("rseq-percpu"), [_lab("lab-ppc64le-scv.jsonl", "default")])
    (place,) = o.places
    counter, lock = place.changes
    assert lock.reverses and not counter.reverses
    table = changes_table(place)
    assert table is not None
    ours = [str(row.cells[3]) for row in table.rows]
    assert ours[1].endswith("instructions (+273%) ¹") and not ours[0].endswith("¹"), ours
    assert table.notes[0] == ("¹ ours counted instructions the other way from the published "
                              "times: an atomic is one instruction and many cycles, so a count "
                              "of instructions does not rank times")


SIGNED_WORD = re.compile(r"[-+]\d[\d,.]*% (faster|slower|more|fewer|higher|lower)")


def test_no_change_is_signed_and_worded_both() -> None:
    """A change's direction is its word or its sign, never both (no ``-69.8% faster``):
    every experiment's view and record, natively (the captured run) and in the lab."""
    import io

    from kcross.views.reproduce import print_outcome, record
    from rich.console import Console

    native = measure.Measured("native", "default", captured()[0],
                              [r for r in captured() if r["type"] == "result"], run_id=1)
    found = outcomes(ex.EXPERIMENTS, [native, _lab("lab-ppc64le-scv.jsonl", "default"),
                                      _lab("lab-ppc64le-sc.jsonl", "sc")])
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    for o in found:
        print_outcome(console, o)
        buffer.write(json.dumps(record(o), ensure_ascii=False) + "\n")
    text = buffer.getvalue()
    assert "faster" in text and "instructions" in text      # timings and counts both shown
    assert not SIGNED_WORD.search(text), SIGNED_WORD.search(text)
