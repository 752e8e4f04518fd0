"""Where the result database lives.

Precedence: ``--db`` option, ``$KCROSS_DB``, then the XDG data directory.
Either an SQLAlchemy URL (``postgresql+psycopg://host/db``) or a plain file
path (an SQLite database) is accepted, because most users only ever want a
file and should not have to learn URL syntax for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError

from ..errors import UserError

ENV_VAR = "KCROSS_DB"


@dataclass(frozen=True)
class Target:
    """A resolved database location; ``path`` is set for file-backed SQLite only."""

    url: sa.URL
    path: Path | None

    @property
    def memory(self) -> bool:
        """An SQLite database that lives only as long as the process (nothing is kept)."""
        if self.path is not None or self.url.get_backend_name() != "sqlite":
            return False
        database = self.url.database or ""
        return database in ("", ":memory:") or "mode=memory" in database \
            or self.url.query.get("mode") == "memory"

    @property
    def display(self) -> str:
        """How to name the database in messages (never shows a password)."""
        if self.path is not None:
            return str(self.path)
        return self.url.render_as_string(hide_password=True)


def default_path() -> Path:
    """``$XDG_DATA_HOME/kcross/kcross.db``, falling back to ``~/.local/share``."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "kcross" / "kcross.db"


def resolve(option: str | None = None) -> Target:
    """Turn the ``--db`` value (or the environment, or the default) into a :class:`Target`."""
    spec = option or os.environ.get(ENV_VAR) or ""
    if not spec:
        return _file_target(default_path())
    if "://" not in spec:
        return _file_target(Path(spec))
    try:
        url = sa.make_url(spec)
    except ArgumentError:
        raise UserError(f"invalid database URL {spec!r}") from None
    if url.get_backend_name() == "sqlite":
        if url.host:
            raise UserError(
                f"{spec!r} names a host ({url.host!r}), which an SQLite URL cannot have: "
                f"for the file {url.host}{'/' + url.database if url.database else ''} write "
                f"sqlite:///{url.host}{'/' + url.database if url.database else ''} "
                "(three slashes, relative) or sqlite:////abs/path (four), or just the path")
        database = url.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            return Target(url=url, path=None)
        return _file_target(Path(database))
    return Target(url=url, path=None)


def _file_target(path: Path) -> Target:
    path = Path(os.path.abspath(path.expanduser()))
    return Target(url=sa.URL.create("sqlite+pysqlite", database=str(path)), path=path)
