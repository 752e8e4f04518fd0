"""One command table (perf's: tools/perf/perf.c): every subcommand is a module
kcross/cli/NAME.py, registered the same way, and nothing registers commands elsewhere."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from conftest import PYTHON_DIR, isolated_env
from kcross import cli

CLI_DIR = PYTHON_DIR / "kcross" / "cli"


def test_every_command_module_is_in_the_table_and_back() -> None:
    modules = {p.stem for p in CLI_DIR.glob("*.py")
               if not p.stem.startswith("_") and p.stem != "options"}
    assert modules == {name.replace("-", "_") for name in cli.COMMANDS}


def test_every_command_has_the_interface() -> None:
    for name in cli.COMMANDS:
        module = cli.command(name)
        assert isinstance(module.HELP, str) and module.HELP, name
        assert callable(module.arguments) and callable(module.main), name
        assert set(getattr(module, "PARENTS", ())) <= {"db", "harness", "json"}, name


def test_the_parser_is_the_table() -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(cli.COMMANDS)
    for name, p in sub.choices.items():
        assert p.get_default("func") is cli.command(name).main, name


def test_nothing_else_registers_subcommands() -> None:
    """add_parser (argparse's subparser factory) is called in the table's loop only."""
    offenders = []
    for path in (PYTHON_DIR / "kcross").rglob("*.py"):
        if path == CLI_DIR / "__init__.py":
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(r"\.add_parser\(|add_subparsers\(", line):
                offenders.append(f"{path.relative_to(PYTHON_DIR)}:{lineno}")
    assert offenders == []


def test_store_opening_is_written_once() -> None:
    """The command modules open stores through kcross.store.opening (Stores, stores,
    store_for_writing), not Store.open."""
    offenders = [f"{p.name}: {m.group(0)}" for p in CLI_DIR.glob("*.py")
                 if p.name != "options.py"
                 for m in re.finditer(r"Store\.open(_existing)?\(", p.read_text())]
    # kcross run opens lazily (nothing created before the first record), push/pull open
    # two stores in a fixed order: their own reasons, named in their modules.
    allowed = {"run.py: Store.open(", "_transfer.py: Store.open("}
    assert set(offenders) <= allowed


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def _shape(action: argparse.Action) -> tuple:
    return (type(action), tuple(action.option_strings), action.dest, repr(action.default),
            action.nargs, repr(action.choices), action.required, action.help)


def test_a_commands_own_parser_is_the_tables() -> None:
    """`kcross NAME ...` builds NAME's parser alone (a faster start): its help, options and
    defaults are the whole table's, and it parses a command line the same way."""
    whole = cli.build_parser()
    for name in cli.COMMANDS:
        alone = cli.build_parser(only=name)
        mine, table = _subparser(alone, name), _subparser(whole, name)
        assert mine.format_help() == table.format_help(), name
        assert [_shape(a) for a in mine._actions] == [_shape(a) for a in table._actions], name
        assert mine._defaults.keys() == table._defaults.keys(), name


def test_a_start_naming_its_command_imports_no_other(tmp_path: Path) -> None:
    """`kcross runs` imports kcross.cli.runs and none of the 22 other command modules."""
    code = ("import sys; from kcross.cli import main\n"
            "try:\n    main(['runs', '--db', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('kcross.cli.')))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "k.db")],
                         capture_output=True, text=True, env=isolated_env(tmp_path), check=True).stdout
    loaded = out.strip().splitlines()[-1]
    commands = {name for name in re.findall(r"'kcross\.cli\.([a-z_]+)'", loaded)
                if not name.startswith("_") and name != "options"}
    assert commands == {"runs"}, loaded
