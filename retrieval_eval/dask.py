"""The engine on a Dask cluster: each partition of the run scored where it lives.

``pip install 'retrieval-eval[dask]'``. :func:`evaluate` takes a Dask DataFrame (or a path or
glob: parquet, CSV, TREC text) and returns the same
:class:`~retrieval_eval.evaluation.Evaluation` as :func:`retrieval_eval.evaluate`. Nothing
here computes a metric: each partition goes through
:meth:`retrieval_eval.streaming.Plan.score` (the in-memory engine, on that partition's rows and
its queries' labels), the per-query rows come back to the client, and everything after the
engine runs there, as in memory.

TREC text is cut into byte ranges of whole queries (:mod:`retrieval_eval.io.byte_ranges`), each
read by the package's own TREC reader on the worker: the same answer, or the same one-line
error with the line counted in the file, as :func:`retrieval_eval.read_trec_run`. A ranking
found in two ranges (its query's lines in two places) is refused with ``shuffle=False``; with
``shuffle="auto"`` the ranges are read again as rows with the file's own ranks, shuffled on
``query_id`` and each query's rows put back in file order and ranked by the reader's rule
(:func:`~retrieval_eval.io.trec.order_trec`).

A Dask DataFrame is scored partition by partition: a partition scores its rows but those of
its first and last query, which the client scores together with the other partitions' (in a
run sorted by query, the only rankings a partition boundary cuts). A ranking found anywhere
else in two partitions shows as a (system, query) scored twice; ``shuffle="auto"`` then
shuffles the run on ``query_id``, each row carrying its place in the run so the partition can
put rows back in run order (the engine breaks rank ties by it, and orders systems by their
first row).

The labels are sent whole to every worker (``labels="broadcast"``), or, for large labels
(``labels="partitioned"``), shuffled on ``query_id`` with the run into the same partitions
(co-partitioned), so that a worker holds only its partition's labels.

The tasks' functions live in :mod:`retrieval_eval.analysis.evaluation.partitions`, which does
not import Dask's dataframe module: a worker imports only what it runs.
"""

from __future__ import annotations

try:
    import dask
    import dask.dataframe as dd
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError("retrieval_eval.dask needs Dask: pip install 'retrieval-eval[dask]'") from None

import os
from typing import Any

import pandas as pd

from .analysis.evaluation.partitions import (
    ROWS,
    RUN,
    bucket,
    edges_scored,
    keyed_part,
    keyed_range,
    keyed_rows,
    label_keyed,
    range_error,
    score_frame_part,
    score_moved,
    score_pair,
    score_range,
    split_message,
)
from .analysis.evaluation.streaming import Plan
from .errors import FormatError
from .io.byte_ranges import ByteRange, byte_ranges

#: Above this many labels, ``labels="auto"`` partitions the labels with the run instead of
#: sending them whole to every worker (about 90 bytes a label on each worker: 450 MB).
BROADCAST_MAX_LABELS = 5_000_000

#: The label columns a worker's plan reads (the engine's; the client keeps every column).
_LABEL_COLUMNS = ["query_id", "doc_uri", "chunk_id", "relevance", "stratum"]


def _format(path: str, fmt: str | None) -> str:
    if fmt is None:
        low = path.lower().rstrip("/")
        if low.endswith((".parquet", ".pq")) or os.path.isdir(path):
            return "parquet"
        return "csv" if low.endswith(".csv") else "trec"
    if fmt not in ("parquet", "csv", "trec"):
        raise ValueError(f"fmt must be 'parquet', 'csv' or 'trec', got {fmt!r}")
    return fmt


def read_run(path, fmt: str | None = None, blocksize="128MB") -> dd.DataFrame:
    """A run as a Dask DataFrame: parquet (a file, a directory, a glob), CSV with the run
    frame's columns, or TREC text (``query_id Q0 doc_id rank score run_name``).

    Parameters
    ----------
    path : str or path
        A file, a directory or a glob (local or any filesystem Dask reads; TREC text: local).
    fmt : {"parquet", "csv", "trec"}, optional
        By default the suffix says (``.parquet``/``.pq`` or a directory: parquet, ``.csv``:
        CSV, anything else: TREC).
    blocksize : str or int, default "128MB"
        The size of a text partition.

    Returns
    -------
    dask.dataframe.DataFrame
        The run frame's columns (``system``, ``query_id``, ``rank``, ``doc_id``, ``score``
        for TREC text, the ranks as written, rows in file order, each byte range checked by the
        package's TREC reader; a parquet or CSV file's own).

    Notes
    -----
    To score TREC text, pass the path itself to :func:`evaluate`: it reads each range with the
    reader's fast path and needs no shuffle for a run whose queries' lines stand together.

    Examples
    --------
    >>> from retrieval_eval import dask as red
    >>> ddf = red.read_run("runs/*.trec")  # doctest: +SKIP
    >>> ev = red.evaluate(judgments, ddf)  # doctest: +SKIP
    """
    text = str(path)
    fmt = _format(text, fmt)
    if fmt == "parquet":
        return dd.read_parquet(text)
    if fmt == "csv":
        strings = {"query_id": "string", "doc_id": "string", "system": "string"}
        return dd.read_csv(text, dtype=strings, blocksize=blocksize)
    ranges = byte_ranges(text, blocksize)
    return _row_frames(ranges, None)[RUN]


# --------------------------------------------------------------------------------------------
# TREC text in byte ranges.


def _meta(columns: list[str]) -> pd.DataFrame:
    from .io import empty_run

    return empty_run()[columns].assign(_key=pd.Series(dtype="int64"))


def _reader_frames(ranges: list[ByteRange], system: str | None) -> dd.DataFrame:
    parts = [dask.delayed(keyed_range, pure=True)(r, system) for r in ranges]
    return dd.from_delayed(parts, meta=_meta(RUN), verify_meta=False)


def _row_frames(ranges: list[ByteRange], system: str | None) -> dd.DataFrame:
    parts = [dask.delayed(keyed_rows, pure=True)(r, system) for r in ranges]
    return dd.from_delayed(parts, meta=_meta(ROWS), verify_meta=False)


def first_error(ranges: list[ByteRange], system: str | None) -> None:
    """Raise the error of the first range the reader refuses (the whole file's first bad
    line), if any: a task's exception would be whichever the scheduler met first."""
    found = dask.compute(*[dask.delayed(range_error, pure=True)(r, system) for r in ranges])
    err = _whole_file_error(list(found))
    if err is not None:
        raise err


def _whole_file_error(errors: list[FormatError | None]) -> FormatError | None:
    """Of the ranges' errors, the one the reader of the whole file gives: in the first file
    with one, its first invalid UTF-8 (the reader checks a file's encoding before its fields),
    else its first bad line."""
    found = [e for e in errors if e is not None]
    if not found:
        return None
    first = [e for e in found if e.label == found[0].label]
    return next((e for e in first if e.detail.startswith("not valid UTF-8")), first[0])


def _ranges_unshuffled(ranges: list[ByteRange], plan: Plan, system: str | None) -> list[dict]:
    plan_ = _shipped(plan)
    done = dask.compute(*[dask.delayed(score_range, pure=True)(r, plan_, system) for r in ranges])
    err = _whole_file_error([d.get("error") for d in done])
    if err is not None:
        raise err
    return [d["scored"] for d in done]


# --------------------------------------------------------------------------------------------
# A Dask DataFrame (parquet, CSV, or the caller's own).


def _shipped(plan: Plan):
    """The plan where every task can reach it: sent once to each worker of a distributed
    client, else one key of the graph."""
    try:
        from distributed import default_client

        return default_client().scatter(plan, broadcast=True, hash=False)
    except (ImportError, ValueError):
        return dask.delayed(plan, pure=False)


def _frames_unshuffled(ddf: dd.DataFrame, plan: Plan, system: str | None) -> list[dict]:
    plan_ = _shipped(plan)
    work = [dask.delayed(score_frame_part, pure=True)(p, plan_, i, system) for i, p in enumerate(ddf.to_delayed())]
    return edges_scored(list(dask.compute(*work)), plan, system)


def keyed_frame(ddf: dd.DataFrame) -> dd.DataFrame:
    """The caller's Dask DataFrame with each row's place in the run (``_key``)."""
    return ddf.map_partitions(keyed_part, meta=ddf._meta.assign(_key=pd.Series(dtype="int64")))


# --------------------------------------------------------------------------------------------
# The entry point.


def evaluate(  # long: numpydoc (the body is its steps: label_mode, _source, _Context)
    judgments,
    run,
    k=(1, 5, 10),
    threshold: int = 1,
    gain: str = "exponential",
    queries=None,
    negatives=None,
    system: str | None = None,
    shuffle="auto",
    npartitions: int | None = None,
    labels: str = "auto",
    blocksize: int | str = "128MB",
):
    """:func:`retrieval_eval.evaluate` on a Dask DataFrame, partition by partition.

    Parameters
    ----------
    judgments
        Anything :func:`~retrieval_eval.formats.as_judgments` reads, a Dask DataFrame or a
        parquet dataset (the client holds the labels whole to build the result; the workers
        hold them whole or their partition's share, see ``labels``).
    run
        A Dask DataFrame with the run frame's columns (``query_id``, ``doc_id``, and
        optionally ``system``, ``rank``, ``score``), or a path or glob (parquet and CSV as
        :func:`read_run` reads them; TREC text in byte ranges read by the package's reader).
    k, threshold, gain, queries, negatives, system
        As for :func:`retrieval_eval.evaluate` and :func:`~retrieval_eval.formats.as_run`.
    shuffle
        ``"auto"`` (score the partitions as they are; if a ranking turns out to be split
        between them, shuffle on ``query_id`` and score again), ``True`` (shuffle first) or
        ``False`` (refuse such a split ranking). A run sorted by query never needs a shuffle.
    npartitions
        Partitions after a shuffle (default: as many as before).
    labels
        ``"broadcast"`` (every worker gets all the labels), ``"partitioned"`` (labels and run
        shuffled on ``query_id`` into the same partitions: a worker holds its queries' labels
        only) or ``"auto"``: partitioned for a Dask DataFrame, a parquet dataset or more than
        :data:`BROADCAST_MAX_LABELS` labels, else broadcast.
    blocksize
        The size of a byte range of TREC text (a path given as ``run``).

    Returns
    -------
    Evaluation
        Equal to the in-memory ``evaluate`` of the same rows in the same order (for TREC text:
        of the files, concatenated in sorted order). ``run`` is None on it: the run stays on
        the cluster.

    Raises
    ------
    FormatError
        A malformed TREC line (the reader's message, with the line in the file), a glob that
        matches no file, or with ``shuffle=False`` a ranking split between partitions.

    Notes
    -----
    Rows of one ranking are ordered by ``rank``; equal ranks keep the run's row order (TREC
    text: the reader's rule, doc id then line order), which a shuffle keeps by carrying each
    row's place. A run without a ``rank`` column is numbered 1..n within each ranking of each
    partition, so it needs whole rankings per partition. The head of every ranking (ranks
    1-10) comes back with the per-query rows, so ``calibrate(judgments, ev)`` and
    ``compare(judgments, ev)`` give the whole run's numbers.

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
    label_mode(judgments, labels)  # a bad option refused before anything is read
    plan = Plan(labels_whole(judgments), k, threshold, gain)
    mode = label_mode(judgments, labels, len(plan.judgments))
    source, label = _source(run, blocksize)
    ctx = _Context(plan, judgments, mode, system, npartitions, label)
    finish = dict(queries=queries, negatives=negatives, label=label)
    if mode == "broadcast" and shuffle is not True:
        scored = ctx.unshuffled(source)
        try:
            return plan.finish(scored, **finish)
        except FormatError:
            if shuffle is False:
                raise
        # A ranking in two places: for TREC text, straight to the rows with the file's ranks.
        return plan.finish(ctx.shuffled(source, refuse_split=False, split=True), **finish)
    return plan.finish(ctx.shuffled(source, refuse_split=shuffle is False), **finish)


def _source(run, blocksize) -> tuple[Any, str]:
    """The run as byte ranges (TREC text) or a Dask DataFrame, and its label in messages."""
    if isinstance(run, dd.DataFrame):
        return run, "run"
    text = str(run)
    if _format(text, None) == "trec":
        return byte_ranges(text, blocksize), text
    return read_run(text, blocksize=blocksize), text


class _Context:
    """What one evaluation's scoring passes share: the plan, the label mode, the options."""

    def __init__(self, plan: Plan, judgments, mode: str, system: str | None, npartitions: int | None, label: str):
        self.plan, self.judgments, self.mode, self.label = plan, judgments, mode, label
        self.system, self.npartitions = system, npartitions

    def unshuffled(self, source) -> list[dict]:
        """Every partition scored where it is, the labels broadcast."""
        if isinstance(source, list):
            return _ranges_unshuffled(source, self.plan, self.system)
        return _frames_unshuffled(source, self.plan, self.system)

    def shuffled(self, source, refuse_split: bool, split: bool = False) -> list[dict]:
        """The run shuffled on ``query_id`` (with the labels when partitioned), then scored.

        TREC text is shuffled as the reader's frames, unless a ranking is known (``split``) or
        found to be in two ranges: then as rows with the file's own ranks.
        """
        if not isinstance(source, list):
            moved = keyed_frame(source)
            done = self._moved(moved, source.npartitions, "frame")
            return edges_scored(done, self.plan, self.system)
        if not split:
            try:
                done = self._moved(_reader_frames(source, self.system), len(source), "reader")
            except FormatError:
                first_error(source, self.system)
                raise
            if not any(d.get("split") for d in done):
                return [d["scored"] for d in done]
        if refuse_split:
            s, q = next(d["split"] for d in done if d.get("split"))
            raise FormatError(self.label, None, split_message(q, s))
        return [d["scored"] for d in self._moved(_row_frames(source, self.system), len(source), "rows")]

    def _moved(self, keyed: dd.DataFrame, npartitions: int, kind: str) -> list[dict]:
        n = self.npartitions or npartitions
        if self.mode == "partitioned":
            return partitioned_scores(keyed, self.judgments, self.plan, n, kind, self.system)
        moved = keyed.shuffle(on="query_id", npartitions=n)
        plan_ = _shipped(self.plan)
        return list(
            dask.compute(
                *[
                    dask.delayed(score_moved, pure=True)(p, plan_, i, kind, self.system)
                    for i, p in enumerate(moved.to_delayed())
                ]
            )
        )


# --------------------------------------------------------------------------------------------
# The labels: broadcast, or partitioned with the run.


def _parquet_path(obj) -> bool:
    if not isinstance(obj, (str, os.PathLike)):
        return False
    text = str(obj).lower().rstrip("/")
    return text.endswith((".parquet", ".pq")) or os.path.isdir(str(obj))


def label_mode(judgments, labels: str, count: int | None = None) -> str:
    """``"broadcast"`` or ``"partitioned"``: what ``labels="auto"`` means for these labels
    (``count``: how many there are, once read; else a frame's length)."""
    if labels not in ("auto", "broadcast", "partitioned"):
        raise ValueError(f"labels must be 'auto', 'broadcast' or 'partitioned', got {labels!r}")
    if labels != "auto":
        return labels
    if isinstance(judgments, dd.DataFrame) or _parquet_path(judgments):
        return "partitioned"
    if count is None:
        count = len(judgments) if isinstance(judgments, pd.DataFrame) else 0
    return "partitioned" if count > BROADCAST_MAX_LABELS else "broadcast"


def labels_whole(judgments):
    """The labels as the client holds them (a Dask DataFrame collected, a parquet dataset
    read), or as given for :class:`Plan` to read."""
    if isinstance(judgments, dd.DataFrame):
        return judgments.compute()
    if _parquet_path(judgments):
        return dd.read_parquet(str(judgments)).compute()
    return judgments


def _label_frame(judgments, plan: Plan) -> dd.DataFrame:
    """The labels as a Dask DataFrame, each row with its place (``_lkey``): the caller's Dask
    DataFrame or parquet dataset as it is (the workers read it), else the client's frame."""
    if isinstance(judgments, dd.DataFrame):
        ddf = judgments
    elif _parquet_path(judgments):
        ddf = dd.read_parquet(str(judgments))
    else:
        frame = plan.judgments[[c for c in _LABEL_COLUMNS if c in plan.judgments.columns]]
        ddf = dd.from_pandas(frame, npartitions=max(1, -(-len(frame) // 1_000_000)), sort=False)
    meta = ddf._meta.assign(_lkey=pd.Series(dtype="int64"))
    return ddf.map_partitions(label_keyed, meta=meta)


def _moved_by_query(ddf: dd.DataFrame, n: int) -> dd.DataFrame:
    meta = ddf._meta.assign(_part=pd.Series(dtype="int64"))
    return ddf.map_partitions(bucket, n, meta=meta).shuffle(on="_part", npartitions=n)


def partitioned_scores(keyed: dd.DataFrame, judgments, plan: Plan, n: int, kind: str, system: str | None) -> list[dict]:
    """The run and the labels shuffled on ``query_id`` into the same ``n`` partitions, each
    pair scored by a plan of that partition's labels only."""
    run_parts = _moved_by_query(keyed, n).to_delayed()
    label_parts = _moved_by_query(_label_frame(judgments, plan), n).to_delayed()
    params = (plan.ks, plan.threshold, plan.gain)
    work = [
        dask.delayed(score_pair, pure=True)(r, lab, params, i, kind, system)
        for i, (r, lab) in enumerate(zip(run_parts, label_parts))
    ]
    return list(dask.compute(*work))
