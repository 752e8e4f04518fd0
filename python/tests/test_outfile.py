"""Where kcross writes files (kcross.outfile): never over the store or any database, found
out before any work; and a write that fails is exit status 3, leaving the old file whole.

Every writer: ``report -o``, ``--export FORMAT FILE`` of ``run``, ``show`` and ``compare``
(a multi-file export's derived names too), ``history --plot``, standard output.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Kcross, assert_one_line_error, opens_for_writing, query, sha256

# Named .svg so that `history --plot` may be pointed at it too.
STORE = "k.svg"

# Each writer, given the store (--db) and the output path.
WRITERS: dict[str, Callable[[str, str], list[str]]] = {
    "report": lambda db, out: ["report", "--db", db, "-o", out],
    "show --export": lambda db, out: ["show", "--db", db, "--export", "json", out],
    "compare --export": lambda db, out: ["compare", "1", "latest", "--db", db,
                                         "--export", "csv", out],
    "history --plot": lambda db, out: ["history", "getcpu-vdso", "--db", db, "--plot", out],
    "run --export": lambda db, out: ["run", "--quick", "--bench", "syscall/getcpu-*",
                                     "--db", db, "--export", "gobench", out],
}

# The same file under another name.
ALIASES: dict[str, Callable[[Path], str]] = {
    "itself": str,
    "./x": lambda p: os.path.join(".", os.path.relpath(p)),
    "dir/..": lambda p: str(p.parent / "sub" / ".." / p.name),
    "symlink": lambda p: _link(p, "link.svg", os.symlink),
    "hard link": lambda p: _link(p, "hard.svg", os.link),
}


def _link(target: Path, name: str, how: Callable[[Path, Path], None]) -> str:
    link = target.parent / name
    how(target, link)
    return str(link)


@pytest.fixture
def store(stored_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stored run (1, syscall/getcpu-*) in a store named k.svg; the cwd is its
    directory (for ./x)."""
    path = tmp_path / STORE
    stored_db.rename(path)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    return path


def _runs(db: Path) -> list[tuple]:
    return query(db, "SELECT id, status FROM runs ORDER BY id")


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("writer", WRITERS)
def test_no_writer_writes_over_the_store(kcross: Kcross, store: Path, writer: str,
                                         alias: str) -> None:
    before, runs = sha256(store), _runs(store)
    out = ALIASES[alias](store)
    proc = kcross(*WRITERS[writer](str(store), out))
    assert_one_line_error(proc, 2, "that is the store this command uses")
    assert sha256(store) == before and _runs(store) == runs == [(1, "complete")]
    assert "Progress" not in proc.stderr and "run 2" not in proc.stderr  # nothing ran


def test_the_store_named_by_the_environment_or_the_default(kcross: Kcross, store: Path,
                                                           db_path: Path) -> None:
    """Without --db: $KCROSS_DB, else the default store, is the one protected."""
    before = sha256(store)
    proc = kcross("report", "-o", str(store), extra_env={"KCROSS_DB": str(store)})
    assert_one_line_error(proc, 2, "that is the store this command uses")
    db_path.parent.mkdir(parents=True)
    shutil.copyfile(store, db_path)
    proc = kcross("show", "--export", "csv", str(db_path))
    assert_one_line_error(proc, 2, "that is the store this command uses")
    assert sha256(store) == before == sha256(db_path)


def test_a_run_does_not_export_into_the_store_it_is_about_to_create(kcross: Kcross,
                                                                    tmp_path: Path) -> None:
    new = tmp_path / "new.db"
    proc = kcross("run", "--quick", "--db", str(new), "--export", "json", str(new))
    assert_one_line_error(proc, 2, "that is the store this command uses")
    assert not new.exists()


def test_nor_over_the_store_s_journal(kcross: Kcross, store: Path) -> None:
    journal = Path(f"{store}-journal")
    proc = kcross("show", "--db", str(store), "--export", "json", str(journal))
    assert_one_line_error(proc, 2, "SQLite's journal file of the store this command uses")
    assert not journal.exists()


@pytest.mark.parametrize("writer", ["report", "show --export", "compare --export",
                                    "history --plot"])
def test_nor_over_any_other_database(kcross: Kcross, store: Path, tmp_path: Path,
                                     writer: str) -> None:
    other = tmp_path / "other.svg"
    shutil.copyfile(store, other)
    before = sha256(other)
    proc = kcross(*WRITERS[writer](str(store), str(other)))
    assert_one_line_error(proc, 2, "that is an SQLite database")
    assert sha256(other) == before


def test_a_multi_file_export_checks_every_derived_name_first(kcross: Kcross, store: Path,
                                                             tmp_path: Path) -> None:
    """ministat writes one file per series, named from FILE: out.txt gives
    out.syscall-getcpu-vdso.txt, which here is the store: nothing is written."""
    derived = tmp_path / "out.syscall-getcpu-vdso.txt"
    store.rename(derived)
    before = sha256(derived)
    proc = kcross("show", "--db", str(derived), "--export", "numbers", str(tmp_path / "out.txt"))
    assert_one_line_error(proc, 2, "that is an SQLite database")
    assert sha256(derived) == before
    assert not (tmp_path / "out.syscall-getcpu-syscall.txt").exists()  # not even the other


def test_compare_does_not_write_over_a_side_it_reads(kcross: Kcross, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("1\n2\n3\n4\n5\n6\n")
    b.write_text("2\n3\n4\n5\n6\n7\n")
    proc = kcross("compare", str(a), str(b), "--export", "csv", str(a))
    assert_one_line_error(proc, 2, "which this command reads")
    assert a.read_text() == "1\n2\n3\n4\n5\n6\n"


def test_a_postgresql_store_has_no_file_to_protect(kcross: Kcross, pg_schema: str,
                                                  tmp_path: Path) -> None:
    """Nothing to compare with (a URL is no file): the writers work as with a file store."""
    assert kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db", pg_schema,
                  "--export", "csv", str(tmp_path / "run.csv")).returncode == 0
    for args in (["report", "-o", str(tmp_path / "r.html")],
                 ["show", "--export", "json", str(tmp_path / "run.json")],
                 ["history", "getcpu-vdso", "--plot", str(tmp_path / "t.svg")]):
        proc = kcross(*args, "--db", pg_schema)
        assert proc.returncode == 0, proc.stderr
    assert {p.name for p in tmp_path.iterdir()} >= {"run.csv", "r.html", "run.json", "t.svg"}


# --- a write that fails: exit status 3 ------------------------------------------------------

@pytest.fixture
def full_device() -> str:
    """/dev/full: every write fails with ENOSPC (skipped, saying so, where it is not a
    writable device, e.g. a node on a nodev mount in a chroot: the full-disk tests below
    cover the same writers through a file size limit)."""
    if not (Path("/dev/full").is_char_device() and opens_for_writing("/dev/full")):
        pytest.skip("/dev/full is not a writable device here")
    return "/dev/full"


# (ministat's export of these is one file per series, named from FILE: the full-disk
# test below covers it.)
@pytest.mark.parametrize("fmt", ["json", "csv", "markdown", "gobench"])
@pytest.mark.parametrize("command", ["show", "compare"])
def test_every_export_onto_a_full_device_is_status_3(kcross: Kcross, stored_db: Path,
                                                     full_device: str, command: str,
                                                     fmt: str) -> None:
    sides = ["1", "1"] if command == "compare" else ["1"]
    proc = kcross(command, *sides, "--db", str(stored_db), "--export", fmt, full_device)
    assert_one_line_error(proc, 3, f"--export {fmt} '/dev/full': cannot write it: No space")


def test_the_report_and_the_plot_onto_a_full_device_are_status_3(
        kcross: Kcross, stored_db: Path, full_device: str, tmp_path: Path) -> None:
    proc = kcross("report", "--db", str(stored_db), "-o", full_device)
    assert_one_line_error(proc, 3, "-o '/dev/full': cannot write it: No space left")
    plot = tmp_path / "trend.svg"   # a plot's name ends in .svg or .png
    plot.symlink_to(full_device)
    proc = kcross("history", "getcpu-vdso", "--db", str(stored_db), "--plot", str(plot))
    assert_one_line_error(proc, 3, "cannot write it: No space left")
    assert plot.is_symlink() and plot.is_char_device()  # written into, not replaced
    # (standard output onto /dev/full: test_cli_output.py)


def test_a_run_exported_onto_a_full_device_is_status_3_and_stored(
        kcross: Kcross, tmp_path: Path, full_device: str) -> None:
    db = tmp_path / "k.db"
    proc = kcross("run", "--quick", "--bench", "syscall/getcpu-*", "--db", str(db),
                  "--export", "csv", full_device)
    line = assert_one_line_error(proc, 3, "cannot write it: No space", after_progress=True)
    assert line.endswith("run 1 is stored (see 'kcross show 1')")
    assert _runs(db) == [(1, "complete")]


# A write beyond this many bytes fails (RLIMIT_FSIZE: EFBIG), as on a full disk; every
# file below is longer.
FULL = 64

FULL_DISK_WRITERS = {
    "report": lambda db, out: ["report", "--db", db, "-o", out],
    "history --plot": lambda db, out: ["history", "getcpu-vdso", "--db", db, "--plot", out],
    **{f"show --export {fmt}": (lambda f: lambda db, out: ["show", "--db", db,
                                                           "--export", f, out])(fmt)
       for fmt in ("json", "csv", "markdown", "gobench", "numbers")},
    "compare --export": lambda db, out: ["compare", "1", "1", "--db", db, "--export", "csv",
                                         out],
}


@pytest.mark.parametrize("writer", FULL_DISK_WRITERS)
def test_a_write_that_fails_is_status_3_and_keeps_the_old_file(
        kcross: Kcross, stored_db: Path, tmp_path: Path, writer: str) -> None:
    out = tmp_path / "out" / ("old.svg" if "plot" in writer else "old.txt")
    out.parent.mkdir()
    args = FULL_DISK_WRITERS[writer](str(stored_db), str(out))
    assert kcross(*args).returncode == 0   # written once (and matplotlib's font cache made)
    before = {p.name: sha256(p) for p in out.parent.iterdir()}
    assert len(before) == (2 if "numbers" in writer else 1)  # numbers: a file per series
    proc = kcross(*args, file_size_limit=FULL)
    assert_one_line_error(proc, 3, "cannot write it: File too large")
    assert {p.name: sha256(p) for p in out.parent.iterdir()} == before  # no temporary file


# (Not /dev/stdout itself here: code that replaces the regular file a name leads to, as
# the report's writer did, replaces the symlink /dev/stdout when it runs as root.)
@pytest.mark.parametrize("name", ["/proc/self/fd/1", "/dev/fd/1"])
def test_a_name_for_standard_output_is_written_into(kcross: Kcross, stored_db: Path,
                                                     name: str) -> None:
    """Standard output redirected to a file (here: the test's), named by a path: written
    into, not replaced through a temporary file (the descriptor would stay empty)."""
    proc = kcross("report", "--db", str(stored_db), "-o", name)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>")
    # an export beside the table: onto standard error
    proc = kcross("show", "--db", str(stored_db), "--export", "csv", name[:-1] + "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("run,run_source,benchmark,") and "getcpu-vdso" in proc.stdout


def test_a_file_replaced_whole_keeps_its_mode_or_takes_the_umasks(tmp_path: Path) -> None:
    """outfile.replaced, which the exports, the lab's initramfs and a LAVA job's copied
    kernel write through: a failure leaves the old file and no temporary one; a new file
    has the umask's mode (a LAVA server reads the job's files), a replaced one its own."""
    from kcross.outfile import replaced

    old = tmp_path / "old"
    old.write_bytes(b"old")
    old.chmod(0o640)
    with pytest.raises(OSError), replaced(old) as tmp:
        tmp.write_bytes(b"half")
        raise OSError("disk full")
    assert old.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["old"]
    with replaced(old) as tmp:
        tmp.write_bytes(b"new")
    assert old.read_bytes() == b"new" and old.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0o022)
    try:
        with replaced(tmp_path / "new") as tmp:
            tmp.write_bytes(b"x")
    finally:
        os.umask(umask)
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o644
