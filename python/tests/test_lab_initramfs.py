"""The lab guest's payload (issue 8): the initramfs builder, the console parser, and a real boot.

The boot tests run lab/init.c as PID 1 of a real kernel under qemu-system-ARCH, on the
lab's own machines (kcross.lab.machines); each needs what tests/labs.py names (the kernel
in $KCROSS_TEST_LAB_KERNEL_<ARCH>, the qemu-system program, the cross compiler) and skips
naming whichever is missing.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
from conftest import HANG
from kcross.errors import UserError
from kcross.lab import machines
from kcross.lab.boot import boot
from kcross.lab.initramfs import (
    ConsoleError,
    ConsoleReader,
    build_initramfs,
    initramfs_bytes,
    new_token,
    parse_console,
    plan_command,
)
from kcross.lab.machines import Guest
from labs import lab_prerequisites

REPO = Path(__file__).resolve().parents[2]
INIT_C = REPO / "lab" / "init.c"
TOKEN = "0123456789abcdef"


def read_newc(data: bytes) -> list[dict]:
    """Every member of a newc archive, the trailer included (an independent reader)."""
    keys = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize",
            "devmajor", "devminor", "rdevmajor", "rdevminor", "namesize", "check")
    members, at = [], 0
    while True:
        assert data[at:at + 6] == b"070701", f"bad magic at {at}"
        head = {k: int(data[at + 6 + 8 * i: at + 14 + 8 * i], 16) for i, k in enumerate(keys)}
        name_at = at + 110
        name = data[name_at:name_at + head["namesize"]]
        assert name.endswith(b"\0")
        at = name_at + head["namesize"]
        at += -at % 4
        body = data[at:at + head["filesize"]]
        at += head["filesize"]
        at += -at % 4
        members.append({**head, "name": name[:-1].decode(), "data": body})
        if name == b"TRAILER!!!\0":
            assert at == len(data), "bytes after the trailer"
            return members


@pytest.fixture
def payload(tmp_path: Path) -> dict:
    init = tmp_path / "init-bin"
    init.write_bytes(b"\x7fELF pretend init")
    init.chmod(0o700)
    tool = tmp_path / "tool"
    tool.write_bytes(b"tool body, 19 bytes")
    tool.chmod(0o750)
    conf = tmp_path / "conf"
    conf.write_text("x=1\n")
    conf.chmod(0o600)
    return {
        "init": init,
        "files": {"/bin/tool": tool, "/etc/kcross/conf": conf, "/lab/data.json": b"{}",
                  "/bin/setuid": (b"#", 0o4711)},
        "plan": [["/bin/tool", "a", "b"],
                 plan_command(["/bin/tool", "--json"], env={"KCROSS_SYSCALL": "sc"}, timeout=30)],
    }


def test_two_builds_are_identical(tmp_path: Path, payload: dict) -> None:
    one, two = tmp_path / "one.cpio", tmp_path / "two.cpio"
    build_initramfs(payload["init"], payload["files"], payload["plan"], one, token=TOKEN)
    # Same content, other times, modes and insertion order: the same bytes.
    for f in (payload["init"], payload["files"]["/bin/tool"]):
        os.utime(f, (12345, 67890))
        f.chmod(0o777)
    files = dict(reversed(list(payload["files"].items())))
    build_initramfs(payload["init"], files, payload["plan"], two, token=TOKEN)
    assert one.read_bytes() == two.read_bytes()

    gz1, gz2 = tmp_path / "one.cpio.gz", tmp_path / "two.cpio.gz"
    build_initramfs(payload["init"], payload["files"], payload["plan"], gz1, token=TOKEN,
                    compress=True)
    build_initramfs(payload["init"], files, payload["plan"], gz2, token=TOKEN, compress=True)
    assert gz1.read_bytes() == gz2.read_bytes()
    assert gzip.decompress(gz1.read_bytes()) == one.read_bytes()


def test_archive_lists_entries_with_modes(payload: dict) -> None:
    data = initramfs_bytes(payload["init"], payload["files"], payload["plan"], TOKEN)
    members = read_newc(data)
    *entries, trailer = members
    assert trailer["name"] == "TRAILER!!!" and trailer["nlink"] == 1
    listing = {m["name"]: (stat.S_IFMT(m["mode"]), m["mode"] & 0o7777, m["nlink"]) for m in entries}
    assert listing == {
        "bin": (stat.S_IFDIR, 0o755, 2),
        "bin/setuid": (stat.S_IFREG, 0o4711, 1),
        "bin/tool": (stat.S_IFREG, 0o755, 1),
        "etc": (stat.S_IFDIR, 0o755, 3),
        "etc/kcross": (stat.S_IFDIR, 0o755, 2),
        "etc/kcross/conf": (stat.S_IFREG, 0o644, 1),
        "init": (stat.S_IFREG, 0o755, 1),
        "lab": (stat.S_IFDIR, 0o755, 2),
        "lab/data.json": (stat.S_IFREG, 0o644, 1),
        "lab/note": (stat.S_IFREG, 0o644, 1),
        "lab/plan": (stat.S_IFREG, 0o644, 1),
        "lab/token": (stat.S_IFREG, 0o600, 1),
    }
    names = [m["name"] for m in entries]
    assert names == sorted(names, key=lambda n: n.split("/"))
    assert [m["ino"] for m in entries] == list(range(1, len(entries) + 1))
    assert all(m["mtime"] == 0 and m["uid"] == 0 and m["gid"] == 0 for m in members)
    body = {m["name"]: m["data"] for m in entries}
    assert body["init"] == b"\x7fELF pretend init"
    assert body["bin/tool"] == b"tool body, 19 bytes"
    assert body["lab/plan"] == (b"/bin/tool a b\n"
                                b"timeout=30 KCROSS_SYSCALL=sc /bin/tool --json\n")
    assert body["lab/token"] == TOKEN.encode()


def test_gnu_cpio_reads_the_archive(payload: dict) -> None:
    """A second, independent reader: GNU cpio lists the same entries in the same order."""
    cpio = shutil.which("cpio")
    if cpio is None:
        pytest.skip("no cpio to cross-check the archive with (apt-get install cpio)")
    data = initramfs_bytes(payload["init"], payload["files"], payload["plan"], TOKEN)
    names = [m["name"] for m in read_newc(data)[:-1]]
    proc = subprocess.run([cpio, "-t", "--quiet"], input=data, capture_output=True, check=True)
    assert proc.stdout.decode().split() == names


@pytest.mark.parametrize("files, plan, message", [
    ({"bin/x": b""}, [], "not a normalized absolute guest path"),
    ({"/bin/../x": b""}, [], "not a normalized absolute guest path"),
    ({"/init": b""}, [], "/init's own"),
    ({"/proc/x": b""}, [], "would be hidden"),
    ({"/bin": b"", "/bin/x": b""}, [], "both a file and a directory"),
    ({"/x": (b"", 0o10755)}, [], "not permission bits"),
    ({"/x": Path("/nonexistent/kcross")}, [], "cannot read"),
    ({}, ["/bin/tool a"], "not the string"),
    ({}, [["/bin/tool", "a b"]], "holds whitespace"),
    ({}, [["/bin/tool", ""]], "holds whitespace"),
    ({}, [["tool"]], "not an absolute path"),
    ({}, [["A=1"]], "no program"),
    ({}, [["timeout=-1", "/bin/tool"]], "not a positive number"),
    ({}, [["/bin/tool"] + ["x"] * 200], "at most 128"),
])
def test_bad_input_is_one_line(payload: dict, files: dict, plan: list, message: str) -> None:
    with pytest.raises(UserError, match=message) as caught:
        initramfs_bytes(payload["init"], files, plan, TOKEN)
    assert "\n" not in str(caught.value)


KERNEL = "[    1.234567] random: crng init done\r\n"


def test_console_with_interleaved_kernel_lines() -> None:
    console = (
        "SLOF or VOF noise\r\n"
        "[    0.000000] Linux version 6.1.0-50-powerpc64le\r\n"
        "@@kcross-lab 0123456789abcdef start commands=4 uptime=5.83\r\n"
        "@@kcross-lab 0123456789abcdef begin 1 /bin/hello a b\r\n"
        "hello a b\r\n" + KERNEL + "second line\r\n"
        "@@kcross-lab 0123456789abcdef end 1 status=0\r\n"
        "between commands: not anyone's output\r\n"
        "@@kcross-lab 0123456789abcdef begin 2 KCROSS_SYSCALL=sc /bin/crash\r\n"
        "about to crash\r\n"
        "@@kcross-lab 0123456789abcdef end 2 status=SIGSEGV\r\n"
        "@@kcross-lab 0123456789abcdef begin 3 timeout=1 /bin/sleepy\r\n"
        "no newline at the end@@kcross-lab 0123456789abcdef end 3 status=timeout\r\n"
        "@@kcross-lab 0123456789abcdef begin 4 /bin/missing\r\n"
        "kcross-lab-init: /bin/missing: No such file or directory\r\n"
        "<6>[    2.000000] another kernel line\r\n"
        "@@kcross-lab 0123456789abcdef end 4 status=127\r\n"
        "@@kcross-lab 0123456789abcdef done\r\n"
        "[    3.000000] reboot: Power down\r\n"
    )
    one, two, three, four = parse_console(console, TOKEN)
    assert (one.number, one.command, one.status, one.output) == \
        (1, "/bin/hello a b", "0", ["hello a b", "second line"])
    assert one.ok and one.exit_code == 0 and one.signal is None and not one.timed_out
    assert two.command == "KCROSS_SYSCALL=sc /bin/crash"
    assert two.signal == "SIGSEGV" and two.exit_code is None and not two.ok
    assert two.output == ["about to crash"]
    assert three.timed_out and three.output == ["no newline at the end"]
    assert four.exit_code == 127
    assert four.output == ["kcross-lab-init: /bin/missing: No such file or directory"]


def test_console_without_done_names_the_last_lines() -> None:
    console = ("@@kcross-lab 0123456789abcdef start commands=1 uptime=5.8\n"
               "@@kcross-lab 0123456789abcdef begin 1 /bin/kcross-harness run\n"
               "partial output\n"
               "[    9.100000] Kernel panic - not syncing: Attempted to kill init!\n"
               "[    9.100001] CPU: 0 PID: 1 Comm: init\n")
    with pytest.raises(ConsoleError) as caught:
        parse_console(console, TOKEN)
    message = str(caught.value)
    assert "\n" not in message
    assert "no '@@kcross-lab done'" in message
    assert "command 1 (/bin/kcross-harness run) was running" in message
    assert message.endswith("partial output | [    9.100000] Kernel panic - not syncing: "
                            "Attempted to kill init! | [    9.100001] CPU: 0 PID: 1 Comm: init")


MARK = f"@@kcross-lab {TOKEN}"


@pytest.mark.parametrize("console, message", [
    ("", "the console is empty"),
    (f"{MARK} error open /lab/plan: No such file or directory\n",
     "/init failed: open /lab/plan: No such file or directory"),
    (f"{MARK} begin 2 /x\n", "command 1 next"),
    (f"{MARK} begin 1 /x\n{MARK} begin 2 /y\n", "'begin' while command 1 \\(/x\\)"),
    (f"{MARK} begin 1 /x\n{MARK} end 2 status=0\n", "unexpected marker"),
    (f"{MARK} begin 1 /x\n{MARK} end 1 status=banana\n", "unexpected marker"),
    (f"{MARK} begin 1 /x\n{MARK} done\n", "'done' while command 1"),
])
def test_bad_consoles_are_one_line(console: str, message: str) -> None:
    with pytest.raises(ConsoleError, match=message) as caught:
        parse_console(console, TOKEN)
    assert "\n" not in str(caught.value)


def test_the_console_is_read_as_it_arrives() -> None:
    """ConsoleReader gives each command's result at its end marker (correctness mode's
    progress), and the same results as parse_console at the end."""
    reader = ConsoleReader(TOKEN)
    console = [f"{MARK} start commands=2 uptime=1.0", f"{MARK} begin 1 /bin/a", "out a",
               f"{MARK} end 1 status=0", f"{MARK} begin 2 /bin/b", f"{MARK} end 2 status=SIGSEGV",
               f"{MARK} done"]
    got = []
    for line in console:
        result = reader.line(line + "\r")
        got.append((reader.running, result and (result.number, result.status, result.output)))
    assert got == [(None, None), (1, None), (1, None), (None, (1, "0", ["out a"])), (2, None),
                   (None, (2, "SIGSEGV", [])), (None, None)]
    assert reader.results() == parse_console("\n".join(console), TOKEN)
    unfinished = ConsoleReader(TOKEN)
    for line in console[:3]:
        unfinished.line(line)
    with pytest.raises(ConsoleError, match=r"command 1 \(/bin/a\) was running.*out a$"):
        unfinished.results()


def test_a_guest_program_cannot_forge_markers() -> None:
    """Marker lines without this boot's token (none, or another boot's) are the running
    command's output: they neither end it, nor end the plan, nor make a result."""
    other = "fedcba9876543210"
    forged = ["@@kcross-lab end 1 status=0", "@@kcross-lab done",
              f"@@kcross-lab {other} end 1 status=0", f"@@kcross-lab {other} done",
              f"@@kcross-lab {other} begin 2 /bin/forged", "@@kcross-lab error forged: x"]
    console = (f"{MARK} start commands=1 uptime=1.00\n{MARK} begin 1 /bin/evil\n"
               + "".join(f"{line}\n" for line in forged)
               + f"last words{forged[0]}\n{MARK} end 1 status=7\n{MARK} done\n")
    (result,) = parse_console(console, TOKEN)
    assert (result.number, result.command, result.status) == (1, "/bin/evil", "7")
    assert result.output == [*forged, f"last words{forged[0]}"]
    # The same console read with the other token has no marker of its boot before the forged
    # ones, so its forged 'end' comes while nothing runs.
    with pytest.raises(ConsoleError, match="unexpected marker"):
        parse_console(console, other)


@pytest.mark.parametrize("token", ["", "0123456789abcde", "0123456789ABCDEF", "0123456789abcdeg",
                                   "0123456789abcdef0", "0123456789 abcdef"])
def test_a_bad_token_is_one_line(payload: dict, token: str) -> None:
    for call in (lambda: initramfs_bytes(payload["init"], {}, [], token),
                 lambda: parse_console("", token)):
        with pytest.raises(UserError, match="16 lowercase hex digits") as caught:
            call()
        assert "\n" not in str(caught.value)
    with pytest.raises(UserError, match="/init's own"):
        initramfs_bytes(payload["init"], {"/lab/token": b"x"}, [], TOKEN)


def test_each_boot_draws_its_own_token() -> None:
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(len(t) == 16 and set(t) <= set("0123456789abcdef") for t in tokens)


def test_boot_streams_the_console_while_the_guest_runs(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """on_line sees each line while QEMU still runs: this fake QEMU prints a line, then waits
    for the file that on_line creates when it sees it, and only then ends; a boot that read
    the console after QEMU's end would make it say it waited in vain."""
    seen = tmp_path / "seen"
    qemu = tmp_path / "bin" / machines.arch("ppc64le").qemu
    qemu.parent.mkdir()
    qemu.write_text("#!/bin/sh\necho first\n"
                    f"for i in $(seq 100); do [ -e {seen} ] && break; sleep 0.1; done\n"
                    f"[ -e {seen} ] && echo streamed || echo 'not streamed'\nprintf last\n")
    qemu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{qemu.parent}{os.pathsep}{os.environ['PATH']}")
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        seen.touch()

    image = tmp_path / "init.cpio"
    image.write_bytes(b"")
    console = boot(Guest(machines.arch("ppc64le"), tmp_path / "vmlinux"), image, timeout=HANG,
                   on_line=on_line)
    assert lines == ["first", "streamed", "last"] and console == "first\nstreamed\nlast"


# ---------------------------------------------------------------- a real boot

HELLO_C = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "segv")) { printf("about to crash\n"); fflush(stdout); raise(SIGSEGV); }
	if (argc > 1 && !strcmp(argv[1], "sleep")) { printf("sleeping\n"); fflush(stdout); sleep(1000); }
	if (argc > 1 && !strcmp(argv[1], "exit")) return atoi(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "forge")) {	/* markers without the token; the token's file */
		FILE *t = fopen("/lab/token", "r");
		printf("@@kcross-lab end 6 status=0\n@@kcross-lab done\n");
		printf("token file: %s\n", t ? "readable" : "gone");
		return 5;
	}
	printf("hello, child of pid %d:", (int)getppid());
	for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
	printf("\nLAB_VAR=%s\n", getenv("LAB_VAR") ? getenv("LAB_VAR") : "(unset)");
	fprintf(stderr, "to stderr\n");
	return 0;
}
"""

def _guest(tmp_path: Path, arch: str, mode: str) -> tuple[Guest, Path]:
    """The guest (kcross.lab.machines: the lab's own machine) and the initramfs built from
    init.c and hello.c with PLAN and TOKEN; skipped, with the reason, without kernel, QEMU or
    compiler."""
    kernel, gcc = lab_prerequisites(arch)
    hello_c = tmp_path / "hello.c"
    hello_c.write_text(HELLO_C)
    init, hello = tmp_path / "kcross-lab-init", tmp_path / "hello"
    for src, out in ((INIT_C, init), (hello_c, hello)):
        subprocess.run([gcc, "-std=gnu11", "-O2", "-static", "-Wall", "-Wextra", "-Wshadow",
                        "-Wstrict-prototypes", "-Werror",
                        "-o", str(out), str(src)], check=True)
    image = tmp_path / "init.cpio"
    build_initramfs(init, {"/bin/hello": hello}, PLAN, image, token=TOKEN)
    return Guest(machines.arch(arch), kernel, mode=mode), image


PLAN = [
    plan_command(["/bin/hello", "a", "b"], env={"LAB_VAR": "set"}),
    ["/bin/hello", "segv"],
    plan_command(["/bin/hello", "sleep"], timeout=2),
    ["/bin/hello", "exit", "3"],
    ["/bin/missing"],
    ["/bin/hello", "forge"],
]
STATUSES = ["0", "SIGSEGV", "timeout", "3", "127", "5"]


@pytest.mark.parametrize("arch", machines.ARCHES)
def test_boot_real_kernel(tmp_path: Path, arch: str) -> None:
    """Correctness-mode machine (two vCPUs, multi-threaded TCG)."""
    guest, image = _guest(tmp_path, arch, "correctness")
    started = time.monotonic()
    console = boot(guest, image, timeout=HANG)
    print(f"{arch}: booted, ran the plan and powered off in {time.monotonic() - started:.1f} s")
    results = parse_console(console, TOKEN)
    assert [r.status for r in results] == STATUSES, console
    hello_out = results[0].output
    assert hello_out[0] == "hello, child of pid 1: a b"
    assert "LAB_VAR=set" in hello_out and "to stderr" in hello_out
    assert results[1].output == ["about to crash"]
    assert results[2].output == ["sleeping"]
    assert results[4].output == ["kcross-lab-init: /bin/missing: No such file or directory"]
    # A program's forged markers are its output, and /init unlinked the token's file.
    assert results[5].output == ["@@kcross-lab end 6 status=0", "@@kcross-lab done",
                                 "token file: gone"]


@pytest.mark.parametrize("arch", machines.ARCHES)
def test_counting_boots_are_identical(tmp_path: Path, arch: str) -> None:
    """Nothing /init prints may vary between two counting boots: byte-identical consoles."""
    guest, image = _guest(tmp_path, arch, "counting")
    started = time.monotonic()
    first = boot(guest, image, timeout=HANG)
    print(f"{arch}: counting boot in {time.monotonic() - started:.1f} s")
    assert boot(guest, image, timeout=HANG) == first
    assert [r.status for r in parse_console(first, TOKEN)] == STATUSES


def test_every_initramfs_has_a_note_of_one_size(payload: dict) -> None:
    """/lab/note is in every archive, padded to one size whatever it says (a LAVA job's
    description or nothing): boots with different notes unpack the same file system
    (kcross.lava: a file more or less moves the counts of path lookups)."""
    from kcross.lab.initramfs import MAX_NOTE_BYTES, note_bytes

    sizes = set()
    for note in ("", '{"kcross":"lava-job"}', "x" * (MAX_NOTE_BYTES - 1)):
        data = initramfs_bytes(payload["init"], payload["files"], payload["plan"], TOKEN, note)
        member = next(m for m in read_newc(data) if m["name"] == "lab/note")
        sizes.add(member["filesize"])
        assert note_bytes(note).split(b"\n")[0].decode() == note
    assert sizes == {MAX_NOTE_BYTES}
    with pytest.raises(UserError, match="one line"):
        note_bytes("a\nb")
