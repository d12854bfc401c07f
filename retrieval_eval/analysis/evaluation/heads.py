"""The head of every ranking, carried out of the blocks of a run that is never held whole.

:func:`~retrieval_eval.analysis.calibration.calibrate` reads of a run only the top of each
ranking: the rank-1 row (the top-1 score of the query) and ranks 1-10 (the rank-based-score
check), and, per system, whether any row has a score. A streamed or Dask
:class:`~retrieval_eval.analysis.result.Evaluation` keeps exactly that, block by block
(:func:`block_heads`), and puts it back in the run's order (:func:`join_heads`), so that
``calibrate(judgments, evaluation)`` and ``compare(judgments, evaluation)`` give the numbers
the whole run gives. It is at most :data:`HEAD_DEPTH` rows per ranking (a run 1,000 deep keeps
1% of its rows).

This module imports only the engine, so calibration can read it without importing the
evaluation (which imports the report, which imports calibration).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ... import arrays
from ...engine import metrics as engine

#: Rows kept per ranking: what the rank-based-score check reads (ranks 1-10).
HEAD_DEPTH = 10
_RUN = ["system", "query_id", "rank", "doc_id", "score"]


class CarriesRun:
    """A result that stands in for its run where only the head of each ranking is read.

    :func:`run_of` gives what such a result holds of its run (the run itself, when it held
    it whole, else the heads of its rankings).
    """

    def scored_run(self) -> pd.DataFrame:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def run_of(run):
    """The run calibration and comparison read: ``run``, or what an evaluation carries of it.

    Parameters
    ----------
    run : object
        A run (anything :func:`~retrieval_eval.as_run` reads), or a result that
        carries its run (an :class:`~retrieval_eval.analysis.result.Evaluation`, in memory,
        streamed or from Dask).

    Returns
    -------
    object
        ``run`` unchanged, or the evaluation's run frame (its heads when it never held the
        run whole: see :func:`join_heads`).

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs)
    >>> run_of(ev) is ev.run
    True
    """
    return run.scored_run() if isinstance(run, CarriesRun) else run


def _first_keys(block: pd.DataFrame, keys: np.ndarray) -> np.ndarray:
    """Each ranking's first key (the place of its first row in the run), rankings in order of
    first appearance in ``block`` (whose rows are in key order).

    Rankings are contiguous runs of rows in files: found where (system, query) changes, and
    only those boundaries are grouped (a ranking in several pieces takes its first piece's key).
    """
    import pyarrow as pa

    starts, _ = arrays.block_starts(
        arrays.arrow(block["system"]),
        arrays.arrow(block["query_id"]),
        pa.array(block["rank"].to_numpy(dtype=np.int64)),
        strict=False,
    )
    pieces = pd.DataFrame(
        {
            "system": block["system"].array.take(starts),
            "query_id": block["query_id"].array.take(starts),
            "first": keys[starts],
        }
    )
    return pieces.groupby(["system", "query_id"], sort=False)["first"].min().to_numpy(np.int64)


def block_heads(block: pd.DataFrame, keys: np.ndarray) -> pd.DataFrame | None:
    """The head of every ranking of one block of whole rankings, with each ranking's first key.

    Parameters
    ----------
    block : DataFrame
        A run frame of whole rankings (a block of :mod:`~retrieval_eval.analysis.streaming`,
        a Dask partition).
    keys : ndarray of int64
        Each row's place in the whole run.

    Returns
    -------
    DataFrame
        :func:`~retrieval_eval.engine.metrics.dedupe_run`'s rows of rank <= :data:`HEAD_DEPTH`
        (the run's columns), plus ``_first`` (the ranking's first key). A system whose head
        rows have no score but whose deeper rows do keeps its first scored row too, so that
        "the system has scores" reads the same as on the whole run. None for an empty block.
    """
    if not len(block):
        return None
    if not bool(np.all(keys[1:] > keys[:-1])):  # rows back in run order (a frame cut by query)
        order = np.argsort(keys, kind="stable")
        block, keys = block.iloc[order].reset_index(drop=True), keys[order]
    run = block[_RUN]
    usual = _whole_ranking_heads(run, keys)
    if usual is not None:
        return usual
    return _heads_by_scan(block, run, keys)


def _whole_ranking_heads(run: pd.DataFrame, keys: np.ndarray) -> pd.DataFrame | None:
    """:func:`block_heads` of the usual block, else None: every ranking in one piece in rank
    order, every row scored, and no key repeated among the first :data:`HEAD_DEPTH` rows of a
    ranking. Its head is then those rows (a repeat further down does not reach them), so only
    they are deduplicated (to renumber them as the scan does), not the whole block."""
    from ...engine.kernels import ranges
    from ...engine.scan import whole_ranking_starts
    from ...io.columns import rows_of

    if np.isnan(run["score"].to_numpy(dtype=np.float64)).any():
        return None
    starts = whole_ranking_starts(run)
    if starts is None:
        return None
    top = np.minimum(np.diff(np.r_[starts, len(run)]), HEAD_DEPTH)
    rows = rows_of(run, ranges(starts, top))
    head = engine.dedupe_run(rows, depth=HEAD_DEPTH)
    if len(head) != len(rows):  # a key repeated near the top: the whole rankings decide
        return None
    head["_first"] = np.repeat(keys[starts], top)
    return head


def _heads_by_scan(block: pd.DataFrame, run: pd.DataFrame, keys: np.ndarray) -> pd.DataFrame:
    """:func:`block_heads` of any block: the scan of every row, NaN scores looked after."""
    head = engine.dedupe_run(run, depth=HEAD_DEPTH)
    ranking = np.cumsum(head["rank"].to_numpy() == 1) - 1
    head["_first"] = _first_keys(run, keys)[ranking]
    scored = block.loc[block["score"].notna().to_numpy(), "system"].unique()
    shown = head.loc[head["score"].notna().to_numpy(), "system"].unique()
    deeper = [s for s in scored if s not in set(shown)]
    if deeper:  # rare: scores only below the head; the first deduplicated scored row of each
        sub = block["system"].isin(deeper).to_numpy()
        whole = engine.dedupe_run(run[sub].reset_index(drop=True))
        sub_first = _first_keys(run[sub].reset_index(drop=True), keys[sub])
        whole["_first"] = sub_first[np.cumsum(whole["rank"].to_numpy() == 1) - 1]
        extra = whole[whole["score"].notna().to_numpy()].drop_duplicates("system")
        head = pd.concat([head, extra], ignore_index=True)
    return head


def join_heads(parts: Sequence[pd.DataFrame | None]) -> tuple[pd.DataFrame | None, str | None]:
    """The heads of all blocks as the whole run's: rankings in order of first appearance, rows
    by rank (the order :func:`~retrieval_eval.engine.metrics.dedupe_run` gives the whole run).

    Returns
    -------
    tuple
        ``(frame, None)``, or ``(None, why)`` when a ranking was found in two blocks (an
        unjudged query's lines in two places of the file: its metrics are not affected, but
        its top-1 score would be read from half a ranking).
    """
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return _empty_like(), None
    heads = pd.concat(parts, ignore_index=True)
    order = np.lexsort((heads["rank"].to_numpy(), heads["_first"].to_numpy()))
    heads = heads.iloc[order].drop(columns="_first").reset_index(drop=True)
    tops = heads.loc[heads["rank"].to_numpy() == 1, ["system", "query_id"]]
    if tops.duplicated().any():
        s, q = tops[tops.duplicated()].iloc[0]
        return None, (
            f"the ranking of query {q} (system {s}) is in two places of the run, so "
            "its top-1 score was not kept; sort the run by query first"
        )
    return heads, None


def _empty_like() -> pd.DataFrame:
    from ...io import empty_run

    return empty_run()[_RUN]
