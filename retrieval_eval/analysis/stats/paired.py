"""Paired tests of two systems over the same queries: randomization, t, bootstrap, Wilcoxon.

Every test takes ``a`` and ``b`` of shape (n,) or (m, n) (one comparison per row; ``b=None``
means ``a`` already holds differences ``d = a - b``) and tests every row at once: the
resampling tests draw their resamples as matrices and evaluate them with one matrix product.
Two-sided throughout; the conventions that change a number are stated in
:mod:`retrieval_eval.analysis.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from .bootstrap import BLOCK, BootstrapResult, bootstrap_pvalue
from .ranks import rank_average
from .special import norm_sf, t_two_tail

__all__ = [
    "RandomizationResult",
    "TTestResult",
    "WilcoxonResult",
    "sign_flips",
    "paired_randomization",
    "paired_t",
    "paired_bootstrap",
    "wilcoxon",
]

_EPS = np.finfo(np.float64).eps


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
class WilcoxonResult:
    """Wilcoxon signed-rank test: ``min(R+, R-)`` (scipy's statistic), two-sided p, method."""

    statistic: np.ndarray | float
    pvalue: np.ndarray | float
    method: np.ndarray | str


def sign_flips(n: int, n_resamples: int, seed=0, *, like_scipy: bool = False) -> np.ndarray:
    """A ``(n_resamples, n)`` matrix of random signs (+1/-1), float64, from ``seed``.

    Parameters
    ----------
    n : int
        Queries (columns).
    n_resamples : int
        Rows.
    seed : int or numpy.random.Generator
        The generator's seed (or the generator).
    like_scipy : bool
        The default draws random bytes and unpacks their bits (fast). True reproduces the sign
        flips ``scipy.stats.permutation_test((d,), ..., permutation_type="samples",
        n_resamples=B, rng=np.random.default_rng(seed))`` draws (``B < 2**n``), so a test can
        compare p-values resample for resample.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> sign_flips(3, 2, seed=0).tolist()
    [[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]]
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if like_scipy:
        pairs = np.tile(np.arange(2), (n_resamples, n, 1))
        first = rng.permuted(pairs, axis=-1)[..., 0]
        return np.where(first == 0, 1.0, -1.0)
    nbytes = -(-n // 8)
    bits = np.unpackbits(
        np.frombuffer(rng.bytes(n_resamples * nbytes), dtype=np.uint8).reshape(n_resamples, nbytes), axis=1, count=n
    )
    return 1.0 - 2.0 * bits


def _all_signs(n: int) -> np.ndarray:
    """Every sign vector of length n, all +1 first (scipy's enumeration order)."""
    codes = np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n - 1, -1, -1)
    return 1.0 - 2.0 * (codes & 1)


def _sign_blocks(n: int, n_resamples: int, seed, exact, signs):
    """``(is_exact, total, blocks)``: the sign matrices a randomization test consumes, in
    blocks of at most :data:`BLOCK` cells (every ``2**n`` vector, random ones, or ``signs``)."""
    if signs is not None:
        signs = np.asarray(signs, dtype=np.float64)
        if signs.ndim != 2 or signs.shape[1] != n:
            raise ValueError(f"signs must have shape (B, {n}), got {signs.shape}")
        return bool(exact is True), signs.shape[0], iter([signs])
    is_exact = exact is True or (exact == "auto" and n < 63 and 2**n <= n_resamples)
    if is_exact:
        if n > 24:
            raise ValueError(f"exact enumeration of 2**{n} sign vectors is too large")
        total = 2**n
        rows = max(1, BLOCK // max(n, 1))
        allsigns = _all_signs(n)
        return True, total, (allsigns[start : start + rows] for start in range(0, total, rows))
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    total = n_resamples
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rows = max(1, BLOCK // n)
    return False, total, (sign_flips(n, min(rows, total - start), rng) for start in range(0, total, rows))


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
    flipping signs. Every row is tested with the *same* sign matrix, one matrix product for
    all comparisons.

    Parameters
    ----------
    a, b : array_like
        Per-query values, shape (n,) or (m, n) (one comparison per row); ``b=None`` means
        ``a`` already holds the differences.
    n_resamples : int
        Random sign vectors when the test is not exact.
    seed : int or numpy.random.Generator
        Seeds the random sign vectors (``sign_flips(n, n_resamples, seed)``).
    exact : bool or "auto"
        ``"auto"`` enumerates all ``2**n`` sign vectors when that is no more than
        ``n_resamples`` (p = share of assignments at least as extreme, no +1); otherwise the
        +1 rule ``p = (count + 1) / (B + 1)`` over random vectors.
    two_sided : "abs" or "double"
        ``"abs"`` counts ``|T*| >= |T| - tol``; ``"double"`` is scipy's
        ``2 * min(P(T* <= T), P(T* >= T))`` clipped to 1 (identical for the exact enumeration,
        which is symmetric). ``tol = 1e-9 * mean(|d|)`` per row.
    signs : ndarray, optional
        Overrides the resamples (for example ``sign_flips(..., like_scipy=True)``).

    Returns
    -------
    RandomizationResult
        Mean difference and p-value (floats for one comparison, arrays for m), resamples
        used, exactness.

    Examples
    --------
    >>> r = paired_randomization([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6])
    >>> r.exact, round(r.pvalue, 3)
    (True, 0.25)
    """
    d, single = _differences(a, b)
    m, n = d.shape
    if two_sided not in ("abs", "double"):
        raise ValueError(f"two_sided must be 'abs' or 'double', got {two_sided!r}")
    is_exact, total, blocks = _sign_blocks(n, n_resamples, seed, exact, signs)
    observed = d.mean(axis=1)
    tol = 1e-9 * np.abs(d).mean(axis=1)
    dt = d.T  # (n, m)
    ge = np.zeros(m, dtype=np.int64)  # |T*| >= |T|  or  T* >= T
    le = np.zeros(m, dtype=np.int64)  # T* <= T (double mode)
    for s in blocks:
        perm = (s @ dt) / n  # (rows, m)
        if two_sided == "abs":
            ge += np.count_nonzero(np.abs(perm) >= np.abs(observed) - tol, axis=0)
        else:
            ge += np.count_nonzero(perm >= observed - tol, axis=0)
            le += np.count_nonzero(perm <= observed + tol, axis=0)
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
    difference gives t = +-inf and p = 0.

    Parameters
    ----------
    a, b : array_like
        Per-query values, (n,) or (m, n); ``b=None`` means ``a`` holds the differences.

    Returns
    -------
    TTestResult
        t, p, df and the mean difference (floats for one comparison, arrays for m).

    Raises
    ------
    ValueError
        Fewer than 2 queries, or NaN.

    Examples
    --------
    >>> r = paired_t([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6])
    >>> round(r.statistic, 4), round(r.pvalue, 4), r.df
    (2.3238, 0.1027, 3)
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
    p = t_two_tail(t, np.full(t.shape, float(n - 1)))
    p = np.clip(np.where(zero, 1.0, p), 0.0, 1.0)
    return TTestResult(_out(t, single), _out(p, single), n - 1, _out(mean, single))


def _bootstrap_weights(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """Resample counts (rows, n): row r counts how often each query is drawn in resample r."""
    idx = rng.integers(0, n, size=(rows, n))
    flat = (idx + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


def paired_bootstrap(a, b=None, n_resamples: int = 10_000, seed=0, confidence: float = 0.95) -> BootstrapResult:
    """Bootstrap of the mean difference over queries: percentile interval and a p-value.

    Queries are resampled with replacement (the same resamples for every row of an (m, n)
    input: resample r draws ``rng.integers(0, n, size=n)``; drawn in blocks of rows, each block
    one matrix product). The p-value is ``min(1, 2 * (min(#{T* <= 0}, #{T* >= 0}) + 1) /
    (B + 1))``: the smallest two-sided level whose percentile interval excludes 0, with the +1
    rule so it is never 0; a resampled mean within :data:`TIE` of 0 counts on both sides (float
    noise must not decide a p-value). It is a percentile-interval p-value, not a
    null-distribution test: prefer the randomization test for p-values and use this for the
    interval.

    Parameters
    ----------
    a, b : array_like
        Per-query values, (n,) or (m, n); ``b=None`` means ``a`` holds the differences.
    n_resamples : int
        Resamples B.
    seed : int or numpy.random.Generator
        The resamples' seed.
    confidence : float
        The interval's confidence.

    Returns
    -------
    BootstrapResult
        Mean difference, percentile interval, p-value.

    Raises
    ------
    ValueError
        Bad ``confidence``/``n_resamples``, or NaN.

    Examples
    --------
    >>> r = paired_bootstrap([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6], n_resamples=500)
    >>> round(r.statistic, 2), round(r.ci_low, 2), round(r.ci_high, 2)
    (0.15, 0.05, 0.25)
    """
    d, single = _differences(a, b)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    m, n = d.shape
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    rows = max(1, BLOCK // n)
    dt = d.T
    means = np.empty((n_resamples, m))
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        means[start : start + r] = (_bootstrap_weights(rng, r, n) @ dt) / n
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=0)
    p = bootstrap_pvalue(means)
    stat = d.mean(axis=1)
    return BootstrapResult(
        _out(stat, single),
        _out(low, single),
        _out(high, single),
        _out(cast(np.ndarray, p), single),
        n_resamples,
        confidence,
    )


def _tie_term(absd_masked: np.ndarray) -> np.ndarray:
    """Sum over tie groups of (t**3 - t) per row; NaN entries are never tied."""
    rows, n = absd_masked.shape
    ys = np.sort(absd_masked, axis=1)
    new = np.ones((rows, n), dtype=bool)
    new[:, 1:] = ys[:, 1:] != ys[:, :-1]
    starts = np.flatnonzero(new.ravel())
    counts = np.diff(np.append(starts, rows * n)).astype(np.float64)
    row_of = starts // n
    return np.bincount(row_of, weights=counts**3 - counts, minlength=rows)


def _wilcoxon_exact_cdf(n: int) -> np.ndarray:
    """Cumulative counts of R+ = 0..n(n+1)/2 over the 2**n sign assignments (no ties).

    Dynamic programming over ranks 1..n: counts[k] = number of subsets of {1..n} summing to k.
    Counts stay below 2**53 for n <= 50, so float64 holds them exactly.
    """
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    top = 0
    for r in range(1, n + 1):
        counts[r : top + r + 1] += counts[: top + 1].copy()
        top += r
    return np.cumsum(counts)


def _signed_ranks(d: np.ndarray, zero_method: str):
    """Per row: the ranks of |d|, R+, R-, the half of the zeros' ranks each sign gets
    (``zsplit``), and the tie term of the ranks the statistic reads."""
    nonzero = d != 0
    absd = np.abs(d) if zero_method != "wilcox" else np.where(nonzero, np.abs(d), np.nan)
    r = rank_average(absd)
    half_zero = 0.5 * np.where(~nonzero, r, 0.0).sum(axis=1) if zero_method == "zsplit" else np.zeros(d.shape[0])
    r_plus = np.where(d > 0, r, 0.0).sum(axis=1) + half_zero
    r_minus = np.where(d < 0, r, 0.0).sum(axis=1) + half_zero
    # wilcox, pratt: the ties among the non-zero |d|; zsplit: among all (the zeros one group)
    tie = _tie_term(np.where(nonzero, np.abs(d), np.nan) if zero_method != "zsplit" else absd)
    return r, r_plus, r_minus, half_zero, tie


def _wilcoxon_normal_p(count: np.ndarray, n: int, r_plus: np.ndarray, tie: np.ndarray, zero_method: str) -> np.ndarray:
    """The normal approximation's two-sided p-value of R+ (tie correction, no continuity one)."""
    c = (count if zero_method == "wilcox" else np.full(len(count), n)).astype(np.float64)
    mn = c * (c + 1.0) * 0.25
    var = c * (c + 1.0) * (2.0 * c + 1.0)
    if zero_method == "pratt":  # the zeros' ranks 1..n0 are out of R+ and of its variance
        z0 = (n - count).astype(np.float64)
        mn, var = mn - z0 * (z0 + 1.0) * 0.25, var - z0 * (z0 + 1.0) * (2.0 * z0 + 1.0)
    se = np.sqrt((var - tie / 2.0) / 24.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (r_plus - mn) / se
    return np.clip(2.0 * norm_sf(np.abs(z)), 0.0, 1.0)


def wilcoxon(a, b=None, zero_method: str = "wilcox") -> WilcoxonResult:
    """Wilcoxon signed-rank test, two-sided, matching ``scipy.stats.wilcoxon``.

    ``zero_method`` as scipy's: ``"wilcox"`` (scipy's default) drops zero differences before
    ranking, ``"pratt"`` ranks them with the others and then drops their ranks, ``"zsplit"``
    ranks them and gives half of their ranks to each sign. IR metrics tie often (two systems
    both score 0 or 1 on a query), so the choice matters: with ``wilcox`` such queries do not
    count at all. Tied |d| get average ranks. The
    p-value method per row follows scipy 1.17's ``method="auto"``:
    n (queries, zeros included) <= 50 without ties or zeros -> exact null distribution of R+
    (dynamic programming), ``p = 2 * min(P(R+ <= ceil r), P(R+ >= floor r))``; n <= 13 with
    ties or zeros -> exact enumeration of all 2**n sign flips of R+; otherwise the normal
    approximation ``z = (R+ - N(N+1)/4) / sqrt((N(N+1)(2N+1) - sum(t^3 - t)/2) / 24)``
    (N = non-zero differences, tie correction, no continuity correction: scipy's default).
    When every difference is zero the p-value is 1 (scipy gives NaN for n > 13).

    Parameters
    ----------
    a, b : array_like
        Per-query values, (n,) or (m, n); ``b=None`` means ``a`` holds the differences.

    Returns
    -------
    WilcoxonResult
        ``min(R+, R-)``, p and the method used, per row.

    Examples
    --------
    >>> wilcoxon([0.5, 0.7, 0.9, 0.6, 0.8], [0.4, 0.5, 0.6, 0.55, 0.9])
    WilcoxonResult(statistic=2.5, pvalue=0.25, method='permutation')
    """
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise ValueError(f"zero_method must be 'wilcox', 'pratt' or 'zsplit', got {zero_method!r}")
    d, single = _differences(a, b)
    m, n = d.shape
    nonzero = d != 0
    count = nonzero.sum(axis=1)
    r, r_plus, r_minus, half_zero, tie = _signed_ranks(d, zero_method)
    has_ties = tie > 0
    has_zero = count < n
    p = np.full(m, np.nan)
    method = np.empty(m, dtype=object)

    exact = (n <= 50) & ~has_ties & ~has_zero
    perm = (n <= 13) & ~exact
    asym = ~exact & ~perm

    if exact.any():
        cum = _wilcoxon_exact_cdf(n)
        total = 2.0**n
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
        null = np.einsum("bkn,kn->bk", null, pos_rank) + half_zero[rows]
        obs = r_plus[rows]
        gamma = np.abs(100 * _EPS * obs)
        le = np.count_nonzero(null <= obs + gamma, axis=0)
        ge = np.count_nonzero(null >= obs - gamma, axis=0)
        p[rows] = np.clip(2.0 * np.minimum(le, ge) / 2.0**n, 0.0, 1.0)
        method[rows] = "permutation"
    if asym.any():
        p[asym] = _wilcoxon_normal_p(count[asym], n, r_plus[asym], tie[asym], zero_method)
        method[asym] = "asymptotic"
    p = np.where(count == 0, 1.0, p)
    stat = np.minimum(r_plus, r_minus)
    return WilcoxonResult(_out(stat, single), _out(p, single), method[0] if single else method)
