"""Planning a judged evaluation: how small a difference it can detect, and what it takes.

With ``Q`` queries, ``m`` judge samples per query, between-query variance ``s_b^2`` and judge
noise ``s_w^2`` (:func:`~.measurement.judged_summary`'s ``var_between`` / ``var_within``), the
mean of the per-query means has variance ``(s_b^2 + s_w^2 / m) / Q``. For a paired difference
of two systems use the components of the per-query differences (or, conservatively, the sum of
the two systems'). A two-sided test at level ``alpha`` with power ``1 - beta`` detects

    MDD = (z_{1-alpha/2} + z_{1-beta}) * sqrt((s_b^2 + s_w^2 / m) / Q)

(normal quantiles: a planning figure, not a test), and a target difference ``delta`` needs
``Q = ceil((z_{1-alpha/2} + z_{1-beta})^2 (s_b^2 + s_w^2 / m) / delta^2)`` queries. More
samples shrink only the ``s_w^2 / m`` term: once it is small beside ``s_b^2``, the only way to
a smaller MDD is more queries, and the functions here say so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..stats import norm_ppf

__all__ = [
    "minimum_detectable_difference",
    "planning_paragraph",
    "planning_table",
    "queries_needed",
    "samples_buy_little",
]

#: Below this share of the variance per query, judge noise is negligible: more samples buy little.
LITTLE = 0.1


def _z(alpha: float, power: float) -> float:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha}, {power}")
    return float(norm_ppf(1 - alpha / 2) + norm_ppf(power))


def _per_query_variance(var_between, var_within, samples) -> np.ndarray:
    vb = np.asarray(var_between, dtype=float)
    vw = np.nan_to_num(np.asarray(var_within, dtype=float), nan=0.0)
    m = np.asarray(samples, dtype=float)
    if np.any(m < 1):
        raise ValueError("samples per query must be at least 1")
    return vb + vw / m


def minimum_detectable_difference(var_between, var_within, queries, samples=1, alpha: float = 0.05, power: float = 0.8):
    """The smallest true difference a two-sided test finds with the given power.

    ``(z_{1-alpha/2} + z_{power}) * sqrt((var_between + var_within / samples) / queries)``,
    vectorized over every argument (broadcast). A NaN ``var_within`` (no repeated samples)
    counts as 0: the planning then ignores judge noise, which it could not measure.

    Returns
    -------
    float or ndarray
        In the metric's units.

    Examples
    --------
    >>> round(float(minimum_detectable_difference(0.04, 0.02, 100, 1)), 4)
    0.0686
    """
    v = _per_query_variance(var_between, var_within, samples)
    q = np.asarray(queries, dtype=float)
    out = _z(alpha, power) * np.sqrt(v / q)
    return float(out) if out.ndim == 0 else out


def queries_needed(var_between, var_within, difference, samples=1, alpha: float = 0.05, power: float = 0.8):
    """The queries needed to detect ``difference`` with ``samples`` judge samples per query.

    ``ceil((z_{1-alpha/2} + z_{power})^2 (var_between + var_within / samples) / difference^2)``,
    at least 2 (an interval needs two queries). Vectorized.

    Examples
    --------
    >>> int(queries_needed(0.04, 0.02, 0.05, 1))
    189
    """
    v = _per_query_variance(var_between, var_within, samples)
    d = np.abs(np.asarray(difference, dtype=float))
    if np.any(d == 0):
        raise ValueError("the difference to detect must not be 0")
    q = np.maximum(np.ceil(_z(alpha, power) ** 2 * v / d**2 - 1e-9), 2).astype(np.int64)
    return int(q) if q.ndim == 0 else q


def samples_buy_little(var_between, var_within, samples=1) -> bool:
    """True when judge noise at ``samples`` per query is under 10% of the per-query variance:
    then doubling the samples moves the MDD by less than about 5%, and only queries help."""
    v = float(_per_query_variance(var_between, var_within, samples))
    vw = float(np.nan_to_num(var_within, nan=0.0))
    return v == 0 or (vw / samples) / v < LITTLE


def planning_table(
    var_between,
    var_within,
    queries: Sequence[int] = (25, 50, 100, 200, 400),
    samples: Sequence[int] = (1, 2, 3, 5, 10),
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """The minimum detectable difference for every (queries, samples) pair.

    Returns
    -------
    DataFrame
        Columns ``queries`` (int64), ``samples`` (int64), ``mdd`` (float64), ``noise_share``
        (the share of the per-query variance that is judge noise at that ``samples``), one row
        per pair, queries-major.
    """
    grid = np.meshgrid(np.asarray(queries, dtype=np.int64), np.asarray(samples, dtype=np.int64), indexing="ij")
    q, m = grid[0].ravel(), grid[1].ravel()
    v = _per_query_variance(var_between, var_within, m)
    vw = float(np.nan_to_num(var_within, nan=0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(v > 0, (vw / m) / v, np.nan)
    return pd.DataFrame(
        {
            "queries": q,
            "samples": m,
            "mdd": minimum_detectable_difference(var_between, var_within, q, m, alpha, power),
            "noise_share": share,
        }
    )


def planning_paragraph(
    differences,
    observed: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    var_within: float | None = None,
    samples: int = 1,
) -> str:
    """The sentence a comparison prints when a difference was not significant.

    ``differences`` are the per-query differences (candidate minus baseline) the test used;
    their variance is the per-query variance of the difference (``var_within``, when given,
    is the part of it that is judge noise at ``samples`` per query). The target is the
    observed mean difference unless ``observed`` is given.

    Returns
    -------
    str
        "With this noise (...) you would need about N queries to detect a difference of D
        at alpha A with P% power." plus, when judge noise is a small share, that more judge
        samples would buy little; or why no figure can be given.

    Examples
    --------
    >>> planning_paragraph([0.1, -0.05, 0.02, 0.0, 0.04, -0.03])[:15]
    'With this noise'
    """
    d = np.asarray(differences, dtype=float)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return "Too few queries to estimate the noise; no sample size can be planned."
    delta = float(d.mean()) if observed is None else float(observed)
    var = float(d.var(ddof=1))
    if abs(delta) <= 1e-12 * max(1.0, float(np.abs(d).max())) or var == 0:  # 0 up to rounding
        return (
            "The observed difference is 0 (or the per-query differences do not vary): "
            "no number of queries would make it significant."
        )
    vw = 0.0 if var_within is None else float(var_within) / samples
    need = queries_needed(max(var - vw, 0.0), vw * samples, delta, samples, alpha, power)
    text = (
        f"With this noise (per-query sd {np.sqrt(var):.3g} over {d.size} queries) you would "
        f"need about {need} queries to detect a difference of {abs(delta):.3g} at alpha "
        f"{alpha:g} with {power:.0%} power."
    )
    if var_within is not None:
        share = min(vw / var, 1.0)
        if samples_buy_little(max(var - vw, 0.0), vw * samples, samples):
            text += (
                " Judge noise is a small share of it, so more judge samples per query would buy little: add queries."
            )
        elif share >= 0.5:
            more = queries_needed(max(var - vw, 0.0), vw * samples, delta, 4 * samples, alpha, power)
            text += (
                f" Judge noise is {share:.0%} of it: with {4 * samples} judge samples per query "
                f"about {more} queries would do."
            )
    return text
