"""ranx's measures that trec_eval and ir_measures lack: ``f1@k``, ``dcg@k``, ``dcg_burges@k``,
and ranx's spelling of RBP, ``rbp.p`` (``rbp.8`` is ``RBP(p=0.8)``).

f1@k = 2 P@k R@k / (P@k + R@k) (0 when both are 0), P@k and R@k as trec_eval's ``P_k`` and
``recall_k`` (a grade >= the relevance level is relevant); dcg@k = sum over the top k of
grade_i / log2(i + 1) (Jarvelin and Kekalainen's linear gain), dcg_burges@k = sum over the top k
of (2**grade_i - 1) / log2(i + 1) (Burges et al.'s exponential gain), both unnormalized, an
unlabelled or negatively graded document gaining 0. Verified against ranx 0.3.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .calls import split_call
from .declare import Family, make

if TYPE_CHECKING:
    from .declare import Measure
    from .scan import Arrays

_V = "ranx 0.3"
FAMILIES = (
    # label f1: named f1@10; the family is f1_cut because ranx's plain f1 is the whole ranking's
    Family(
        "f1_cut",
        "ranx_names",
        "cutoff",
        (10,),
        style="at",
        verified=_V,
        aliases=("F1",),
        label="f1",
        definition="F1 at k: the harmonic mean of P@k and recall@k (ranx's f1 without k is set_F).",
    ),
    Family(
        "dcg",
        "ranx_names",
        "cutoff",
        (10,),
        style="at",
        verified=_V,
        aliases=("DCG",),
        definition="DCG at k, unnormalized, linear gain: sum grade / log2(rank + 1).",
    ),
    Family(
        "dcg_burges",
        "ranx_names",
        "cutoff",
        (10,),
        style="at",
        verified=_V,
        definition="DCG at k, unnormalized, exponential gain: sum (2**grade - 1) / log2(rank + 1).",
    ),
)


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """``f1@10``, ``dcg@10``, ``dcg_burges@10``, ``rbp.95`` as measures, or None. ranx's ``f1``
    without a cutoff is the F1 of the whole ranking (ranx's k = 0), trec_eval's ``set_F``."""
    m = re.fullmatch(r"rbp\.(\d+)", text.strip())
    if m:
        from .rbp import parse as rbp

        return rbp(f"RBP(p=0.{m.group(1)})")
    call = split_call(text)
    if call is None or call[0].lower() not in ("f1", "dcg", "dcg_burges") or call[1]:
        return None
    family = "f1_cut" if call[0].lower() == "f1" else call[0].lower()
    if call[2] is None:  # ranx's k = 0: the whole ranking (f1 is then trec_eval's set_F); dcg@10
        return [make("set_F", 1.0)] if family == "f1_cut" else [make(family, 10)]
    return [make(family, call[2])]


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    k = int(measure.param)
    top = a.l_pos < k  # unlabelled entries gain 0 and are not relevant
    if measure.family == "f1_cut":
        hits = a.l_sum(mask=top & (a.l_rel >= level)).astype(float)
        R = a.num_rel(level).astype(float)
        total = k + R  # 2 P R / (P + R) = 2 hits / (k + R)
        return np.where(hits > 0, 2.0 * hits / np.where(total > 0, total, 1.0), 0.0)
    g = np.where(a.l_rel > 0, a.l_rel, 0).astype(float)
    gain = g if measure.family == "dcg" else np.exp2(g) - 1.0
    return a.l_sum(weights=gain / np.log2(a.l_pos + 2.0), mask=top)
