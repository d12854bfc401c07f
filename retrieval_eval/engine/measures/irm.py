"""ir_measures' measure objects read as measure names (issue 28, item 4).

``ir_measures.nDCG@10`` is a value whose ``repr`` is its own parse string (``nDCG@10``), and the
registry reads ir_measures' spellings with ir_measures' meaning (``nDCG@10`` is trec_eval's
linear-gain ``ndcg_cut_10``, not this project's exponential-gain ``ndcg@10``). So an object is
taken as its parse string: the same number ir_measures computes, under no other definition.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["is_ir_measure", "measure_text", "same_look"]

_STEM = re.compile(r"[@(_.]")


def is_ir_measure(value: Any) -> bool:
    """Whether ``value`` is an ir_measures measure object (without importing ir_measures)."""
    return (type(value).__module__ or "").split(".", 1)[0] == "ir_measures" and hasattr(value, "NAME")


def measure_text(value: Any) -> str | None:
    """The parse string of an ir_measures measure object (``nDCG@10``, ``P(rel=2)@5``), else None.

    Parameters
    ----------
    value : object

    Returns
    -------
    str or None

    Examples
    --------
    >>> measure_text("nDCG@10") is None
    True
    """
    return str(value) if is_ir_measure(value) else None


def same_look(a: str, b: str) -> bool:
    """Two names whose stems (before ``@``, ``(``, ``_`` or ``.``) differ in case only
    (``nDCG@5`` and ``ndcg@1o``): in this catalogue such a pair can name two definitions
    (linear and exponential gain), so one is never offered for the other."""
    sa, sb = _STEM.split(a, 1)[0], _STEM.split(b, 1)[0]
    return sa != sb and sa.lower() == sb.lower()
