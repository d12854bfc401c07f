"""Measurements: a value with its sample size and, when it has one, its interval."""

from __future__ import annotations

from dataclasses import dataclass, field
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
    def from_dict(cls, data: dict[str, Any]) -> "Measurement":
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


def t_half_width(sd, n):
    """Half-width of the two-sided 95% Student-t interval on a mean, vectorized.

    ``t(0.975, df) sd / sqrt(n)`` with ``df = n - 1`` capped at 120.

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
        df = np.minimum(np.broadcast_to(n, half.shape)[ok] - 1.0, 120.0)
        half[ok] = t_ppf(0.975, df) * np.broadcast_to(sd, half.shape)[ok] / np.sqrt(
            np.broadcast_to(n, half.shape)[ok])
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
        value=_round(mean),
        n=n,
        stdev=_round(stdev),
        ci=(_round(mean - half), _round(mean + half)),
        deterministic=False,
    )
