"""Average precision and its relatives: ``map``, ``gm_map``, ``map_cut_k``, ``Rprec``,
``Rprec_mult_x``, ``iprec_at_recall_x``, ``11pt_avg``.

With R the relevant labels and, for the i-th relevant document retrieved at rank r_i, its
precision i / r_i: map = sum_i (i / r_i) / R; map_cut_k sums only ranks <= k (still over R);
gm_map's per-query value is log(max(map, 1e-5)), summarized by exp of the mean (a geometric
mean). Rprec = relevant in the top R / R; Rprec_mult_x the same at rank c = floor(x R + 0.9),
over c. iprec_at_recall_x is the interpolated precision max_{i >= c} (i / r_i) with
c = floor(x R + 0.9) relevant documents (trec_eval 9.0.8; later versions round) (0 when fewer are retrieved); 11pt_avg is its mean over
x = 0.0, 0.1, ..., 1.0. Verified against pytrec_eval.
"""

from __future__ import annotations

import numpy as np

from .registry import RECALL_LEVELS

FAMILIES = ("map", "gm_map", "map_cut", "Rprec", "Rprec_mult", "iprec_at_recall", "11pt_avg")
MIN_GEO_MEAN = 1e-5


def _precisions(a, level: int):
    """The relevant entries, their ordinal among the relevant ones, and their precision."""
    rel = a.e_rel >= level
    cum = a.seg_cumsum(rel.astype(np.int64))
    idx = np.flatnonzero(rel)
    return idx, cum[idx], cum[idx] / (a.e_pos[idx] + 1.0)


def _iprec(a, level: int, xs) -> np.ndarray:
    """Interpolated precision at each recall level of ``xs``: (n rankings, len(xs))."""
    idx, ordinal, prec = _precisions(a, level)
    R = a.num_rel(level)
    relret = np.bincount(a.e_rk[idx], minlength=a.n)
    rk = a.e_rk[idx]
    out = np.zeros((a.n, len(xs)))
    for c, x in enumerate(xs):
        cut = np.floor(x * R + 0.9).astype(np.int64)  # trec_eval 9.0.8: (long) (x R + 0.9)
        best = np.zeros(a.n)
        take = ordinal >= cut[rk]
        np.maximum.at(best, rk[take], prec[take])
        out[:, c] = np.where(cut <= relret, best, 0.0)
    return out


def compute(measure, a, level: int) -> np.ndarray:
    f = measure.family
    R = a.num_rel(level)
    if f in ("map", "gm_map", "map_cut"):
        idx, _, prec = _precisions(a, level)
        if f == "map_cut":
            keep = a.e_pos[idx] < int(measure.param)
            idx, prec = idx[keep], prec[keep]
        total = np.bincount(a.e_rk[idx], weights=prec, minlength=a.n)
        ap = np.where(R > 0, total / np.maximum(R, 1), 0.0)
        return np.log(np.maximum(ap, MIN_GEO_MEAN)) if f == "gm_map" else ap
    if f in ("Rprec", "Rprec_mult"):
        cut = R if f == "Rprec" else np.floor(float(measure.param) * R + 0.9).astype(np.int64)
        rel = a.e_rel >= level
        hits = a.seg_sum(mask=rel & (a.e_pos < cut[a.e_rk])).astype(float)
        return np.where(cut > 0, hits / np.maximum(cut, 1), 0.0)
    if f == "iprec_at_recall":
        return _iprec(a, level, [float(measure.param)])[:, 0]
    if f == "11pt_avg":
        return _iprec(a, level, RECALL_LEVELS).mean(axis=1)
    raise KeyError(f)
