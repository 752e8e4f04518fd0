"""A command loads only what it uses: the heavy packages stay off the paths that do not
need them (the start-up cost of each command: scripts/startup-time, docs/commands.md).

Every case runs ``kcross ARGS`` in a fresh interpreter that writes, at exit, the
modules it loaded; RULES says which of them each command must not load.  A start
naming its command builds that command's parser alone, so ``--help`` of each
(enumerated from the command table) is a test of its registration: a module
that imports kcross.stats at its top (or a view that does) would load numpy there, whose
thread pools break the stop signals of ``kcross run`` (test_cli_signals.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG, fake_capture, isolated_env
from kcross.cli import COMMANDS

# What the commands below may need, heaviest first: scipy (only kcross aa's exact binomial
# interval of its false-positive rate, scipy.stats; no verdict: kcross.stats computes
# Mann-Whitney U itself for runs of one harness process each, and kcross.special has the
# normal, Student's t and binomial distributions of the verdicts and the median's CI),
# matplotlib (plots: report, --plot), numpy (the figures of samples: the median's CI is an
# exact binomial, counted by kcross.stats up to 2,000 samples), SQLAlchemy (the store),
# jsonschema (records read or imported), Jinja2 (the HTML page), rich (tables), psycopg (a
# PostgreSQL store only).
EVERYTHING = ("scipy", "numpy", "matplotlib", "sqlalchemy", "jsonschema", "jinja2", "rich",
              "psycopg", "kcross.stats", "kcross.views.run", "kcross.store")
NO_PLOT = ("matplotlib", "jinja2", "psycopg")
NO_FIGURES = ("numpy", "scipy", *NO_PLOT, "kcross.stats")
NO_SCIPY = ("scipy", *NO_PLOT)    # figures and verdicts

BENCH = "syscall/getcpu-vdso"

# The rules, in one place: (case, kcross arguments, modules it must not load; a name
# covers its submodules).  STORE holds two runs of one harness process each, KSTORE two
# runs of 3 processes each; CAPTURE is a harness output.
# An SQLite store needs nothing of PostgreSQL: not even SQLAlchemy's dialect for it.
SQLITE = "sqlalchemy.dialects.postgresql"

RULES: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("kcross", [], EVERYTHING),
    ("--help", ["--help"], EVERYTHING),
    ("--version", ["--version"], EVERYTHING),
    *[(f"{name} --help", [name, "--help"], EVERYTHING) for name in COMMANDS],
    ("lab ARCH --help", ["lab", "x86_64", "--help"], EVERYTHING),
    ("usage error", ["compare", "--no-such-option"], EVERYTHING),
    ("runs", ["runs", "--db", "STORE"], (*NO_FIGURES, "jsonschema", "fastjsonschema", SQLITE)),
    ("runs --json", ["runs", "--json", "--db", "STORE"],
     (*NO_FIGURES, "jsonschema", "fastjsonschema", SQLITE)),
    ("list", ["list"], (*NO_FIGURES, "sqlalchemy")),
    ("sysinfo", ["sysinfo"], (*NO_FIGURES, "sqlalchemy")),
    ("show", ["show", "latest", "--db", "STORE"], NO_SCIPY),
    ("show --json", ["show", "latest", "--json", "--db", "STORE"], NO_FIGURES),
    # a valid capture: the compiled schema says yes, jsonschema is not even imported
    # a capture of one process: its records summarised without numpy (kcross.stats._values)
    ("import", ["import", "--db", "SCRATCH", "CAPTURE"],
     (*NO_SCIPY, "numpy", "jsonschema", SQLITE)),
    ("check-store", ["check-store", "--db", "STORE"], (*NO_FIGURES, "jsonschema")),
    ("history", ["history", BENCH, "--db", "STORE"], (*NO_SCIPY, SQLITE)),
    ("compare", ["compare", "1", "2", "--db", "STORE"], (*NO_SCIPY, SQLITE)),
    ("check", ["check", "--baseline", "1", "--db", "STORE"], NO_SCIPY),
    ("report", ["report", "1", "2", "-o", "PAGE", "--db", "STORE"], ("scipy", "psycopg")),
    ("history, K processes", ["history", BENCH, "--db", "KSTORE"], NO_SCIPY),
    ("compare, K processes", ["compare", "1", "2", "--db", "KSTORE"], NO_SCIPY),
    ("check, K processes", ["check", "--baseline", "1", "--db", "KSTORE"], NO_SCIPY),
    ("report, K processes", ["report", "1", "2", "-o", "PAGE", "--db", "KSTORE"],
     ("scipy", "psycopg")),
]


def loaded(args: list[str], env: dict[str, str], out: Path) -> tuple[list[str], str]:
    """Run ``kcross ARGS`` in a fresh interpreter: the modules loaded when it exited, and
    its stderr (its exit status must be 0)."""
    probe = ("import atexit, json, runpy, sys\n"
             "def dump():\n"
             f"    with open({str(out)!r}, 'w') as f: json.dump(sorted(sys.modules), f)\n"
             "atexit.register(dump)\n"
             "sys.argv[0] = 'kcross'\n"
             "runpy.run_module('kcross', run_name='__main__', alter_sys=True)\n")
    proc = subprocess.run([sys.executable, "-c", probe, *args], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG)
    status = f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    assert out.exists(), status
    return json.loads(out.read_text()), status


def among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """The names loaded, themselves or a submodule of theirs."""
    return [name for name in names
            if any(m == name or m.startswith(name + ".") for m in modules)]


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """STORE: two runs of BENCH and another (a complete quick run of syscall/getcpu-*
    by the fake harness, imported twice); KSTORE: two runs of them by 3 processes each;
    CAPTURE: the quick run's records; SCRATCH: an empty store's place; PAGE: a report's."""
    root = tmp_path_factory.mktemp("startup")
    capture = root / "capture.jsonl"
    capture.write_text(fake_capture("--quick", "--bench", "syscall/getcpu-*"))
    store = root / "k.db"
    for force in ([], ["--force"]):
        subprocess.run([sys.executable, "-m", "kcross", "import", *force, "--db", str(store),
                        str(capture)], env=isolated_env(root), check=True,
                       capture_output=True, timeout=HANG)
    kstore = root / "k3.db"
    for _ in range(2):
        subprocess.run([sys.executable, "-m", "kcross", "run", "--quick", "--processes", "3",
                        "--bench", "syscall/getcpu-*", "--db", str(kstore)],
                       env={**isolated_env(root), "KCROSS_FAKE_RESAMPLE": "1"}, check=True,
                       capture_output=True, timeout=HANG)
    return {"STORE": str(store), "KSTORE": str(kstore), "CAPTURE": str(capture),
            "SCRATCH": str(root / "scratch.db"), "PAGE": str(root / "report.html")}


@pytest.mark.parametrize(("args", "forbidden"), [(args, forbidden)
                                                 for _, args, forbidden in RULES],
                         ids=[case for case, _, _ in RULES])
def test_a_command_loads_no_heavy_module_it_does_not_use(
        args: list[str], forbidden: tuple[str, ...], paths: dict[str, str],
        tmp_path: Path) -> None:
    args = [paths.get(arg, arg) for arg in args]
    modules, status = loaded(args, isolated_env(tmp_path), tmp_path / "modules.json")
    usage = args == [] or "--no-such-option" in args
    assert status.startswith("exit 2" if usage else "exit 0"), status
    assert among(modules, forbidden) == [], f"kcross {' '.join(args)}"


def test_the_probe_sees_what_a_command_loads(paths: dict[str, str], tmp_path: Path) -> None:
    """The rules can fail: `kcross compare` of two one-process runs judges with
    Mann-Whitney U (kcross.stats' own on numpy's arrays, kcross.special's normal
    distribution), `kcross show` computes figures from the stored samples."""
    env = isolated_env(tmp_path)
    modules, status = loaded(["compare", "1", "2", "--db", paths["STORE"]], env,
                             tmp_path / "compare.json")
    assert status.startswith("exit 0"), status
    assert {"kcross.special", "numpy", "sqlalchemy", "rich.console"} <= set(modules)
    modules, status = loaded(["show", "latest", "--db", paths["STORE"]], env,
                             tmp_path / "show.json")
    assert status.startswith("exit 0"), status
    assert {"kcross.stats", "kcross.views.run", "sqlalchemy"} <= set(modules)

