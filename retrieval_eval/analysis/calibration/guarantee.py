"""Cutoffs with a stated guarantee: split-conformal retention, Clopper-Pearson refusal, strata.

A percentile of 45 positives is a point estimate: the share of *new* answerable queries a
cutoff refuses can be far from the 10% it was set at. Split conformal prediction (Vovk et al.,
2005; Angelopoulos & Bates, 2021) turns the same positives into a promise:

* **retention** — with ``n`` calibration positives and ``k = floor(alpha (n + 1))``, the cutoff
  ``C = s_(k)`` (the k-th smallest positive top-1 score) keeps a new positive query that is
  exchangeable with them with probability ``P(s_new >= C) >= 1 - k/(n + 1) >= 1 - alpha``
  (marginal over the calibration set and the new query; equal to ``1 - k/(n+1)`` when scores
  have no ties). For the cutoff actually drawn, the coverage ``1 - F(C)`` is
  ``Beta(n + 1 - k, k)``-distributed (continuous scores): :func:`coverage_interval` gives its
  central ``1 - delta`` interval, "next month's retention, with what confidence".
* **refusal** — the negatives refused at ``C`` (``top1 < C``) get a one-sided Clopper-Pearson
  lower bound at level ``1 - delta``. ``C`` is the largest cutoff the retention guarantee
  allows (retention falls and refusal rises with the cutoff), so it is also the cutoff that
  maximises the refusal bound subject to the guarantee; and because it is chosen from the
  positives alone, the bound on the negatives is not weakened by a search over them.
* **too few positives** — when ``n + 1 < 1/alpha`` no order statistic gives the promise:
  no cutoff is returned (NaN) and a warning says so, never a silently weaker cutoff.
* **Mondrian** — ``by="stratum"`` calibrates each stratum on its own positives (the same
  guarantee, conditional on the stratum); a stratum too small to calibrate falls back to the
  pooled cutoff, and the table says which (``source``).

The derivation and references are in ``docs/ood-calibration.md``. Everything here is
vectorized over systems x strata; the Beta quantiles invert
:func:`retrieval_eval.stats.betainc` by bisection (scipy is not a dependency; the tests check
the numbers against ``scipy.stats.beta`` and ``binomtest``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pandas as pd

from ...model import ID
from ..stats import betainc

__all__ = [
    "GUARANTEE_COLUMNS",
    "POOLED",
    "Guarantee",
    "as_guarantee",
    "beta_ppf",
    "clopper_pearson_lower",
    "conformal_cutoff",
    "conformal_rank",
    "coverage_interval",
    "guarantee_table",
    "query_cutoffs",
    "stratum_limits",
]

#: The ``stratum`` label of the pooled row (all positives of a system together).
POOLED = "_pooled"
#: Columns of :func:`guarantee_table`, in order.
GUARANTEE_COLUMNS = (
    "system",
    "stratum",
    "source",
    "alpha",
    "delta",
    "n_positive",
    "rank",
    "cutoff",
    "coverage",
    "coverage_ci_low",
    "coverage_ci_high",
    "n_negative",
    "negatives_refused",
    "negative_satisfaction",
    "negative_satisfaction_lower",
)


@dataclass(frozen=True)
class Guarantee:
    """What a guaranteed cutoff promises: retention ``>= 1 - alpha`` for a new positive, and
    statements at confidence ``1 - delta`` (the coverage interval, the refusal lower bound)."""

    alpha: float = 0.10
    delta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("alpha", "delta"):
            value = float(getattr(self, name))
            if not (math.isfinite(value) and 0.0 < value < 1.0):
                raise ValueError(f"guarantee {name} must be in (0, 1), got {value}")


def as_guarantee(value: Any) -> Guarantee | None:
    """The :class:`Guarantee` a ``guarantee=`` argument asks for, or None.

    Parameters
    ----------
    value : None, Guarantee, float or dict
        ``None``, a :class:`Guarantee`, a number (``alpha``) or
        ``{"alpha": .., "delta": ..}``.

    Returns
    -------
    Guarantee or None

    Raises
    ------
    ValueError
        An unknown key, or alpha/delta outside (0, 1).
    TypeError
        Anything else (a bool, a string).

    Examples
    --------
    >>> as_guarantee(0.05)
    Guarantee(alpha=0.05, delta=0.05)
    """
    if value is None or isinstance(value, Guarantee):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"alpha", "delta"}
        if unknown:
            raise ValueError(f"guarantee takes alpha and delta, not {', '.join(sorted(unknown))}")
        return Guarantee(**{k: float(v) for k, v in value.items()})
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            "guarantee must be alpha (a number), {'alpha': .., 'delta': ..} or a "
            f"Guarantee, not {type(value).__name__}"
        )
    return Guarantee(alpha=float(value))


# --------------------------------------------------------------------------------------------
# The formulas.


def conformal_rank(n, alpha: float) -> np.ndarray | int:
    """``k = floor(alpha (n + 1))``, elementwise; 0 means ``n`` is too small for ``alpha``.

    The product is rounded to 9 decimals first, so ``0.1 * 10`` is 1 whatever binary
    rounding made of it.

    Parameters
    ----------
    n : int or array_like
        Numbers of calibration positives.
    alpha : float
        The share of new positives the cutoff may refuse.

    Returns
    -------
    int or ndarray

    Examples
    --------
    >>> conformal_rank(np.array([8, 9, 19]), 0.1).tolist()
    [0, 1, 2]
    """
    n = np.asarray(n, dtype=np.float64)
    k = np.floor(np.round(float(alpha) * (n + 1.0), 9)).astype(np.int64)
    return int(k) if k.ndim == 0 else k


def conformal_cutoff(scores, alpha: float) -> float:
    """The split-conformal cutoff: the ``floor(alpha (n + 1))``-th smallest score, or NaN.

    A new score exchangeable with ``scores`` falls below it with probability at most
    ``k / (n + 1) <= alpha``; NaN when ``n + 1 < 1/alpha`` (no order statistic makes that
    promise, and a weaker cutoff would be a silent change of the promise).

    Parameters
    ----------
    scores : array_like
        The positives' top-1 scores (non-finite ones ignored).
    alpha : float
        The share of new positives the cutoff may refuse.

    Returns
    -------
    float

    Examples
    --------
    >>> conformal_cutoff([0.5, 0.7, 0.9, 0.6, 0.8, 0.55, 0.65, 0.75, 0.85], 0.1)
    0.5
    """
    s = np.asarray(scores, dtype=np.float64)
    s = np.sort(s[np.isfinite(s)])
    k = conformal_rank(s.size, alpha)
    return float(s[k - 1]) if k >= 1 else math.nan


@overload
def beta_ppf(q: float, a: float, b: float, iterations: int = ...) -> float: ...
@overload
def beta_ppf(q: Any, a: np.ndarray, b: np.ndarray, iterations: int = ...) -> np.ndarray: ...
def beta_ppf(q: Any, a: Any, b: Any, iterations: int = 80) -> np.ndarray | float:
    """Quantile of ``Beta(a, b)``, elementwise, by bisection on the regularized incomplete beta.

    80 halvings of [0, 1] reach below 1e-16 (scipy is not a dependency; the tests check the
    numbers against ``scipy.stats.beta``).

    Parameters
    ----------
    q, a, b : float or array_like
        Probabilities and shape parameters, broadcast together.
    iterations : int
        Bisection steps.

    Returns
    -------
    float or ndarray
        NaN where ``a`` or ``b`` is not positive.

    Examples
    --------
    >>> round(float(beta_ppf(0.05, 1, 9)), 6)
    0.005683
    """
    q, a, b = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (q, a, b)))
    lo, hi = np.zeros(q.shape), np.ones(q.shape)
    ok = (a > 0) & (b > 0)
    aa, bb = np.where(ok, a, 1.0), np.where(ok, b, 1.0)
    for _ in range(iterations):  # each step vectorized over every quantile asked
        mid = 0.5 * (lo + hi)
        below = betainc(aa, bb, mid) < q
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    out = np.where(ok, 0.5 * (lo + hi), np.nan)
    return out if out.ndim else float(out)


def coverage_interval(n, k, delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(coverage, low, high)`` of the conformal cutoff ``s_(k)`` of ``n`` positives.

    ``coverage = 1 - k/(n + 1)`` is the marginal probability that a new exchangeable positive
    is kept (exact for continuous scores, a lower bound with ties); it lies in
    ``[1 - alpha, 1 - alpha + 1/(n + 1))``. ``low``/``high`` bound the coverage of *this*
    cutoff, ``1 - F(s_(k))``, which is ``Beta(n + 1 - k, k)`` over calibration sets: the
    central ``1 - delta`` interval (Vovk 2012; Angelopoulos & Bates 2021, section 3.2).

    Parameters
    ----------
    n, k : int or array_like
        Calibration positives and the order statistic used.
    delta : float
        One minus the interval's confidence.

    Returns
    -------
    tuple of ndarray
        NaN where ``k < 1``.

    Examples
    --------
    >>> cov, low, high = coverage_interval(9, 1, 0.05)
    >>> float(cov), round(float(low), 4), round(float(high), 4)
    (0.9, 0.6637, 0.9972)
    """
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    ok = k >= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = np.where(ok, 1.0 - k / (n + 1.0), np.nan)
    a, b = np.where(ok, n + 1.0 - k, np.nan), np.where(ok, k, np.nan)
    low = beta_ppf(delta / 2.0, a, b)
    high = beta_ppf(1.0 - delta / 2.0, a, b)
    return cov, low, high


def clopper_pearson_lower(successes, n, delta: float) -> np.ndarray | float:
    """One-sided Clopper-Pearson lower bound at level ``1 - delta`` on a share.

    ``Beta(x, n - x + 1)``'s ``delta`` quantile; exact (never below its nominal level, unlike
    Wald or Wilson), which is what a bound someone ships on must be.

    Parameters
    ----------
    successes, n : int or array_like
        Successes out of ``n`` trials.
    delta : float
        One minus the bound's confidence.

    Returns
    -------
    float or ndarray
        0 when ``x = 0``, NaN when ``n = 0``.

    Raises
    ------
    ValueError
        ``successes`` outside ``[0, n]``.

    Examples
    --------
    >>> round(clopper_pearson_lower(10, 10, 0.05), 4)
    0.7411
    """
    x, nn = np.broadcast_arrays(np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64))
    if ((x < 0) | (x > nn)).any():
        raise ValueError("successes must lie in [0, n]")
    out = beta_ppf(delta, np.where(x > 0, x, 1.0), nn - x + 1.0)
    out = np.where(x == 0, 0.0, out)
    out = np.where(nn == 0, np.nan, out)
    return out if np.ndim(out) else float(out)


# --------------------------------------------------------------------------------------------
# The table.


def guarantee_table(
    top1: pd.DataFrame,
    guarantee: Guarantee | None,
    by: str | None,
    cutoffs: Mapping[str, float],
    quantile: float,
    min_samples: int,
    fixed: frozenset[str] = frozenset(),
) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Per system (and per stratum of its positives with ``by="stratum"``): the cutoff and
    what it promises.

    Each stratum row's cutoff is the conformal cutoff of the stratum's positives (with a
    guarantee) or their ``quantile`` (without); a stratum with ``n + 1 < 1/alpha`` positives
    (with a guarantee) or fewer than ``min_samples`` (without) uses the pooled cutoff,
    ``source = "pooled"``. A system in ``fixed`` has the cutoff it was given
    (``source = "fixed"``): no promise is computed for it, since a number chosen outside the
    data carries none. Negatives have no positive strata, so every row's refusal figures are
    over all the system's negatives: what an out-of-distribution query routed to that stratum
    would meet.

    Parameters
    ----------
    top1 : DataFrame
        :attr:`Calibration.top1`.
    guarantee : Guarantee or None
        The promise asked for.
    by : "stratum" or None
        One row per stratum of the positives too.
    cutoffs : dict
        The pooled cutoff of each system (the conformal one when ``guarantee`` is given).
    quantile : float
        The quantile rule of the strata without a guarantee.
    min_samples : int
        Fewer positives than this make a stratum use the pooled cutoff (without a guarantee).
    fixed : frozenset of str
        The systems whose cutoff was given.

    Returns
    -------
    tuple
        ``(table, warnings)``: the table's columns are :data:`GUARANTEE_COLUMNS`; warnings are
        ``(system, text)`` pairs.

    Examples
    --------
    >>> top1 = pd.DataFrame({"system": ["s"] * 12, "kind": ["positive"] * 9 + ["negative"] * 3,
    ...                      "stratum": ["a"] * 12, "missing": [False] * 12,
    ...                      "top1_score": [.5, .55, .6, .65, .7, .75, .8, .85, .9, .1, .2, .52]})
    >>> table, notes = guarantee_table(top1, Guarantee(0.1), None, {"s": 0.5}, 0.1, 10)
    >>> row = table.iloc[0]
    >>> float(row["cutoff"]), float(row["coverage"]), int(row["negatives_refused"])
    (0.5, 0.9, 2)
    """
    rows, notes = _guarantee_rows(top1, guarantee, by, cutoffs, quantile, min_samples, fixed)
    table = pd.DataFrame.from_records(rows, columns=[c for c in GUARANTEE_COLUMNS if c not in _DERIVED])
    conformal, k = _add_promises(table, guarantee)
    for c in ("system", "stratum", "source"):
        table[c] = table[c].astype(ID)
    for c in ("n_positive", "n_negative", "negatives_refused"):
        table[c] = table[c].astype(np.int64)
    # The order statistic used; NA where the cutoff is not a conformal one.
    table["rank"] = pd.array(np.where(conformal, k.astype(np.int64), None), dtype="Int64")  # type: ignore[call-overload]
    table["cutoff"] = table["cutoff"].astype(np.float64)
    return table[list(GUARANTEE_COLUMNS)], notes


def _add_promises(table: pd.DataFrame, guarantee: Guarantee | None) -> tuple[np.ndarray, np.ndarray]:
    """Insert what each row's cutoff promises: the coverage and its interval (conformal rows),
    the share of negatives refused and its Clopper-Pearson lower bound (with a guarantee).
    Returns which rows are conformal and their order statistic ``k``."""
    delta = guarantee.delta if guarantee is not None else math.nan
    n_pos = table["n_positive"].to_numpy(np.float64)
    k = table["rank"].to_numpy(np.float64)
    conformal = (table["source"] == "conformal").to_numpy() & (k >= 1)
    if guarantee is not None and len(table):
        cov, lo, hi = coverage_interval(n_pos, np.where(conformal, k, 0.0), delta)
    else:
        cov = lo = hi = np.full(len(table), np.nan)
    n_neg = table["n_negative"].to_numpy(np.float64)
    refused = table["negatives_refused"].to_numpy(np.float64)
    has = np.isfinite(table["cutoff"].to_numpy(np.float64)) & (n_neg > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(has, refused / np.where(n_neg > 0, n_neg, 1.0), np.nan)
    lower = (
        np.where(has, clopper_pearson_lower(refused, n_neg, delta), np.nan)
        if guarantee is not None and len(table)
        else np.full(len(table), np.nan)
    )
    table.insert(8, "coverage", np.asarray(cov, dtype=np.float64))
    table.insert(9, "coverage_ci_low", np.asarray(lo, dtype=np.float64))
    table.insert(10, "coverage_ci_high", np.asarray(hi, dtype=np.float64))
    table["negative_satisfaction"] = share
    table["negative_satisfaction_lower"] = np.asarray(lower, dtype=np.float64)
    return conformal, k


def _guarantee_rows(
    top1: pd.DataFrame,
    guarantee: Guarantee | None,
    by: str | None,
    cutoffs: Mapping[str, float],
    quantile: float,
    min_samples: int,
    fixed: frozenset[str],
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The rows of :func:`guarantee_table` before its derived columns, and its warnings."""
    t = top1[~top1["missing"].to_numpy(bool) & top1["kind"].isin(["positive", "negative"])]
    rows: list[dict[str, Any]] = []
    notes: list[tuple[str, str]] = []
    alpha = guarantee.alpha if guarantee is not None else math.nan
    delta = guarantee.delta if guarantee is not None else math.nan
    for system, pooled in cutoffs.items():  # a handful of systems; strata below are few too
        mine = t[t["system"] == system]
        pos = mine[mine["kind"] == "positive"]
        neg = np.sort(mine.loc[mine["kind"] == "negative", "top1_score"].to_numpy(np.float64))
        groups = [(POOLED, pos["top1_score"].to_numpy(np.float64))]
        if by == "stratum":
            for name, g in pos.groupby("stratum", sort=True):
                groups.append((str(name), g["top1_score"].to_numpy(np.float64)))
        small = []
        for name, scores in groups:
            n = int(scores.size)
            k = conformal_rank(n, alpha) if guarantee is not None else 0
            if name == POOLED:
                c, source = (
                    pooled,
                    ("fixed" if system in fixed else "conformal" if guarantee is not None else "quantile"),
                )
            elif guarantee is not None and k >= 1:
                c, source = conformal_cutoff(scores, alpha), "conformal"
            elif guarantee is None and n >= min_samples:
                c, source = float(np.quantile(scores, quantile, method="linear")), "quantile"
            else:
                c, source = pooled, "pooled"
                small.append(f"{name} ({n})")
            if name == POOLED and guarantee is not None and k < 1 and system not in fixed:
                notes.append(
                    (
                        system,
                        (
                            f"system {system!r}: {n} positives are too few for a retention guarantee "
                            f"at alpha = {alpha:g} (it needs n + 1 >= 1/alpha, n >= "
                            f"{math.ceil(round(1.0 / alpha, 9)) - 1}): no cutoff is returned"
                        ),
                    )
                )
            refused = int(np.searchsorted(neg, c, side="left")) if math.isfinite(c) else 0
            rows.append(
                {
                    "system": system,
                    "stratum": name,
                    "source": source,
                    "alpha": alpha,
                    "delta": delta,
                    "n_positive": n,
                    "rank": k if source == "conformal" else 0,
                    "cutoff": c,
                    "n_negative": int(neg.size),
                    "negatives_refused": refused,
                }
            )
        if small:
            need = (
                f"n + 1 >= 1/alpha = {1.0 / alpha:g}" if guarantee is not None else f"at least {min_samples} positives"
            )
            notes.append(
                (
                    system,
                    (
                        f"system {system!r}: stratum(s) {', '.join(small)} have too few positives to "
                        f"calibrate on their own ({need}); they use the pooled cutoff"
                    ),
                )
            )
    return rows, notes


_DERIVED = ("coverage", "coverage_ci_low", "coverage_ci_high", "negative_satisfaction", "negative_satisfaction_lower")


def stratum_limits(
    table: pd.DataFrame, top1: pd.DataFrame, system: pd.Series, query_id: pd.Series, pooled: np.ndarray
) -> np.ndarray:
    """The cutoff for each row of a run under per-stratum cutoffs.

    A query's stratum is the one calibration gave it (``top1``); its cutoff is the stratum's
    row of ``table``. A query calibration never saw, or a stratum without its own row (the
    negatives' strata, ``_unstratified``), gets ``pooled``, the system's pooled cutoff.

    Parameters
    ----------
    table : DataFrame
        :func:`guarantee_table`'s table.
    top1 : DataFrame
        :attr:`Calibration.top1`.
    system, query_id : Series
        The run's rows.
    pooled : ndarray
        Each row's system's pooled cutoff.

    Returns
    -------
    ndarray
        One cutoff per row.

    Examples
    --------
    >>> table = pd.DataFrame({"system": ["s", "s"], "stratum": [POOLED, "a"], "cutoff": [.5, .7]})
    >>> top1 = pd.DataFrame({"system": ["s", "s"], "query_id": ["q1", "q2"], "stratum": ["a", "b"]})
    >>> stratum_limits(table, top1, pd.Series(["s", "s", "s"]), pd.Series(["q1", "q2", "q3"]),
    ...                np.full(3, 0.5)).tolist()
    [0.7, 0.5, 0.5]
    """
    strata = top1[["system", "query_id", "stratum"]].drop_duplicates(["system", "query_id"])
    own = table[table["stratum"] != POOLED][["system", "stratum", "cutoff"]]
    per_query = strata.merge(own, on=["system", "stratum"], how="inner")
    keys = pd.DataFrame({"system": system.astype(ID).to_numpy(), "query_id": query_id.astype(ID).to_numpy()})
    found = keys.merge(per_query[["system", "query_id", "cutoff"]], on=["system", "query_id"], how="left", sort=False)[
        "cutoff"
    ].to_numpy(np.float64)
    return np.where(np.isnan(found), pooled, found)


def query_cutoffs(table: pd.DataFrame, top1: pd.DataFrame, pooled: Mapping[str, float]) -> np.ndarray:
    """The cutoff each row of ``top1`` meets (its stratum's, else its system's pooled one).

    Parameters
    ----------
    table : DataFrame
        :func:`guarantee_table`'s table.
    top1 : DataFrame
        :attr:`Calibration.top1`.
    pooled : dict
        Each system's pooled cutoff.

    Returns
    -------
    ndarray
        One cutoff per row of ``top1``.

    Examples
    --------
    >>> table = pd.DataFrame({"system": ["s", "s"], "stratum": [POOLED, "a"], "cutoff": [.5, .7]})
    >>> top1 = pd.DataFrame({"system": ["s", "s"], "query_id": ["q1", "q2"], "stratum": ["a", "b"]})
    >>> query_cutoffs(table, top1, {"s": 0.5}).tolist()
    [0.7, 0.5]
    """
    base = top1["system"].map(dict(pooled)).to_numpy(np.float64)
    return stratum_limits(table, top1, top1["system"], top1["query_id"], base)
