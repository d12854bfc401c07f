"""Agreement between raters: Cohen's kappa (weighted or not) and Krippendorff's alpha.

Batched: a leading axis of resamples costs one call (the bootstrap of
:func:`retrieval_eval.analysis.agreement.label_agreement` resamples units that way). Computed
with numpy; the tests check them against scikit-learn's ``cohen_kappa_score`` and the
``krippendorff`` package.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cohen_kappa", "confusion_counts", "kappa_from_confusion", "krippendorff_alpha"]


def confusion_counts(a: np.ndarray, b: np.ndarray, n_cat: int) -> np.ndarray:
    """Counts of (a, b) category pairs, batched over leading axes.

    Parameters
    ----------
    a, b : ndarray
        Integer category codes, shape (..., n).
    n_cat : int
        The number of categories.

    Returns
    -------
    ndarray
        Shape (..., n_cat, n_cat), float: rows ``a``'s category, columns ``b``'s.

    Examples
    --------
    >>> confusion_counts(np.array([[0, 1, 1]]), np.array([[0, 1, 0]]), 2).tolist()
    [[[1.0, 0.0], [1.0, 1.0]]]
    """
    lead = a.shape[:-1]
    rows = int(np.prod(lead)) if lead else 1
    flat = (np.arange(rows)[:, None] * n_cat * n_cat + a.reshape(rows, -1) * n_cat + b.reshape(rows, -1)).ravel()
    counts = np.bincount(flat, minlength=rows * n_cat * n_cat)
    return counts.reshape(lead + (n_cat, n_cat)).astype(np.float64)


def kappa_from_confusion(c: np.ndarray, values: np.ndarray, weights: str | None) -> np.ndarray:
    """Kappa of confusion matrices (..., K, K): ``1 - sum(w O) / sum(w E)``.

    ``w`` is 1 off the diagonal (unweighted), ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic)
    over the category *values*, as scikit-learn's ``cohen_kappa_score`` over integer codes of
    consecutive grades; here over the grades themselves, so a grade no one used still counts
    as a step.

    Parameters
    ----------
    c : ndarray
        Confusion counts (:func:`confusion_counts`).
    values : ndarray
        The category values, sorted.
    weights : None, "linear" or "quadratic"
        The disagreement weights.

    Returns
    -------
    ndarray
        One kappa per matrix (NaN where chance agreement is perfect).

    Raises
    ------
    ValueError
        Unknown ``weights``.

    Examples
    --------
    >>> c = confusion_counts(np.array([[0, 1, 1, 0]]), np.array([[0, 1, 0, 0]]), 2)
    >>> kappa_from_confusion(c, np.array([0.0, 1.0]), None).tolist()
    [0.5]
    """
    v = np.asarray(values, dtype=np.float64)
    diff = v[:, None] - v[None, :]
    if weights is None:
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(diff)
    elif weights == "quadratic":
        w = diff**2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    n = c.sum(axis=(-2, -1), keepdims=True)
    expected = c.sum(axis=-1, keepdims=True) * c.sum(axis=-2, keepdims=True) / np.where(n > 0, n, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 1.0 - (w * c).sum(axis=(-2, -1)) / (w * expected).sum(axis=(-2, -1))
    return out


def cohen_kappa(a, b, weights: str | None = None, labels=None) -> float:
    """Cohen's kappa of two raters' labels of the same units (weighted with ``weights``).

    Chance agreement comes from each rater's own label distribution (Cohen 1960, 1968).

    Parameters
    ----------
    a, b : array_like
        The two raters' labels, 1-D, same length.
    weights : None, "linear" or "quadratic"
        Unweighted (any disagreement counts fully), or distances ``|i - j|`` / ``(i - j)^2``
        between the category values.
    labels : array_like, optional
        The category values (default: every value either rater used, sorted).

    Returns
    -------
    float
        NaN when chance agreement is perfect (both raters used one and the same category:
        kappa is 0/0, not 1).

    Raises
    ------
    ValueError
        ``a`` and ``b`` are not two 1-D arrays of the same length.

    Examples
    --------
    >>> round(cohen_kappa([0, 1, 2, 2], [0, 1, 2, 1]), 4)
    0.6364
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("cohen_kappa needs two 1-D arrays of the same length")
    values = np.unique(np.r_[a, b]) if labels is None else np.asarray(labels)
    ca, cb = np.searchsorted(values, a), np.searchsorted(values, b)
    if values.size == 0:
        return math.nan
    c = confusion_counts(ca[None, :], cb[None, :], values.size)
    return float(kappa_from_confusion(c, values, weights)[0])


def _delta2(values: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    if level == "nominal":
        return (v[:, None] != v[None, :]).astype(np.float64)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ordinal":  # (sum of n_g from c to k - (n_c + n_k)/2)^2
        cum = np.cumsum(marginals)
        lo = np.minimum.outer(np.arange(v.size), np.arange(v.size))
        hi = np.maximum.outer(np.arange(v.size), np.arange(v.size))
        span = cum[hi] - np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)
        return (span - (marginals[:, None] + marginals[None, :]) / 2.0) ** 2
    raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")


def krippendorff_alpha(matrix, level: str = "ordinal") -> float:
    """Krippendorff's alpha of a (raters x units) matrix, NaN = not labeled.

    Units with fewer than two labels are left out (no pair to compare). From the coincidence
    matrix ``o_ck = sum_u (pairs (c, k) in u) / (m_u - 1)``: ``alpha = 1 - (n - 1)
    sum o_ck d_ck / sum n_c n_k d_ck``, ``d`` the squared difference of ``level``
    (Krippendorff 2011).

    Parameters
    ----------
    matrix : array_like
        Raters x units, NaN where a rater did not label a unit.
    level : "nominal", "ordinal" or "interval"
        The difference between two values.

    Returns
    -------
    float
        NaN when no unit has two labels or every label is the same.

    Raises
    ------
    ValueError
        ``matrix`` is not 2-D, or an unknown ``level``.

    Examples
    --------
    >>> round(krippendorff_alpha([[0, 1, 2, np.nan], [0, 1, 1, 2]], "nominal"), 4)
    0.5455
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError("krippendorff_alpha needs a raters x units matrix")
    present = ~np.isnan(m)
    m_u = present.sum(axis=0)
    keep = m_u >= 2
    m, present, m_u = m[:, keep], present[:, keep], m_u[keep]
    if m.shape[1] == 0:
        return math.nan
    values = np.unique(m[present])
    codes = np.where(present, np.searchsorted(values, np.where(present, m, values[0])), -1)
    k = values.size
    # per unit: counts of each value, then the coincidences n_uc n_uk (minus self-pairs)
    unit_counts = np.zeros((m.shape[1], k))
    cols = np.broadcast_to(np.arange(m.shape[1]), codes.shape)
    np.add.at(unit_counts, (cols[present], codes[present]), 1.0)
    pairs = unit_counts[:, :, None] * unit_counts[:, None, :]
    pairs[:, np.arange(k), np.arange(k)] -= unit_counts
    o = (pairs / (m_u - 1.0)[:, None, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d = _delta2(values, n_c, level)
    expected = (np.outer(n_c, n_c) * d).sum()
    if expected == 0:
        return math.nan
    return float(1.0 - (n - 1.0) * (o * d).sum() / expected)
