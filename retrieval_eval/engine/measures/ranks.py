"""Rank cutoffs: ``P_k``, ``recall_k``, ``relative_P_k``, ``success_k``, ``recip_rank``,
``RR@k`` (ir_measures'; ranx's ``mrr@k``) and ``hits@k`` (ranx's).

With ``hits`` the relevant documents (grade >= level) among the top k and R the query's
relevant labels: P = hits / k (k, not the ranking's length: a short ranking is not excused),
recall = hits / R, relative_P = hits / min(R, k), success = [hits > 0], recip_rank = 1 / rank
of the first relevant document, RR@k the same when that rank is <= k (else 0), and ranx's
hits@k the count ``hits`` itself. A query without relevant labels scores 0 on each (trec_eval).
Verified against pytrec_eval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .declare import CUTOFFS, SUCCESS_CUTOFFS, Family

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays

FAMILIES = (
    Family(
        "recip_rank",
        "ranks",
        None,
        definition="Reciprocal rank of the first relevant document (0 without one).",
        aliases=("RR", "mrr", "MRR"),
    ),
    Family(
        "P",
        "ranks",
        "cutoff",
        CUTOFFS,
        reads="cutoff",
        definition="Precision at k: relevant retrieved in the top k, over k.",
        aliases=("P", "precision"),
    ),
    Family(
        "relative_P",
        "ranks",
        "cutoff",
        CUTOFFS,
        reads="cutoff",
        definition="Relative precision at k: relevant in the top k over min(R, k).",
        aliases=(),
    ),
    Family(
        "recall",
        "ranks",
        "cutoff",
        CUTOFFS,
        reads="cutoff",
        definition="Recall at k: relevant retrieved in the top k, over R.",
        aliases=("R", "recall"),
    ),
    Family(
        "success",
        "ranks",
        "cutoff",
        SUCCESS_CUTOFFS,
        reads="cutoff",
        definition="1 if a relevant document is in the top k, else 0.",
        aliases=("Success", "hit_rate"),
    ),
    Family(
        "recip_rank_cut",
        "ranks",
        "cutoff",
        (10,),
        reads="cutoff",
        style="at",
        label="RR",
        definition="Reciprocal rank of the first relevant document if it is in the top k, "
        "else 0 (ir_measures' RR@k, ranx's mrr@k).",
        aliases=("RR", "mrr"),
        verified="ir_measures 0.4; ranx 0.3 (mrr@k)",
    ),
    Family(
        "hits",
        "ranks",
        "cutoff",
        (10,),
        reads="cutoff",
        style="at",
        definition="Number of relevant documents in the top k (ranx's hits@k; its mean is not a share).",
        aliases=("hits",),
        verified="ranx 0.3",
    ),
)


def first_relevant(a: Arrays, level: int) -> np.ndarray:
    """Per ranking: the 0-based rank of its first relevant entry, inf without one."""
    idx = np.flatnonzero(a.l_rel >= level)
    first = np.full(a.n, np.inf)
    if len(idx):
        rk = a.l_rk[idx]
        head = np.r_[True, rk[1:] != rk[:-1]]  # entries are in (ranking, rank) order
        first[rk[head]] = a.l_pos[idx[head]]
    return first


def _relevant(a: Arrays, level: int) -> tuple[np.ndarray, np.ndarray]:
    """The ranking and the rank of each relevant entry (shared by every cutoff)."""
    rel = a.l_rel >= level
    return a.l_rk[rel], a.l_pos[rel]


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    if f == "recip_rank":
        first = first_relevant(a, level)
        return np.where(np.isfinite(first), 1.0 / (first + 1.0), 0.0)
    k = int(measure.param)
    if f == "recip_rank_cut":
        first = first_relevant(a, level)
        return np.where(first < k, 1.0 / (first + 1.0), 0.0)
    rel_rk, rel_pos = a.memo(("relevant", level), lambda: _relevant(a, level))
    hits = np.bincount(rel_rk[rel_pos < k], minlength=a.n).astype(float)
    if f == "hits":
        return hits
    R = a.num_rel(level)
    if f == "P":
        return hits / k
    if f == "recall":
        return np.where(R > 0, hits / np.maximum(R, 1), 0.0)
    if f == "relative_P":
        return np.where(R > 0, hits / np.maximum(np.minimum(R, k), 1), 0.0)
    if f == "success":
        return (hits > 0).astype(float)
    raise KeyError(f)
