"""``kcross check``: fail (exit 1) when a run is significantly slower than a baseline."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.text import Text

from .. import numtext
from ..errors import shown
from .options import stores

DESCRIPTION = """\
Compare CURRENT (default: latest) with the baseline REF, benchmark by benchmark,
and exit 1 when any benchmark is a regression. Each side is a stored run
(id, latest, latest~N, a tag, latest@HOST) or a file of 'kcross-harness run
--json' output, e.g. a baseline committed to the repository for CI."""

EPILOG = """\
the rule:
  Each benchmark on both sides is tested with Mann-Whitney U (two-sided),
  Holm-Bonferroni adjusted across all benchmarks compared; its size is the
  ratio current/base of the medians with a 95% bootstrap CI. A benchmark is a
  regression when it is significant (adjusted p < 0.05) AND the LOW END of its
  ratio's CI is above 1 + PCT/100: the data show, with 95% confidence, a
  slowdown larger than PCT. The point ratio is not used for failing: a noisy
  benchmark's point ratio exceeds the tolerance now and then with no real
  change, and a gate that fails on noise gets ignored. Such a benchmark is
  shown as 'slower' and does not fail; so is a real slowdown smaller than PCT.
  Improvements never fail. Lower is better in both units (ns/op and a lab's
  instructions/op); two sides in different units are refused.

  Two separate runs differ by more than either run's own noise (the test and
  the CI see only the latter): choose PCT above the run-to-run drift of the
  machine the gate runs on (check repeated runs of one build against each
  other). On the development VM under load, 7 consecutive pairs of real
  syscall-suite runs of one build failed twice at PCT 5, once at 8, never at
  10. Instruction counts of a lab run (counting mode) do not drift.

verdicts:
  regression   significant, CI low end above 1 + PCT/100 (fails)
  slower       significant, not shown to exceed the tolerance
  improvement  significantly faster
  ~            no difference shown
  error        on both sides but cannot be judged (e.g. too few samples)
  missing      in the baseline, not judged in CURRENT (absent, skipped or failed there)
  new          only in CURRENT

exit status:
  0  no regression (and, with --missing fail, every baseline benchmark judged)
  1  a regression (or, with --missing fail, a baseline benchmark not judged)
  2  bad input: a reference or file that does not exist or cannot be read,
     no benchmark in common, different units (one line on stderr)"""


# The gate's options (kcross.gate takes them as arguments; not imported from there so that
# building the parser does not load numpy).
DEFAULT_MAX_REGRESSION = 5.0  # percent
MISSING_POLICIES = ("warn", "fail")


def _percent(text: str) -> float:
    value = numtext.decimal(text, 0, 1000)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to 1000, not "
                                         f"{shown(text)}")
    return value


HELP = "exit 1 when a run is significantly slower than a baseline (CI gate)"
PARENTS = ("db",)


def arguments(p: argparse.ArgumentParser, common: Any) -> None:
    p.add_argument("current", nargs="?", default="latest", metavar="CURRENT",
                   help="the run to judge: a run reference or a harness JSON-lines file "
                        "(- for stdin); default latest")
    p.add_argument("--baseline", required=True, metavar="REF",
                   help="the baseline: a run reference or a harness JSON-lines file")
    p.add_argument("--max-regression", type=_percent, default=DEFAULT_MAX_REGRESSION,
                   metavar="PCT",
                   help="tolerated slowdown in percent (default %(default)g): a benchmark fails "
                        "when its ratio's CI low end exceeds 1 + PCT/100")
    p.add_argument("--missing", choices=MISSING_POLICIES, default="warn",
                   help="a baseline benchmark that CURRENT lacks, skipped or failed, or that "
                        "cannot be judged: list it (warn, default) or fail the check (fail)")
    p.add_argument("--format", choices=("plain", "markdown"), default="plain",
                   help="plain: a table for a terminal, a CI log or a patch mail (ASCII, no "
                        "colour, when not a terminal); markdown: for a pull request")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import gate
    from ..errors import KcrossError

    if args.baseline == "-" and args.current == "-":
        raise KcrossError("the baseline and the current run cannot both be stdin")
    with stores(args.db) as opened:
        base = gate.load_side(args.baseline, opened.reading)
        current = gate.load_side(args.current, opened.reading)
    outcome = gate.check(base, current, max_regression=args.max_regression / 100,
                         missing=args.missing)
    if args.format == "markdown":
        out.print(Text(gate.markdown(outcome)), end="", soft_wrap=True)
    else:
        ascii_only = not out.is_terminal
        out.print(Text(gate.title(outcome)), soft_wrap=True)
        out.print(gate.table(outcome, ascii_only=ascii_only))
        for line in gate.legend(outcome):
            out.print(Text(line), soft_wrap=True)
        out.print(Text(outcome.summary(), style="" if ascii_only else
                       ("bold red" if outcome.failed else "green")), soft_wrap=True)
    return 1 if outcome.failed else 0
