"""One registry of the fingerprint's fields (kcross/fingerprint.py, issue 22).

- Every field the result format defines (the schema file's fingerprint, and every field of
  the captured fingerprints) is in the registry, or named in UNLISTED with its reason.
- The machine identity follows from the registry and is the one the store's rows hold:
  the hashes of the captures are fixed here (EXPECTED_IDENTITY), what the registry calls per
  run or a label does not move it, what it calls the machine's (or does not know) does.
- A field's path is spelled in kcross/fingerprint.py and in the producers of the record's
  groups only (PRODUCERS): elsewhere a module reads ``FIELD.of(fingerprint)``.  The check
  reads the source (ast) for the ways a path is spelled (as a lookup's arguments, a tuple,
  a key read from or written into what is named a fingerprint or from a group read from
  one, a group's members as a dict), and a planted spelling of each way fails it.  It
  cannot follow a value through calls: a group passed to a function under another name
  and read there is not seen (review keeps that to the producers).
"""

from __future__ import annotations

import ast
import copy
import io
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from kcross import fingerprint as fields
from kcross.fingerprint import FIELDS, identity
from kcross.judge.machine import NAMED_MOST, differences

KCROSS = Path(fields.__file__).resolve().parent
SCHEMA = json.loads((KCROSS / "result-format.schema.json").read_text())

# Fields of the schema's fingerprint the registry leaves out on purpose: none today.
UNLISTED: dict[str, str] = {}

# The modules that may spell a field's path: the registry, and what writes a group the
# harness does not (the lab's, LAVA's) as the schema lays it out.
PRODUCERS: dict[str, str] = {
    "fingerprint.py": "the registry",
    "lab/session.py": "writes the lab group (lab_group, kernel_identity) into the guest's "
                      "fingerprint",
    "lava/imports.py": "writes the lava group; checks the job's lab group against what "
                       "LAVA ran and settles its emulator version and network",
}

CAPTURES = ("real-run.jsonl", "real-sysinfo.jsonl", "schema1-syscall.jsonl",
            "lab-ppc64le-sc.jsonl", "lab-ppc64le-scv.jsonl")

# The identities of the captures as the store keys them (computed by the rule before the
# registry: a change of any is a change of every stored machine row).  The lab's changed
# once, on purpose (issue 23: the kernel is a lab machine's axis, not its identity; store
# schema 6 recomputed the stored lab machines' rows).
EXPECTED_IDENTITY = {
    "real-run.jsonl": "bf5e4d0a520e64a5d6742a13c5823a785fe9f2518c1ee7f9043d0b6b70e24c17",
    "real-sysinfo.jsonl": "bf5e4d0a520e64a5d6742a13c5823a785fe9f2518c1ee7f9043d0b6b70e24c17",
    "schema1-syscall.jsonl": "92ab8755e19b565f75a43790ade1a1858a64d52654e33e88324a43425f638bb4",
    "lab-ppc64le-sc.jsonl": "e1ae31e92174d618d9e1180c5d7ac5c9f0edb4e8bb251655110cc1681de8cf2a",
    "lab-ppc64le-scv.jsonl": "04ab26fb8ee1e2c7f7350d49261c85ae04cad658cdb435d14cb767820c8b8d1d",
    "board": "b6c1c67af3e12d159ac9c0d1a05611ff791299c107cfa79c0b5584827f4eb29e",
    "qemu": "e1ae31e92174d618d9e1180c5d7ac5c9f0edb4e8bb251655110cc1681de8cf2a",
}
LAVA = {"job_id": "17", "device": "board-1", "device_type": "rk3399",
        "dispatcher_version": "2025.04"}


def capture(name: str) -> dict[str, Any]:
    for line in (DATA / name).read_text().splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            assert record["type"] == "fingerprint"
            return record
    raise AssertionError(f"no fingerprint in {name}")


def fingerprints() -> dict[str, dict[str, Any]]:
    found = {name: capture(name) for name in CAPTURES}
    found["board"] = {**found["real-run.jsonl"], "lava": dict(LAVA)}
    found["qemu"] = {**found["lab-ppc64le-sc.jsonl"],
                     "lava": {**LAVA, "device": "qemu-1", "device_type": "qemu"}}
    return found


# ---------------------------------------------------------------- the registry is complete

def _resolve(node: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = SCHEMA["$defs"][ref.rpartition("/")[2]]
        return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def schema_fields(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], Mapping[str, Any]]]:
    """Every field a schema object names (required or described), with its definition."""
    node = _resolve(node)
    for part in node.get("allOf", ()):
        yield from schema_fields(part, path)
    props = node.get("properties", {})
    for key in dict.fromkeys([*node.get("required", ()), *props]):
        inner = _resolve(props.get(key, {}))
        yield (*path, key), inner
        yield from schema_fields(inner, (*path, key))


def test_every_field_of_the_schemas_fingerprint_is_in_the_registry() -> None:
    found = dict(schema_fields(SCHEMA["$defs"]["fingerprint-v2"]))
    assert len(found) > 80
    missing = [".".join(p) for p in found
               if fields.known(p) is None and ".".join(p) not in UNLISTED]
    assert missing == []
    # a group whose names are its own (the vulnerabilities) is a map
    maps = [".".join(p) for p, d in found.items() if "additionalProperties" in d]
    assert maps and all(fields.known(tuple(m.split("."))).kind == fields.MAP
                        for m in maps)


@pytest.mark.parametrize("name", CAPTURES)
def test_every_field_of_a_captured_fingerprint_is_known(name: str) -> None:
    """The fields the doc lists beyond the schema's required ones (rseq.percpu_mode,
    timer.calibration's...) too."""
    assert fields.unknown(capture(name)) == []


def test_the_registry_is_well_formed() -> None:
    paths = [f.path for f in FIELDS]
    assert len(paths) == len(set(paths))
    labels = [f.label for f in FIELDS]
    assert sorted({x for x in labels if labels.count(x) > 1}) == []
    for f in FIELDS:
        assert f.kind in fields.KINDS and f.group in fields.GROUPS, f
        assert f.identity in fields.IDENTITIES, f
        if len(f.path) > 1:   # a member follows its group, which is one
            parent = fields.known(f.path[:-1])
            assert parent is not None and parent.kind == fields.GROUP, f
            assert paths.index(parent.path) < paths.index(f.path), f
        assert not f.closed or f.kind == fields.GROUP, f
        assert f.named in fields.NAMED and (f.named != fields.EACH or f.kind == fields.GROUP), f


def test_a_field_the_registry_does_not_know_is_found_and_named_by_its_path() -> None:
    fp = copy.deepcopy(capture("real-run.jsonl"))
    fp["cpu"]["cache"] = "32K"
    fp["forced"]["KCROSS_NEW"] = "1"
    fp["vulnerabilities"]["new_flaw"] = "Mitigation: x"    # a map's name: known
    fp["newgroup"] = {"a": 1}
    assert fields.unknown(fp) == [(("cpu", "cache"), "32K"), (("forced", "KCROSS_NEW"), "1"),
                                  (("newgroup",), {"a": 1})]
    assert [fields.label_of(p) for p, _ in fields.unknown(fp)] == [
        "CPU cache", "forced KCROSS_NEW", "newgroup"]


# ---------------------------------------------------------------- the machine identity

@pytest.mark.parametrize("name", sorted(EXPECTED_IDENTITY))
def test_the_identity_is_the_one_the_store_holds(name: str) -> None:
    assert identity(fingerprints()[name]) == EXPECTED_IDENTITY[name]


def _changed(fp: Mapping[str, Any], field: fields.Field) -> dict[str, Any]:
    old = field.of(fp)
    new: Any = "changed" if not isinstance(old, (dict, list)) else {"changed": 1}
    return field.put(fp, new)


@pytest.mark.parametrize("base", ["board", "qemu"])
def test_the_identity_moves_with_the_machines_fields_only(base: str) -> None:
    fp = fingerprints()[base]
    lab_run = fields.lab(fp) is not None
    for field in FIELDS:
        if any(not isinstance(fields.known(field.path[:cut]).of(fp), Mapping)
               for cut in range(1, len(field.path))) or \
                (field.of(fp) is None and field.kind == fields.GROUP):
            continue       # in (or of) a group this fingerprint has not
        moved = identity(_changed(fp, field)) != identity(fp)
        assert moved == field.in_identity(lab_run), (field.name, moved)


def test_the_lab_kernel_and_what_the_guest_reads_of_it_are_the_lab_machines_axis() -> None:
    """Issue 23: the kernel a lab run booted is the lab machine's axis, not its identity;
    which fields follow the kernel is a decision (docs/result-format.md lists them), not
    something a new field joins silently."""
    axis = {".".join(f.path) for f in FIELDS if f.identity == fields.KERNEL_AXIS}
    assert axis == {
        "cpu.flags", "kernel.release", "kernel.version", "smt.control", "isolation.isolcpus",
        "isolation.nohz_full", "lab.kernel", "lab.kernel.source", "lab.kernel.package",
        "lab.kernel.version", "lab.kernel.release", "lab.kernel.sha256",
        "lab.kernel.config_sha256", "lab.kernel.version_string", "vulnerabilities",
        "rseq.size", "rseq.feature_size", "rseq.align", "auxv.hwcap", "auxv.hwcap2",
        "auxv.rseq_feature_size", "auxv.rseq_align", "perf.paranoid", "perf.hardware",
        "perf.software", "perf.reasons"}
    # every member of the schema's lab.kernel is the axis's, but where the file lies
    members = SCHEMA["$defs"]["lab"]["properties"]["kernel"]
    for name in members["properties"]:
        field = fields.known(("lab", "kernel", name))
        assert field is not None, name
        assert field.identity == (fields.LABEL if name == "path" else fields.KERNEL_AXIS), name
    # what the lab sets up around the kernel stays the lab machine's identity
    assert fields.KERNEL_CMDLINE.identity == fields.LAB_APPEND.identity == fields.MACHINE


def test_a_field_the_registry_does_not_know_is_part_of_the_identity() -> None:
    fp = fingerprints()["board"]
    assert identity({**fp, "newgroup": 1}) != identity(fp)
    assert identity(fields.CPU.put(fp, {**fields.CPU.members(fp), "cache": 1})) != identity(fp)
    # but for the closed LAVA group: what it does not list is not the board
    assert identity(fields.LAVA.put(fp, {**LAVA, "worker": "w1"})) == identity(fp)


# ---------------------------------------------------------------- differences

def test_differences_name_the_registrys_named_fields_in_its_order() -> None:
    base = capture("real-run.jsonl")
    other = fields.KERNEL_CMDLINE.put(fields.HOSTNAME.put(base, "b"), "quiet")
    other = fields.TIMER_HZ.put(fields.CPU_FLAGS.put(other, ["x"]), 1.0)
    assert differences([base, other]) == ["hostname", "kernel command line"]
    assert differences([capture("lab-ppc64le-sc.jsonl"), capture("lab-ppc64le-scv.jsonl")]) \
        == ["syscall mechanism", "lab", "forced KCROSS_SYSCALL"]
    assert differences([base, fields.FORCED.put(base, {"KCROSS_NEW": "1"})]) \
        == ["forced KCROSS_NEW"]                      # a member the registry does not list
    vulns = {**fields.VULNERABILITIES.members(base), "mds": "Vulnerable", "new_flaw": "x"}
    assert differences([base, fields.VULNERABILITIES.put(base, vulns)]) \
        == ["mitigations (mds, new_flaw)"]


def test_when_no_named_field_differs_the_others_of_the_identity_are_named() -> None:
    """Not "other fingerprint fields": the registry knows them, or their paths say."""
    base = capture("real-run.jsonl")
    assert differences([capture("schema1-syscall.jsonl"), base]) == ["hwcap"]
    assert differences([base, fields.CPU_FLAGS.put(base, ["x"])]) == ["CPU flags"]
    assert differences([base, {**base, "newgroup": {"a": 1}}]) == ["newgroup"]
    assert differences([base, fields.CPU.put(base, {**fields.CPU.members(base), "l2": 1})]) \
        == ["CPU l2"]
    assert differences([base, fields.RSEQ.put(base, None)]) == ["rseq"]   # a group against none
    # per-run values are no difference of the machine
    assert differences([base, fields.TIMER_HZ.put(base, 1.0)]) == []


def test_many_other_fields_are_named_up_to_a_count() -> None:
    base = capture("real-run.jsonl")
    other = dict(base)
    for field in fields.FIELDS:
        if field.path[0] in ("rseq", "auxv", "libc") and len(field.path) == 2:
            other = field.put(other, "changed")
    found = differences([base, other])
    assert len(found) == NAMED_MOST and found[0] == "libc"
    assert re.fullmatch(r"\d+ more fields", found[-1])


# ---------------------------------------------------------------- paths spelled once

PATHS = {f.path for f in FIELDS}
# Each group's members: a dict of three or more of them, and nothing else, writes the group.
MEMBERS = {f.path: {g.path[-1] for g in FIELDS if g.path[:-1] == f.path}
           for f in FIELDS if f.kind == fields.GROUP}
# The record's envelope (every record has it) is no fingerprint group.
TOP = {f.path[0] for f in FIELDS} - {"type", "schema"}
FINGERPRINT_LIKE = re.compile(r"(?<![\w.])(fp|fingerprint)\b|_fp\b|\.fingerprint\b|"
                              r"\bfingerprint\b")


def _const(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def _key(node: ast.AST) -> tuple[ast.AST, str] | None:
    """(receiver, key) of ``X["key"]`` or ``X.get("key"...)``."""
    if isinstance(node, ast.Subscript):
        key = _const(node.slice)
        return (node.value, key) if key is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("get", "pop", "setdefault") and node.args:
        key = _const(node.args[0])
        return (node.func.value, key) if key is not None else None
    return None


def _fingerprint_group(node: ast.AST) -> str | None:
    """The group G a fingerprint-like expression's ``["G"]``/``.get("G")`` reads, or None."""
    found = _key(node)
    if found is not None and found[1] in TOP and FINGERPRINT_LIKE.search(ast.unparse(found[0])):
        return found[1]
    return None


def spelled(source: str) -> list[tuple[int, str]]:
    """Where ``source`` spells a fingerprint field's path: (line, what)."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    bound: dict[str, str] = {}      # a name bound to a fingerprint group -> the group
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            for inner in ast.walk(node.value):
                group = _fingerprint_group(inner)
                if group is not None:
                    bound[node.targets[0].id] = group
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            words = [_const(a) for a in node.args]
            for i in range(len(words)):
                for j in range(i + 2, len(words) + 1):
                    if None not in words[i:j] and tuple(words[i:j]) in PATHS:
                        found.append((line, f"{'.'.join(words[i:j])} as arguments"))
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) >= 2:
            words = [_const(e) for e in node.elts]
            if None not in words and tuple(words) in PATHS:
                found.append((line, f"{'.'.join(words)} as a tuple"))
        group = _fingerprint_group(node)
        if group is not None:
            found.append((line, f"{group} read from a fingerprint"))
        key = _key(node)
        if key is not None and isinstance(key[0], ast.Name) and key[0].id in bound \
                and (bound[key[0].id], key[1]) in PATHS:
            found.append((line, f"{bound[key[0].id]}.{key[1]} read from a group"))
        if isinstance(node, ast.Dict) and any(
                k is None and FINGERPRINT_LIKE.search(ast.unparse(v))
                for k, v in zip(node.keys, node.values, strict=True)):
            found += [(line, f"{_const(k)} written into a fingerprint") for k in node.keys
                      if k is not None and _const(k) in TOP]
        if isinstance(node, ast.Dict) and len(node.keys) >= 3:
            keys = {_const(k) for k in node.keys if k is not None}
            found += [(line, f"the {'.'.join(group)} group written") for group, members
                      in MEMBERS.items() if len(keys) == len(node.keys) and keys <= members]
    return sorted(set(found))


def offenders(root: Path = KCROSS, planted: Mapping[str, str] | None = None) -> list[str]:
    """``file:line: what`` for each path spelled outside PRODUCERS (``planted``: sources
    put in place of, or beside, the tree's, by path below kcross/)."""
    sources = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}
    sources.update(planted or {})
    return [f"{rel}:{line}: {what}" for rel, text in sorted(sources.items())
            if rel not in PRODUCERS for line, what in spelled(text)]


def test_field_paths_are_spelled_only_in_the_registry_and_the_producers() -> None:
    assert offenders() == []


def test_every_producer_is_a_module_that_spells_a_path() -> None:
    """An entry that no longer spells one goes (as the layers' exceptions do)."""
    for rel in PRODUCERS:
        assert spelled((KCROSS / rel).read_text()) or rel == "fingerprint.py", rel


@pytest.mark.parametrize(("source", "what"), [
    ('def f(fp):\n    return dig(fp, "cpu", "model")\n', "cpu.model as arguments"),
    ('def f(m):\n    return m.fp("perf", "paranoid")\n', "perf.paranoid as arguments"),
    ('KEY = ("host", "time")\n', "host.time as a tuple"),
    ('def f(run):\n    return run.fingerprint.get("lab")\n', "lab read from a fingerprint"),
    ('def f(fp):\n    return fp["timer"]["hz"]\n', "timer read from a fingerprint"),
    ('def f(machine_fp):\n    return (machine_fp.get("host") or {}).get("time")\n',
     "host read from a fingerprint"),
    ('def f(fingerprint):\n    sc = fingerprint.get("syscall") or {}\n'
     '    return sc.get("forced")\n', "syscall.forced read from a group"),
    ('def f(fp, t):\n    return {**fp, "host": {"time": t}}\n',
     "host written into a fingerprint"),
    ('def f(a, b, c):\n    return {"device": a, "job_id": b, "device_type": c}\n',
     "the lava group written"),
])
def test_a_planted_spelling_fails_the_check(source: str, what: str) -> None:
    found = offenders(planted={"views/planted.py": source})
    assert [o for o in found if o.startswith("views/planted.py:") and what in o], found
    # ... and in a producer it is allowed
    assert not [o for o in offenders(planted={"lab/session.py": source})
                if o.startswith("lab/session.py:")]


@pytest.mark.parametrize("source", [
    'def f(plan):\n    return plan.get("cpu")\n',                  # a plan's CPU
    'def f(args):\n    return ("cpu", args.cpu)\n',                # an option
    'def f(meta):\n    return meta["kernel"]\n',                   # a lab cache's file
    'def f(fp):\n    return fields.CPU_MODEL.of(fp)\n',
    'def f(a, b):\n    return {"hostname": a, "time": b, "pid": 1}\n',   # not the host group
])
def test_what_is_not_a_fingerprints_path_passes(source: str) -> None:
    assert offenders(planted={"views/planted.py": source}) == []


# ---------------------------------------------------------------- shown

def test_sysinfo_shows_a_field_the_registry_does_not_know_by_its_path() -> None:
    from kcross.views.fingerprint import sysinfo
    from rich.console import Console

    fp = copy.deepcopy(capture("real-run.jsonl"))

    def shown(fingerprint: dict[str, Any]) -> str:
        out = io.StringIO()
        Console(width=200, file=out).print(sysinfo(fingerprint))
        return out.getvalue()

    assert "does not know" not in shown(fp)
    fp["cpu"]["cache"] = "32K"
    fp["newgroup"] = {"a": True}
    text = shown(fp)
    assert "Fields this kcross does not know" in text
    assert re.search(r"cpu\.cache +32K", text) and re.search(r"newgroup +a: yes", text)
