"""Nothing below the command line sees it: outside kcross/cli/ (and kcross/__main__.py, which
starts it) no module imports argparse or kcross.cli, at its top or inside a function.  A
command's module turns its arguments into a typed request; what runs it takes that."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KCROSS = Path(__file__).resolve().parents[1] / "kcross"
ALLOWED = (KCROSS / "cli", KCROSS / "__main__.py")
FORBIDDEN = ("argparse", "kcross.cli")


def package_of(path: Path) -> str:
    """The package a module file's relative imports start from."""
    parts = path.relative_to(KCROSS.parent).with_suffix("").parts
    return ".".join(parts[:-1])


def imported(source: str, package: str) -> list[tuple[int, str]]:
    """Every module ``source`` imports (line, absolute name), wherever the import stands;
    ``from M import N`` counts as M and M.N."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found += [(node.lineno, name) for name in
                      (module, *(f"{module}.{alias.name}" for alias in node.names))]
    return found


def forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_nothing_outside_the_command_line_imports_it() -> None:
    offenders = sorted({f"{path.relative_to(KCROSS.parent)}:{line}: {name}"
                        for path in KCROSS.rglob("*.py")
                        if not any(path == a or a in path.parents for a in ALLOWED)
                        for line, name in imported(path.read_text(), package_of(path))
                        if forbidden(name)})
    assert offenders == []


@pytest.mark.parametrize("source", [
    "import argparse\n",
    "from argparse import Namespace\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import argparse\n",
    "def f():\n    from ..cli.options import number\n",
    "def f():\n    from .. import cli\n",
    "from kcross.cli import main\n",
    "import kcross.cli.options\n",
])
def test_the_check_sees_every_kind_of_import(source: str) -> None:
    """Absolute and relative, at the top, for types only, inside a function."""
    package = package_of(KCROSS / "lab" / "jobs.py")
    assert any(forbidden(name) for _, name in imported(source, package))
