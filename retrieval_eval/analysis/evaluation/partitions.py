"""What one partition of a run does where it lives (a Dask worker's task), without Dask.

:mod:`retrieval_eval.dask` builds the graphs; the functions its tasks call are here, so that a
worker imports only this module, the engine and the readers (not ``dask.dataframe``: 0.4 s of
a worker's first task on the 2-core box). Each function takes one partition (a byte range of
TREC text, or the pandas frame of a Dask partition) and returns :meth:`Plan.score`'s result,
or a value the client turns into the whole file's error. Nothing here computes a metric.

A row's key is its place in the whole run: its partition's number times :data:`PART` plus its
place in the partition. The engine breaks rank ties by it and orders systems by their first row,
so a partition scored anywhere gives the numbers of the run scored in one piece.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import FormatError
from ...io.byte_ranges import ByteRange, range_rows, read_range
from .streaming import Plan

#: A row's key: its partition's number times this plus its place in the partition.
PART = np.int64(1) << np.int64(40)
#: The run frame's columns, and a range's rows' (the file's own ranks, before ordering).
RUN = ["system", "query_id", "rank", "doc_id", "score"]
ROWS = ["system", "query_id", "doc_id", "rank", "score"]


def part_keys(number: int, n: int) -> np.ndarray:
    """The keys of the ``n`` rows of partition ``number``, in order."""
    return np.int64(number) * PART + np.arange(n, dtype=np.int64)


def range_keys(rng: ByteRange, n: int) -> np.ndarray:
    return part_keys(rng.number, n)


def score_range(rng: ByteRange, plan: Plan, system: str | None) -> dict:
    """One byte range read by the TREC reader and scored; a bad line comes back as a value
    (the client raises the first range's, as the reader of the whole file would)."""
    try:
        frame = read_range(rng, system=system)
    except FormatError as err:
        return {"error": err}
    return {"scored": plan.score(frame, range_keys(rng, len(frame)))}


def keyed_range(rng: ByteRange, system: str | None) -> pd.DataFrame:
    """A range's run frame (the reader's order), with each row's ``_key``."""
    frame = read_range(rng, system=system)
    return frame[RUN].assign(_key=range_keys(rng, len(frame)))


def keyed_rows(rng: ByteRange, system: str | None) -> pd.DataFrame:
    """A range's rows in file order with the file's own ranks, with each row's ``_key``."""
    rows = range_rows(rng, system=system)
    return rows[ROWS].assign(_key=range_keys(rng, len(rows)))


def range_error(rng: ByteRange, system: str | None) -> FormatError | None:
    try:
        range_rows(rng, system=system)
    except FormatError as err:
        return err
    return None


def score_reader_part(part: pd.DataFrame, plan: Plan) -> dict:
    """A shuffled partition of reader frames: rows back in key order, then the engine.

    Each ranking must come whole from one range (the reader ranked it there); a ranking from
    two ranges (``split``) needs the file's own ranks (:func:`score_rows_part`).
    """
    part = part.sort_values("_key", kind="stable")
    keys = part["_key"].to_numpy(dtype=np.int64)
    cells = pd.DataFrame({"s": part["system"].array, "q": part["query_id"].array, "r": keys // PART})
    pieces = cells.drop_duplicates()
    split = pieces.duplicated(["s", "q"]).to_numpy()
    if split.any():
        s, q = pieces.loc[split, ["s", "q"]].iloc[0]
        return {"split": (str(s), str(q))}
    return {"scored": plan.score(part[RUN].reset_index(drop=True), keys)}


def score_rows_part(part: pd.DataFrame, plan: Plan, order: str = "rank") -> dict:
    """A shuffled partition of file rows (whole queries): rows back in file order, each
    (system, query) ordered and ranked by the TREC reader's rule, then the engine. Each row's
    key is its ranking's first row's place in the file (rankings in order of first appearance,
    as the reader of the whole file puts them)."""
    import pyarrow as pa

    from ...io.trec import order_trec

    part = part.sort_values("_key", kind="stable").reset_index(drop=True)
    if not len(part):
        return {"scored": plan.score(part[RUN].iloc[:0])}
    codes, _ = pd.factorize(pd.MultiIndex.from_arrays([part["system"].array, part["query_id"].array]))
    first = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
    first[codes[::-1]] = part["_key"].to_numpy(dtype=np.int64)[::-1]
    run = order_trec(
        pa.array(part["system"].array),
        pa.array(part["query_id"].array),
        pa.array(part["doc_id"].array),
        part["rank"].to_numpy(dtype=np.int64),
        part["score"].to_numpy(dtype=np.float64),
        order,
    )
    return {"scored": plan.score(run, np.repeat(first, np.bincount(codes)))}


def keyed_part(part: pd.DataFrame, partition_info=None) -> pd.DataFrame:
    number = partition_info["number"] if partition_info else 0
    return part.assign(_key=part_keys(number, len(part)))


def score_frame_part(part: pd.DataFrame, plan: Plan, number: int, system: str | None) -> dict:
    """One partition through the plan: its rows back in run order, then the engine.

    The rows of the partition's first and last query are set aside (``edge``, with their
    keys) rather than scored: in a run sorted by query those are the only rankings a
    partition boundary can cut, and the client scores them once put together.
    """
    if "_key" in part.columns:
        keys = part["_key"].to_numpy(dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        part, keys = part.iloc[order], keys[order]
    else:
        keys = part_keys(number, len(part))
    part = part[[c for c in RUN if c in part.columns]].reset_index(drop=True)
    if not len(part):
        return {"scored": plan.score(part), "edge": (part, keys)}
    qid = part["query_id"]
    edge = qid.isin([qid.iloc[0], qid.iloc[-1]]).to_numpy()
    inner = as_run_rows(part[~edge], system)
    return {"scored": plan.score(inner, keys[~edge]), "edge": (part[edge], keys[edge])}


def as_run_rows(rows: pd.DataFrame, system: str | None) -> pd.DataFrame:
    from ...io import as_run

    return as_run(rows.reset_index(drop=True), system=system)


def edges_scored(done: list[dict], plan: Plan, system: str | None) -> list[dict]:
    """Every partition's scored rows, and the edge rankings of all partitions as one block."""
    scored = [d["scored"] for d in done]
    rows = [d["edge"][0] for d in done if len(d["edge"][0])]
    if rows:
        keys = np.concatenate([d["edge"][1] for d in done if len(d["edge"][0])])
        order = np.argsort(keys, kind="stable")
        edges = pd.concat(rows, ignore_index=True).iloc[order]
        scored.append(plan.score(as_run_rows(edges, system), keys[order]))
    return scored


def split_message(query, system) -> str:
    return (
        f"the ranking of query {query} (system {system}) is in two places, so it cannot be scored "
        "partition by partition; sort the run by query first (TREC text: sort -s -k1,1), or pass shuffle=True"
    )


def score_moved(part: pd.DataFrame, plan: Plan, number: int, kind: str, system: str | None) -> dict:
    """A partition after the shuffle on ``query_id``, scored as its rows' source needs."""
    if kind == "reader":
        return score_reader_part(part, plan)
    if kind == "rows":
        return score_rows_part(part, plan)
    return score_frame_part(part, plan, number, system)


def bucket(part: pd.DataFrame, n: int) -> pd.DataFrame:
    """Each row's partition after the shuffle: a hash of its query id (the same rule for the
    run and the labels, so a query's rows and labels meet)."""
    values = np.asarray(part["query_id"].astype(object).to_numpy(), dtype=object)
    hashed = pd.util.hash_array(values, categorize=False) % np.uint64(n)
    return part.assign(_part=hashed.astype(np.int64))


def label_keyed(part: pd.DataFrame, partition_info=None) -> pd.DataFrame:
    number = partition_info["number"] if partition_info else 0
    return part.assign(_lkey=part_keys(number, len(part)))


def score_pair(part: pd.DataFrame, labels: pd.DataFrame, params: tuple, number: int, kind: str, system) -> dict:
    """One partition of the run with the labels of the same queries: a plan of those labels,
    built on the worker (labels back in their order: the engine reads a query's in order)."""
    labels = labels.sort_values("_lkey", kind="stable").drop(columns=["_lkey", "_part"])
    plan = Plan(labels.reset_index(drop=True), *params)
    return score_moved(part.drop(columns="_part"), plan, number, kind, system)
