"""Compatibility, ``Compat(p=...)`` (Clarke, Vtyurina & Smucker 2021), as ir_measures' compat
provider computes it.

The rank-biased overlap (RBO, persistence p, default 0.95) of the ranking with an ideal ranking
of the query's relevant documents (grade > 0, the relevance level not applying, as in the
provider): with D = max(ranking length, number relevant L), RBO = sum_{i<D} p**i |top_i+1 of
the ranking & top_i+1 of the ideal| / (i + 1), over sum_{i<D} p**i; normalized (the default;
``normalize=False`` turns it off) by the same RBO of the ideal with itself, so that the ideal
ranking scores 1. The ideal orders relevant documents by grade, best first; within a grade the
retrieved ones in the ranking's order, then the unretrieved ones. The provider orders a grade's
documents by run score, an unretrieved one scoring 0: the two differ only where a retrieved
relevant document has a score <= 0. Verified against ir_measures' compat provider.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .calls import fmt, number, split_call
from .declare import Family, Measure

if TYPE_CHECKING:
    from .scan import Arrays

FAMILIES = (
    Family(
        "Compat",
        "compat",
        None,
        verified="ir_measures 0.4 (its compat provider)",
        aliases=("Compat(p=0.95)", "Compat(p=0.95,normalize=False)"),
        definition="Compatibility: rank-biased overlap (p 0.95) of the ranking with the "
        "ideal ranking of the relevant documents, over the ideal's own.",
    ),
)


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """``Compat``, ``Compat(p=0.8)``, ``Compat(normalize=False)``, or None for another name."""
    call = split_call(text)
    if call is None or call[0] != "Compat":
        return None
    _, args, cut = call
    if cut is not None or set(args) - {"p", "normalize"}:
        raise ValueError("Compat takes p= and normalize= only")
    p = number(args.get("p", "0.95"), "p", 0.0, 1.0)
    if not 0.0 < p < 1.0:
        raise ValueError("p must be within (0, 1)")
    norm = args.get("normalize", "True")
    if norm not in ("True", "False"):
        raise ValueError(f"normalize must be True or False, got {norm!r}")
    tail = "" if norm == "True" else ",normalize=False"
    return [Measure("Compat", (p, norm == "True"), None, name=f"Compat(p={fmt(p)}{tail})")]


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    p, normalize = measure.param
    _, ng = a.q_levels.shape
    L = a.q_levels[:, 1:].sum(axis=1)[a.r_query] if ng > 1 else np.zeros(a.n, dtype=np.int64)
    D = np.maximum(a.r_ret, L)
    i = np.arange(int(D.max()) + 1 if a.n else 1, dtype=float)
    F = np.r_[0.0, np.cumsum(p**i / (i + 1.0))]  # F[x] = sum_{i<x} p**i / (i + 1)
    norm = np.r_[0.0, np.cumsum(p**i)]  # sum_{i<x} p**i
    # Each relevant retrieved document enters the overlap from max(its rank, its ideal rank).
    rel = np.flatnonzero(a.l_rel > 0)
    rk, grade = a.l_rk[rel], a.l_rel[rel]
    better = np.cumsum(a.q_levels[:, ::-1], axis=1)[:, ::-1]  # [q, g]: labels with grade >= g
    above = np.where(grade + 1 < ng, better[a.r_query[rk], np.minimum(grade + 1, ng - 1)], 0)
    order = np.lexsort((a.l_pos[rel], grade, rk))  # entries are in rank order already
    key = rk[order] * ng + grade[order]
    first = np.r_[True, key[1:] != key[:-1]]
    run_start = np.flatnonzero(first)
    same = np.empty(len(rel), dtype=np.int64)
    same[order] = np.arange(len(rel)) - np.repeat(run_start, np.diff(np.r_[run_start, len(rel)]))
    enter = np.maximum(a.l_pos[rel], above + same)
    score = np.bincount(rk, weights=F[D[rk]] - F[enter], minlength=a.n)
    if normalize:
        best = norm[L] + L * (F[D] - F[L])
    else:
        best = norm[D]
    return np.where(best > 0, score / np.where(best > 0, best, 1.0), 0.0)
