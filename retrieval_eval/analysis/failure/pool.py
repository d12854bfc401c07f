"""What to label next: the unjudged entries of the top k of one or several runs, pooled as TREC
pools are (one line per query and document, whichever system retrieved it), ranked by how much
labelling them could move the numbers being compared.

The weight of a hole is its share of what the holes of each ranking could do to the measure
(:func:`.bounds.judgment_bounds`: ``high - low`` of the query, over the ranking's holes),
summed over the systems whose top k holds it: a document every system puts on top of a query
whose numbers hang on their holes comes first. The file written is the judgments' format
(JSONL, the spec's field names) without ``relevance``: a person adds ``"relevance": <grade>``
to each line and the file then reads as judgments (``rev.read_judgments``); a line left
ungraded is refused by the reader, naming its line, so a half-graded file cannot pass for a
graded one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...io.convert import as_corpus, as_judgments, as_queries, as_run
from ...io.safewrite import atomic_write_text
from ...model import ID
from ..handoff import viz
from .bounds import holes, judgment_bounds
from .entries import texts

__all__ = ["LabelPool", "label_pool"]


@dataclass
class LabelPool:
    """The holes worth labelling (:func:`label_pool`).

    ``frame``: one row per (query_id, key), best first: ``query_id``, ``key``, ``doc_uri``,
    ``chunk_id`` (NA when the judgments key by document), ``query``, ``text``, ``systems``
    (how many top-k lists hold it), ``best_rank``, ``weight``.
    """

    frame: pd.DataFrame
    measure: str
    k: int
    settings: dict[str, Any] = field(default_factory=dict)

    def to_jsonl(self) -> str:
        """The to-label file: one judgment per line without ``relevance`` (spec field order)."""
        names = ["query_id", "query", "doc_uri", "chunk_id", "chunk_text"]
        data = self.frame.rename(columns={"text": "chunk_text"})[names]
        data = data.astype(object).where(data.notna(), None)
        lines = [
            json.dumps({n: v for n, v in zip(names, row) if v is not None}, ensure_ascii=False)
            for row in data.itertuples(index=False)
        ]
        return "".join(line + "\n" for line in lines)

    def write(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_jsonl` atomically (the package's safe writer)."""
        atomic_write_text(path, self.to_jsonl())

    def _repr_html_(self) -> str:
        return viz("pool_html")(self)

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return (
            f"LabelPool({len(self.frame)} unjudged entries of {self.frame['query_id'].nunique()} queries, "
            f"top {self.k}, weighted by {self.measure})"
        )


def _doc_uris(keys: pd.Series, judgments: pd.DataFrame, corpus: pd.DataFrame | None) -> tuple[np.ndarray, np.ndarray]:
    """Each key's ``doc_uri`` and ``chunk_id`` for the to-label file: the judgments key by chunk
    id when they name any, and the document of a chunk comes from the corpus or the labels."""
    by_chunk = judgments["chunk_id"].notna().any()
    if not by_chunk:
        return keys.to_numpy(dtype=object), np.full(len(keys), None, dtype=object)
    parts = [pd.Series(judgments["doc_uri"].to_numpy(), index=pd.Index(judgments["chunk_id"]))]
    if corpus is not None:
        parts.insert(0, pd.Series(corpus["doc_uri"].to_numpy(), index=pd.Index(corpus["chunk_id"])))
    known = pd.concat(parts)
    known = known[known.index.notna() & ~known.index.duplicated(keep="first")]
    uri = known.reindex(keys.to_numpy()).to_numpy(dtype=object)
    uri = np.where(pd.isna(uri), keys.to_numpy(dtype=object), uri)
    return uri, keys.to_numpy(dtype=object)


def _pooled(gaps: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    """The weighted holes of every system pooled per (query_id, key): how many systems hold
    it, its best rank, its summed weight; best first (weight, then systems, then best rank),
    the first ``limit`` kept."""
    g = gaps.groupby(["query_id", "key"], sort=False, observed=True)
    pooled = pd.DataFrame(
        {
            "systems": g.size().astype(np.int64),
            "best_rank": g["rank"].min().astype(np.int64),
            "weight": g["weight"].sum(),
        }
    ).reset_index()
    order = np.lexsort((pooled["best_rank"].to_numpy(), -pooled["systems"].to_numpy(), -pooled["weight"].to_numpy()))
    pooled = pooled.iloc[order].reset_index(drop=True)
    return pooled if limit is None else pooled.head(int(limit))


def _query_texts(judgments: pd.DataFrame, queries: pd.DataFrame | None) -> pd.Series:
    """Each query's text by id: the queries file's first, else the labels'."""
    qtext = judgments.drop_duplicates("query_id").set_index("query_id")["query"]
    if queries is not None:
        qtext = pd.concat([queries.set_index("query_id")["query"], qtext])
        qtext = qtext[~qtext.index.duplicated(keep="first")]
    return qtext


def label_pool(
    judgments,
    run,
    k: int = 10,
    measure: str = "ndcg@10",
    corpus=None,
    queries=None,
    gain: str = "exponential",
    threshold: int = 1,
    limit: int | None = None,
) -> LabelPool:
    """Returns the unjudged top-``k`` entries of every system, pooled and ranked by what labelling them could change.

    Parameters
    ----------
    judgments, run : DataFrame or path
        The run may hold several systems (or concatenate several runs): the pool is their union.
    k : int, default 10
        Pool depth (TREC's pool depth).
    measure : str, default "ndcg@10"
        The measure whose bounds weigh the holes.
    corpus, queries : DataFrame or path, optional
        Passage text and document of each chunk; query text.
    gain, threshold
        As for :func:`~retrieval_eval.judgment_bounds`.
    limit : int, optional
        Keep the first ``limit`` entries.

    Returns
    -------
    LabelPool

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> d = rev.load_demo()
    >>> pool = rev.label_pool(d.judgments, d.runs, k=5)
    >>> bool(pool.frame["weight"].is_monotonic_decreasing)
    True
    """
    judgments, run = as_judgments(judgments), as_run(run)
    corpus = None if corpus is None else as_corpus(corpus)
    queries = None if queries is None else as_queries(queries)
    bounds = judgment_bounds(judgments, run, measures=[measure], k=k, gain=gain, threshold=threshold)
    rows = bounds.per_query
    slack = (rows["high"] - rows["low"]).fillna(0.0) / rows["unjudged"].where(rows["unjudged"] > 0, 1)
    share = pd.Series(slack.to_numpy(), index=pd.MultiIndex.from_arrays([rows["system"], rows["query_id"]]))
    gaps = holes(judgments, run, k)
    gaps["weight"] = share.reindex(pd.MultiIndex.from_arrays([gaps["system"], gaps["query_id"]])).fillna(0.0).to_numpy()
    pooled = _pooled(gaps, limit)
    uri, chunk = _doc_uris(pooled["key"], judgments, corpus)
    qtext = _query_texts(judgments, queries)
    frame = pd.DataFrame(
        {
            "query_id": pd.array(pooled["query_id"].to_numpy(dtype=object), dtype=ID),
            "key": pd.array(pooled["key"].to_numpy(dtype=object), dtype=ID),
            "doc_uri": pd.array(uri, dtype=ID),
            "chunk_id": pd.array(chunk, dtype=ID),
            "query": pd.array(qtext.reindex(pooled["query_id"]).to_numpy(), dtype=ID),
            "text": pd.array(texts(judgments, corpus).reindex(pooled["key"]).to_numpy(), dtype=ID),
            "systems": pooled["systems"].to_numpy(),
            "best_rank": pooled["best_rank"].to_numpy(),
            "weight": pooled["weight"].to_numpy(dtype=np.float64),
        }
    )
    return LabelPool(
        frame,
        bounds.summary["measure"].iloc[0] if len(bounds.summary) else measure,
        int(k),
        {"gain": gain, "threshold": threshold},
    )
