"""MkDocs hooks of kcross's documentation site (mkdocs.yml), which ./check's docs tier
builds with ``mkdocs build --strict``: every warning below fails it.

- Anchors are GitHub's (the pages are read on a forge as often as on the site): the toc's
  slugify is :func:`github_slug`, so ``docs/X.md#a-heading`` is one link on both.
- A page's link out of ``docs/`` into the source tree (``../examples/ctx.c``,
  ``../README.md#two-commands-fresh-debian-12``) must name a file that exists there (and a
  heading of it, for a Markdown file); the site has no source tree, so such a link is
  shown as its text.
- README.md and CONTRIBUTING.md, which are not pages of the site, have every relative
  link and anchor checked the same way: into ``docs/`` against the built pages' anchors.
- The table of system packages in docs/dependencies.md must be what
  ``scripts/install-deps --table`` prints from scripts/packages.tsv (the one list):
  ``python3 scripts/mkdocs_hooks.py --refresh`` rewrites it.
"""

from __future__ import annotations

import logging
import posixpath
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FRONT = ("README.md", "CONTRIBUTING.md")          # checked, not pages of the site
PACKAGES_PAGE = DOCS / "dependencies.md"
BEGIN = "<!-- begin: scripts/install-deps --table -->"
END = "<!-- end: scripts/install-deps --table -->"

log = logging.getLogger("mkdocs.hooks.kcross")

# An inline link [text](target) outside code spans; (?<!!) leaves images alone.
LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
FENCE = re.compile(r"^ {0,3}(```|~~~)")

_files: Any = None     # mkdocs' Files of this build (on_files), for the front files' links


def github_slug(value: str, separator: str = "-") -> str:
    """A heading's anchor as GitHub makes it: lower case, every character that is not a
    letter, digit, space, hyphen or underscore dropped, each space a hyphen (no runs
    merged: ``compare --export json`` is ``compare---export-json``)."""
    value = value.strip().lower()
    value = "".join(c for c in value if c.isalnum() or c in " -_")
    return value.replace(" ", separator)


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the Markdown outside fenced and indented code blocks, with
    code spans blanked (a link or heading in code is not one)."""
    out: list[tuple[int, str]] = []
    fenced = False
    previous_blank = True
    in_indented = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        blank = not line.strip()
        if line.startswith(("    ", "\t")) and (previous_blank or in_indented) and not blank:
            in_indented = True
            continue
        if not blank:
            in_indented = False
        previous_blank = blank
        out.append((number, CODE_SPAN.sub(lambda m: "\0" * len(m.group(0)), line)))
    return out


def _inline_text(heading: str) -> str:
    """A heading's text as rendered: links as their text, code spans as their content,
    emphasis marks gone."""
    heading = LINK.sub(lambda m: m.group(1), heading)
    heading = re.sub(r"(`+)(.+?)\1", lambda m: m.group(2), heading)
    return re.sub(r"(\*\*|__|\*)", "", heading)


def markdown_anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file that is not a page of the site: its headings'
    GitHub slugs (a repeated one gets -1, -2... as on GitHub)."""
    text = path.read_text(encoding="utf-8")
    prose = {number for number, _ in _prose_lines(text)}
    anchors: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m or number not in prose:
            continue
        slug = base = github_slug(_inline_text(m.group(1)))
        n = 0
        while slug in anchors:
            n += 1
            slug = f"{base}-{n}"
        anchors.add(slug)
    return anchors


def links(text: str) -> list[tuple[int, str, str, str]]:
    """(line number, the link as written, its text, its target) of every relative link in
    Markdown prose (an external URL, a mail address or an absolute path is not one)."""
    found = []
    raw = text.splitlines()
    for number, masked in _prose_lines(text):
        for m in LINK.finditer(masked):
            written = raw[number - 1][m.start():m.end()]
            inner = LINK.fullmatch(written)
            if inner is None:
                continue
            target = inner.group(2)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
                continue
            found.append((number, written, inner.group(1), target))
    return found


def _check_tree_link(path: str, anchor: str) -> str | None:
    """Why a link to ``path`` (relative to the source tree's root) with ``anchor`` is
    broken, or None."""
    if path.startswith("../") or path == "..":
        return "leaves the source tree"
    target = ROOT / path
    if not target.exists():
        return f"no {path} in the source tree"
    if anchor:
        if target.suffix != ".md" or not target.is_file():
            return f"an anchor into {path}, which is not Markdown"
        if anchor not in markdown_anchors(target):
            return f"no heading of {path} has the anchor #{anchor}"
    return None


# ------------------------------------------------------------------------ the hooks

def on_config(config: Any) -> Any:
    config.mdx_configs.setdefault("toc", {})["slugify"] = github_slug
    return config


def on_files(files: Any, config: Any) -> Any:
    global _files
    _files = files
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Check the page's links out of docs/, and show them as text; check the packages'
    table of docs/dependencies.md."""
    src = page.file.src_uri
    if Path(page.file.abs_src_path) == PACKAGES_PAGE:
        problem = packages_table_problem(markdown)
        if problem:
            log.warning("Doc file '%s': %s", src, problem)
    replacements: dict[str, str] = {}
    for number, written, text, target in links(markdown):
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(src), path)) if path else src
        if not resolved.startswith("../"):
            continue                              # a page's link: MkDocs checks it
        problem = _check_tree_link(resolved[3:], anchor)
        if problem:
            log.warning("Doc file '%s' line %d: link '%s': %s", src, number, target, problem)
        replacements[written] = text
    for written, text in replacements.items():
        markdown = markdown.replace(written, text)
    return markdown


def on_post_build(config: Any) -> None:
    """README.md's and CONTRIBUTING.md's relative links, checked against the tree and the
    built pages' anchors."""
    docs_dir = Path(config.docs_dir).resolve()
    for name in FRONT:
        front = ROOT / name
        for number, _, _, target in links(front.read_text(encoding="utf-8")):
            path, _, anchor = target.partition("#")
            where = f"{name} line {number}: link '{target}'"
            if not path:
                if anchor not in markdown_anchors(front):
                    log.warning("%s: no heading of %s has that anchor", where, name)
                continue
            resolved = posixpath.normpath(path)
            absolute = (ROOT / resolved).resolve()
            if absolute.is_relative_to(docs_dir) and absolute.suffix == ".md":
                uri = absolute.relative_to(docs_dir).as_posix()
                file = _files.get_file_from_path(uri) if _files is not None else None
                if file is None or file.page is None:
                    log.warning("%s: %s is not a page of the site", where, resolved)
                elif anchor and anchor not in (file.page.present_anchor_ids or set()):
                    log.warning("%s: the page %s has no anchor #%s", where, uri, anchor)
                continue
            problem = _check_tree_link(resolved, anchor)
            if problem:
                log.warning("%s: %s", where, problem)


# ------------------------------------------------------------------- the packages' table

def packages_table() -> str:
    """``scripts/install-deps --table``: scripts/packages.tsv as a Markdown table."""
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-deps"), "--table"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"scripts/install-deps --table failed: {proc.stderr.strip()}")
    return proc.stdout


def packages_table_problem(markdown: str) -> str | None:
    """What is wrong with the page's copy of the table, or None when it is current."""
    if BEGIN not in markdown or END not in markdown:
        return f"no table of scripts/packages.tsv between '{BEGIN}' and '{END}'"
    shown = markdown.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")
    if shown != packages_table().strip("\n"):
        return ("its table of system packages is not scripts/packages.tsv's: "
                "python3 scripts/mkdocs_hooks.py --refresh")
    return None


def refresh() -> None:
    """Rewrite docs/dependencies.md's table from scripts/packages.tsv."""
    text = PACKAGES_PAGE.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    PACKAGES_PAGE.write_text(f"{head}{BEGIN}\n{packages_table()}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--refresh"]:
        sys.exit("usage: python3 scripts/mkdocs_hooks.py --refresh   "
                 "(docs/dependencies.md's table from scripts/packages.tsv)")
    refresh()
