"""Per-ranking score normalisations, ranx's definitions, vectorized over every ranking at once.

Every normalisation works inside one ranking (one system's list for one query): a score means
something only next to the other scores of its list, and lists of different systems live on
different scales (BM25 in the tens, cosines in [-1, 1]). The floors (``1e-9``) are ranx's, so
a list whose scores are all equal normalises to 0 (min-max) instead of dividing by zero.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["NORMALIZATIONS", "normalize"]

#: The normalisations: name -> what it computes for score ``s`` of a list (``n`` entries,
#: 0-based position ``i``).
NORMALIZATIONS = {
    "min-max": "(s - min) / max(max - min, 1e-9)",
    "max": "s / max(max, 1e-9)",
    "sum": "(s - min) / max(sum - n * min, 1e-9)",
    "zmuv": "(s - mean) / max(std, 1e-9), the population std (z-score)",
    "rank": "1 - i / n (the score is dropped: a function of rank)",
    "borda": "1 - i / c over the c documents any list retrieved for the query; a document this "
    "list missed gets 0.5 - (n - 1) / (2 c)",
}
_ALIASES = {"min_max": "min-max", "minmax": "min-max", "z-score": "zmuv", "zscore": "zmuv"}
_FLOOR = 1e-9


def canonical_norm(norm: str | None) -> str | None:
    """The canonical name of a normalisation (aliases ``min_max``, ``z-score`` accepted), or None."""
    if norm is None:
        return None
    name = _ALIASES.get(str(norm).lower(), str(norm).lower())
    if name not in NORMALIZATIONS:
        raise ValueError(f"unknown normalisation {norm!r}; choose one of {', '.join(NORMALIZATIONS)} or None")
    return name


def normalize(hits: pd.DataFrame, norm: str | None) -> pd.DataFrame:
    """The hits with ``score`` normalised within each ranking.

    Parameters
    ----------
    hits : DataFrame
        ``system``, ``query_id``, ``doc_id``, ``score`` and ``position`` (0-based place in its
        ranking), one row per retrieved document, each ranking's rows in rank order.
    norm : str or None
        A key of :data:`NORMALIZATIONS` (or an alias), or None to keep the raw scores.

    Returns
    -------
    DataFrame
        A new frame of the same columns; ``borda`` adds a row for every document another list
        retrieved for the query (so CombMNZ counts it in every list, as ranx does).

    Examples
    --------
    >>> hits = pd.DataFrame({"system": ["a", "a"], "query_id": ["q", "q"], "doc_id": ["x", "y"],
    ...                      "score": [3.0, 1.0], "position": [0, 1]})
    >>> normalize(hits, "min-max")["score"].tolist()
    [1.0, 0.0]
    """
    name = canonical_norm(norm)
    out = hits.copy()
    if name is None:
        return out
    if name == "borda":
        return _borda(out)
    g = out.groupby(["system", "query_id"], sort=False)["score"]
    s = out["score"].to_numpy(np.float64)
    n = g.transform("size").to_numpy(np.float64)
    if name == "rank":
        out["score"] = 1.0 - out["position"].to_numpy(np.float64) / n
        return out
    lo, hi = g.transform("min").to_numpy(np.float64), g.transform("max").to_numpy(np.float64)
    if name == "min-max":
        out["score"] = (s - lo) / np.maximum(hi - lo, _FLOOR)
    elif name == "max":
        out["score"] = s / np.maximum(hi, _FLOOR)
    elif name == "sum":
        total = g.transform("sum").to_numpy(np.float64)
        out["score"] = (s - lo) / np.maximum(total - n * lo, _FLOOR)
    else:  # zmuv: population standard deviation, as numpy's (and ranx's) default
        mean = g.transform("mean").to_numpy(np.float64)
        dev2 = pd.Series((s - mean) ** 2, index=out.index)
        std = np.sqrt(dev2.groupby([out["system"], out["query_id"]], sort=False).transform("mean").to_numpy(np.float64))
        out["score"] = (s - mean) / np.maximum(std, _FLOOR)
    return out


def _borda(hits: pd.DataFrame) -> pd.DataFrame:
    """Borda counts over the candidates of each query (every document some list retrieved)."""
    cand = hits[["query_id", "doc_id"]].drop_duplicates()
    c = cand.groupby("query_id", sort=False).size().rename("_c")
    systems = pd.DataFrame({"system": pd.unique(hits["system"])})
    queries = hits[["system", "query_id"]].drop_duplicates()
    n = hits.groupby(["system", "query_id"], sort=False).size().rename("_n").reset_index()
    grid = systems.merge(cand, how="cross")
    grid = grid.merge(queries, on=["system", "query_id"], how="inner")  # lists that exist
    grid = grid.merge(hits, on=["system", "query_id", "doc_id"], how="left")
    grid = grid.merge(c.reset_index(), on="query_id").merge(n, on=["system", "query_id"])
    cc, nn = grid["_c"].to_numpy(np.float64), grid["_n"].to_numpy(np.float64)
    pos = grid["position"].to_numpy(np.float64)
    grid["score"] = np.where(np.isnan(pos), 0.5 - (nn - 1.0) / (2.0 * cc), 1.0 - pos / cc)
    return grid[list(hits.columns)]
