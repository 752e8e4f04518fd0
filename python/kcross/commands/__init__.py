"""The subcommands that judge, export and share stored results, one module each.

Each module has ``add_parser(sub, parents)`` that adds its subcommand(s) to
``kcross``'s subparsers and sets ``func`` to a function
``(args, out, err) -> int`` as :mod:`kcross.cli` calls it.  Modules import
their heavy dependencies (numpy, scipy, SQLAlchemy, matplotlib) inside those
functions, so ``kcross --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Any

# In the order they appear in `kcross --help`.
MODULES = ("compare", "check", "history", "ab", "report", "fleet")


@dataclass(frozen=True)
class Parents:
    """The option groups shared by subcommands (argparse parents)."""

    db: argparse.ArgumentParser       # --db URL
    harness: argparse.ArgumentParser  # --harness PATH
    json: argparse.ArgumentParser     # --json


def add_parsers(sub: Any, parents: Parents) -> None:
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.add_parser(sub, parents)
