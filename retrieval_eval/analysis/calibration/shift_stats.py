"""The two statistics of a score shift: the two-sample Kolmogorov-Smirnov test and the
population stability index (PSI), over two samples of top-1 scores.

:func:`retrieval_eval.analysis.calibration.shift.score_shift` reports both; their definitions
(exact and asymptotic KS p-values, PSI's quantile bins and the half-query floor of an empty
bin) are in :mod:`retrieval_eval.analysis.calibration.shift`'s docstring. The tests check them
against ``scipy.stats.ks_2samp``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["MAX_BINS", "ks_2samp", "psi"]

#: Above this many queries a side the KS p-value is asymptotic (scipy's ``auto`` rule).
_EXACT_KS = 10_000
#: The most PSI bins :func:`score_shift` takes. Each bin is a quantile edge of the before
#: scores, and a PSI over more bins than a few thousand measures sampling noise, not a shift;
#: the bound also keeps a mistyped ``--bins 1000000000`` from allocating gigabytes.
MAX_BINS = 10_000


def _ks_statistic(x: np.ndarray, y: np.ndarray) -> float:
    both = np.concatenate([x, y])
    fx = np.searchsorted(x, both, side="right") / x.size
    fy = np.searchsorted(y, both, side="right") / y.size
    return float(np.max(np.abs(fx - fy)))


def _ks_exact_sf(m: int, n: int, d: float) -> float:
    """P(D >= d) for two independent samples of sizes m, n from one continuous distribution.

    The interleaving of the two samples is a uniformly random lattice path from (0, 0) to
    (m, n); ``D < d`` when every point stays inside ``|i n - j m| < d m n``. The probability of
    staying inside is propagated one anti-diagonal at a time (transition probabilities, not
    path counts, so nothing overflows).
    """
    if d <= 0:
        return 1.0
    limit = round(d * m * n)  # D m n is an integer: the largest |i n - j m| on the path
    prob = np.array([1.0])  # points (i, t - i) of diagonal t, i from lo(t) to hi(t)
    lo = 0
    for t in range(1, m + n + 1):  # m + n diagonals, each one vectorized
        new_lo, new_hi = max(0, t - n), min(t, m)
        i = np.arange(new_lo, new_hi + 1)
        j = t - i
        # arrive from (i - 1, j): an x step, taken with probability (m - i + 1) / (m + n - t + 1)
        from_x = np.zeros(i.size)
        ok = (i - 1 >= lo) & (i - 1 < lo + prob.size)
        from_x[ok] = prob[i[ok] - 1 - lo] * (m - i[ok] + 1) / (m + n - t + 1)
        from_y = np.zeros(i.size)
        ok = (i >= lo) & (i < lo + prob.size)
        from_y[ok] = prob[i[ok] - lo] * (n - j[ok] + 1) / (m + n - t + 1)
        prob = (from_x + from_y) * (np.abs(i * n - j * m) < limit)
        lo = new_lo
    return float(min(1.0, max(0.0, 1.0 - prob.sum())))


def _kolmogorov_sf(x: float) -> float:
    """``P(K > x)`` of the Kolmogorov distribution: ``2 sum (-1)^(k-1) exp(-2 k^2 x^2)``."""
    if x <= 0:
        return 1.0
    k = np.arange(1, 101)
    return float(min(1.0, max(0.0, 2.0 * np.sum((-1.0) ** (k - 1) * np.exp(-2.0 * k * k * x * x)))))


def ks_2samp(before, after) -> tuple[float, float, str]:
    """``(statistic, p-value, method)`` of the two-sided two-sample Kolmogorov-Smirnov test.

    Parameters
    ----------
    before, after : array_like
        The two samples of scores.

    Returns
    -------
    tuple
        ``D = max |F_before - F_after|``, its p-value, and ``method``: ``"exact"`` when both
        samples have at most 10,000 values (the p-value of ``scipy.stats.ks_2samp(method=
        "exact")``), else ``"asymptotic"`` (the Kolmogorov distribution at
        ``sqrt(m n / (m + n)) D``). NaN when a sample is empty.

    Examples
    --------
    >>> d, p, method = ks_2samp([0.1, 0.2, 0.3], [0.5, 0.6, 0.7])
    >>> d, round(p, 3), method
    (1.0, 0.1, 'exact')
    """
    x = np.sort(np.asarray(before, dtype=np.float64))
    y = np.sort(np.asarray(after, dtype=np.float64))
    if x.size == 0 or y.size == 0:
        return math.nan, math.nan, ""
    d = _ks_statistic(x, y)
    m, n = x.size, y.size
    if max(m, n) <= _EXACT_KS:
        return d, _ks_exact_sf(m, n, d), "exact"
    return d, _kolmogorov_sf(math.sqrt(m * n / (m + n)) * d), "asymptotic"


def psi(before, after, bins: int = 10) -> tuple[float, pd.DataFrame]:
    """Population stability index of ``after`` against ``before``, and its bin table.

    Bin edges are the ``bins``-quantiles of ``before`` (repeated edges merged), the outer
    bins open-ended, so every score of either run falls in a bin; a value equal to an edge
    goes to the bin above it. Shares of 0 count as ``0.5 / n``, so one empty bin does not make
    the index infinite.

    Parameters
    ----------
    before, after : array_like
        The two samples of scores.
    bins : int
        Quantile bins of ``before``, 2 to :data:`MAX_BINS`.

    Returns
    -------
    tuple
        ``(psi, table)``, the table with columns ``bin``, ``low``, ``high``, ``n_before``,
        ``n_after``, ``share_before``, ``share_after`` and ``term`` (the bin's contribution);
        NaN and an empty table when a sample is empty.

    Raises
    ------
    ValueError
        ``bins`` below 2 or above :data:`MAX_BINS`.

    Examples
    --------
    >>> index, table = psi([0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], bins=2)
    >>> index, len(table)
    (0.0, 2)
    """
    b = np.asarray(before, dtype=np.float64)
    a = np.asarray(after, dtype=np.float64)
    if not 2 <= int(bins) <= MAX_BINS:
        raise ValueError(f"bins must be between 2 and {MAX_BINS}, got {bins}")
    if b.size == 0 or a.size == 0:
        return math.nan, pd.DataFrame(
            columns=["bin", "low", "high", "n_before", "n_after", "share_before", "share_after", "term"]
        )
    edges = np.unique(np.quantile(b, np.arange(1, int(bins)) / int(bins)))
    nb = np.bincount(np.searchsorted(edges, b, side="right"), minlength=edges.size + 1)
    na = np.bincount(np.searchsorted(edges, a, side="right"), minlength=edges.size + 1)
    sb = np.maximum(nb, 0.5) / b.size
    sa = np.maximum(na, 0.5) / a.size
    term = (sa - sb) * np.log(sa / sb)
    table = pd.DataFrame(
        {
            "bin": np.arange(edges.size + 1, dtype=np.int64),
            "low": np.r_[-np.inf, edges],
            "high": np.r_[edges, np.inf],
            "n_before": nb.astype(np.int64),
            "n_after": na.astype(np.int64),
            "share_before": nb / b.size,
            "share_after": na / a.size,
            "term": term,
        }
    )
    return float(term.sum()), table
