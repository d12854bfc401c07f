"""Gain measures: ``G``, ``binG`` (trec_eval) and ``utility``.

G (trec_eval's): the retrieved document at 0-based rank i that gains g_i != 0 adds
g_i / log2(2 + C_i - S_i), C_i the sum over ranks <= i of max(ideal gain at that rank, 1) and
S_i the gain retrieved up to rank i; the sum is divided by the ideal total gain (0 when it is
0). The gain of a grade is the grade, or what trec_eval's gain map gives it (``G.1=3,2=9``,
named ``G(gains={1:3,2:9})``; :mod:`.gainmap` says what a map does): the ideal list is the
judged documents with a positive gain, best first, as in ``m_G.c``; a negative gain counts
where it is retrieved. The relevance level plays no part.
binG: the relevant document at rank i adds 1 / log2(3 + i - r), r the relevant documents
up to it, over R. utility (trec_eval's ``utility.p1,p2,p3,p4``, defaults 1, -1, 0, 0):
p1 a + p2 b + p3 c + p4 d over the contingency table of the retrieved set, a the relevant
retrieved, b the non-relevant retrieved, c the relevant not retrieved and d = N + a - ret - R
the non-relevant not retrieved, N the collection's size (trec_eval's ``-N``, 0 unless given, so
d is negative then, as in trec_eval). Verified against pytrec_eval (utility with other
coefficients: trec_eval's formula on pytrec_eval's counts; pytrec_eval computes only the
defaults; G's gain maps: pytrec_eval on the mapped qrels, and hand-computed cases).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import gainmap
from .declare import Family

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays

FAMILIES = (
    Family(
        "G",
        "gains",
        None,
        optional=gainmap.OPTION,
        verified=gainmap.VERIFIED,
        definition="trec_eval's G: gain discounted by log2 of the ideal cost so far minus the "
        "gain so far, over the ideal total gain; gain = grade or a gain map's "
        "(G.1=3).",
        aliases=(),
    ),
    Family(
        "binG",
        "gains",
        None,
        definition="G with binary gain: mean over relevant documents of 1 / log2(2 + "
        "non-relevant retrieved before it).",
        aliases=(),
    ),
    Family(
        "utility",
        "gains",
        None,
        optional="coefficients: 1,-1,0,0",
        definition="Set utility p1 a + p2 b + p3 c + p4 d (a relevant retrieved, b non-relevant "
        "retrieved, c relevant missed, d = N + a - retrieved - R with N trec_eval's "
        "-N): utility.p1,p2,p3,p4, default 1,-1,0,0.",
        aliases=(),
        verified="pytrec_eval (trec_eval 9.0.8; coefficients: on its counts)",
    ),
)

#: trec_eval's default utility coefficients (p1, p2, p3, p4): ``utility`` is ``utility.1,-1,0,0``.
UTILITY_DEFAULTS = (1.0, -1.0, 0.0, 0.0)


def ideal_cost(a: Arrays, ideal: tuple[np.ndarray, np.ndarray, np.ndarray], idx: np.ndarray) -> np.ndarray:
    """For the labelled entries ``idx``: the sum, over ranks up to theirs, of max(ideal gain at
    that rank, 1) (trec_eval's G cost; the ideal gain is 0 past the ideal list ``ideal``,
    ``(query, position, gain)`` best first).

    That is rank + 1 plus the prefix sum of max(ideal gain - 1, 0) over the ideal list, taken
    at the entry's rank or at the list's end: no per-rank array is made.
    """
    iq, _, igain = ideal
    n_ideal = np.bincount(iq, minlength=len(a.queries))
    start = np.cumsum(n_ideal) - n_ideal
    excess = np.cumsum(np.maximum(igain - 1, 0).astype(float))
    excess = excess - np.r_[0.0, excess][start][iq]  # prefix sums within each query
    q = a.r_query[a.l_rk[idx]]
    pos = a.l_pos[idx]
    L = n_ideal[q]
    upto = np.zeros(len(idx))
    has = L > 0
    upto[has] = excess[start[q[has]] + np.minimum(pos[has], L[has] - 1)]
    return pos + 1.0 + upto


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    if f == "utility":
        p1, p2, p3, p4 = measure.param if measure.param is not None else UTILITY_DEFAULTS
        relret = a.rel_ret(level).astype(float)
        ret, rel = a.r_ret.astype(float), a.num_rel(level).astype(float)
        return p1 * relret + p2 * (ret - relret) + p3 * (rel - relret) + p4 * (a.num_docs + relret - ret - rel)
    if f == "binG":
        rel = a.l_rel >= level
        r = a.l_cumsum(rel.astype(np.int64))
        idx = np.flatnonzero(rel)
        term = 1.0 / np.log2(3.0 + a.l_pos[idx] - r[idx])
        total = np.bincount(a.l_rk[idx], weights=term, minlength=a.n)
        R = a.num_rel(level)
        return np.where(R > 0, total / np.maximum(R, 1), 0.0)
    if f == "G":
        gain, ideal = gainmap.apply(a, measure.param or ())
        got = a.l_cumsum(gain)
        pos = np.flatnonzero(gain != 0)
        term = gain[pos] / np.log2(2.0 + ideal_cost(a, ideal, pos) - got[pos])
        total = np.bincount(a.l_rk[pos], weights=term, minlength=a.n)
        iq, _, igain = ideal
        best = np.bincount(iq, weights=igain, minlength=len(a.queries))[a.r_query]
        return np.where(best > 0, total / np.where(best > 0, best, 1.0), 0.0)
    raise KeyError(f)
