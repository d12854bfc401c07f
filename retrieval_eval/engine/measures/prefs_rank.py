"""The rankings the judgment-group measures read (:mod:`.prefs`, :mod:`.avgjg`): each evaluated
(system, query)'s retrieved documents in trec_eval's order, cut at ``-M``, and the frame of
the evaluated rankings. Strings compare in byte order, as trec_eval's ``strcmp``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def byte_rank(values: np.ndarray) -> np.ndarray:
    """Each string's rank in byte order (strcmp's; code point order is UTF-8's byte order),
    equal strings equal ranks."""
    return np.unique(np.asarray(values).astype(str), return_inverse=True)[1].reshape(-1)


def ranked_judged(docs: pd.DataFrame, run: pd.DataFrame, max_ret: int | None, doc_desc: bool) -> pd.DataFrame:
    """Each ranking's retrieved documents in trec_eval's order, truncated to ``max_ret``.

    ``docs`` are the (query_id) of the evaluated queries; ``run`` a run frame. Order: score
    descending, ties by doc id descending (``doc_desc``, the qrels code's) or ascending (the
    prefs code's); a ranking without scores keeps its rank order. Returns ``system``,
    ``query_id``, ``doc_id``, ``pos`` (0-based). A document twice in a ranking is refused, as
    trec_eval refuses it.
    """
    r = run[run["query_id"].isin(docs["query_id"].unique())]
    score = r["score"].to_numpy(dtype=np.float64)
    key = np.where(np.isnan(score), -r["rank"].to_numpy(dtype=np.float64), score)
    doc = r["doc_id"].to_numpy(dtype=object).astype(str)
    doc_order = byte_rank(doc)
    sys_q = pd.MultiIndex.from_arrays([r["system"].to_numpy(dtype=object), r["query_id"].to_numpy(dtype=object)])
    group = pd.factorize(sys_q)[0]
    perm = np.lexsort((-doc_order if doc_desc else doc_order, -key, group))
    out = pd.DataFrame(
        {
            "system": r["system"].to_numpy(dtype=object)[perm],
            "query_id": r["query_id"].to_numpy(dtype=object)[perm],
            "doc_id": doc[perm],
        }
    )
    g = group[perm]
    starts = np.r_[0, np.flatnonzero(np.diff(g)) + 1] if len(g) else np.zeros(0, dtype=np.int64)
    sizes = np.diff(np.r_[starts, len(g)])
    out["pos"] = np.arange(len(g)) - np.repeat(starts, sizes)
    if max_ret is not None:
        out = out[out["pos"].to_numpy() < max_ret]
    twice = out.duplicated(["system", "query_id", "doc_id"]).to_numpy()
    if twice.any():
        row = out[twice].iloc[0]
        raise ValueError(f"run: query {row['query_id']} repeats doc {row['doc_id']} (trec_eval refuses duplicate docs)")
    return out.reset_index(drop=True)


def rankings(queries: np.ndarray, ranked: pd.DataFrame, systems: list[str], complete: bool) -> pd.DataFrame:
    """The evaluated (system, query_id) pairs: queries of the judgments the run answers, or
    with ``complete`` every judged query for every system; queries in byte order."""
    if complete:
        grid = pd.MultiIndex.from_product([systems, sorted(set(queries.tolist()))], names=["system", "query_id"])
        rk = grid.to_frame(index=False)
    else:
        rk = ranked[["system", "query_id"]].drop_duplicates()
        rk = rk[rk["query_id"].isin(set(queries.tolist()))]
    sys_order = {s: i for i, s in enumerate(systems)}
    rk = rk.assign(_s=rk["system"].map(sys_order)).sort_values(["_s", "query_id"], kind="stable")
    return rk.drop(columns="_s").reset_index(drop=True)


def id_columns(rk: pd.DataFrame) -> pd.DataFrame:
    """The ``system`` and ``query_id`` string columns of the evaluated rankings."""
    from ...model import ID

    return pd.DataFrame(
        {c: pd.array(rk[c].astype(str).to_numpy(dtype=object), dtype=ID) for c in ("system", "query_id")}
    )
