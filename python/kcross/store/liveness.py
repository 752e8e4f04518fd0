"""Who owns a ``running`` run, and whether that owner still exists.

A run is ``running`` from ``start_run`` until ``finish_run``.  A process that
is killed outright (SIGKILL, power loss, a crashed guest) never finishes it,
so a stored ``running`` says nothing by itself.  Each live run therefore
records its owner, the kcross process writing it:

* ``owner_host``: the host name, for people;
* ``owner_pid``: the process id;
* ``owner_id``: ``boot=<boot id> pidns=<pid namespace> start=<start time>``,
  which tells this system from another one with the same host name (boot id,
  pid namespace: another container on the same kernel cannot see our pids),
  and a process from a later one that got the same pid (start time in clock
  ticks since boot, field 22 of /proc/<pid>/stat);

and a heartbeat, ``updated_at``, refreshed with every stored result (and by
``Store.heartbeat``).  On the owner's own system the question "is it alive?"
has an exact answer; elsewhere only the heartbeat can tell, and a run whose
heartbeat is older than :data:`STALE_AFTER` is reported as stale.  Nothing
is guessed: without /proc a run is judged by its heartbeat alone.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import socket
from dataclasses import dataclass

# A heartbeat comes with every result (seconds apart; a slow benchmark takes
# under a minute).  Ten minutes of silence is far beyond that.
STALE_AFTER = dt.timedelta(minutes=10)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def _boot_id() -> str | None:
    return _read("/proc/sys/kernel/random/boot_id")


def _pid_namespace() -> str | None:
    try:
        link = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return None
    return link.partition("[")[2].rstrip("]") or None


def process_start(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (field 22 of /proc/PID/stat).

    None when there is no such process, or only its zombie (killed, not yet reaped).
    """
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces
    # or parentheses: count fields from the last ')'.
    fields = stat.rpartition(")")[2].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


@dataclass(frozen=True)
class Owner:
    """The process that writes a live run."""

    host: str | None
    pid: int
    ident: str | None

    @classmethod
    def this_process(cls) -> Owner:
        pid = os.getpid()
        parts = {"boot": _boot_id(), "pidns": _pid_namespace(), "start": process_start(pid)}
        ident = None if None in parts.values() else \
            " ".join(f"{k}={v}" for k, v in parts.items())
        try:
            host: str | None = socket.gethostname() or None
        except OSError:
            host = None
        return cls(host=host, pid=pid, ident=ident)


@functools.lru_cache(maxsize=1)
def _me() -> Owner:
    return Owner.this_process()


def _parse(ident: str | None) -> dict[str, str]:
    if not ident:
        return {}
    return dict(item.partition("=")[::2] for item in ident.split())


def _ago(delta: dt.timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


@dataclass(frozen=True)
class Liveness:
    """What ``kcross runs`` shows for a run, and whether it may still be written to."""

    state: str   # "complete", "running", "dead (pid 123 gone)", "stale (...)", ...
    live: bool   # running and not known to be dead or stale


def judge(status: str, *, owner_host: str | None, owner_pid: int | None,
          owner_id: str | None, updated_at: dt.datetime | None,
          now: dt.datetime | None = None) -> Liveness:
    """Tell a live ``running`` run from one whose process is gone."""
    if status != "running":
        return Liveness(status, False)
    me = _me()
    here = _parse(me.ident)
    there = _parse(owner_id)
    same_system = bool(here) and bool(there) and all(
        here.get(k) == there.get(k) for k in ("boot", "pidns"))
    if same_system and owner_pid is not None:
        start = process_start(owner_pid)
        if start is None:
            return Liveness(f"dead (pid {owner_pid} gone)", False)
        if start != there.get("start"):
            return Liveness(f"dead (pid {owner_pid} gone, its number reused)", False)
        return Liveness("running", True)
    now = now or dt.datetime.now(dt.UTC)
    if owner_host is None or owner_host != me.host:
        where = "other host"
    elif not here or not there:
        where = "this host, but its process cannot be checked (no /proc)"
    else:
        where = "this host before a reboot, or another container"
    if updated_at is None:
        return Liveness(f"running? (no owner recorded, {where})", True)
    age = now - updated_at
    if age > STALE_AFTER:
        return Liveness(f"stale (no heartbeat for {_ago(age)}, {where})", False)
    return Liveness(f"running ({owner_host or '?'}, heartbeat {_ago(age)} ago)", True)
