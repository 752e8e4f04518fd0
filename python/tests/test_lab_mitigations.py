"""The mitigation tables (kcross.lab.mitigations): pure data checks, nothing boots."""

from __future__ import annotations

import re

import pytest
from kcross.errors import UserError
from kcross.lab import mitigations as m
from kcross.lab.kernel import ARCHES

# -cpu MODEL[,+feat|-feat|key=value...]
CPU_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
CPU_OPTION = re.compile(r"[+-][a-z0-9][a-z0-9_.-]*|[a-z0-9][a-z0-9_.-]*=[A-Za-z0-9_.-]+")
MACHINE_OPT = re.compile(r"[a-z0-9][a-z0-9_.-]*=[A-Za-z0-9_.-]+")


def all_pairs():
    for arch, tables in m.TABLES.items():
        for baseline, variants in tables:
            yield arch, baseline, variants


def check_cpu(cpu: str) -> None:
    model, *options = cpu.split(",")
    assert CPU_MODEL.fullmatch(model), cpu
    assert all(CPU_OPTION.fullmatch(o) for o in options), cpu
    toggled = [o[1:] for o in options if o[0] in "+-"]
    assert len(toggled) == len(set(toggled)), f"{cpu}: a feature switched twice"


def check_line(text: str) -> None:
    assert text == text.strip() and text and "\n" not in text


def test_one_table_per_arch() -> None:
    assert set(m.TABLES) == set(ARCHES)
    assert all(m.TABLES[a] for a in ARCHES)


@pytest.mark.parametrize("arch", ARCHES)
def test_names_unique_and_plain(arch: str) -> None:
    names = [b.name for b, _ in m.TABLES[arch]]
    assert len(names) == len(set(names)), names
    for baseline, variants in m.TABLES[arch]:
        vnames = [v.name for v in variants]
        assert len(vnames) == len(set(vnames)), (baseline.name, vnames)
        for name in [baseline.name, *vnames]:
            # names are labels in tables and in the store: no whitespace
            assert name and not any(c.isspace() for c in name), name


def test_baselines_well_formed() -> None:
    for _, baseline, variants in all_pairs():
        check_line(baseline.what)
        assert variants, f"{baseline.name}: no variants"
        assert baseline.cpu is None or baseline.cpu == baseline.cpu.strip()
        if baseline.cpu is not None:
            check_cpu(baseline.cpu)
        assert all(MACHINE_OPT.fullmatch(o) for o in baseline.machine_opts), baseline
        assert "\n" not in baseline.append


def test_variants_well_formed() -> None:
    for _, _baseline, variants in all_pairs():
        for v in variants:
            check_line(v.what)
            if v.expect:
                check_line(v.expect)
            if v.cpu is not None:
                check_cpu(v.cpu)
            assert all(MACHINE_OPT.fullmatch(o) for o in v.machine_opts), v
            keys = [o.partition("=")[0] for o in v.machine_opts]
            assert len(keys) == len(set(keys)), v
            assert "\n" not in v.append and v.append == " ".join(v.append.split()), v
            assert v.append or v.cpu or v.machine_opts, f"{v.name}: switches nothing"


def test_no_variant_equals_its_baseline_or_another() -> None:
    for arch, baseline, variants in all_pairs():
        base = (baseline.cpu, baseline.machine_opts, " ".join(baseline.append.split()))
        seen = {base: "(baseline)"}
        for v in variants:
            args = m.variant_args(arch, baseline, v)
            assert args not in seen, f"{baseline.name}: {v.name} boots as {seen.get(args)}"
            seen[args] = v.name


def test_x86_models_turn_off_what_tcg_lacks() -> None:
    # QEMU 7.2 prints "TCG doesn't support requested feature" for each of these.
    lacks = {
        "Skylake-Client-v1": "pcid x2apic tsc-deadline hle rtm invpcid rdseed 3dnowprefetch xsavec",
        "EPYC-v1": "rdseed sha-ni fxsr-opt misalignsse 3dnowprefetch osvw topoext nrip-save xsavec",
    }
    models = {b.cpu.split(",")[0]: b.cpu for b, _ in m.TABLES["x86_64"] if b.cpu}
    assert set(lacks) <= set(models)
    vendors = set()
    for model, features in lacks.items():
        off = {o[1:] for o in models[model].split(",")[1:] if o.startswith("-")}
        assert set(features.split()) <= off, (model, set(features.split()) - off)
        vendors.add(model.startswith("EPYC"))
    assert vendors == {True, False}, "an Intel and an AMD baseline"


def test_variant_args_merges() -> None:
    base = m.Baseline("b", "a baseline", "power9", ("cap-cfpc=broken", "cap-sbbc=fixed"),
                      "quiet2  x")
    variant = m.Variant("v", "a variant", append="nokaslr", cpu="power10",
                        machine_opts=("cap-cfpc=fixed", "cap-ibs=broken"))
    tables = dict(m.TABLES)
    tables["ppc64le"] = [(base, [variant])]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(m, "TABLES", tables)
        cpu, opts, append = m.variant_args("ppc64le", base, variant)
        assert cpu == "power10"
        assert opts == ("cap-sbbc=fixed", "cap-cfpc=fixed", "cap-ibs=broken")
        assert append == "quiet2 x nokaslr"
        plain = m.Variant("p", "cmdline only", append="nospectre_v1")
        assert m.variant_args("ppc64le", base, plain) == (
            "power9", ("cap-cfpc=broken", "cap-sbbc=fixed"), "quiet2 x nospectre_v1")


def test_variant_args_refuses_unknown() -> None:
    baseline, variants = m.TABLES["ppc64le"][0]
    with pytest.raises(UserError, match="no mitigation table for arch 'sparc'"):
        m.variant_args("sparc", baseline, variants[0])
    with pytest.raises(UserError, match="is not one of the aarch64 mitigation baselines"):
        m.variant_args("aarch64", baseline, variants[0])


def test_refused_configurations_are_not_variants() -> None:
    for arch, variant, reason in m.REFUSED:
        assert arch in m.TABLES
        check_line(reason)
        for a, _baseline, variants in all_pairs():
            if a != arch:
                continue
            for v in variants:
                assert (v.cpu, v.machine_opts, v.append) != (
                    variant.cpu, variant.machine_opts, variant.append), (v.name, reason)
