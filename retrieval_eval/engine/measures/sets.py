"""The retrieved set, order ignored: ``set_P``, ``set_recall``, ``set_relative_P``,
``set_map``, ``set_F``.

With ret the documents retrieved, relret the relevant ones among them and R the relevant
labels: set_P = relret / ret, set_recall = relret / R, set_relative_P = relret / min(ret, R),
set_map = set_P * set_recall, set_F = (1 + b) set_P set_recall / (b set_P + set_recall)
(0 when both are 0; trec_eval's b is the usual F-beta's beta**2). Each is 0 where its denominator
is 0. Verified against pytrec_eval.
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
        "set_P",
        "sets",
        None,
        definition="Precision of the retrieved set: relevant retrieved over retrieved.",
        aliases=("SetP",),
    ),
    Family(
        "set_recall",
        "sets",
        None,
        definition="Recall of the retrieved set: relevant retrieved over R.",
        aliases=("SetR",),
    ),
    Family(
        "set_relative_P", "sets", None, definition="Relevant retrieved over min(R, retrieved).", aliases=("SetRelP",)
    ),
    Family("set_map", "sets", None, definition="set_P * set_recall.", aliases=("SetAP",)),
    Family(
        "set_F",
        "sets",
        "beta",
        (1.0,),
        definition="F-measure of the retrieved set: (1 + b^2) P R / (b^2 P + R), beta 1.",
        aliases=("SetF",),
    ),
)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    f = measure.family
    relret = a.rel_ret(level).astype(float)
    ret = a.r_ret.astype(float)
    R = a.num_rel(level).astype(float)
    P, rec = _ratio(relret, ret), _ratio(relret, R)
    if f == "set_P":
        return P
    if f == "set_recall":
        return rec
    if f == "set_relative_P":
        return _ratio(relret, np.minimum(ret, R))
    if f == "set_map":
        return P * rec
    if f == "set_F":
        b = float(measure.param)  # trec_eval's beta weighs as F_beta's beta**2 does
        return _ratio((1.0 + b) * P * rec, b * P + rec)
    raise KeyError(f)
