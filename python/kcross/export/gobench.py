"""``gobench``: the Go benchmark format, which ``benchstat`` reads.

One line per sample, ``BenchmarkSyscall/getppid-inline  <iters>  <value> ns/op``
(``instructions/op`` for a lab run's counts, a unit of its own to benchstat;
plain numbers are written as ``<value> value/op``), after the configuration
lines ``goos``, ``goarch``, ``pkg`` and ``cpu``.

benchstat makes a separate table for every distinct configuration, so only
those four keys are configuration: two runs of the same machine exported to
two files compare with ``benchstat old.txt new.txt`` although their kernels,
hosts and run ids differ.  Those are written as ``#`` lines, which benchstat
skips.  The sides of a comparison (or the sources of several series) are told
apart by the configuration key ``side``, set before each side's samples:
``benchstat -col side FILE`` puts each side in a column, the first written
(the base) first.  A key that differs between the sides (``cpu`` when two
machines are compared) is left out, or it would split the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import fingerprint as fields
from . import ExportData, Output, run_label, series_of

# kcross's arch names -> Go's GOARCH.
GOARCH = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le", "i686": "386",
          "riscv64": "riscv64", "s390x": "s390x"}
SIDE_KEY = "side"
PLAIN_UNIT = "value/op"
# The fingerprint's fields written as ``#`` lines (not configuration: see above), by key.
ABOUT = {"kernel": fields.KERNEL_RELEASE, "host": fields.HOSTNAME,
         "syscall": fields.SYSCALL_MECHANISM, "timer": fields.TIMER_SOURCE}


def bench_name(name: str) -> str:
    """``syscall/getppid-inline`` -> ``BenchmarkSyscall/getppid-inline`` (no white space;
    the character after ``Benchmark`` must not be a lower-case letter)."""
    text = "_".join(name.split()) or "unnamed"
    return "Benchmark" + text[0].upper() + text[1:]


def config(fingerprint: Mapping[str, Any] | None) -> dict[str, str]:
    """The four keys ``go test`` writes, from a fingerprint (empty without one)."""
    if not fingerprint:
        return {"pkg": "kcross"}
    arch = fields.ARCH.of(fingerprint)
    found = {"goos": "linux", "goarch": GOARCH.get(str(arch), str(arch or "unknown")),
             "pkg": "kcross", "cpu": fields.CPU_MODEL.of(fingerprint)}
    return {k: " ".join(str(v).split()) for k, v in found.items() if v}


def _about(fingerprint: Mapping[str, Any] | None) -> list[str]:
    """What benchstat must not split tables by, as ``#`` lines for the reader."""
    if not fingerprint:
        return []
    parts = {key: field.of(fingerprint) for key, field in ABOUT.items()}
    if fields.lab(fingerprint) is not None:
        emulator, machine, cpu, mode = (f.of(fingerprint) for f in (
            fields.LAB_EMULATOR, fields.LAB_MACHINE, fields.LAB_CPU, fields.LAB_MODE))
        parts["lab"] = f"{emulator} -M {machine} -cpu {cpu} ({mode})"
    return [f"# {k}: {' '.join(str(v).split())}" for k, v in parts.items() if v]


def _sample_lines(name: str, unit: str, samples: Sequence[float], iters: int) -> list[str]:
    bench = bench_name(name)
    return [f"{bench}\t{iters}\t{float(x)!r} {unit or PLAIN_UNIT}" for x in samples]


def _iters(record: Mapping[str, Any] | None) -> int:
    value = record.get("iters") if record else None
    return value if isinstance(value, int) and value > 0 else 1


def _common_config(fingerprints: Sequence[Mapping[str, Any] | None]) -> dict[str, str]:
    """The configuration keys every side agrees on (a differing one would split the table)."""
    configs = [config(fp) for fp in fingerprints]
    first = configs[0] if configs else {"pkg": "kcross"}
    return {k: v for k, v in first.items() if all(c.get(k) == v for c in configs)}


def _header(keys: Mapping[str, str]) -> list[str]:
    order = ["goos", "goarch", "pkg", "cpu"]
    return [f"{k}: {keys[k]}" for k in order if k in keys]


def render(data: ExportData) -> list[Output]:
    lines: list[str] = []
    if data.rows:
        blocks: list[tuple[str, str, Any]] = []  # (side label, benchmark name, series)
        seen: set[tuple[str, str]] = set()
        for row in data.rows:
            same = row.base.source == row.new.source
            for series in (row.base, row.new):
                label = series.name if same else series.source
                if (label, row.name) not in seen:
                    seen.add((label, row.name))
                    blocks.append((label, row.name, series))
        fps = [s.fingerprint for _, _, s in blocks]
        lines += _header(_common_config(fps))
        lines.append(f"# kcross comparison: benchstat -col {SIDE_KEY} FILE "
                     "(the first side is the base)")
        described: set[str] = set()
        for _, _, series in blocks:
            if series.source not in described:
                described.add(series.source)
                lines += [f"# {series.source}:"] + _about(series.fingerprint)
        for side in dict.fromkeys(label for label, _, _ in blocks):  # the base's first
            lines.append(f"{SIDE_KEY}: {' '.join(side.split())}")
            for label, name, series in blocks:
                if label == side:
                    lines += _sample_lines(name, series.unit, series.samples,
                                           _iters(series.record))
        return [Output("\n".join(lines) + "\n")]
    found = series_of(data)
    sources = list(dict.fromkeys(s.source for s in found))
    by_source = {s.source: s.fingerprint for s in found}
    if not found and data.runs:  # a run without results: its machine, nothing to compare
        by_source = {run_label(r): r.fingerprint for r in data.runs}
    lines += _header(_common_config(list(by_source.values())))
    for source in by_source:
        lines += [f"# {source}:"] + _about(by_source[source])
    for source in sources:
        if len(sources) > 1:
            lines.append(f"{SIDE_KEY}: {' '.join(source.split())}")
        for series in found:
            if series.source == source:
                lines += _sample_lines(series.name, series.unit, series.samples,
                                       _iters(series.record))
    return [Output("\n".join(lines) + "\n")]
