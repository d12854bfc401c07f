"""Rank-biased precision: ``RBP(p=...)`` and its residual ``RBP_residual(p=...)``.

RBP (Moffat & Zobel 2008) with persistence p: (1 - p) * sum over ranks i >= 1 of p**(i-1) *
g_i. Named with ``rel=`` (``RBP(rel=1,p=0.8)``, cwl_eval's) it is binary: g_i = 1 when the
document at rank i has a grade >= rel, else 0. Without (``RBP(p=0.8)``, ranx's ``rbp.8``) it is
graded, as ranx's and ir_measures' default: g_i = the grade when it is >= the caller's
relevance level, else 0. The sum runs over the whole ranking (no depth limit). The
residual is how much RBP could still grow if every unknown were relevant: (1 - p) * sum of
p**(i-1) over the retrieved documents without a label, plus p**n for the ranks past the n
retrieved (the bound for gains of at most 1). Verified against ranx (graded), ir_measures'
cwl_eval provider (binary) (the residual against cwl_eval's
best-case bound, which ir_measures computes but does not report); cwl_eval normalizes its
weights over its first 1000 ranks (dividing by 1 - p**1000), which this does not: the two agree
at 1e-9 while p**1000 is below 1e-12 (p <= 0.97).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .calls import fmt, number, split_call
from .declare import Family, Measure

if TYPE_CHECKING:
    from .scan import Arrays

FAMILIES = (
    Family(
        "RBP",
        "rbp",
        None,
        style="at",
        verified="ranx 0.3 (graded); ir_measures 0.4 (cwl_eval 1.0.12, binary)",
        definition="Rank-biased precision (1 - p) sum p**(i-1) g_i, p 0.8 by default; g the "
        "grade (graded), or 0/1 at rel= (binary, RBP(rel=1,p=0.8)).",
        aliases=("RBP(p=0.8)", "RBP(rel=1,p=0.8)", "rbp.8"),
    ),
    Family(
        "RBP_residual",
        "rbp",
        None,
        style="at",
        verified="cwl_eval 1.0.12 (its residual)",
        definition="RBP's residual: the weight of the unlabelled retrieved documents and "
        "of the ranks past the ranking, p**n.",
        aliases=("RBP_residual(p=0.8)",),
    ),
)


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """The measure ``text`` names (``RBP``, ``RBP(p=0.9)``, ``RBP(rel=2,p=0.9)``), or None."""
    call = split_call(text)
    if call is None or call[0] not in ("RBP", "RBP_residual"):
        return None
    base, args, cut = call
    if cut is not None or set(args) - {"p", "rel"}:
        raise ValueError(f"{base} takes p= and rel= only (no cutoff)")
    p = number(args.get("p", "0.8"), "p", 0.0, 1.0)
    if p >= 1.0:
        raise ValueError("p must be below 1")
    rel = number(args["rel"], "rel", 1, 1e9, integer=True) if "rel" in args else None
    head = "" if rel is None else f"rel={rel},"
    return [Measure(base, p, rel, name=f"{base}({head}p={fmt(p)})")]


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    p = float(measure.param)
    weight = (1.0 - p) * p ** a.l_pos.astype(float)
    if measure.family == "RBP":
        gain = np.where(a.l_rel >= level, a.l_rel, 0) if measure.rel is None else 1
        return a.l_sum(weights=weight * gain, mask=a.l_rel >= level)
    # The unlabelled entries' weight (1 - p**n of the ranking's, less the labelled ones') plus
    # the ranks past the ranking (p**n): all but the labelled entries' weight.
    return 1.0 - a.l_sum(weights=weight)
