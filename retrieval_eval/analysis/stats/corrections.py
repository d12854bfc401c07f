"""Multiple-testing corrections of a family of p-values, and the Wilson interval of a share."""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from .special import norm_ppf

__all__ = ["adjust_pvalues", "wilson_interval"]


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

    Parameters
    ----------
    p : array_like
        P-values in [0, 1] (NaN allowed).
    method : str
        ``"holm"``, ``"bonferroni"``, ``"fdr_bh"`` or ``"none"``.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Unknown method, or a p-value outside [0, 1].

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").tolist()
    [0.03, 0.06, 0.06]
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


@overload
def wilson_interval(successes: float, n: float, confidence: float = ...) -> tuple[float, float]: ...
@overload
def wilson_interval(successes: np.ndarray, n: np.ndarray, confidence: float = ...) -> tuple[np.ndarray, np.ndarray]: ...
def wilson_interval(successes: Any, n: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval for a binomial proportion, elementwise; n == 0 gives NaN.

    Unlike the Wald interval it stays inside [0, 1] and keeps its coverage at 0 and n
    successes, which is where calibration shares (negative satisfaction) usually sit:
    center ``(p + z^2/2n) / (1 + z^2/n)``, half-width
    ``z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)``, z the two-sided normal quantile.

    Parameters
    ----------
    successes, n : int or array_like
        Successes out of ``n``.
    confidence : float
        The interval's confidence.

    Returns
    -------
    tuple
        ``(low, high)`` (floats for scalar input).

    Raises
    ------
    ValueError
        Bad ``confidence``, or successes outside [0, n].

    Examples
    --------
    >>> low, high = wilson_interval(8, 10)
    >>> round(low, 4), round(high, 4)
    (0.4902, 0.9433)
    """
    k, nn = np.broadcast_arrays(np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64))
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
