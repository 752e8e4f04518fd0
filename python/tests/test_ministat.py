"""`kcross compare --format ministat` against the real ministat (Debian package `ministat`).

Every generated data set is written to files, given to ``ministat -A`` (statistics and
the Student's t lines, no plot) and to kcross; the printed lines must be the same.  The
one place they may differ is where ministat's own arithmetic loses its digits: it
computes the variance as (sum x^2 - (sum x)^2 / n) / (n - 1), which cancels to noise
for a tiny spread on a large offset (and to -nan for equal values).  There the test
computes the exact figures with fractions, requires kcross to print those, and requires
that ministat indeed did not.
"""

from __future__ import annotations

import math
import random
import shutil
import struct
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import HANG
from kcross import sides as compare
from kcross import stats
from kcross.errors import UserError
from kcross.views import ministat_report

MINISTAT = shutil.which("ministat")
needs_ministat = pytest.mark.skipif(MINISTAT is None, reason="ministat is not installed "
                                    "(Debian package 'ministat')")


def _write(tmp_path: Path, name: str, values: list[float]) -> Path:
    path = tmp_path / name
    path.write_text("".join(f"{v!r}\n" for v in values))
    return path


def _no_store() -> None:
    raise AssertionError("a file side must not open the store")


def _ours(paths: list[Path], level: str = "95") -> str:
    sides = compare.load_sides([str(p) for p in paths], _no_store)  # type: ignore[arg-type]
    text, errors = ministat_report.ministat_text(sides, float(level))
    assert errors == []
    return text


def _theirs(paths: list[Path], level: str = "95") -> str:
    assert MINISTAT is not None
    proc = subprocess.run([MINISTAT, "-A", "-c", level, *map(str, paths)],
                          capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _exact(values: list[float]) -> tuple[float, float, Fraction]:
    """Mean, standard deviation (n - 1) and the exact variance, from fractions."""
    xs = [Fraction(v) for v in values]
    n = len(xs)
    mean = sum(xs, Fraction(0)) / n
    var = sum(((x - mean) ** 2 for x in xs), Fraction(0)) / (n - 1)
    return float(mean), math.sqrt(var), var


def _is_vitals(line: str) -> bool:
    return line[:1] in ministat_report.MINISTAT_SYMBOLS and line[2:5].strip().isdigit()


def _vitals_line(line: str) -> list[str]:
    return line.split()


def _check(tmp_path: Path, sets: list[list[float]], level: str = "95") -> list[str]:
    """Compare both outputs line by line; return the notes on where ministat lost digits."""
    paths = [_write(tmp_path, f"set{i}", s) for i, s in enumerate(sets)]
    ours, theirs = _ours(paths, level), _theirs(paths, level)
    if ours == theirs:
        return []
    # Where they differ, the difference must be ministat's cancellation, and ours exact.
    notes = []
    exact = [_exact(s) for s in sets]
    our_lines, their_lines = ours.splitlines(), theirs.splitlines()
    assert len(our_lines) >= len(sets) + 2
    vit_ours = [ln for ln in our_lines if _is_vitals(ln)]
    vit_theirs = [ln for ln in their_lines if _is_vitals(ln)]
    for (mean, sd, _), mine, its in zip(exact, vit_ours, vit_theirs, strict=True):
        m, t = _vitals_line(mine), _vitals_line(its)
        assert m[:6] == t[:6] or m[:5] == t[:5], (mine, its)  # N Min Max Median (Avg) agree
        assert m[5] == f"{mean:.8g}", (mine, mean)
        assert m[6] == f"{sd:.8g}", (mine, sd)
        if t[6] != m[6]:
            notes.append(f"ministat's stddev {t[6]}, exact {m[6]}")
    assert notes, f"outputs differ although ministat's figures are exact:\n{ours}\n{theirs}"
    # The Student's t lines from the exact figures.
    base_mean, _, base_var = exact[0]
    for (mean, _, var), values in zip(exact[1:], sets[1:], strict=True):
        n1, n2 = len(sets[0]), len(values)
        pooled = math.sqrt(((n1 - 1) * base_var + (n2 - 1) * var) / (n1 + n2 - 2))
        half = stats.ministat_t(n1 + n2 - 2, float(level)) * pooled * math.sqrt(1 / n1 + 1 / n2)
        if abs(mean - base_mean) > half:
            assert f"\t(Student's t, pooled s = {pooled:g})" in our_lines
        else:
            assert f"No difference proven at {float(level):.1f}% confidence" in our_lines
    return notes


def _gauss(seed: int, n: int, mu: float, sigma: float) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(mu, sigma) for _ in range(n)]


def _lognormal(seed: int, n: int, mu: float, sigma: float) -> list[float]:
    rng = random.Random(seed)
    return [rng.lognormvariate(mu, sigma) for _ in range(n)]


CASES = {
    "three each": [[1.0, 2.0, 3.0], [2.0, 3.0, 5.0]],
    "small unequal sizes": [_gauss(1, 5, 100, 3), _gauss(2, 7, 104, 3)],
    "ties": [[float(x) for x in random.Random(3).choices(range(10, 14), k=40)],
             [float(x) for x in random.Random(4).choices(range(11, 14), k=31)]],
    "clear difference": [_gauss(5, 30, 100, 1), _gauss(6, 30, 110, 1)],
    "huge variance": [_lognormal(7, 50, 0.0, 3.0), _lognormal(8, 50, 0.2, 3.0)],
    "n over 100": [_gauss(9, 150, 100, 3), _gauss(10, 120, 101, 3)],
    "df 99": [_gauss(11, 60, 50, 2), _gauss(12, 41, 51, 2)],
    "df 100": [_gauss(13, 51, 50, 2), _gauss(14, 51, 51, 2)],
    "df 101": [_gauss(15, 52, 50, 2), _gauss(16, 51, 51, 2)],
    "identical sets": [_gauss(17, 25, 7, 1)] * 2,
    "three sets": [_gauss(18, 20, 10, 1), _gauss(19, 20, 10.5, 1), _gauss(20, 20, 9, 1)],
    "negative values": [_gauss(21, 12, -5, 2), _gauss(22, 12, 1, 2)],
    "integers": [[float(x) for x in range(1, 31)], [float(x) for x in range(3, 40)]],
}

# ministat's variance cancels here; kcross's stays exact.
CANCELLING = {
    "huge offset": [_gauss(23, 20, 1e9, 1e-3), _gauss(24, 20, 1e9, 2e-3)],
    "tiny variance": [_gauss(25, 30, 1000, 1e-7), _gauss(26, 30, 1000, 1e-7)],
    "constant 0.1": [[0.1] * 5, [0.1] * 5],
}


@needs_ministat
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_output_as_ministat(tmp_path: Path, case: str) -> None:
    notes = _check(tmp_path, CASES[case])
    assert notes == [], f"{case}: {notes}"


@needs_ministat
@pytest.mark.parametrize("case", sorted(CANCELLING))
def test_exact_where_ministat_cancels(tmp_path: Path, case: str) -> None:
    notes = _check(tmp_path, CANCELLING[case])
    print(f"{case}: {'; '.join(notes)}")  # what ministat printed instead
    assert notes, f"{case}: expected ministat's sum-of-squares variance to lose digits here"


@needs_ministat
@pytest.mark.parametrize("level", ["80", "90", "95", "98", "99", "99.5"])
def test_each_confidence_level(tmp_path: Path, level: str) -> None:
    # A difference near the edge, so that the levels disagree about it.
    sets = [_gauss(30, 12, 100, 2), _gauss(31, 12, 101.6, 2)]
    assert _check(tmp_path, sets, level) == []


@needs_ministat
def test_levels_reach_both_verdicts(tmp_path: Path) -> None:
    sets = [_gauss(30, 12, 100, 2), _gauss(31, 12, 101.6, 2)]
    paths = [_write(tmp_path, f"s{i}", s) for i, s in enumerate(sets)]
    verdicts = {level: "Difference at" in _ours(paths, level)
                for level in ("80", "90", "95", "98", "99", "99.5")}
    assert verdicts["80"] and not verdicts["99.5"], verdicts


def test_t_table_is_ministats() -> None:
    """kcross's t table against the one compiled into /usr/bin/ministat (doubles in .data)."""
    if MINISTAT is None:
        pytest.skip("ministat is not installed (Debian package 'ministat')")
    blob = Path(MINISTAT).read_bytes()
    start = blob.find(struct.pack("<2d", 1.282, 1.645))  # the table's first row (df = inf)
    if start < 0 or sys.byteorder != "little":
        pytest.skip("ministat's t table not found in the binary (another build?)")
    rows = struct.unpack(f"<{101 * 6}d", blob[start:start + 101 * 6 * 8])
    for df in range(1, 102):
        row = 0 if df > stats.MINISTAT_MAX_DF else df
        for j, level in enumerate(stats.MINISTAT_LEVELS):
            assert stats.ministat_t(df, level) == rows[row * 6 + j], (df, level)


def test_stable_variance_with_huge_offset() -> None:
    noise = _gauss(40, 1000, 0, 1e-3)
    for offset in (0.0, 1e6, 1e9, 1e12):
        _, sd, _ = _exact([offset + x for x in noise])
        mean, var = stats.stable_variance([offset + x for x in noise])
        assert math.isclose(math.sqrt(var), sd, rel_tol=1e-9), offset
    # The textbook one-pass formula (ministat's) has nothing left at 1e9.
    xs = [1e9 + x for x in noise]
    naive = (sum(x * x for x in xs) - sum(xs) ** 2 / len(xs)) / (len(xs) - 1)
    assert not math.isclose(naive, _exact(xs)[1] ** 2, rel_tol=0.5)


def test_vitals_median_is_the_upper_one() -> None:
    v = stats.vitals([4.0, 1.0, 3.0, 2.0])
    assert (v.n, v.min, v.max, v.median, v.avg) == (4, 1.0, 4.0, 3.0, 2.5)


def test_too_few_values_is_an_error(tmp_path: Path) -> None:
    paths = [_write(tmp_path, "a", [1.0, 2.0]), _write(tmp_path, "b", [1.0, 2.0, 3.0])]
    sides = compare.load_sides([str(p) for p in paths], _no_store)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="at least 3"):
        ministat_report.ministat_text(sides)


def test_unknown_level_is_refused() -> None:
    with pytest.raises(stats.StatsError, match="no 97% level"):
        stats.ministat_t(10, 97.0)
