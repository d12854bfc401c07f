"""Discounted cumulative gain: ``ndcg``, ``ndcg_cut_k`` (trec_eval, linear gain) and
``ndcg_exp_cut_k`` (the spec's exponential gain), and trec_eval's ``ndcg_rel`` and ``Rndcg``.

DCG = sum over retrieved documents of gain(grade) / log2(rank + 1); the ideal DCG ranks every
judged label of the query (grade >= 0) best first; nDCG = DCG / ideal DCG, 0 when the ideal
is 0. trec_eval's gain is the grade itself (``linear``); the spec's is 2**grade - 1
(``exponential``). An unlabelled or negatively graded document gains 0. The relevance level
does not enter nDCG (as in trec_eval). ``ndcg_cut_k`` cuts both rankings at k; ``ndcg``
does not cut.

``ndcg_rel`` (trec_eval's) averages, over the L documents of the ideal list with a positive
gain, the nDCG at the rank of each retrieved document with a positive gain (the ideal DCG taken
at min(rank, L)), the ones not retrieved taking the final nDCG; 0 unless that sum is positive.
``Rndcg`` (trec_eval's) averages the nDCG at each rank where the ideal gain changes (the end of
each block of one gain in the ideal list's positive part), plus the final nDCG when the ranking
runs two or more ranks past that list; 0 for a query with no relevant label (grade >= the
relevance level: the only place the level enters), and NaN, trec_eval's 0 / 0, for a query with
relevant labels but no positive gain (possible only with a gain map).

Both take trec_eval's gain map (``ndcg_rel.1=3,2=9``, ``Rndcg.0=1,1=3``: :mod:`.gainmap` says
what a map does; the measure's ``param`` holds it, named ``ndcg_rel(gains={1:3,2:9})``): the
gain of a grade, the ideal list's order and where it ends come from the map, as in
``m_ndcg_rel.c`` / ``m_Rndcg.c``. Verified against pytrec_eval (linear; gain maps: on qrels
whose grades are replaced by their gains, where that is the same thing, and hand-computed
cases where it is not) and against this project's engine
(:func:`retrieval_eval.metrics.compute`, exponential).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import gainmap
from .declare import CUTOFFS, Family

if TYPE_CHECKING:
    from .declare import Measure
    from .gainmap import GainTable
    from .scan import Arrays

FAMILIES = (
    Family(
        "ndcg",
        "ndcg",
        None,
        gain="linear",
        optional=gainmap.OPTION,
        definition="nDCG over the whole ranking: gain = grade (or a gain map's, ndcg.1=3,2=9),"
        " discount log2(rank + 1), ideal = every judged gain sorted.",
        aliases=("nDCG",),
    ),
    Family(
        "ndcg_rel",
        "ndcg",
        None,
        gain="linear",
        optional=gainmap.OPTION,
        definition="trec_eval's ndcg_rel: nDCG averaged over the ranks of the documents with "
        "a positive gain (the unretrieved ones taking the final nDCG); gain = grade "
        "or a gain map's (ndcg_rel.1=3,2=9).",
        aliases=(),
        verified=gainmap.VERIFIED,
    ),
    Family(
        "Rndcg",
        "ndcg",
        None,
        gain="linear",
        optional=gainmap.OPTION,
        definition="trec_eval's Rndcg: nDCG averaged over the ranks where the ideal gain "
        "changes; gain = grade or a gain map's (Rndcg.0=1,1=3).",
        aliases=(),
        verified=gainmap.VERIFIED,
    ),
    Family(
        "ndcg_cut",
        "ndcg",
        "cutoff",
        CUTOFFS,
        reads="cutoff",
        gain="linear",
        definition="nDCG at k with trec_eval's linear gain (the grade).",
        aliases=("nDCG", "ndcg_linear"),
    ),
    Family(
        "ndcg_exp_cut",
        "ndcg",
        "cutoff",
        CUTOFFS,
        reads="cutoff",
        gain="exponential",
        definition="nDCG at k with the spec's exponential gain 2**grade - 1.",
        aliases=("ndcg", "ndcg_burges"),
        verified="hand-computed values (tests)",
    ),
)


def _gain(grade: np.ndarray, exponential: bool) -> np.ndarray:
    g = np.where(grade > 0, grade, 0).astype(float)
    return np.exp2(g) - 1.0 if exponential else g


def _cumulative(a: Arrays, table: GainTable) -> tuple[Any, ...]:
    """Per labelled entry: its ranking's DCG up to it (the gains of ``table``, a gain map, empty
    for gain = grade); per entry of the ideal list (its positive part): the same.
    Unlabelled entries gain 0, so the sums over labelled entries are the sums over all."""
    gain, (iq, ipos, igain) = gainmap.apply(a, table)
    disc = gain / np.log2(a.l_pos + 2.0)  # each entry's discounted gain
    dcg = a.l_cumsum(disc)
    L = np.bincount(iq, minlength=len(a.queries))
    start = np.cumsum(L) - L
    icum = np.cumsum(igain / np.log2(ipos + 2.0))
    icum = icum - np.r_[0.0, icum][start][iq]
    return gain, disc, dcg, icum, L, start, (iq, ipos, igain)


def _at(values: np.ndarray, starts: np.ndarray, offset: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """values[starts + offset] where valid, else 0."""
    out = np.zeros(len(starts))
    out[valid] = values[(starts + offset)[valid]]
    return out


def _dcg_upto(a: Arrays, disc: np.ndarray, upto: np.ndarray | None = None) -> np.ndarray:
    """Per ranking: the DCG of its first ``upto`` entries (``upto`` per ranking; all of them
    without), from the labelled entries' discounted gains ``disc``."""
    if upto is None:
        return np.bincount(a.l_rk, weights=disc, minlength=a.n)
    top = a.l_pos < upto[a.l_rk]
    return np.bincount(a.l_rk[top], weights=disc[top], minlength=a.n)


def _ndcg_rel(a: Arrays, table: GainTable) -> np.ndarray:
    gain, disc, dcg, icum, L, start, _ = _cumulative(a, table)
    Lr = L[a.r_query]
    full_dcg = _dcg_upto(a, disc)
    ideal_total = _at(icum, start[a.r_query], Lr - 1, Lr > 0)
    pos = np.flatnonzero(gain > 0)  # a positive gain: its query's ideal list is not empty
    q = a.r_query[a.l_rk[pos]]
    ideal_here = icum[start[q] + np.minimum(a.l_pos[pos], L[q] - 1)]
    total = np.bincount(a.l_rk[pos], weights=dcg[pos] / ideal_here, minlength=a.n)
    relret = np.bincount(a.l_rk[pos], minlength=a.n)
    safe = np.where(ideal_total > 0, ideal_total, 1.0)
    total = total + np.where(Lr > 0, (Lr - relret) * full_dcg / safe, 0.0)
    return np.where((total > 0) & (Lr > 0), total / np.maximum(Lr, 1), 0.0)


def _rndcg(a: Arrays, level: int, table: GainTable) -> np.ndarray:
    _, disc, _, icum, L, start, (iq, ipos, igain) = _cumulative(a, table)
    # The ends of each gain's block in the ideal list: where the next gain differs.
    end = np.r_[(iq[1:] != iq[:-1]) | (igain[1:] != igain[:-1]), True] if len(iq) else np.zeros(0, bool)
    b_query, b_at = iq[end], ipos[end] + 1  # a boundary after b_at ideal documents
    per_q = np.bincount(b_query, minlength=len(a.queries))
    b_start = np.cumsum(per_q) - per_q
    total = np.zeros(a.n)
    count = np.zeros(a.n)
    for t in range(int(per_q.max()) if len(per_q) else 0):  # at most one per gain
        rk = np.flatnonzero(per_q[a.r_query] > t)
        b = b_at[b_start[a.r_query[rk]] + t]
        upto = np.zeros(a.n, dtype=np.int64)
        upto[rk] = np.minimum(b, a.r_ret[rk])
        d = _dcg_upto(a, disc, upto)[rk]
        ideal = icum[start[a.r_query[rk]] + b - 1]
        total[rk] += d / ideal
        count[rk] += 1
    Lr = L[a.r_query]
    extra = (a.r_ret >= Lr + 2) & (Lr > 0)
    full_dcg = _dcg_upto(a, disc)
    ideal_total = _at(icum, start[a.r_query], Lr - 1, Lr > 0)
    total = total + np.where(extra, full_dcg / np.where(ideal_total > 0, ideal_total, 1.0), 0.0)
    count = count + extra
    # m_Rndcg.c: a query with no relevant label (on the grade, -l) returns before any gain is
    # read; one with relevant labels but no positive gain divides 0 by 0.
    R = a.num_rel(level)
    return np.where(R > 0, np.where(count > 0, total / np.maximum(count, 1), np.nan), 0.0)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    if f == "ndcg_rel":
        return _ndcg_rel(a, measure.param or ())
    if f == "Rndcg":
        return _rndcg(a, level, measure.param or ())
    exponential = measure.spec.gain == "exponential"
    k = None if f == "ndcg" else int(measure.param)
    disc, idisc = a.memo(("ndcg", exponential), lambda: _discounted(a, exponential))
    iq, ipos, _ = a.ideal
    if k is None:
        dcg = _dcg_upto(a, disc)
        idcg_q = np.bincount(iq, weights=idisc, minlength=len(a.queries))
    else:
        ikeep = ipos < k
        dcg = _dcg_upto(a, disc, np.full(a.n, k))
        idcg_q = np.bincount(iq[ikeep], weights=idisc[ikeep], minlength=len(a.queries))
    idcg = idcg_q[a.r_query]
    return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)


def _discounted(a: Arrays, exponential: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each labelled entry's discounted gain, and each ideal entry's (0 for a gain <= 0: it
    adds nothing to a sum), shared by every cutoff of nDCG."""
    gain = _gain(a.l_rel, exponential)
    disc = np.where(gain > 0, gain / np.log2(a.l_pos + 2.0), 0.0)
    _, ipos, igrade = a.ideal
    igain = _gain(igrade, exponential)
    return disc, np.where(igain > 0, igain / np.log2(ipos + 2.0), 0.0)
