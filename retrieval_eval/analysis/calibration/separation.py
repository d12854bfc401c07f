"""How far apart two score distributions are: the figures of a calibration and their intervals.

The positives' and the negatives' top-1 scores of one system give every separation figure a
calibration reports (negative satisfaction and positive retention at a cutoff, separation
margin, AUROC, AUPR-in/out, FPR at 95% TPR) and the seeded bootstrap intervals of AUROC and
the margin. Definitions in SPEC B2 and ``docs/ood-calibration.md``.
"""

from __future__ import annotations

import math

import numpy as np

from ..stats import bootstrap_ci, median_difference

__all__ = [
    "average_precision",
    "coded_auroc",
    "pairwise_wins",
    "separation_figures",
    "separation_intervals",
    "threshold_95",
]


def average_precision(scores: np.ndarray, labels: np.ndarray) -> float:
    """Step-wise average precision, scikit-learn's ``average_precision_score`` definition.

    ``sum_n (R_n - R_{n-1}) P_n`` over the distinct score thresholds, ties grouped.

    Parameters
    ----------
    scores : ndarray
        One score per item.
    labels : ndarray of bool
        True for the class being retrieved.

    Returns
    -------
    float
        NaN when every label is the same (no precision-recall curve).

    Examples
    --------
    >>> round(average_precision(np.array([0.9, 0.8, 0.3]), np.array([True, False, True])), 4)
    0.8333
    """
    if labels.sum() == 0 or labels.all():
        return math.nan
    order = np.argsort(-scores, kind="mergesort")
    s, y = scores[order], labels[order]
    last = np.r_[s[1:] != s[:-1], True]
    tp = np.cumsum(y)[last].astype(np.float64)
    fp = np.cumsum(~y)[last].astype(np.float64)
    precision = tp / (tp + fp)
    recall = tp / tp[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def threshold_95(pos: np.ndarray) -> float:
    """The largest ``t`` with a share of positives ``>= t`` of at least 0.95.

    Integer arithmetic: the m-th largest positive, ``m = ceil(0.95 n)``.

    Parameters
    ----------
    pos : ndarray
        The positives' scores.

    Returns
    -------
    float
        NaN without positives.

    Examples
    --------
    >>> threshold_95(np.array([0.9, 0.8, 0.7]))
    0.7
    """
    if pos.size == 0:
        return math.nan
    m = (95 * pos.size + 99) // 100
    return float(np.sort(pos)[::-1][m - 1])


def pairwise_wins(values: np.ndarray, other_sorted: np.ndarray, positive: bool) -> np.ndarray:
    """Per query: the share of the other class it is correctly ordered against, ties 1/2.

    For a positive: share of negatives scoring below it; for a negative: share of positives
    scoring above it. The mean over either class is the AUROC.

    Parameters
    ----------
    values : ndarray
        The scores of one class.
    other_sorted : ndarray
        The other class's scores, sorted.
    positive : bool
        Whether ``values`` are the positives.

    Returns
    -------
    ndarray
        One share per value; NaN when the other class is empty.

    Examples
    --------
    >>> pairwise_wins(np.array([0.9, 0.5]), np.array([0.2, 0.5]), True).tolist()
    [1.0, 0.75]
    """
    if other_sorted.size == 0:
        return np.full(values.size, np.nan)
    lo = np.searchsorted(other_sorted, values, side="left")
    hi = np.searchsorted(other_sorted, values, side="right")
    if positive:
        return (lo + 0.5 * (hi - lo)) / other_sorted.size
    return (other_sorted.size - hi + 0.5 * (hi - lo)) / other_sorted.size


def separation_figures(pos: np.ndarray, neg: np.ndarray, cutoff: float) -> dict[str, float]:
    """Every separation figure of one system's positives and negatives at ``cutoff``.

    ``negative_satisfaction`` is strict (``top1 < C``) and ``positive_retention`` is not
    (``top1 >= C``): a production cutoff keeps a hit whose score equals it. A figure that needs
    a class that is empty (or a cutoff that is NaN) is NaN: it does not exist.

    Parameters
    ----------
    pos, neg : ndarray
        The positives' and the negatives' top-1 scores (finite).
    cutoff : float
        The cutoff ``C`` (NaN: none could be calibrated).

    Returns
    -------
    dict
        ``negative_satisfaction``, ``positive_retention``, ``separation_margin`` (median
        difference), ``auroc`` (ties 1/2), ``aupr_in``, ``aupr_out``, ``fpr@95tpr`` and
        ``threshold@95tpr``.

    Examples
    --------
    >>> f = separation_figures(np.array([0.9, 0.8, 0.7, 0.6]), np.array([0.2, 0.6, 0.1]), 0.65)
    >>> f["negative_satisfaction"], f["positive_retention"], round(f["auroc"], 4)
    (1.0, 0.75, 0.9583)
    """
    npos, nneg = pos.size, neg.size
    neg_sorted = np.sort(neg)
    t95 = threshold_95(pos)
    scores = np.r_[pos, neg]
    labels = np.r_[np.ones(npos, bool), np.zeros(nneg, bool)]
    both = npos > 0 and nneg > 0
    has_cut = not math.isnan(cutoff)
    return {
        "negative_satisfaction": float(np.mean(neg < cutoff)) if nneg and has_cut else math.nan,
        "positive_retention": float(np.mean(pos >= cutoff)) if npos and has_cut else math.nan,
        "separation_margin": float(median_difference(pos, neg)) if both else math.nan,
        "auroc": float(pairwise_wins(pos, neg_sorted, True).mean()) if both else math.nan,
        "aupr_in": average_precision(scores, labels) if both else math.nan,
        "aupr_out": average_precision(-scores, ~labels) if both else math.nan,
        "fpr@95tpr": float(np.mean(neg >= t95)) if both else math.nan,
        "threshold@95tpr": t95,
    }


#: Cells of a (resamples x distinct scores) count matrix built at once; larger jobs go in blocks.
_BLOCK = 1 << 22


def coded_auroc(n_values: int):
    """A batched AUROC over *codes* (positions in the sorted distinct scores), without sorting.

    For each resample row, the resampled negatives are counted per distinct score
    (``np.bincount``); a positive with code ``v`` beats the negatives below ``v`` and ties
    with those at ``v`` (1/2 each). O(B * (n + V)) instead of a sort of every row, and the
    same number as :func:`retrieval_eval.analysis.stats.auroc` on the scores themselves.

    Parameters
    ----------
    n_values : int
        The number of distinct scores (codes run from 0 to ``n_values - 1``).

    Returns
    -------
    callable
        ``statistic(pos_codes, neg_codes)`` on (B, n_pos) and (B, n_neg) integer-valued
        arrays, one AUROC per row.

    Examples
    --------
    >>> coded_auroc(3)(np.array([[2, 1]]), np.array([[0, 1]])).tolist()
    [0.875]
    """

    def statistic(pos_codes: np.ndarray, neg_codes: np.ndarray) -> np.ndarray:
        pc = np.asarray(pos_codes).astype(np.int64)
        nc = np.asarray(neg_codes).astype(np.int64)
        rows, npos, nneg = pc.shape[0], pc.shape[1], nc.shape[1]
        out = np.empty(rows)
        step = max(1, _BLOCK // max(n_values, 1))
        for lo in range(0, rows, step):  # blocks of resamples, each one vectorized
            hi = min(rows, lo + step)
            b = hi - lo
            flat = (np.arange(b)[:, None] * n_values + nc[lo:hi]).ravel()
            counts = np.bincount(flat, minlength=b * n_values).reshape(b, n_values)
            below = np.cumsum(counts, axis=1) - counts
            credit = below + 0.5 * counts
            out[lo:hi] = np.take_along_axis(credit, pc[lo:hi], axis=1).sum(axis=1) / (npos * nneg)
        return out

    return statistic


def separation_intervals(pos: np.ndarray, neg: np.ndarray, n_resamples: int, seed) -> dict[str, tuple[float, float]]:
    """Seeded percentile intervals for AUROC and the separation margin.

    Positives and negatives are resampled separately (the design fixes how many of each were
    asked), each sorted by score and then resampled with one ``(n_resamples, n)`` index
    matrix drawn by :func:`retrieval_eval.analysis.stats.bootstrap_ci` from
    ``default_rng(seed)``, positives first; the same seed gives the same interval on every
    machine. AUROC resamples are evaluated on score codes (:func:`coded_auroc`), which draws
    the same indices as resampling the scores.

    Parameters
    ----------
    pos, neg : ndarray
        The positives' and the negatives' top-1 scores.
    n_resamples : int
        Bootstrap resamples.
    seed : int or numpy.random.Generator
        The bootstrap's seed.

    Returns
    -------
    dict
        ``{"auroc": (low, high), "separation_margin": (low, high)}``; NaN bounds when a class
        is empty.

    Examples
    --------
    >>> ci = separation_intervals(np.array([0.9, 0.8, 0.7, 0.6]), np.array([0.2, 0.3, 0.65]), 200, 0)
    >>> ci["auroc"]
    (0.6666666666666666, 1.0)
    """
    if pos.size == 0 or neg.size == 0:
        return {"auroc": (math.nan, math.nan), "separation_margin": (math.nan, math.nan)}
    # Sorted first, so the interval depends on the scores, not on the order rows came in.
    pos, neg = np.sort(pos), np.sort(neg)
    values, codes = np.unique(np.r_[pos, neg], return_inverse=True)
    codes = codes.astype(np.float64)
    a = bootstrap_ci(coded_auroc(values.size), codes[: pos.size], codes[pos.size :], n_resamples=n_resamples, seed=seed)
    with np.errstate(invalid="ignore"):  # an inf margin (stats.difference) has no interval
        m = bootstrap_ci(median_difference, pos, neg, n_resamples=n_resamples, seed=seed)
    return {"auroc": (float(a.ci_low), float(a.ci_high)), "separation_margin": (float(m.ci_low), float(m.ci_high))}
