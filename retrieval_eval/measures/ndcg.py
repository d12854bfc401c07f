"""Discounted cumulative gain: ``ndcg``, ``ndcg_cut_k`` (trec_eval, linear gain) and
``ndcg_exp_cut_k`` (the spec's exponential gain).

DCG = sum over retrieved documents of gain(grade) / log2(rank + 1); the ideal DCG ranks every
judged label of the query (grade >= 0) best first; nDCG = DCG / ideal DCG, 0 when the ideal
is 0. trec_eval's gain is the grade itself (``linear``); the spec's is 2**grade - 1
(``exponential``). An unlabelled or negatively graded document gains 0. The relevance level
does not enter nDCG (as in trec_eval). ``ndcg_cut_k`` cuts both rankings at k; ``ndcg``
does not cut. Verified against pytrec_eval (linear) and against this project's engine
(:func:`retrieval_eval.metrics.compute`, exponential).
"""

from __future__ import annotations

import numpy as np

FAMILIES = ("ndcg", "ndcg_cut", "ndcg_exp_cut")


def _gain(grade: np.ndarray, exponential: bool) -> np.ndarray:
    g = np.where(grade > 0, grade, 0).astype(float)
    return np.exp2(g) - 1.0 if exponential else g


def compute(measure, a, level: int) -> np.ndarray:
    f = measure.family
    exponential = measure.spec.gain == "exponential"
    k = None if f == "ndcg" else int(measure.param)
    pos = a.e_pos.astype(float)
    gain = _gain(a.e_rel, exponential)
    keep = gain > 0 if k is None else (gain > 0) & (a.e_pos < k)
    dcg = np.bincount(a.e_rk[keep], weights=gain[keep] / np.log2(pos[keep] + 2.0), minlength=a.n)
    iq, ipos, igrade = a.ideal()
    igain = _gain(igrade, exponential)
    ikeep = igain > 0 if k is None else (igain > 0) & (ipos < k)
    idcg_q = np.bincount(iq[ikeep], weights=igain[ikeep] / np.log2(ipos[ikeep] + 2.0),
                         minlength=len(a.queries))
    idcg = idcg_q[a.r_query]
    return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
