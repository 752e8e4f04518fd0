"""``numbers``: files of numbers, one per line, as ministat (and ``kcross-harness
summarize``) read them (``ministat``, its old name, is still taken: scripts use it).

One series is one file, FILE itself.  Several series (a run's benchmarks, a
comparison's sides) are one file each, named from FILE: ``out.txt`` gives
``out.syscall-getppid-inline.txt``, with the source in the name too when the
series come from more than one (``out.run-3.syscall-getppid-inline.txt``), so
``ministat out.run-3.X.txt out.run-4.X.txt`` compares a benchmark across runs.
Each file starts with a ``#`` line saying what it holds (ministat skips it).
"""

from __future__ import annotations

from ..errors import UserError
from . import ExportData, Output, series_of


def render(data: ExportData) -> list[Output]:
    found = series_of(data)
    if not found:
        raise UserError("nothing to export as numbers: no benchmark has samples")
    several_sources = len({s.source for s in found}) > 1
    outputs = []
    for s in found:
        label = f"{s.source} {s.name}"
        unit = f" ({s.unit})" if s.unit else ""
        text = f"# kcross: {label}{unit}\n" + "".join(f"{float(x)!r}\n" for x in s.samples)
        part = f"{s.source}.{s.name}" if several_sources else s.name
        outputs.append(Output(text, part=part if len(found) > 1 else None, label=label + unit))
    return outputs
