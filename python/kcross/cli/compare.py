"""``kcross compare A B [C...]``: is B different from A?  The argument forms are in EPILOG."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .options import export_option

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("table", "ministat", "benchstat")
MINISTAT_LEVELS = ("80", "90", "95", "98", "99", "99.5")  # stats.MINISTAT_LEVELS, as typed

EPILOG = """\
sides (A, B, C...): each is one of
  RUN             a stored run: an id, latest, latest~N, a tag, latest@HOST (see 'kcross runs')
  RUN:BENCH       one benchmark of a stored run, e.g. latest:getppid-inline (a name,
                  suite/name or fnmatch glob); compare two benchmarks of one run with
                  'kcross compare latest:getppid-inline latest:getppid-dispatch'
  FILE            an existing file: a harness capture ('kcross-harness run --json',
                  'kcross show --json'; a name ending .json/.jsonl or a first line that
                  is a JSON record), else numbers one per line as ministat reads them
                  (fields split at blanks and tabs, '#' starts a comment, blank lines skipped)
  FILE:BENCH      one benchmark of a capture
  FILE:COL        column COL (1 = first) of a file of numbers, like ministat -C COL
  -               standard input (a capture or numbers; once)
  An argument that names an existing file is a file, whatever it looks like.

pairing: whole runs and captures are matched benchmark by benchmark (suite/name);
  a benchmark missing from a side is listed under the table.  When every side names
  one benchmark (RUN:BENCH, FILE:BENCH or a file of numbers) they are compared as they
  are.  The first side is the base; each later side is compared with it.  One lab
  machine's runs of several kernels ('kcross lab --release') are its release series:
  put in their kernels' order (the oldest the base), each side labelled by its kernel.

verdict (default format): each side's median with its 95% CI, the ratio of medians
  new/base with its 95% CI, the verdict and the smallest change the comparison can
  detect (80% power); a geomean row when there are several benchmarks.  Samples are
  the overhead-corrected ones 'kcross show' summarises.  Plain numbers have no unit
  and go with either; ns/op and instructions/op never mix.  The verdict, by the data:
  exact counts (a lab's instructions/op, or sides that are each a constant): by value,
    identical or changed by N (x%); never a p-value; instruction counts under 1 per op
    apart: the timer's share, no change (named under the table);
  runs of several processes ('kcross run --processes K'): Student's t on the log ratio
    over the processes' medians; between two separate runs, the machine's run-to-run
    noise of the benchmark is added when the store knows it (from the machine's other
    runs, or 'kcross aa'); the table says when it does not;
  one process per side (old and imported runs, files of numbers): Mann-Whitney U on the
    samples and the ratio's bootstrap CI, which see one process's noise only.
  Timings are tested together: Holm-Bonferroni across the table; a difference is shown
  when the adjusted p is below 0.05 and the ratio's CI excludes 1 ('~' otherwise).
--format ministat: ministat -A's numbers for the same samples (N, Min, Max, upper
  Median, Avg, Stddev; Student's t with pooled s at -c LEVEL), one block per benchmark;
  the plot is left out.  Stddev is computed stably, so it stays right where ministat's
  own sum-of-squares formula loses its digits (a large offset, a tiny spread).
--format benchstat: benchstat's table layout (golang.org/x/perf), kcross's verdicts.

warnings: when the sides come from different machines or settings, one line on stderr
  names the fingerprint fields that differ (--strict: refuse, exit status 2); and one
  line per benchmark whose empty-loop overhead was subtracted on one side only.

exit status: 0 compared (whatever the verdict); 2 bad input: unreadable file, unknown
  run or benchmark, different units, too few samples to judge anything."""


HELP = "compare runs, benchmarks or files of numbers (is B different from A?)"
DESCRIPTION = ("Compare two or more sides benchmark by benchmark: medians with their CIs, "
               "the ratio, and a verdict.")
PARENTS = ("db", "json")


def arguments(p: argparse.ArgumentParser, common: Any) -> None:
    p.add_argument("sides", nargs="+", metavar="SIDE",
                   help="A B [C...]: the base first (forms below)")
    p.add_argument("--bench", metavar="GLOB",
                   help="only benchmarks whose name or suite/name matches GLOB")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table (default), ministat or benchstat")
    p.add_argument("-c", "--confidence", choices=MINISTAT_LEVELS, default="95",
                   metavar="LEVEL",
                   help="--format ministat: ministat's confidence level, one of "
                        f"{', '.join(MINISTAT_LEVELS)} (default 95)")
    p.add_argument("--strict", action="store_true",
                   help="refuse (exit status 2) when the sides' fingerprints differ")
    export_option(p, "the comparison: every side's samples and the verdicts")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import export, sides
    from ..errors import UserError
    from ..judge.comparison import compare, history_noise
    from ..store import stores
    from ..views import comparison as view
    from ..views.lines import say
    from ..views.table import terminal

    if len(args.sides) < 2:
        raise UserError("compare needs at least two sides: A B [C...] (see 'kcross compare "
                        "--help')")
    exports = export.requested(args.export, db=args.db, json_output=args.json,
                               reads=args.sides)  # checked before anything is read
    with stores(args.db, hint=" (a SIDE that is not an existing file is a run reference)") \
            as opened:
        loaded = sides.load_sides(args.sides, opened.reading, bench=args.bench)
        # The verdicts (for the table, and for the exports whatever the format shown),
        # with the run-to-run noise of the sides' machines from the store, when it has
        # some.  Pairing refuses sides in different units before any warning is printed.
        result = compare(loaded, noise=history_noise(
            opened.reading_or_none(), [s for side in loaded for s in side.series])) \
            if exports or args.json or args.format != "ministat" else None
    ministat = None
    if args.format == "ministat":
        from ..views.ministat_report import ministat_text

        ministat = ministat_text(loaded, float(args.confidence))
    _warn_differences(loaded, args.strict, err)
    if args.json:   # the comparison record (docs/result-format.md), as --export json - writes
        exports = [*exports, ("json", export.STDOUT)]
    if exports:
        assert result is not None
        data = export.ExportData(series=[s for side in loaded for s in side.series],
                                 rows=result.judgements)
        for fmt, path in exports:
            export.write(fmt, path, data)
        if any(path == export.STDOUT for _, path in exports):
            return 0
    if ministat is not None:
        text, errors = ministat
        out.file.write(text)
        for line in errors:
            say(err, f"kcross: {line}")
        return 0
    assert result is not None
    judged = result.judgements
    if judged and all(j.error is not None for j in judged):
        if len(result.rows) == 1:
            raise UserError(f"{result.rows[0].name}: {judged[0].error}")
        raise UserError(f"no benchmark could be judged; the first: {judged[0].error}")
    for note in result.notes:
        say(err, f"kcross: warning: {note}")
    if args.format == "benchstat":
        from ..views.benchstat import benchstat_text

        out.file.write(benchstat_text(result, ascii_box=not out.is_terminal))
    else:
        out.print(terminal(view.table(result)))
    for line in view.missing_lines(result):
        say(out, line)
    return 0


def _warn_differences(loaded: Any, strict: bool, err: Console) -> None:
    """One line when the sides come from different machines or settings (--strict: refuse)."""
    from ..errors import UserError
    from ..judge.machine import differences_line
    from ..views.lines import say

    line = differences_line([side.fingerprint for side in loaded])
    if line is None:
        return
    if strict:
        raise UserError(line + " (--strict)")
    say(err, f"kcross: warning: {line}")
