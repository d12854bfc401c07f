"""Measurements: a value with its sample size and, when it has one, its interval."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from functools import cache
from typing import Any

import numpy as np

from ..stats import t_ppf


@dataclass(frozen=True)
class Measurement:
    """One reported number: ``value``, ``n`` samples, ``stdev`` and a two-sided ``ci``.

    ``deterministic`` is True for a metric computed once from fixed data (retrieval metrics),
    False for a summary of repeated noisy samples. ``indeterminate``, when set, says why a gate
    on this number cannot PASS (too few samples, scores that are rank-based), so a confident
    looking value can still carry its own caveat into the verdict.
    """

    value: float
    n: int | None = 1
    stdev: float | None = None
    ci: tuple[float, float] | None = None
    deterministic: bool | None = True
    indeterminate: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value}
        if self.n is not None:
            out["n"] = int(self.n)
        if self.stdev is not None:
            out["stdev"] = self.stdev
        if self.ci is not None:
            out["ci"] = [self.ci[0], self.ci[1]]
        if self.deterministic is not None:
            out["deterministic"] = self.deterministic
        if self.indeterminate:
            out["indeterminate"] = self.indeterminate
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Measurement:
        """Rebuild from report JSON, keeping the interval (so ``ci-lower`` gates still work)."""
        known = {"value", "n", "stdev", "ci", "deterministic", "indeterminate"}
        ci = data.get("ci")
        return cls(
            value=data["value"],
            n=data.get("n"),
            stdev=data.get("stdev"),
            ci=(float(ci[0]), float(ci[1])) if ci else None,
            deterministic=data.get("deterministic"),
            indeterminate=data.get("indeterminate"),
            extra={k: v for k, v in data.items() if k not in known},
        )


def _round(x: float) -> float:
    return float(round(x, 12))


_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_DF_CAP = 120


def _atan(x: Decimal) -> Decimal:
    """arctan in the context's precision: halve the angle until the Taylor series is short."""
    halvings = 0
    while abs(x) > Decimal("0.05"):
        x = x / (1 + (1 + x * x).sqrt())
        halvings += 1
    term, total, k, x2, tiny = x, x, 1, x * x, Decimal(10) ** -45
    while abs(term) > tiny:
        term = -term * x2
        total += term / (2 * k + 1)
        k += 1
    return total * (2**halvings)


def _central(t: Decimal, df: int) -> Decimal:
    """``P(|T| < t)`` for an integer df, by the finite sums of Abramowitz & Stegun 26.7.3-4."""
    x = t / Decimal(df).sqrt()
    c2 = 1 / (1 + x * x)  # cos^2 of theta = atan(x)
    sin = x * c2.sqrt()
    if df % 2 == 0:
        term = total = Decimal(1)
        for k in range(1, df // 2):
            term = term * c2 * (2 * k - 1) / (2 * k)
            total += term
        return sin * total
    term = total = c2.sqrt() if df > 1 else Decimal(0)
    for k in range(1, (df - 1) // 2):
        term = term * c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 * (_atan(x) + sin * total) / _PI


@cache
def _t975(df: int) -> float:
    """``t(0.975, df)`` for a whole df, the float nearest the exact quantile.

    Newton's method in 40-digit decimals on the exact CDF, from the normal quantile (below the t
    quantile; the CDF is concave there, so the steps rise to the root without overshooting):
    rounding the decimal root once gives the last bit, where a float CDF's own rounding leaves
    up to a dozen units of error. The probability is the
    float 0.975 itself (a hair below 39/40), as float implementations of the interval take it.
    """
    with localcontext() as ctx:
        ctx.prec = 40
        target = 2 * Decimal(0.975) - 1  # noqa: RUF032 (the float 0.975 exactly, as callers pass it)
        t, h = Decimal("1.959963984540054"), Decimal(10) ** -18  # the normal quantile
        for _ in range(100):
            slope = (_central(t + h, df) - _central(t - h, df)) / (2 * h)
            step = (_central(t, df) - target) / slope
            t -= step
            if abs(step) < Decimal(10) ** -30:
                break
        return float(t)


def t_half_width(sd, n):
    """Half-width of the two-sided 95% Student-t interval on a mean, vectorized.

    ``t(0.975, df) sd / sqrt(n)`` with ``df = n - 1`` capped at 120, the quantile correct to the
    last bit for whole n (so the interval is the Student-t interval to every printed decimal).

    Parameters
    ----------
    sd, n : float or array_like
        Sample standard deviations and sizes.

    Returns
    -------
    ndarray
        NaN where ``n < 2`` (one sample has no interval).

    Examples
    --------
    >>> round(float(t_half_width(0.1, 5)), 4)
    0.1242
    """
    sd, n = np.asarray(sd, dtype=float), np.asarray(n, dtype=float)
    half = np.full(np.broadcast(sd, n).shape, np.nan)
    ok = n >= 2
    if np.any(ok):
        n_ok = np.broadcast_to(n, half.shape)[ok]
        whole = n_ok == np.floor(n_ok)
        df = np.minimum(n_ok - 1.0, float(_DF_CAP))
        t = t_ppf(0.975, df)
        exact = {d: _t975(d) for d in np.unique(df[whole]).astype(np.int64).tolist()}
        t[whole] = [exact[d] for d in df[whole].astype(np.int64).tolist()]  # the exact quantile
        half[ok] = t * np.broadcast_to(sd, half.shape)[ok] / np.sqrt(np.broadcast_to(n, half.shape)[ok])
    return half


def summarize(samples) -> Measurement:
    """Turn repeated samples of a non-deterministic metric into a measurement with error bars.

    The mean; for n >= 2 also the sample standard deviation (n - 1) and a two-sided 95%
    Student-t interval on the mean (df = n - 1, capped at 120). One sample gives no interval
    rather than a zero-width one, so a ``ci-lower`` gate over it is INDETERMINATE instead of
    quietly passing. The interval is not clamped: a bound outside the metric's range is what
    the samples support, and raising it to 0 would let a gate pass.

    Parameters
    ----------
    samples : iterable of float
        Finite samples, at least one.

    Returns
    -------
    Measurement
        ``deterministic=False``; values rounded to 12 decimals.

    Raises
    ------
    ValueError
        No sample, or a sample that is not finite.

    Examples
    --------
    >>> m = summarize([0.5, 0.7, 0.6])
    >>> m.value, m.n, m.stdev
    (0.6, 3, 0.1)
    """
    values = np.asarray(list(samples), dtype=float)
    if values.size == 0:
        raise ValueError("summarize needs at least one sample")
    if not np.all(np.isfinite(values)):
        raise ValueError("summarize needs finite samples")
    n = int(values.size)
    mean = float(values.mean())
    if n == 1:
        return Measurement(value=_round(mean), n=1, deterministic=False)
    stdev = float(values.std(ddof=1))
    half = float(t_half_width(stdev, n))
    return Measurement(
        value=_round(mean), n=n, stdev=_round(stdev), ci=(_round(mean - half), _round(mean + half)), deterministic=False
    )
