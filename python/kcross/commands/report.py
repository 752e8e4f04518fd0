"""Placeholder: filled by issue 10's work."""

from __future__ import annotations

from typing import Any


def add_parser(sub: Any, parents: Any) -> None:
    return None
