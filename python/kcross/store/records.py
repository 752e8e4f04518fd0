"""What a stored record is: the rules a record read back from the store meets (readable
JSON, its record type, its packed samples put back and, when asked, the result schema),
each refusal one line naming the record and asking whether the database was edited by hand.

One place for every reader: a run read back (kcross.store.reading), a trend's results
(kcross.store.history), a run copied to another store (kcross.store.transfer).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import SchemaError, StoreError
from ..schema import IMPORT_VERSIONS, validate
from .packing import unpack


def damaged(what: str) -> StoreError:
    """The line of a stored record that breaks the rules: ``what``, and the question."""
    return StoreError(f"{what} (was the database edited by hand?)")


def of_type(value: Any, where: str, rtype: str) -> dict[str, Any]:
    """``value`` if it is a record of type ``rtype``."""
    if not isinstance(value, dict) or value.get("type") != rtype:
        raise damaged(f"{where} is not a {rtype} record")
    return value


def decoded(value: Any) -> Any:
    """A JSON column's value as read: SQLite gives the text as stored (parsed here;
    ValueError when it is not JSON), PostgreSQL's driver the value already parsed."""
    return json.loads(value) if isinstance(value, str) else value


def stored_record(value: Any, where: str, rtype: str, *, nullable: bool = False,
                  packed: bytes | None = None, check: bool = True) -> Any:
    """A stored JSON record (its packed arrays put back), checked like harness output
    when ``check``: one line if damaged."""
    if value is None:
        if nullable:
            return None
        raise damaged(f"{where} is missing")
    try:
        value = decoded(value)
    except ValueError as exc:
        raise StoreError(f"{where} is not readable JSON ({exc}); was the database "
                         "edited by hand?") from None
    if value is None and nullable:  # JSON null stored as text
        return None
    of_type(value, where, rtype)
    try:
        unpack(value, bytes(packed) if packed is not None else None)
    except ValueError as exc:
        if check:  # what the schema says of the record is the better line
            validated(value, where)
        raise damaged(f"{where}: {exc}") from None
    if check:
        validated(value, where)
    return value


def validated(value: dict[str, Any], where: str) -> None:
    """The result schema's check of a stored record (kcross.schema.validate)."""
    try:
        validate(value, where, IMPORT_VERSIONS)
    except SchemaError as exc:
        raise damaged(str(exc)) from None
