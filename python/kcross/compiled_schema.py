"""The result format's schema compiled to Python: the fast "yes" of :func:`kcross.schema.validate`.

jsonschema walks the schema as data for every record, over a millisecond for a result record
of a few hundred samples: a tenth of a second for each import of a 50-benchmark capture, and
as much for every live run.  fastjsonschema turns the same schema file into Python functions
that check a record in a tenth of that time; ``scripts/compile-schema`` writes them into
``_result_format_check.py`` (generated, never edited by hand; compiling at each start would
cost more than it saves).

The compiled check is only ever the fast path of a decision jsonschema owns: a record it
accepts is valid; one it refuses is judged again by jsonschema, which words the error (and
would accept it, should fastjsonschema read a keyword more strictly, e.g. 1.0 as an
integer).  So a difference between the two could cost time, never let through a record
jsonschema refuses: python/tests/test_compiled_schema.py holds that implication on every
record of the project's captures and thousands of mutations of them.  The generated module
records the SHA-256 of the schema file it was made from, and is used only while that is the
shipped schema's: a schema edited without running the script makes kcross slower (and a test
fail), never wrong.  Nothing here decides what is valid.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache
from typing import Any

GENERATED = "_result_format_check.py"   # in this package, written by scripts/compile-schema


def digest(schema_text: str) -> str:
    """The SHA-256 of a schema file's text: what the generated module was made from."""
    return hashlib.sha256(schema_text.encode("utf-8")).hexdigest()


def unusable(schema_text: str) -> str | None:
    """Why the generated module cannot serve the schema whose text is ``schema_text``
    (None: it can): it cannot be imported, or was made from another schema."""
    try:
        from . import _result_format_check as generated
    except ImportError as exc:  # e.g. a fastjsonschema without the names it imports
        return f"{GENERATED} cannot be imported ({exc})"
    if generated.SCHEMA_SHA256 != digest(schema_text):
        return f"{GENERATED} is not of the schema file: run scripts/compile-schema"
    return None


@lru_cache(maxsize=1)
def checker(schema_text: str) -> Callable[[Any], bool] | None:
    """``check(record) -> bool``: True when the record is valid under the schema whose text is
    ``schema_text`` (False means "ask jsonschema", never "invalid" on its own); None when the
    generated module cannot serve it (:func:`unusable`)."""
    if unusable(schema_text) is not None:
        return None
    from . import _result_format_check as generated

    validate = generated.validate_urn_kcross_result_format  # named after the schema's $id

    def check(record: Any) -> bool:
        try:
            validate(record)
        except Exception:  # noqa: BLE001 - refused, or tripped the generated code: ask jsonschema
            return False
        return True

    return check
