"""The C/W/L measures of cwl_eval: ``SDCG@k``, ``INST``, ``NERR8@k``, ``NERR9@k``, ``NERR10``,
``NERR11`` (ir_measures' names, each with ``min_rel`` / ``max_rel``).

C/W/L (Moffat et al.; Azzopardi, Thomas & Moffat 2019): a user examines rank 1, then goes on
from rank i to i + 1 with probability C(i); the weight of rank i is W(i) = prod_{j<i} C(j),
normalized to sum 1 over the first 1000 ranks (cwl_eval's depth), and the measure is the
expected gain sum W(i) g_i. Gains are grades scaled to [0, 1]: g = (clip(grade, min_rel,
max_rel) - min_rel) / (max_rel - min_rel), a negative grade read as 0 and an unlabelled document
gaining 0; ranks past the ranking gain 0. C(i), i the 1-based rank, G_i the gain up to i:

* ``SDCG@k``: log2(i + 1) / log2(i + 2) before k, 0 from k (scaled DCG: DCG@k over the DCG@k
  of k fully relevant documents);
* ``INST(T)``: ((i + T + T_i - 1) / (i + T + T_i))**2, T_i = T - G_i;
* ``NERR8@k``: 1 - g_i before k; ``NERR9@k``: i / (i + 1) (1 - g_i) before k;
* ``NERR10(p)``: p (1 - g_i); ``NERR11(T)``: ((i + 2T - 1) / (i + 2T))**2 (1 - g_i).

Without ``max_rel`` (which ir_measures requires) it is the top grade of the judgments; without
a cutoff, ``SDCG``, ``NERR8`` and ``NERR9`` take 10. Verified against ir_measures' cwl_eval
provider (cwl_eval 1.0.12).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .calls import fmt, number, split_call
from .declare import Family, Measure

if TYPE_CHECKING:
    from .scan import Arrays

DEPTH = 1000  # cwl_eval's ranking depth (RankingMaker max_n)
_CHUNK = 1 << 21  # cells of the dense (ranking, rank) block computed at once

_V = "ir_measures 0.4 (cwl_eval 1.0.12)"
FAMILIES = (
    Family(
        "SDCG",
        "cwl",
        None,
        verified=_V,
        aliases=("SDCG(max_rel=1)@10",),
        definition="Scaled DCG at k: DCG@k of gains scaled to [0, 1] by min_rel/max_rel, "
        "over the DCG@k of k fully relevant documents.",
    ),
    Family(
        "INST",
        "cwl",
        None,
        verified=_V,
        aliases=("INST(max_rel=1)",),
        definition="INST (Moffat et al. 2015): C/W/L with C(i) = ((i+T+T_i-1)/(i+T+T_i))^2, "
        "T_i = T - gain so far; parameters T (1), min_rel (0), max_rel.",
    ),
    Family(
        "NERR8",
        "cwl",
        None,
        verified=_V,
        aliases=("NERR8(max_rel=1)@10",),
        definition="Not-but-nearly ERR, eq. 8: C(i) = 1 - g_i, truncated at k.",
    ),
    Family(
        "NERR9",
        "cwl",
        None,
        verified=_V,
        aliases=("NERR9(max_rel=1)@10",),
        definition="Not-but-nearly ERR, eq. 9: C(i) = i/(i+1) (1 - g_i), truncated at k.",
    ),
    Family(
        "NERR10",
        "cwl",
        None,
        verified=_V,
        aliases=("NERR10(max_rel=1)",),
        definition="Not-but-nearly ERR, eq. 10: C(i) = p (1 - g_i), p 0.9 by default.",
    ),
    Family(
        "NERR11",
        "cwl",
        None,
        verified=_V,
        aliases=("NERR11(max_rel=1)",),
        definition="Not-but-nearly ERR, eq. 11: C(i) = ((i+2T-1)/(i+2T))^2 (1 - g_i).",
    ),
)
#: Per family: its parameter other than min_rel/max_rel (None: a cutoff) and its default.
_PARAM = {
    "SDCG": ("cutoff", None),
    "NERR8": ("cutoff", None),
    "NERR9": ("cutoff", None),
    "INST": ("T", 1.0),
    "NERR10": ("p", 0.9),
    "NERR11": ("T", 1.0),
}


def parse(text: str, parse_measure: Callable[[str], list[Measure]] | None = None) -> list[Measure] | None:
    """``SDCG(max_rel=3)@10``, ``INST(T=2,max_rel=3)``, ``NERR10(p=0.8,max_rel=3)`` ..., or None."""
    call = split_call(text)
    if call is None or call[0] not in _PARAM:
        return None
    base, args, cut = call
    key, default = _PARAM[base]
    allowed = {"min_rel", "max_rel"} | ({key} if key != "cutoff" else set())
    if set(args) - allowed:
        raise ValueError(f"{base} takes {', '.join(sorted(allowed))}" + (" and a cutoff" if key == "cutoff" else ""))
    if cut is not None and key != "cutoff":
        raise ValueError(f"{base} takes no cutoff")
    lo = number(args.get("min_rel", "0"), "min_rel", 0, 1e9, integer=True)
    # No max_rel (ir_measures requires one): the top grade of the judgments.
    hi = number(args["max_rel"], "max_rel", lo + 1, 1e9, integer=True) if "max_rel" in args else None
    if key == "cutoff":
        value = number(cut or "10", "the cutoff", 1, 1e9, integer=True)
        head, tail = "", f"@{value}"
    else:
        value = number(args.get(key, str(default)), key, 0.0, 1e9)
        if key == "p" and value >= 1.0:
            raise ValueError("p must be below 1")
        head, tail = f"{key}={fmt(value)},", ""
    inner = head + ("" if lo == 0 else f"min_rel={lo},") + ("" if hi is None else f"max_rel={hi},")
    inner = f"({inner[:-1]})" if inner else ""
    return [Measure(base, (value, lo, hi), None, name=f"{base}{inner}{tail}")]


def _continuation(family: str, value: float, g: np.ndarray) -> np.ndarray:
    """C(i) per cell of the (ranking, rank) block of gains ``g``."""
    rank = np.arange(1, g.shape[1] + 1, dtype=float)
    if family == "INST":
        x = rank + 2.0 * value - np.cumsum(g, axis=1)
        return ((x - 1.0) / x) ** 2
    if family == "NERR10":
        return value * (1.0 - g)
    if family == "NERR11":
        return ((rank + 2.0 * value - 1.0) / (rank + 2.0 * value)) ** 2 * (1.0 - g)
    before_k = rank < value
    if family == "SDCG":
        return np.broadcast_to(np.where(before_k, np.log2(rank + 1.0) / np.log2(rank + 2.0), 0.0), g.shape)
    if family == "NERR8":
        return np.where(before_k, 1.0 - g, 0.0)
    return np.where(before_k, rank / (rank + 1.0) * (1.0 - g), 0.0)  # NERR9


def compute(measure: Measure, a: Arrays, level: int) -> np.ndarray:
    value, lo, hi = measure.param
    if hi is None:
        hi = max(a.q_levels.shape[1] - 1, lo + 1)
    grade = np.clip(np.maximum(a.e_rel, 0), lo, hi)
    gain = np.where(a.e_rel >= 0, (grade - lo) / (hi - lo), 0.0)  # unlabelled: 0
    width = DEPTH if measure.family not in ("SDCG", "NERR8", "NERR9") else min(int(value), DEPTH)
    out = np.zeros(a.n)
    step = max(1, _CHUNK // width)
    bounds = np.r_[a.r_start, len(a.e_rk)]  # entries are in (ranking, rank) order
    for r0 in range(0, a.n, step):  # blocks of rankings, not queries one by one
        r1 = min(a.n, r0 + step)
        e = slice(bounds[r0], bounds[r1] if r1 < a.n else len(a.e_rk))
        rk, pos, gn = a.e_rk[e], a.e_pos[e], gain[e]
        keep = pos < width
        g = np.zeros((r1 - r0, width))
        g[rk[keep] - r0, pos[keep]] = gn[keep]
        c = _continuation(measure.family, value, g)
        w = np.cumprod(np.concatenate([np.ones((r1 - r0, 1)), c[:, :-1]], axis=1), axis=1)
        out[r0:r1] = (w * g).sum(axis=1) / w.sum(axis=1)
    return out
