"""The compiled schema (fastjsonschema) is only ever the fast "yes" of jsonschema's decision:
whatever it accepts, jsonschema accepts, on every record of the project's captures and on
thousands of mutations of them; it accepts the project's own records (else it saves
nothing); and it is used only while it is of the shipped schema file."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kcross import compiled_schema, schema

DATA = Path(__file__).parent / "data"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compile-schema"

# What a value is replaced by: every JSON type, and the edges the schema draws
# (empty, zero, negative, fractional where an integer is meant, an unknown string).
# (A tuple is no JSON, but a record built in Python may hold one: jsonschema refuses it as
# an array, so the compiled check must too.)
REPLACEMENTS: tuple[Any, ...] = (None, True, 0, -1, 1.5, "", "x", [], {}, [None], {"x": 1},
                                 (), (1.0, 2.0))


def _records() -> list[dict[str, Any]]:
    out = []
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and _reference_valid(rec):
                out.append(rec)
    return out


def _reference_valid(record: Any) -> bool:
    return bool(schema._validator().is_valid(record))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a record (a list's first two items stand for the rest)."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):
            yield from _paths(item, (*path, i))


def _mutations(record: dict[str, Any], rng: random.Random,
               limit: int) -> Iterator[dict[str, Any]]:
    places = list(_paths(record))
    rng.shuffle(places)
    for place in places[:limit]:
        *parent_path, last = place
        for replacement in (*rng.sample(REPLACEMENTS, 4), "delete"):
            mutated = copy.deepcopy(record)
            parent: Any = mutated
            for step in parent_path:
                parent = parent[step]
            if replacement == "delete":
                if isinstance(parent, dict):
                    del parent[last]
                else:
                    parent.pop(last)
            else:
                parent[last] = copy.deepcopy(replacement)
            yield mutated


def _checker() -> Any:
    check = compiled_schema.checker(schema.schema_text())
    assert check is not None, compiled_schema.unusable(schema.schema_text())
    return check


def test_it_accepts_the_projects_own_records() -> None:
    records = _records()
    assert len(records) > 200
    check = _checker()
    refused = [f"{r.get('type')} {r.get('suite', '')}/{r.get('name', '')}"
               for r in records if not check(r)]
    assert not refused, f"the compiled check refuses valid records (no time saved): {refused[:5]}"


def test_what_it_accepts_jsonschema_accepts() -> None:
    """Mutations of every kind of record: a compiled yes is never a jsonschema no."""
    rng = random.Random(20261128)
    check = _checker()
    by_kind: dict[tuple[Any, Any], dict[str, Any]] = {}
    for rec in _records():  # one record of each type and schema version, and each suite
        by_kind.setdefault((rec.get("type"), rec.get("schema"), rec.get("suite")), rec)
    tried = accepted = refused_by_both = 0
    for record in by_kind.values():
        for mutated in _mutations(record, rng, limit=60):
            tried += 1
            if check(mutated):
                accepted += 1
                assert _reference_valid(mutated), \
                    f"the compiled check accepts what jsonschema refuses: {mutated!r:.300}"
            else:
                refused_by_both += 1
    # the mutations do reach the schema's refusals, and some still leave a valid record
    assert tried > 2000 and refused_by_both > tried // 2 and accepted > 0, \
        (tried, accepted, refused_by_both)


def test_a_planted_permissive_check_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The implication test can fail: a check that accepts everything breaks it."""
    monkeypatch.setattr(compiled_schema, "checker", lambda text: (lambda record: True))
    with pytest.raises(AssertionError, match="accepts what jsonschema refuses"):
        test_what_it_accepts_jsonschema_accepts()


def test_validate_still_words_the_error() -> None:
    """A record the compiled check refuses gets jsonschema's one-line error, as before."""
    rec = next(r for r in _records() if r.get("type") == "result")
    assert _checker()(rec)
    bad = copy.deepcopy(rec)
    bad["iters"] = "many"
    with pytest.raises(schema.SchemaError, match=r"line 3: result record .*\$\.iters: must be"):
        schema.validate(bad, "line 3", schema.IMPORT_VERSIONS)


def test_the_generated_module_is_of_the_schema_file() -> None:
    """Its recorded SHA-256 is the shipped schema's (else kcross ignores it: slower), and
    scripts/compile-schema writes it byte for byte (when run with the fastjsonschema that
    wrote it: the generated code is that version's)."""
    import fastjsonschema
    from kcross import _result_format_check as generated

    assert compiled_schema.unusable(schema.schema_text()) is None
    if generated.VERSION != fastjsonschema.VERSION:
        pytest.skip(f"made by fastjsonschema {generated.VERSION}, {fastjsonschema.VERSION} "
                    "is installed: its code would differ")
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_a_module_of_another_schema_is_not_used() -> None:
    """A schema edited without compiling it again: jsonschema alone decides."""
    compiled_schema.checker.cache_clear()
    try:
        assert compiled_schema.checker(schema.schema_text() + " ") is None
    finally:
        compiled_schema.checker.cache_clear()


def test_a_tuple_is_no_array() -> None:
    """JSON has lists only: a record built in Python with a tuple for its samples is refused
    as jsonschema refuses it (fastjsonschema's own check takes a tuple)."""
    rec = next(r for r in _records() if r.get("type") == "result")
    assert _checker()(rec)
    bad = {**rec, "samples": tuple(rec["samples"])}
    assert not _reference_valid(bad)
    assert not _checker()(bad)
    with pytest.raises(schema.SchemaError, match=r"\$\.samples: must be a list"):
        schema.validate(bad, "line 3", schema.IMPORT_VERSIONS)
