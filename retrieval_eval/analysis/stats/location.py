"""Medians, quantiles and their differences, safe for scores up to the largest double.

Scores are any finite doubles, up to +-1.8e308. A median or an interpolated quantile adds two
of them, which overflows near the top of that range; halving first (exact: a power of two)
and doubling after gives the same double for every normal score and never overflows. A
difference of two medians that does not fit in a double is inf, silently: the figure is then
absent from the report (not computed), never a numpy warning on stderr.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["median", "quantile", "difference", "median_difference"]


def median(x, axis=None) -> Any:
    """``np.median``, without overflow for scores near the largest double.

    Parameters
    ----------
    x : array_like
        The values.
    axis : int, optional
        As in ``np.median``.

    Returns
    -------
    float or ndarray
        The same double ``np.median`` gives for every normal value; never an overflow.

    Examples
    --------
    >>> float(median([1.7e308, 1.6e308, 1.5e308, 1.4e308]))
    1.55e+308
    """
    return np.median(np.asarray(x, dtype=np.float64) * 0.5, axis=axis) * 2.0


def quantile(x, q) -> Any:
    """``np.quantile(x, q, method="linear")``, without overflow near the largest double.

    Parameters
    ----------
    x : array_like
        The values.
    q : float or array_like
        Quantile(s) in [0, 1].

    Returns
    -------
    float or ndarray
        The linearly interpolated quantile(s).

    Examples
    --------
    >>> float(quantile([0.3, 0.1, 0.7, 0.2], 0.5))
    0.25
    """
    return np.quantile(np.asarray(x, dtype=np.float64) * 0.5, q, method="linear") * 2.0


def difference(a, b) -> Any:
    """``a - b``; inf (no warning) when the difference is beyond the largest double.

    Parameters
    ----------
    a, b : float or array_like
        The operands.

    Returns
    -------
    float or ndarray
        ``a - b``.

    Examples
    --------
    >>> float(difference(1.7e308, -1.7e308))
    inf
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return np.subtract(a, b)


def median_difference(pos, neg) -> Any:
    """``median(pos) - median(neg)`` along the last axis: the separation margin of two samples.

    Batched: one value per row of (..., n) inputs (one bootstrap resample per row). Overflow
    safe (:func:`median`, :func:`difference`).

    Parameters
    ----------
    pos, neg : array_like
        The two samples, shapes (..., n_pos) and (..., n_neg).

    Returns
    -------
    float or ndarray
        One margin per row.

    Examples
    --------
    >>> float(median_difference([0.9, 0.8, 0.7], [0.2, 0.4]))
    0.5
    """
    return difference(median(pos, axis=-1), median(neg, axis=-1))
