"""``kcross check``: fail (exit 1) when a run is significantly slower than a baseline."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .. import numtext
from ..errors import shown
from ..judge.categories import MISSING_POLICIES
from ..views.lines import print_json

if TYPE_CHECKING:
    from rich.console import Console

DESCRIPTION = """\
Compare CURRENT (default: latest) with the baseline REF, benchmark by benchmark,
and exit 1 when any benchmark is a regression. Each side is a stored run
(id, latest, latest~N, a tag, latest@HOST) or a file of 'kcross-harness run
--json' output, e.g. a baseline committed to the repository for CI."""

EPILOG = """\
the rule (kcross.judge, the same verdicts as 'kcross compare'):
  exact counts (a lab's instructions/op): compared by value; a regression when
    higher by more than PCT percent; under 1 instruction per op apart: the timer's
    share, no change (never a regression).
  timings of several processes per side ('kcross run --processes K'): the ratio
    current/base of the medians with Student's t over the processes; between two
    separate runs the machine's run-to-run noise of the benchmark is included when
    the store knows it (from its other runs of this machine, or 'kcross aa').  A
    regression when shown higher (Holm-adjusted p < 0.05 and the CI excludes 1)
    AND the LOW END of the ratio's CI is above 1 + PCT/100: the data show, with
    95% confidence, a slowdown larger than PCT.  The point ratio is not used for
    failing: a gate that fails on noise gets ignored.
  two separate runs whose run-to-run noise is not known (no history of this
    machine, one process per side): the verdict cannot see run-to-run variation,
    so the gate goes by the tolerance alone: a regression when the CI's low end is
    above 1 + PCT/100.  Choose PCT above the machine's drift, or give the store a
    history ('kcross aa BENCH', or repeated runs).
  Improvements never fail.  Lower is better in both units (ns/op and a lab's
  instructions/op); two sides in different units are refused.  Each row shows the
  smallest change it could detect (80% power): a PASS says nothing smaller.

verdicts:
  regression          beyond the tolerance (fails)
  slower / more ...   shown higher, not shown beyond the tolerance
  faster / fewer ...  shown lower
  ~                   no difference shown (timings)
  identical           the same count (exact)
  not judged          on both sides but cannot be judged (e.g. too few samples)
  missing             in the baseline, not judged in CURRENT (absent, skipped or failed there)
  new                 only in CURRENT

exit status:
  0  no regression (and, with --missing fail, every baseline benchmark judged)
  1  a regression (or, with --missing fail, a baseline benchmark not judged)
  2  bad input: a reference or file that does not exist or cannot be read,
     no benchmark in common, different units (one line on stderr)"""


DEFAULT_MAX_REGRESSION = 5.0  # percent


def _percent(text: str) -> float:
    value = numtext.decimal(text, 0, 1000)
    if value is None:
        raise argparse.ArgumentTypeError(f"must be a percentage from 0 to 1000, not "
                                         f"{shown(text)}")
    return value


HELP = "exit 1 when a run is significantly slower than a baseline (CI gate)"
PARENTS = ("db", "json")


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

    from .. import sides
    from ..errors import KcrossError
    from ..judge.comparison import history_noise
    from ..judge.gate import check
    from ..views import check as view
    from ..views.table import show

    if args.baseline == "-" and args.current == "-":
        raise KcrossError("the baseline and the current run cannot both be stdin")
    from ..store import stores

    with stores(args.db) as opened:
        base = sides.load_run(args.baseline, opened.reading)
        current = sides.load_run(args.current, opened.reading)
        noise = history_noise(opened.reading_or_none(), [*base.series, *current.series])
        outcome = check(base, current, max_regression=args.max_regression / 100,
                        missing=args.missing, noise=noise)
    if args.json:
        print_json([view.json_record(outcome)])
    elif args.format == "markdown":
        out.file.write(view.markdown(outcome))
    else:
        ascii_only = not out.is_terminal
        show(out, view.table(outcome), ascii_only=ascii_only)
        out.print(view.summary(outcome, ascii_only))
    return 1 if outcome.failed else 0
