"""The special functions of kcross.stats' distributions, computed here: the normal
distribution (ndtr, ndtri), Student's t (stdtr, stdtrit) and the binomial distribution
(bdtr), under scipy.special's names, with its arguments and its values.  Importing
scipy.special cost every comparison, history and report 0.15-0.3 s; these are pure Python
(math) on scalars, a few microseconds to a few milliseconds a call.

Accuracy, as relative error of a value of 1e-300 or more, in units in the last place (ulp,
2.2e-16; python/tests/test_special.py holds each function to it: against values computed
to 1,200 bits and exact integer sums, and to scipy.special within 1e-12 on grids over every
range kcross.stats asks):

- ndtr: 2 ulp.  The rounding of x/sqrt(2) is added back (to first order, exact to double
  precision): erfc(x/sqrt(2)) alone, like scipy's ndtr, errs by up to x^2/2 ulp (2e-13 at
  x = -37);
- ndtri: 2 ulp, p a unit from 1/2 and the tails alike;
- stdtr: 16 + t^2 ulp (below 30 degrees of freedom, 8 ulp): from 1e-14 at |t| = 6 to 7e-14
  at |t| = 37 and 1,000 degrees of freedom, where the value is 1e-190 and t^2 / df, which
  the figure is made of, is rounded (scipy's stdtr errs as much there);
- stdtrit: 10 ulp (2e-15) for p from 1e-12 to 1 - 1e-12, p a unit from 1/2 too (scipy's
  quantile there is only near 0); |log p| / df ulp beyond (7e-14 at p = 1e-300, df = 1);
- bdtr (p = 1/2): 32 + 2 |log v| + 2 sqrt(n) ulp for the value v: 1e-14 up to n = 1,000
  and 1e-13 at n = 100,000 where v is 1e-20 or more, 3e-13 in the far tails (scipy's bdtr:
  3e-10 at n = 100,000, its log-gamma terms losing digits).

Student's t and the binomial are regularized incomplete beta functions, I_x(a, b): its
continued fraction (DLMF 8.17.22) by the modified Lentz method, on the side where it
converges fast (x below (a + 1) / (a + b + 2); beyond, 1 - I_{1-x}(b, a)), and its factor
x^a (1-x)^b / B(a, b) as powers and gamma functions for small a + b and otherwise in
Loader's saddle-point form (Stirling's series' remainders and the deviances
a log(a / ((a+b) x)) - a + (a+b) x, summed as series near 0), which neither takes exp of a
large number nor loses digits in a difference of log-gammas.  Student's t's tail from 20
degrees of freedom on is an expansion in incomplete gamma functions instead (where x is near
1 the continued fraction would lose df/2 ulp to x's rounding).  The inverses are Halley's
method, safeguarded by a bracket, on residuals that keep their relative accuracy (near
p = 1/2 the distance from 1/2, exact in floating point; in a tail the log of the ratio).
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable

EPS = sys.float_info.epsilon

_HALF_LOG_2PI = 0.9189385332046728          # log(sqrt(2 pi))
_SQRT_2PI = 2.5066282746310007
_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_HALF = 0.7071067811865476             # 1/sqrt(2), rounded ...
_SQRT_HALF_LOW = -4.833646656726457e-17     # ... and what the rounding left out
_LOG_2 = math.log(2.0)
_LOG_MAX = math.log(sys.float_info.max)
_SPLIT = 134217729.0                        # 2^27 + 1: Veltkamp's split of a double in two


def _split(a: float) -> tuple[float, float]:
    """``a`` as the sum of two doubles of 26 significant bits each (Veltkamp)."""
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


_SQRT_HALF_HIGH, _SQRT_HALF_SPLIT_LOW = _split(_SQRT_HALF)


# --- the normal distribution ---------------------------------------------------------------

def ndtr(x: float) -> float:
    """The standard normal CDF at ``x``: erfc(-x / sqrt(2)) / 2, with the rounding of
    -x / sqrt(2) (Dekker's exact product, and 1/sqrt(2)'s own rounding) added back by the
    first-order term -2/sqrt(pi) exp(-z^2) dz, the second order being below a unit in the
    last place; above 0, 1 less that of -x.  Relative error 2 ulp (math.erfc's)."""
    x = float(x)
    if math.isnan(x):
        return math.nan
    if x > 0.0:                    # 1 less the upper tail: one rounding, at the end
        return 1.0 - ndtr(-x)
    z = -x * _SQRT_HALF
    tail = math.erfc(z)
    if tail == 0.0 or not abs(x) < 1e150:       # (beyond, the product would overflow)
        return 0.5 * tail
    high, low = _split(-x)
    rounding = (((high * _SQRT_HALF_HIGH - z) + high * _SQRT_HALF_SPLIT_LOW
                 + low * _SQRT_HALF_HIGH) + low * _SQRT_HALF_SPLIT_LOW)
    dz = rounding - x * _SQRT_HALF_LOW           # -x / sqrt(2) = z + dz, exactly enough
    return 0.5 * (tail - _TWO_OVER_SQRT_PI * math.exp(-z * z) * dz)


# Hastings' rational approximation of the normal quantile (Abramowitz and Stegun 26.2.23,
# error below 4.5e-4): where Halley's method starts.
_HASTINGS_NUM = (2.515517, 0.802853, 0.010328)
_HASTINGS_DEN = (1.432788, 0.189269, 0.001308)


def ndtri(p: float) -> float:
    """The standard normal quantile of ``p`` (the inverse of ndtr; -inf at 0, inf at 1, NaN
    outside [0, 1]).  Halley's method from Hastings' approximation, on the lower tail
    q = min(p, 1 - p) (1 - p is exact for p >= 1/2): for q below 1/4 on ndtr(x) - q, above
    on erf(|x| / sqrt(2)) - (1 - 2 q), whose terms keep their digits as x goes to 0.
    Three steps at most; relative error 2 ulp."""
    return _symmetric_quantile(float(p), _normal_upper)


def _symmetric_quantile(p: float, upper: Callable[[float], float]) -> float:
    """The quantile of ``p`` of a distribution symmetric about 0 whose upper quantiles are
    ``upper`` (q -> w > 0 with P(X > w) = q, for 0 < q < 1/2): -inf at 0, inf at 1, NaN
    outside [0, 1]."""
    if not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    if p > 0.5:
        return upper(1.0 - p)                  # 1 - p is exact for p >= 1/2
    return -upper(p)


def _normal_upper(q: float) -> float:
    """w > 0 whose upper tail 1 - ndtr(w) is ``q`` (0 < q < 1/2)."""
    t = math.sqrt(-2.0 * math.log(q))
    c0, c1, c2 = _HASTINGS_NUM
    d1, d2, d3 = _HASTINGS_DEN
    w = t - (c0 + t * (c1 + t * c2)) / (1.0 + t * (d1 + t * (d2 + t * d3)))
    central = q > 0.25
    if central:
        target = 1.0 - 2.0 * q                    # exact: 2q is in (1/2, 1)
        w = max(w, _SQRT_2PI * (0.5 - q))         # (Hastings' can fall below 0 there)
    for _ in range(8):
        density = math.exp(-0.5 * w * w) / _SQRT_2PI
        if central:         # h(w) = erf(w / sqrt(2)) - target, h' = 2 density, h'' = -w h'
            u = (math.erf(w * _SQRT_HALF) - target) / (2.0 * density)
            step = -u / (1.0 + 0.5 * u * w)
        else:               # h(w) = ndtr(-w) - q, h' = -density, h'' = w density
            u = (ndtr(-w) - q) / density
            step = u / (1.0 - 0.5 * u * w)
        w += step
        if abs(step) <= 1e-11 * w:     # the next step's error, cubed: below the last place
            break
    return w


# --- the regularized incomplete beta function ------------------------------------------------

# Stirling's series for log Gamma(z) - ((z - 1/2) log z - z + log sqrt(2 pi)): the
# coefficients B_2k / (2k (2k - 1)) of z^-(2k-1), k = 1..8, from z = 10 on (the next term
# is below 2e-18 there); below 10, from math.lgamma.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)
_STIRLING_FROM = 10.0


def _stirling_error(z: float) -> float:
    """log Gamma(z) - ((z - 1/2) log z - z + log sqrt(2 pi)), for z > 0."""
    if z < _STIRLING_FROM:
        return math.lgamma(z) - (z - 0.5) * math.log(z) + z - _HALF_LOG_2PI
    inverse_square = 1.0 / (z * z)
    total = 0.0
    for coefficient in reversed(_STIRLING):
        total = total * inverse_square + coefficient
    return total / z


def _deviance(x: float, m: float) -> float:
    """x log(x / m) + m - x (>= 0), for x > 0, m > 0, without the difference's cancellation:
    near x = m (|v| < 1/2, v = (x - m) / (x + m)) as the series
    (x - m) v + 2x (v^3/3 + v^5/5 + ...), whose terms do not cancel."""
    total = x + m
    difference = x - m
    if abs(difference) >= 0.5 * total:
        return x * math.log(x / m) + m - x
    v = difference / total
    v2 = v * v
    result = difference * v
    term = 2.0 * x * v
    j = 1
    while True:
        term *= v2
        j += 2
        added = result + term / j
        if added == result:
            return result
        result = added


# Up to this a + b, x^a y^b / B(a, b) is math.pow's powers and math.gamma's B (a few units
# in the last place); beyond, Loader's form.
_POWERS_UP_TO = 30.0


def _beta_power(a: float, b: float, x: float, y: float) -> float:
    """x^a y^b / B(a, b), y = 1 - x (each given, so that neither loses digits).  For small
    a + b the powers times Gamma(a + b) / (Gamma(a) Gamma(b)); otherwise in Loader's form
    sqrt(ab / (2 pi s)) exp(d(s) - d(a) - d(b) - D(a, sx) - D(b, sy)), s = a + b, d
    Stirling's remainder and D the deviance: no large number is exponentiated, and a
    rounding of x or y by a unit in the last place moves the result by (a - sx) units."""
    s = a + b
    if s <= _POWERS_UP_TO:
        powers = math.pow(x, a) * math.pow(y, b)
        if powers >= 1e-280:                      # (no subnormal on the way)
            return powers * math.gamma(s) / (math.gamma(a) * math.gamma(b))
    exponent = (_stirling_error(s) - _stirling_error(a) - _stirling_error(b)
                - _deviance(a, s * x) - _deviance(b, s * y))
    return math.sqrt(a * b / (2.0 * math.pi * s)) * math.exp(exponent)


_LENTZ_TINY = 1e-300


def _beta_fraction(a: float, b: float, x: float) -> float:
    """1 + d1 / (1 + d2 / (1 + ...)), the continued fraction of I_x(a, b) (DLMF 8.17.22:
    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) over it), by the modified Lentz method; it
    converges fast for x < (a + 1) / (a + b + 2), in O(sqrt(max(a, b))) terms at worst."""
    f, c, d = 1.0, 1.0, 0.0
    m = 0
    while True:
        # d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        term = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + term * d
        d = 1.0 / (d if d != 0.0 else _LENTZ_TINY)
        c = 1.0 + term / c
        c = c if c != 0.0 else _LENTZ_TINY
        f *= c * d
        m += 1
        # d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m))
        term = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 + term * d
        d = 1.0 / (d if d != 0.0 else _LENTZ_TINY)
        c = 1.0 + term / c
        c = c if c != 0.0 else _LENTZ_TINY
        delta = c * d
        f *= delta
        if abs(delta - 1.0) <= EPS:
            return f


def _ibeta(a: float, b: float, x: float, y: float) -> tuple[float, float, float]:
    """I_x(a, b) and I_y(b, a) = 1 - I_x(a, b), for y = 1 - x, the smaller of the two to its
    relative accuracy, and x^a y^b / B(a, b) (the density's factor)."""
    if x == 0.0:
        return 0.0, 1.0, 0.0
    if y == 0.0:
        return 1.0, 0.0, 0.0
    power = _beta_power(a, b, x, y)
    if x <= (a + 1.0) / (a + b + 2.0):
        lower = power / (a * _beta_fraction(a, b, x))
        return lower, 1.0 - lower, power
    upper = power / (b * _beta_fraction(b, a, y))
    return 1.0 - upper, upper, power


# --- the binomial distribution -----------------------------------------------------------------

def bdtr(k: float, n: int, p: float) -> float:
    """P(B <= k) for B ~ Binomial(n, p): I_{1-p}(n - k, k + 1), k rounded down, 1 for
    k = n; NaN for k < 0, k > n or p outside [0, 1] (scipy.special.bdtr's domain).
    Relative error 1e-14 up to n = 1,000 and 1e-13 at n = 100,000 (p = 1/2; see above)."""
    k, p = float(k), float(p)
    if math.isnan(k) or not 0.0 <= p <= 1.0:
        return math.nan
    successes = math.floor(k)
    if successes < 0 or successes > n:
        return math.nan
    if successes == n or p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    lower, _, _ = _ibeta(float(n - successes), float(successes + 1), 1.0 - p, p)
    return lower


# --- Student's t distribution ------------------------------------------------------------------

# Beyond this |t| the density's factors would overflow: the tail is its leading term.
_T_HUGE = 1e150
# From this many degrees of freedom, where |t| is small enough against them that
# x = df / (df + t^2) is near 1 (log(1/x) <= pi), the tail is the expansion below: the
# continued fraction in x would lose df/2 units in the last place to x's rounding.  It
# takes the tail from |t| = _T_TAIL_FROM on (a tail below 1/4), where 1 less the centre's
# share would lose up to 10 units more.
_T_EXPANSION_FROM = 20.0
_T_TAIL_FROM = 0.7
_T_EXPANSION_TERMS = 40


@functools.cache
def _sinhc_root() -> tuple[float, ...]:
    """The coefficients e_j of ((v/2) / sinh(v/2))^(1/2) = sum e_j v^2j (j < 40): the
    series' power by J.C.P. Miller's recurrence, from sinh(v/2) / (v/2) = sum
    v^2k / (4^k (2k + 1)!).  They fall as (2 pi)^-2j; each is within 2e-14 of the exact
    rational."""
    g = [1.0 / (4.0 ** k * math.factorial(2 * k + 1)) for k in range(_T_EXPANSION_TERMS)]
    e = [1.0]
    for m in range(1, _T_EXPANSION_TERMS):
        e.append(sum((0.5 * k - m) * g[k] * e[m - k] for k in range(1, m + 1)) / m)
    return tuple(e)


def _t_tail_expansion(df: float, u: float) -> float:
    """I_x(df/2, 1/2) for large df, u = log(1/x) <= pi: with T = df/2 - 1/4 and s = e^-v,
    the integral (1/B) int_u^inf e^(-Tv) v^(-1/2) ((v/2) / sinh(v/2))^(1/2) dv, the
    last factor's even power series integrated term by term (Temme's and DiDonato and
    Morris' expansion of I_x for a large and b small, here b = 1/2):
    (1/B) sum e_j Gamma(1/2 + 2j, Tu) / T^(1/2 + 2j), the incomplete gammas up from
    Gamma(1/2, z) = sqrt(pi) erfc(sqrt(z)).  The terms fall as (u / 2 pi)^2j, and what the
    series leaves out beyond v = 2 pi is below e^(-T pi) of the tail."""
    a = 0.5 * df
    big_t = a - 0.25
    z = big_t * u
    # log(Gamma(a + 1/2) / (Gamma(a) sqrt(T))), of Stirling's remainders
    scale = (-0.5 * math.log1p(-0.25 / a) + (a * math.log1p(0.5 / a) - 0.5)
             + _stirling_error(a + 0.5) - _stirling_error(a))
    root = math.sqrt(z)
    gamma = math.sqrt(math.pi) * math.erfc(root)      # Gamma(1/2, z)
    power = root * math.exp(-z)                       # z^s e^-z, s = 1/2
    shrink = 1.0 / (big_t * big_t)
    total = gamma
    s, factor = 0.5, 1.0
    for e in _sinhc_root()[1:]:
        for _ in range(2):                            # Gamma(s + 1, z) = s Gamma(s, z) + z^s e^-z
            gamma = s * gamma + power
            power *= z
            s += 1.0
        factor *= shrink
        term = e * gamma * factor
        total += term
        if abs(term) <= 0.1 * EPS * total:
            break
    return math.exp(scale) * total / math.sqrt(math.pi)


def _t_tails(df: float, w: float) -> tuple[float, float, float]:
    """For w > 0: P(T <= -w), 1/2 - P(T <= -w) (each to its relative accuracy) and w f(w),
    f the density, T of Student's t with ``df`` degrees of freedom."""
    a = 0.5 * df
    if w > _T_HUGE:       # I_x(a, 1/2) = x^a / (a B(a, 1/2)) (1 + O(x)), x = df / w^2
        log_beta = math.lgamma(a) + math.lgamma(0.5) - math.lgamma(a + 0.5)
        log_x = math.log(df) - 2.0 * math.log(w)
        tail = 0.5 * math.exp(a * log_x - math.log(a) - log_beta)
        return tail, 0.5 - tail, 2.0 * a * tail
    square = w * w
    x = df / (df + square)
    y = square / (df + square)
    if df >= _T_EXPANSION_FROM and w >= _T_TAIL_FROM:
        u = math.log1p(square / df)
        if u <= math.pi:
            lower = _t_tail_expansion(df, u)
            return 0.5 * lower, 0.5 - 0.5 * lower, _beta_power(a, 0.5, x, y)
    lower, upper, power = _ibeta(a, 0.5, x, y)
    return 0.5 * lower, 0.5 * upper, power


def stdtr(df: float, t: float) -> float:
    """The CDF of Student's t with ``df`` > 0 degrees of freedom (real; inf: the normal's)
    at ``t``: 1/2 I_x(df/2, 1/2) below 0, x = df / (df + t^2), and 1/2 + 1/2 I_{1-x}(1/2,
    df/2) - or 1 minus the former - above.  Relative error 16 + t^2 ulp (see above)."""
    df, t = float(df), float(t)
    if math.isnan(t) or not df > 0.0:
        return math.nan
    if math.isinf(df):
        return ndtr(t)
    if t == 0.0:
        return 0.5
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    tail, central, _ = _t_tails(df, abs(t))
    if t < 0:
        return tail
    return 1.0 - tail if tail < 0.25 else 0.5 + central


def stdtrit(df: float, p: float) -> float:
    """The quantile of ``p`` of Student's t with ``df`` > 0 degrees of freedom (the inverse
    of stdtr; -inf at 0, inf at 1, NaN outside [0, 1]).  Relative error 10 ulp for p from
    1e-12 to 1 - 1e-12."""
    df = float(df)
    if not df > 0.0:
        return math.nan
    if math.isinf(df):
        return ndtri(p)
    return _symmetric_quantile(float(p), functools.partial(_t_upper, df))


def _t_start(df: float, q: float) -> float:
    """Where Halley's method starts for w with P(T <= -w) = q: in a heavy tail, the
    incomplete beta's leading term x^a / (a B(a, 1/2)) = 2q solved for x = df / (df + w^2);
    elsewhere the normal quantile's Cornish-Fisher expansion in 1/df (Hill's)."""
    a = 0.5 * df
    log_beta = math.lgamma(a) + math.lgamma(0.5) - math.lgamma(a + 0.5)
    log_x = (math.log(2.0 * q) + math.log(a) + log_beta) / a
    if log_x < -600.0:                 # w^2 = df (1/x - 1), 1/x - 1 = 1/x to the last place
        log_w = 0.5 * (math.log(df) - log_x)
        return math.exp(log_w) if log_w < _LOG_MAX else math.inf
    if log_x < -_LOG_2:
        return math.sqrt(df * math.expm1(-log_x))
    z = -ndtri(q)
    z2 = z * z
    return z * (1.0 + (z2 + 1.0) / (4.0 * df)
                + ((5.0 * z2 + 16.0) * z2 + 3.0) / (96.0 * df * df)
                + (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / (384.0 * df ** 3))


def _t_upper(df: float, q: float) -> float:
    """w > 0 with P(T <= -w) = q (0 < q < 1/2): Halley's method, for q below 1/4 on
    h = log(P(T <= -w) / q) as a function of log w (near linear however far the tail: a
    power of w in a heavy one), above on h(w) = (1/2 - q) - (1/2 - P(T <= -w)) (both
    terms keep their digits as w goes to 0); a step that would leave the bracket of the
    residual's signs halves it instead."""
    central = q > 0.25
    target = 0.5 - q if central else q            # 0.5 - q is exact for q in [1/4, 1/2]
    low, high = 0.0, math.inf
    w = _t_start(df, q)
    if w == math.inf:                 # beyond the largest double
        return w
    for _ in range(100):
        tail, center, wf = _t_tails(df, w)
        # w f'(w) / f(w) = -(df + 1) w^2 / (df + w^2), without overflowing w^2
        bent = (df + 1.0) / (1.0 + df / w / w)
        if central:       # dh/dw = -f, d2h/dw2 = f bent / w
            h = target - center
            step = h * w / wf
            bend = 1.0 - 0.5 * step * bent / w
        else:             # with A = w f / P: dh/dlog w = -A, d2h/dlog w2 = A (bent - 1) - A^2
            if tail == 0.0:
                h, step, bend = -math.inf, -math.inf, 1.0
            else:
                h = math.log(tail / target)
                ratio = wf / tail
                step = h / ratio
                bend = 1.0 + 0.5 * step * (1.0 - bent + ratio)
        if h == 0.0:
            return w
        if h > 0.0:
            low = w
        else:
            high = w
        if bend > 0.5:
            step /= bend
        # Done when the step is within what the residual's rounding moves it: a few units
        # in the last place of h's terms, |log P| of them in a tail's exp (as a step in w)
        if central:
            if abs(step) <= 4.0 * EPS * (w + center * w / wf):
                return w + step
        elif abs(step) <= 4.0 * EPS * (1.0 + abs(math.log(tail)) / ratio):
            return w * math.exp(step)
        w = w + step if central else w * math.exp(step)
        if not low < w < high:
            w = (0.5 * (low + high) if central or low == 0.0
                 else math.sqrt(low) * math.sqrt(high) if high < math.inf else 2.0 * low)
    return w
