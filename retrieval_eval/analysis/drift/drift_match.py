"""How :func:`~retrieval_eval.analysis.drift.drift` finds a stale label's text in the live corpus,
and how :func:`~retrieval_eval.analysis.drift.fix` keeps its re-anchors from colliding.

The status codes drift decides with, the vectorized id/hash lookup (:func:`isin`), the text-hash
match (RE_ANCHORABLE), the substring search within a label's own document (SPLIT, MERGED), and
fix's collision rules (:func:`collisions`, :func:`needs_review`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...identity import normalize, text_sha
from ...model import ID

#: The statuses as codes, in :data:`~retrieval_eval.analysis.drift.DRIFT_STATUSES` order.
VALID, RE_ANCHORABLE, MERGED, SPLIT, ORPHANED = range(5)
#: Not decided yet (every label starts so).
UNDECIDED = -1


def missing(value: Any) -> bool:
    """None, ``<NA>`` or a float NaN: no value."""
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def strings(frame: pd.DataFrame, name: str) -> pd.Series:
    """Column ``name`` as a string Series on a RangeIndex; all ``<NA>`` when absent."""
    if name not in frame.columns:
        return pd.Series(pd.NA, index=pd.RangeIndex(len(frame)), dtype=ID)
    col = frame[name]
    if col.dtype != ID:
        col = col.astype(ID)
    return col.reset_index(drop=True)


def _arrow_strings(values: Any) -> pa.Array:
    arr = pa.array(values)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.large_string())


def isin(values: pd.Series, pool: Any) -> np.ndarray:
    """Boolean mask: which of ``values`` occur in ``pool``; a missing value never does.

    Uses pyarrow's hash set: pandas' ``isin`` on pyarrow-backed strings loops in Python, which
    is seconds for a million ids.
    """
    hit = pc.is_in(_arrow_strings(values), value_set=_arrow_strings(pool))
    mask = hit.to_numpy(zero_copy_only=False)
    return mask & values.notna().to_numpy(dtype=bool)


def match_text_sha(
    rest: np.ndarray,
    doc: pd.Series,
    label_sha: pd.Series,
    chunk_text: pd.Series,
    live: pd.DataFrame,
    codes: np.ndarray,
    reanchor: np.ndarray,
) -> None:
    """RE_ANCHORABLE: the label's text hash is a live chunk's; same document first."""
    sha = label_sha.iloc[rest].reset_index(drop=True)
    texts = chunk_text.iloc[rest].reset_index(drop=True)
    fill = sha.isna() & texts.notna()
    if fill.any():
        values = sha.to_numpy(dtype=object)
        values[fill.to_numpy(dtype=bool)] = [text_sha(t) for t in texts[fill]]
        sha = pd.Series(pd.array(values, dtype=sha.dtype))  # type: ignore[arg-type]
    want = pd.DataFrame({"i": rest, "doc_uri": doc.iloc[rest].array, "text_sha": sha.array})
    want = want[want["text_sha"].notna()]
    if want.empty:
        return
    cand = live[isin(live["text_sha"], want["text_sha"])]
    if cand.empty:
        return
    # Same document: the first in corpus order.
    same = cand.sort_values("pos", kind="stable").drop_duplicates(["doc_uri", "text_sha"])[
        ["doc_uri", "text_sha", "chunk_id"]
    ]
    hit = want.merge(same, on=["doc_uri", "text_sha"], how="left")
    found = hit["chunk_id"].notna().to_numpy(dtype=bool)
    idx = hit["i"].to_numpy()[found]
    codes[idx] = RE_ANCHORABLE
    reanchor[idx] = hit["chunk_id"].to_numpy(dtype=object)[found]
    # Any document: first in corpus order.
    other = hit.loc[~found, ["i", "text_sha"]]
    if other.empty:
        return
    first = cand.sort_values("pos", kind="stable").drop_duplicates("text_sha")[["text_sha", "chunk_id"]]
    hit = other.merge(first, on="text_sha", how="left")
    found = hit["chunk_id"].notna().to_numpy(dtype=bool)
    idx = hit["i"].to_numpy()[found]
    codes[idx] = RE_ANCHORABLE
    reanchor[idx] = hit["chunk_id"].to_numpy(dtype=object)[found]


def match_substrings(
    rest: np.ndarray,
    doc: pd.Series,
    chunk_text: pd.Series,
    live: pd.DataFrame,
    codes: np.ndarray,
    reanchor: np.ndarray,
    split_into: np.ndarray,
) -> None:
    """SPLIT, else MERGED, searching only the live chunks of each label's own document."""
    docs = doc.iloc[rest].to_numpy(dtype=object)
    texts = chunk_text.iloc[rest].to_numpy(dtype=object)
    pool = live[isin(live["doc_uri"], docs) & live["text"].notna().to_numpy(dtype=bool)]
    pool = pool.sort_values(["doc_uri", "ord", "pos"], kind="stable")
    pool_docs = pool["doc_uri"].to_numpy(dtype=object)
    pool_ids = pool["chunk_id"].to_numpy(dtype=object)
    pool_texts = [normalize(t) for t in pool["text"].to_numpy(dtype=object)]
    pool_pos = pool["pos"].to_numpy(dtype=np.int64)
    # Each document's chunks, in (ordinal, corpus) order, without empty texts.
    by_doc: dict[str, list[tuple[str, str, int]]] = {}
    for d, chunk, text, pos in zip(pool_docs, pool_ids, pool_texts, pool_pos, strict=True):
        if text:
            by_doc.setdefault(d, []).append((chunk, text, int(pos)))

    for i, d, raw in zip(rest, docs, texts, strict=True):
        chunks = by_doc.get(d)
        labeled = normalize(raw)
        if not chunks or not labeled:
            continue
        inside = [chunk for chunk, text, _ in chunks if text in labeled]
        if len(inside) >= 2:
            codes[i] = SPLIT
            split_into[i] = inside
            continue
        # The shortest containing chunk; equal lengths: the first in corpus order.
        holding = [(len(text), pos, chunk) for chunk, text, pos in chunks if labeled in text]
        if holding:
            codes[i] = MERGED
            reanchor[i] = min(holding)[2]


#: The needs_review status of a label whose re-anchor would meet a label of another grade.
GRADE_CONFLICT = "GRADE_CONFLICT"


def collisions(
    qid: pd.Series, key: pd.Series, moved: np.ndarray, grade: np.ndarray, before: pd.Series
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Which re-anchors would put two labels of one query on one chunk, and what to do instead.

    ``key`` is each label's key after the re-anchors (``chunk_id``, else ``doc_uri``), ``moved``
    marks the labels re-anchored, ``grade`` their relevance, ``before`` each label's key as
    written. Only groups of one (query, key) that hold a moved label and labels of two or more
    keys as written are looked at: a re-anchor made them collide. Labels that were already
    duplicates of each other in the input stay as they were (``validate``'s to report, not
    fix's to settle).

    Returns ``(drop, unmove, conflicts)``: ``drop`` marks labels to remove because the group's
    labels all carry one grade (the first in row order stays, with its provenance: the same
    judgment said twice is one judgment); ``unmove`` marks moved labels of groups whose grades
    differ, which stay where they were (two people, or one twice, judged the text differently,
    and picking one grade would invent a judgment); ``conflicts`` has one row per unmoved label
    (``row``, ``reanchor_to``, ``grades``: the group's distinct grades, highest first).
    """
    n = len(key)
    frame = pd.DataFrame(
        {
            "q": qid.to_numpy(dtype=object),
            "k": key.to_numpy(dtype=object),
            "moved": moved,
            "grade": grade,
            "row": np.arange(n, dtype=np.int64),
            "before": before.to_numpy(dtype=object),
        }
    )
    groups = frame.groupby(["q", "k"], sort=False, dropna=False)
    size = groups["row"].transform("size").to_numpy()
    any_moved = groups["moved"].transform("any").to_numpy(dtype=bool)
    grades = groups["grade"].transform("nunique").to_numpy()
    first = groups["row"].transform("min").to_numpy()
    hit = (size > 1) & any_moved & (groups["before"].transform("nunique").to_numpy() > 1)
    drop = hit & (grades == 1) & (frame["row"].to_numpy() != first)
    unmove = hit & (grades > 1) & moved
    rows = np.flatnonzero(unmove)
    torn = frame[hit & (grades > 1)]  # the few groups in conflict: their grades, listed
    sets = torn.groupby(["q", "k"], sort=False)["grade"].unique()
    listed = [
        sorted(sets.loc[(q, k)].tolist(), reverse=True)
        for q, k in zip(frame["q"].to_numpy()[rows], frame["k"].to_numpy()[rows], strict=True)
    ]
    conflicts = pd.DataFrame(
        {"row": rows, "reanchor_to": frame["k"].to_numpy()[rows], "grades": pd.Series(listed, dtype=object)}
    )
    return drop, unmove, conflicts


def needs_review(f: pd.DataFrame, conflicts: pd.DataFrame) -> pd.DataFrame:
    """The SPLIT, ORPHANED and GRADE_CONFLICT rows of the (row-ordered) findings, with a reason."""
    status = f["status"].to_numpy(dtype=object).copy()
    reason = np.full(len(f), None, dtype=object)
    split = status == "SPLIT"
    reason[split] = [
        "spans " + ", ".join(parts) + ": re-judge the passage"
        for parts in f["split_into"].to_numpy(dtype=object)[split]
    ]
    reason[status == "ORPHANED"] = "its text is in no live chunk of its document"
    rows = conflicts["row"].to_numpy(dtype=np.int64)
    for row, target, grades in zip(rows, conflicts["reanchor_to"], conflicts["grades"], strict=True):
        shown = " and ".join(str(g) for g in grades)
        reason[row] = f"{status[row]} onto {target}, where this query's labels have grades {shown}: left as it was"
    status[rows] = GRADE_CONFLICT
    keep = split | (status == "ORPHANED") | (status == GRADE_CONFLICT)
    out = f.assign(status=pd.array(status, dtype=ID), reason=pd.array(reason, dtype=ID))
    return out[keep].reset_index(drop=True)
