"""Judgment coverage: ``Judged@k`` (ir_measures').

The share of the top k retrieved documents that have a label for the query (any grade), over
k, or over the ranking's length when it is shorter than k. (This project's ``judged@k`` divides
by k always; the two differ only for a ranking shorter than k.) Verified against ir_measures'
``judged`` provider, on rankings without score ties at the cut: ir_measures breaks ties by
doc id ascending, trec_eval (and this catalogue) descending.
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
        "Judged",
        "judged",
        "cutoff",
        (10,),
        reads="cutoff",
        style="at",
        definition="Share of the top k retrieved (k, or fewer when the ranking is shorter) that "
        "has a label for the query (ir_measures' Judged@k).",
        aliases=("Judged",),
        verified="ir_measures 0.4 (its judged provider)",
        reads_rel=False,
    ),
)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    k = int(measure.param)
    judged = a.l_sum(mask=a.l_pos < k).astype(float)  # a labelled entry, of any grade
    shown = np.minimum(a.r_ret, k).astype(float)
    return np.where(shown > 0, judged / np.where(shown > 0, shown, 1.0), 0.0)
