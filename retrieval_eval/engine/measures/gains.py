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


def ideal_at_entries(a) -> np.ndarray:
    """Per entry: the ideal gain (grade) at its rank for its query, 0 past the ideal list."""
    iq, ipos, igrade = a.ideal()
    n_ideal = np.bincount(iq, minlength=len(a.queries))
    start = np.cumsum(n_ideal) - n_ideal
    q = a.r_query[a.e_rk]
    inside = a.e_pos < n_ideal[q]
    out = np.zeros(len(a.e_rk))
    out[inside] = igrade[(start[q] + a.e_pos)[inside]]
    return out


def compute(measure, a, level: int) -> np.ndarray:
    f = measure.family
    if f == "utility":
        relret = a.seg_sum(mask=a.e_rel >= level).astype(float)
        return relret - (a.r_ret - relret)
    if f == "binG":
        rel = a.e_rel >= level
        r = a.seg_cumsum(rel.astype(np.int64))
        idx = np.flatnonzero(rel)
        term = 1.0 / np.log2(3.0 + a.e_pos[idx] - r[idx])
        total = np.bincount(a.e_rk[idx], weights=term, minlength=a.n)
        R = a.num_rel(level)
        return np.where(R > 0, total / np.maximum(R, 1), 0.0)
    if f == "G":
        gain = np.where(a.e_rel > 0, a.e_rel, 0).astype(float)
        cost = a.seg_cumsum(np.maximum(ideal_at_entries(a), 1.0))
        got = a.seg_cumsum(gain)
        pos = gain != 0
        term = gain[pos] / np.log2(2.0 + cost[pos] - got[pos])
        total = np.bincount(a.e_rk[pos], weights=term, minlength=a.n)
        iq, _, igrade = a.ideal()
        ideal = np.bincount(iq, weights=igrade.astype(float), minlength=len(a.queries))[a.r_query]
        return np.where(ideal > 0, total / np.where(ideal > 0, ideal, 1.0), 0.0)
    raise KeyError(f)
