"""``fuse``: several systems' runs combined into one run, the way ranx's ``fuse`` does it.

One long frame holds every system's hits; normalisation is a grouped transform per ranking and
the fusion one grouped aggregate per (query, document): no loop over queries or documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...engine.metrics import dedupe_run
from ...io import as_run, rerank_by_score
from ...model import ID
from ..calibration.rank_based import RANK_BASED_ATTR
from .normalize import canonical_norm, normalize

__all__ = ["FUSION_METHODS", "RANK_BASED_ATTR", "fuse"]

#: The fusion methods (ranx's names): name -> the fused score of a document, over the lists
#: that retrieved it (a list that did not retrieve it adds nothing).
FUSION_METHODS = {
    "rrf": "sum of 1 / (k + rank) (reciprocal rank fusion; scores are not read)",
    "sum": "CombSUM: sum of the (normalised) scores",
    "mnz": "CombMNZ: CombSUM times the number of lists that retrieved the document",
    "max": "CombMAX: the largest score",
    "min": "CombMIN: the smallest score",
    "med": "CombMED: the median score",
    "anz": "CombANZ: CombSUM divided by the number of lists that retrieved the document",
    "wsum": "weighted sum: sum of weight * score (weights default to 1)",
}
_ALIASES = {
    "combsum": "sum",
    "combmnz": "mnz",
    "combmax": "max",
    "combmin": "min",
    "combmed": "med",
    "combanz": "anz",
    "weighted_sum": "wsum",
    "weighted-sum": "wsum",
}
_AGG = {"sum": "sum", "max": "max", "min": "min", "med": "median", "anz": "mean", "wsum": "sum", "rrf": "sum"}


def _method(method: str) -> str:
    name = _ALIASES.get(str(method).lower(), str(method).lower())
    if name not in FUSION_METHODS:
        raise ValueError(f"unknown fusion method {method!r}; choose one of {', '.join(FUSION_METHODS)}")
    return name


def _weights(weights: Any, systems: list[str]) -> dict[str, float]:
    """``{system: weight}`` from a mapping or a sequence in system order (default all 1)."""
    if weights is None:
        return {s: 1.0 for s in systems}
    if isinstance(weights, Mapping):
        missing = [s for s in systems if s not in weights]
        if missing:
            raise ValueError(f"weights name no weight for {', '.join(map(repr, missing))}")
        return {s: float(weights[s]) for s in systems}
    w = list(weights) if isinstance(weights, Sequence) or hasattr(weights, "__iter__") else [weights]
    if len(w) != len(systems):
        raise ValueError(f"{len(w)} weights for {len(systems)} systems ({', '.join(systems)})")
    return {s: float(x) for s, x in zip(systems, w)}


def fuse(
    run: Any,
    method: str = "rrf",  # long: the numpydoc docstring (code: 40 lines)
    norm: str | None = "min-max",
    *,
    k: float = 60,
    weights: Any = None,
    name: str | None = None,
) -> pd.DataFrame:
    """A run frame fusing several systems' rankings of the same queries into one.

    Every ranking is first deduplicated (a document counts at its first rank, as every metric
    reads it), then its scores are normalised within the ranking (``norm``: one system's
    scores mean something only next to its other scores of the same query), then each
    (query, document) gets the fused score of ``method`` over the lists that retrieved it, and
    each query's fused list is ranked by that score (ties by doc id descending, trec_eval's
    order). The definitions are ranx's ``fuse(runs, norm, method)`` and give its numbers; the
    one difference is that a query some runs lack is fused from the runs that have it (ranx
    refuses runs whose queries differ).

    A fused run whose score is a function of rank (``rrf``, or the ``rank``/``borda``
    normalisations) carries no absolute relevance: it is marked in
    ``attrs["rank_based"] = {name: why}``, and :func:`retrieval_eval.calibrate` reports it as
    rank-based (its OOD figures indeterminate) whatever its scores look like.

    Parameters
    ----------
    run : dict, list, DataFrame or path
        The systems to fuse: ``{system: run}`` (any run :func:`retrieval_eval.as_run` reads:
        frames, wire dicts, paths, ranx ``Run`` objects), a list of ranx ``Run`` objects, or
        one run with two or more systems (``run``, as every function names it, for one run
        of several systems).
    method : str
        A key of :data:`FUSION_METHODS`: ``rrf`` (default), ``sum``, ``mnz``, ``max``, ``min``,
        ``med``, ``anz``, ``wsum`` (``combsum``... accepted).
    norm : str or None
        A key of :data:`~retrieval_eval.analysis.fusion.NORMALIZATIONS` (``min-max``, the
        default as in ranx; ``max``, ``sum``, ``zmuv`` alias ``z-score``, ``rank``, ``borda``),
        or None for raw scores. ``rrf`` reads ranks only and ignores it.
    k : float
        RRF's constant (60, Cormack et al. 2009).
    weights : dict or sequence, optional
        ``wsum``'s weights, ``{system: w}`` or one per system in the run's order; default 1.
    name : str, optional
        The fused system's name; default the method's name.

    Returns
    -------
    DataFrame
        A run frame (``system``, ``query_id``, ``rank``, ``doc_id``, ``score``) of one system,
        ``attrs["fusion"]`` recording the method, normalisation, k, weights and sources.

    Raises
    ------
    ValueError
        Fewer than two systems, an unknown method or normalisation, bad weights, a negative
        ``k``, or a score-based method over a system without scores.

    Examples
    --------
    >>> a = [{"query_id": "q1", "ranking": ["d1", "d2"], "scores": [2.0, 1.0]}]
    >>> b = [{"query_id": "q1", "ranking": ["d2", "d3"], "scores": [0.9, 0.1]}]
    >>> fused = fuse({"a": a, "b": b}, method="rrf", k=60)
    >>> fused["doc_id"].tolist()
    ['d2', 'd1', 'd3']
    >>> fused.attrs["rank_based"]
    {'rrf': 'fused by reciprocal rank fusion (k=60) of a, b'}
    """
    m, nm = _method(method), canonical_norm(norm)
    if m == "rrf" and not (np.isfinite(float(k)) and float(k) >= 0):
        raise ValueError(f"k must be a finite number >= 0, got {k!r}")
    r = dedupe_run(as_run(run, label="fuse"))
    systems = [str(s) for s in pd.unique(r["system"])]
    if len(systems) < 2:
        raise ValueError(f"fusion needs two or more systems, got {len(systems)} ({', '.join(systems)})")
    name = m if name is None else str(name)
    hits = pd.DataFrame(
        {
            "system": r["system"].astype(object).to_numpy(),
            "query_id": r["query_id"].astype(object).to_numpy(),
            "doc_id": r["doc_id"].astype(object).to_numpy(),
            "score": r["score"].to_numpy(np.float64),
            "position": r["rank"].to_numpy(np.int64) - 1,
        }
    )
    w = _weights(weights, systems) if m == "wsum" else None
    if m == "rrf":
        hits["score"] = 1.0 / (float(k) + hits["position"].to_numpy(np.float64) + 1.0)
    else:
        unscored = pd.unique(hits.loc[hits["score"].isna(), "system"])
        if len(unscored):
            raise ValueError(
                f"method {m!r} fuses scores, and system(s) {', '.join(map(repr, unscored))} "
                "have rankings without scores; use method='rrf' or norm='rank'"
            )
        hits = normalize(hits, nm)
        if w is not None:
            hits["score"] = hits["score"].to_numpy(np.float64) * hits["system"].map(w).to_numpy(np.float64)
    g = hits.groupby(["query_id", "doc_id"], sort=False)["score"]
    fused = g.agg("sum") * g.agg("size") if m == "mnz" else g.agg(_AGG[m])
    fused = fused.reset_index()
    out = pd.DataFrame(
        {
            "system": pd.array([name] * len(fused), dtype=ID),
            "query_id": pd.array(fused["query_id"].to_numpy(), dtype=ID),
            "rank": np.ones(len(fused), dtype=np.int64),
            "doc_id": pd.array(fused["doc_id"].to_numpy(), dtype=ID),
            "score": fused["score"].to_numpy(np.float64),
        }
    )
    out = rerank_by_score(out, label="fuse")
    out.attrs["fusion"] = {
        name: {
            "method": m,
            "norm": None if m == "rrf" else nm,
            "k": float(k) if m == "rrf" else None,
            "weights": w,
            "systems": systems,
        }
    }
    why = _rank_based_why(m, nm, k, systems)
    if why:
        out.attrs[RANK_BASED_ATTR] = {name: why}
    return out


def _rank_based_why(m: str, nm: str | None, k: float, systems: list[str]) -> str | None:
    """Why a fusion's scores are a function of rank (None when they are not)."""
    of = ", ".join(systems)
    if m == "rrf":
        kk = int(k) if float(k).is_integer() else k
        return f"fused by reciprocal rank fusion (k={kk}) of {of}"
    if nm in ("rank", "borda"):
        return f"fused by {m} of {nm}-normalised ranks of {of}"
    return None
