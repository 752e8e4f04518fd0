"""``kcross lab ARCH --peers``: the kernel's own selftests beside kcross's rows, as its
peers (issue 16).

One counting boot runs the harness, then the selftests (kcross.lab.selftests); this
module sets each selftest's figures beside the kcross rows for the same operation and
asks kcross.judge.agreement whether they agree:

- null_syscall (``syscall(__NR_gettid)`` through glibc, 10^7 times): its ns per call is
  instructions per call (the guest's CLOCK_MONOTONIC counts one ns per instruction; its
  "cycles" are timebase ticks x clock/timebase = 1000 MHz / 512 MHz on pseries under
  TCG, the same figure).  kcross has no gettid-through-syscall(3) row, so its figure for
  that loop is made of three exact rows: getppid-libc-syscall (getppid through glibc's
  syscall(3)) + gettid-inline - getppid-inline (what gettid costs the kernel against
  getppid, both by the same inline instruction) + the empty loop kcross subtracted
  (null_syscall's figure includes its loop).  Tolerance 1%: what is left differs only by
  the timer ticks inside null_syscall's one long loop (kcross's median leaves them out)
  and the loop's code.
- context_switch: 10^9 / the last second's switch count is instructions per switch;
  kcross's per-switch figure is its row's median / the switches its op makes (2).
  Tolerance 5%: the peer's second includes its SIGALRM handler, the timer ticks and its
  own loop; kcross's median leaves ticks out and subtracts its empty loop.
- rseq tests: pass/fail (their own checks of the per-CPU totals) against the kcross
  rows' status (the harness checks each op's result); their operation counts and rseq
  aborts are shown, kcross's instructions per op beside them.

:func:`peer_figures` is the whole job as one call (for ``kcross reproduce`` and tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcross.judge import agreement
from kcross.lab.initramfs import CommandResult
from kcross.lab.linux_source import Source
from kcross.lab.selftests import NO_PEER, Figures, Peer, left_out, parse, peers
from kcross.lab.session import Counted

# Relative tolerances of the figure peers (see the module's doc for why these).
TOLERANCE = {"null-syscall": 0.01, "switch": 0.05}
UNIT = "instructions"

# What each side's loop includes, per peer kind: said under the table.
INCLUDES = {
    "null-syscall": "null_syscall: its loop, the call to glibc's syscall(3) and gettid, "
                    "and the timer ticks of its 10^7 calls; kcross: getppid-libc-syscall + "
                    "(gettid-inline - getppid-inline) + its empty loop, ticks left out by "
                    "the median",
    "switch": "context_switch: one guest second (10^9 instructions) / its switches, "
              "including its loop, its SIGALRM handler and timer ticks; kcross: the row's "
              "median / its 2 switches per op, empty loop subtracted, ticks left out",
    "rseq": "pass/fail: the selftest checks its per-CPU totals; kcross's row is ok when "
            "the harness's check of the op's result passed (its figure: instructions/op)",
}


@dataclass(frozen=True)
class PeerRow:
    """One peer beside kcross."""

    figures: Figures
    ours: float | None              # kcross's figure for the peer's quantity
    ours_how: str                   # how it was made from kcross's rows
    judged: agreement.Judged

    def as_json(self) -> dict[str, Any]:
        peer = self.figures.peer
        why = peer.differs_because if self.judged.agreement is agreement.Agreement.DIFFER else None
        return {**self.figures.as_json(), "kcross_rows": list(peer.kcross),
                "kcross": self.ours, "kcross_how": self.ours_how, **self.judged.as_json(),
                "differs_because": why}


@dataclass
class PeersBeside:
    """A counting run with the kernel's selftests beside it."""

    arch: str
    counted: Counted
    source: Source
    rows: list[PeerRow]
    left_out: list[Peer] = field(default_factory=list)
    no_peer: str | None = None

    def includes(self) -> list[str]:
        """What each side's loop includes, for each kind of peer shown."""
        return [INCLUDES[k] for k in dict.fromkeys(r.figures.peer.kind for r in self.rows)]

    def as_json(self) -> dict[str, Any]:
        return {"type": "lab-crosscheck", "arch": self.arch,
                "source": {"package": self.source.package, "version": self.source.version,
                           "kernel_release": self.source.kernel_release,
                           "deb_sha256": self.source.deb_sha256},
                "unit": f"{UNIT}/op", "peers": [r.as_json() for r in self.rows],
                "not_run": [{"peer": p.name, "why": f"slow: {p.what}; --peers all runs it"}
                            for p in self.left_out],
                "no_peer": self.no_peer}


# ---------------------------------------------------------------- kcross's side

def _record(counted: Counted, name: str) -> dict[str, Any] | None:
    for r in counted.stream.results:
        if f"{r['suite']}/{r['name']}" == name:
            return r
    return None


def _median(counted: Counted, name: str) -> tuple[float, float] | None:
    """(median, the empty loop it had subtracted, else 0) of an ok row; None otherwise."""
    got = _summary(counted, name)
    return got if isinstance(got, tuple) else None


def _summary(counted: Counted, name: str) -> tuple[float, float] | str:
    """(median, subtracted empty loop) of a row, or why there is none (never silent)."""
    from kcross.stats import StatsError, summarize_record

    record = _record(counted, name)
    if record is None:
        return f"{name} not counted"
    if record.get("status") != "ok":
        return f"{name} {record.get('status')}"
    try:
        s = summarize_record(record)
    except StatsError as exc:
        return f"{name}: {exc}"
    return s.median, (s.overhead.median or 0.0) if s.overhead.subtracted else 0.0


def _null_syscall(counted: Counted, peer: Peer) -> tuple[float | None, str]:
    libc, gettid, getppid = peer.kcross
    got = [_summary(counted, n) for n in (libc, gettid, getppid)]
    figures = [g for g in got if not isinstance(g, str)]
    if len(figures) != len(got):
        return None, "; ".join(g for g in got if isinstance(g, str))
    (m_libc, loop), (m_tid, _), (m_ppid, _) = figures
    value = m_libc + (m_tid - m_ppid) + loop
    return value, (f"{libc.split('/')[1]} {m_libc:.1f} + ({gettid.split('/')[1]} {m_tid:.1f} - "
                   f"{getppid.split('/')[1]} {m_ppid:.1f}) + empty loop {loop:.1f}")


def _per_switch(counted: Counted, peer: Peer) -> tuple[float | None, str]:
    name = peer.kcross[0]
    got = _summary(counted, name)
    if isinstance(got, str):
        return None, got
    record = _record(counted, name) or {}
    switches = record.get("switches_per_op")
    if not isinstance(switches, int | float) or switches <= 0:
        return None, f"{name} declares no switches per op"
    return got[0] / switches, f"{name.split('/')[1]} {got[0]:.1f} / {switches:g} switches"


def _rseq(counted: Counted, peer: Peer, figures: Figures) -> PeerRow:
    states = []
    shown = []
    for name in peer.kcross:
        record = _record(counted, name)
        states.append(None if record is None else record.get("status") == "ok")
        got = _summary(counted, name)
        shown.append(got if isinstance(got, str) else f"{name} ok, {got[0]:.1f} {UNIT}/op")
    ours_ok = None if None in states else all(states)
    what = figures.reading or (figures.problem or "")
    judged = agreement.checks(figures.passed, ours_ok, what)
    only = _median(counted, peer.kcross[0]) if len(peer.kcross) == 1 else None
    return PeerRow(figures, only[0] if only else None, "; ".join(shown), judged)


def row(counted: Counted, peer: Peer, result: CommandResult) -> PeerRow:
    """One peer's run (its console output) beside kcross's rows of ``counted``."""
    figures = parse(peer, result)
    if peer.kind == "rseq":
        return _rseq(counted, peer, figures)
    ours, how = (_null_syscall if peer.kind == "null-syscall" else _per_switch)(counted, peer)
    if not figures.passed:
        judged = agreement.Judged(agreement.Agreement.UNJUDGED,
                                  f"not judged: the peer failed ({figures.problem})")
    else:
        judged = agreement.figures(figures.per_op, ours, TOLERANCE[peer.kind], UNIT)
    return PeerRow(figures, ours, how, judged)


def rows(arch: str, counted: Counted, results: Sequence[CommandResult],
         selection: str = "quick") -> list[PeerRow]:
    """Every peer of ``arch`` beside kcross; ``results``: their plan commands' results, in
    the order of :func:`kcross.lab.selftests.plan`."""
    chosen = peers(arch, selection)
    if len(results) != len(chosen):
        from kcross.lab.initramfs import ConsoleError

        raise ConsoleError(f"the {arch} guest ran {len(results)} selftests, its plan had "
                           f"{len(chosen)}")
    return [row(counted, p, r) for p, r in zip(chosen, results, strict=True)]


def peers_beside(arch: str, counted: Counted, source: Source,
                 selection: str = "quick") -> PeersBeside:
    """The counting run ``counted`` (its plan's selftests' results in ``counted.extra``)
    with its peers beside it."""
    return PeersBeside(arch, counted, source, rows(arch, counted, counted.extra, selection),
                        left_out(arch, selection), NO_PEER.get(arch))


# ---------------------------------------------------------------- the whole job

def peer_figures(arch: str, *, kernel_path: Path | None = None, source_tree: Path | None = None,
                 selection: str = "quick", suites: Sequence[str] | None = None,
                 timeout: float = 900.0) -> PeersBeside:
    """Boot ``arch``'s counting guest once with the harness and the kernel's selftests and
    return the selftests' figures beside kcross's (Debian's kernel, or ``kernel_path``).
    For other commands (``kcross reproduce``) and tests; ``kcross lab --peers`` runs
    the same steps with its own messages."""
    from kcross.lab.kernel import Kernel, fetch
    from kcross.lab.linux_source import fetch_source
    from kcross.lab.machines import Guest
    from kcross.lab.machines import arch as lab_arch
    from kcross.lab.payload import build_payload
    from kcross.lab.selftests import WANTED, build, plan
    from kcross.lab.session import count

    kernel = Kernel.from_file(kernel_path, arch) if kernel_path else fetch(arch)
    payload = build_payload(arch, source=source_tree)
    src = fetch_source(arch, kernel.version, WANTED)
    built = build(arch, src)
    guest = Guest(lab_arch(arch), kernel.path, mode="counting")
    counted = count(guest, kernel, payload, suites=suites or suites_for(arch, selection),
                    timeout=timeout,
                    extra_plan=plan(arch, selection), extra_files=built.files())
    return peers_beside(arch, counted, src, selection)


def suites_for(arch: str, selection: str = "quick") -> tuple[str, ...]:
    """The harness suites counted beside the peers: those of the rows its peers are set beside."""
    from kcross.lab.selftests import kcross_rows

    return tuple(dict.fromkeys(name.split("/")[0] for name in kcross_rows(arch, selection)))
