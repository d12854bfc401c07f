"""Average precision and its relatives: ``map``, ``gm_map``, ``map_cut_k``, ``Rprec``,
``Rprec_mult_x``, ``iprec_at_recall_x``, ``11pt_avg``.

With R the relevant labels and, for the i-th relevant document retrieved at rank r_i, its
precision i / r_i: map = sum_i (i / r_i) / R; map_cut_k sums only ranks <= k (still over R);
gm_map's per-query value is log(max(map, 1e-5)), summarized by exp of the mean (a geometric
mean). Rprec = relevant in the top R / R; Rprec_mult_x the same at rank c = floor(x R + 0.9),
over c. iprec_at_recall_x is the interpolated precision max_{i >= c} (i / r_i) with
c = round(x R) relevant documents, halves away from zero (trec_eval 10.0's ``lround``; 9.0.8,
``compat="9.0.8"``, took floor(x R + 0.9), which 10.0 keeps for Rprec_mult), 0 when fewer are
retrieved; 11pt_avg is its mean over x = 0.0, 0.1, ..., 1.0. Verified against pytrec_eval
(9.0.8) and trec_eval 10.0's own test outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .declare import CUTOFFS, RECALL_LEVELS, RPREC_MULTS, Family

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays


FAMILIES = (
    Family(
        "map",
        "ap",
        None,
        definition="Average precision: the sum of the precision at each relevant document "
        "retrieved, over the number relevant.",
        aliases=("AP", "map"),
    ),
    Family(
        "gm_map",
        "ap",
        None,
        aggregate="gmean",
        definition="Average precision; its summary is the geometric mean (each query's AP "
        "floored at 1e-5); the per-query value printed is log(max(AP, 1e-5)).",
        aliases=("GMAP",),
    ),
    Family(
        "Rprec",
        "ap",
        None,
        definition="Precision at rank R, R the number of relevant documents.",
        aliases=("Rprec", "r_precision", "R-precision", "rprec"),
    ),
    Family(
        "iprec_at_recall",
        "ap",
        "level",
        RECALL_LEVELS,
        definition="Interpolated precision at a recall level: the highest precision at any "
        "rank whose recall reaches the level.",
        aliases=("IPrec",),
    ),
    Family(
        "11pt_avg",
        "ap",
        None,
        definition="Mean of the interpolated precision at recall 0.0, 0.1, ..., 1.0.",
        aliases=("11pt",),
    ),
    Family(
        "map_cut",
        "ap",
        "cutoff",
        CUTOFFS,
        reads="cutoff",
        definition="Average precision over the top k only (divided by R, not by min(R, k)).",
        aliases=("AP",),
    ),
    Family(
        "Rprec_mult",
        "ap",
        "level",
        RPREC_MULTS,
        definition="Precision at rank m * R (rounded), R the number relevant.",
        aliases=(),
    ),
)
MIN_GEO_MEAN = 1e-5


def _precisions(a: Arrays, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The relevant entries, their ordinal among the relevant ones, and their precision (made
    once per level: AP, AP at each cutoff and IPrec at each recall level read them)."""
    return a.memo(("precisions", level), lambda: _make_precisions(a, level))


def _make_precisions(a: Arrays, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rel = a.l_rel >= level
    cum = a.l_cumsum(rel.astype(np.int64))  # unlabelled entries are not relevant: add 0
    idx = np.flatnonzero(rel)
    return idx, cum[idx], cum[idx] / (a.l_pos[idx] + 1.0)


def _iprec(a: Arrays, level: int, xs: Sequence[float]) -> np.ndarray:
    """Interpolated precision at each recall level of ``xs``: (n rankings, len(xs))."""
    idx, ordinal, prec = _precisions(a, level)
    R = a.num_rel(level)
    rk = a.l_rk[idx]
    relret = np.bincount(rk, minlength=a.n)
    out = np.zeros((a.n, len(xs)))
    old = a.trec_version == "9.0.8"
    for c, x in enumerate(xs):
        # 9.0.8: (long) (x R + 0.9); 10.0: lround(x R) (x R >= 0, so floor(x R + 0.5)).
        cut = np.floor(x * R + (0.9 if old else 0.5)).astype(np.int64)
        best = np.zeros(a.n)
        take = ordinal >= cut[rk]
        np.maximum.at(best, rk[take], prec[take])
        out[:, c] = np.where(cut <= relret, best, 0.0)
    return out


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    R = a.num_rel(level)
    if f in ("map", "gm_map", "map_cut"):
        idx, _, prec = _precisions(a, level)
        if f == "map_cut":
            keep = a.l_pos[idx] < int(measure.param)
            idx, prec = idx[keep], prec[keep]
        total = np.bincount(a.l_rk[idx], weights=prec, minlength=a.n)
        ap = np.where(R > 0, total / np.maximum(R, 1), 0.0)
        return np.log(np.maximum(ap, MIN_GEO_MEAN)) if f == "gm_map" else ap
    if f in ("Rprec", "Rprec_mult"):
        cut = R if f == "Rprec" else np.floor(float(measure.param) * R + 0.9).astype(np.int64)
        rel = a.l_rel >= level
        hits = a.l_sum(mask=rel & (a.l_pos < cut[a.l_rk])).astype(float)
        return np.where(cut > 0, hits / np.maximum(cut, 1), 0.0)
    if f == "iprec_at_recall":
        return _iprec(a, level, [float(measure.param)])[:, 0]
    if f == "11pt_avg":  # trec_eval's eleven levels, or those given (11pt_avg..25,.5,.75)
        return _iprec(a, level, measure.param or RECALL_LEVELS).mean(axis=1)
    raise KeyError(f)
