"""The lab guest's payload: the project cross-built for the guest, and its test list (issue 8).

:func:`build_payload` configures and builds the kcross source tree with
``cmake/toolchain-<arch>.cmake`` (static programs) into a cache dir, incrementally, and
turns CTest's own test list (``ctest --show-only=json-v1``) into :class:`GuestTest`\\ s: the
tests whose command is a program built in the tree (the unit tests, the API examples, the
per-CPU stress tier), each with its arguments, its ENVIRONMENT, its TIMEOUT and the
properties that judge it (SKIP_RETURN_CODE, PASS/FAIL/SKIP_REGULAR_EXPRESSION, WILL_FAIL).
The tests CTest runs through ``cmake -P`` or ``sh`` scripts cannot run in the guest (it has
neither a shell nor cmake): they are listed in :attr:`Payload.excluded` with the reason.

In the guest every program is under ``/lab``: the harness is ``/lab/kcross-harness``, a
test program ``/lab/tests/<its file name>``.

The stress tests run at :data:`STRESS_SCALE` (``-s``) of their CI size: under
multi-threaded TCG with two vCPUs the guest runs them at a few million operations a
minute, and the whole correctness run must stay within a few minutes of host time.

:func:`run_tests` (``correctness.py``) boots the payload and judges each test's outcome.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kcross.errors import LabError, UserError, did_you_mean
from kcross.lab.initramfs import plan_command
from kcross.lab.kernel import ARCHES, cache_root
from kcross.lab.machines import arch as lab_arch
from kcross.series import benchmark_hint, matches

GUEST_DIR = "/lab"
GUEST_HARNESS = "/lab/kcross-harness"
GUEST_TESTS = "/lab/tests"
# The stress tier's size in the guest, as a fraction of its CI size (10^7 operations per
# mode; the qemu-user cross tier runs 0.2).  Measured on a 2-CPU host under two
# multi-threaded TCG vCPUs: both stress tests at 0.5 take ~30 s of host time on aarch64
# (the slowest: its atomics), ~60 s when the host is busy; the whole correctness run
# stays within ~2 minutes per arch, and the rseq run sees ~1000 real kernel aborts.
STRESS_SCALE = "0.5"
STRESS_LABEL = "stress"
BUILD_TYPE = "RelWithDebInfo"
# CTest's own default when a test sets no TIMEOUT.
CTEST_DEFAULT_TIMEOUT = 1500.0
BUILD_LOG = "kcross-lab-build.log"
# The source tree: its CMakeLists.txt and the guest's /init.
SOURCE_MARKERS = ("CMakeLists.txt", "lab/init.c")
SOURCE_RECORD = "_source_dir"   # in the installed package: the tree it was built from


@dataclass(frozen=True)
class GuestTest:
    """One CTest test as the guest runs it: argv in guest paths, judged as CTest would."""

    name: str
    argv: list[str]                 # argv[0] is /lab/tests/<file>
    env: dict[str, str]
    timeout: float                  # seconds, the test's own TIMEOUT
    stress: bool                    # labelled `stress` (the per-CPU stress tier)
    skip_code: int | None = None    # SKIP_RETURN_CODE
    pass_regex: tuple[str, ...] = ()    # PASS_REGULAR_EXPRESSION: any matching passes
    fail_regex: tuple[str, ...] = ()    # FAIL_REGULAR_EXPRESSION: any matching fails
    skip_regex: tuple[str, ...] = ()    # SKIP_REGULAR_EXPRESSION: any matching skips
    will_fail: bool = False             # WILL_FAIL: pass and fail swapped

    def plan_command(self) -> list[str]:
        """The test as one line of the guest's /lab/plan."""
        return plan_command(self.argv, env=self.env, timeout=self.timeout)


@dataclass(frozen=True)
class Excluded:
    """A CTest test the guest cannot run, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class Payload:
    """Everything a lab guest needs: /init, the harness, the test programs, the test list."""

    arch: str
    build_dir: Path
    harness: Path                   # the host file of /lab/kcross-harness
    init: Path                      # the host file of /init (kcross-lab-init)
    files: dict[str, Path]          # guest path -> host file: everything to pack but /init
    tests: list[GuestTest]
    excluded: list[Excluded] = field(default_factory=list)


# ---------------------------------------------------------------- the source tree

def _is_source(path: Path) -> bool:
    return all((path / marker).is_file() for marker in SOURCE_MARKERS)


def find_source(source: Path | str | None = None, option: str = "--source") -> Path:
    """The kcross source tree: ``source`` (given as ``option``), else $KCROSS_SOURCE, else
    the checkout that holds this package, else the tree `pip install` built it from (if
    still there).  UserError (one line) when the one asked for is not a source tree, or
    there is none."""
    markers = " and ".join(SOURCE_MARKERS)
    for given, where in ((source, option), (os.environ.get("KCROSS_SOURCE"), "$KCROSS_SOURCE")):
        if given is None or given == "":
            continue
        path = Path(given).expanduser()
        if not path.is_dir():
            raise UserError(f"{where} {given}: no such directory")
        if not _is_source(path):
            raise UserError(f"{where} {given}: not a kcross source tree (no {markers})")
        return path.resolve()
    checkout = Path(__file__).resolve().parents[3]   # <checkout>/python/kcross/lab/payload.py
    if _is_source(checkout):
        return checkout
    built_from = _built_from()
    if built_from is not None and _is_source(built_from):
        return built_from
    raise UserError("the lab builds its guest programs from the kcross sources, and this "
                    "kcross is installed without them: give --source DIR (a kcross checkout) "
                    "or set KCROSS_SOURCE")


def _built_from() -> Path | None:
    """The source tree `pip install` built this package from (CMakeLists.txt writes it into
    the wheel as kcross/_source_dir), if recorded."""
    try:
        text = resources.files("kcross").joinpath(SOURCE_RECORD).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    return Path(text.strip()) if text.strip() else None


# ---------------------------------------------------------------- what the guest harness accepts
#
# Read from the source tree the guest programs are built from (its C is their one owner),
# so that the lab refuses a name the guest would refuse before anything is fetched or built.
# None when the tree does not say in the expected form (then the guest harness judges).

_SYSMECH = re.compile(r'^#define\s+KC_SYSMECH_(NATIVE|ALT)_NAME\s+"([^"]+)"', re.MULTILINE)
_SYSMECH_LIBC = re.compile(r'\[KC_SYSMECH_LIBC\]\s*=\s*"([^"]+)"')
_SUITE_DEFINED = re.compile(
    r'const\s+struct\s+kh_suite\s+(kh_suite_\w+)\s*=\s*\{\s*"([^"]+)",\s*(\w+)')
_SUITE_LISTED = re.compile(r"&(kh_suite_\w+)")


def syscall_mechanisms(name: str, src: Path) -> tuple[str, ...] | None:
    """The syscall mechanisms KCROSS_SYSCALL can force in ``name``'s guest harness: "libc"
    (src/syscall.c), the arch's instruction and its alternative if any
    (include/kcross/arch/<arch>.h: KC_SYSMECH_NATIVE_NAME, KC_SYSMECH_ALT_NAME)."""
    try:
        header = (src / "include" / "kcross" / "arch" / f"{lab_arch(name).name}.h").read_text()
        generic = (src / "src" / "syscall.c").read_text()
    except OSError:
        return None
    names = dict(_SYSMECH.findall(header))
    libc = _SYSMECH_LIBC.search(generic)
    if "NATIVE" not in names or libc is None:
        return None
    return (libc[1], names["NATIVE"], *([names["ALT"]] if "ALT" in names else []))


def harness_suites(src: Path) -> tuple[str, ...] | None:
    """The harness's suites in its registry's order: harness/registry.c lists them,
    harness/bench/*.c names them."""
    try:
        registry = (src / "harness" / "registry.c").read_text()
        named = {m[1]: m[2] for f in sorted((src / "harness" / "bench").glob("*.c"))
                 for m in _SUITE_DEFINED.finditer(f.read_text())}
    except OSError:
        return None
    suites = [named.get(ident) for ident in _SUITE_LISTED.findall(registry)]
    if not suites or any(s is None for s in suites):
        return None
    return tuple(s for s in suites if s is not None)


# The benchmark rows of harness/bench/*.c's tables as ``name``'s compiler sees them: the
# preprocessor's conditions on the arch (KC_ARCH_<ARCH>, KC_HAVE_SYSCALL_ALT from the
# arch header's KC_SYSMECH_ALT_NAME) decided, the X-macro rows (spin's SPIN_HINTS)
# expanded.  A row under a condition read here cannot decide makes the listing None.
_CONDITION = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
_TERM = re.compile(r"^(!?)\s*(?:defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)|(\w+))$")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)(\([^)]*\))?\s*(.*)$")
_ROW = re.compile(r'^\s*\{\s*"([^"]+)",')
_X_ROW = re.compile(r'\{\s*"([^"]*)"\s*name\s*,')
_X_ENTRY = re.compile(r'\bX\(\s*\w+\s*,\s*"([^"]+)"')


class _Unsure(Exception):
    """A row the reading here cannot decide."""


def _macros(name: str, src: Path) -> dict[str, bool]:
    """What the arch conditions the tables use evaluate to for ``name``."""
    header = (src / "include" / "kcross" / "arch" / f"{lab_arch(name).name}.h").read_text()
    facts = {f"KC_ARCH_{a.upper()}": a == name for a in ARCHES}
    facts["KC_HAVE_SYSCALL_ALT"] = "ALT" in dict(_SYSMECH.findall(header))
    return facts


def _condition(kind: str, expr: str, facts: dict[str, bool]) -> bool | None:
    expr = re.sub(r"/\*.*?\*/|//.*$", "", expr).strip()
    if kind in ("ifdef", "ifndef"):
        value = facts.get(expr)
        return None if value is None else value == (kind == "ifdef")
    term = _TERM.match(expr)
    if term is None:
        return None
    value = facts.get(term[2] or term[3] or term[4])
    return None if value is None else value != bool(term[1])


def _and(a: bool | None, b: bool | None) -> bool | None:
    return False if a is False or b is False else (None if a is None or b is None else True)


def _or(a: bool | None, b: bool | None) -> bool | None:
    return True if a is True or b is True else (None if a is None or b is None else False)


def _lines(text: str, facts: dict[str, bool]) -> list[tuple[str, bool | None]]:
    """Each line (continuations joined) with whether the compiler sees it (None: unsure)."""
    out: list[tuple[str, bool | None]] = []
    stack: list[tuple[bool | None, bool | None]] = []   # (the enclosing, any branch taken)
    active: bool | None = True
    for line in text.replace("\\\n", " ").splitlines():
        m = _CONDITION.match(line)
        if m is None:
            out.append((line, active))
            continue
        kind, expr = m[1], m[2]
        if kind in ("if", "ifdef", "ifndef"):
            value = _condition(kind, expr, facts)
            stack.append((active, value))
            active = _and(active, value)
        elif not stack:
            raise _Unsure
        elif kind == "endif":
            active = stack.pop()[0]
        else:
            outer, taken = stack[-1]
            value = True if kind == "else" else _condition(kind, expr, facts)
            branch = _and(None if taken is None else not taken, value)
            stack[-1] = (outer, _or(taken, value))
            active = _and(outer, branch)
    return out


def _table_rows(lines: list[tuple[str, bool | None]], table: str) -> list[str]:
    start = next((i for i, (line, _) in enumerate(lines)
                  if re.search(rf"\b{table}\[\]\s*=\s*\{{", line)), None)
    if start is None:
        raise _Unsure
    defines = {d[1]: d[3] for line, seen in lines[:start] if seen and (d := _DEFINE.match(line))}
    unsure = {d[1] for line, seen in lines[:start] if seen is None and (d := _DEFINE.match(line))}
    rows: list[str] = []
    prefix: str | None = None
    for line, seen in lines[start + 1:]:
        if line.startswith("};"):
            return rows
        if seen is False:
            continue
        define, row, use = _DEFINE.match(line), _ROW.match(line), re.match(r"^\s*(\w+)\s*$", line)
        if seen is None and (define or row or use):
            raise _Unsure
        if define and define[1] == "X":
            x = _X_ROW.search(define[3])
            prefix = x[1] if x else None
        elif row:
            rows.append(row[1])
        elif use:
            if prefix is None or use[1] not in defines or use[1] in unsure:
                raise _Unsure
            rows += [prefix + n for n in _X_ENTRY.findall(defines[use[1]])]
    raise _Unsure


def harness_benchmarks(name: str, src: Path) -> tuple[str, ...] | None:
    """suite/name of every benchmark ``name``'s guest harness has (harness/bench/*.c's
    tables as its compiler sees them); None when the tree does not say in the expected
    form (then the guest harness judges)."""
    names: list[str] = []
    try:
        facts = _macros(name, src)
        for f in sorted((src / "harness" / "bench").glob("*.c")):
            text = f.read_text()
            lines = _lines(text, facts)
            for suite in _SUITE_DEFINED.finditer(text):
                names += [f"{suite[2]}/{row}" for row in _table_rows(lines, suite[3])]
    except (OSError, _Unsure):
        return None
    return tuple(names) if names else None


def benchmarks_named(glob: str, name: str, src: Path,
                     suites: Sequence[str] | None = None) -> list[str] | None:
    """The benchmarks (suite/name) of ``name``'s guest harness, in ``suites`` when given,
    that ``--bench GLOB`` takes; None when the tree does not say (the guest judges)."""
    listed = harness_benchmarks(name, src)
    if listed is None:
        return None
    return [n for n in listed if (suites is None or n.split("/", 1)[0] in suites)
            and matches(glob, n)]


def check_suites(option: str, names: Sequence[str], src: Path) -> None:
    """``--suite OPTION``'s ``names`` are suites of the harness at ``src``, or a UserError
    naming the first that is not, with the closest; nothing when the tree does not say."""
    known = harness_suites(src)
    for name in names if known is not None else ():
        if name not in (known or ()):
            hint = did_you_mean(name, known or ())
            raise UserError(f"--suite {option}: no suite {name!r} ({hint + ' ' if hint else ''}"
                            f"suites: {', '.join(known or ())})")


def check_bench(glob: str, name: str, src: Path, suites: Sequence[str]) -> None:
    """``--bench GLOB`` names a benchmark of ``name``'s guest harness in ``suites``, or a
    UserError with the closest; nothing when the tree does not say."""
    if benchmarks_named(glob, name, src, suites) != []:
        return
    listed = [n for n in harness_benchmarks(name, src) or () if n.split("/", 1)[0] in suites]
    raise UserError(f"--bench {glob}: no such benchmark in {name}'s suites {', '.join(suites)} "
                    f"({benchmark_hint(glob, listed) or 'kcross list names them'})")


def setting_refusal(name: str, value: str, arch_name: str, src: Path) -> str | None:
    """Why ``arch_name``'s guest harness built from ``src`` would refuse the setting
    ``name=value`` where kcross.forcings' table alone cannot tell: a syscall mechanism
    (KCROSS_SYSCALL: the arch's, libc or auto), a glob that must match one of its
    benchmarks (KCROSS_TEST_FAIL, KCROSS_TEST_DELAY's GLOB:NS); None when it would take
    it, or when the tree does not say (then the guest harness judges)."""
    from kcross import forcings

    forcing = forcings.named(name)
    if forcing is None or forcing.kind == forcings.VALUES:
        return None
    if forcing.kind == forcings.MECHANISM:
        offered = syscall_mechanisms(arch_name, src)
        if offered is not None and value not in (*offered, "auto"):
            return f"{arch_name}'s harness takes {', '.join((*offered, 'auto'))}"
        return None
    glob = value
    if forcing.kind == forcings.GLOB_NS:
        parts = forcings.delay_parts(value)
        if parts is None:
            return (f"not GLOB:NS (a glob of benchmark names, a colon, nanoseconds above 0 "
                    f"and at most {forcings.DELAY_MAX_NS:.0f})")
        glob = parts[0]
    if benchmarks_named(glob, arch_name, src) == []:
        return f"{glob!r} matches no benchmark of {arch_name}'s harness (kcross list names them)"
    return None


# ---------------------------------------------------------------- tools

def _compiler_packages(name: str) -> tuple[str, str]:
    """The Debian packages of ``name``'s cross compiler and of the C library it links
    statically, on this host."""
    facts = lab_arch(name)
    # On a host of the same arch, Debian's own gcc and libc6-dev provide them.
    if os.uname().machine == name:
        return "gcc", "libc6-dev"
    return facts.cross_package, facts.cross_libc_package


def _lacks_libc(gcc: str) -> bool:
    """Whether ``gcc`` says it has no libc.a to link with (it prints the bare name); a
    compiler that does not answer is left for the build to judge."""
    try:
        proc = subprocess.run([gcc, "-print-file-name=libc.a"], capture_output=True, text=True,
                              timeout=60, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == "libc.a"


def missing_tools(name: str) -> list[tuple[str, tuple[str, ...]]]:
    """What this host lacks to build ``name``'s guest programs: (what, its Debian packages)."""
    facts = lab_arch(name)
    gcc_package, libc_package = _compiler_packages(name)
    missing: list[tuple[str, tuple[str, ...]]] = []
    gcc = shutil.which(facts.cross_gcc)
    if gcc is None:
        missing.append((facts.cross_gcc, (gcc_package, libc_package)))
    elif _lacks_libc(gcc):
        missing.append((f"libc.a for {facts.cross_gcc}", (libc_package,)))
    if shutil.which("cmake") is None:
        missing.append(("cmake", ("cmake",)))
    if not shutil.which("ninja") and not shutil.which("make"):
        missing.append(("ninja", ("ninja-build",)))
    return missing


def needs(missing: Sequence[tuple[str, Sequence[str]]]) -> str:
    """``missing`` (what, its packages) as "A, B (apt-get install PACKAGES)"."""
    packages = dict.fromkeys(pkg for _, pkgs in missing for pkg in pkgs)
    return f"{', '.join(what for what, _ in missing)} (apt-get install {' '.join(packages)})"


def check_tools(name: str) -> tuple[str, str]:
    """cmake and the arch's cross compiler, found on PATH (LabError naming what is missing
    and the packages)."""
    missing = missing_tools(name)
    if missing:
        raise LabError(f"building the {name} guest programs needs {needs(missing)}")
    cmake, gcc = shutil.which("cmake"), shutil.which(lab_arch(name).cross_gcc)
    assert cmake is not None and gcc is not None
    return cmake, gcc


def _generator() -> str:
    return "Ninja" if shutil.which("ninja") else "Unix Makefiles"   # check_tools found one


# ---------------------------------------------------------------- ctest's test list

def _properties(test: Mapping[str, Any]) -> dict[str, Any]:
    return {p["name"]: p["value"] for p in test.get("properties", []) if "name" in p}


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _host_reason(program: str) -> str:
    base = os.path.basename(program)
    if base in ("cmake", "cmake3"):
        return "a CMake script (cmake -P): the guest has no cmake"
    if base in ("sh", "bash", "dash"):
        return "a shell script: the guest has no shell"
    return f"runs {program} of the host, not a program built in the tree"


def guest_tests(ctest_json: Mapping[str, Any], build_dir: Path,
                source_dir: Path | None = None
                ) -> tuple[list[GuestTest], list[Excluded], dict[str, Path]]:
    """The guest's tests from ``ctest --show-only=json-v1`` output of ``build_dir``: the
    tests to run, the ones left out (with the reason), and the programs to pack
    ({guest path: host file}).  LabError if two different programs share a file name."""
    build_dir = Path(build_dir)
    tests: list[GuestTest] = []
    excluded: list[Excluded] = []
    files: dict[str, Path] = {}
    hosts = [str(build_dir)] + ([str(source_dir)] if source_dir is not None else [])
    for entry in ctest_json.get("tests", []):
        name = str(entry.get("name", "?"))
        props = _properties(entry)
        command = [str(c) for c in entry.get("command") or []]
        if props.get("DISABLED"):
            excluded.append(Excluded(name, "disabled (DISABLED property)"))
            continue
        if not command:
            excluded.append(Excluded(name, "no command (its program is not built here)"))
            continue
        program = Path(command[0])
        if not program.is_absolute() or not _under(program, build_dir):
            excluded.append(Excluded(name, _host_reason(command[0])))
            continue
        args = command[1:]
        env: dict[str, str] = {}
        bad_env = False
        for assignment in _strings(props.get("ENVIRONMENT")):
            key, eq, value = assignment.partition("=")
            if not key or not eq:
                bad_env = True
                continue
            env[key] = value
        if bad_env:
            excluded.append(Excluded(name, "an ENVIRONMENT entry is not NAME=VALUE"))
            continue
        tokens = args + [f"{k}={v}" for k, v in env.items()]
        if any(not t or any(c.isspace() for c in t) for t in tokens):
            excluded.append(Excluded(name, "an argument or variable is empty or holds whitespace "
                                           "(the guest's plan has no quoting)"))
            continue
        if any(h in t for t in tokens for h in hosts):
            excluded.append(Excluded(name, "an argument names a file of the host"))
            continue
        if "ENVIRONMENT_MODIFICATION" in props:
            excluded.append(Excluded(name, "ENVIRONMENT_MODIFICATION is not supported in the guest"))
            continue
        guest = f"{GUEST_TESTS}/{program.name}"
        if files.get(guest, program) != program:
            raise LabError(f"two test programs are both {guest} in the guest: "
                           f"{files[guest]} and {program}")
        files[guest] = program
        skip_code = props.get("SKIP_RETURN_CODE")
        timeout = float(props.get("TIMEOUT") or CTEST_DEFAULT_TIMEOUT)
        tests.append(GuestTest(
            name=name, argv=[guest, *args], env=env, timeout=timeout,
            stress=STRESS_LABEL in _strings(props.get("LABELS")),
            skip_code=int(skip_code) if skip_code is not None else None,
            pass_regex=_strings(props.get("PASS_REGULAR_EXPRESSION")),
            fail_regex=_strings(props.get("FAIL_REGULAR_EXPRESSION")),
            skip_regex=_strings(props.get("SKIP_REGULAR_EXPRESSION")),
            will_fail=bool(props.get("WILL_FAIL", False))))
    return tests, excluded, files


# ---------------------------------------------------------------- the build

def build_dir_for(name: str, source_dir: Path, cache_dir: Path | str | None = None) -> Path:
    """Where :func:`build_payload` builds ``name``'s payload from ``source_dir``: one build
    dir per arch and source tree, so that a lab run from another checkout (at the same time,
    or in between) never wipes or rebuilds the guest programs of this one."""
    tree = hashlib.sha256(str(Path(source_dir).resolve()).encode()).hexdigest()[:12]
    return cache_root(cache_dir) / f"build-{name}-{tree}"


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if re.search(r"\berror\b|CMake Error", line, re.IGNORECASE):
            return line.strip()[:200]
    return ""


def _cached(build: Path, key: str) -> str | None:
    try:
        text = (build / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return None
    found = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", text, re.MULTILINE)
    return found[1] if found else None


def _run_logged(argv: list[str], log: Path, what: str, name: str, cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", check=False)
    except OSError as e:
        raise LabError(f"cannot run {argv[0]}: {e.strerror}") from None
    with open(log, "a") as out:
        out.write(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        first = _first_error(proc.stdout + proc.stderr)
        raise LabError(f"{what} the {name} guest programs failed (exit {proc.returncode})"
                       + (f": {first}" if first else "") + f"; log: {log}")
    return proc.stdout


def source_tree(arch: str, source: Path | str | None = None, option: str = "--source") -> Path:
    """The source tree (:func:`find_source`) with ``arch``'s toolchain file; UserError (one
    line) when it has none."""
    src = find_source(source, option)
    _toolchain(arch, src)
    return src


# What the guest programs are built from: the build's files and the directories of the C
# sources, tests and examples (not the Python package, the docs or the scripts).
GUEST_SOURCES = ("CMakeLists.txt", "cmake", "include", "src", "harness", "lab", "tests",
                 "examples")


def guest_sources_digest(src: Path) -> str:
    """The SHA-256 of what the guest programs are built from in tree ``src``
    (:data:`GUEST_SOURCES`: each file's path and bytes, in order; hidden files left out):
    two trees with one digest build the same programs."""
    digest = hashlib.sha256()
    for top in GUEST_SOURCES:
        root = src / top
        files = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(src).parts))
        for path in files:
            digest.update(path.relative_to(src).as_posix().encode() + b"\0")
            try:
                digest.update(path.read_bytes())
            except OSError:
                digest.update(b"\0unreadable")
            digest.update(b"\0")
    return digest.hexdigest()


def _toolchain(arch: str, src: Path) -> Path:
    toolchain = src / "cmake" / f"toolchain-{lab_arch(arch).toolchain}.cmake"
    if not toolchain.is_file():
        raise UserError(f"{src}: no {toolchain.relative_to(src)} (not a kcross source tree "
                        "with lab support?)")
    return toolchain


def build_payload(arch: str, *, source: Path | None = None,
                  cache_dir: Path | None = None) -> Payload:
    """Configure and build the kcross sources for ``arch`` (static, cross) into
    ``<cache>/build-<arch>-<source tree>`` (incremental) and list the tests the guest can run."""
    src = find_source(source)
    cmake, _ = check_tools(arch)
    toolchain = _toolchain(arch, src)
    build = build_dir_for(arch, src, cache_dir)
    generator = _generator()
    try:
        build.parent.mkdir(parents=True, exist_ok=True)
        lock = open(build.parent / f".{build.name}.lock", "w")
    except OSError as e:
        raise LabError(f"cannot create the build dir {build}: {e.strerror}") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)    # one build per build dir at a time
        return _build(arch, src, toolchain, build, cmake, generator)


def _build(arch: str, src: Path, toolchain: Path, build: Path, cmake: str,
           generator: str) -> Payload:
    # A build dir of another source tree or generator cannot be reused: start afresh.
    home = _cached(build, "CMAKE_HOME_DIRECTORY")
    if home is not None and (Path(home).resolve() != src
                             or _cached(build, "CMAKE_GENERATOR") != generator):
        shutil.rmtree(build)
    log = build / BUILD_LOG
    try:
        build.mkdir(parents=True, exist_ok=True)
        log.write_text("")
    except OSError as e:
        raise LabError(f"cannot write to the build dir {build}: {e.strerror}") from None
    _run_logged([cmake, "-S", str(src), "-B", str(build), "-G", generator,
                 f"-DCMAKE_TOOLCHAIN_FILE={toolchain}", f"-DCMAKE_BUILD_TYPE={BUILD_TYPE}",
                 "-DBUILD_TESTING=ON", "-DKCROSS_STATIC_HARNESS=ON", "-DKCROSS_SANITIZE=",
                 "-DKCROSS_FUZZ=OFF", "-DCMAKE_CROSSCOMPILING_EMULATOR=",
                 f"-DKCROSS_STRESS_SCALE={STRESS_SCALE}"],
                log, "configuring", arch)
    _run_logged([cmake, "--build", str(build), "--parallel", str(os.cpu_count() or 2)],
                log, "building", arch)
    ctest = shutil.which("ctest") or str(Path(cmake).with_name("ctest"))
    listing = _run_logged([ctest, "--show-only=json-v1"], log, "listing the tests of", arch,
                          cwd=build)
    try:
        data = json.loads(listing)
    except ValueError:
        raise LabError(f"ctest --show-only=json-v1 in {build} wrote no JSON; log: {log}") from None
    tests, excluded, files = guest_tests(data, build, src)
    harness, init = build / "kcross-harness", build / "kcross-lab-init"
    for program in (harness, init):
        if not program.is_file():
            raise LabError(f"the {arch} build has no {program.name} ({program}); log: {log}")
    return Payload(arch=arch, build_dir=build, harness=harness, init=init,
                   files={GUEST_HARNESS: harness, **files}, tests=tests, excluded=excluded)


def select_tests(tests: Sequence[GuestTest], *, stress: bool | None = None) -> list[GuestTest]:
    """``tests`` with (True) or without (False) the stress tier; None: all."""
    return [t for t in tests if stress is None or t.stress == stress]
