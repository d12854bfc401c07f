"""``relstring``: the grades of the top k retrieved documents as a string (trec_eval's
``m_relstring.c``, in its ``all_trec`` since 9.0; pytrec_eval does not report it).

One character per document of the top min(k, retrieved), k = 10 unless given
(``relstring.20``): its grade when 0-9, ``>`` above 9, ``-`` for a document without a label
(not in the pool), ``.`` for one with a negative grade (in the pool, not judged). A value per
query, a string: it has no summary (trec_eval prints it for each query only). Its column in
:func:`.compute` is a string column. Verified against trec_eval 10.0's test outputs
(``out.test.aq``, ``out.test.aqc``) and hand-computed cases.
"""

from __future__ import annotations

import numpy as np

from .declare import Family, Measure
from .scan import NONPOOL, Arrays

FAMILIES = (
    Family(
        "relstring",
        "relstring",
        "cutoff",
        (10,),
        reads="cutoff",
        aggregate="none",
        kind="str",
        verified="trec_eval 10.0's test outputs; hand-computed cases",
        definition="The grades of the top k documents as a string: 0-9, '>' above 9, '-' "
        "unlabelled, '.' a negative grade; per query only.",
    ),
)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    """Per ranking: the relstring of its top k (an object array of str; ``level`` not read)."""
    k = int(measure.param)
    top = a.e_pos < k
    rel, rk = a.e_rel[top], a.e_rk[top]
    chars = np.where(
        rel > 9,
        ord(">"),
        np.where(rel >= 0, ord("0") + np.clip(rel, 0, 9), np.where(rel == NONPOOL, ord("-"), ord("."))),
    )
    text = chars.astype(np.uint8).tobytes().decode("ascii")
    ends = np.cumsum(np.bincount(rk, minlength=a.n))
    starts = ends - np.bincount(rk, minlength=a.n)
    return np.array([text[s:e] for s, e in zip(starts.tolist(), ends.tolist())], dtype=object)
