"""The lab's correctness mode: the payload's tests inside a real kernel, judged as CTest would.

:func:`run_tests` packs a :class:`~kcross.lab.payload.Payload` (its /init, harness and test
programs), boots the guest once with one plan line per test, and turns each test's console
section into a :class:`TestOutcome`: passed, failed or skipped, with the reason and the
test's own output lines.  The guest is meant to be a correctness-mode one (two vCPUs on
multi-threaded TCG: threads really migrate and rseq sections really abort); nothing here
depends on the mode.

:func:`evidence` picks from the outcomes the lines that show which real paths ran: the
syscall mechanism selected (scv on POWER9), rseq registered, the live vDSO parsed, and
the stress tier's kernel-directed aborts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kcross.errors import UserError
from kcross.lab.boot import run_plan
from kcross.lab.initramfs import CommandResult, ConsoleError
from kcross.lab.machines import Guest
from kcross.lab.payload import GuestTest, Payload

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
# Time for the kernel to boot and power off, on top of the tests' own limits.
BOOT_ALLOWANCE = 120.0
# "1..0 # SKIP why" (a whole TAP test skipped), or a line saying SKIP.
_SKIP_LINE = re.compile(r"#\s*SKIP\b\s*(.*)$", re.IGNORECASE)

# (test name, what the line shows): lines of the guest's output that show the real paths ran.
EVIDENCE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("example_syscall", re.compile(r"^architecture .*available: |^mechanism in use: ")),
    ("test_syscall", re.compile(r"^# page size \d+, mechanism ")),
    ("example_cpu", re.compile(r"^rseq: ")),
    ("test_rseq", re.compile(r"^# mode default: ")),
    ("test_rseq_ops", re.compile(r"rseq registered|kernel aborts retried|redirected by the kernel")),
    ("test_percpu", re.compile(r"^# counter: \d+ of \d+ threads on rseq")),
    ("test_vdso", re.compile(r"^ok \d+ - (the live vDSO at|kc_vdso_image\(\) is AT_SYSINFO_EHDR)")),
    ("stress_percpu_rseq", re.compile(r"^# seed .* mode |^# counter: \d+ aborts retried")),
    ("stress_percpu_fallback", re.compile(r"^# seed .* mode ")),
)


@dataclass(frozen=True)
class TestOutcome:
    """One test's result in the guest."""

    name: str
    status: str             # "passed" | "failed" | "skipped"
    output: list[str]       # the test's output lines, as the console showed them
    exit: str = ""          # the guest's status of the program: exit code, SIGNAME or "timeout"
    reason: str = ""        # why it failed or was skipped ("" when it passed)

    @property
    def passed(self) -> bool:
        return self.status == PASSED


def _search(patterns: Sequence[str], text: str) -> str | None:
    for pattern in patterns:
        try:
            if re.search(pattern, text, re.MULTILINE):
                return pattern
        except re.error:        # a CMake regex Python does not read: compare literally
            if pattern in text:
                return pattern
    return None


def judge(test: GuestTest, result: CommandResult) -> TestOutcome:
    """``test``'s outcome from its console section, by CTest's rules: a timeout or a signal
    fails; SKIP_RETURN_CODE or SKIP_REGULAR_EXPRESSION skips; with PASS_REGULAR_EXPRESSION
    the output decides (not the exit code); FAIL_REGULAR_EXPRESSION fails; WILL_FAIL swaps."""
    output = result.output
    text = "\n".join(output)

    def outcome(status: str, reason: str = "") -> TestOutcome:
        return TestOutcome(test.name, status, output, result.status, reason)

    if result.timed_out:
        return outcome(FAILED, f"timed out after {test.timeout:g} s")
    if result.signal:
        return outcome(FAILED, f"killed by {result.signal}")
    code = result.exit_code
    if test.skip_code is not None and code == test.skip_code:
        said = next((m[1].strip() for line in output if (m := _SKIP_LINE.search(line))), "")
        return outcome(SKIPPED, said or f"exit status {code}")
    if (pattern := _search(test.skip_regex, text)) is not None:
        return outcome(SKIPPED, f"output matches SKIP_REGULAR_EXPRESSION {pattern!r}")
    passed, why = code == 0, f"exit status {code}"
    if test.pass_regex:
        passed = _search(test.pass_regex, text) is not None
        why = "output matches none of PASS_REGULAR_EXPRESSION " + \
            ", ".join(repr(p) for p in test.pass_regex)
    if passed and (pattern := _search(test.fail_regex, text)) is not None:
        passed, why = False, f"output matches FAIL_REGULAR_EXPRESSION {pattern!r}"
    if test.will_fail:
        passed, why = not passed, "WILL_FAIL, and it passed"
    return outcome(PASSED) if passed else outcome(FAILED, why)


def plan_timeout(tests: Sequence[GuestTest]) -> float:
    """A boot timeout that covers every test's own limit and the boot itself."""
    return BOOT_ALLOWANCE + sum(t.timeout for t in tests)


def run_tests(payload: Payload, guest: Guest, *, timeout: float,
              tests: Sequence[GuestTest] | None = None,
              workdir: Path | None = None,
              progress: Callable[[TestOutcome, float], None] | None = None) -> list[TestOutcome]:
    """Boot ``guest`` once with ``payload`` and run ``tests`` (default: all the payload's),
    in order; one outcome per test.  LabError/ConsoleError (one line) when the guest does
    not boot, does not finish within ``timeout`` seconds, or its console is unreadable.
    ``progress``: called as each test ends in the guest (from its console as it streams),
    with its outcome and the host seconds it took."""
    if guest.arch.name != payload.arch:
        raise UserError(f"the payload was built for {payload.arch}, the guest is {guest.arch.name}")
    chosen = list(payload.tests if tests is None else tests)
    plan = [t.plan_command() for t in chosen]

    def ended(result: CommandResult, seconds: float) -> None:
        if progress is not None and 1 <= result.number <= len(chosen):
            progress(judge(chosen[result.number - 1], result), seconds)

    results, _ = run_plan(guest, payload.init, payload.files, plan, timeout=timeout,
                          workdir=workdir, on_result=ended if progress else None)
    if len(results) != len(chosen):
        raise ConsoleError(f"the {guest.arch.name} guest reported {len(results)} of the "
                           f"{len(chosen)} tests in its plan")
    return [judge(test, result) for test, result in zip(chosen, results, strict=True)]


def evidence(outcomes: Sequence[TestOutcome]) -> list[str]:
    """The output lines that show which real paths ran, each as "test: line"."""
    by_name = {o.name: o for o in outcomes}
    lines = []
    for name, pattern in EVIDENCE:
        outcome = by_name.get(name)
        if outcome is not None:
            lines += [f"{name}: {line}" for line in outcome.output if pattern.search(line)]
    return lines


def stress_aborts(outcome: TestOutcome) -> int:
    """The kernel-directed rseq aborts a stress run's counter test retried, summed over rounds."""
    return sum(int(m[1]) for line in outcome.output
               if (m := re.match(r"# counter: (\d+) aborts retried", line)))


def summary(outcomes: Sequence[TestOutcome]) -> str:
    """"N passed, N failed, N skipped" (failed and skipped only when there are some)."""
    counts = {status: sum(o.status == status for o in outcomes)
              for status in (PASSED, FAILED, SKIPPED)}
    return ", ".join(f"{n} {status}" for status, n in counts.items() if n or status == PASSED)
