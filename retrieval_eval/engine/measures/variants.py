"""ir_measures' variants of a measure: ``judged_only=True`` and nDCG's ``gains={...}``.

* ``judged_only=True`` (trec_eval's ``-J``): the documents without a label (or with a negative
  grade: pool documents left unjudged) are taken out of each ranking before the measure is computed, the ones below moving up. ir_measures allows
  it on ``P``, ``RR``, ``Rprec``, ``AP``, ``nDCG``, ``R``, ``SetAP``, ``SetF``, ``SetP``,
  ``Success`` and ``IPrec``; so does this. Named ``<measure>(judged_only=True)``.
* ``gains={grade: gain, ...}`` (nDCG only, as in ir_measures): each judged grade counts as the
  gain it maps to (integers >= 0; a grade left out keeps its own), in the ranking and in the
  ideal. Named ``<measure>(gains={0:0,1:1,2:5})``.

Verified against ir_measures' pytrec_eval provider (which maps the qrels and passes ``-J``).
"""

from __future__ import annotations

import dataclasses
import importlib
import re

import numpy as np

from .declare import MAX_PARAM, Family, Measure

_JUDGED_BASES = {"P", "RR", "Rprec", "AP", "nDCG", "R", "SetAP", "SetF", "SetP", "Success", "IPrec"}
_V = "ir_measures 0.4 (pytrec_eval provider)"
FAMILIES = (
    Family("judged_only", "variants", None, verified=_V,
           aliases=("nDCG(judged_only=True)@10", "P(judged_only=True)@10"),
           definition="Any of P, RR, Rprec, AP, nDCG, R, SetAP, SetF, SetP, Success, IPrec over "
                      "the ranking without its unlabelled documents (trec_eval -J)."),
    Family("gains", "variants", None, verified=_V, aliases=("nDCG(gains={0:0,1:1,2:3})@10",),
           definition="nDCG with each grade counting as the gain it maps to."),
)


def parse(text: str, parse_measure=None):
    """``nDCG(judged_only=True)@10``, ``nDCG(gains={0:0,1:1,2:5})``, ..., or None."""
    m = re.fullmatch(r"([A-Za-z]+)\((.*)\)(@\S+)?", text.strip())
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
    inner = parse_measure(f"{base}({rest}){cut}" if rest else f"{base}{cut}")
    if judged and judged.group(1).strip() == "True":
        if base not in _JUDGED_BASES or gains:
            raise ValueError(f"judged_only applies to {', '.join(sorted(_JUDGED_BASES))} "
                             "(without gains)")
        return [Measure("judged_only", m_, None, name=f"{m_.name}(judged_only=True)")
                for m_ in inner]
    if not gains:
        return inner  # judged_only=False: the measure itself
    if base != "nDCG":
        raise ValueError("gains= applies to nDCG only, as in ir_measures")
    table = _gain_map(gains.group(1))
    shown = ",".join(f"{k}:{v}" for k, v in table)
    return [Measure("gains", (m_, table), None, name=f"{m_.name}(gains={{{shown}}})") for m_ in inner]


def _gain_map(text: str) -> tuple:
    pairs = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        k, colon, v = item.partition(":")
        if not colon or not re.fullmatch(r"\d+", k.strip()) or not re.fullmatch(r"\d+", v.strip()):
            raise ValueError(f"gains maps grades to gains, integers >= 0: got {item!r}")
        if max(int(k), int(v)) > MAX_PARAM:
            raise ValueError(f"gains maps grades to gains, integers >= 0 up to {MAX_PARAM:,}: got {item!r}")
        pairs.append((int(k), int(v)))
    return tuple(sorted(dict(pairs).items()))


def _judged_only(a):
    """``a`` without its unjudged entries, the ones below each moving up."""
    keep = a.l_rel >= 0  # neither NONPOOL nor UNJUDGED (a negative grade), as trec_eval -J
    l_rk = a.l_rk[keep]
    r_ret = np.bincount(l_rk, minlength=a.n).astype(np.int64)
    start = np.cumsum(r_ret) - r_ret
    l_pos = np.arange(len(l_rk), dtype=np.int64) - start[l_rk]  # every entry left is labelled
    return dataclasses.replace(a, l_rk=l_rk, l_pos=l_pos, l_rel=a.l_rel[keep], r_ret=r_ret)


def _mapped(a, table):
    """``a`` with each judged grade replaced by its gain."""
    ng = a.q_levels.shape[1]
    lookup = np.arange(ng, dtype=np.int64)
    for k, v in table:
        if k < ng:
            lookup[k] = v
    levels = np.zeros((a.q_levels.shape[0], int(lookup.max()) + 1 if ng else 1), dtype=np.int64)
    for g in range(ng):  # one column per grade, not per query
        levels[:, lookup[g]] += a.q_levels[:, g]
    l_rel = np.where(a.l_rel >= 0, lookup[np.clip(a.l_rel, 0, ng - 1)], a.l_rel)
    return dataclasses.replace(a, l_rel=l_rel, q_levels=levels)


def compute(measure, a, level: int) -> np.ndarray:
    if measure.family == "judged_only":
        inner, b = measure.param, _judged_only(a)
    else:
        inner, b = measure.param[0], _mapped(a, measure.param[1])
    module = importlib.import_module(f".{inner.spec.module}", __package__)
    return module.compute(inner, b, inner.rel if inner.rel is not None else level)
