"""The profile plugin's output file, read (issue 16; the format: lab/plugin/kcross-profile.c).

One record a line: the header, then per window ``W kind user kernel`` and its ``C addr
count`` lines, ``T addr`` (a traced window, in order), ``I addr bytes disassembly`` (once
per address), ``D`` after each benchmark's windows, and ``end N`` when QEMU exited normally.
Anything else, or a file cut before its end, is one LabError line naming the file and the
line: nothing is guessed from a damaged profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kcross.errors import LabError, clipped

HEADER = "kcross-profile 1"
SAMPLE, EMPTY = "s", "e"


@dataclass
class Window:
    """One batch between the harness's markers: its user and kernel instructions, and
    how often it ran each address."""

    kind: str
    user: int
    kernel: int
    counts: dict[int, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.user + self.kernel


@dataclass
class PluginOutput:
    target: str
    benches: list[list[Window]]            # one list per D record, in order
    disassembly: dict[int, tuple[bytes, str]]   # address: its bytes, QEMU's disassembly
    trace: list[int]


def parse(path: Path) -> PluginOutput:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise LabError(f"cannot read the profile {path}: {e.strerror or e}") from None
    lines = text.splitlines()

    def bad(number: int, why: str) -> LabError:
        shown = clipped(lines[number - 1], 60) if 0 < number <= len(lines) else ""
        return LabError(f"the profile {path} is malformed at line {number} ({why}): {shown!r}")

    if not lines or not lines[0].startswith(HEADER + " "):
        raise bad(1, f"no '{HEADER}' header")
    target = lines[0].split()[2] if len(lines[0].split()) > 2 else "?"
    benches: list[list[Window]] = []
    current: list[Window] = []
    disassembly: dict[int, tuple[bytes, str]] = {}
    trace: list[int] = []
    ended = None
    for number, line in enumerate(lines[1:], 2):
        if ended is not None:
            raise bad(number, "a record after the end")
        kind, _, rest = line.partition(" ")
        try:
            if kind == "C":
                if not current:
                    raise ValueError("a count outside a window")
                a, c = rest.split()
                current[-1].counts[int(a, 16)] = int(c)
            elif kind == "W":
                k, u, kern = rest.split()
                if k not in (SAMPLE, EMPTY):
                    raise ValueError(f"window kind {k!r}")
                current.append(Window(k, int(u), int(kern)))
            elif kind == "I":
                a, raw, dis = rest.split(" ", 2)
                disassembly[int(a, 16)] = (bytes.fromhex(raw), dis.strip())
            elif kind == "T":
                trace.append(int(rest, 16))
            elif kind == "D" and not rest:
                benches.append(current)
                current = []
            elif kind == "end":
                ended = int(rest)
            else:
                raise ValueError("unknown record")
        except ValueError as e:
            raise bad(number, str(e) or "bad numbers") from None
        except TypeError:
            raise bad(number, "bad fields") from None
    if ended is None:
        raise LabError(f"the profile {path} ends before its end record (QEMU did not exit "
                       "normally, or the file was cut)")
    for windows in benches:
        for w in windows:
            if sum(w.counts.values()) != w.total:
                raise LabError(f"the profile {path} is inconsistent: a window's counts sum "
                               f"to {sum(w.counts.values())}, its totals to {w.total}")
    seen = sum(len(w) for w in benches) + len(current)
    if seen != ended:
        raise LabError(f"the profile {path} is inconsistent: {seen} windows, its end record "
                       f"says {ended}")
    if current:
        raise LabError(f"the profile {path} has {len(current)} windows after its last "
                       "benchmark")
    return PluginOutput(target, benches, disassembly, trace)
