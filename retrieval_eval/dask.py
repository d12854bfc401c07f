"""The engine on a Dask cluster: each partition of the run scored where it lives.

``pip install 'retrieval-eval[dask]'``. :func:`evaluate` takes a Dask DataFrame (or a path or
glob Dask reads: parquet, CSV, TREC text) and returns the same
:class:`~retrieval_eval.evaluation.Evaluation` as :func:`retrieval_eval.evaluate`. Nothing
here computes a metric: each partition goes through
:meth:`retrieval_eval.streaming.Plan.score` (the in-memory engine, on that partition's rows and
its queries' labels), the per-query rows come back to the client, and everything after the
engine runs there, as in memory.

A ranking must be scored whole. A partition scores its rows but those of its first and last
query, which the client scores together with the other partitions' (in a run sorted by query,
the only rankings a partition boundary cuts). A ranking found anywhere else in two partitions
shows in the results as a (system, query) scored twice; ``shuffle="auto"`` then scores the
run again after shuffling it on ``query_id``, each row carrying its place in the run so the
partition can put rows back in run order (the engine breaks rank ties by it, and orders
systems by their first row).
"""

from __future__ import annotations

try:
    import dask
    import dask.dataframe as dd
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "retrieval_eval.dask needs Dask: pip install 'retrieval-eval[dask]'"
    ) from None

import numpy as np
import pandas as pd

from .analysis.evaluation.streaming import Plan
from .errors import FormatError

#: A row's key: its partition's number times this plus its place in the partition.
_PART = np.int64(1) << np.int64(40)
_TREC = ["query_id", "Q0", "doc_id", "rank", "score", "system"]
_RUN = ["system", "query_id", "rank", "doc_id", "score"]


def read_run(path, fmt: str | None = None, blocksize="128MB") -> dd.DataFrame:
    """A run as a Dask DataFrame: parquet (a file, a directory, a glob), CSV with the run
    frame's columns, or TREC text (``query_id Q0 doc_id rank score run_name``).

    Parameters
    ----------
    path : str or path
        A file, a directory or a glob (local or any filesystem Dask reads).
    fmt : {"parquet", "csv", "trec"}, optional
        By default the suffix says (``.parquet``/``.pq`` or a directory: parquet, ``.csv``:
        CSV, anything else: TREC).
    blocksize : str or int, default "128MB"
        The size of a text partition.

    Returns
    -------
    dask.dataframe.DataFrame
        The run frame's columns (``system``, ``query_id``, ``rank``, ``doc_id``, ``score``
        for TREC text; a parquet or CSV file's own).

    Examples
    --------
    >>> from retrieval_eval import dask as red
    >>> ddf = red.read_run("runs/*.trec")  # doctest: +SKIP
    >>> ev = red.evaluate(judgments, ddf)  # doctest: +SKIP
    """
    import os

    text = str(path)
    if fmt is None:
        low = text.lower().rstrip("/")
        fmt = ("parquet" if low.endswith((".parquet", ".pq")) or os.path.isdir(text)
               else "csv" if low.endswith(".csv") else "trec")
    strings = {"query_id": "string", "doc_id": "string", "system": "string"}
    if fmt == "parquet":
        return dd.read_parquet(text)
    if fmt == "csv":
        return dd.read_csv(text, dtype=strings, blocksize=blocksize)
    if fmt == "trec":
        ddf = dd.read_csv(text, header=None, names=_TREC, blocksize=blocksize,
                          dtype={**strings, "Q0": "string", "rank": "int64", "score": "float64"},
                          **_trec_dialect(text))
        return ddf[["system", "query_id", "rank", "doc_id", "score"]]
    raise ValueError(f"fmt must be 'parquet', 'csv' or 'trec', got {fmt!r}")


def _trec_dialect(path: str) -> dict:
    """How pandas reads this TREC text: arrow's parser when the first line is six fields
    split by single spaces or tabs (the usual file: 3x faster), else any whitespace."""
    import glob

    first = next(iter(sorted(glob.glob(path)) or [path]))
    with open(first, "rb") as fh:
        line = fh.readline().rstrip(b"\r\n")
    for sep in (b" ", b"\t"):
        if len(line.split(sep)) == 6 and all(line.split(sep)):
            return {"sep": sep.decode(), "engine": "pyarrow"}
    return {"sep": r"\s+"}


def _keyed(part: pd.DataFrame, partition_info=None) -> pd.DataFrame:
    number = partition_info["number"] if partition_info else 0
    return part.assign(_key=np.int64(number) * _PART + np.arange(len(part), dtype=np.int64))


def _score(part: pd.DataFrame, plan: Plan, number: int, system: str | None) -> dict:
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
        keys = np.int64(number) * _PART + np.arange(len(part), dtype=np.int64)
    part = part[[c for c in _RUN if c in part.columns]].reset_index(drop=True)
    if not len(part):
        return {"scored": plan.score(part), "edge": (part, keys)}
    qid = part["query_id"]
    edge = qid.isin([qid.iloc[0], qid.iloc[-1]]).to_numpy()
    inner = _as_run(part[~edge], system)
    return {"scored": plan.score(inner, keys[~edge]), "edge": (part[edge], keys[edge])}


def _as_run(rows: pd.DataFrame, system: str | None) -> pd.DataFrame:
    from .io import as_run

    return as_run(rows.reset_index(drop=True), system=system)


def _shipped(plan: Plan):
    """The plan where every task can reach it: sent once to each worker of a distributed
    client, else one key of the graph."""
    try:
        from distributed import default_client

        return default_client().scatter(plan, broadcast=True, hash=False)
    except (ImportError, ValueError):
        return dask.delayed(plan, pure=False)


def _scores(ddf: dd.DataFrame, plan, system: str | None) -> list[dict]:
    """Every partition scored, then the edge rankings of all partitions as one block."""
    plan_ = _shipped(plan)
    work = [dask.delayed(_score, pure=True)(part, plan_, i, system)
            for i, part in enumerate(ddf.to_delayed())]
    done = dask.compute(*work)
    scored = [d["scored"] for d in done]
    rows = [d["edge"][0] for d in done if len(d["edge"][0])]
    if rows:
        keys = np.concatenate([d["edge"][1] for d in done if len(d["edge"][0])])
        order = np.argsort(keys, kind="stable")
        edges = pd.concat(rows, ignore_index=True).iloc[order]
        scored.append(plan.score(_as_run(edges, system), keys[order]))
    return scored


def evaluate(judgments, run, k=(1, 5, 10), threshold: int = 1, gain: str = "exponential",
             queries=None, negatives=None, system: str | None = None, shuffle="auto",
             npartitions: int | None = None):
    """:func:`retrieval_eval.evaluate` on a Dask DataFrame, partition by partition.

    Parameters
    ----------
    judgments
        Anything :func:`~retrieval_eval.formats.as_judgments` reads, or a Dask DataFrame
        (collected: the labels are needed whole on every worker, and are small next to a run).
    run
        A Dask DataFrame with the run frame's columns (``query_id``, ``doc_id``, and
        optionally ``system``, ``rank``, ``score``), or a path or glob :func:`read_run` reads.
    k, threshold, gain, queries, negatives, system
        As for :func:`retrieval_eval.evaluate` and :func:`~retrieval_eval.formats.as_run`.
    shuffle
        ``"auto"`` (score the partitions as they are, the rankings cut by a partition
        boundary put together on the client; if a ranking turns out to be split anywhere
        else, shuffle on ``query_id`` and score again), ``True`` (shuffle first) or
        ``False`` (refuse such a split ranking). A run sorted by query never needs a shuffle.
    npartitions
        Partitions after a shuffle (default: as many as before).

    Returns
    -------
    Evaluation
        Equal to the in-memory ``evaluate`` of the same rows in the same order. ``run`` is
        None on it: the run stays on the cluster.

    Raises
    ------
    FormatError
        With ``shuffle=False``, when a ranking is split between partitions.

    Notes
    -----
    Rows of one ranking are ordered by ``rank``; equal ranks keep the run's row order, which
    a shuffle keeps by carrying each row's place. A run without a ``rank`` column is numbered
    1..n within each ranking of each partition, so it needs whole rankings per partition.
    The head of every ranking (ranks 1-10) comes back with the per-query rows, so
    ``calibrate(judgments, ev)`` and ``compare(judgments, ev)`` give the whole run's numbers.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> import retrieval_eval as rev
    >>> from retrieval_eval import dask as red
    >>> demo = rev.load_demo()
    >>> ev = red.evaluate(demo.judgments, dd.from_pandas(demo.runs, npartitions=3))
    >>> ev.summary.equals(rev.evaluate(demo.judgments, demo.runs).summary)
    True
    """
    if shuffle not in ("auto", True, False):
        raise ValueError(f"shuffle must be 'auto', True or False, got {shuffle!r}")
    if isinstance(judgments, dd.DataFrame):
        judgments = judgments.compute()
    plan = Plan(judgments, k, threshold, gain)
    label = "run"
    if not isinstance(run, dd.DataFrame):
        label = str(run)
        run = read_run(run)
    if shuffle is not True:
        scored = _scores(run, plan, system)
        try:
            return plan.finish(scored, queries=queries, negatives=negatives, label=label)
        except FormatError:
            if shuffle is False:
                raise
    meta = run._meta.assign(_key=pd.Series(dtype="int64"))
    keyed = run.map_partitions(_keyed, meta=meta)
    moved = keyed.shuffle(on="query_id", npartitions=npartitions or run.npartitions)
    return plan.finish(_scores(moved, plan, system), queries=queries, negatives=negatives,
                       label=label)
