"""Prediction-powered inference (PPI, PPI++) of a mean from a few human labels and many judge
scores (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic 2023; Angelopoulos, Duchi, Zrnic 2023).

An LLM judge scores every item cheaply but with a bias; humans score a small random subset
without it. PPI keeps the judge's precision and removes its bias: with ``n`` human labels
``Y``, the judge's scores on them ``Yhat`` and on ``N`` other items ``Yhat_u``,

    theta(lam) = lam * mean(Yhat_u) + mean(Y - lam * Yhat)

is unbiased for any ``lam``; ``lam = 1`` is classic PPI, ``lam = 0`` the human-only mean, and
PPI++ picks the ``lam`` that minimizes the variance,
``lam = cov(Y, Yhat) / ((1 + n/N) var(Yhat and Yhat_u pooled))`` clipped to [0, 1]. The
interval is the normal one, ``theta +- z_{1-alpha/2} sqrt(lam^2 var(Yhat_u)/N + var(Y -
lam Yhat)/n)`` (variances with ``ddof=0``, as ``ppi_py`` computes them; its functions are this
module's test oracle).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..evaluation.measurement import Measurement
from ..stats import norm_ppf

__all__ = ["ppi_from_judgments", "ppi_lambda", "ppi_mean"]


def _vector(x, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    if a.size == 0:
        raise ValueError(f"ppi_mean: {name} is empty")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"ppi_mean: {name} must be finite numbers")
    return a


def ppi_lambda(human, judge_on_labeled, judge_on_unlabeled) -> float:
    """PPI++'s power-tuning weight: ``cov(Y, Yhat) / ((1 + n/N) var(all Yhat))`` in [0, 1].

    The covariance is the biased one (``1/n``), the variance of the pooled judge scores the
    ``ddof=1`` one, as in ``ppi_py`` (``_calc_lam_glm`` with an identity Hessian). A judge that
    tracks the humans gets a weight near 1; one that does not, near 0 (the human-only mean).
    """
    y = _vector(human, "human")
    yh = _vector(judge_on_labeled, "judge_on_labeled")
    yu = _vector(judge_on_unlabeled, "judge_on_unlabeled")
    n, big_n = y.size, yu.size
    cov = np.mean((y - y.mean()) * (yh - yh.mean()))
    pooled = np.concatenate([yh, yu])
    var = pooled.var(ddof=1) if pooled.size > 1 else 0.0
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(human, judge_on_labeled, judge_on_unlabeled, alpha: float = 0.05, lam: float | None = None) -> Measurement:
    """The prediction-powered estimate of a mean and its ``1 - alpha`` interval.

    Parameters
    ----------
    human : array_like
        Human (gold) labels ``Y`` on the labeled items.
    judge_on_labeled : array_like
        The judge's scores on the same items, aligned with ``human``.
    judge_on_unlabeled : array_like
        The judge's scores on the items without a human label.
    alpha : float, default 0.05
        Error level of the two-sided normal interval.
    lam : float or None, default None
        None: PPI++ (power tuned, :func:`ppi_lambda`); 1: classic PPI; 0: the human-only mean.

    Returns
    -------
    Measurement
        ``value`` and ``ci`` equal to ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci``
        (not rounded), ``n`` the human labels, ``deterministic=False``, extras ``lam``,
        ``labeled`` and ``unlabeled``.

    Raises
    ------
    ValueError
        Empty or non-finite input, misaligned labeled arrays, or alpha outside (0, 1).

    Examples
    --------
    >>> m = ppi_mean([1, 0, 1, 1], [0.9, 0.2, 0.8, 0.6], [0.7, 0.8, 0.3, 0.9, 0.5], lam=1)
    >>> round(m.value, 4)
    0.765
    """
    y = _vector(human, "human")
    yh = _vector(judge_on_labeled, "judge_on_labeled")
    yu = _vector(judge_on_unlabeled, "judge_on_unlabeled")
    if y.size != yh.size:
        raise ValueError(f"ppi_mean: {y.size} human labels but {yh.size} judge scores on them")
    if not 0 < float(alpha) < 1:
        raise ValueError(f"ppi_mean: alpha must be in (0, 1), got {alpha}")
    if lam is None:
        lam = ppi_lambda(y, yh, yu)
    lam = float(lam)
    value = lam * yu.mean() + (y - lam * yh).mean()
    se = np.sqrt((lam * yu).var() / yu.size + (y - lam * yh).var() / y.size)
    half = float(norm_ppf(1 - float(alpha) / 2)) * se
    return Measurement(
        value=float(value),
        n=int(y.size),
        stdev=None,
        ci=(float(value - half), float(value + half)),
        deterministic=False,
        extra={"lam": lam, "labeled": int(y.size), "unlabeled": int(yu.size)},
    )


def ppi_from_judgments(
    scores: pd.DataFrame,
    labeled_by: pd.Series | None = None,
    metric: str | None = None,
    alpha: float = 0.05,
    lam: float | None = None,
) -> Measurement:
    """PPI of one judged metric from tidy scores where ``labeled_by`` tells human from
    synthetic labels of the same item.

    An item is a (query_id, key) pair (``key`` absent: the query). Items with both a human and a
    synthetic score are the labeled set (the human value against the mean of the synthetic
    samples); items with only synthetic scores are the unlabeled set; the estimand is the
    item-level mean. An item labeled by humans only is left out (the judge never saw it).

    Parameters
    ----------
    scores : DataFrame
        ``query_id``, ``metric``, ``value``, optional ``key``, and ``labeled_by`` (values
        starting ``human:`` or ``synthetic:``, SPEC A2) unless given separately. A judgments
        frame (``relevance``, ``chunk_id`` / ``doc_uri``) is read as scores of the relevance
        grade keyed by (query, chunk_id else doc_uri): the PPI estimate of the mean grade,
        where humans labeled a subset of the pairs an LLM labeled.
    labeled_by : Series, optional
        Overrides ``scores["labeled_by"]``.
    metric : str, optional
        Which metric (required when ``scores`` holds several).
    alpha, lam
        As for :func:`ppi_mean`.

    Returns
    -------
    Measurement
        As :func:`ppi_mean`'s.
    """
    if "value" not in scores.columns and "relevance" in scores.columns:
        scores = _judgments_as_scores(scores)
    by = labeled_by if labeled_by is not None else scores.get("labeled_by")
    if by is None:
        raise ValueError("ppi_from_judgments needs a labeled_by column (human:... or synthetic:...)")
    metrics = pd.unique(scores["metric"].astype(object)) if "metric" in scores else [None]
    if metric is None:
        if len(metrics) != 1:
            raise ValueError(f"name the metric: the scores hold {', '.join(map(str, metrics))}")
        metric = metrics[0]
    rows = scores if metric is None else scores[scores["metric"] == metric]
    by = pd.Series(by, index=scores.index).loc[rows.index].astype(object).fillna("")
    human = by.str.startswith("human:").to_numpy()
    synthetic = by.str.startswith("synthetic:").to_numpy()
    item = rows["query_id"].astype(str)
    if "key" in rows.columns:
        item = item + "\x1f" + rows["key"].astype(object).fillna("").astype(str)
    h = rows["value"][human].groupby(item[human]).mean()
    s = rows["value"][synthetic].groupby(item[synthetic]).mean()
    both = h.index.intersection(s.index)
    if len(both) == 0:
        raise ValueError(f"no item of {metric!r} has both a human and a synthetic label")
    unlabeled = s.index.difference(h.index)
    if len(unlabeled) == 0:
        raise ValueError(f"every item of {metric!r} has a human label: use the human mean")
    return ppi_mean(h.loc[both].to_numpy(), s.loc[both].to_numpy(), s.loc[unlabeled].to_numpy(), alpha=alpha, lam=lam)


def _judgments_as_scores(judgments: pd.DataFrame) -> pd.DataFrame:
    """Judgment rows as tidy scores: value = relevance, key = chunk_id else doc_uri."""
    key = judgments["doc_uri"].astype(object)
    if "chunk_id" in judgments.columns:
        chunk = judgments["chunk_id"].astype(object)
        key = chunk.where(chunk.notna() & (chunk != ""), key)
    return pd.DataFrame(
        {
            "query_id": judgments["query_id"].astype(object),
            "metric": "relevance",
            "key": key,
            "value": judgments["relevance"].astype(float),
            "labeled_by": judgments["labeled_by"].astype(object) if "labeled_by" in judgments.columns else None,
        },
        index=judgments.index,
    )
