"""``kcross lava job``: a LAVA job definition and the images it boots (issue 17).

The job boots the lab's guest (the kernel, and the initramfs with the lab's /init and the
static harness: :mod:`kcross.lab`) and reads the results off the console with LAVA's
``monitors`` test action.  The plan is the harness exactly as ``kcross lab`` runs it in
counting mode (:func:`kcross.lab.session.harness_argv`: the same suites, ``--bench`` and
sample settings) plus ``--result-lines UNIT``: after each JSON record the harness prints
one line a regular expression can take (:data:`RESULT_LINE`), whose figure is the
statistics rule's median of the record (the figure kcross stores).  Each becomes a LAVA test
case (``kcross`` suite, the case ``suite_name``, its measurement and unit).

The job's initramfs also holds ``/lab/note`` (:class:`Note`: what the job is, the lab's
fingerprint group as this host computed it), which /init prints after the harness as a
``note`` marker line; ``kcross import`` reads it from the job's log (:mod:`.imports`).

The token.  A lab boot draws its token (:mod:`kcross.lab.initramfs`) at random per boot
and keeps it secret until the boot; a LAVA job's token is drawn when the job is made and
is fixed in its initramfs and written in its definition (the monitor's start and end
strings), so anyone who reads the job can print marker lines with it.  The importer takes
the token from LAVA's own log line (``Waiting for start message: ...``), never from the
console: a guest program still cannot choose another token, but one that knows the
job's token could forge marker lines.  The guard is weaker than a lab boot's.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from kcross.lab.initramfs import MARKER

MONITOR = "kcross"          # the monitors action's name: the LAVA test suite of the cases
NOTE_FORMAT = 1             # Note.format
# The harness's --result-lines line (harness/output.c, kh_result_print_line).  LAVA's
# console delivers "\r\r\n": the pattern ends in \r*\n (a pattern that may end earlier
# matches half-arrived lines).
RESULT_LINE = (r"kcross-result: (?P<test_case_id>\S+) (?P<result>pass|fail|skip|unknown)"
               r"(?: (?P<measurement>[0-9.]+(?:e[-+]?[0-9]+)?) (?P<units>\S+))?\r*\n")


def case_id(suite: str, name: str) -> str:
    """The LAVA test case of benchmark suite/name, as LAVA's monitor names it
    (lava_dispatcher/actions/test/monitor.py: lowercased, runs of non-word characters
    made one ``_``)."""
    return re.sub(r"\W+", "_", f"{suite}/{name}".strip().lower())


def start_string(token: str) -> str:
    """The monitor's start: the harness's begin marker (command 1 of the plan)."""
    return f"{MARKER} {token} begin 1"


def end_string(token: str) -> str:
    """The monitor's end: /init's ``done`` (after the note)."""
    return f"{MARKER} {token} done"


@dataclass(frozen=True)
class Note:
    """/lab/note: what ``kcross import`` needs that LAVA's log does not say."""

    arch: str
    device_type: str
    unit: str                     # instructions/op (counting) or ns/op (a board)
    harness: list[str]            # the plan's harness command
    lab: dict[str, Any] | None    # fingerprint.lab as this host computed it (counting)
    # This host's Debian package version of the arch's QEMU (LAVA logs the worker's as
    # "qemu-system-ppc, installed at version: ..."): when they are the same, the worker's
    # QEMU is the version in lab.emulator_version.
    emulator_package: str | None
    format: int = NOTE_FORMAT
    kcross: str = "lava-job"

    def text(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def parse(cls, text: str) -> Note | None:
        """The note in a ``note`` marker's text; None if it is not one of ours."""
        try:
            raw = json.loads(text)
        except ValueError:
            return None
        if not isinstance(raw, dict) or raw.get("kcross") != "lava-job" \
                or raw.get("format") != NOTE_FORMAT:
            return None
        try:
            note = cls(**raw)
        except TypeError:
            return None
        if not isinstance(note.harness, list) or not isinstance(note.arch, str) \
                or not (note.lab is None or isinstance(note.lab, dict)):
            return None
        return note


def monitor(token: str) -> dict[str, Any]:
    return {"name": MONITOR, "start": start_string(token), "end": end_string(token),
            "pattern": RESULT_LINE}


def _timeouts(minutes: int) -> dict[str, Any]:
    return {"job": {"minutes": minutes + 15}, "action": {"minutes": minutes},
            "connection": {"minutes": 2}}


def qemu_job(*, name: str, ctx: dict[str, Any], kernel_url: str, kernel_arg: str,
             ramdisk_url: str, token: str, minutes: int,
             metadata: dict[str, str]) -> dict[str, Any]:
    """A job for LAVA's qemu device type: deploy to tmpfs, boot, monitor the console."""
    return {
        "device_type": "qemu",
        "job_name": name,
        "timeouts": _timeouts(minutes),
        "priority": "medium",
        "visibility": "public",
        "metadata": metadata,
        "context": ctx,
        "actions": [
            {"deploy": {"to": "tmpfs", "timeout": {"minutes": 10},
                        "images": {"kernel": {"image_arg": kernel_arg, "url": kernel_url},
                                   "ramdisk": {"image_arg": "-initrd {ramdisk}",
                                               "url": ramdisk_url}}}},
            {"boot": {"method": "qemu", "media": "tmpfs", "timeout": {"minutes": 5}}},
            {"test": {"timeout": {"minutes": minutes}, "monitors": [monitor(token)]}},
        ],
    }


def board_job(*, name: str, device_type: str, kernel_url: str, kernel_type: str,
              ramdisk_url: str, dtb_url: str | None, console: str, token: str,
              minutes: int, metadata: dict[str, str], append: str) -> dict[str, Any]:
    """A job for a board that boots a kernel and a ramdisk over TFTP from U-Boot (the
    ramdisk deploy LAVA documents: deploy ``to: tftp``, boot ``method: u-boot``,
    ``commands: ramdisk``).  Untested here: no board."""
    deploy: dict[str, Any] = {"to": "tftp", "timeout": {"minutes": 10},
                              "kernel": {"url": kernel_url, "type": kernel_type},
                              "ramdisk": {"url": ramdisk_url}}
    if dtb_url:
        deploy["dtb"] = {"url": dtb_url}
    extra = " ".join([f"console={console}", "quiet loglevel=1 panic=-1", append]).strip()
    return {
        "device_type": device_type,
        "job_name": name,
        "timeouts": _timeouts(minutes),
        "priority": "medium",
        "visibility": "public",
        "metadata": metadata,
        "context": {"extra_kernel_args": extra},
        "actions": [
            {"deploy": deploy},
            {"boot": {"method": "u-boot", "commands": "ramdisk", "timeout": {"minutes": 5}}},
            {"test": {"timeout": {"minutes": minutes}, "monitors": [monitor(token)]}},
        ],
    }
