"""Symbols for the labs' profiles: addresses named as function+offset (issue 16).

The kernel's functions come from its System.map (the Debian package's, kept in the lab's
kernel cache and checked like the kernel; or ``System.map*`` beside a user's own
``--kernel``), moved by the boot's KASLR slide: the guest harness reports where
``/proc/kallsyms`` puts ``_text`` and ``_etext`` (harness/profile.c), the slide is the
difference at ``_text``, and a map whose ``_etext - _text`` is not the running kernel's is
not this kernel's map (refused).  Without a map, the guest's own kallsyms text symbols
(KCROSS_PROFILE=kallsyms).  The harness's functions come from its ELF symbol table
(kcross.lab.elf).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kcross.errors import LabError, clipped

TEXT_TYPES = frozenset("tTwW")
UNKNOWN = "?"


@dataclass(frozen=True)
class Place:
    """Where an address is: its function (or None) and the offset into it."""

    function: str | None
    offset: int

    def __str__(self) -> str:
        return f"{self.function}+{self.offset:#x}" if self.function else UNKNOWN


class SymbolTable:
    """Function start addresses, looked up by the nearest start at or below an address
    (within ``limit`` of it when the symbol's size is unknown)."""

    def __init__(self, symbols: Iterable[tuple[int, str]], *,
                 ends: Iterable[tuple[int, int]] = (), limit: int = 1 << 20) -> None:
        pairs = sorted(set(symbols))
        self._starts = [a for a, _ in pairs]
        self._names = [n for _, n in pairs]
        self._ends = dict(ends)
        self._limit = limit

    def __len__(self) -> int:
        return len(self._starts)

    def lookup(self, address: int) -> Place:
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return Place(None, 0)
        start, name = self._starts[i], self._names[i]
        end = self._ends.get(start)
        if (end is not None and end > start and address >= end) or address - start > self._limit:
            return Place(None, 0)
        return Place(name, address - start)


def read_system_map(path: Path) -> list[tuple[int, str, str]]:
    """(address, type, name) of every line of a System.map; LabError (one line) when the
    file is unreadable or a line is not ``ADDRESS TYPE NAME``."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise LabError(f"cannot read the kernel's symbols {path}: {e.strerror or e}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            if len(parts) < 3 or len(parts[1]) != 1:
                raise ValueError
            out.append((int(parts[0], 16), parts[1], parts[2]))
        except ValueError:
            raise LabError(f"{path} line {number} is not 'ADDRESS TYPE NAME': "
                           f"{clipped(line, 60)!r}") from None
    if not out:
        raise LabError(f"{path} holds no symbols")
    return out


def find_system_map(kernel_path: Path) -> Path | None:
    """The System.map beside a kernel file that names its functions: System.map-<its
    version> (a Debian boot/ dir), or System.map (a build tree).  Debian's packages carry
    a one-line stub there ("The real System.map is in the linux-image-<version>-dbg
    package"): not a map, None."""
    found = _beside(kernel_path)
    if found is None:
        return None
    try:
        with open(found, errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in TEXT_TYPES and parts[0] != "f" * 16:
                    return found
    except OSError:
        return None
    return None


def _beside(kernel_path: Path) -> Path | None:
    name = kernel_path.name
    for prefix in ("vmlinux-", "vmlinuz-"):
        if name.startswith(prefix):
            candidate = kernel_path.with_name("System.map-" + name[len(prefix):])
            if candidate.is_file():
                return candidate
    for candidate in (kernel_path.with_name("System.map"),
                      kernel_path.parent.parent.parent.parent / "System.map"):   # arch/X/boot/
        if candidate.is_file():
            return candidate
    return None


@dataclass(frozen=True)
class Reference:
    """What the running kernel's /proc/kallsyms said: _text and _etext (None if unknown)."""

    text: int | None
    etext: int | None


def parse_reference(line: str) -> Reference:
    """``_text ADDR _etext ADDR`` (the harness's words after "kallsyms"); an address of
    "-" or zero (kallsyms hidden) is unknown."""
    words = line.split()
    found: dict[str, int | None] = {"_text": None, "_etext": None}
    for key, value in zip(words[::2], words[1::2], strict=False):
        if key in found:
            try:
                found[key] = int(value, 16) or None
            except ValueError:
                found[key] = None
    return Reference(found["_text"], found["_etext"])


def kernel_table(entries: list[tuple[int, str, str]], reference: Reference, where: str
                 ) -> tuple[SymbolTable, int]:
    """The kernel's text symbols moved by the boot's slide, and the slide.  LabError when
    the map is not the running kernel's (its _etext - _text differs from kallsyms')."""
    by_name = {name: addr for addr, _t, name in entries}
    slide = 0
    if reference.text is not None and "_text" in by_name:
        slide = reference.text - by_name["_text"]
        if reference.etext is not None and "_etext" in by_name \
                and reference.etext - reference.text != by_name["_etext"] - by_name["_text"]:
            raise LabError(f"{where} is not the booted kernel's System.map (its text is "
                           f"{by_name['_etext'] - by_name['_text']:#x} bytes, the kernel's "
                           f"{reference.etext - reference.text:#x})")
    return SymbolTable((addr + slide, name) for addr, t, name in entries
                       if t in TEXT_TYPES), slide


def kallsyms_table(lines: Iterable[str]) -> SymbolTable:
    """The guest's own text symbols: ``ADDR NAME`` lines (the harness's "ksym" lines)."""
    pairs = []
    for line in lines:
        parts = line.split()
        if len(parts) == 2:
            try:
                pairs.append((int(parts[0], 16), parts[1]))
            except ValueError:
                continue
    return SymbolTable(pairs)
