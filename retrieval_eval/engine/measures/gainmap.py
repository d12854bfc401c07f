"""Gain maps, read and applied in one place: trec_eval's ``rel_level=gain`` parameters
(``ndcg.1=3,2=9``, ``G.1=3``, ``ndcg_rel.1=3,2=9``, ``Rndcg.0=1,1=3``) and ir_measures'
``gains={1:3,2:9}``.

What trec_eval 9.0.8 does (``gain_init.c``: ``setup_gains``, ``get_gain``, ``comp_rel_gain``,
shared by ``m_ndcg.c``, ``m_G.c``, ``m_ndcg_rel.c`` and ``m_Rndcg.c``):

* A judged grade gains what the map gives it; a grade the map leaves out gains itself
  (``gain = (double) i``). A retrieved document outside the qrels, or judged with a negative
  grade, gains 0: its relevance is ``RELVALUE_NONPOOL`` (-1) or ``RELVALUE_UNJUDGED`` (-2),
  which no grade matches (``get_gain`` returns 0).
* The ideal ranking is the query's judged documents (grade >= 0) sorted by the gain of their
  grade, best first (the grades are sorted by gain and walked from the top), and it **ends at
  the first gain <= 0**: a grade mapped to 0 or below never enters it. Two grades with one gain
  make one block of it.
* A gain may be 0 or negative ("Gains are allowed to be 0 or negative"): a negative gain
  counts where such a document is retrieved (``results_gain != 0`` adds it) and never in the
  ideal.
* A map entry for a grade the query does not have changes nothing.

Here a grade is an integer >= 0 and a gain a number, decimal or not (trec_eval reads it with
``atof``: ``ndcg.1=3,2=9,4=4.5``). The ideal ranking sorts the grades by their exact gain, best
first. trec_eval's ``comp_rel_gain`` returns the difference of two gains cast to an int, so
two gains less than 1 apart (4 and 4.5) compare equal to its ``qsort`` and their grades'
order in its ideal ranking is not defined: where a query has documents of both, the exact
order here is the ideal one, and trec_eval's value may be lower. Refused, with the reason: a
grade given twice
(``get_gain`` then reads the smaller gain, the ideal the first one typed); a negative grade
(trec_eval gives its gain to documents outside the qrels, -1, or judged negative, -2, not to a
grade). The relevance level (``-l``) plays no part in a gain: which measure reads it, and how,
is said where each measure is computed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from .declare import MAX_PARAM

if TYPE_CHECKING:
    from .scan import Arrays

#: A gain map: ``((grade, gain), ...)``, sorted by grade (what :func:`parse` returns); a gain is
#: an int, or a float where it is not a whole number (``4.5``).
GainTable = tuple[tuple[int, int | float], ...]
#: A gain as typed: an integer or a decimal (``4.5``, ``.5``, ``-2.``).
_GAIN_RE = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)")

#: What a gain map is, for the parameter column of :func:`.registry.measures`.
OPTION = "gains: grade=gain,... (default: gain = grade)"
#: The oracles of the families that read a gain map (tests/engine/test_catalogue_gain_maps.py).
VERIFIED = "pytrec_eval (trec_eval 9.0.8); gain maps: on mapped qrels, and by hand"
#: The families whose own code reads a gain map (trec_eval's G, ndcg_rel and Rndcg); nDCG's
#: gains are ir_measures' variant (:mod:`.variants`), which maps the grades first.
READ_BY = ("G", "ndcg_rel", "Rndcg")


def parse(text: str, sep: str) -> GainTable:
    """The gain map of ``"1=3,2=9"`` (``sep="="``, trec_eval's) or ``"1:3,2:9"`` (``sep=":"``).

    Parameters
    ----------
    text : str
        Comma-separated ``grade<sep>gain`` pairs.
    sep : str
        ``"="`` or ``":"``.

    Returns
    -------
    tuple
        ``((grade, gain), ...)`` sorted by grade: a value (hashable, and one spelling per map).

    Raises
    ------
    ValueError
        A pair that is not an integer grade >= 0 and a number (either up to ``MAX_PARAM`` in size),
        or a grade given twice (see the module
        docstring for why). With ``sep="="`` an empty pair too (``1=3,``), as trec_eval's
        ``get_param_pairs`` refuses it.
    """
    table: dict[int, int | float] = {}
    for item in (t.strip() for t in text.split(",")):
        if not item and sep == ":":
            continue  # a Python dict's spelling: {1:3,} and {} are fine (trec_eval's pairs are not)
        grade, found, gain = (s.strip() for s in item.partition(sep))
        if not found or not re.fullmatch(r"\d+", grade) or not _GAIN_RE.fullmatch(gain):
            raise ValueError(
                f"a gain map is grade{sep}gain pairs, comma separated (an integer grade "
                f">= 0, a number gain): got {item!r}"
            )
        value = float(gain)
        if max(int(grade), abs(value)) > MAX_PARAM:
            raise ValueError(f"a gain map's grades and gains are integers up to {MAX_PARAM:,} in size: got {item!r}")
        if int(grade) in table:
            raise ValueError(
                f"grade {int(grade)} is given two gains in {text!r} (trec_eval would "
                "use one in the ranking and the other in the ideal)"
            )
        table[int(grade)] = int(value) if value.is_integer() else value  # 4.0 is the map's 4
    return tuple(sorted(table.items()))


def decimal(table: GainTable) -> bool:
    """Whether a gain of ``table`` is not a whole number (``4.5``)."""
    return any(isinstance(gain, float) for _, gain in table)


def shown(table: GainTable) -> str:
    """``{1:3,2:9}``: how a map shows in a canonical name (and parses back, ``sep=":"``)."""
    return "{" + ",".join(f"{grade}:{gain}" for grade, gain in table) + "}"


def grade_gains(table: GainTable, n_grades: int) -> np.ndarray:
    """Per grade 0 .. ``n_grades`` - 1, its gain: the map's, or the grade itself (int64; float64
    when a gain is decimal)."""
    gain = np.arange(n_grades, dtype=np.float64 if decimal(table) else np.int64)
    for grade, value in table:  # the map's few pairs, not the data
        if grade < n_grades:
            gain[grade] = value
    return gain


def apply(a: Arrays, table: GainTable) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The gains of arrays ``a`` (:class:`.scan.Arrays`) under ``table`` (empty: gain = grade).

    Returns
    -------
    tuple
        ``(gain, ideal)``: per labelled entry the gain of its grade as floats (0 for a
        negative grade), and per query the ideal list, its judged labels with a positive gain
        sorted best first, as ``(query, position, gain)`` (see the module docstring).
    """
    gain_of = grade_gains(table, a.q_levels.shape[1])
    gain = np.where(a.l_rel >= 0, gain_of[np.maximum(a.l_rel, 0)], 0).astype(float)
    iq, ipos, igain = a.ideal if not table else a.ideal_by(gain_of)
    keep = igain > 0  # the top of each query's list: its positions stay 0, 1, ...
    return gain, (iq[keep], ipos[keep], igain[keep].astype(float))
