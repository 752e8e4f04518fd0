"""Lab runs: the harness in a counting-mode guest, its records made lab records (issue 8).

A counting run boots one guest (machines.Guest, mode "counting") whose plan is one
``kcross-harness run --json``; the harness's records come back on the console, are
validated like any harness output (kcross.schema), and become a lab run: the fingerprint
gains a ``lab`` group (emulator, machine, CPU model, kernel and its hash, what the lab
added to the command line, the variant), every result's unit becomes instructions/op.
Under ``-icount shift=0`` the guest's clocks advance one nanosecond per instruction, so
the harness's calibrated ns/op *are* instructions per operation; samples are
deterministic, so a few short ones suffice (COUNTING_OPTIONS).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from kcross.errors import HarnessError, LabError, SchemaError, UserError
from kcross.lab.boot import run_plan
from kcross.lab.initramfs import CommandResult, ConsoleError, plan_command
from kcross.lab.kernel import Kernel, file_sha256
from kcross.lab.machines import COUNTING_ICOUNT, COUNTING_SEED, DEFAULT_SUITES, Guest
from kcross.lab.payload import GUEST_HARNESS, Payload
from kcross.schema import LIVE_VERSIONS, RunStream, parse_line

# Deterministic samples: 11 of them, batches of 0.2 ms (200 000 instructions: a few
# hundred syscalls, a timer tick (HZ=250: every 4 ms) in about one batch in twenty, which
# the median leaves out), each a multiple of 384 iterations: kernel work done every k
# calls for any k dividing 384 (a batched random-number refill every 12, 24, 48 or 96
# calls feeding kernel-stack offset randomisation) then falls equally often in every
# batch, so the per-call figure includes its exact share instead of flipping between
# "k-1" and "k" events per batch.
BATCH_MULTIPLE = 384
COUNTING_OPTIONS = ("--samples", "11", "--warmup-ms", "1", "--min-batch-ms", "0.2",
                    "--batch-multiple", str(BATCH_MULTIPLE))
UNIT = "instructions/op"
COUNTING_TIMEOUT = 600.0   # seconds of host time for one counting boot


@dataclass
class Counted:
    """One counting run: the guest it ran in and the lab run stream it produced."""

    guest: Guest
    kernel: Kernel
    variant: str | None
    stream: RunStream
    records: list[dict[str, Any]] = field(default_factory=list)   # in stream order
    messages: list[str] = field(default_factory=list)             # non-record guest output
    # The results of the plan's commands after the harness's (count()'s extra_plan).
    extra: list[CommandResult] = field(default_factory=list)
    # Host times of the boot: the guest's own clock is the fixed -rtc base.
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def median(self, name: str) -> float | None:
        """Instructions/op of benchmark ``name`` (suite/name, or a name alone: the first
        suite's) by the statistics rule; None if not ok."""
        from kcross.stats import StatsError, summarize_record

        for record in self.stream.results:
            if name in (record["name"], f"{record['suite']}/{record['name']}") \
                    and record["status"] == "ok":
                try:
                    return summarize_record(record).median
                except StatsError:
                    return None
        return None


def kernel_identity(kernel: Kernel, path: str | None = None) -> dict[str, Any]:
    """fingerprint.lab.kernel: what was booted (``path``: where it is found, if not its
    file's path: a LAVA job's URL): Debian's package, version and release, or a user's
    file; its SHA-256, its configuration's (when one is found: kcross.lab.kconfig) and the
    version text the image carries.  A kernel named as a package's (a cache entry) must
    still be the package's file (LabError otherwise: never stored under its name)."""
    from kcross.lab import kconfig
    from kcross.lab.kernel import version_string

    try:
        sha256 = file_sha256(kernel.path)
    except OSError as e:
        raise LabError(f"cannot read the kernel {kernel.path}: {e.strerror or e}") from None
    if kernel.sha256 is not None and sha256 != kernel.sha256:
        raise LabError(f"the kernel {kernel.path} changed while the lab ran (its SHA-256 is no "
                       f"longer {kernel.package} {kernel.version}'s): not stored under that name")
    return {"source": kernel.source, "package": kernel.package, "version": kernel.version,
            "release": kernel.release, "path": path or str(kernel.path), "sha256": sha256,
            "config_sha256": kconfig.sha256(kernel),
            "version_string": version_string(kernel.path)}


@cache
def emulator_version(qemu: str) -> str | None:
    """QEMU's version ("7.2.19" from "QEMU emulator version 7.2.19 (Debian ...)")."""
    path = shutil.which(qemu)
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"version (\S+)", out)
    return m.group(1) if m else None


def lab_group(guest: Guest, kernel: Kernel, variant: str | None, *,
              kernel_path: str | None = None) -> dict[str, Any]:
    """fingerprint.lab of a counting run (docs/result-format.md, "Lab runs");
    ``kernel_path``: where the kernel is found, if not its file's path."""
    return {
        "mode": "counting", "unit": UNIT,
        "emulator": guest.arch.qemu, "emulator_version": emulator_version(guest.arch.qemu),
        "accel": "tcg", "icount": COUNTING_ICOUNT, "seed": COUNTING_SEED,
        "machine": guest.machine, "cpu": guest.cpu_model, "smp": guest.vcpus,
        "kernel": kernel_identity(kernel, kernel_path),
        "append": " ".join(guest.append.split()),
        "variant": variant,
    }


# The harness's one-line form of each result (harness/output.c), beside its JSON record: a
# LAVA job's monitor reads it (kcross.lava).  Every counting boot prints it, so that a lab
# boot and a LAVA job run the same plan and the console's output, which the counts of a
# few paths depend on (open-close, stat-root), is the same in both.
RESULT_LINES = ("--result-lines", UNIT)
RESULT_LINE_PREFIX = "kcross-result: "


def harness_argv(*, suites: Sequence[str] = DEFAULT_SUITES, bench: str | None = None) -> list[str]:
    """The counting plan's harness command (kcross lab and kcross lava job run this one)."""
    argv = [GUEST_HARNESS, "run", *COUNTING_OPTIONS, "--json", *RESULT_LINES]
    if suites:
        argv[2:2] = ["--suite", ",".join(suites)]
    if bench:
        argv[2:2] = ["--bench", bench]
    return argv


# Why a lab run keeps no hardware counter the guest read: QEMU's emulated PMU (pseries,
# virt) counts under TCG, but not every kernel instruction; the lab's figure is the
# icount clock's.
GUEST_PMU = "guest PMU under QEMU TCG: undercounts kernel instructions (the lab counts by icount)"


def _drop_guest_hardware_counters(result: dict[str, Any]) -> None:
    from kcross.views.run import HW_EVENTS

    counters = result.get("counters")
    unavailable = result.get("counters_unavailable")
    if not isinstance(counters, dict) or not isinstance(unavailable, dict):
        return   # malformed: left for the schema to refuse
    for event in HW_EVENTS:
        if event in counters:
            del counters[event]
            unavailable[event] = GUEST_PMU


def lab_records(result: CommandResult, group: Mapping[str, Any] | None,
                where: str, *, fingerprint_extra: Mapping[str, Any] | None = None,
                ) -> tuple[RunStream, list[dict[str, Any]], list[str]]:
    """The harness's records in a guest command's output, made lab records and checked:
    fingerprint.lab added, every result's unit instructions/op, and the hardware counters
    the guest read (its emulated PMU) set aside as unavailable, with the reason.  ``group``
    None: a guest on real hardware (a LAVA board), whose records are kept as the harness
    wrote them.  ``fingerprint_extra``: further fingerprint groups (a LAVA job's ``lava``).

    Lines that are not JSON objects are the harness's messages (its stderr shares the
    console).  A line that starts like a record but is not one, or a record that breaks
    the result format, is the guest's failure: ConsoleError (exit 3)."""
    stream = RunStream()
    records: list[dict[str, Any]] = []
    messages: list[str] = []
    for number, line in enumerate(result.output, 1):
        text = line.strip()
        if not text.startswith("{"):
            if text and not text.startswith(RESULT_LINE_PREFIX):
                messages.append(text)
            continue
        try:
            raw = json.loads(text)
        except ValueError:
            raise ConsoleError(f"{where} line {number}: the guest printed a garbled record: "
                               f"{text[:80]!r}") from None
        if isinstance(raw, dict) and raw.get("type") == "fingerprint":
            if group is not None:
                raw["lab"] = dict(group)
            raw.update(fingerprint_extra or {})
        elif group is not None and isinstance(raw, dict) and raw.get("type") == "result":
            raw["unit"] = UNIT
            _drop_guest_hardware_counters(raw)
        try:
            record = parse_line(json.dumps(raw), f"{where} line {number}", LIVE_VERSIONS)
            stream.add(record, f"{where} line {number}")
        except SchemaError as exc:   # the guest's output, not the user's input: exit 3
            raise ConsoleError(str(exc)) from None
        records.append(record)
    return stream, records, messages


def check_harness_status(result: CommandResult, messages: Sequence[str], arch: str) -> None:
    """The guest harness's exit: 0 and 1 (a failed check: a result) are runs; 2 is the
    user's input (KCROSS_SYSCALL=... not valid on this arch); anything else is broken."""
    said = messages[-1] if messages else "no message"
    if result.status in ("0", "1"):
        return
    if result.status == "2":
        raise UserError(f"the {arch} guest's harness refused the run: {said}")
    raise HarnessError(f"the {arch} guest's harness ended with status {result.status}: {said}")


def count(guest: Guest, kernel: Kernel, payload: Payload, *, variant: str | None = None,
          suites: Sequence[str] = DEFAULT_SUITES, bench: str | None = None,
          env: Mapping[str, str] | None = None, timeout: float = COUNTING_TIMEOUT,
          workdir: Path | None = None, extra_plan: Sequence[Sequence[str]] = (),
          extra_files: Mapping[str, Path] | None = None) -> Counted:
    """Boot ``guest`` in counting mode, run the harness, return its records as a lab run.
    ``extra_plan``: commands run after the harness in the same boot (``extra_files``: the
    programs they need, {guest path: host file}); their results are ``Counted.extra``."""
    if guest.mode != "counting":
        raise UserError("instruction counts need a counting-mode guest")
    if guest.arch.name != payload.arch:
        raise UserError(f"the payload was built for {payload.arch}, the guest is "
                        f"{guest.arch.name}")
    plan = [plan_command(harness_argv(suites=suites, bench=bench), env=env), *extra_plan]
    files = {GUEST_HARNESS: payload.harness, **(extra_files or {})}
    started = datetime.now(UTC)
    results, _console = run_plan(guest, payload.init, files, plan, timeout=timeout,
                                 workdir=workdir)
    if len(results) != len(plan):
        raise ConsoleError(f"the {guest.arch.name} guest ran {len(results)} commands, "
                           f"its plan had {len(plan)}")
    where = f"{guest.arch.name} guest console"
    stream, records, messages = lab_records(results[0], lab_group(guest, kernel, variant), where)
    check_harness_status(results[0], messages, guest.arch.name)
    if not stream.complete:
        raise HarnessError(f"the {guest.arch.name} guest's harness stopped before its end "
                           f"record (status {results[0].status}); its last words: "
                           f"{messages[-1] if messages else 'none'}")
    return Counted(guest=guest, kernel=kernel, variant=variant, stream=stream,
                   records=records, messages=messages, extra=list(results[1:]),
                   started_at=started, finished_at=datetime.now(UTC))


def rows_by_name(counted: Iterable[Counted]) -> list[str]:
    """Benchmarks (suite/name) in the order the first run has them, then any others."""
    names: list[str] = []
    for c in counted:
        for r in c.stream.results:
            name = f"{r['suite']}/{r['name']}"
            if name not in names:
                names.append(name)
    return names
