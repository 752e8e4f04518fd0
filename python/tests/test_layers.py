"""The layers of kcross and the directions its imports may run: one table, LAYERS, from
the bottom up.  A module may import modules of its own layer and of the layers below it,
never of one above: nothing imports the command line (but kcross/__main__.py, which starts
it), the store nothing above the foundations, the judge no view and no feature, a view no
feature.  No import circle runs between modules, nor between packages.  Every import counts:
absolute or relative, at a module's top, inside a function, for types only
(``TYPE_CHECKING``).  An import that runs the wrong way today and cannot simply be turned
is an EXCEPTION, named with its reason: never silent, and removed with the import.

Below the command line nothing sees it either: outside kcross/cli/ (and __main__) no module
imports argparse (ONLY): a command's module turns its arguments into a typed request, what
runs it takes that.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

KCROSS = Path(__file__).resolve().parents[1] / "kcross"

# The layers, from the bottom up: (name, its modules and packages, what it holds).  A
# package's entry covers its modules; "kcross" is the package's own __init__ alone.
LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("foundations",
     ("kcross", "kcross.errors", "kcross.numtext", "kcross.stats", "kcross.special",
      "kcross.schema", "kcross.compiled_schema", "kcross._result_format_check",
      "kcross.infile", "kcross.series", "kcross.fingerprint", "kcross.forcings",
      "kcross.environment"),
     "errors and exit statuses, numbers as typed, the statistics and their distributions, "
     "the result format (and its compiled check), files read whole, sample series, the "
     "machine identity, the harness's settings, kcross's own environment"),
    ("store", ("kcross.store",),
     "the result database: runs read, written and copied"),
    ("io", ("kcross.importer", "kcross.sides", "kcross.outfile"),
     "over the store: captures checked and stored, the sides of a comparison, the files "
     "kcross writes"),
    ("judge", ("kcross.judge",),
     "does B differ from A, is it the same machine"),
    ("views", ("kcross.views",),
     "what a person reads: the output vocabulary, the one table model and its dialects, the "
     "views of the result objects; they compute nothing"),
    ("features",
     ("kcross.run", "kcross.rounds", "kcross.history", "kcross.export", "kcross.report",
      "kcross.lab", "kcross.lava", "kcross.reproduce"),
     "what the commands do: run, the interleaved rounds, history, the exports, the HTML "
     "report, the QEMU labs, LAVA, the published experiments"),
    ("cli", ("kcross.cli", "kcross.__main__"),
     "the command line: parses, builds a request, calls, prints"),
)

# Imports that run the wrong way, (importer, imported): why each stands.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("kcross.views.history", "kcross.history.trend"):
        "shows the trend's Trend, TrendRow and Point, defined with its computation",
    ("kcross.views.profile", "kcross.lab.profile"):
        "shows the lab profile's BenchProfile and TraceLine, defined with their computation",
    ("kcross.views.profile", "kcross.lab.profile_diff"):
        "shows a ProfileDiff (and how many per-op lines it keeps), defined with its "
        "computation",
    ("kcross.views.reproduce", "kcross.reproduce.experiments"):
        "lists the experiments of reproduce's table (Experiment)",
    ("kcross.views.reproduce", "kcross.reproduce.outcome"):
        "shows reproduce's Outcome and its rows, defined with their computation",
    ("kcross.views.rounds", "kcross.rounds.ab"):
        "types only: shows ab's ABResult, defined with the rounds that make it",
    ("kcross.views.rounds", "kcross.rounds.aa"):
        "types only: shows aa's Result and Rate, defined with the rounds that make them",
    ("kcross.views.rounds", "kcross.rounds.crosscheck"):
        "types only: shows crosscheck's CheckResult, defined with the rounds that make it",
    ("kcross.views.peers", "kcross.lab.peers"):
        "types only: shows the lab's PeersBeside, defined with its computation",
    ("kcross.views.explain", "kcross.lab.explain"):
        "types only: shows the lab's Explained and its rows, defined with their computation",
    ("kcross.views.readiness", "kcross.run.readiness"):
        "types only: shows readiness's Finding, defined with the checks that make it",
}

# Modules only these layers' members may import, whatever the direction.
ONLY: dict[str, tuple[str, ...]] = {
    "argparse": ("kcross.cli", "kcross.__main__"),
}


@dataclass(frozen=True)
class Import:
    line: int
    name: str        # the module imported (a name inside one: that module)


def module_name(path: Path) -> str:
    parts = path.relative_to(KCROSS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tree_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(KCROSS.rglob("*.py"))}


def imports(source: str, module: str, package: bool, modules: Iterable[str]) -> list[Import]:
    """Every import of ``source`` (the module ``module``; ``package``: its __init__), wherever
    it stands, as the module it loads: ``from M import N`` is M.N if that is a module, else
    M; other modules (the standard library's...) as written."""
    known = set(modules)

    def loaded(name: str) -> str:
        if not name.startswith("kcross"):
            return name
        while name not in known and "." in name:
            name = name.rpartition(".")[0]
        return name

    here = module if package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, loaded(alias.name)) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here.split(".")[:len(here.split(".")) - node.level + 1] if node.level else []
            of = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                inner = f"{of}.{alias.name}"
                found.append(Import(node.lineno, inner if inner in known else loaded(of)))
    return [i for i in found if i.name != module]


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer whose entry covers ``module`` (None: no layer)."""
    for index, (_, members, _) in enumerate(LAYERS):
        for member in members:
            if module == member or (member != "kcross" and module.startswith(member + ".")):
                return index
    return None


def is_kcross(name: str) -> bool:
    return name == "kcross" or name.startswith("kcross.")


Graph = Mapping[str, list[Import]]


def graph(modules: Mapping[str, str], packages: Iterable[str] = ()) -> dict[str, list[Import]]:
    """module -> its imports, of sources given by module name (``packages``: those that
    are a package's __init__)."""
    inits = set(packages)
    return {m: imports(source, m, m in inits, modules) for m, source in modules.items()}


def the_tree() -> tuple[dict[str, list[Import]], dict[str, Path]]:
    paths = tree_modules()
    sources = {m: p.read_text() for m, p in paths.items()}
    return graph(sources, [m for m, p in paths.items() if p.name == "__init__.py"]), paths


def wrong_way(imports_of: Graph, where: Mapping[str, str]) -> list[str]:
    """Each import that runs up the layers and is no exception, or that ONLY refuses:
    ``file:line: what, the rule it breaks``."""
    found = []
    for module, found_imports in imports_of.items():
        mine = layer_of(module)
        for i in found_imports:
            at = f"{where.get(module, module)}:{i.line}"
            allowed = ONLY.get(i.name.partition(".")[0])
            if allowed is not None and not any(module == a or module.startswith(a + ".")
                                               for a in allowed):
                found.append(f"{at}: {module} imports {i.name}: only "
                             f"{', '.join(allowed)} may")
            if not is_kcross(i.name) or mine is None or (module, i.name) in EXCEPTIONS:
                continue
            theirs = layer_of(i.name)
            if theirs is not None and theirs > mine:
                found.append(f"{at}: {module} imports {i.name}: the {LAYERS[mine][0]} layer "
                             f"imports nothing of the {LAYERS[theirs][0]} layer above it")
    return sorted(found)


def circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles of a graph: for each group of nodes that import each other
    (a strongly connected component, Tarjan's), one circle through its first node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return [_circle_through(g[0], set(g), edges) for g in sorted(groups)]


def _circle_through(start: str, group: set[str], edges: Mapping[str, Iterable[str]]
                    ) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``group``."""
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                return [*paths[node], start]
            if nxt in group and nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                todo.append(nxt)
    raise AssertionError(f"no circle through {start}")


def module_circles(imports_of: Graph, where: Mapping[str, str]) -> list[str]:
    """Each circle of imports between modules, each step with its file and line."""
    edges = {m: sorted({i.name for i in found if i.name in imports_of})
             for m, found in imports_of.items()}
    shown = []
    for circle in circles(edges):
        steps = [f"{a} ({where.get(a, a)}:{next(i.line for i in imports_of[a] if i.name == b)})"
                 for a, b in zip(circle, circle[1:], strict=False)]
        shown.append(" -> ".join([*steps, circle[-1]]))
    return shown


def package_of(module: str) -> str:
    """What a package circle is made of: kcross's packages and its top modules."""
    return ".".join(module.split(".")[:2])


def package_circles(imports_of: Graph) -> list[str]:
    """Each circle between packages (kcross.X), named exceptions left out."""
    edges: dict[str, set[str]] = {}
    for module, found in imports_of.items():
        for i in found:
            if is_kcross(i.name) and package_of(i.name) != package_of(module) and \
                    (module, i.name) not in EXCEPTIONS:
                edges.setdefault(package_of(module), set()).add(package_of(i.name))
    return [" -> ".join(c) for c in circles({k: sorted(v) for k, v in edges.items()})]


def relative(paths: Mapping[str, Path]) -> dict[str, str]:
    return {m: str(p.relative_to(KCROSS.parent)) for m, p in paths.items()}


# ---------------------------------------------------------------- the tree

def test_every_module_is_in_one_layer_and_every_entry_is_a_module() -> None:
    modules = tree_modules()
    assert [m for m in modules if layer_of(m) is None] == []
    members = [m for _, ms, _ in LAYERS for m in ms]
    assert len(members) == len(set(members))
    assert [m for m in members if m not in modules] == []


def test_imports_run_down_the_layers() -> None:
    imports_of, paths = the_tree()
    assert wrong_way(imports_of, relative(paths)) == []


def test_no_import_circle_between_modules() -> None:
    imports_of, paths = the_tree()
    assert module_circles(imports_of, relative(paths)) == []


def test_no_import_circle_between_packages() -> None:
    imports_of, _ = the_tree()
    assert package_circles(imports_of) == []


def test_every_exception_is_an_import_that_still_runs_the_wrong_way() -> None:
    imports_of, _ = the_tree()
    standing = {(m, i.name) for m, found in imports_of.items() for i in found}
    assert [e for e in EXCEPTIONS if e not in standing] == []
    for module, imported in EXCEPTIONS:
        mine, theirs = layer_of(module), layer_of(imported)
        assert mine is not None and theirs is not None and theirs > mine, (module, imported)


# ---------------------------------------------------------------- the check itself

def planted(sources: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """What the checks say of the tree with ``sources`` (module -> text) added or put in
    place of a module's own: the wrong-way imports and the module circles."""
    paths = tree_modules()
    texts = {m: p.read_text() for m, p in paths.items()}
    texts.update(sources)
    inits = [m for m, p in paths.items() if p.name == "__init__.py"]
    imports_of = graph(texts, inits)
    return wrong_way(imports_of, relative(paths)), module_circles(imports_of, relative(paths))


@pytest.mark.parametrize("source", [
    "import argparse\n",
    "from argparse import Namespace\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import argparse\n",
    "def f():\n    from ..cli.options import number\n",
    "def f():\n    from .. import cli\n",
    "from kcross.cli import main\n",
    "import kcross.cli.options\n",
])
def test_the_check_sees_every_kind_of_import(source: str) -> None:
    """Absolute and relative, at the top, for types only, inside a function."""
    wrong, _ = planted({"kcross.lab.planted": source})
    assert [w for w in wrong if w.startswith("kcross.lab.planted:")], wrong


@pytest.mark.parametrize(("module", "source", "rule"), [
    ("kcross.store.planted", "from ..judge.machine import host\n",
     "the store layer imports nothing of the judge layer"),
    ("kcross.store.planted", "def f():\n    from kcross import sides\n",
     "the store layer imports nothing of the io layer"),
    ("kcross.judge.planted", "from ..views.lines import say\n",
     "the judge layer imports nothing of the views layer"),
    ("kcross.judge.planted", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                             "    from ..run.runner import RunRequest\n",
     "the judge layer imports nothing of the features layer"),
    ("kcross.views.planted", "from ..history.trend import trend\n",
     "the views layer imports nothing of the features layer"),
    ("kcross.series", "from .store import Store\n",
     "the foundations layer imports nothing of the store layer"),
])
def test_an_import_up_the_layers_fails_with_its_line_and_rule(module: str, source: str,
                                                               rule: str) -> None:
    wrong, _ = planted({module: source})
    where = relative(tree_modules()).get(module, module)
    assert [w for w in wrong if w.startswith(f"{where}:") and rule in w], wrong


def test_an_import_circle_fails_naming_it() -> None:
    _, found = planted({"kcross.lab.planted_a": "from . import planted_b\n",
                        "kcross.lab.planted_b": "def f():\n    from .planted_a import x\n"})
    assert found == ["kcross.lab.planted_a (kcross.lab.planted_a:1) -> "
                     "kcross.lab.planted_b (kcross.lab.planted_b:2) -> kcross.lab.planted_a"]
