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

from .. import numtext
from ..errors import ECHO_MAX, UserError, clipped, shown

LATEST = "latest"
TAG_MAX = 64  # tags.name's width
# Run ids are INTEGER columns: 32-bit on PostgreSQL.  No run has a larger id, and no
# latest~N reaches further back.
RUN_ID_MAX = 2**31 - 1
_TAG = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")
_LATEST = re.compile(r"latest(?:~(?P<back>[0-9]+))?(?:@(?P<host>[^\s@~]+))?")

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
    """Parse a RUN argument; a string that can be none of the forms is a :class:`UserError`,
    and so is a run id or an N out of range (1 to RUN_ID_MAX, 0 to RUN_ID_MAX)."""
    text = str(ref).strip()
    if text.isascii() and text.isdigit():  # not '0_1' nor '١', which int() takes as 1
        run_id = numtext.whole(text, 1, RUN_ID_MAX, signed=False)
        if run_id is None:
            raise UserError(f"no run {clipped(text, ECHO_MAX)}: a run id is a whole number "
                            f"from 1 to {RUN_ID_MAX}")
        return RunRef(text=text, run_id=run_id)
    latest = _LATEST.fullmatch(text)
    if latest is not None:
        back = numtext.whole(latest["back"] or "0", 0, RUN_ID_MAX, signed=False)
        if back is None:
            raise UserError(f"no run {clipped(text, ECHO_MAX)}: N in latest~N is a whole "
                            f"number from 0 to {RUN_ID_MAX}")
        return RunRef(text=text, back=back, host=latest["host"])
    if _TAG.fullmatch(text) and len(text) <= TAG_MAX:
        return RunRef(text=text, tag=text)
    raise UserError(f"run must be {REF_FORMS}, not {shown(text)}")


def check_tag_name(name: str) -> str:
    """A name a tag may have, or a :class:`UserError` saying why not."""
    if name == LATEST or _LATEST.fullmatch(name):
        raise UserError(f"{shown(name)} cannot be a tag: it already means a run "
                        "('latest', 'latest~N', 'latest@HOST')")
    if not _TAG.fullmatch(name):
        raise UserError(f"a tag starts with a letter and holds only letters, digits, '.', "
                        f"'_' and '-', not {shown(name)}")
    if len(name) > TAG_MAX:
        raise UserError(f"a tag has at most {TAG_MAX} characters, {shown(name)} has "
                        f"{len(name)}")
    return name
