"""trec_eval 10.0's rank-biased precision: ``rbp`` and ``rbp_resid`` (``m_rbp.c``,
``m_rbp_resid.c``, Soboroff 2016), as trec_eval computes them.

``rbp`` = (1 - p) sum over retrieved ranks i >= 0 of p**i g_i, p = 0.9 unless given
(``rbp.p=0.95``). The gain g of a document is its grade (trec_eval's ``setup_gains``: a grade's
gain is the grade itself), 0 for a document without a label or with a negative grade; the
relevance level (``-l``) plays no part. When a query's gains do not all lie within [0, 1] (a
grade above 1), trec_eval rescales them to [0, 1]: g / (highest grade of the query's labels).
(trec_eval's C starts the running minimum of that rescaling uninitialized; its own test output
is reproduced with the minimum 0, the lowest grade, which is what a zeroed start gives.)

``rbp_resid`` is how much ``rbp`` could still rise if every retrieved document without a
judgment (no label, or a negative grade) had gain 1: p**n + (1 - p) sum of p**i over those
documents, n the number retrieved; 0 when every retrieved document is judged (trec_eval then
leaves its value unset). This differs from ir_measures' ``RBP_residual`` (:mod:`.rbp`), which
always counts the ranks past the ranking.

These are not ir_measures' or ranx's RBP (:mod:`.rbp`: p = 0.8, gains the grade, no
rescaling). Verified against trec_eval 10.0's own test outputs (``test/out.test.a``,
``out.test.aq``, ``out.test.aql``) and hand-computed cases. Not in trec_eval 9.0.8.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .calls import fmt, number
from .declare import Family, Measure
from .scan import Arrays

VERIFIED = "trec_eval 10.0's test outputs; hand-computed cases"
FAMILIES = (
    Family(
        "rbp",
        "trec_rbp",
        None,
        verified=VERIFIED,
        definition="trec_eval 10's rank-biased precision: (1 - p) sum p**i g_i, p 0.9; g the "
        "grade, rescaled to [0, 1] by the query's highest grade when above 1.",
        optional="p= (default 0.9)",
    ),
    Family(
        "rbp_resid",
        "trec_rbp",
        None,
        verified=VERIFIED,
        definition="trec_eval 10's RBP residual: p**n plus (1 - p) sum p**i over retrieved "
        "documents without a judgment; 0 when all are judged.",
        optional="p= (default 0.9)",
    ),
)
DEFAULT_P = 0.9


def parse(text: str, parse_measure: Any = None) -> list[Measure] | None:
    """``rbp``, ``rbp.p=0.95``, ``rbp(p=0.95)`` (and ``rbp_resid`` likewise) as measures, or None."""
    m = re.fullmatch(r"(rbp|rbp_resid)(?:\.p=([^,]*)|\(p=([^)]*)\))?", text.strip())
    if m is None:
        return None
    base, dotted, called = m.groups()
    given = dotted if dotted is not None else called
    p = DEFAULT_P if given is None else number(given, "p", 0.0, 1.0)
    if p >= 1.0:
        raise ValueError(f"{base}: p must be below 1")
    name = base if p == DEFAULT_P else f"{base}(p={fmt(p)})"
    return [Measure(base, p, None, name=name)]


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    """Per ranking: trec_eval 10's ``rbp`` or ``rbp_resid`` (``level`` is not read)."""
    p = DEFAULT_P if measure.param is None else float(measure.param)
    weight = p ** a.l_pos.astype(float)
    if measure.family == "rbp":
        levels = a.q_levels  # per query, label counts by grade 0 .. max
        top = np.where(levels.any(axis=1), levels.shape[1] - 1 - np.argmax(levels[:, ::-1] > 0, axis=1), 0)
        scale = np.where(top > 1, top, 1).astype(float)[a.r_query]
        gain = np.maximum(a.l_rel, 0) / scale[a.l_rk]
        return (1.0 - p) * a.l_sum(weights=weight * gain)
    judged = a.l_rel >= 0
    n = a.r_ret.astype(float)
    # Every retrieved rank's weight, less the judged ones': the unjudged ones' weight.
    everything = (1.0 - p**n) / (1.0 - p)
    unjudged = everything - a.l_sum(weights=weight, mask=judged)
    count = a.r_ret - a.l_sum(mask=judged)
    return np.where(count > 0, p**n + (1.0 - p) * unjudged, 0.0)
