"""ir_measures' variants of a measure: ``judged_only=True`` and nDCG's ``gains={...}``.

* ``judged_only=True`` (trec_eval's ``-J``): the documents without a label (or with a negative
  grade: pool documents left unjudged) are taken out of each ranking before the measure is
  computed, the ones below moving up. ir_measures allows it on ``P``, ``RR``, ``Rprec``, ``AP``,
  ``nDCG``, ``R``, ``SetAP``, ``SetF``, ``SetP``, ``Success`` and ``IPrec``; so does this.
  Named ``<measure>(judged_only=True)``.
* ``gains={grade: gain, ...}`` (nDCG, as in ir_measures): each judged grade counts as the
  gain it maps to (numbers >= 0; a grade left out keeps its own), in the ranking and in the
  ideal. Named ``<measure>(gains={0:0,1:1,2:5})``: ``ndcg(gains={1:3,2:9})`` (trec_eval's
  ``ndcg.1=3,2=9`` too), ``ndcg_cut_10(gains={1:3})``, and those names parse back.
  The same syntax sets the gain map of trec_eval's ``G``, ``ndcg_rel`` and ``Rndcg``
  (``G(gains={1:3})``, trec_eval's ``G.1=3``), which their own code reads (:mod:`.gainmap`:
  there a gain may be negative, as in trec_eval); :func:`with_gains` is where a map meets a
  measure, whichever spelling it came in.

Verified against ir_measures' pytrec_eval provider (which maps the qrels and passes ``-J``).
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from . import gainmap
from .declare import Family, Measure

if TYPE_CHECKING:
    from .gainmap import GainTable
    from .scan import Arrays

_JUDGED_BASES = {"P", "RR", "Rprec", "AP", "nDCG", "R", "SetAP", "SetF", "SetP", "Success", "IPrec"}
_V = "ir_measures 0.4 (pytrec_eval provider)"
FAMILIES = (
    Family(
        "judged_only",
        "variants",
        None,
        verified=_V,
        aliases=("nDCG(judged_only=True)@10", "P(judged_only=True)@10"),
        definition="Any of P, RR, Rprec, AP, nDCG, R, SetAP, SetF, SetP, Success, IPrec over "
        "the ranking without its unlabelled documents (trec_eval -J).",
    ),
    Family(
        "gains",
        "variants",
        None,
        verified=_V,
        aliases=("nDCG(gains={0:0,1:1,2:3})@10",),
        definition="nDCG with each grade counting as the gain it maps to.",
    ),
)


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """``nDCG(judged_only=True)@10``, ``nDCG(gains={0:0,1:1,2:5})``, ..., or None."""
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*)\((.*)\)(@\S+)?", text.strip())
    if m is None or not re.search(r"\b(judged_only|gains)\s*=", m.group(2)):
        return None
    base, args, cut = m.group(1), m.group(2), m.group(3) or ""
    gains = re.search(r"gains\s*=\s*\{([^}]*)\}", args)
    judged = re.search(r"judged_only\s*=\s*([^,]*)", args)
    if gains is None and re.search(r"\bgains\s*=", args):
        raise ValueError("gains= takes a map of grades to gains, e.g. gains={0:0,1:1,2:3}")
    rest = args
    for found in (gains, judged):
        if found:
            rest = rest.replace(found.group(0), "")
    rest = ",".join(a for a in (x.strip() for x in rest.split(",")) if a)
    if judged and judged.group(1).strip() not in ("True", "False"):
        raise ValueError(f"judged_only must be True or False, got {judged.group(1).strip()!r}")
    assert parse_measure is not None  # the registry hands its parser in
    inner = parse_measure(f"{base}({rest}){cut}" if rest else f"{base}{cut}")
    if judged and judged.group(1).strip() == "True":
        if base not in _JUDGED_BASES or gains:
            raise ValueError(f"judged_only applies to {', '.join(sorted(_JUDGED_BASES))} (without gains)")
        return [Measure("judged_only", m_, None, name=f"{m_.name}(judged_only=True)") for m_ in inner]
    if not gains:
        return inner  # judged_only=False: the measure itself
    return with_gains(inner, gainmap.parse(gains.group(1), ":"))


def with_gains(measures: Iterable[Measure], table: GainTable) -> list[Measure]:
    """``measures`` with the gain map ``table`` (:func:`.gainmap.parse`).

    Parameters
    ----------
    measures : list of Measure
        trec_eval's ``G``, ``ndcg_rel``, ``Rndcg`` (their ``param`` becomes the map: their
        own code reads it), or nDCG (``ndcg``, ``ndcg_cut_k``: the ``gains`` variant, which
        maps the grades, as ir_measures does).
    table : tuple
        ``((grade, gain), ...)``.

    Returns
    -------
    list of Measure
        Named ``<name>(gains={1:3,2:9})`` (``Rndcg(rel=2,gains={1:3})`` with a level), a name
        that parses back to the same measure.

    Raises
    ------
    ValueError
        Another measure (ir_measures has gains on nDCG only), or a negative gain on nDCG
        (ir_measures' provider would read such a mapped grade as unjudged).
    """
    if not table:
        return list(measures)  # gains={}: the measures themselves
    out = []
    for m in measures:
        if m.family in gainmap.READ_BY:
            args = ([f"rel={m.rel}"] if m.rel is not None else []) + [f"gains={gainmap.shown(table)}"]
            out.append(Measure(m.family, table, m.rel, name=f"{m.family}({','.join(args)})"))
        elif m.family in ("ndcg", "ndcg_cut"):
            if any(gain < 0 for _, gain in table):
                raise ValueError(
                    f"nDCG's gains are numbers >= 0 (ir_measures maps the grades to them), got {gainmap.shown(table)}"
                )
            out.append(Measure("gains", (m, table), None, name=f"{m.name}(gains={gainmap.shown(table)})"))
        else:
            raise ValueError(
                f"gains= applies to nDCG only among ir_measures' measures (linear "
                f"gain), and to trec_eval's {', '.join(gainmap.READ_BY)}; not {m.name}"
            )
    return out


def judged_arrays(a: Arrays) -> Arrays:
    """``a`` without its unjudged entries, the ones below each moving up (trec_eval's ``-J``; the
    ``judged_only`` variant and ``compute(judged_only=True)``)."""
    keep = a.l_rel >= 0  # neither NONPOOL nor UNJUDGED (a negative grade), as trec_eval -J
    l_rk = a.l_rk[keep]
    r_ret = np.bincount(l_rk, minlength=a.n).astype(np.int64)
    start = np.cumsum(r_ret) - r_ret
    l_pos = np.arange(len(l_rk), dtype=np.int64) - start[l_rk]  # every entry left is labelled
    return dataclasses.replace(a, l_rk=l_rk, l_pos=l_pos, l_rel=a.l_rel[keep], r_ret=r_ret)


def _mapped(a: Arrays, table: GainTable) -> Arrays:
    """``a`` with each judged grade replaced by its gain (gains >= 0: :func:`with_gains`)."""
    ng = a.q_levels.shape[1]
    lookup = gainmap.grade_gains(table, ng)
    levels = np.zeros((a.q_levels.shape[0], int(lookup.max()) + 1 if ng else 1), dtype=np.int64)
    for g in range(ng):  # one column per grade, not per query
        levels[:, lookup[g]] += a.q_levels[:, g]
    l_rel = np.where(a.l_rel >= 0, lookup[np.clip(a.l_rel, 0, ng - 1)], a.l_rel)
    return dataclasses.replace(a, l_rel=l_rel, q_levels=levels)


def _ndcg_decimal(inner: Measure, a: Arrays, table: GainTable) -> np.ndarray:
    """nDCG (``ndcg`` or ``ndcg_cut_k``) with a gain map that has a decimal gain
    (``ndcg.1=3,2=9,4=4.5``), from the gains themselves: a decimal gain is no grade that
    :func:`_mapped` could relabel with. trec_eval's ``m_ndcg.c`` / ``m_ndcg_cut.c``: DCG over the
    ranking (log2 discount), over the ideal list of :func:`.gainmap.apply`; 0 without an ideal."""
    gain, (iq, ipos, igain) = gainmap.apply(a, table)
    disc = gain / np.log2(a.l_pos + 2.0)
    idisc = igain / np.log2(ipos + 2.0)
    k = int(inner.param) if inner.family == "ndcg_cut" else None  # ndcg: every position
    keep = a.l_pos < k if k is not None else np.ones(len(a.l_pos), dtype=bool)
    ikeep = ipos < k if k is not None else np.ones(len(ipos), dtype=bool)
    dcg = np.bincount(a.l_rk[keep], weights=disc[keep], minlength=a.n)
    idcg = np.bincount(iq[ikeep], weights=idisc[ikeep], minlength=len(a.queries))[a.r_query]
    return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    if measure.family == "judged_only":
        inner, b = measure.param, judged_arrays(a)
    elif gainmap.decimal(measure.param[1]):
        return _ndcg_decimal(measure.param[0], a, measure.param[1])
    else:
        inner, b = measure.param[0], _mapped(a, measure.param[1])
    module = importlib.import_module(f".{inner.spec.module}", __package__)
    return module.compute(inner, b, inner.rel if inner.rel is not None else level)
