"""The files kcross writes (exports, the report, plots): where they may go, and writing them.

One rule for every writer (``kcross report -o``, ``--export FORMAT FILE`` of ``run``,
``show`` and ``compare``, ``kcross history --plot``)::

    outfile.check(path, "-o", db=args.db)    # before any work: UserError (exit 2)
    ...
    outfile.write(path, data, "-o")          # at the end: OutputError (exit 3) if it fails

:func:`check` refuses a path that cannot or must not be written: a directory, a
missing directory, no permission, and anything holding runs: the store the command
uses (``--db``, also through a symlink, ``./x`` or a hard link: files are compared by
device and inode, never by name), its journal, and any SQLite database (kcross never
writes its output over one: an SQLite file there is someone's data).  A PostgreSQL
store has no file and nothing to compare.  :func:`write` checks again (a
multi-file export's names are known only then) and writes a regular file whole,
through a temporary file beside it, so that a write that fails (a full disk) leaves
the old file as it was; anything else (``/dev/stdout``, a FIFO, ``/dev/full``) is
written into.  Exit statuses (docs/commands.md, "Exit codes"): a path refused before writing is
bad input (2); a write that fails is output kcross could not write (3).

Nothing here imports SQLAlchemy at module level (``--db`` is resolved only when given
a path to compare).  Plots (the report's, ``history --plot``) call :func:`quiet_matplotlib`
first: what fails is said in kcross's one line, not matplotlib's too.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import PATH_ECHO_MAX, OutputError, UserError, shown

_SQLITE_MAGIC = b"SQLite format 3\x00"
# What SQLite keeps beside a database file while it writes (rollback journal, WAL).
_SIDECARS = ("-journal", "-wal", "-shm")


def _named(path: str | Path) -> str:
    return shown(str(path), PATH_ECHO_MAX)


def check(path: str | Path, what: str, *, db: str | None,
          reads: Iterable[str | Path] = ()) -> None:
    """Refuse, before any work, an output path that could not or must not be written.

    ``what`` names the option in the message (``"-o"``, ``"--export csv"``); ``db`` is
    the command's ``--db`` (None: ``$KCROSS_DB`` or the default store), ``reads`` other
    files the command reads (a comparison's sides), which its output must not replace.
    """
    _check(Path(path), what, store=_store_file(db), reads=reads)


def _check(target: Path, what: str, *, store: Path | None = None,
           reads: Iterable[str | Path] = ()) -> None:
    label = f"{what} {_named(target)}"
    try:
        st = _stat(target)
        parent = target.parent
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UserError(f"{label}: is a directory, not a file")
        if not parent.is_dir():
            raise UserError(f"{label}: directory {_named(parent)} does not exist")
        if st is not None and not os.access(target, os.W_OK):
            raise UserError(f"{label}: permission denied")
        if not _written_into(target, st) and not os.access(parent, os.W_OK | os.X_OK):
            # a new or regular file is written through a temporary file beside it
            raise UserError(f"{label}: permission denied (directory {_named(parent)})")
        if store is not None:
            _refuse_store(target, store, label)
        for read in reads:
            if Path(read).is_file() and _same_file(target, Path(read)):
                raise UserError(f"{label}: that is {_named(read)}, which this command "
                                "reads: choose another file")
        _refuse_database(target, st, label)
    except OSError as exc:  # a name too long, a loop of symlinks...
        raise UserError(f"{label}: {exc.strerror or exc}") from None


def write(path: str | Path, data: str | bytes, what: str) -> None:
    """Write ``data`` (str: UTF-8) to ``path``: a regular file whole or not at all, anything
    else (a device, a FIFO) directly.  Checked again first (:class:`UserError`);
    :class:`OutputError` (exit status 3) when the write fails."""
    write_all([(path, data)], what)


def write_all(files: Iterable[tuple[str | Path, str | bytes]], what: str) -> None:
    """:func:`write` for several files (a multi-file export): every one is checked before
    the first is written."""
    files = list(files)
    for path, _ in files:
        _check(Path(path), what)
    for path, data in files:
        raw = data.encode() if isinstance(data, str) else data
        try:
            _write(Path(path), raw)
        except OSError as exc:
            raise OutputError(f"{what} {_named(path)}: cannot write it: "
                              f"{exc.strerror or exc}") from None


def _written_into(path: Path, st: os.stat_result | None) -> bool:
    """Whether ``path`` is written into rather than replaced: anything but a regular file
    (/dev/full, a FIFO), and a name for a descriptor already open (/dev/stdout, /dev/fd/N,
    /proc/self/fd/N: replacing what it leads to would leave the descriptor unwritten)."""
    if st is not None and not stat.S_ISREG(st.st_mode):
        return True
    return os.path.abspath(path).startswith(("/dev/", "/proc/"))


def _write(path: Path, data: bytes) -> None:
    if _written_into(path, _stat(path)):
        with path.open("wb") as f:
            f.write(data)
        return
    with replaced(path) as tmp:
        tmp.write_bytes(data)


@contextmanager
def replaced(path: Path) -> Iterator[Path]:
    """A file written whole or not at all: a temporary file beside ``path`` for the block
    to fill, which then takes ``path``'s place (a symlink's target's, not the link's) with
    ``path``'s mode, or a new file's (the umask's); if the block fails it is removed and
    ``path`` is as it was.  Nothing is checked here: the files kcross makes for itself (a
    lab's initramfs, a LAVA job's files) use it too."""
    real = Path(os.path.realpath(path))
    st = _stat(real)
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, name = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file: by device and inode when both exist, else
    the same name in the same directory (by the directory's device and inode)."""
    sa, sb = _stat(a), _stat(b)
    if sa is not None and sb is not None:
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    if sa is not None or sb is not None:
        return False
    ra, rb = Path(os.path.realpath(a)), Path(os.path.realpath(b))
    if ra.name != rb.name:
        return False
    pa, pb = _stat(ra.parent), _stat(rb.parent)
    return pa is not None and pb is not None and \
        (pa.st_dev, pa.st_ino) == (pb.st_dev, pb.st_ino)


def _refuse_store(target: Path, store: Path, label: str) -> None:
    for sidecar in ("", *_SIDECARS):
        if _same_file(target, Path(f"{store}{sidecar}")):
            which = f"SQLite's {sidecar[1:]} file of " if sidecar else ""
            raise UserError(f"{label}: that is {which}the store this command uses "
                            f"({_named(store)}); writing there would destroy stored runs: "
                            "choose another file")


def _store_file(db: str | None) -> Path | None:
    """The SQLite file of the store ``--db`` names (None: a server, or in memory)."""
    from .store.location import resolve

    return resolve(db).path


def _refuse_database(path: Path, st: os.stat_result | None, label: str) -> None:
    if st is None or not stat.S_ISREG(st.st_mode):
        return
    try:
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError:
        return  # unreadable: the write will say what is wrong
    if head == _SQLITE_MAGIC:
        raise UserError(f"{label}: that is an SQLite database (a store of runs?); kcross "
                        "never writes its output over one: choose another file")


def quiet_matplotlib() -> None:
    """matplotlib's own warnings (a font cache it could not save on a full disk) would be a
    second line beside kcross's one: kcross reports what fails, matplotlib keeps quiet."""
    import logging

    logging.getLogger("matplotlib").setLevel(logging.ERROR)
