"""One word means one thing (issue 22): options renamed, their old spellings still taken
(scripts use them) but never shown: ``kcross sysinfo --readiness`` (was --check), ``kcross
run --no-readiness`` (was --no-check), ``--export numbers`` (files of numbers for ministat;
was ``--export ministat``, which ``compare --format ministat``, ministat's own report,
could be mistaken for)."""

from __future__ import annotations

import pytest
from kcross import export
from kcross.cli import build_parser


def parsed(*argv: str) -> object:
    return build_parser().parse_args(list(argv))


@pytest.mark.parametrize(("new", "old", "dest"), [
    (("sysinfo", "--readiness"), ("sysinfo", "--check"), "readiness"),
    (("run", "--no-readiness"), ("run", "--no-check"), "no_readiness"),
])
def test_the_old_spelling_sets_what_the_new_one_does(new: tuple[str, ...], old: tuple[str, ...],
                                                     dest: str) -> None:
    assert getattr(parsed(*new), dest) is True
    assert getattr(parsed(*old), dest) is True
    assert getattr(parsed(new[0]), dest) is False


@pytest.mark.parametrize(("command", "shown", "hidden"), [
    ("sysinfo", "--readiness", "--check"),
    ("run", "--no-readiness", "--no-check"),
])
def test_help_names_the_new_spelling_only(command: str, shown: str, hidden: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parsed(command, "--help")
    text = capsys.readouterr().out
    assert shown in text
    assert f"{hidden} " not in text and f"{hidden}\n" not in text and f"{hidden}," not in text


def test_export_numbers_and_its_old_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert export.requested([["ministat", "out.txt"]], db=None) == [("numbers", "out.txt")]
    assert export.requested([["numbers", "out.txt"]], db=None) == [("numbers", "out.txt")]
    assert export.exporter("ministat") is export.exporter("numbers")
    with pytest.raises(SystemExit):
        parsed("show", "--help")
    text = capsys.readouterr().out
    assert "numbers:" in text and "ministat:" not in text
