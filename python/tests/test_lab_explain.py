"""The explanation of a changed step (issue 23), without QEMU: from the captured lab pair
(data/lab-ppc64le-sc.jsonl, -scv.jsonl: KCROSS_SYSCALL=sc and scv on one kernel) and the
profiles written in the format of ``kcross lab --profile --json``
(data/views/profile-ppc64le.jsonl); the crossing's list of kernel options against Debian's
configurations (data/debian-crossing-config.txt); the refusals of --explain and
--against-source; the JSON of --against --profile and of an explained comparison, every
line of standard output a JSON record.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, PYTHON_DIR, assert_one_line_error
from kcross.errors import LabError
from kcross.judge.verdict import PATH_STEP
from kcross.lab import crossing_config, explain
from kcross.lab.explain import APPEARED, GONE, SHRANK, Subject
from kcross.lab.kernel import Kernel
from kcross.lab.machines import Guest, arch
from kcross.lab.payload import GUEST_SOURCES, Payload
from kcross.lab.profile import Profiled
from kcross.lab.report import judged
from test_views_exact import SC, SCV, counted, profiles

CONFIGS = DATA / "debian-crossing-config.txt"


def debian_configs() -> list[tuple[str, str, dict[str, str]]]:
    """(arch, package, options) of each configuration in data/debian-crossing-config.txt."""
    found: list[tuple[str, str, dict[str, str]]] = []
    for line in CONFIGS.read_text().splitlines():
        if line.startswith("## "):
            a, what = line[3:].split(" ", 1)
            found.append((a, what, {}))
        elif found and (line.startswith("CONFIG_") or line.startswith("# CONFIG_")):
            found[-1][2].update(crossing_config.states(line))
    return found


# ---------------------------------------------------------------- the list of options

def test_every_option_is_in_a_debian_configuration_or_says_why_not() -> None:
    configs = debian_configs()
    assert len(configs) == 5 and {a for a, _, _ in configs} == {"x86_64", "aarch64", "ppc64le"}
    for option in crossing_config.OPTIONS:
        named = [(a, what) for a, what, c in configs if any(n in c for n in option.names)]
        if option.absent:
            assert not named, f"{option.name} is said absent but {named[0]} names it"
        else:
            assert named, f"{option.name}: in no Debian configuration, and no reason why"
        # an option of some arches is named only in their configurations
        if option.arches:
            assert {a for a, _ in named} <= set(option.arches), option.name


def test_the_list_is_one_line_per_option() -> None:
    names = [n for o in crossing_config.OPTIONS for n in o.names]
    assert len(names) == len(set(names))                     # each option listed once
    for o in crossing_config.OPTIONS:
        assert all(n.startswith("CONFIG_") for n in o.names)
        assert o.reason and "\n" not in o.reason and not o.reason.endswith(".")
        assert set(o.arches) <= {"x86_64", "aarch64", "ppc64le"}
    # the topics asked of the list are on it
    for topic in ("RANDOMIZE_KSTACK_OFFSET", "RANDOMIZE_KSTACK_OFFSET_DEFAULT",
                  "MITIGATION_PAGE_TABLE_ISOLATION", "MITIGATION_RETPOLINE",
                  "MITIGATION_IBRS_ENTRY", "MITIGATION_UNRET_ENTRY", "MITIGATION_SLS",
                  "PPC_KUAP", "PPC_KUEP", "ARM64_PAN", "ARM64_UAO", "X86_SMAP", "ARM64_SVE",
                  "ARM64_SME", "PREEMPT", "AUDITSYSCALL", "SECCOMP", "CONTEXT_TRACKING_USER",
                  "NO_HZ_FULL", "VIRT_CPU_ACCOUNTING_GEN", "GENERIC_ENTRY", "RSEQ",
                  "DEBUG_RSEQ", "STACKPROTECTOR", "INIT_ON_ALLOC_DEFAULT_ON",
                  "INIT_STACK_ALL_ZERO", "KASAN", "KCSAN", "UNMAP_KERNEL_AT_EL0"):
        assert f"CONFIG_{topic}" in names, topic


def test_two_configurations_differ_by_the_options_of_the_list() -> None:
    """bookworm's 6.1 against trixie's 6.12 on amd64: a rename is no difference, an option
    one side does not name is shown as such, the arch's options only."""
    configs = {(a, what.split()[0]): c for a, what, c in debian_configs()}
    old, new = configs[("x86_64", "bookworm")], configs[("x86_64", "trixie")]
    found = {c.option: c for c in crossing_config.changes(old, new, "x86_64")}
    assert found["CONFIG_X86_KERNEL_IBT"].a == "n" and found["CONFIG_X86_KERNEL_IBT"].b == "y"
    assert "CONFIG_MITIGATION_PAGE_TABLE_ISOLATION" not in found     # renamed, y on both
    assert found["CONFIG_MITIGATION_CALL_DEPTH_TRACKING"].a is None  # 6.2 and later
    assert not any(c.option.startswith("CONFIG_ARM64_") for c in found.values())
    assert crossing_config.changes(old, old, "x86_64") == []
    assert crossing_config.others(old, new) == 0     # the fixture holds the list's lines only


# ---------------------------------------------------------------- one row explained

def verdicts() -> dict[str, Any]:
    return judged(counted(SC), counted(SCV), "sc", "scv")


def test_the_rows_explained_are_the_changes_of_the_path() -> None:
    found = verdicts()
    assert explain.changed_rows(found) == [
        "syscall/getppid-dispatch", "syscall/stat-root", "syscall/read-devzero",
        "syscall/write-devnull", "syscall/open-close"]
    assert "syscall/clock_gettime-vdso" in explain.timer_share_rows(found)
    assert explain.selection(["syscall/stat-root"]) == (("syscall",), "syscall/stat-root")
    assert explain.selection(["syscall/stat-root", "percpu/list-mutex", "syscall/x"]) == \
        (("syscall", "percpu"), None)
    # several rows: the --bench the counting boots ran takes them all
    assert explain.selection(["syscall/getppid-inline", "syscall/getppid-call"], "getppid-*") \
        == (("syscall",), "getppid-*")


def test_a_row_is_explained_by_what_moved() -> None:
    """sc → scv on getppid-dispatch (written profiles): the kernel's system_call_common
    gone, system_call_vectored_common appeared, the flush trigger and privilege switches
    moved from one function to the other; the user side unchanged, so no user line."""
    sc, scv, _ = profiles()
    row = "syscall/getppid-dispatch"
    e = explain.explain_row(row, verdicts()[row], sc, scv, ("sc", "scv"))
    kinds = {m.what: m.kind for m in e.functions}
    assert kinds["system_call_common"] == GONE
    assert kinds["system_call_vectored_common"] == APPEARED
    assert all(m.space == "kernel" for m in e.functions) and not e.user_changed
    assert all(abs(m.delta) >= PATH_STEP for m in (*e.functions, *e.costly))
    assert {m.kind for m in e.costly} <= {APPEARED, GONE, SHRANK}
    assert "privilege switch: rfscv (kernel system_call_vectored_common)" in \
        {m.what for m in e.costly}
    # the listed moves and the rest add up to the profiled change
    assert sum(m.delta for m in e.functions) + e.rest == pytest.approx(scv.figure - sc.figure)


def fake_subjects(tmp_path: Path) -> tuple[Subject, Subject]:
    k = Kernel("ppc64le", tmp_path / "vmlinux")
    payload = Payload("ppc64le", tmp_path, tmp_path / "h", tmp_path / "i", {}, [])
    guest = Guest(arch("ppc64le"), k.path)
    return (Subject("sc", guest, k, payload, env={"KCROSS_SYSCALL": "sc"}),
            Subject("scv", guest, k, payload, env={"KCROSS_SYSCALL": "scv"}))


def test_explain_boots_each_side_once_and_says_what_it_could_not_explain(tmp_path: Path
                                                                         ) -> None:
    sc, scv, _ = profiles()
    a, b = fake_subjects(tmp_path)
    booted: list[int] = []

    def boots(jobs: Any) -> list[Any]:
        booted.append(len(jobs))
        return [Profiled(counted(SC), {p.name: p}, "kallsyms", 0) for p in (sc, scv)][:len(jobs)]

    memo: dict[Any, Any] = {}
    x = explain.explain(a, b, verdicts(), source=tmp_path, timeout=1, say=lambda _: None,
                        boots=boots, memo=memo)
    assert booted == [2] and x.profiled == "the suite syscall"
    assert x.config.missing == "one kernel on both sides: no configuration differs"
    steps = {e.row: e for e in x.steps}
    assert steps["syscall/getppid-dispatch"].missing is None
    assert steps["syscall/stat-root"].missing == \
        "sc's profiled boot has no profile of it (skipped or failed)"
    assert "syscall/clock_gettime-vdso" in x.timer_share
    # a side already profiled (a mitigation table's baseline) is not booted again
    explain.explain(a, b, verdicts(), source=tmp_path, timeout=1, say=lambda _: None,
                    boots=boots, memo=memo)
    assert booted == [2, 0]

    def failing(jobs: Any) -> list[Any]:
        return [LabError("QEMU died"), LabError("QEMU died")]

    x = explain.explain(a, b, verdicts(), source=tmp_path, timeout=1, say=lambda _: None,
                        boots=failing)
    assert all(e.missing == "the profiled boot of sc failed: QEMU died" for e in x.steps)


def test_configurations_are_compared_or_the_reason_is_said(tmp_path: Path) -> None:
    boot = tmp_path / "boot"
    boot.mkdir()
    a = Kernel("x86_64", boot / "vmlinuz-a")
    b = Kernel("x86_64", boot / "vmlinuz-b")
    for k in (a, b):
        k.path.write_bytes(b"kernel " + k.path.name.encode())
    (boot / "config-a").write_text("CONFIG_RSEQ=y\n# CONFIG_DEBUG_RSEQ is not set\nCONFIG_X=1\n")
    missing = explain.config_diff(a, b, "x86_64")
    assert missing.missing is not None and missing.missing.startswith(
        f"no configuration found for B's kernel {b.path}")
    (boot / "config-b").write_text("CONFIG_RSEQ=y\nCONFIG_DEBUG_RSEQ=y\nCONFIG_X=2\n")
    found = explain.config_diff(a, b, "x86_64")
    assert [(c.option, c.a, c.b) for c in found.changes] == [("CONFIG_DEBUG_RSEQ", "n", "y")]
    assert found.others == 1 and found.where == (str(boot / "config-a"), str(boot / "config-b"))


# ---------------------------------------------------------------- JSON alone on stdout

def all_json(text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    assert lines
    return [json.loads(line) for line in lines]      # every line: one JSON record


def test_against_profile_json_prints_json_alone(tmp_path: Path, monkeypatch: Any,
                                                capsys: Any) -> None:
    """``kcross lab ARCH --against B --profile --json`` printed "A: ..." and "B: ..." after
    its records."""
    from kcross.cli._console import consoles
    from kcross.lab import profile, profile_jobs
    from kcross.lab.request import LabRequest

    sc, scv, _ = profiles()
    a, b = fake_subjects(tmp_path)
    other = Kernel("ppc64le", tmp_path / "other", source="file")
    given = iter([sc, scv])
    monkeypatch.setattr(profile, "prepare", lambda *args, **kw: None)
    monkeypatch.setattr(profile, "profile_counted", lambda *args, **kw: Profiled(
        counted(SC), {(p := next(given)).name: p}, "kallsyms", 0))
    monkeypatch.setattr(profile_jobs, "resolve_kernel", lambda *args, **kw: other)
    monkeypatch.setattr(profile_jobs, "find_source", lambda *args: tmp_path)
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, against=other.path,
                         profile=True, json_output=True)
    out, err = consoles()
    assert profile_jobs.profiling(request, a.kernel, a.payload, out, err) == 0
    records = all_json(capsys.readouterr().out)
    assert [r["side"] for r in records] == ["A", "B"]


def test_an_explained_comparison_prints_json_alone(tmp_path: Path, monkeypatch: Any,
                                                   capsys: Any) -> None:
    """--compare sc scv --explain --json: each run's records, the comparison record, then one
    lab-explanation record per changed row."""
    from kcross.cli._console import consoles
    from kcross.lab import jobs
    from kcross.lab.request import LabRequest

    sc, scv, _ = profiles()
    a, b = fake_subjects(tmp_path)
    runs = {"KCROSS_SYSCALL=sc": counted(SC), "KCROSS_SYSCALL=scv": counted(SCV)}
    monkeypatch.setattr(jobs, "count_boot", lambda request, guest, kernel, payload, variant,
                        err, **kw: runs[variant])
    monkeypatch.setattr(jobs, "find_source", lambda *args: tmp_path)
    by_side = {"sc": sc, "scv": scv}
    monkeypatch.setattr(explain, "_profiled", lambda s, *args: Profiled(
        counted(SC), {by_side[s.label].name: by_side[s.label]}, "kallsyms", 0))
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, compare=("sc", "scv"),
                         explain=True, json_output=True, no_store=True)
    out, err = consoles()
    assert jobs.counting(request, a.kernel, a.payload, out, err) == 0
    records = all_json(capsys.readouterr().out)
    kinds = [r["type"] for r in records]
    assert kinds.count("comparison") == 1 and kinds.count("lab-explanation") == 5
    first = next(r for r in records if r["type"] == "lab-explanation")
    assert first["row"] == "syscall/getppid-dispatch" and first["a"] == "sc"
    assert first["verdict"]["category"] == "lower" and first["profile_missing"] is None
    assert {"appeared", "gone"} <= {f["kind"] for f in first["profile"]["functions"]}
    assert first["config"]["missing"] == "one kernel on both sides: no configuration differs"


# ---------------------------------------------------------------- refusals

@pytest.mark.parametrize("args, message", [
    (["ppc64le", "--explain"], "--explain explains the rows that changed between two sides: "
                               "give --compare, --compare-env, --against, --against-source, "
                               "--mitigations or --releases"),
    (["ppc64le", "--compare", "sc", "scv", "--explain", "--profile"],
     "--explain profiles the changed rows itself: not with --profile"),
    (["ppc64le", "--against-source", "/no/such/dir"], "--against-source /no/such/dir: no such "
                                                      "directory"),
    (["ppc64le", "--against-source", "/tmp"], "--against-source /tmp: not a kcross source tree"),
    (["ppc64le", "--against-source", "/tmp", "--profile"],
     "--against-source explains its changed rows with profiled boots of its own: not with "
     "--profile"),
    (["ppc64le", "--mode", "correctness", "--against-source", "/tmp"], "counting-mode options"),
    (["ppc64le", "--against-source", "/tmp", "--compare", "sc", "scv"], "not allowed with"),
])
def test_bad_input_is_one_line(kcross, tmp_path: Path, args: list[str],  # type: ignore[no-untyped-def]
                               message: str) -> None:
    assert_one_line_error(kcross("lab", *args, extra_env={"PATH": str(tmp_path)}), 2, message)
    assert not (tmp_path / "home" / ".cache").exists()


def test_against_source_needs_a_differing_tree(kcross, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The tree side A is built from, or a copy of its guest sources: one line, before
    anything is built; a change in the copy is taken (the lab goes on to what this host
    lacks: nothing on PATH here)."""
    tree = PYTHON_DIR.parent
    env = {"PATH": str(tmp_path / "empty"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert_one_line_error(kcross("lab", "ppc64le", "--against-source", str(tree),
                                 extra_env=env), 2,
                          f"--against-source {tree} is the tree side A is built from")
    copy = tmp_path / "copy"
    copy.mkdir()
    for top in GUEST_SOURCES:
        (shutil.copytree if (tree / top).is_dir() else shutil.copy2)(tree / top, copy / top)
    assert_one_line_error(kcross("lab", "ppc64le", "--against-source", str(copy),
                                 extra_env=env), 2,
                          f"--against-source {copy} holds the same guest sources as {tree}")
    with open(copy / "src" / "syscall.c", "a") as f:
        f.write("\n/* a change */\n")
    assert_one_line_error(kcross("lab", "ppc64le", "--against-source", str(copy),
                                 extra_env=env), 2, "kcross lab ppc64le needs qemu-system-ppc64")
    assert not (tmp_path / "cache").exists()


def mitigation_boots(moved: dict[str, dict[str, float]], only: str | None = None
                     ) -> Any:
    """A counting boot of a mitigation table's baseline or variant: the captured sc run,
    shifted by ``moved``'s figures for the variant; the variants QEMU is known to refuse
    refused; a baseline other than ``only`` (when given) failed."""
    from kcross.lab.mitigations import REFUSED

    def count_boot(request: Any, guest: Any, kernel: Any, payload: Any, name: str, err: Any,
                   **kw: Any) -> Any:
        variant = name.split(" + ", 1)[1] if " + " in name else None
        if any(variant == v.name for _, v, _ in REFUSED):
            raise LabError("QEMU refused it")
        if only is not None and name.split(" + ")[0] != only:
            raise LabError("another baseline: not this test's")
        run = counted(SC, moved.get(variant or "", {}))
        run.guest = guest
        run.variant = name
        return run
    return count_boot


def test_mitigations_explain_each_changed_variant_against_one_baseline_profile(
        tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    """--mitigations --explain: a variant whose syscall paths moved by whole instructions is
    explained against its baseline, whose profiled boot is made once for all of them; a
    variant that moved by the timer's share only, or not at all, is not."""
    from kcross.cli._console import consoles
    from kcross.lab import jobs
    from kcross.lab.mitigations import TABLES
    from kcross.lab.request import LabRequest

    sc, scv, _ = profiles()
    a, _ = fake_subjects(tmp_path)
    baseline, variants = TABLES["ppc64le"][0]
    moved = {variants[0].name: {"getppid-dispatch": -53.0}, variants[1].name: {"kc_cpu": 0.004}}

    monkeypatch.setattr(jobs, "count_boot", mitigation_boots(moved, baseline.name))
    monkeypatch.setattr(jobs, "find_source", lambda *args: tmp_path)
    booted: list[str] = []

    def profiled(s: Subject, *args: Any) -> Profiled:
        booted.append(s.label)
        p = sc if s.label == baseline.name else scv
        return Profiled(counted(SC), {p.name: p}, "kallsyms", 0)

    monkeypatch.setattr(explain, "_profiled", profiled)
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, mitigations=True,
                         explain=True, no_store=True)
    out, err = consoles()
    jobs.mitigations(request, a.kernel, a.payload, out, err)
    text = capsys.readouterr().out
    assert sorted(booted) == sorted([baseline.name, variants[0].name])   # the baseline once
    assert f"Why 1 row changed, {baseline.name} → {variants[0].name}" in text
    assert "function gone: kernel system_call_common" in text
    assert text.count("Why ") == 1          # the timer's share, or nothing: not explained


# ---------------------------------------------------------------- every axis, one path

# The variants side A's runs are named by (--env KCROSS_VDSO=0 or none).
A_SIDES = {None, "kernel A", "source A", "KCROSS_SYSCALL=sc", "KCROSS_VDSO=0",
           "KCROSS_VDSO=0 KCROSS_SYSCALL=sc"}


def fake_axis(tmp_path: Path, monkeypatch: Any) -> tuple[Subject, list[Any], list[Any]]:
    """The counting boots of side A give the captured sc run, side B's the scv run; the
    profiled boots of A the sc profile, B's the scv one; what each boot was given, kept."""
    from kcross.lab import jobs

    sc, scv, _ = profiles()
    a, _ = fake_subjects(tmp_path)
    counted_boots: list[Any] = []
    profiled_boots: list[Any] = []

    def count_boot(request: Any, guest: Any, kernel: Any, payload: Any, variant: Any,
                   err: Any, **kw: Any) -> Any:
        counted_boots.append((kernel.path, payload, variant, kw.get("env")))
        return counted(SC if variant in A_SIDES else SCV)

    def profiled(s: Subject, *args: Any) -> Profiled:
        profiled_boots.append((s.label, s.kernel.path, s.payload, dict(s.env or {})))
        p = sc if s.variant in A_SIDES else scv
        return Profiled(counted(SC), {p.name: p}, "kallsyms", 0)

    monkeypatch.setattr(jobs, "count_boot", count_boot)
    monkeypatch.setattr(jobs, "find_source", lambda *args: tmp_path)
    monkeypatch.setattr(jobs, "source_tree", lambda arch, tree, *a: tree or tmp_path)
    monkeypatch.setattr(explain, "_profiled", profiled)
    return a, counted_boots, profiled_boots


@pytest.mark.parametrize("axis", ["--against", "--against-source", "--compare-env",
                                  "--compare"])
def test_every_axis_explains_its_changed_rows_in_json_alone(
        tmp_path: Path, monkeypatch: Any, capsys: Any, axis: str) -> None:
    """Every axis of two sides takes one path: two counting boots, the comparison record,
    then (--against and --against-source by default, --compare-env and --compare with
    --explain) one lab-explanation record per changed row, each row's profiled boots given
    what its side's counting boot was (kernel, guest programs, --env's settings and the
    side's); standard output JSON lines only."""
    from dataclasses import replace

    from kcross.cli._console import consoles
    from kcross.lab import jobs
    from kcross.lab.request import GuestOptions, LabRequest

    a, counted_boots, profiled_boots = fake_axis(tmp_path, monkeypatch)
    other_kernel = Kernel("ppc64le", tmp_path / "vmlinux-b")
    other_payload = replace(a.payload, build_dir=tmp_path / "b")
    monkeypatch.setattr(jobs, "resolve_kernel", lambda *args, **kw: other_kernel)
    given: dict[str, Any] = {
        "--against": {"against": other_kernel.path},
        "--against-source": {"against_source": tmp_path / "tree-b"},
        "--compare-env": {"compare_env": ("KCROSS_RSEQ=off",), "explain": True},
        "--compare": {"compare": ("sc", "scv"), "explain": True}}[axis]
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, json_output=True,
                         no_store=True, guest=GuestOptions(env=("KCROSS_VDSO=0",)), **given)
    out, err = consoles()
    assert jobs.counting(request, a.kernel, a.payload, out, err,
                         other=other_payload) == 0
    records = all_json(capsys.readouterr().out)
    kinds = [r["type"] for r in records]
    assert kinds.count("comparison") == 1 and kinds.count("lab-explanation") == 5
    assert kinds.index("comparison") < kinds.index("lab-explanation")
    assert len(counted_boots) == 2 and len(profiled_boots) == 2
    # every boot, counted or profiled, with --env's settings
    assert all(env["KCROSS_VDSO"] == "0" for *_, env in (*counted_boots, *profiled_boots))
    sides = {label: (k, p, env) for label, k, p, env in profiled_boots}
    if axis == "--against":
        assert {k for k, _, _ in sides.values()} == {a.kernel.path, other_kernel.path}
    if axis == "--against-source":
        assert {p.build_dir for _, p, _ in sides.values()} == {a.payload.build_dir,
                                                               other_payload.build_dir}
    if axis == "--compare-env":
        assert "KCROSS_RSEQ" not in sides["A"][2] and sides["B"][2]["KCROSS_RSEQ"] == "off"


@pytest.mark.parametrize("axis", ["--compare-env", "--compare"])
def test_a_setting_is_explained_with_explain_only(tmp_path: Path, monkeypatch: Any,
                                                  capsys: Any, axis: str) -> None:
    """--compare-env, as --compare: the table alone unless --explain; no profiled boot."""
    from kcross.cli._console import consoles
    from kcross.lab import jobs
    from kcross.lab.request import LabRequest

    a, counted_boots, profiled_boots = fake_axis(tmp_path, monkeypatch)
    given: dict[str, Any] = {"--compare-env": {"compare_env": ("KCROSS_RSEQ=off",)},
                             "--compare": {"compare": ("sc", "scv")}}[axis]
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, json_output=True,
                         no_store=True, **given)
    out, err = consoles()
    assert jobs.counting(request, a.kernel, a.payload, out, err) == 0
    kinds = [r["type"] for r in all_json(capsys.readouterr().out)]
    assert "comparison" in kinds and "lab-explanation" not in kinds
    assert len(counted_boots) == 2 and profiled_boots == []


def test_the_timers_share_is_not_explained(tmp_path: Path, monkeypatch: Any,
                                           capsys: Any) -> None:
    """Two sides whose rows moved by under one instruction per op: no profiled boot, no
    explanation record; the rows named as the timer's share in the view."""
    from kcross.cli._console import consoles
    from kcross.lab import jobs
    from kcross.lab.request import LabRequest

    a, _, profiled_boots = fake_axis(tmp_path, monkeypatch)
    monkeypatch.setattr(jobs, "count_boot", lambda request, guest, kernel, payload, variant,
                        err, **kw: counted(SC, None if variant in A_SIDES
                                           else {"getppid-dispatch": 0.5, "kc_cpu": 0.004}))
    for json_output in (True, False):
        request = LabRequest(arch="ppc64le", mode="counting", timeout=60, no_store=True,
                             compare_env=("KCROSS_RSEQ=off",), explain=True,
                             json_output=json_output)
        out, err = consoles()
        assert jobs.counting(request, a.kernel, a.payload, out, err) == 0
        text = capsys.readouterr().out
        if json_output:
            assert "lab-explanation" not in {r["type"] for r in all_json(text)}
        else:
            assert "Why " not in text and "the timer's share" in text
    assert profiled_boots == []


def test_mitigations_json_is_json_alone(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    """--mitigations --explain --json: each baseline's run, each variant's run and its
    comparison record against the baseline, the explanation records of the variants that
    changed a path; a refused variant said on standard error; JSON lines only."""
    from kcross.cli._console import consoles
    from kcross.lab import jobs
    from kcross.lab.mitigations import REFUSED, TABLES
    from kcross.lab.request import LabRequest

    sc, scv, _ = profiles()
    a, _ = fake_subjects(tmp_path)
    baseline, variants = TABLES["ppc64le"][0]
    moved = {variants[0].name: {"getppid-dispatch": -53.0}}

    monkeypatch.setattr(jobs, "count_boot", mitigation_boots(moved))
    monkeypatch.setattr(jobs, "find_source", lambda *args: tmp_path)
    monkeypatch.setattr(explain, "_profiled", lambda s, *args: Profiled(
        counted(SC), {(p := sc if s.label == baseline.name else scv).name: p}, "kallsyms", 0))
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, mitigations=True,
                         explain=True, json_output=True, no_store=True)
    out, err = consoles()
    jobs.mitigations(request, a.kernel, a.payload, out, err)
    captured = capsys.readouterr()
    records = all_json(captured.out)
    kinds = [r["type"] for r in records]
    compared = sum(len(v) for _, v in TABLES["ppc64le"])
    assert kinds.count("comparison") == compared
    assert kinds.count("lab-explanation") == 1        # the one variant that changed a path
    (e,) = [r for r in records if r["type"] == "lab-explanation"]
    assert (e["a"], e["b"]) == (baseline.name, variants[0].name)
    if any(a == "ppc64le" for a, _, _ in REFUSED):
        assert "not a result: QEMU refused it" in captured.err


def test_mitigations_profile_json_is_json_alone(tmp_path: Path, monkeypatch: Any,
                                                capsys: Any) -> None:
    """--mitigations --profile --json: each baseline's and variant's profile records (side:
    its name), a boot that failed said on standard error; JSON lines only."""
    from kcross.cli._console import consoles
    from kcross.lab import profile, profile_jobs
    from kcross.lab.mitigations import TABLES
    from kcross.lab.request import LabRequest

    sc, _, _ = profiles()
    a, _ = fake_subjects(tmp_path)
    failing = TABLES["ppc64le"][0][1][0].name

    def profile_counted(guest: Any, kernel: Any, payload: Any, *, variant: Any,
                        **kw: Any) -> Profiled:
        if variant and variant.endswith(failing):
            raise LabError("QEMU died")
        return Profiled(counted(SC), {sc.name: sc}, "kallsyms", 0)

    monkeypatch.setattr(profile, "prepare", lambda *args, **kw: None)
    monkeypatch.setattr(profile, "profile_counted", profile_counted)
    monkeypatch.setattr(profile_jobs, "find_source", lambda *args: tmp_path)
    request = LabRequest(arch="ppc64le", mode="counting", timeout=60, mitigations=True,
                         profile=True, json_output=True)
    out, err = consoles()
    profile_jobs.profiling(request, a.kernel, a.payload, out, err)
    captured = capsys.readouterr()
    records = all_json(captured.out)
    assert {r["type"] for r in records} == {"profile"}
    sides = {r["side"] for r in records}
    for baseline, variants in TABLES["ppc64le"]:
        assert baseline.name in sides
        assert {v.name for v in variants if v.name != failing} <= sides
    assert failing not in sides and "not a result: QEMU died" in captured.err


def test_an_explained_step_needs_the_plugins_compiler_before_any_boot(  # type: ignore[no-untyped-def]
        kcross, tmp_path: Path) -> None:
    """The explanation's profiled boots load the profile plugin: the host's gcc is named
    among what this host lacks, in one line, before anything is fetched, built or booted;
    not when nothing is explained."""
    env = {"PATH": str(tmp_path / "empty"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    explained = kcross("lab", "ppc64le", "--compare-env", "KCROSS_RSEQ=off", "--explain",
                       extra_env=env)
    assert_one_line_error(explained, 2, "kcross lab ppc64le needs qemu-system-ppc64, ")
    assert explained.stderr.split(" (apt-get")[0].endswith(", gcc")
    plain = kcross("lab", "ppc64le", "--compare-env", "KCROSS_RSEQ=off", extra_env=env)
    assert_one_line_error(plain, 2, "kcross lab ppc64le needs qemu-system-ppc64, ")
    assert ", gcc " not in plain.stderr
    assert not (tmp_path / "cache").exists()
