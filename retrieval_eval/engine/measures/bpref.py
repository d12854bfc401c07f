"""Measures for incomplete judgments: ``bpref``, ``gm_bpref``, ``infAP``.

Only judged documents count (an unlabelled one is skipped, as trec_eval's NONPOOL). With R
the relevant and N the judged non-relevant labels (0 <= grade < level): bpref = (1 / R) sum
over relevant retrieved d of 1 - min(n_d, R) / min(N, R), n_d the judged non-relevant ranked
above d (the term is 1 when n_d = 0). gm_bpref: log(max(bpref, 1e-5)), summarized by a
geometric mean. infAP (Yilmaz & Aslam 2006, trec_eval's form): the relevant document at
0-based rank j adds 1 when j = 0, else 1/(j+1) + j/(j+1) * (r - 1 + n + u)/j *
(r - 1 + eps)/(r - 1 + n + 2 eps), r, n, u the relevant (it included), judged non-relevant and
pool-unjudged (negative grade) documents up to it, eps = 1e-5; the sum is divided by R.
Verified against pytrec_eval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .declare import Family
from .scan import UNJUDGED

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays

FAMILIES = (
    Family(
        "bpref",
        "bpref",
        None,
        definition="Binary preference: mean over relevant documents of 1 - (judged "
        "non-relevant ranked above it, at most R) / min(R, N).",
        aliases=("Bpref",),
    ),
    Family(
        "gm_bpref",
        "bpref",
        None,
        aggregate="gmean",
        definition="bpref; its summary is the geometric mean (each query's floored at 1e-5); "
        "the per-query value is log(max(bpref, 1e-5)).",
        aliases=(),
    ),
    Family(
        "infAP",
        "bpref",
        None,
        definition="Inferred AP (Yilmaz & Aslam 2006): AP estimated from a judged sample; "
        "negative grades mark pool documents left unjudged.",
        aliases=("infAP",),
    ),
)
MIN_GEO_MEAN = 1e-5
INFAP_EPSILON = 0.00001


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    R = a.num_rel(level).astype(float)
    rel = a.l_rel >= level
    nonrel = (a.l_rel >= 0) & (a.l_rel < level)
    idx = np.flatnonzero(rel)
    n_before = a.l_cumsum(nonrel.astype(np.int64))[idx]  # the entry itself is relevant
    rk = a.l_rk[idx]
    if f in ("bpref", "gm_bpref"):
        N = a.num_nonrel(level).astype(float)
        denom = np.minimum(N, R)[rk]
        term = np.where(n_before > 0, 1.0 - np.minimum(n_before, R[rk]) / np.where(denom > 0, denom, 1.0), 1.0)
        total = np.bincount(rk, weights=term, minlength=a.n)
        value = np.where(R > 0, total / np.where(R > 0, R, 1.0), total)
        return np.log(np.maximum(value, MIN_GEO_MEAN)) if f == "gm_bpref" else value
    if f == "infAP":
        r = a.l_cumsum(rel.astype(np.int64))[idx].astype(float)
        u = a.l_cumsum((a.l_rel == UNJUDGED).astype(np.int64))[idx].astype(float)
        j = a.l_pos[idx].astype(float)
        n = n_before.astype(float)
        safe_j = np.where(j > 0, j, 1.0)
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1 + n + u) / safe_j) * (
            (r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON)
        )
        term = np.where(j == 0, 1.0, term)
        total = np.bincount(rk, weights=term, minlength=a.n)
        return np.where(R > 0, total / np.where(R > 0, R, 1.0), total)
    raise KeyError(f)
