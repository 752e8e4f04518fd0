"""kcross.forcings, the Python side's one list of the harness's settings, is the C side's:
the library's (src/settings.c: kc_library_settings, each one's values beside its user) and
the harness's (harness/settings.c: kh_settings), name for name, in the fingerprint's order,
value for value; and everything on the Python side that names them takes them from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kcross import forcings

ROOT = Path(__file__).resolve().parents[2]
C_FILES = [*sorted((ROOT / "src").glob("*.c")), *sorted((ROOT / "harness").glob("*.c"))]
_ARRAY = re.compile(r"const\s+char\s*\*\s*const\s+(\w+)\[\]\s*=\s*\{([^}]*)\}", re.S)


def _arrays() -> dict[str, str]:
    """Every `const char *const NAME[] = { ... }` of src/ and harness/, by NAME."""
    return {m[1]: m[2] for f in C_FILES for m in _ARRAY.finditer(f.read_text())}


def _strings(body: str) -> tuple[str, ...] | None:
    """The values of an array of string literals ending in NULL; None when it holds
    anything else (KCROSS_SYSCALL's: the arch header's macros)."""
    items = [item.strip() for item in body.split(",") if item.strip()]
    if items[-1:] != ["NULL"] or not all(re.fullmatch(r'"[^"]*"', i) for i in items[:-1]):
        return None
    return tuple(i[1:-1] for i in items[:-1])


def _library() -> list[tuple[str, str]]:
    """(name, its values' array) of the library's settings, in kc_library_settings' order."""
    text = (ROOT / "src" / "settings.c").read_text()
    names = re.findall(r'"(KCROSS_\w+)"', _arrays()["kc_library_settings"])
    valid = re.search(r"const char \*const \*valid\[\] = \{([^}]*)\}", text)
    assert valid is not None, "src/settings.c: kc_settings_error's valid[] not found"
    idents = [v.strip() for v in valid[1].split(",") if v.strip()]
    assert len(idents) == len(names), (names, idents)
    return list(zip(names, idents, strict=True))


def _harness() -> list[tuple[str, str, str]]:
    """(name, its values' array or NULL, its check or NULL) of kh_settings, in order."""
    text = (ROOT / "harness" / "settings.c").read_text()
    table = re.search(r"const struct kh_setting kh_settings\[\] = \{(.*?)\n\};", text, re.S)
    assert table is not None, "harness/settings.c: kh_settings not found"
    return re.findall(r'\{\s*"(KCROSS_\w+)",\s*(\w+),\s*(\w+),', table[1])


def test_the_table_is_the_c_sides_in_the_fingerprints_order() -> None:
    library, harness = _library(), _harness()
    assert [f.name for f in forcings.FORCINGS] == [n for n, _ in library] + \
        [n for n, _, _ in harness]


def test_each_forcings_values_are_the_c_sides() -> None:
    arrays = _arrays()
    kinds = {"check_fail": forcings.GLOB, "check_delay": forcings.GLOB_NS}
    sides = [(n, ident, "NULL") for n, ident in _library()] + _harness()
    for name, valid, check in sides:
        forcing = forcings.named(name)
        assert forcing is not None
        if valid == "NULL":
            assert forcing.kind == kinds[check], name
            continue
        values = _strings(arrays[valid])
        if values is None:   # macros: the architecture's syscall mechanisms
            assert forcing.kind == forcings.MECHANISM, name
        else:
            assert (forcing.kind, forcing.values) == (forcings.VALUES, values), name


def test_the_largest_planted_delay_is_the_harnesss() -> None:
    header = (ROOT / "harness" / "harness.h").read_text()
    m = re.search(r"#define\s+KH_DELAY_MAX_NS\s+([0-9.e]+)", header)
    assert m is not None and float(m[1]) == forcings.DELAY_MAX_NS


def test_every_name_on_the_python_side_comes_from_the_table() -> None:
    from kcross.cli.options import ENVIRONMENT
    from kcross.run.remote import HARNESS_ENV

    assert HARNESS_ENV == forcings.USER_SET
    for name in forcings.USER_SET:
        assert f"  {name} " in ENVIRONMENT, name
    assert "KCROSS_PROFILE" not in forcings.USER_SET   # kcross lab --profile's own
    for f in (ROOT / "python" / "kcross").rglob("*.py"):
        if f.name == "forcings.py":
            continue
        # a second tuple of the names is a second list
        assert not re.search(r'\(\s*"KCROSS_SYSCALL",\s*"KCROSS_VDSO"', f.read_text()), f


@pytest.mark.parametrize(("name", "value", "why"), [
    ("KCROSS_RSEQ", "off", None),
    ("KCROSS_RSEQ", "0", "KCROSS_RSEQ=0: not one of auto, on, off"),
    ("KCROSS_VDSO", "no", "KCROSS_VDSO=no: not one of 0, 1"),
    ("KCROSS_RSEQ", "", "KCROSS_RSEQ= is empty (an empty forcing is none): give a value"),
    ("KCROSS_SYSCALL", "anything", None),   # the architecture's: the lab reads the tree
    ("KCROSS_TEST_FAIL", "*", None),
    ("KCROSS_PROFILE", "1", "KCROSS_PROFILE is set by kcross lab --profile and --trace, "
                            "not by hand"),
    ("KCROSS_NOSUCH", "1", "KCROSS_NOSUCH is not one of the harness's settings "
                           "(KCROSS_SYSCALL, KCROSS_VDSO, KCROSS_RSEQ, KCROSS_TIMER, "
                           "KCROSS_TEST_FAIL, KCROSS_TEST_DELAY)"),
])
def test_refusal(name: str, value: str, why: str | None) -> None:
    assert forcings.refusal(name, value) == why


@pytest.mark.parametrize(("text", "pair"), [
    ("KCROSS_RSEQ=off", ("KCROSS_RSEQ", "off")), ("A=b=c", ("A", "b=c")), ("A=", ("A", "")),
    ("KCROSS_RSEQ", None), ("=off", None), ("1A=x", None), ("A B=x", None),
])
def test_assignment(text: str, pair: tuple[str, str] | None) -> None:
    assert forcings.assignment(text) == pair


@pytest.mark.parametrize(("value", "parts"), [
    ("getppid-inline:6.5", ("getppid-inline", 6.5)), ("a:b:1e6", ("a:b", 1e6)),
    ("getppid-inline", None), (":5", None), ("x:", None), ("x:0", None), ("x:1e7", None),
    ("x:nan", None), ("x:ten", None),
])
def test_delay_parts(value: str, parts: tuple[str, float] | None) -> None:
    assert forcings.delay_parts(value) == parts
