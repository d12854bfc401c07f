"""Unjudged documents at a cutoff: ``unj`` (trec_eval 10's ``m_unjudged.c``, Soboroff 2023).

``unj_k`` is the number of documents among the top min(k, retrieved) that have no label for
the query (NONPOOL) or a negative one (UNJUDGED: in the pool, left unjudged), divided by k,
always k: trec_eval assumes the ranks past a short ranking are filled with judged non-relevant
documents, so a ranking of 2 unjudged documents has ``unj_10`` = 0.2. It is a "red flag"
measure: high values at small k say the collection's judgments do not cover the run. The
relevance level plays no part. Default cutoffs 5, 10, 20 (trec_eval's), names ``unj_5`` ...;
the summary is the mean.

trec_eval 9.0.8 (which pytrec_eval wraps) has no ``unj``. Verified against ir_measures'
``Judged@k`` (its judged provider) where the two meet, qrels without negative grades and
rankings without score ties: ``unj_k`` = min(k, retrieved) (1 - Judged@k) / k; and on
hand-computed cases (negative grades, k past the ranking, empty rankings, duplicates).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .declare import Family

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays

FAMILIES = (
    Family(
        "unj",
        "unjudged",
        "cutoff",
        (5, 10, 20),
        reads="cutoff",
        reads_rel=False,
        definition="Documents in the top k without a label or with a negative one, over k "
        "(always k: a short ranking is padded with judged documents); trec_eval "
        "10's unj.",
        aliases=(),
        verified="ir_measures 0.4 (Judged@k) and hand-computed cases",
    ),
)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    """Per ranking: ``unj_k``, k the measure's cutoff (``level`` is not read)."""
    k = int(measure.param)
    # NONPOOL (no label) or UNJUDGED (a negative one): the top min(k, n) less the judged there.
    judged = a.l_sum(mask=(a.l_rel >= 0) & (a.l_pos < k))
    return (np.minimum(a.r_ret, k) - judged).astype(float) / k
