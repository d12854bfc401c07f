"""Counts: ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret`` (trec_eval).

Per ranking: documents retrieved (after duplicates and ``-M``), labels of the query at or
above the relevance level, relevant documents retrieved, and retrieved documents judged
non-relevant (``0 <= grade < level``). trec_eval's summary of a count is its sum over queries.
Verified against pytrec_eval.
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
        "num_q",
        "counts",
        None,
        aggregate="count",
        kind="int",
        definition="Number of queries evaluated: 1 a query, summed (trec_eval prints only its 'all' value).",
        aliases=("NumQ",),
        reads_rel=False,
    ),
    Family(
        "num_ret",
        "counts",
        None,
        aggregate="sum",
        kind="int",
        definition="Number of documents retrieved (after -M); ir_measures' NumRet(rel=r) is num_rel_ret at level r.",
        aliases=("NumRet",),
        reads_rel=False,
    ),
    Family(
        "num_rel",
        "counts",
        None,
        aggregate="sum",
        kind="int",
        definition="Number of relevant documents judged (grade >= the relevance level).",
        aliases=("NumRel",),
    ),
    Family(
        "num_rel_ret",
        "counts",
        None,
        aggregate="sum",
        kind="int",
        definition="Number of relevant documents retrieved.",
        aliases=("NumRelRet",),
    ),
    Family(
        "num_nonrel_judged_ret",
        "counts",
        None,
        aggregate="sum",
        kind="int",
        definition="Number of retrieved documents judged non-relevant (0 <= grade < level).",
        aliases=(),
    ),
)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    if f == "num_q":  # each evaluated query counts once (pytrec_eval's and ir_measures' per-query 1)
        return np.ones(len(a.r_ret), dtype=float)
    if f == "num_ret":
        return a.r_ret.astype(float)
    if f == "num_rel":
        return a.num_rel(level).astype(float)
    if f == "num_rel_ret":
        return a.rel_ret(level).astype(float)
    if f == "num_nonrel_judged_ret":
        return a.l_sum(mask=(a.l_rel >= 0) & (a.l_rel < level)).astype(float)
    raise KeyError(f)
