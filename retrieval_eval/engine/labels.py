"""Judgments reduced to codes: the last-label-wins rule for a repeated (query, key) pair, and
each query's stratum (that of its first label line).

A judgment matches a ranking entry by its key: the ``chunk_id``, else the ``doc_uri``
(:func:`label_keys`, the rule the scan applies too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..arrays import arrow as _arrow
from ..arrays import codes as _codes
from ..arrays import take as _take
from ..arrays import whole as _whole
from ..model import ID, UNSTRATIFIED
from .kernels import lookup, repeats


def label_keys(judgments: pd.DataFrame) -> Any:
    """The key of each label as arrow strings: the ``chunk_id``, else the ``doc_uri``.

    Qrels have no chunk_id: the doc_uri column is then the key, with no copy.
    """
    import pyarrow.compute as pc

    chunk_id, doc_uri = _arrow(judgments["chunk_id"]), _arrow(judgments["doc_uri"])
    return doc_uri if chunk_id.null_count == len(chunk_id) else pc.coalesce(chunk_id, doc_uri)


@dataclass
class Judged:
    """Judgments reduced to codes: one entry per (query, key) pair, the last label winning."""

    queries: pd.Index  # judged queries, in first-appearance order
    keys: pd.Index  # distinct keys
    rows: np.ndarray  # row positions (in the judgments frame) of the winning labels
    query: np.ndarray  # per pair: query code
    key: np.ndarray  # per pair: key code
    grade: np.ndarray  # per pair
    strata: np.ndarray  # per query: the stratum of its first label line, or _unstratified


def winning_labels(judgments: pd.DataFrame) -> tuple[np.ndarray, pd.Index, np.ndarray, Any, np.ndarray]:
    """Each label's query code, the judged queries (first-appearance order), each label's key
    code, the distinct keys (arrow strings, first-appearance order) and the rows of the labels
    that count: the last of a repeated (query, key) pair.

    ``validate`` reports such a pair as an error; scoring still needs one answer, and the last
    line is the one a person editing the file most recently wrote. (The engine applies the
    same rule step by step in :func:`scan_run`.)
    """
    q_codes, queries = _codes(_arrow(judgments["query_id"]))
    encoded = _whole(label_keys(judgments)).dictionary_encode()  # no Python string made
    k_codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    pair = q_codes.astype(np.int64) * max(len(encoded.dictionary), 1) + k_codes
    rows = np.flatnonzero(~repeats(pair[::-1])[::-1])  # the last label of a pair wins
    return q_codes, queries, k_codes, encoded.dictionary, rows


def judged(judgments: pd.DataFrame) -> Judged:
    """Code the judgments once; the last label of a repeated (query, key) pair wins
    (:func:`winning_labels`)."""
    q_codes, queries, k_codes, keys, rows = winning_labels(judgments)
    return Judged(
        queries=queries,
        keys=pd.Index(pd.array(keys, dtype=ID), dtype=ID),
        rows=rows,
        query=q_codes[rows],
        key=k_codes[rows],
        grade=judgments["relevance"].to_numpy(dtype=np.int64)[rows],
        strata=strata_of(judgments, q_codes, len(queries)),
    )


def relevance_table(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (query_id, key) with its grade, in judgment order; the last label wins."""
    j = judged(judgments)
    return pd.DataFrame(
        {
            "query_id": pd.array(j.queries.take(j.query), dtype=ID),
            "key": pd.array(j.keys.take(j.key), dtype=ID),
            "relevance": j.grade,
        }
    )


def query_strata(judgments: pd.DataFrame, queries: pd.Index) -> np.ndarray:
    """Each query's stratum (that of its first label line), ``_unstratified`` without one."""
    j = judged(judgments)
    at = lookup(queries, j.queries)
    return np.where(at >= 0, j.strata[np.maximum(at, 0)] if len(j.strata) else UNSTRATIFIED, UNSTRATIFIED).astype(
        object
    )


def strata_span_queries(judgments: pd.DataFrame) -> bool:
    """Whether some query's labels fall in more than one stratum (a missing one counts as
    ``_unstratified``)."""
    import pyarrow.compute as pc

    stratum = _arrow(judgments["stratum"])
    if len(stratum) == 0 or stratum.null_count == len(stratum):
        return False
    q_codes, queries = _codes(_arrow(judgments["query_id"]))
    s_codes, strata = _codes(pc.fill_null(stratum, UNSTRATIFIED))
    pairs = np.unique(q_codes.astype(np.int64) * max(len(strata), 1) + s_codes)
    return len(pairs) > len(queries)


def strata_in_order(judgments: pd.DataFrame) -> list[str]:
    """The strata of the judgments in the order they first appear (a label without one in
    ``_unstratified``): the order that breaks a tie for the worst stratum (SPEC A3).

    The file's own order is the one order every implementation sees alike; it is also the order
    a person wrote the classes in, usually the one they care about first.
    """
    import pyarrow.compute as pc

    if len(judgments) == 0:
        return []
    return [str(s) for s in _codes(pc.fill_null(_arrow(judgments["stratum"]), UNSTRATIFIED))[1]]


def strata_of(judgments: pd.DataFrame, label_codes: np.ndarray, nq: int) -> np.ndarray:
    """Each query's stratum: that of its first label line, ``_unstratified`` when it has none."""
    if not nq:
        return np.zeros(0, dtype=object)
    # A query's first label is the head of a run of its labels: only the heads are searched.
    heads = np.flatnonzero(np.r_[True, label_codes[1:] != label_codes[:-1]])
    codes, first = np.unique(label_codes[heads], return_index=True)  # first occurrences
    first_row = np.full(nq, -1, dtype=np.int64)
    first_row[codes] = heads[first]
    import pyarrow.compute as pc

    strata = pc.fill_null(_take(_arrow(judgments["stratum"]), first_row), UNSTRATIFIED)
    return np.asarray(strata.to_pylist(), dtype=object)
