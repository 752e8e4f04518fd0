"""Run references: how a command names a stored run, and what a tag name may be.

A RUN on the command line is one of

* a run id (``12``);
* ``latest`` (the most recently started run), ``latest~N`` (N runs before it);
* ``latest@HOST``, ``latest~N@HOST``: the same among the runs of one machine,
  HOST being its hostname or a prefix of its machine hash (``kcross runs``
  shows both);
* a tag (``kcross tag RUN NAME``, ``kcross run --tag NAME``): a name that
  starts with a letter and holds letters, digits, ``.``, ``_`` and ``-``.

This module only parses; :class:`kcross.store.Store` looks the reference up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UserError

LATEST = "latest"
TAG_MAX = 64  # tags.name's width
_TAG = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")
_LATEST = re.compile(r"latest(?:~(?P<back>[0-9]+))?(?:@(?P<host>[^\s@~]+))?")
# A prefix of a machine hash (hex SHA-256) short enough to type, long enough to mean something.
HASH_SHOWN = 10

REF_FORMS = "a run id, 'latest', 'latest~N', 'latest@HOST' or a tag"


@dataclass(frozen=True)
class RunRef:
    """A parsed reference: exactly one of ``run_id``, ``back`` (latest~back) or ``tag``."""

    text: str
    run_id: int | None = None
    back: int | None = None      # 0 for latest
    host: str | None = None      # latest@host
    tag: str | None = None


def parse_ref(ref: str | int) -> RunRef:
    """Parse a RUN argument; a string that can be none of the forms is a :class:`UserError`."""
    text = str(ref).strip()
    try:
        return RunRef(text=text, run_id=int(text))
    except ValueError:
        pass
    latest = _LATEST.fullmatch(text)
    if latest is not None:
        return RunRef(text=text, back=int(latest["back"] or 0), host=latest["host"])
    if _TAG.fullmatch(text) and len(text) <= TAG_MAX:
        return RunRef(text=text, tag=text)
    raise UserError(f"run must be {REF_FORMS}, not {text!r}")


def check_tag_name(name: str) -> str:
    """A name a tag may have, or a :class:`UserError` saying why not."""
    if name == LATEST or _LATEST.fullmatch(name):
        raise UserError(f"{name!r} cannot be a tag: it already means a run "
                        "('latest', 'latest~N', 'latest@HOST')")
    if not _TAG.fullmatch(name):
        raise UserError(f"a tag starts with a letter and holds only letters, digits, '.', "
                        f"'_' and '-', not {name!r}")
    if len(name) > TAG_MAX:
        raise UserError(f"a tag has at most {TAG_MAX} characters, {name!r} has {len(name)}")
    return name
