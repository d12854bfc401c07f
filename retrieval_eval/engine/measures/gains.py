"""Gain measures: ``G``, ``binG`` (trec_eval) and ``utility``.

G (trec_eval's): with gain = grade, the document at 0-based rank i that gains g_i > 0 adds
g_i / log2(2 + C_i - S_i), C_i the sum over ranks <= i of max(ideal gain at that rank, 1) and
S_i the gain retrieved up to rank i; the sum is divided by the ideal total gain (0 when it is
0). binG: the relevant document at rank i adds 1 / log2(3 + i - r), r the relevant documents
up to it, over R. utility (trec_eval's defaults 1, -1, 0, 0): relevant retrieved minus
non-relevant retrieved. Verified against pytrec_eval.
"""

from __future__ import annotations

import numpy as np

from .declare import Family

FAMILIES = (
    Family("G", "gains", None,
           definition="trec_eval's G: gain discounted by log2 of the ideal cost so far minus the "
                      "gain so far, over the ideal total gain.",
           aliases=()),
    Family("binG", "gains", None,
           definition="G with binary gain: mean over relevant documents of 1 / log2(2 + "
                      "non-relevant retrieved before it).",
           aliases=()),
    Family("utility", "gains", None,
           definition="Set utility with trec_eval's default coefficients (1, -1, 0, 0): relevant "
                      "retrieved minus non-relevant retrieved.",
           aliases=()),
)


def ideal_cost(a, idx: np.ndarray) -> np.ndarray:
    """For the labelled entries ``idx``: the sum, over ranks up to theirs, of max(ideal gain at
    that rank, 1) (trec_eval's G cost; the ideal gain is 0 past the ideal list).

    That is rank + 1 plus the prefix sum of max(ideal gain - 1, 0) over the ideal list, taken
    at the entry's rank or at the list's end: no per-rank array is made.
    """
    iq, ipos, igrade = a.ideal()
    n_ideal = np.bincount(iq, minlength=len(a.queries))
    start = np.cumsum(n_ideal) - n_ideal
    excess = np.cumsum(np.maximum(igrade - 1, 0).astype(float))
    excess = excess - np.r_[0.0, excess][start][iq]  # prefix sums within each query
    q = a.r_query[a.l_rk[idx]]
    pos = a.l_pos[idx]
    L = n_ideal[q]
    upto = np.zeros(len(idx))
    has = L > 0
    upto[has] = excess[start[q[has]] + np.minimum(pos[has], L[has] - 1)]
    return pos + 1.0 + upto


def compute(measure, a, level: int) -> np.ndarray:
    f = measure.family
    if f == "utility":
        relret = a.l_sum(mask=a.l_rel >= level).astype(float)
        return relret - (a.r_ret - relret)
    if f == "binG":
        rel = a.l_rel >= level
        r = a.l_cumsum(rel.astype(np.int64))
        idx = np.flatnonzero(rel)
        term = 1.0 / np.log2(3.0 + a.l_pos[idx] - r[idx])
        total = np.bincount(a.l_rk[idx], weights=term, minlength=a.n)
        R = a.num_rel(level)
        return np.where(R > 0, total / np.maximum(R, 1), 0.0)
    if f == "G":
        gain = np.where(a.l_rel > 0, a.l_rel, 0).astype(float)
        got = a.l_cumsum(gain)
        pos = np.flatnonzero(gain != 0)
        term = gain[pos] / np.log2(2.0 + ideal_cost(a, pos) - got[pos])
        total = np.bincount(a.l_rk[pos], weights=term, minlength=a.n)
        iq, _, igrade = a.ideal()
        ideal = np.bincount(iq, weights=igrade.astype(float), minlength=len(a.queries))[a.r_query]
        return np.where(ideal > 0, total / np.where(ideal > 0, ideal, 1.0), 0.0)
    raise KeyError(f)
