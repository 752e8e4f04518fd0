"""The lab's tables (kcross.lab.report) from a real counting run and edited copies of it."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
from kcross.lab import machines
from kcross.lab.initramfs import parse_console
from kcross.lab.kernel import Kernel
from kcross.lab.machines import Guest
from kcross.lab.report import MitigationRow, compare_table, mitigation_table
from kcross.lab.session import Counted, lab_group, lab_records
from kcross.views.table import terminal
from labs import CONSOLE_TOKEN
from rich.console import Console

CONSOLE = (Path(__file__).with_name("data") / "lab-ppc64le-console.txt").read_text()


def run(tmp_path: Path, shift: dict[str, float] | None = None,
        vulns: dict[str, str] | None = None) -> Counted:
    """The captured run, with ``shift`` added to benchmarks' samples (instructions/op)."""
    kernel_file = tmp_path / "vmlinux"
    kernel_file.write_bytes(b"k")
    kernel = Kernel("ppc64le", kernel_file)
    guest = Guest(machines.arch("ppc64le"), kernel_file)
    (result,) = parse_console(CONSOLE, CONSOLE_TOKEN)
    stream, records, _ = lab_records(result, lab_group(guest, kernel, None), "console")
    stream = copy.deepcopy(stream)
    hz = stream.fingerprint["timer"]["hz"]
    for r in stream.results:
        if r["status"] == "ok" and shift and r["name"] in shift:
            # the figure and the guest clock's ticks it comes from (exact counts are judged
            # in ticks: kcross.judge.verdict.exact_medians)
            r["samples"] = [x + shift[r["name"]] for x in r["samples"]]
            r["ticks"] = [t + shift[r["name"]] * hz / 1e9 for t in r["ticks"]]
    if vulns:
        stream.fingerprint["vulnerabilities"].update(vulns)
    return Counted(guest=guest, kernel=kernel, variant=None, stream=stream)


def text(table) -> str:  # type: ignore[no-untyped-def]
    console = Console(width=300, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(terminal(table))
    return console.export_text()


def rows(table_text: str) -> dict[str, list[str]]:
    out = {}
    for line in table_text.splitlines():
        cells = [c.strip() for c in line.replace("┃", "│").split("│")[1:-1]]
        if cells and cells[0]:
            out[cells[0]] = cells
    return out


def test_compare_shows_the_difference(tmp_path: Path) -> None:
    a, b = run(tmp_path), run(tmp_path, {"getppid-dispatch": -52.0})
    t = rows(text(compare_table(a, b, "sc", "scv")))
    assert t["getppid-dispatch"][3] == "-52.0" and t["getppid-dispatch"][4].endswith("%")
    assert t["getppid-inline"][3] == "0" and t["getppid-inline"][4] == "0"


def test_mitigation_rows_say_why(tmp_path: Path) -> None:
    base = run(tmp_path)
    moved = run(tmp_path, {"getppid-inline": -3.0, "stat-root": -20.0},
                {"meltdown": "Not affected"})
    still = run(tmp_path, {"stat-root": 2.0})
    broken = run(tmp_path, {"getppid-inline": 1.0})
    out = text(mitigation_table("ppc64le", "power9", base, [
        MitigationRow("cap-cfpc=fixed", "what", run=moved),
        MitigationRow("no_entry_flush", "what", run=still, expect="a same-length slot"),
        MitigationRow("nospectre_v2", "what", run=broken, expect="a same-length slot"),
        MitigationRow("cap-ibs=fixed-na", "what", refused="QEMU aborted"),
    ]))
    t = rows(out)
    assert t["cap-cfpc=fixed"][2] == "-3.0" and t["cap-cfpc=fixed"][3] == "[-20.0, 0]"
    assert "meltdown → Not affected" in t["cap-cfpc=fixed"][4]
    # unchanged on the null syscall (stat moved: incidental, per the caption): the reason
    assert t["no_entry_flush"][2] == "0"
    assert "no instruction changed on getppid-inline: a same-length slot" in out
    # an expectation the measurement contradicts is said so, not repeated as fact
    assert "expected no change: a same-length slot; yet getppid-inline moved" in out
    assert "not a result: QEMU aborted" in out
    assert "incidental differences" in out


def test_a_long_skip_reason_is_cut_at_a_word(tmp_path: Path) -> None:
    """The compare table's note cell holds REASON_WIDTH characters: a longer skip reason
    ends with a whole word and "…", never in the middle of one."""
    from kcross.views.lab import REASON_WIDTH

    a, b = run(tmp_path), run(tmp_path)
    reason = "needs an SMT sibling of the benchmark's CPU, and this guest has exactly one vCPU"
    for r in a.stream.results:
        if r["name"] == "getppid-inline":
            r.update(status="skipped", reason=reason, samples=[], ticks=[])
    cell = rows(text(compare_table(a, b, "sc", "scv")))["getppid-inline"][5]
    assert len(cell) <= REASON_WIDTH and cell.endswith("…"), cell
    shown = cell[:-1]
    assert f"skipped: {reason}".startswith(shown) and f"skipped: {reason}"[len(shown)] == " "


@pytest.mark.parametrize("text_in, limit, out", [
    ("short", 10, "short"),
    ("one two three", 9, "one two…"),
    ("one, two three", 6, "one…"),
    ("unbreakable", 5, "unbr…"),
])
def test_clip_words(text_in: str, limit: int, out: str) -> None:
    from kcross.views.text import clip_words

    assert clip_words(text_in, limit) == out
