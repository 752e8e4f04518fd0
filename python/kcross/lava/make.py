"""Making a LAVA job: the user's input checked, then the kernel, the guest payload, the
initramfs and the job definition written into one directory (``kcross lava job``).

Everything that can be refused is refused before anything is downloaded or built (as
``kcross lab`` does): the arch, the options together, the directory (created and written
to), the source tree and the suites and benchmarks its harness has, the kernel file, the
programs this host lacks.
"""

from __future__ import annotations

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
from kcross.lab.initramfs import build_initramfs, new_token, plan_command
from kcross.lab.kernel import Kernel
from kcross.lab.machines import Guest, arch
from kcross.lab.payload import GUEST_HARNESS, Payload
from kcross.lab.request import GuestOptions
from kcross.lab.session import UNIT, harness_argv, lab_group
from kcross.lava import job as lava_job
from kcross.lava import qemu
from kcross.views.lines import say as say_line

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.console import Console

QEMU = "qemu"
DEVICE_TYPE_NAME = re.compile(r"^[A-Za-z0-9][-_A-Za-z0-9.]*$")
# A board's kernel image type for LAVA's tftp deploy, per arch.
BOARD_KERNEL_TYPE = {"aarch64": "image", "x86_64": "bzimage", "ppc64le": "image"}
JOB_FILE, DEVICE_FILE, DISPATCHER_FILE = "job.yaml", "device.yaml", "dispatcher.yaml"
TEST_SHELL_FILE = "kcross-test-shell.yaml"
URL_SCHEMES = ("http", "https", "file")
TIMING_UNIT = "ns/op"


@dataclass(frozen=True)
class JobRequest:
    """``kcross lava job ARCH -o DIR``: the job to make, as given (kcross.cli.lava builds
    it; :func:`make` checks it before anything is downloaded or built)."""

    arch: str
    output: Path                         # DIR
    device_type: str                     # qemu, or a board's LAVA device type
    timeout: int                         # minutes the test action may take
    guest: GuestOptions = field(default_factory=GuestOptions)
    kernel: Path | None = None           # the user's kernel file (copied into DIR)
    kernel_url: str | None = None        # the user's kernel at a URL (the job points there)
    image_url_base: str | None = None    # where DIR's files are hosted; None: file:// URLs
    old_lava: bool = False               # a LAVA before 2025.02: no no_network context
    lava_version: str | None = None      # the LAVA the job is for (sets old_lava)
    console: str | None = None           # a board's console device
    dtb_url: str | None = None           # a board's device tree blob
    test_shell: bool = False             # also a Lava-Test-Shell definition
    source: Path | None = None           # the kcross tree the guest programs are built from
    release: str | None = None           # Debian's kernel of this release; None: the default

    @property
    def for_old_lava(self) -> bool:
        """A job for a LAVA before 2025.02 (--old-lava, or --lava-version's release)."""
        return self.old_lava or (self.lava_version is not None
                                 and not qemu.takes_no_network(self.lava_version))

    @property
    def board(self) -> bool:
        """A board's device type (a U-Boot TFTP ramdisk job, timing mode), not QEMU's."""
        return self.device_type != QEMU


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
    target: str | None = None       # which LAVA the job is for (kcross.lava.qemu.target)


def _check_url(url: str, what: str) -> str:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in URL_SCHEMES or not (parsed.netloc or parsed.path):
        raise UserError(f"{what} {url!r}: give an http://, https:// or file:// URL")
    return url


def _check_options(request: JobRequest) -> None:
    options = request.guest
    if request.kernel and request.kernel_url:
        raise UserError("--kernel and --kernel-url name the kernel twice: give one")
    if request.release is not None:
        if request.kernel or request.kernel_url:
            given = "--kernel" if request.kernel else "--kernel-url"
            raise UserError(f"--release {request.release} boots Debian's kernel: not with "
                            f"{given} (which boots yours)")
        from kcross.lab.kernel import release_of

        release_of(request.release, request.arch)   # known, and the arch has it
    if not DEVICE_TYPE_NAME.match(request.device_type):
        raise UserError(f"--device-type {request.device_type!r}: a LAVA device type name "
                        "(letters, digits, '-', '_', '.')")
    if request.board and (options.cpu or options.machine_opts):
        raise UserError(f"--cpu and --machine-opt set QEMU's machine: not for the board "
                        f"device type {request.device_type}")
    if request.lava_version is not None:
        qemu.lava_release(request.lava_version)
        if request.old_lava and qemu.takes_no_network(request.lava_version):
            raise UserError(f"--old-lava is for a LAVA before 2025.02, --lava-version "
                            f"{request.lava_version} is not: give one")
    if request.board and (request.old_lava or request.lava_version):
        raise UserError("--old-lava and --lava-version are for the qemu device type's "
                        "context")
    if not request.board and (request.dtb_url or request.console):
        raise UserError("--dtb-url and --console are for a board (--device-type): the "
                        "qemu device type's are the lab's")
    if any(c in options.append for c in "\"'\\"):
        raise UserError("--append: quotes and backslashes cannot pass through LAVA's "
                        "-append argument; give plain words")
    options.check_suite()
    options.settings()
    if not 1 <= request.timeout <= 24 * 60:
        raise UserError(f"--timeout {request.timeout}: minutes from 1 to 1440")
    if request.kernel_url:
        _check_url(request.kernel_url, "--kernel-url")
    if request.image_url_base:
        _check_url(request.image_url_base, "--image-url-base")
    if request.dtb_url:
        _check_url(request.dtb_url, "--dtb-url")


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


def _check_names(request: JobRequest, src: Path) -> tuple[str, ...]:
    """The suites (default: the lab's), --bench and --env's settings, as the guest harness
    of ``src`` has them."""
    from kcross.lab.payload import check_bench, check_suites

    options = request.guest
    options.check_env(request.arch, src)
    suites = options.suites()
    check_suites(options.suite or "", suites, src)
    if options.bench:
        check_bench(options.bench, request.arch, src, suites)
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
    try:
        with outfile.replaced(dest) as tmp:
            shutil.copyfile(src, tmp)
    except OSError as e:
        raise UserError(f"cannot write {dest}: {e.strerror or e}") from None


@dataclass(frozen=True)
class _Checked:
    """What the checks found: the source tree, the suites, the user's kernel file if any,
    the directory to write."""

    src: Path
    suites: tuple[str, ...]
    own: Kernel | None
    out: Path


@dataclass(frozen=True)
class _JobKernel:
    """The job's kernel: the kernel, the URL the job boots it from, the file written into
    the directory (None: the user's URL), the guest booting it, and the lab's record of the
    boot (``fingerprint.lab``; None for a board)."""

    kernel: Kernel
    url: str
    file: Path | None
    guest: Guest
    group: dict[str, Any] | None


def _check(request: JobRequest, err: Console) -> _Checked:
    """Everything that can be refused, before anything is downloaded or built: the arch,
    the options together, the source tree and the names its harness has, the kernel file,
    the programs this host lacks, QEMU's verdict on --cpu and --machine-opt, the directory
    (made last: a refused job leaves no directory)."""
    from kcross.lab.boots import resolve_kernel
    from kcross.lab.kernel import cached
    from kcross.lab.payload import source_tree

    a = arch(request.arch)
    _check_options(request)
    probe = request.guest.guest_of(request.arch, Path("/"))
    src = source_tree(request.arch, request.source)
    suites = _check_names(request, src)
    own = resolve_kernel(request.arch, request.kernel, refresh=False, err=err) \
        if request.kernel else None
    fetching = own is None and not request.kernel_url and \
        cached(request.arch, release=request.release) is None
    _check_programs(request.arch, fetching)
    if (request.guest.cpu or request.guest.machine_opts) and shutil.which(a.qemu):
        from kcross.lab.boot import check_configuration

        check_configuration(probe)
    return _Checked(src=src, suites=suites, own=own, out=_check_directory(request.output))


def _kernel(request: JobRequest, checked: _Checked, say: Callable[[str], None]) -> _JobKernel:
    """The kernel: the user's file (copied into the directory), the user's URL (downloaded
    to check it and take its SHA-256, not copied), or Debian's (fetched and cached as
    kcross lab does, copied)."""
    from kcross.lab.kernel import fetch

    url = request.kernel_url
    with tempfile.TemporaryDirectory(prefix=".kcross-lava-", dir=checked.out) as tmp:
        if url:
            say(f"downloading {url} to check it...")
            fetched = Path(tmp) / "kernel"
            _download(url, fetched)
            try:
                kernel = Kernel.from_file(fetched, request.arch)
            except UserError as exc:
                raise UserError(f"--kernel-url {url}: "
                                f"{str(exc).replace(str(fetched), 'the file')}") from None
        else:
            kernel = checked.own or fetch(request.arch, release=request.release, say=say)
        guest = request.guest.guest_of(request.arch, kernel.path)
        file: Path | None = None
        if not url:
            file = checked.out / kernel.path.name
            _copy(kernel.path, file)
            url = _url(request.image_url_base, file)
        # the kernel where LAVA fetches it
        group = None if request.board else lab_group(guest, kernel, None, kernel_path=url)
    return _JobKernel(kernel=kernel, url=url, file=file, guest=guest, group=group)


def _harness(request: JobRequest, suites: Sequence[str]) -> tuple[list[str], str]:
    """The guest harness's plan command (--env's settings first, as the lab's) and the unit
    of its figures: on QEMU the lab's counting plan exactly (instructions), on a board a
    timing run."""
    env = request.guest.environment()
    if not request.board:
        return plan_command(harness_argv(suites=suites, bench=request.guest.bench),
                            env=env), UNIT
    harness = [GUEST_HARNESS, "run", "--suite", ",".join(suites)]
    if request.guest.bench:
        harness += ["--bench", request.guest.bench]
    return plan_command(harness + ["--json", "--result-lines", TIMING_UNIT], env=env), \
        TIMING_UNIT


def _ramdisk(request: JobRequest, out: Path, payload: Payload, harness: list[str], unit: str,
             booted: _JobKernel) -> tuple[Path, str]:
    """The initramfs (the lab's /init, the static harness, its plan and the note) written
    into ``out``, and its token."""
    note = lava_job.Note(arch=request.arch, device_type=request.device_type, unit=unit,
                         harness=harness, lab=booted.group,
                         emulator_package=None if request.board else
                         emulator_package(booted.guest))
    token = new_token()
    # Uncompressed, as the lab boots it: unpacking a compressed one moves where the kernel's
    # objects land, and with them the counts of path lookups (open-close, stat-root).
    ramdisk = out / f"kcross-{request.arch}.cpio"
    build_initramfs(payload.init, {GUEST_HARNESS: payload.harness}, [harness], ramdisk,
                    token=token, note=note.text())
    return ramdisk, token


def _write_job(request: JobRequest, made: Made, booted: _JobKernel, ramdisk: Path,
               token: str, unit: str, suites: Sequence[str]) -> None:
    """The job definition (and for QEMU the device and dispatcher files lava-run needs)."""
    selection = ",".join(suites) + (f" --bench {request.guest.bench}"
                                    if request.guest.bench else "")
    what = booted.kernel.package if booted.kernel.source == "debian" \
        else Path(booted.url).name
    name = (f"kcross {'counting' if not request.board else 'timing'} {request.arch} "
            f"({what}; {selection})")
    metadata = {"kcross.arch": request.arch, "kcross.unit": unit, "kcross.suites": selection,
                "kcross.kernel": booted.url}
    ramdisk_url = _url(request.image_url_base, ramdisk)
    header = ("# Made by 'kcross lava job' (docs/lava.md). Its token is in the monitor's "
              "start and end\n# strings and in the initramfs: see docs/lava.md, "
              "'The token'.\n")
    if request.board:
        definition = lava_job.board_job(
            name=name, device_type=request.device_type, kernel_url=booted.url,
            kernel_type=BOARD_KERNEL_TYPE[request.arch], ramdisk_url=ramdisk_url,
            dtb_url=request.dtb_url, console=request.console or booted.guest.arch.console,
            token=token, minutes=request.timeout, metadata=metadata,
            append=" ".join(request.guest.append.split()))
        header += "# A board job (u-boot, tftp): untested by kcross (no board here).\n"
    else:
        ctx = qemu.context(booted.guest, old_lava=request.for_old_lava)
        header += f"# A job {qemu.target(request.for_old_lava)}.\n"
        definition = lava_job.qemu_job(name=name, ctx=ctx, kernel_url=booted.url,
                                       kernel_arg=qemu.kernel_image_arg(booted.guest),
                                       ramdisk_url=ramdisk_url, token=token,
                                       minutes=request.timeout, metadata=metadata)
        made.device, made.dispatcher = made.directory / DEVICE_FILE, made.directory / DISPATCHER_FILE
        _write_yaml(made.device, qemu.device_file(ctx, f"kcross-qemu-{request.arch}"),
                    "# A device file for lava-run on this machine: what lava-server's "
                    "qemu.jinja2 renders\n# for the job's context (docs/lava.md).\n")
        _write_yaml(made.dispatcher, qemu.DISPATCHER_FILE,
                    "# lava-run needs a dispatcher address even for tmpfs jobs.\n")
    _write_yaml(made.job, definition, header)


def _write_test_shell(request: JobRequest, made: Made, payload: Payload,
                      suites: Sequence[str]) -> None:
    """--test-shell: the Lava-Test-Shell definition and the static harness it downloads."""
    from kcross.lava import testshell

    harness_file = made.directory / f"kcross-harness-{request.arch}"
    _copy(payload.harness, harness_file)
    harness_file.chmod(0o755)
    made.test_shell = made.directory / TEST_SHELL_FILE
    _write_yaml(made.test_shell, testshell.definition(
        harness_url=_url(request.image_url_base, harness_file), suites=",".join(suites),
        bench=request.guest.bench, env=request.guest.settings()),
        "# A Lava-Test-Shell definition for a board that boots a root filesystem "
        "(docs/lava.md):\n# add it to your job's test action; untested on a board "
        "here.\n")
    made.files.append(harness_file)


def make(request: JobRequest, err: Console) -> Made:
    """``kcross lava job``: check, fetch or download the kernel, build, write."""
    from kcross.lab.payload import benchmarks_named, build_payload

    def say(line: str) -> None:
        say_line(err, f"kcross lava: {line}")

    checked = _check(request, err)
    booted = _kernel(request, checked, say)
    say(f"building kcross for {request.arch} (static)...")
    payload = build_payload(request.arch, source=checked.src)
    harness, unit = _harness(request, checked.suites)
    ramdisk, token = _ramdisk(request, checked.out, payload, harness, unit, booted)
    made = Made(directory=checked.out, job=checked.out / JOB_FILE,
                files=[f for f in (booted.file, ramdisk) if f is not None])
    _write_job(request, made, booted, ramdisk, token, unit, checked.suites)
    if not request.board:
        made.target = qemu.target(request.for_old_lava)
    if request.test_shell:
        _write_test_shell(request, made, payload, checked.suites)
    made.cases = benchmarks_named(request.guest.bench or "*", request.arch, checked.src,
                                  checked.suites) or []
    return made
