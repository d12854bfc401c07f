"""Significance tests, intervals and multiple-testing corrections, in plain numpy.

Everything here is vectorized: the paired tests take a difference matrix of shape
``(m, n_queries)`` (one row per comparison) and test every row at once, and the resampling
methods draw their resamples as matrices and evaluate them with one matrix product. scipy is
not a runtime dependency; the tests use it as an independent oracle.

Special functions (normal and Student-t CDFs and quantiles) are computed from the regularized
incomplete gamma and beta functions (series and Lentz continued fractions, as in Numerical
Recipes), accurate to about 1e-14 relative; the tests check them against scipy.

Conventions that change a number, stated once:

* Two-sided tests throughout. A *paired* test works on ``d = a - b`` (one value per query).
* Randomization (Fisher's sign-flip) p-values use the ``+1`` rule for random resamples,
  ``p = (#{|T*| >= |T| - tol} + 1) / (B + 1)``, which counts the observed assignment as one of
  the resamples so a p-value is never 0; an exact enumeration (used automatically when
  ``2**n <= B``) counts every assignment and needs no ``+1``. ``tol = 1e-9 * mean(|d|)``
  absorbs float rounding: sums of the same numbers in another order must still tie.
* Bootstrap intervals are percentile intervals (linear interpolation, numpy's default). The
  bootstrap p-value counts a resampled mean within :data:`TIE` (1e-12) of zero as a tie, on
  both sides alike: the same resample summed in another order must not move a p-value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = [
    "RandomizationResult",
    "TTestResult",
    "BootstrapResult",
    "WilcoxonResult",
    "erfc",
    "norm_cdf",
    "norm_sf",
    "norm_ppf",
    "betainc",
    "t_cdf",
    "t_sf",
    "t_ppf",
    "sign_flips",
    "paired_randomization",
    "paired_t",
    "paired_bootstrap",
    "bootstrap_pvalue",
    "wilcoxon",
    "adjust_pvalues",
    "wilson_interval",
    "rank_average",
    "auroc",
    "bootstrap_ci",
    "auroc_ci",
    "median_difference_ci",
]

_EPS = np.finfo(np.float64).eps
_FPMIN = np.finfo(np.float64).tiny / _EPS
_MAX_ITER = 100_000
_LOG_SQRT_PI = 0.5 * math.log(math.pi)
_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)
# Elements per block when a resample matrix would be too large to hold at once.
_BLOCK = 1 << 22
#: A resampled statistic this close to its reference value is a tie (float noise, not a sign).
TIE = 1e-12


# --------------------------------------------------------------------------------------
# Special functions
# --------------------------------------------------------------------------------------


def _lgamma(x: np.ndarray) -> np.ndarray:
    """log Gamma elementwise (math.lgamma on the distinct values; they are few: one per df)."""
    x = np.asarray(x, dtype=np.float64)
    uniq, inv = np.unique(x, return_inverse=True)
    vals = np.array([math.lgamma(v) if np.isfinite(v) and v > 0 else np.nan for v in uniq])
    return vals[inv].reshape(x.shape)


def _stirling_corr(x: np.ndarray) -> np.ndarray:
    """lgamma(x) - [(x - 1/2) ln x - x + ln(2 pi)/2], asymptotic series (x >= 15: < 1e-16)."""
    r = 1.0 / (x * x)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r / 1188)))) / x


def _lgamma_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``lgamma(a + b) - lgamma(a)`` without the cancellation of two large lgammas (a >= b).

    For a >= 15 by Stirling: ``b ln a + (a + b - 1/2) log1p(b/a) - b + corr(a+b) - corr(a)``;
    the difference of two lgammas of size ~a ln a would lose ~log10(a ln a) digits.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    big = a >= 15
    sa = np.where(big, a, 15.0)
    stirling = (b * np.log(sa) + (sa + b - 0.5) * np.log1p(b / sa) - b
                + _stirling_corr(sa + b) - _stirling_corr(sa))
    return np.where(big, stirling, _lgamma(np.where(big, 1.0, a + b)) - _lgamma(np.where(big, 1.0, a)))


def _lbeta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ln B(a, b) = lgamma(small) - [lgamma(big + small) - lgamma(big)]."""
    big = np.maximum(a, b)
    small = np.minimum(a, b)
    return _lgamma(small) - _lgamma_ratio(big, small)


def _gamma_p_series(a: float, x: np.ndarray) -> np.ndarray:
    """Regularized lower incomplete gamma P(a, x) by its power series (good for x < a + 1)."""
    x = np.asarray(x, dtype=np.float64)
    ap = np.full(x.shape, a)
    term = np.full(x.shape, 1.0 / a)
    total = term.copy()
    active = x > 0
    for _ in range(_MAX_ITER):
        if not active.any():
            break
        ap = ap + 1.0
        term = np.where(active, term * x / ap, 0.0)
        total = total + term
        active &= np.abs(term) >= np.abs(total) * _EPS
    with np.errstate(divide="ignore"):
        logx = np.log(np.where(x > 0, x, 1.0))
    out = total * np.exp(-x + a * logx - math.lgamma(a))
    return np.where(x > 0, out, 0.0)


def _gamma_q_cf(a: float, x: np.ndarray) -> np.ndarray:
    """Regularized upper incomplete gamma Q(a, x) by Lentz's continued fraction (x >= a + 1)."""
    x = np.asarray(x, dtype=np.float64)
    b = x + 1.0 - a
    c = np.full(x.shape, 1.0 / _FPMIN)
    d = 1.0 / b
    h = d.copy()
    active = np.ones(x.shape, dtype=bool)
    for i in range(1, _MAX_ITER):
        if not active.any():
            break
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < _FPMIN, _FPMIN, d)
        c = b + an / c
        c = np.where(np.abs(c) < _FPMIN, _FPMIN, c)
        d = 1.0 / d
        delta = np.where(active, d * c, 1.0)
        h = h * delta
        active &= np.abs(delta - 1.0) >= _EPS
    return np.exp(-x + a * np.log(x) - math.lgamma(a)) * h


def erfc(x) -> np.ndarray:
    """Complementary error function, elementwise: ``erfc(x) = Q(1/2, x**2)`` for x >= 0.

    Computed from the regularized incomplete gamma function (series below x**2 = 1.5, Lentz
    continued fraction above), so tails keep full relative accuracy: erfc(10) ~ 2.1e-45 is
    returned with ~1e-15 relative error, not rounded to 0 as ``1 - erf`` would be.
    """
    x = np.asarray(x, dtype=np.float64)
    flat = x.ravel()
    x2 = flat * flat
    out = np.empty_like(flat)
    small = x2 < 1.5
    if small.any():
        p = _gamma_p_series(0.5, x2[small])
        out[small] = np.where(flat[small] >= 0, 1.0 - p, 1.0 + p)
    big = ~small & ~np.isnan(flat)
    if big.any():
        q = _gamma_q_cf(0.5, x2[big])
        out[big] = np.where(flat[big] >= 0, q, 2.0 - q)
    out[np.isnan(flat)] = np.nan
    return out.reshape(x.shape)


def norm_cdf(x) -> np.ndarray:
    """Standard normal CDF, accurate in the lower tail (``0.5 * erfc(-x / sqrt 2)``)."""
    return 0.5 * erfc(-np.asarray(x, dtype=np.float64) / _SQRT2)


def norm_sf(x) -> np.ndarray:
    """Standard normal survival function ``1 - Phi(x)``, accurate in the upper tail."""
    return 0.5 * erfc(np.asarray(x, dtype=np.float64) / _SQRT2)


# Acklam's rational approximation to the normal quantile (relative error < 1.2e-9), refined
# below by Halley steps on norm_cdf to full double precision.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771972e01, -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
      3.754408661907416e00)


def norm_ppf(q) -> np.ndarray:
    """Standard normal quantile: ``Phi(x) = q``. 0 -> -inf, 1 -> inf, outside [0, 1] -> NaN.

    Acklam's approximation refined by Halley's method on the lower-tail probability
    ``min(q, 1 - q)`` (by symmetry), so extreme quantiles keep full relative accuracy.
    """
    q = np.asarray(q, dtype=np.float64)
    flat = q.ravel()
    out = np.full(flat.shape, np.nan)
    ok = (flat > 0) & (flat < 1)
    out[flat == 0] = -np.inf
    out[flat == 1] = np.inf
    if ok.any():
        p = flat[ok]
        upper = p > 0.5
        lo = np.where(upper, 1.0 - p, p)  # lower-tail probability in (0, 0.5]
        # 1 - p is exact for p > 0.5 (Sterbenz), so no precision is lost by the reflection.
        x = np.empty_like(lo)
        tail = lo < 0.02425
        if tail.any():
            r = np.sqrt(-2.0 * np.log(lo[tail]))
            num = ((((_C[0] * r + _C[1]) * r + _C[2]) * r + _C[3]) * r + _C[4]) * r + _C[5]
            den = (((_D[0] * r + _D[1]) * r + _D[2]) * r + _D[3]) * r + 1.0
            x[tail] = num / den
        mid = ~tail
        if mid.any():
            s = lo[mid] - 0.5
            r = s * s
            num = (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * s
            den = ((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0
            x[mid] = num / den
        for _ in range(3):
            e = norm_cdf(x) - lo
            u = e * _SQRT2PI * np.exp(0.5 * x * x)
            x = x - u / (1.0 + 0.5 * x * u)
        out[ok] = np.where(upper, -x, x)
    return out.reshape(q.shape)


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Continued fraction for the incomplete beta function (modified Lentz, NR 6.4)."""
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < _FPMIN, _FPMIN, d)
    d = 1.0 / d
    h = d.copy()
    active = np.ones(x.shape, dtype=bool)
    for m in range(1, _MAX_ITER):
        if not active.any():
            break
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < _FPMIN, _FPMIN, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < _FPMIN, _FPMIN, c)
        d = 1.0 / d
        h = h * np.where(active, d * c, 1.0)
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < _FPMIN, _FPMIN, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < _FPMIN, _FPMIN, c)
        d = 1.0 / d
        delta = np.where(active, d * c, 1.0)
        h = h * delta
        active &= np.abs(delta - 1.0) >= _EPS
    return h


def betainc(a, b, x, y=None) -> np.ndarray:
    """Regularized incomplete beta ``I_x(a, b)``, elementwise (a, b > 0, 0 <= x <= 1).

    ``y`` may give ``1 - x`` computed without cancellation (for example ``t**2 / (df + t**2)``
    when ``x = df / (df + t**2)``); it is then used in place of ``1 - x``. The continued
    fraction is evaluated on whichever side converges (x < (a+1)/(a+b+2)), as in Numerical
    Recipes ``betai``.
    """
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    y = 1.0 - x if y is None else np.broadcast_to(np.asarray(y, dtype=np.float64), x.shape)
    shape = x.shape
    a, b, x, y = (np.array(v, dtype=np.float64).ravel() for v in (a, b, x, y))
    out = np.full(x.shape, np.nan)
    out[x <= 0] = 0.0
    out[y <= 0] = 1.0
    inner = (x > 0) & (y > 0) & (a > 0) & (b > 0)
    if inner.any():
        ai, bi, xi, yi = a[inner], b[inner], x[inner], y[inner]
        # ln x from the accurate complement when x is near 1 (a ln x with a large a would
        # otherwise amplify the rounding of x).
        with np.errstate(divide="ignore"):
            lx = np.where(yi < 0.5, np.log1p(-yi), np.log(xi))
            ly = np.where(xi < 0.5, np.log1p(-xi), np.log(yi))
        lbt = ai * lx + bi * ly - _lbeta(ai, bi)
        bt = np.exp(lbt)
        direct = xi < (ai + 1.0) / (ai + bi + 2.0)
        res = np.empty_like(xi)
        if direct.any():
            res[direct] = bt[direct] * _betacf(ai[direct], bi[direct], xi[direct]) / ai[direct]
        flip = ~direct
        if flip.any():
            res[flip] = 1.0 - bt[flip] * _betacf(bi[flip], ai[flip], yi[flip]) / bi[flip]
        out[inner] = res
    return out.reshape(shape)


def _t_two_tail(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom: ``I_{df/(df+t^2)}(df/2, 1/2)``."""
    t2 = t * t
    with np.errstate(invalid="ignore", over="ignore"):
        x = df / (df + t2)
        y = t2 / (df + t2)
    x = np.where(np.isinf(t), 0.0, x)
    y = np.where(np.isinf(t), 1.0, y)
    return betainc(df / 2.0, np.full_like(df, 0.5), x, y)


def t_sf(t, df) -> np.ndarray:
    """Student-t survival function ``P(T > t)``, elementwise (df > 0, may be non-integer)."""
    t, df = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(df, dtype=np.float64))
    half = 0.5 * _t_two_tail(t, df)
    return np.where(np.isnan(t), np.nan, np.where(t > 0, half, 1.0 - half))


def t_cdf(t, df) -> np.ndarray:
    """Student-t CDF ``P(T <= t)``, elementwise; the lower tail keeps full relative accuracy."""
    t = np.asarray(t, dtype=np.float64)
    return t_sf(-t, df)


def _t_pdf(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    lognorm = _lgamma_ratio(df / 2.0, np.full_like(df, 0.5)) - 0.5 * np.log(df) - _LOG_SQRT_PI
    return np.exp(lognorm - (df + 1.0) / 2.0 * np.log1p(t * t / df))


def t_ppf(q, df) -> np.ndarray:
    """Student-t quantile: the ``t`` with ``P(T <= t) = q``, elementwise.

    Solved on the lower tail ``min(q, 1-q)`` (symmetry) by Newton's method on ``t_cdf``,
    started from the normal quantile with the first Cornish-Fisher correction and safeguarded
    by bisection inside a bracket, so it converges for every df > 0 (Cauchy included).
    """
    q, df = np.broadcast_arrays(np.asarray(q, dtype=np.float64), np.asarray(df, dtype=np.float64))
    shape = q.shape
    q = q.ravel().copy()
    df = df.ravel().copy()
    out = np.full(q.shape, np.nan)
    ok = (q > 0) & (q < 1) & (df > 0)
    out[(q == 0) & (df > 0)] = -np.inf
    out[(q == 1) & (df > 0)] = np.inf
    out[ok & (q == 0.5)] = 0.0
    ok &= q != 0.5
    if ok.any():
        p = q[ok]
        v = df[ok]
        upper = p > 0.5
        lo_p = np.where(upper, 1.0 - p, p)  # target lower-tail probability < 0.5; t < 0
        z = norm_ppf(lo_p)
        x = z + (z ** 3 + z) / (4.0 * v)
        # Bracket [lo, hi] with cdf(lo) <= lo_p <= cdf(hi); hi = 0 has cdf 0.5.
        hi = np.zeros_like(x)
        lo = np.minimum(x, -1.0)
        for _ in range(2000):
            low_enough = t_cdf(lo, v) <= lo_p
            if low_enough.all():
                break
            hi = np.where(low_enough, hi, lo)
            lo = np.where(low_enough, lo, lo * 4.0)
        x = np.clip(x, lo, hi)
        for _ in range(200):
            f = t_cdf(x, v) - lo_p
            lo = np.where(f <= 0, x, lo)
            hi = np.where(f > 0, x, hi)
            step = f / _t_pdf(x, v)
            nx = x - step
            bad = ~np.isfinite(nx) | (nx <= lo) | (nx >= hi)
            nx = np.where(bad, 0.5 * (lo + hi), nx)
            done = np.abs(nx - x) <= 4 * _EPS * np.abs(x)
            x = nx
            if done.all():
                break
        out[ok] = np.where(upper, -x, x)
    return out.reshape(shape)


# --------------------------------------------------------------------------------------
# Paired tests
# --------------------------------------------------------------------------------------


def _differences(a, b) -> tuple[np.ndarray, bool]:
    """``a - b`` as a float matrix (m, n); the flag says whether the input was one comparison."""
    a = np.asarray(a, dtype=np.float64)
    d = a if b is None else a - np.asarray(b, dtype=np.float64)
    if d.ndim not in (1, 2):
        raise ValueError(f"paired samples must be 1-D or 2-D (m, n_queries), got shape {d.shape}")
    if d.shape[-1] < 1:
        raise ValueError("paired samples need at least one query")
    if np.isnan(d).any():
        raise ValueError("paired samples contain NaN; drop or score those queries first")
    single = d.ndim == 1
    return np.atleast_2d(d), single


def _out(x: np.ndarray, single: bool):
    return float(x[0]) if single else x


@dataclass(frozen=True)
class RandomizationResult:
    """Fisher randomization test: mean difference, two-sided p, resamples used, exactness."""

    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    n_resamples: int
    exact: bool


@dataclass(frozen=True)
class TTestResult:
    """Paired t-test: t statistic, two-sided p, degrees of freedom, mean difference."""

    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    df: int
    mean: np.ndarray | float


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap: the estimate on the original data, its percentile interval, a p-value.

    ``pvalue`` is NaN for statistics without a null value (``bootstrap_ci``).
    """

    statistic: np.ndarray | float
    ci_low: np.ndarray | float
    ci_high: np.ndarray | float
    pvalue: np.ndarray | float
    n_resamples: int
    confidence: float


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test: ``min(R+, R-)`` (scipy's statistic), two-sided p, method."""

    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    method: np.ndarray | str


def sign_flips(n: int, n_resamples: int, seed=0, *, like_scipy: bool = False) -> np.ndarray:
    """A ``(n_resamples, n)`` matrix of random signs (+1/-1), float64, from ``seed``.

    The default draws random bytes and unpacks their bits (fast). ``like_scipy=True``
    reproduces the sign flips ``scipy.stats.permutation_test((d,), ..., permutation_type=
    "samples", n_resamples=B, rng=np.random.default_rng(seed))`` draws (``B < 2**n``), so a
    test can compare p-values resample for resample.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if like_scipy:
        pairs = np.tile(np.arange(2), (n_resamples, n, 1))
        first = rng.permuted(pairs, axis=-1)[..., 0]
        return np.where(first == 0, 1.0, -1.0)
    nbytes = -(-n // 8)
    bits = np.unpackbits(
        np.frombuffer(rng.bytes(n_resamples * nbytes), dtype=np.uint8).reshape(n_resamples, nbytes),
        axis=1,
        count=n,
    )
    return 1.0 - 2.0 * bits


def _all_signs(n: int) -> np.ndarray:
    """Every sign vector of length n, all +1 first (scipy's enumeration order)."""
    codes = np.arange(2 ** n, dtype=np.int64)[:, None] >> np.arange(n - 1, -1, -1)
    return 1.0 - 2.0 * (codes & 1)


def paired_randomization(
    a,
    b=None,
    n_resamples: int = 10_000,
    seed=0,
    *,
    exact: bool | str = "auto",
    two_sided: str = "abs",
    signs: np.ndarray | None = None,
) -> RandomizationResult:
    """Two-sided Fisher randomization (sign-flip permutation) test of mean(a - b) = 0.

    Under the null the two systems are exchangeable on each query, so each difference is as
    likely to have either sign; the null distribution of the mean difference is obtained by
    flipping signs. ``a``/``b`` are (n,) or (m, n) (one comparison per row; ``b=None`` means
    ``a`` already holds differences); every row is tested with the *same* sign matrix, one
    matrix product for all comparisons.

    ``exact="auto"`` enumerates all ``2**n`` sign vectors when that is no more than
    ``n_resamples`` (p = share of assignments at least as extreme, no +1); otherwise draws
    ``n_resamples`` random sign vectors (``sign_flips(n, n_resamples, seed)``) and uses the
    +1 rule ``p = (count + 1) / (B + 1)``. ``two_sided="abs"`` counts ``|T*| >= |T| - tol``;
    ``"double"`` is scipy's ``2 * min(P(T* <= T), P(T* >= T))`` clipped to 1 (identical for
    the exact enumeration, which is symmetric). ``tol = 1e-9 * mean(|d|)`` per row. ``signs``
    overrides the resamples (for example ``sign_flips(..., like_scipy=True)``).
    """
    d, single = _differences(a, b)
    m, n = d.shape
    if two_sided not in ("abs", "double"):
        raise ValueError(f"two_sided must be 'abs' or 'double', got {two_sided!r}")
    if signs is not None:
        signs = np.asarray(signs, dtype=np.float64)
        if signs.ndim != 2 or signs.shape[1] != n:
            raise ValueError(f"signs must have shape (B, {n}), got {signs.shape}")
        is_exact = bool(exact is True)
        blocks = [signs]
        total = signs.shape[0]
    else:
        is_exact = exact is True or (exact == "auto" and n < 63 and 2 ** n <= n_resamples)
        if is_exact:
            if n > 24:
                raise ValueError(f"exact enumeration of 2**{n} sign vectors is too large")
            total = 2 ** n
            blocks = None
        else:
            if n_resamples < 1:
                raise ValueError("n_resamples must be >= 1")
            total = n_resamples
            blocks = None
    observed = d.mean(axis=1)
    tol = 1e-9 * np.abs(d).mean(axis=1)
    dt = d.T  # (n, m)
    ge = np.zeros(m, dtype=np.int64)  # |T*| >= |T|  or  T* >= T
    le = np.zeros(m, dtype=np.int64)  # T* <= T (double mode)

    def consume(s: np.ndarray) -> None:
        nonlocal ge, le
        perm = (s @ dt) / n  # (rows, m)
        if two_sided == "abs":
            ge += np.count_nonzero(np.abs(perm) >= np.abs(observed) - tol, axis=0)
        else:
            ge += np.count_nonzero(perm >= observed - tol, axis=0)
            le += np.count_nonzero(perm <= observed + tol, axis=0)

    if blocks is not None:
        for s in blocks:
            consume(s)
    elif is_exact:
        rows = max(1, _BLOCK // max(n, 1))
        allsigns = _all_signs(n)
        for start in range(0, total, rows):
            consume(allsigns[start:start + rows])
    else:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        rows = max(1, _BLOCK // n)
        for start in range(0, total, rows):
            consume(sign_flips(n, min(rows, total - start), rng))
    adj = 0 if is_exact else 1
    if two_sided == "abs":
        p = (ge + adj) / (total + adj)
    else:
        p = 2.0 * np.minimum(ge + adj, le + adj) / (total + adj)
    p = np.clip(p, 0.0, 1.0)
    return RandomizationResult(_out(observed, single), _out(p, single), total, is_exact)


def paired_t(a, b=None) -> TTestResult:
    """Paired Student t-test, two-sided: ``t = mean(d) / (sd(d) / sqrt(n))``, df = n - 1.

    Matches ``scipy.stats.ttest_rel`` except when every difference is exactly zero: there is
    no evidence of a difference, so t = 0 and p = 1 (scipy returns NaN). A constant non-zero
    difference gives t = +-inf and p = 0. Needs n >= 2.
    """
    d, single = _differences(a, b)
    n = d.shape[1]
    if n < 2:
        raise ValueError("a paired t-test needs at least 2 queries")
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    zero = (sd == 0) & (mean == 0)
    t = np.where(zero, 0.0, t)
    p = _t_two_tail(t, np.full(t.shape, float(n - 1)))
    p = np.clip(np.where(zero, 1.0, p), 0.0, 1.0)
    return TTestResult(_out(t, single), _out(p, single), n - 1, _out(mean, single))


def _bootstrap_weights(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """Resample counts (rows, n): row r counts how often each query is drawn in resample r."""
    idx = rng.integers(0, n, size=(rows, n))
    flat = (idx + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


def bootstrap_pvalue(resampled) -> np.ndarray | float:
    """Two-sided percentile-bootstrap p-value of "the statistic is 0", per column.

    ``resampled``: (B,) or (B, m) resampled statistics (differences). Returns
    ``min(1, 2 * (min(#{T* <= 0}, #{T* >= 0}) + 1) / (B + 1))``, where a value within
    :data:`TIE` of 0 counts on both sides: a difference that is 0 in exact arithmetic comes
    out as +-1e-17 depending on the order of a sum, and float noise must not move a p-value.
    The +1 rule keeps it above 0.
    """
    t = np.asarray(resampled, dtype=np.float64)
    le = np.count_nonzero(t <= TIE, axis=0)
    ge = np.count_nonzero(t >= -TIE, axis=0)
    p = np.minimum(1.0, 2.0 * (np.minimum(le, ge) + 1) / (t.shape[0] + 1))
    return float(p) if t.ndim == 1 else p


def paired_bootstrap(
    a, b=None, n_resamples: int = 10_000, seed=0, confidence: float = 0.95
) -> BootstrapResult:
    """Bootstrap of the mean difference over queries: percentile interval and a p-value.

    Queries are resampled with replacement (the same resamples for every row of an (m, n)
    input: resample r draws ``rng.integers(0, n, size=n)``; drawn in blocks of rows, each block
    one matrix product). The interval is the percentile interval of the resampled means. The
    p-value is ``min(1, 2 * (min(#{T* <= 0}, #{T* >= 0}) + 1) / (B + 1))``: the smallest
    two-sided level whose percentile interval excludes 0, with the +1 rule so it is never 0.
    A resampled mean within :data:`TIE` of 0 counts on both sides: a mean that is 0 in exact
    arithmetic comes out as +-1e-17 depending on the order of the sum, and float noise must not
    decide a p-value. It is a percentile-interval p-value, not a null-distribution test:
    prefer the randomization test for p-values and use this for the interval.
    """
    d, single = _differences(a, b)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    m, n = d.shape
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rows = max(1, _BLOCK // n)
    dt = d.T
    means = np.empty((n_resamples, m))
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        means[start:start + r] = (_bootstrap_weights(rng, r, n) @ dt) / n
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
    p = bootstrap_pvalue(means)
    stat = d.mean(axis=1)
    return BootstrapResult(
        _out(stat, single), _out(low, single), _out(high, single), _out(p, single),
        n_resamples, confidence,
    )


def rank_average(x) -> np.ndarray:
    """Ranks 1..n along the last axis with ties given their average rank (vectorized over rows).

    NaN sorts last and each NaN gets its own rank, as in scipy's ``rankdata``.
    """
    x = np.asarray(x, dtype=np.float64)
    shape = x.shape
    if x.size == 0:
        return np.zeros(shape)
    y2 = x.reshape(-1, shape[-1])
    rows, n = y2.shape
    order = np.argsort(y2, axis=1, kind="stable")
    ys = np.take_along_axis(y2, order, axis=1)
    new = np.ones((rows, n), dtype=bool)
    new[:, 1:] = ys[:, 1:] != ys[:, :-1]
    starts = np.flatnonzero(new.ravel())
    counts = np.diff(np.append(starts, rows * n))
    first = (starts % n) + 1.0
    ranks_sorted = np.repeat(first + (counts - 1) / 2.0, counts).reshape(rows, n)
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=1)
    return ranks.reshape(shape)


def _tie_term(absd_masked: np.ndarray) -> np.ndarray:
    """Sum over tie groups of (t**3 - t) per row; NaN entries are never tied."""
    rows, n = absd_masked.shape
    ys = np.sort(absd_masked, axis=1)
    new = np.ones((rows, n), dtype=bool)
    new[:, 1:] = ys[:, 1:] != ys[:, :-1]
    starts = np.flatnonzero(new.ravel())
    counts = np.diff(np.append(starts, rows * n)).astype(np.float64)
    row_of = starts // n
    return np.bincount(row_of, weights=counts ** 3 - counts, minlength=rows)


def _wilcoxon_exact_cdf(n: int) -> np.ndarray:
    """Cumulative counts of R+ = 0..n(n+1)/2 over the 2**n sign assignments (no ties).

    Dynamic programming over ranks 1..n: counts[k] = number of subsets of {1..n} summing to k.
    Counts stay below 2**53 for n <= 50, so float64 holds them exactly.
    """
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    top = 0
    for r in range(1, n + 1):
        counts[r:top + r + 1] += counts[:top + 1].copy()
        top += r
    return np.cumsum(counts)


def wilcoxon(a, b=None) -> WilcoxonResult:
    """Wilcoxon signed-rank test, two-sided, matching ``scipy.stats.wilcoxon`` defaults.

    Zero differences are dropped (``zero_method="wilcox"``), tied |d| get average ranks. The
    p-value method per row follows scipy 1.17's ``method="auto"``:
    n (queries, zeros included) <= 50 without ties or zeros -> exact null distribution of R+
    (dynamic programming), ``p = 2 * min(P(R+ <= ceil r), P(R+ >= floor r))``; n <= 13 with
    ties or zeros -> exact enumeration of all 2**n sign flips of R+; otherwise the normal
    approximation ``z = (R+ - N(N+1)/4) / sqrt((N(N+1)(2N+1) - sum(t^3 - t)/2) / 24)``
    (N = non-zero differences, tie correction, no continuity correction: scipy's default).
    When every difference is zero the p-value is 1 (scipy gives NaN for n > 13).
    """
    d, single = _differences(a, b)
    m, n = d.shape
    nonzero = d != 0
    count = nonzero.sum(axis=1)
    absd = np.where(nonzero, np.abs(d), np.nan)
    r = rank_average(absd)
    r_plus = np.where(d > 0, r, 0.0).sum(axis=1)
    r_minus = np.where(d < 0, r, 0.0).sum(axis=1)
    tie = _tie_term(absd)
    has_ties = tie > 0
    has_zero = count < n
    p = np.full(m, np.nan)
    method = np.empty(m, dtype=object)

    exact = (n <= 50) & ~has_ties & ~has_zero
    perm = (n <= 13) & ~exact
    asym = ~exact & ~perm

    if exact.any():
        cum = _wilcoxon_exact_cdf(n)
        total = 2.0 ** n
        rp = r_plus[exact]
        hi_k = np.ceil(rp).astype(np.int64)
        lo_k = np.floor(rp).astype(np.int64)
        cdf = cum[hi_k] / total
        sf = (total - np.where(lo_k > 0, cum[np.maximum(lo_k - 1, 0)], 0.0)) / total
        p[exact] = np.clip(2.0 * np.minimum(cdf, sf), 0.0, 1.0)
        method[exact] = "exact"
    if perm.any():
        signs = _all_signs(n)  # (2**n, n)
        rows = np.flatnonzero(perm)
        pos_rank = np.where(nonzero[rows], r[rows], 0.0)  # (k, n) ranks of non-zero |d|
        sgn = np.sign(d[rows])
        # R+ under each assignment: sum of ranks whose flipped difference is positive.
        null = ((signs[:, None, :] * sgn[None, :, :]) > 0).astype(np.float64)
        null = np.einsum("bkn,kn->bk", null, pos_rank)
        obs = r_plus[rows]
        gamma = np.abs(100 * _EPS * obs)
        le = np.count_nonzero(null <= obs + gamma, axis=0)
        ge = np.count_nonzero(null >= obs - gamma, axis=0)
        p[rows] = np.clip(2.0 * np.minimum(le, ge) / 2.0 ** n, 0.0, 1.0)
        method[rows] = "permutation"
    if asym.any():
        c = count[asym].astype(np.float64)
        mn = c * (c + 1.0) * 0.25
        se = np.sqrt((c * (c + 1.0) * (2.0 * c + 1.0) - tie[asym] / 2.0) / 24.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (r_plus[asym] - mn) / se
        p[asym] = np.clip(2.0 * norm_sf(np.abs(z)), 0.0, 1.0)
        method[asym] = "asymptotic"
    p = np.where(count == 0, 1.0, p)
    stat = np.minimum(r_plus, r_minus)
    return WilcoxonResult(_out(stat, single), _out(p, single), method[0] if single else method)


# --------------------------------------------------------------------------------------
# Multiple testing, proportions
# --------------------------------------------------------------------------------------


def adjust_pvalues(p, method: str = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple testing; returns an array of the same shape.

    Every entry of ``p`` (any shape) is one hypothesis of the family; NaN entries stay NaN
    and do not count in the family size m.

    * ``"bonferroni"``: ``min(1, m p)``; controls the family-wise error rate (FWER).
    * ``"holm"``: step-down, ``p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j))``; controls FWER
      like Bonferroni and is never less powerful, so it is the default.
    * ``"fdr_bh"``: Benjamini-Hochberg step-up, ``p_(i) -> min_{j>=i} min(1, m p_(j) / j)``;
      controls the false discovery rate (monotone in p, clipped to 1).
    * ``"none"``: unchanged.
    """
    p = np.asarray(p, dtype=np.float64)
    if method not in ("holm", "bonferroni", "fdr_bh", "none"):
        raise ValueError(f"unknown correction {method!r}; use holm, bonferroni, fdr_bh or none")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    flat = p.ravel()
    out = flat.copy()
    ok = ~np.isnan(flat)
    vals = flat[ok]
    m = vals.size
    if method == "none" or m == 0:
        return out.reshape(p.shape)
    if method == "bonferroni":
        adj = np.minimum(1.0, m * vals)
    else:
        order = np.argsort(vals, kind="stable")
        sp = vals[order]
        i = np.arange(1, m + 1)
        if method == "holm":
            sadj = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * sp))
        else:
            sadj = np.minimum.accumulate(np.minimum(1.0, m * sp / i)[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = sadj
    out[ok] = adj
    return out.reshape(p.shape)


def wilson_interval(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a binomial proportion, elementwise; n == 0 gives NaN.

    Unlike the Wald interval it stays inside [0, 1] and keeps its coverage at 0 and n
    successes, which is where calibration shares (negative satisfaction) usually sit:
    center ``(p + z^2/2n) / (1 + z^2/n)``, half-width
    ``z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)``, z the two-sided normal quantile.
    Returns ``(low, high)`` (floats for scalar input).
    """
    k, nn = np.broadcast_arrays(np.asarray(successes, dtype=np.float64),
                                np.asarray(n, dtype=np.float64))
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if ((k < 0) | (k > nn)).any():
        raise ValueError("successes must lie in [0, n]")
    z = float(norm_ppf(0.5 + confidence / 2.0))
    z2 = z * z
    with np.errstate(divide="ignore", invalid="ignore"):
        ph = k / nn
        denom = 1.0 + z2 / nn
        center = (ph + z2 / (2.0 * nn)) / denom
        half = z / denom * np.sqrt(ph * (1.0 - ph) / nn + z2 / (4.0 * nn * nn))
        low = np.clip(center - half, 0.0, 1.0)
        high = np.clip(center + half, 0.0, 1.0)
    low = np.where(nn == 0, np.nan, low)
    high = np.where(nn == 0, np.nan, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


# --------------------------------------------------------------------------------------
# AUROC and bootstrap intervals for two independent samples
# --------------------------------------------------------------------------------------


def auroc(pos, neg) -> np.ndarray | float:
    """P(a random positive scores above a random negative), ties counted 1/2 (Mann-Whitney).

    Computed from average ranks of the pooled scores: ``(R_pos - n_p(n_p+1)/2) / (n_p n_n)``.
    Batched: ``pos`` (..., n_p) and ``neg`` (..., n_n) with matching leading shapes (for
    example one bootstrap resample per row) give one AUROC per row. NaN when either side is
    empty.
    """
    pos = np.asarray(pos, dtype=np.float64)
    neg = np.asarray(neg, dtype=np.float64)
    npos, nneg = pos.shape[-1], neg.shape[-1]
    lead = np.broadcast_shapes(pos.shape[:-1], neg.shape[:-1])
    if npos == 0 or nneg == 0:
        out = np.full(lead, np.nan)
        return float(out) if out.ndim == 0 else out
    if np.isnan(pos).any() or np.isnan(neg).any():
        raise ValueError("auroc: scores contain NaN")
    pos = np.broadcast_to(pos, lead + (npos,))
    neg = np.broadcast_to(neg, lead + (nneg,))
    ranks = rank_average(np.concatenate([pos, neg], axis=-1))
    u = ranks[..., :npos].sum(axis=-1) - npos * (npos + 1) / 2.0
    out = u / (npos * nneg)
    return float(out) if out.ndim == 0 else out


def bootstrap_ci(
    statistic_fn: Callable[..., np.ndarray],
    *samples,
    n_resamples: int = 10_000,
    seed=0,
    confidence: float = 0.95,
    paired: bool = False,
) -> BootstrapResult:
    """Seeded percentile bootstrap for a vectorized statistic of one or more samples.

    ``statistic_fn(*resampled)`` receives 2-D arrays, one resample per row (shape (b, n_i)),
    and must return one value per row, each row's from that row alone; it is also called once
    on the original samples as (1, n_i) rows for the point estimate. Independent samples (the
    default: positives and negatives of a calibration) are resampled separately, the indices
    those of ``rng.integers(0, n_i, size=(B, n_i))`` per sample in argument order;
    ``paired=True`` draws one index matrix for equal-length samples. With the same ``rng`` this
    reproduces ``scipy.stats.bootstrap(..., method="percentile", paired=paired)``. Large
    bootstraps are evaluated in blocks of rows of those same matrices (at most ``_BLOCK`` cells
    at once), so memory does not grow with B times n. The interval is NaN when a sample is
    empty. ``pvalue`` is NaN (there is no null value here).
    """
    if not samples:
        raise ValueError("bootstrap_ci needs at least one sample")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    arrays = [np.asarray(s, dtype=np.float64) for s in samples]
    if any(x.ndim != 1 for x in arrays):
        raise ValueError("bootstrap_ci samples must be 1-D")
    if any(x.size == 0 for x in arrays):
        return BootstrapResult(np.nan, np.nan, np.nan, np.nan, n_resamples, confidence)
    estimate = float(np.asarray(statistic_fn(*[x[None, :] for x in arrays])).reshape(-1)[0])
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if paired and any(x.size != arrays[0].size for x in arrays):
        raise ValueError("paired samples must have equal lengths")
    dist = _resampled_statistic(statistic_fn, arrays, n_resamples, rng, paired)
    alpha = 1.0 - confidence
    low, high = np.percentile(dist, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return BootstrapResult(estimate, float(low), float(high), np.nan, n_resamples, confidence)


def _resampled_statistic(statistic_fn, arrays: list[np.ndarray], n_resamples: int,
                         rng: np.random.Generator, paired: bool) -> np.ndarray:
    """The statistic of every resample row, the rows drawn exactly as one
    ``rng.integers(0, n_i, size=(B, n_i))`` per sample in argument order would draw them.

    Memory stays bounded: when the matrices would exceed :data:`_BLOCK` cells, rows
    are drawn and evaluated a block at a time (a statistic is computed row by row, so blocks
    give the same values). Drawing a matrix row block by row block yields the same integers
    as drawing it whole; for independent samples each sample gets a generator started where
    its matrix starts in the stream (found by drawing the samples before it once more and
    discarding them), so the indices, the distribution and ``rng``'s final state are exactly
    those of the single draw. Memory per resampled value was ~17 KB per calibrated query at
    1,000 resamples; it is now a constant.
    """
    sizes = [arrays[0].size] if paired else [x.size for x in arrays]
    rows = max(1, _BLOCK // max(sum(sizes), 1))
    if rows >= n_resamples:  # small: one draw per sample, as before
        if paired:
            idx = rng.integers(0, sizes[0], size=(n_resamples, sizes[0]))
            resampled = [x[idx] for x in arrays]
        else:
            resampled = [x[rng.integers(0, x.size, size=(n_resamples, x.size))] for x in arrays]
        dist = np.asarray(statistic_fn(*resampled), dtype=np.float64).reshape(-1)
        if dist.size != n_resamples:
            raise ValueError("statistic_fn must return one value per resample row")
        return dist

    def fork(state) -> np.random.Generator:
        g = np.random.Generator(type(rng.bit_generator)())
        g.bit_generator.state = state
        return g

    gens = [rng]
    if not paired:  # sample i's matrix starts where sample i-1's ends
        gens = [fork(rng.bit_generator.state)]
        for n in sizes[:-1]:
            ahead = fork(gens[-1].bit_generator.state)
            for lo in range(0, n_resamples, rows):
                ahead.integers(0, n, size=(min(rows, n_resamples - lo), n))
            gens.append(ahead)
        gens = [fork(g.bit_generator.state) for g in gens]
    dist = np.empty(n_resamples, dtype=np.float64)
    for lo in range(0, n_resamples, rows):
        b = min(rows, n_resamples - lo)
        if paired:
            idx = rng.integers(0, sizes[0], size=(b, sizes[0]))
            block = [x[idx] for x in arrays]
        else:
            block = [x[g.integers(0, x.size, size=(b, x.size))] for x, g in zip(arrays, gens)]
        values = np.asarray(statistic_fn(*block), dtype=np.float64).reshape(-1)
        if values.size != b:
            raise ValueError("statistic_fn must return one value per resample row")
        dist[lo:lo + b] = values
        del block
    if not paired:  # the caller's generator ends where the single draw would leave it
        rng.bit_generator.state = gens[-1].bit_generator.state
    return dist


def auroc_ci(pos, neg, n_resamples: int = 10_000, seed=0, confidence: float = 0.95) -> BootstrapResult:
    """AUROC with a percentile bootstrap interval; positives and negatives resampled apart.

    Resampling the two groups separately keeps their sizes fixed, as in the study design
    (a fixed set of in-domain and out-of-distribution queries).
    """
    return bootstrap_ci(auroc, pos, neg, n_resamples=n_resamples, seed=seed, confidence=confidence)


def _median_difference(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    return np.median(pos, axis=-1) - np.median(neg, axis=-1)


def median_difference_ci(
    pos, neg, n_resamples: int = 10_000, seed=0, confidence: float = 0.95
) -> BootstrapResult:
    """``median(pos) - median(neg)`` (the separation margin) with a percentile bootstrap
    interval, the two groups resampled separately."""
    return bootstrap_ci(
        _median_difference, pos, neg, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
