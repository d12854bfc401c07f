"""Expected reciprocal rank, ``ERR@k``, as gdeval computes it (Chapelle et al. 2009).

The document at rank i stops the user with probability r_i = (2**g_i - 1) / 2**4, g_i its
grade (a missing label, a negative grade or 0: r = 0; gdeval's grade scale ends at 4, so a
higher grade is read as 4, where gdeval refuses the file); ERR@k = sum over i <= k of r_i / i *
prod over j < i of (1 - r_j). Unnormalized, as gdeval's. Verified against ir_measures' gdeval
provider (gdeval.pl, TREC 2010 Web track), whose 5 printed decimals the tests lift to 17.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .calls import split_call
from .declare import Family, make

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays

MAX_GRADE = 4  # gdeval's $MAX_JUDGMENT

FAMILIES = (
    Family(
        "ERR",
        "err",
        "cutoff",
        (10,),
        style="at",
        verified="ir_measures 0.4 (gdeval 1.2a)",
        definition="Expected reciprocal rank at k: sum r_i / i prod_{j<i} (1 - r_j), "
        "r = (2**grade - 1) / 16 (gdeval's scale 0..4).",
    ),
)


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """``ERR@k`` (or gdeval's nDCG, ``nDCG(dcg='exp-log2')@k``) as a measure, or None."""
    call = split_call(text)
    if call is not None and call[0] == "nDCG" and call[1].get("dcg") == "exp-log2":
        if set(call[1]) != {"dcg"} or call[2] is None:
            raise ValueError("nDCG(dcg='exp-log2') takes a cutoff only, as gdeval")
        return [make("ndcg_exp_cut", call[2])]  # the spec's nDCG is gdeval's
    if call is None or call[0] != "ERR":
        return None
    if call[1]:
        raise ValueError("ERR takes a cutoff only (ERR@10)")
    return [make("ERR", 10 if call[2] is None else call[2])]  # gdeval needs one: 10 by default


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    k = int(measure.param)
    g = np.clip(a.l_rel, 0, MAX_GRADE).astype(float)  # an unlabelled entry: r = 0, stay = 0
    r = (np.exp2(g) - 1.0) / 2.0**MAX_GRADE
    stay = np.log1p(-r)
    before = a.l_cumsum(stay) - stay  # log prod_{j<i} (1 - r_j)
    term = r / (a.l_pos + 1.0) * np.exp(before)
    return a.l_sum(weights=term, mask=a.l_pos < k)
