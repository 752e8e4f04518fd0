"""Where the result database lives.

Precedence: ``--db`` option, ``$KCROSS_DB``, then the XDG data directory.
Either an SQLAlchemy URL (``postgresql+psycopg://host/db``) or a plain file
path (an SQLite database) is accepted, because most users only ever want a
file and should not have to learn URL syntax for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError

from ..errors import ECHO_MAX, PATH_ECHO_MAX, UserError, clipped, shown

ENV_VAR = "KCROSS_DB"


@dataclass(frozen=True)
class Target:
    """A resolved database location; ``path`` is set for file-backed SQLite only.
    ``chosen``: named by the user (--db, $KCROSS_DB), not the default location: a chosen
    store that is not there is an error to a reader, and its directory is never made."""

    url: sa.URL
    path: Path | None
    chosen: bool = field(default=True, compare=False)

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
        """How to name the database in messages (never shows a password; cut when longer
        than any sensible path or URL)."""
        if self.path is not None:
            return clipped(str(self.path))
        return clipped(self.url.render_as_string(hide_password=True))


def default_path() -> Path:
    """``$XDG_DATA_HOME/kcross/kcross.db``, falling back to ``~/.local/share``."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "kcross" / "kcross.db"


def resolve(option: str | None = None) -> Target:
    """Turn the ``--db`` value (or the environment, or the default) into a :class:`Target`."""
    spec = option or os.environ.get(ENV_VAR) or ""
    if not spec:
        return _file_target(default_path(), chosen=False)
    if "://" not in spec:
        return _file_target(Path(spec))
    try:
        url = sa.make_url(spec)
    except ArgumentError:
        raise UserError(f"invalid database URL {shown(spec, PATH_ECHO_MAX)}") from None
    if url.get_backend_name() == "sqlite":
        if url.host:
            file = clipped(f"{url.host}{'/' + url.database if url.database else ''}", ECHO_MAX)
            raise UserError(
                f"{shown(spec, ECHO_MAX)} names a host ({shown(url.host, ECHO_MAX)}), which an "
                f"SQLite URL cannot have: for the file {file} write sqlite:///{file} "
                "(three slashes, relative) or sqlite:////abs/path (four), or just the path")
        database = url.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            return Target(url=url, path=None)
        return _file_target(Path(database))
    host = url.host or ""
    if len(host) > 253 or any(len(label) > 63 for label in host.split(".")):
        # what DNS cannot hold (the resolver's idna codec would fail with a traceback)
        raise UserError(f"database URL {shown(spec, ECHO_MAX)}: {shown(host, ECHO_MAX)} is no "
                        "host name (at most 253 characters, 63 between dots)")
    return Target(url=url, path=None)


def _file_target(path: Path, *, chosen: bool = True) -> Target:
    path = Path(os.path.abspath(path.expanduser()))
    return Target(url=sa.URL.create("sqlite+pysqlite", database=str(path)), path=path,
                  chosen=chosen)
