"""Making a LAVA job: the user's input checked, then the kernel, the guest payload, the
initramfs and the job definition written into one directory (``kcross lava job``).

Everything that can be refused is refused before anything is downloaded or built (as
``kcross lab`` does): the arch, the options together, the directory (created and written
to), the source tree and the suites and benchmarks its harness has, the kernel file, the
programs this host lacks.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kcross import outfile
from kcross.errors import LabError, UserError, clipped
from kcross.lab.initramfs import build_initramfs, new_token
from kcross.lab.kernel import Kernel
from kcross.lab.machines import DEFAULT_SUITES, Guest, arch
from kcross.lab.payload import GUEST_HARNESS
from kcross.lab.session import UNIT, harness_argv, lab_group
from kcross.lava import job as lava_job
from kcross.lava import qemu

if TYPE_CHECKING:
    from rich.console import Console

QEMU = "qemu"
DEVICE_TYPE_NAME = re.compile(r"^[A-Za-z0-9][-_A-Za-z0-9.]*$")
# A board's kernel image type for LAVA's tftp deploy, per arch.
BOARD_KERNEL_TYPE = {"aarch64": "image", "x86_64": "bzimage", "ppc64le": "image"}
JOB_FILE, DEVICE_FILE, DISPATCHER_FILE = "job.yaml", "device.yaml", "dispatcher.yaml"
TEST_SHELL_FILE = "kcross-test-shell.yaml"
URL_SCHEMES = ("http", "https", "file")
TIMING_UNIT = "ns/op"


@dataclass
class Made:
    """What ``kcross lava job`` wrote."""

    directory: Path
    job: Path
    files: list[Path] = field(default_factory=list)
    device: Path | None = None
    dispatcher: Path | None = None
    test_shell: Path | None = None
    cases: list[str] = field(default_factory=list)   # the plan's benchmarks (suite/name)


def _check_url(url: str, what: str) -> str:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in URL_SCHEMES or not (parsed.netloc or parsed.path):
        raise UserError(f"{what} {url!r}: give an http://, https:// or file:// URL")
    return url


def _check_options(args: argparse.Namespace) -> None:
    if args.kernel and args.kernel_url:
        raise UserError("--kernel and --kernel-url name the kernel twice: give one")
    if not DEVICE_TYPE_NAME.match(args.device_type):
        raise UserError(f"--device-type {args.device_type!r}: a LAVA device type name "
                        "(letters, digits, '-', '_', '.')")
    board = args.device_type != QEMU
    if board and (args.cpu or args.machine_opt):
        raise UserError(f"--cpu and --machine-opt set QEMU's machine: not for the board "
                        f"device type {args.device_type}")
    if board and args.old_lava:
        raise UserError("--old-lava is for the qemu device type's context")
    if not board and (args.dtb_url or args.console):
        raise UserError("--dtb-url and --console are for a board (--device-type): the "
                        "qemu device type's are the lab's")
    if any(c in args.append for c in "\"'\\"):
        raise UserError("--append: quotes and backslashes cannot pass through LAVA's "
                        "-append argument; give plain words")
    if args.suite is not None and not all(args.suite.split(",")):
        raise UserError(f"--suite {args.suite!r}: give suite names separated by commas")
    if not 1 <= args.timeout <= 24 * 60:
        raise UserError(f"--timeout {args.timeout}: minutes from 1 to 1440")
    if args.kernel_url:
        _check_url(args.kernel_url, "--kernel-url")
    if args.image_url_base:
        _check_url(args.image_url_base, "--image-url-base")
    if args.dtb_url:
        _check_url(args.dtb_url, "--dtb-url")


def _check_directory(out: Path) -> Path:
    """``out`` created if need be and written to (a file made and removed)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".kcross-lava-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"-o {clipped(str(out))}: cannot write there: "
                        f"{e.strerror or e}") from None
    return out.resolve()


def _check_names(args: argparse.Namespace, src: Path) -> tuple[str, ...]:
    """The suites (default: the lab's) and --bench, as the guest harness of ``src`` has them."""
    from kcross.lab.payload import benchmarks_named, harness_suites

    suites = tuple(args.suite.split(",")) if args.suite else DEFAULT_SUITES
    known = harness_suites(src)
    if known is not None:
        for name in suites:
            if name not in known:
                raise UserError(f"--suite {args.suite}: no suite {name!r} (suites: "
                                f"{', '.join(known)})")
    if args.bench and benchmarks_named(args.bench, args.arch, src, suites) == []:
        raise UserError(f"--bench {args.bench}: no such benchmark in {args.arch}'s suites "
                        f"{', '.join(suites)} (kcross list names them)")
    return suites


def _check_programs(arch_name: str, fetching: bool) -> None:
    from kcross.lab import kernel as debian
    from kcross.lab.payload import missing_tools, needs

    missing = missing_tools(arch_name) + (debian.missing_tools() if fetching else [])
    if missing:
        raise LabError(f"kcross lava job {arch_name} needs {needs(missing)}")


def _download(url: str, to: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(to, "wb") as f:
            shutil.copyfileobj(response, f)
    except (OSError, urllib.error.URLError, ValueError) as e:
        raise LabError(f"--kernel-url {url}: cannot download it: "
                       f"{getattr(e, 'reason', None) or e}") from None


def emulator_package(guest: Guest) -> str | None:
    """This host's Debian version of the arch's QEMU package, as LAVA logs a worker's."""
    dpkg = shutil.which("dpkg-query")
    if dpkg is None:
        return None
    try:
        out = subprocess.run([dpkg, "-W", "-f", "${Version}", guest.arch.qemu_package],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _url(base: str | None, path: Path) -> str:
    if base:
        return base.rstrip("/") + "/" + urllib.parse.quote(path.name)
    return path.as_uri()


def _write_yaml(path: Path, data: Any, header: str) -> None:
    import yaml

    class Dumper(yaml.SafeDumper):
        """Multi-line strings (a test shell's steps) as literal blocks."""

    def text_block(dumper: yaml.SafeDumper, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text_block)
    text = header + yaml.dump(data, Dumper=Dumper, sort_keys=False, default_flow_style=False,
                              width=1000, allow_unicode=True)
    outfile.write(path, text, "kcross lava job")   # whole or not at all


def _copy(src: Path, dest: Path) -> None:
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {dest}: {e.strerror or e}") from None


def make(args: argparse.Namespace, err: Console) -> Made:
    """``kcross lava job``: check, fetch or download the kernel, build, write."""
    from kcross.lab.jobs import resolve_kernel
    from kcross.lab.kernel import cached, fetch
    from kcross.lab.payload import benchmarks_named, build_payload, source_tree
    from kcross.views.lines import say as say_line

    def say(line: str) -> None:
        say_line(err, f"kcross lava: {line}")

    a = arch(args.arch)
    _check_options(args)
    board = args.device_type != QEMU
    guest = Guest(a, Path("/"), append=args.append, cpu=args.cpu,
                  machine_opts=tuple(args.machine_opt))
    src = source_tree(args.arch, args.source)
    suites = _check_names(args, src)
    own: Kernel | None = None
    if args.kernel:
        own = resolve_kernel(args.arch, args.kernel, refresh=False, err=err)
    fetching = own is None and not args.kernel_url and cached(args.arch) is None
    _check_programs(args.arch, fetching)
    if args.cpu or args.machine_opt:
        if shutil.which(a.qemu):
            from kcross.lab.boot import check_configuration

            check_configuration(guest)
    out = _check_directory(args.output)   # made last: a refused job leaves no directory

    # The kernel: the user's file, the user's URL (downloaded to check it and take its
    # SHA-256, not copied), or Debian's (fetched and cached as kcross lab does).
    kernel_url: str | None = args.kernel_url
    with tempfile.TemporaryDirectory(prefix=".kcross-lava-", dir=out) as tmp:
        if kernel_url:
            say(f"downloading {kernel_url} to check it...")
            fetched = Path(tmp) / "kernel"
            _download(kernel_url, fetched)
            try:
                kernel = Kernel.from_file(fetched, args.arch)
            except UserError as exc:
                raise UserError(f"--kernel-url {kernel_url}: "
                                f"{str(exc).replace(str(fetched), 'the file')}") from None
        else:
            kernel = own or fetch(args.arch, say=say)
        guest = Guest(a, kernel.path, append=args.append, cpu=args.cpu,
                      machine_opts=tuple(args.machine_opt))
        group = None if board else lab_group(guest, kernel, None)
        kernel_file: Path | None = None
        if not kernel_url:
            kernel_file = out / kernel.path.name
            _copy(kernel.path, kernel_file)
            kernel_url = _url(args.image_url_base, kernel_file)
        if group is not None:
            group["kernel"]["path"] = kernel_url
    say(f"building kcross for {args.arch} (static)...")
    payload = build_payload(args.arch, source=src)

    unit = TIMING_UNIT if board else UNIT
    if board:
        harness = [GUEST_HARNESS, "run"]
        harness += ["--suite", ",".join(suites)]
        if args.bench:
            harness += ["--bench", args.bench]
        harness += ["--json", "--result-lines", unit]
    else:
        harness = harness_argv(suites=suites, bench=args.bench)   # the lab's, exactly
    note = lava_job.Note(arch=args.arch, device_type=args.device_type, unit=unit,
                         harness=harness, lab=group,
                         emulator_package=None if board else emulator_package(guest))
    token = new_token()
    # Uncompressed, as the lab boots it: unpacking a compressed one moves where the kernel's
    # objects land, and with them the counts of path lookups (open-close, stat-root).
    ramdisk = out / f"kcross-{args.arch}.cpio"
    build_initramfs(payload.init, {GUEST_HARNESS: payload.harness}, [harness], ramdisk,
                    token=token, note=note.text())
    ramdisk_url = _url(args.image_url_base, ramdisk)
    selection = ",".join(suites) + (f" --bench {args.bench}" if args.bench else "")
    what = kernel.package if kernel.source == "debian" else Path(kernel_url).name
    name = (f"kcross {'counting' if not board else 'timing'} {args.arch} "
            f"({what}; {selection})")
    metadata = {"kcross.arch": args.arch, "kcross.unit": unit, "kcross.suites": selection,
                "kcross.kernel": kernel_url}
    made = Made(directory=out, job=out / JOB_FILE,
                files=[f for f in (kernel_file, ramdisk) if f is not None])
    header = ("# Made by 'kcross lava job' (docs/lava.md). Its token is in the monitor's "
              "start and end\n# strings and in the initramfs: see docs/lava.md, "
              "'The token'.\n")
    if board:
        definition = lava_job.board_job(
            name=name, device_type=args.device_type, kernel_url=kernel_url,
            kernel_type=BOARD_KERNEL_TYPE[args.arch], ramdisk_url=ramdisk_url,
            dtb_url=args.dtb_url, console=args.console or a.console, token=token,
            minutes=args.timeout, metadata=metadata, append=" ".join(args.append.split()))
        header += "# A board job (u-boot, tftp): untested by kcross (no board here).\n"
    else:
        ctx = qemu.context(guest, old_lava=args.old_lava)
        definition = lava_job.qemu_job(name=name, ctx=ctx, kernel_url=kernel_url,
                                       kernel_arg=qemu.kernel_image_arg(guest),
                                       ramdisk_url=ramdisk_url, token=token,
                                       minutes=args.timeout, metadata=metadata)
        made.device, made.dispatcher = out / DEVICE_FILE, out / DISPATCHER_FILE
        _write_yaml(made.device, qemu.device_file(ctx, f"kcross-qemu-{args.arch}"),
                    "# A device file for lava-run on this machine: what lava-server's "
                    "qemu.jinja2 renders\n# for the job's context (docs/lava.md).\n")
        _write_yaml(made.dispatcher, qemu.DISPATCHER_FILE,
                    "# lava-run needs a dispatcher address even for tmpfs jobs.\n")
    _write_yaml(made.job, definition, header)
    if args.test_shell:
        from kcross.lava import testshell

        harness_file = out / f"kcross-harness-{args.arch}"
        _copy(payload.harness, harness_file)
        harness_file.chmod(0o755)
        made.test_shell = out / TEST_SHELL_FILE
        _write_yaml(made.test_shell, testshell.definition(
            harness_url=_url(args.image_url_base, harness_file), suites=",".join(suites),
            bench=args.bench),
            "# A Lava-Test-Shell definition for a board that boots a root filesystem "
            "(docs/lava.md):\n# add it to your job's test action; untested on a board "
            "here.\n")
        made.files.append(harness_file)
    made.cases = benchmarks_named(args.bench or "*", args.arch, src, suites) or []
    return made
