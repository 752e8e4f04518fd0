"""The documentation's own rules that need no MkDocs (./check's docs tier builds the site
strictly, with scripts/mkdocs_hooks.py checking every link): one list of system packages
(scripts/packages.tsv) behind the README's apt-get line, scripts/install-deps and the table
of docs/dependencies.md; GitHub's anchors; every page naming the help it belongs with."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from conftest import HANG

ROOT = Path(__file__).resolve().parents[2]
INSTALL_DEPS = ROOT / "scripts" / "install-deps"


def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install_deps(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(INSTALL_DEPS), *args], capture_output=True, text=True,
                          timeout=HANG, check=False)


def test_the_readme_installs_the_build_tier() -> None:
    """The README's one `apt-get install` (what scripts/fresh-debian-ci installs before the
    two commands) is the `build` tier of scripts/packages.tsv."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`apt-get install ([^`]*)`", section.replace("\n", " "))
    assert len(named) == 1, named
    listed = install_deps("--list", "build")
    assert listed.returncode == 0, listed.stderr
    assert named[0].split() == listed.stdout.split()


def test_install_deps_lists_what_ci_installs() -> None:
    """With no tier: every package marked `always` and none marked `asked`; the special
    ones last (lava-dispatcher and lava-server alone, the fuzzer runtime after clang)."""
    listed = install_deps("--list")
    assert listed.returncode == 0, listed.stderr
    packages = listed.stdout.split()
    for wanted in ("build-essential", "postgresql", "qemu-system-ppc", "lava-dispatcher", "cpio",
                   "pkg-config", "libboost-context-dev", "chromium", "openssh-server"):
        assert wanted in packages
    assert "linux-perf" not in packages and "debootstrap" not in packages
    assert packages[-1].startswith("libclang-rt-")
    assert packages[-3:-1] == ["lava-dispatcher", "lava-server"] and "lavacli" in packages
    assert len(packages) == len(set(packages))
    assert install_deps("--list", "crosscheck").stdout.split() == ["linux-perf"]


@pytest.mark.parametrize("args", [["no-such-tier"], ["--list", "lab", "nope"], ["--bogus"],
                                  ["--table", "lab"]])
def test_install_deps_refuses_in_one_line(args: list[str]) -> None:
    proc = install_deps(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("install-deps: ")


def test_install_deps_needs_root_to_install(tmp_path: Path) -> None:
    import os
    if os.getuid() == 0:
        pytest.skip("running as root: install-deps would install")
    proc = install_deps("build")
    assert proc.returncode == 2 and "needs root" in proc.stderr


def test_the_packages_table_is_current() -> None:
    """docs/dependencies.md shows scripts/packages.tsv as `scripts/install-deps --table`
    prints it (the docs tier fails on the same check; this one needs no MkDocs)."""
    page = (ROOT / "docs" / "dependencies.md").read_text(encoding="utf-8")
    assert hooks().packages_table_problem(page) is None


def test_a_stale_packages_table_is_named() -> None:
    h = hooks()
    page = (ROOT / "docs" / "dependencies.md").read_text(encoding="utf-8")
    stale = page.replace("| `cpio` |", "| `cpio2` |")
    assert "--refresh" in (h.packages_table_problem(stale) or "")
    assert "no table" in (h.packages_table_problem("# no table here") or "")


@pytest.mark.parametrize("heading, slug", [
    ("Two commands (fresh Debian 12)", "two-commands-fresh-debian-12"),
    ("`comparison` (from `compare --export json`)", "comparison-from-compare---export-json"),
    ("System calls — `<kcross/syscall.h>`", "system-calls--kcrosssyscallh"),
    ("`fingerprint.forced`", "fingerprintforced"),
    ("Is `scv` cheaper than `sc`, and where do the instructions go?",
     "is-scv-cheaper-than-sc-and-where-do-the-instructions-go"),
    ("Everything in one line: `scripts/install-deps`", "everything-in-one-line-scriptsinstall-deps"),
])
def test_anchors_are_githubs(heading: str, slug: str) -> None:
    h = hooks()
    assert h.github_slug(h._inline_text(heading)) == slug


def test_links_in_code_are_not_links(tmp_path: Path) -> None:
    h = hooks()
    text = ("# Title\n\nSee [a](a.md#x) and `[b](b.md)`.\n\n    [c](c.md)\n\n"
            "```\n[d](d.md)\n```\n\n## Title\n\n[e](https://example.org) [f](../g.c)\n")
    assert [(n, target) for n, _, _, target in h.links(text)] == [(3, "a.md#x"), (13, "../g.c")]
    page = tmp_path / "p.md"
    page.write_text(text, encoding="utf-8")
    assert h.markdown_anchors(page) == {"title", "title-1"}


def test_every_page_names_its_help() -> None:
    """Each page says, right under its title, which --help it belongs with."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# "), page.name
        if page.name == "index.md":
            continue
        assert lines[2].startswith("Help: "), f"{page.name}: no 'Help: ...' under its title"


def test_each_help_names_its_page_and_the_page_names_the_help() -> None:
    """`kcross NAME --help` ends with `documentation: docs/PAGE` (cli.DOCS), that page
    exists and its Help line names `kcross NAME` (for lava: its `job`); `kcross --help`
    names the README and docs/."""
    from kcross import cli

    assert set(cli.DOCS) == set(cli.COMMANDS)
    parser = cli.build_parser()
    assert parser.epilog is not None and parser.epilog.endswith(cli.DOCUMENTATION)
    subparsers = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[attr-defined]
    for name, page in cli.DOCS.items():
        path = ROOT / "docs" / page
        assert path.is_file(), (name, page)
        assert subparsers[name].epilog.endswith(f"documentation: docs/{page}"), name
        help_line = " ".join(path.read_text(encoding="utf-8").split("\n\n", 2)[1].split())
        assert re.search(rf"`kcross {re.escape(name)}( job)? --help`", help_line), (name, page)


# --- every command the README and the pages show is one kcross accepts --------------------
# A command shown is a `kcross SUBCOMMAND ...` line in an indented or fenced block (a `$ `
# prompt allowed); its comment and anything after a shell operator are not kcross's.
# Sample output lines ("kcross lab: ...") are not commands.
_SHOWN = re.compile(r"^\s*(?:\$ )?(kcross [a-z][a-z-]*(?![a-z:-]).*)$")
_SHELL = re.compile(r"\s+#\s.*$|\s*(?:&&|\|\||\||>|2>|;)\s.*$")


def shown_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command) of each kcross command a Markdown page shows."""
    shown: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = _SHOWN.match(line)
        if match and (fenced or line.startswith("    ")):
            shown.append((number, _SHELL.sub("", match.group(1))))
    return shown


def refused(command: str) -> bool:
    """Whether kcross's parser refuses a shown command (nothing is run)."""
    import shlex
    from contextlib import redirect_stderr
    from io import StringIO

    from kcross.cli import build_parser

    try:
        with redirect_stderr(StringIO()):
            build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit as stop:
        return bool(stop.code)
    return False


def test_every_command_the_docs_show_is_accepted() -> None:
    """A renamed or removed option leaves no page showing it: each command of the README
    and docs/ parses as written."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    shown = [(page.relative_to(ROOT), number, command) for page in pages
             for number, command in shown_commands(page.read_text(encoding="utf-8"))]
    assert len(shown) > 100, "the pages' commands were not found"
    assert [f"{page}:{number}: {command}" for page, number, command in shown
            if refused(command)] == []


def test_a_command_kcross_refuses_is_seen() -> None:
    text = "    $ kcross run --suite syscall   # fine\n    kcross run --no-such-option\n" \
           "    kcross lab: [1/27] test_clock passed\n"
    assert shown_commands(text) == [(1, "kcross run --suite syscall"),
                                    (2, "kcross run --no-such-option")]
    assert [refused(command) for _, command in shown_commands(text)] == [False, True]


# --- docs/releases.md is made by kcross, not typed ----------------------------------------

def test_the_releases_page_is_made_from_its_kept_lines(tmp_path: Path) -> None:
    """scripts/releases-doc --from docs/data/releases makes docs/releases.md byte for byte:
    the page is what kcross lab --releases printed, never edited by hand."""
    import sys

    kept = ROOT / "docs" / "data" / "releases"
    assert (kept / "made.json").exists(), "docs/data/releases: the page's JSON lines"
    page = tmp_path / "releases.md"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "releases-doc"), "--from",
                           str(kept), "-o", str(page)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert page.read_text(encoding="utf-8") == \
        (ROOT / "docs" / "releases.md").read_text(encoding="utf-8")
