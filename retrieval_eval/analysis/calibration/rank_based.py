"""Honesty: does a system's score carry an absolute relevance, or is it a function of rank?

Fused rankings (reciprocal rank fusion) and scores rescaled per query look like scores but say
nothing about whether the engine knows it has no answer; a calibration on them would report a
separation that is not there. :func:`rank_reasons` says why a system's scores look rank-based
(empty when they do not), and calibration marks such a system's figures indeterminate.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from ..stats import difference

__all__ = ["RANK_BASED_ATTR", "rank_reasons"]

#: The key of a run frame's ``attrs`` naming systems known to be rank-based, ``{system: why}``:
#: :func:`retrieval_eval.analysis.fusion.fuse` sets it on the runs it fuses by rank, and
#: :func:`rank_reasons` reports it first, whatever the scores look like.
RANK_BASED_ATTR = "rank_based"

#: RRF constants tried by the fusion-pattern check, and the deepest source rank considered.
_RRF_CONSTANTS = np.arange(0, 101)
_RRF_DEPTH = 100


def _decimals(values: np.ndarray) -> int | None:
    """The fewest decimals (0..9) every value is written with, or None (full precision)."""
    for d in range(0, 10):
        scaled = values * 10.0**d
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 * np.maximum(1.0, np.abs(scaled))):
            return d
    return None


@functools.cache
def _rrf_table(c: int) -> np.ndarray:
    a = np.arange(1, _RRF_DEPTH + 1, dtype=np.float64)
    single = 1.0 / (c + a)
    ii, jj = np.triu_indices(_RRF_DEPTH)
    return np.unique(np.r_[single, single[ii] + single[jj]])


def _rrf_match(scores: np.ndarray) -> tuple[int, float, bool] | None:
    """The RRF constant ``c`` for which (nearly) every score is ``1/(c+a)`` or
    ``1/(c+a) + 1/(c+b)`` (one or two fused lists, source ranks up to 100), possibly divided
    by the best possible score ``m/(c+1)`` (normalized RRF, m = 1 or 2 lists). Returns
    ``(c, share of scores that match, normalized)``, or None when no constant explains 95%
    of them. Coarsely rounded scores (4 decimals or fewer) are not tested: too many sums
    would match by chance."""
    scores = scores[np.isfinite(scores)]
    if scores.size < 10 or np.any(scores <= 0) or np.any(scores > 2.0):
        return None
    d = _decimals(scores)
    if d is not None and d <= 4:
        return None
    if d is not None:
        tol = 0.5 * 10.0**-d + 1e-12
    else:
        tol = 1e-9 * max(1.0, float(np.max(np.abs(scores))))
    normalizable = float(scores.max()) <= 1.0 + tol
    best: tuple[int, float, bool] | None = None
    # Largest constant first: 1/(0 + 61) is also 1/(60 + 1), and the conventional k = 60
    # (not "c = 0 with source ranks from 61") is the explanation worth naming.
    for c in _RRF_CONSTANTS[::-1]:  # a hundred constants, each one vectorized over every score
        table = _rrf_table(int(c))
        factors = (1.0,) + ((1.0 / (c + 1), 2.0 / (c + 1)) if normalizable else ())
        for factor in factors:
            raw, raw_tol = scores * factor, tol * factor
            if raw.max() > table[-1] + raw_tol or raw.min() < table[0] - raw_tol:
                continue
            at = np.clip(np.searchsorted(table, raw), 1, table.size - 1)
            gap = np.minimum(np.abs(table[at] - raw), np.abs(table[at - 1] - raw))
            share = float(np.mean(gap <= raw_tol))
            if share >= 0.95 and (best is None or share > best[1]):
                best = (int(c), share, factor != 1.0)
                if share == 1.0:
                    return best
    return best


def _distinct(values: np.ndarray) -> int:
    """Distinct values: neighbours (sorted) closer than 1e-9 of the larger of the two count once.

    The tolerance is relative to each pair, not to the largest score: one score of 1e308 must
    not make every cosine of the run look equal (and rank-based)."""
    if values.size == 0:
        return 0
    s = np.sort(values)
    tol = 1e-9 * np.maximum(np.maximum(np.abs(s[1:]), np.abs(s[:-1])), 1e-300)
    return int(1 + np.count_nonzero(difference(s[1:], s[:-1]) > tol))


def _unit(x: np.ndarray) -> tuple[np.ndarray, int]:
    """``x`` divided by a power of two ``2**e`` that brings every finite value into [-1, 1], and ``e``.

    Exact (but for values that become subnormal, negligible next to the largest), so a ratio of
    spreads is the same number, and squares and sums cannot overflow for scores near 1.8e308."""
    finite = x[np.isfinite(x)]
    top = float(np.max(np.abs(finite))) if finite.size else 0.0
    e = math.frexp(top)[1] if top > 0 else 0
    with np.errstate(under="ignore"):
        return np.ldexp(x, -e), e


def rank_reasons(rows: pd.DataFrame, top1: np.ndarray) -> list[str]:
    """Why a system's scores look determined by rank (empty when they do not).

    A system the run's ``attrs[RANK_BASED_ATTR]`` names (a run fused by rank by
    :func:`~retrieval_eval.analysis.fusion.fuse`) is rank-based by construction: its reason
    comes first. Otherwise three independent signs, any one suffices:

    1. top-1 scores take only a handful of distinct values across queries (at least 10
       queries; at most max(3, 5% of them) values, and never more than 10, so a cosine
       rounded to two decimals over thousands of queries is not mistaken for one): an RRF
       run of two lists gives values like 1/61 + 1/61, 1/61 + 1/62, ... whatever the query;
    2. the score is a fixed function of rank: over ranks 1-10, the spread of scores across
       queries at the same rank is under 5% of the spread between ranks (a cosine differs from
       query to query at every rank, OOD queries lower);
    3. scores match reciprocal-rank-fusion sums ``1/(c + a) [+ 1/(c + b)]`` for one constant
       c, raw or divided by the best possible score (normalized RRF).

    Parameters
    ----------
    rows : DataFrame
        One system's scored rows (``query_id``, ``rank``, ``score``).
    top1 : ndarray
        Its queries' top-1 scores.

    Returns
    -------
    list of str
        One sentence per sign found.

    Examples
    --------
    >>> rows = pd.DataFrame({"query_id": [f"q{i}" for i in range(12) for _ in range(3)],
    ...                      "rank": [1, 2, 3] * 12, "score": [1 / 61, 1 / 62, 1 / 63] * 12})
    >>> rank_reasons(rows, np.full(12, 1 / 61))[0]
    'top-1 scores take only 1 distinct value across 12 queries'
    """
    marked = rows.attrs.get(RANK_BASED_ATTR) or {}
    reasons = [str(marked[s]) for s in pd.unique(rows["system"]) if s in marked] if marked else []
    n = int(np.isfinite(top1).sum())
    finite = top1[np.isfinite(top1)]
    distinct = _distinct(finite)
    if n >= 10 and distinct <= max(3, min(int(0.05 * n), 10)):
        reasons.append(f"top-1 scores take only {distinct} distinct value{'s' * (distinct != 1)} across {n} queries")
    head = rows[(rows["rank"] <= 10) & np.isfinite(rows["score"].to_numpy())]
    raw_head = head["score"].to_numpy(np.float64)
    unit, e = _unit(raw_head)  # spreads in units of 2**e: no overflow, the same ratio
    head = pd.DataFrame({"rank": head["rank"].to_numpy(), "query_id": head["query_id"].to_numpy(), "score": unit})
    by_rank = head.groupby("rank", sort=True)["score"]
    counts = by_rank.count()
    usable = counts[counts >= 2].index
    if len(usable) >= 2 and head["query_id"].nunique() >= 3:
        h = head[head["rank"].isin(usable)]
        grouped = h.groupby("rank")["score"]
        means = grouped.transform("mean").to_numpy()
        resid = h["score"].to_numpy() - means
        dof = max(len(h) - len(usable), 1)
        with np.errstate(under="ignore"):
            within = math.sqrt(float(np.sum(resid**2)) / dof)
            between = float(np.std(grouped.mean().to_numpy()))
        if between > 0 and within <= 0.05 * between:
            with np.errstate(over="ignore"):
                shown = float(np.ldexp(within, e))
            reasons.append(
                f"the score is a function of rank (across queries, scores at the same rank "
                f"vary by {shown:.3g}, {within / between:.1%} of their spread between ranks)"
            )
        elif between == 0 and within == 0:
            reasons.append("every hit has the same score")
    match = _rrf_match(raw_head)
    if match is not None:
        c, share, normalized = match
        reasons.append(
            f"{share:.0%} of the top-10 scores are reciprocal-rank-fusion sums "
            f"of 1/({c} + rank) terms{' (normalized)' if normalized else ''}"
        )
    return reasons
