"""The store, and opening the store a command reads or writes: :class:`Store` (one
database's reads and writes: kcross.store.reading, kcross.store.writing), :class:`Stores`
(the stores one command opens, each when first needed, closed at its end) and
:func:`store_for_writing` (the store a run or a lab writes as it goes)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import KcrossError, UserError
from .db import NoStore, OldSchema, absent, check_writable, open_engine
from .location import Target, resolve
from .writing import Writing


class Store(Writing):
    """The result database of one kcross invocation: what every command reads of it
    (kcross.store.reading) and writes to it (kcross.store.writing), opened here.

    Opened lazily (``Store.open(target, write=True, lazy=True)``), nothing is
    created until the first write (``start_run`` or ``import_stream``): a run
    refused before its first record leaves no database file behind.  The reads of one
    command alone are not its methods: kcross.store.history (``kcross history``),
    kcross.store.transfer (push and pull).
    """

    @classmethod
    def open(cls, target: Target, *, write: bool, lazy: bool = False) -> Store | None:
        """Open (and for writing, create/migrate); None if reading and nothing is stored yet.

        ``lazy`` (writing only): check now that the database could be opened for
        writing, without creating anything; create/migrate it at the first write.
        """
        if lazy:
            if not write:
                raise ValueError("only a store opened for writing can be lazy")
            check_writable(target)
            return cls(None, target)
        engine = open_engine(target, write=write)
        return None if engine is None else cls(engine, target)

    @classmethod
    def open_existing(cls, target: Target) -> Store:
        """Open for changing what is stored; refuse (creating nothing) if nothing is stored."""
        try:
            reader = cls.open(target, write=False)
        except OldSchema:
            pass  # opening it for writing upgrades it
        else:
            if reader is None:
                raise nothing_stored(target)
            reader.close()
        store = cls.open(target, write=True)
        assert store is not None
        return store


class Stores:
    """The stores one command opens, opened when first needed and closed at the end::

        with Stores(db) as stores:
            run = stores.reading().load_run(ref)

    ``reading()``: the database as it is, never created or changed; a store with no
    runs is one line ("no runs stored in ...").  ``changing()``: for changing what is
    stored (mark, delete, tag): refused when nothing is stored, upgraded if old.
    ``writing()``: created or upgraded for writing (import, lab).
    """

    def __init__(self, db: str | None, *, hint: str = "") -> None:
        self.db = db
        self.hint = hint   # added to "no runs stored" (what else an argument could be)
        self._open: dict[str, Store] = {}

    @property
    def target(self) -> Target:
        return resolve(self.db)

    def reading(self) -> Store:
        if "read" not in self._open:
            target = self.target
            store = Store.open(target, write=False)
            if store is None:
                raise nothing_stored(target, self.hint)
            self._open["read"] = store
        return self._open["read"]

    def reading_or_none(self) -> Store | None:
        """The store when it holds runs; None when nothing is stored, or the default
        store is not made yet.  A chosen store that is not there is an error
        (:func:`nothing_stored`), whoever reads it."""
        try:
            return self.reading()
        except NoStore:
            raise
        except UserError:
            return None

    def changing(self) -> Store:
        if "change" not in self._open:
            self._open["change"] = Store.open_existing(self.target)
        return self._open["change"]

    def writing(self) -> Store:
        if "write" not in self._open:
            store = Store.open(self.target, write=True)
            assert store is not None  # opening for writing creates the database
            self._open["write"] = store
        return self._open["write"]

    def close(self) -> None:
        for store in self._open.values():
            store.close()
        self._open.clear()

    def __enter__(self) -> Stores:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def nothing_stored(target: Target, hint: str = "") -> KcrossError:
    """The line for a store with nothing to read: a chosen store (--db, $KCROSS_DB) that
    is not there says so, naming the path (a mistyped path must not look like an empty
    store); otherwise "no runs stored" (the default store not made yet, an empty one)."""
    why = absent(target.path) if target.path is not None and target.chosen else None
    if why is not None:
        return NoStore(f"no store at {target.display}: {why}")
    return UserError(f"no runs stored in {target.display}{hint}")


@contextmanager
def stores(db: str | None, *, hint: str = "") -> Iterator[Stores]:
    with Stores(db, hint=hint) as opened:
        yield opened


def store_for_writing(db: str | None, *, lazy: bool = False) -> Store:
    """The store a command writes as it goes (run, lab), opened on its own: checked now;
    with ``lazy``, created only when its first record arrives (a command refused for bad
    arguments leaves no database file behind).  The caller closes it (or hands it to the
    importer, which does)."""
    store = Store.open(resolve(db), write=True, lazy=lazy)
    assert store is not None  # opening for writing creates (or will create) the database
    return store
