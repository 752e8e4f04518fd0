"""A static ELF64 program's function symbols and executable ranges, read in Python (issue 16).

The labs' profiles name the guest harness's functions and find its marker functions
(harness/profile.c) from its symbol table; a cross ``nm`` is not needed.  Only what the
profile needs: little-endian ELF64 (the labs' three arches), ``.symtab``'s functions with
their sizes, and the executable segments' address ranges.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from kcross.errors import LabError

STT_FUNC = 2
PT_LOAD, PF_X = 1, 1
SHT_SYMTAB = 2


@dataclass(frozen=True)
class Function:
    name: str
    address: int
    size: int
    local_entry: int = 0   # ppc64 ELFv2: the local entry point's offset (st_other)


@dataclass(frozen=True)
class Program:
    path: Path
    functions: tuple[Function, ...]
    executable: tuple[tuple[int, int], ...]   # [start, end) of each executable segment

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise LabError(f"{self.path} has no function {name} (a harness built without "
                       "harness/profile.c?)")


def _local_entry(other: int) -> int:
    """ELFv2's st_other bits 5-7: 0 or 1 = no separate local entry, n = 2^n bytes... as
    the ABI encodes it (2 -> 4, 3 -> 8, ...)."""
    code = (other >> 5) & 7
    return 0 if code <= 1 else 1 << code


def read(path: Path) -> Program:
    """The function symbols and executable ranges of ``path``; LabError (one line) when it
    is not a little-endian ELF64 file with a symbol table."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise LabError(f"cannot read {path}: {e.strerror or e}") from None
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise LabError(f"{path} is not a little-endian 64-bit ELF file")
    try:
        (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
        (phentsize, phnum, shentsize, shnum) = struct.unpack_from("<HHHH", data, 0x36)
        executable = []
        for i in range(phnum):
            p_type, p_flags, _off, vaddr, _pa, _fsz, memsz = struct.unpack_from(
                "<IIQQQQQ", data, phoff + i * phentsize)
            if p_type == PT_LOAD and p_flags & PF_X:
                executable.append((vaddr, vaddr + memsz))
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                    for i in range(shnum)]
        functions = []
        for sh in sections:
            if sh[1] != SHT_SYMTAB:
                continue
            off, size, link, entsize = sh[4], sh[5], sh[6], sh[9]
            stroff = sections[link][4]
            for at in range(off, off + size, entsize):
                name_off, info, other, _shndx, value, sym_size = struct.unpack_from(
                    "<IBBHQQ", data, at)
                if info & 0xF != STT_FUNC or not value:
                    continue
                end = data.index(b"\0", stroff + name_off)
                name = data[stroff + name_off:end].decode(errors="replace")
                functions.append(Function(name, value, sym_size, _local_entry(other)))
    except (struct.error, IndexError, ValueError):
        raise LabError(f"{path}: a malformed ELF file") from None
    if not functions:
        raise LabError(f"{path} has no symbol table (stripped?): the profile cannot name "
                       "its functions")
    functions.sort(key=lambda f: f.address)
    return Program(Path(path), tuple(functions), tuple(executable))
