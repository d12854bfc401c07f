"""trec_eval's parameters the base parser does not read: ``11pt_avg`` over other recall levels
(``11pt_avg..25,.5,.75``, named ``11pt_avg_0.25,0.5,0.75``), ``set_F`` with a beta other than 1
(``set_F.0.5``, ``set_F_0.5``), the gain maps of ``ndcg``, ``G``, ``ndcg_rel`` and ``Rndcg``
(``ndcg.1=3,2=9``, ``G.1=3``) and ``utility``'s coefficients (``utility.2,-1,-3,0.5``).

``set_F.b`` is the F-measure of the retrieved set with that beta (:mod:`.sets`), named
``set_F_0.5`` (several betas in one argument make one measure each, where trec_eval keeps the
first; the ``trec_eval`` command prints ``set_F_`` and the parameters as typed, as trec_eval
does, and keeps the first beta). ``ndcg.1=3,2=9`` is nDCG with grade 1 gaining
3 and grade 2 gaining 9 (a grade not listed gains itself), trec_eval's ``-m ndcg.<gains>``:
the same measure as ir_measures' ``nDCG(gains={1:3,2:9})`` (:mod:`.variants`), so named
``ndcg(gains={1:3,2:9})``. ``G.1=3``, ``ndcg_rel.1=3,2=9`` and ``Rndcg.0=1,1=3`` are those
measures with that gain map, named the same way, ``G(gains={1:3})``,
``ndcg_rel(gains={1:3,2:9})``, ``Rndcg(gains={0:1,1:3})``; their gains may be negative, as
trec_eval allows (:mod:`.gainmap` says what a map does and what is refused). The ``trec_eval``
command prints trec_eval's names, the family, ``_`` and the parameters as typed
(``G_1=3``). Verified against pytrec_eval (set_F) and against pytrec_eval on the
mapped qrels (gain maps: pytrec_eval 0.5 aborts on ``ndcg.1=3``), and by hand where mapping
the qrels is not the same thing.

``utility.p1,p2,p3,p4`` is set utility with those coefficients (:mod:`.gains`), exactly four,
as trec_eval requires. **Its name** is ``utility_`` and the four coefficients, comma
separated, each in its shortest exact form (Python's ``repr``) without a trailing ``.0``:
``utility.2.0,-1,-3,.5`` is ``utility_2,-1,-3,0.5``, and that name parses back to it. The
defaults ``1,-1,0,0`` are plain ``utility``. (The ``trec_eval`` command prints what trec_eval
prints: ``utility_`` and the parameters as typed.) ``ndcg_cut.1=3`` is refused with the reason:
trec_eval's ``ndcg_cut`` takes cutoffs only, its gains are the qrels' grades.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from . import gainmap
from .declare import RECALL_LEVELS, Measure, make
from .gains import UTILITY_DEFAULTS
from .variants import with_gains

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"

FAMILIES = ()  # parameters of families declared elsewhere (set_F, ndcg, G, utility, ...)


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """The measures of ``set_F.0.5``, ``set_F_2``, ``ndcg.1=3,2=9``, ``G.1=3``,
    ``utility.2,-1,-3,0.5``; None for other names (ValueError for ``ndcg_cut`` with a gain map,
    saying why)."""
    text = text.strip()
    m = re.fullmatch(r"11pt_avg[._](.+)", text)
    if m:
        return [recall_levels_average(m.group(1))]
    m = re.fullmatch(r"utility[._](.*)", text)
    if m:
        return [utility(m.group(1))]
    if re.fullmatch(r"ndcg_cut[._][^(]*=.*", text):  # not ndcg_cut_10(gains={...}): .variants
        pairs = ",".join(f"{k}:{v}" for k, v in re.findall(r"(-?\d+)=(\d+)", text)) or "1:3"
        raise ValueError(
            f"trec_eval's ndcg_cut takes cutoffs only, its gains are the qrels' "
            f"grades; for a gain map at a cutoff write nDCG(gains={{{pairs}}})@10 "
            f"(ir_measures' syntax), or ndcg.{pairs.replace(':', '=')} without one"
        )
    m = re.fullmatch(r"set_F[._]([0-9.,]+)", text)
    if m:
        out = []
        for beta in filter(None, m.group(1).split(",")):
            if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", beta):
                raise ValueError(f"set_F: beta must be a number >= 0, got {beta!r}")
            b = float(beta)
            out.append(Measure("set_F", b, None, name=f"set_F_{b:g}") if b != 1.0 else make("set_F", 1.0))
        return out
    m = re.fullmatch(r"(ndcg|ndcg_rel|Rndcg|G)\.(.*=.*)", text)
    if m:
        assert parse_measure is not None  # the registry hands its parser in
        return with_gains(parse_measure(m.group(1)), gainmap.parse(m.group(2), "="))
    return None


def recall_levels_average(params: str) -> Measure:
    """``11pt_avg`` over the recall levels ``params`` (``".25,.5,.75"``, trec_eval's
    ``-m 11pt_avg..25,.5,.75``; ``0.2,0.5,0.8`` is trec_eval 8's 3-point average): the mean
    interpolated precision at those levels, named ``11pt_avg_0.25,0.5,0.75`` (which parses
    back); trec_eval's eleven levels are plain ``11pt_avg``.

    Raises
    ------
    ValueError
        A level that is not a number within [0, 1], or none at all.
    """
    items = [p.strip() for p in params.split(",")]
    if not items or not all(re.fullmatch(_NUMBER, p) for p in items):
        raise ValueError(f"11pt_avg takes recall levels, comma separated numbers in [0, 1], got {params!r}")
    levels = tuple(float(p) for p in items)
    if not all(0.0 <= x <= 1.0 for x in levels):
        raise ValueError(f"11pt_avg's recall levels must be within [0, 1], got {params!r}")
    if levels == tuple(RECALL_LEVELS):
        return make("11pt_avg")
    return Measure("11pt_avg", levels, None, name="11pt_avg_" + ",".join(f"{x:g}" for x in levels))


def utility(params: str) -> Measure:
    """The ``utility`` measure of trec_eval's ``utility.<params>``: four coefficients.

    Parameters
    ----------
    params : str
        ``"p1,p2,p3,p4"``, numbers (``2``, ``-1``, ``0.5``, ``.5``, ``1e-3``).

    Returns
    -------
    Measure
        ``utility`` with those coefficients as its parameter, named ``utility_p1,p2,p3,p4``
        (see the module docstring); plain ``utility`` for trec_eval's defaults.

    Raises
    ------
    ValueError
        Not exactly four numbers (trec_eval refuses any other count).
    """
    items = [p.strip() for p in params.split(",")]
    if len(items) != 4 or not all(re.fullmatch(_NUMBER, p) for p in items):
        raise ValueError(
            f"utility takes exactly 4 numeric coefficients, utility.p1,p2,p3,p4 "
            f"(trec_eval's a, b, c, d weights), got {params!r}"
        )
    coef = tuple(float(p) + 0.0 for p in items)  # + 0.0: -0 is 0
    if not all(math.isfinite(c) for c in coef):
        raise ValueError(f"utility's coefficients must be finite numbers, got {params!r}")
    if coef == UTILITY_DEFAULTS:
        return make("utility")
    shown = ",".join(repr(c)[:-2] if repr(c).endswith(".0") else repr(c) for c in coef)
    return Measure("utility", coef, None, name=f"utility_{shown}")
