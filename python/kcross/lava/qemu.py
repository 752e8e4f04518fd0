"""A lab guest as LAVA's ``qemu`` device type boots it: the job's ``context`` and the
device file a worker renders from it (issue 17).

Every QEMU fact comes from :class:`kcross.lab.machines.Guest` (one copy: the machine, the
CPU model, the memory, the vCPUs, the counting options, the kernel command line); this
module only says where LAVA takes each one.  LAVA's ``qemu.jinja2`` (lava-server's
device-type template, etc/dispatcher-config/device-types/qemu.jinja2 in the LAVA sources)
renders, for the context given here (``no_kvm``, ``no_network``):

- the program from ``arch`` (LAVA spells ppc64le ``ppc64``: the template's command for
  ``ppc64le`` would be a ``qemu-system-ppc64le`` that does not exist);
- ``-cpu {{cpu}} -machine {{machine}}`` for aarch64, ``-machine {{machine}}`` for ppc64,
  neither for x86_64 (there, without KVM, nothing): what the template does not set goes
  into ``extra_options``;
- ``-nographic -net none -m {{memory}} -monitor none``, then ``extra_options``.

So the worker's command line differs from ``kcross lab``'s only by ``-net none`` for
``-nic none`` (no network card either way) and ``-monitor none`` (the lab's monitor is
multiplexed on stdio; neither reaches the guest): the counts are the lab's, exactly.

``no_network`` is LAVA 2025.02's (lava_common's job schema before it refuses the variable:
Debian 12 ships 2023.01).  For an older server, ``old_lava`` leaves it out and the template
gives the guest a virtio network card on QEMU's user network
(``-net nic,model=virtio,macaddr=52:54:00:12:34:58 -net user``).  The guest never uses it,
but the card moves where the kernel's objects land, and with them the counts of path
lookups (measured on x86-64: open-close +22, stat-root -0.005, sched_getcpu -0.0001
instructions/op; the other 35 default rows the same): such a run is stored as a machine of
its own (``fingerprint.lab.network``, :mod:`kcross.lava.imports`).
:func:`device_file` writes what the template renders for the context, for ``lava-run``
on this machine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kcross.errors import UserError, shown
from kcross.lab.machines import CORRECTNESS_ARGS, COUNTING_ARGS, Guest

# LAVA's name of each arch (the job context's ``arch``), and which of -machine and -cpu
# qemu.jinja2 sets itself from the context for it.
LAVA_ARCH = {"ppc64le": "ppc64", "aarch64": "aarch64", "x86_64": "x86_64"}
_TEMPLATE_SETS: dict[str, tuple[str, ...]] = {"ppc64": ("machine",),
                                              "aarch64": ("cpu", "machine"), "x86_64": ()}
# qemu.jinja2's network options: with no_network, and without (model, mac_addr and
# netdevice unset).
NO_NETWORK = "-net none"
TEMPLATE_NETWORK = "-net nic,model=virtio,macaddr=52:54:00:12:34:58 -net user"


# The first LAVA whose job schema takes the no_network context (lava_common's schema before
# it refuses the variable: "extra keys not allowed").
NO_NETWORK_SINCE = (2025, 2)
_VERSION = re.compile(r"^(\d{4})\.(\d{1,2})(?:\.\d+)?(?:[-+~].*)?$")


def lava_release(version: str) -> tuple[int, int]:
    """A LAVA release's (year, month) from its version (2023.01, 2025.02.1, 2023.01-2 as
    Debian writes it); UserError (one line) for anything else."""
    m = _VERSION.match(version.strip())
    if m is None or not 1 <= int(m.group(2)) <= 12:
        raise UserError(f"--lava-version {shown(version)}: a LAVA release, YYYY.MM (e.g. "
                        "2023.01, Debian 12's; lava-server --version or the server's "
                        "/api/v0.2/system/version/ says it)")
    return int(m.group(1)), int(m.group(2))


def takes_no_network(version: str) -> bool:
    """Whether LAVA ``version``'s job schema takes the no_network context."""
    return lava_release(version) >= NO_NETWORK_SINCE


def target(old_lava: bool) -> str:
    """Which LAVA a qemu job made with (or without) ``old_lava`` is for, in words."""
    since = f"{NO_NETWORK_SINCE[0]}.{NO_NETWORK_SINCE[1]:02d}"
    if old_lava:
        return (f"for LAVA before {since} (e.g. Debian 12's 2023.01): no no_network context, "
                "so the guest has LAVA's network card and its run is a machine of its own")
    return (f"for LAVA {since} or later (its no_network context: an older LAVA refuses the "
            "job; make it with --old-lava)")


def _pairs(args: Sequence[str]) -> list[str]:
    """("-icount", "shift=0", "-seed", "1") -> ["-icount shift=0", "-seed 1"]."""
    return [f"{args[i]} {args[i + 1]}" for i in range(0, len(args), 2)]


def context(guest: Guest, *, old_lava: bool = False) -> dict[str, Any]:
    """The job's ``context`` for LAVA's qemu device type: ``guest``'s machine exactly
    (``old_lava``: without ``no_network``, for a LAVA before 2025.02)."""
    lava_arch = LAVA_ARCH[guest.arch.name]
    sets = _TEMPLATE_SETS[lava_arch]
    ctx: dict[str, Any] = {"arch": lava_arch, "no_kvm": True, "memory": guest.memory,
                           "monitor": "none"}
    if not old_lava:
        ctx["no_network"] = True
    extra: list[str] = []
    if "machine" in sets:
        ctx["machine"] = guest.machine
    else:
        extra.append(f"-machine {guest.machine}")
    if "cpu" in sets:
        ctx["cpu"] = guest.cpu_model
    else:
        extra.append(f"-cpu {guest.cpu_model}")
    extra += _pairs(guest.arch.extra)
    extra += [f"-smp {guest.vcpus}", "-no-reboot"]
    extra += _pairs(COUNTING_ARGS if guest.mode == "counting" else CORRECTNESS_ARGS)
    extra += _pairs(guest.extra)
    ctx["extra_options"] = extra
    return ctx


def kernel_image_arg(guest: Guest) -> str:
    """The kernel image's ``image_arg``: -kernel and the lab's command line."""
    return f'-kernel {{kernel}} -append "{guest.cmdline()}"'


def boot_parameters(ctx: dict[str, Any]) -> dict[str, Any]:
    """What qemu.jinja2 renders for ``ctx`` under ``actions.boot.methods.qemu.parameters``."""
    lava_arch = ctx["arch"]
    program = {"ppc64": "qemu-system-ppc64", "aarch64": "qemu-system-aarch64",
               "x86_64": "qemu-system-x86_64"}[lava_arch]
    options: list[str] = []
    if lava_arch == "aarch64":
        options += [f"-cpu {ctx['cpu']}", f"-machine {ctx['machine']}"]
    elif lava_arch == "ppc64":
        options.append(f"-machine {ctx['machine']}")
    network = NO_NETWORK if ctx.get("no_network") is True else TEMPLATE_NETWORK
    options += ["-nographic", network, f"-m {ctx['memory']}", f"-monitor {ctx['monitor']}"]
    return {"command": program, "options": options, "extra": list(ctx["extra_options"])}


# The constants of LAVA's base.jinja2 that the dispatcher reads for a qemu job.
_CONSTANTS: dict[str, Any] = {
    "posix": {"lava_test_sh_cmd": "/bin/sh", "lava_test_results_dir": "/lava-%s",
              "lava_test_shell_file": "~/.bashrc"},
    "shutdown-message": "The system is going down for reboot NOW",
    "kernel-start-message": "Linux version [0-9]",
    "default-shell-prompt": "lava-test: # ",
    "spawn_maxread": "4092",
    "failure_retry": 1,
    "boot_retry": None,
}


def device_file(ctx: dict[str, Any], hostname: str) -> dict[str, Any]:
    """A device file for ``lava-run`` on this machine: what lava-server renders from
    qemu.jinja2 for ``ctx``, reduced to what a tmpfs deploy and a qemu boot read."""
    return {
        "hostname": hostname,
        "devicetype": "qemu",
        "available_architectures": sorted(set(LAVA_ARCH.values())),
        "constants": _CONSTANTS,
        "actions": {
            "deploy": {"connections": {"serial": None}, "methods": {"image": {"parameters": {}}}},
            "boot": {"connections": {"serial": None},
                     "methods": {"qemu": {"parameters": boot_parameters(ctx)}}},
        },
        "timeouts": {"actions": {}, "connections": {}},
    }


# lava-run computes an NFS server address even for tmpfs jobs and fails without a
# default route unless the dispatcher file names one.
DISPATCHER_FILE: dict[str, Any] = {"dispatcher_ip": "127.0.0.1"}
