"""The harness's environment forcings (``KCROSS_SYSCALL``, ``KCROSS_RSEQ``...): every name,
what each takes, what it does, and which kcross option sets it itself.

The one list on the Python side (``kcross --help``'s environment, ``kcross run --remote``'s
variables, ``kcross lab --env`` and ``kcross lava job --env``).  The C side validates them:
the library's own in src/settings.c (``kc_library_settings``, each one's values beside its
user), the harness's in harness/settings.c (``kh_settings``); test_forcings.py holds this
table to theirs, name for name and value for value.  An empty variable is unset, as the
harness reads it; a value it refuses stops it before anything runs (one line, exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass

# What a forcing's value is, when no list of values says it: the architecture's syscall
# mechanisms (include/kcross/arch/<arch>.h, with libc and auto), a glob of benchmark
# names, or such a glob, a colon and a number of nanoseconds.
VALUES, MECHANISM, GLOB, GLOB_NS = "values", "mechanism", "glob", "glob:ns"
# KCROSS_TEST_DELAY's largest NS (harness/harness.h: KH_DELAY_MAX_NS).
DELAY_MAX_NS = 1e6


@dataclass(frozen=True)
class Forcing:
    """One environment variable the harness (or the library under it) obeys."""

    name: str
    kind: str                            # VALUES, MECHANISM, GLOB or GLOB_NS
    values: tuple[str, ...] = ()         # VALUES: the valid ones
    help: tuple[str, ...] = ()           # its lines in kcross --help's environment
    set_by: str | None = None            # the kcross options that set it (not a user's)
    # A planted change or an instrument, not a setting of the machine: a run it was set in
    # is no repetition of its machine's measurement (kcross.judge.noise leaves it out).
    plants: bool = False


FORCINGS: tuple[Forcing, ...] = (
    Forcing("KCROSS_SYSCALL", MECHANISM,
            help=("force the syscall mechanism: a name this architecture has",
                  '(kcross sysinfo lists them under "available"), libc or auto')),
    Forcing("KCROSS_VDSO", VALUES, ("0", "1"),
            help=("0: the library ignores the vDSO; 1 or unset: it uses it",)),
    Forcing("KCROSS_RSEQ", VALUES, ("auto", "on", "off"),
            help=("off: no rseq in the process (neither kcross nor glibc",
                  "registers it); on or auto: the default")),
    Forcing("KCROSS_TIMER", VALUES, ("auto", "clock_gettime"),
            help=("clock_gettime: time without the cycle counter; auto: default",)),
    Forcing("KCROSS_TEST_FAIL", GLOB,
            help=("a GLOB of benchmark names whose check is forced to fail",
                  "(for tests of failure handling)"), plants=True),
    Forcing("KCROSS_TEST_DELAY", GLOB_NS,
            help=("GLOB:NS adds NS nanoseconds to every operation of the",
                  "matching benchmarks (a planted slowdown, for tests of verdicts)"),
            plants=True),
    Forcing("KCROSS_PROFILE", VALUES, ("1", "kallsyms"),
            set_by="kcross lab --profile and --trace", plants=True),
)

# The forcings that plant a change or an instrument (Forcing.plants).
PLANTING = tuple(f.name for f in FORCINGS if f.plants)
# What a user may set (kcross run --remote passes these on): all but kcross's own.
USER_SET = tuple(f.name for f in FORCINGS if f.set_by is None)


def named(name: str) -> Forcing | None:
    return next((f for f in FORCINGS if f.name == name), None)


def assignment(text: str) -> tuple[str, str] | None:
    """``NAME=VALUE`` split at its first ``=`` (None unless NAME is an identifier)."""
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        return None
    return name, value


def refusal(name: str, value: str) -> str | None:
    """Why a user cannot give ``name=value`` to the harness, as far as this table can tell
    (a list of values; the other kinds need the harness's source: the caller's), or None."""
    forcing = named(name)
    if forcing is None:
        return (f"{name} is not one of the harness's settings "
                f"({', '.join(USER_SET)})")
    if forcing.set_by is not None:
        return f"{name} is set by {forcing.set_by}, not by hand"
    if not value:
        return f"{name}= is empty (an empty forcing is none): give a value"
    if forcing.kind == VALUES and value not in forcing.values:
        return f"{name}={value}: not one of {', '.join(forcing.values)}"
    return None


def delay_parts(value: str) -> tuple[str, float] | None:
    """KCROSS_TEST_DELAY's GLOB and NS (split at the last colon), None when NS is not a
    number above 0 and at most DELAY_MAX_NS (as harness/settings.c reads it)."""
    glob, colon, number = value.rpartition(":")
    if not colon or not glob or not number:
        return None
    try:
        ns = float(number)
    except ValueError:
        return None
    return (glob, ns) if 0 < ns <= DELAY_MAX_NS else None
