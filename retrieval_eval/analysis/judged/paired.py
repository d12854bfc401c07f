"""Paired comparison of systems judged on the same queries.

Each system's samples are averaged per query first (:func:`~.measurement.query_means`): the
query is the unit, as for every metric, and two systems judged on the same query are paired
on it. The per-query differences of means are then tested with the package's paired tests
(:mod:`retrieval_eval.analysis.stats`: randomization, t, Wilcoxon, bootstrap), every
(candidate, metric) row at once, and the p-values corrected across all rows together.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...model import ID
from ..evaluation.measurement import t_half_width
from ..stats import adjust_pvalues, paired_bootstrap, paired_randomization, paired_t, wilcoxon
from .measurement import query_means

__all__ = ["COMPARE_COLUMNS", "TESTS", "compare_judged"]

TESTS = ("randomization", "t", "wilcoxon", "bootstrap")

COMPARE_COLUMNS = (
    "baseline",
    "system",
    "metric",
    "n",
    "baseline_value",
    "value",
    "delta",
    "ci_low",
    "ci_high",
    "p",
    "p_adjusted",
    "significant",
)


def _pvalues(d: np.ndarray, test: str, n_resamples: int, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """p-values of the rows of ``d`` (rows x queries) and the interval of each mean difference:
    Student-t for ``t``/``randomization``/``wilcoxon``, the percentile bootstrap for
    ``bootstrap``."""
    n = d.shape[1]
    if test == "t":
        p = np.atleast_1d(paired_t(d).pvalue)
    elif test == "randomization":
        p = np.atleast_1d(paired_randomization(d, n_resamples=n_resamples, seed=seed).pvalue)
    elif test == "wilcoxon":
        p = np.atleast_1d(wilcoxon(d).pvalue)
    else:
        b = paired_bootstrap(d, n_resamples=n_resamples, seed=seed)
        return np.atleast_1d(b.pvalue), np.atleast_1d(b.ci_low), np.atleast_1d(b.ci_high)
    half = t_half_width(d.std(axis=1, ddof=1), n)
    mean = d.mean(axis=1)
    return p, mean - half, mean + half


def compare_judged(
    scores: pd.DataFrame,
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed=0,
) -> pd.DataFrame:
    """Every system against ``baseline`` on every judged metric, paired by query.

    Only queries both systems were judged on are compared (a query one of them lacks has no
    difference). ``test`` is one of :data:`TESTS`; ``correction`` (``holm``, ``bonferroni``,
    ``fdr_bh``, ``none``) runs across all rows, as ``compare`` does for any metric.

    Parameters
    ----------
    scores : DataFrame
        Tidy judge scores with ``system``, ``metric``, ``query_id``, ``value``.
    baseline : str, optional
        The reference system (default: the first in the scores).
    metrics : sequence of str, optional
        The metrics (default: all).
    test, correction, alpha, n_resamples, seed
        As for :func:`retrieval_eval.compare`.

    Returns
    -------
    DataFrame
        :data:`COMPARE_COLUMNS`: ``delta`` = mean of per-query (system - baseline), its
        interval, raw and corrected p-values and ``significant`` (corrected p < alpha).
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    qm = query_means(scores)
    systems = [str(s) for s in pd.unique(qm["system"].astype(object))]
    base = baseline if baseline is not None else systems[0]
    if base not in systems:
        raise ValueError(f"no system {base!r} in the judge scores; they have {', '.join(systems)}")
    names = metrics if metrics is not None else [str(m) for m in pd.unique(qm["metric"].astype(object))]
    wide = qm.pivot_table(index=["metric", "query_id"], columns="system", values="value", observed=True, sort=False)
    rows, diffs = [], []
    for metric in names:  # one row per (metric, system): a handful, not a per-query loop
        if metric not in wide.index.get_level_values("metric"):
            raise ValueError(f"no judged metric {metric!r}")
        sub = wide.xs(metric, level="metric")
        for system in systems:
            if system == base:
                continue
            pair = sub[[base, system]].dropna()
            rows.append((metric, system, len(pair), pair[base].mean(), pair[system].mean()))
            diffs.append((pair[system] - pair[base]).to_numpy())
    out = pd.DataFrame(rows, columns=["metric", "system", "n", "baseline_value", "value"])
    p = np.full(len(rows), np.nan)
    lo, hi = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    for n in set(out["n"]):  # rows with equal query counts are tested as one matrix
        at = np.flatnonzero(out["n"].to_numpy() == n)
        if n >= 2:
            p[at], lo[at], hi[at] = _pvalues(np.vstack([diffs[i] for i in at]), test, n_resamples, seed)
    out["delta"] = np.array([d.mean() if d.size else np.nan for d in diffs])
    out["ci_low"], out["ci_high"], out["p"] = lo, hi, p
    ok = np.isfinite(p)
    adjusted = np.full(len(rows), np.nan)
    if ok.any():
        adjusted[ok] = adjust_pvalues(p[ok], correction)
    out["p_adjusted"] = adjusted
    out["significant"] = np.where(ok, adjusted < alpha, False)
    out.insert(0, "baseline", base)
    for col in ("baseline", "system", "metric"):
        out[col] = out[col].astype(ID)
    out["n"] = out["n"].astype(np.int64)
    return out[list(COMPARE_COLUMNS)]
