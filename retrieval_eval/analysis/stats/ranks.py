"""Average ranks (ties shared) and the rank statistic built on them, AUROC (Mann-Whitney)."""

from __future__ import annotations

import numpy as np

__all__ = ["rank_average", "auroc"]


def rank_average(x) -> np.ndarray:
    """Ranks 1..n along the last axis with ties given their average rank (vectorized over rows).

    NaN sorts last and each NaN gets its own rank, as in scipy's ``rankdata``.

    Parameters
    ----------
    x : array_like
        Values; ranks are taken along the last axis.

    Returns
    -------
    ndarray
        Same shape as ``x``.

    Examples
    --------
    >>> rank_average([3.0, 1.0, 3.0]).tolist()
    [2.5, 1.0, 2.5]
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


def auroc(pos, neg) -> np.ndarray | float:
    """P(a random positive scores above a random negative), ties counted 1/2 (Mann-Whitney).

    Computed from average ranks of the pooled scores: ``(R_pos - n_p(n_p+1)/2) / (n_p n_n)``.

    Parameters
    ----------
    pos, neg : array_like
        (..., n_p) and (..., n_n) with matching leading shapes (for example one bootstrap
        resample per row): one AUROC per row.

    Returns
    -------
    float or ndarray
        NaN when either side is empty.

    Raises
    ------
    ValueError
        A score is NaN.

    Examples
    --------
    >>> auroc([0.9, 0.5], [0.5, 0.1])
    0.875
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
