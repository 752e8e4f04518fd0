"""``kcross compare A B [C...]``: is B different from A?  The argument forms are in EPILOG."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.text import Text

from .options import stores

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
  are.  The first side is the base; each later side is compared with it.

verdict (default format): each side's median with its distribution-free 95% CI; the
  ratio of medians new/base with a bootstrap 95% CI; Mann-Whitney U, two-sided, with
  Holm-Bonferroni across every comparison of the table; benchstat's '~' when the
  adjusted p is not below 0.05; a geomean row when there are several benchmarks.
  Samples are the overhead-corrected ones 'kcross show' summarises.  Plain numbers
  have no unit and go with either; ns/op and instructions/op never mix.
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
PARENTS = ("db",)


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
    from .. import export

    export.add_option(p, "the comparison: every side's samples and the verdicts")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .. import compare
    from ..errors import UserError

    if len(args.sides) < 2:
        raise UserError("compare needs at least two sides: A B [C...] (see 'kcross compare "
                        "--help')")
    from .. import export

    exports = export.requested(args, reads=args.sides)  # checked before anything is read
    with stores(args.db, hint=" (a SIDE that is not an existing file is a run reference)") \
            as opened:
        sides = compare.load_sides(args.sides, opened.reading, bench=args.bench)
    differ = compare.fingerprint_differences(sides)
    if differ:
        message = ("the sides' fingerprints differ in " + ", ".join(differ)
                   + ": their figures come from different machines or settings")
        if args.strict:
            raise UserError(message + " (--strict)")
        err.print(Text(f"kcross: warning: {message}"), soft_wrap=True)
    # The verdicts: for the table, and for the exports whatever the format shown.
    table = compare.build_table(sides) if exports or args.format != "ministat" else None
    if exports:
        assert table is not None
        data = export.ExportData(
            series=[s for side in sides for s in side.series],
            rows=[export.ComparisonRow(name, line[0].series, cell.series, cell.verdict,
                                       cell.error)
                  for name, line in table.rows if line[0] is not None
                  for cell in line[1:] if cell is not None])
        for fmt, path in exports:
            export.write(fmt, path, data)
        if any(path == export.STDOUT for _, path in exports):
            return 0
    if args.format == "ministat":
        text, errors = compare.ministat_text(sides, float(args.confidence))
        out.file.write(text)
        for line in errors:
            err.print(Text(f"kcross: {line}"), soft_wrap=True)
        return 0
    assert table is not None
    judged = [c for _, line in table.rows for c in line[1:] if c is not None]
    if judged and all(c.verdict is None for c in judged):
        first = next(c.error for c in judged if c.error)
        if len(table.rows) == 1:
            raise UserError(f"{table.rows[0][0]}: {first}")
        raise UserError(f"no benchmark could be judged; the first: {first}")
    for note in table.notes:
        err.print(Text(f"kcross: warning: {note}"), soft_wrap=True)
    if args.format == "benchstat":
        out.file.write(compare.benchstat_text(table))
    else:
        out.print(compare.default_table(table))
    for line in compare.missing_lines(table):
        out.print(Text(line), soft_wrap=True)
    return 0
