"""Runs larger than memory: the engine applied block by block, one block of whole queries at a time.

The metrics of a (system, query) cell depend only on that system's ranking of the query and on
the query's labels, so a run can be cut between queries, each block scored by
:func:`retrieval_eval.metrics.compute` against the labels of its own queries, and the per-query
rows put back together. This module does only the cutting and the putting back; every number
comes from the in-memory engine, called once per block, and everything after the engine
(strata, negatives, summary) is :func:`retrieval_eval.evaluation.evaluate`'s own code. The
same per-block function (:meth:`Plan.score`, around :func:`block_metrics`) is what
:mod:`retrieval_eval.dask` runs per partition and what the Spark recipe in ``docs/scale.md``
runs per group.

The one thing a block cannot see is a ranking cut in two: a query whose lines stand in two
places of the file. Every (system, query) cell a block scores is checked against the cells of
every other block before any number is returned, and a cell seen twice stops the evaluation
with a one-line :class:`~retrieval_eval.errors.FormatError` (sort the run by query first),
never with a number computed from half a ranking.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from ... import arrays
from ...engine import kernels
from ...engine import metrics as engine
from ...engine.metrics import ID
from ...engine.remembered import found_once
from ...errors import FormatError
from .blocks import (
    FIRST_BYTES_PER_ROW,
    JudgmentIndex,
    frame_blocks,
    is_parquet,
    parquet_blocks,
    read_ahead,
    relabel,
    trailing_query,  # noqa: F401 (the old path retrieval_eval.streaming names it)
    trec_blocks,
)
from .blocks import JUDGMENT_COLUMNS as _JUDGMENT_COLUMNS
from .heads import block_heads, join_heads
from .result import finish_evaluation, negative_id_list
from .strata import stratum_keys, stratum_run


def block_metrics(
    judgments,
    run: pd.DataFrame,
    k=(10,),
    threshold: int = 1,
    gain: str = "exponential",
    index: JudgmentIndex | None = None,
) -> pd.DataFrame:
    """Per-query rows of the (system, query) cells ``run`` ranks: the engine on one block.

    ``run`` is a run frame (or anything :func:`~retrieval_eval.formats.as_run` reads) holding
    whole rankings; ``judgments`` every label (``index``: a :class:`JudgmentIndex` of them,
    built once for many blocks). Returns :func:`retrieval_eval.metrics.compute`'s rows for
    the judged queries the block ranks, only the cells with a ranking (``missing`` False):
    a cell with no ranking in this block may have one in another, and the cells no block
    ranks are filled in once, by :func:`assemble`. ``attrs["systems"]`` lists the block's
    systems in order of appearance (an unjudged query's ranking still names its system).
    """
    from ...io import as_judgments, as_run

    run = as_run(run)
    if index is None:
        index = JudgmentIndex(as_judgments(judgments))
    qids = _queries(run)
    out = engine.compute(index.take(qids), run, k=k, threshold=threshold, gain=gain)
    systems = out.attrs["systems"] if len(run) else []
    out = out[~out["missing"].to_numpy()].reset_index(drop=True)
    out.attrs["systems"] = list(systems)
    return out


def _queries(run: pd.DataFrame):
    """The distinct query ids of a run frame (arrow strings, in order of first appearance):
    those of its rankings' first rows, where the engine finds the rankings (found once per
    block, see :meth:`Plan.score`)."""
    import pyarrow.compute as pc

    from ...engine.scan import ranking_starts

    starts, _ = ranking_starts(run)
    return pc.unique(arrays.take(arrays.arrow(run["query_id"]), starts))


def _template(judgments: pd.DataFrame, k, threshold, gain) -> pd.DataFrame:
    """The engine's row of every judged query for a system that ranked nothing."""
    from ...io import empty_run

    return engine.compute(judgments[_JUDGMENT_COLUMNS], empty_run(), k=k, threshold=threshold, gain=gain)


def assemble(
    judgments: pd.DataFrame, parts: Iterable[pd.DataFrame], systems, k, threshold, gain, label: str = "run"
) -> pd.DataFrame:
    """The engine's per-query frame of a whole run, from the frames of its blocks.

    ``parts`` are :func:`block_metrics` frames; ``systems`` every system of the run in order
    of first appearance (none: ``["run"]``, as the engine names an empty run's system). The
    result equals :func:`retrieval_eval.metrics.compute` on the whole run, row for row:
    systems in that order, queries in judgment order, and each cell no block ranked filled
    with the engine's own row for an unanswered query. A cell two blocks both ranked (a
    ranking cut in two) raises :class:`~retrieval_eval.errors.FormatError` naming it.
    """
    template = _template(judgments, k, threshold, gain)
    systems = pd.Index(list(systems) or ["run"], dtype=ID)
    queries = pd.Index(template["query_id"].array, dtype=ID)
    parts = [p for p in parts if len(p)]
    present = pd.concat(parts, ignore_index=True) if parts else template.iloc[:0]
    nq, ns = len(queries), len(systems)
    cell = kernels.lookup(present["system"], systems) * nq + kernels.lookup(present["query_id"], queries)
    repeated = kernels.repeats(cell)
    if repeated.any():
        at = int(np.flatnonzero(repeated)[0])
        raise FormatError(label, None, _cut_message(present["query_id"].iloc[at], present["system"].iloc[at]))
    absent = np.ones(ns * nq, dtype=bool)
    absent[cell] = False
    fill = np.flatnonzero(absent)
    filler = template.iloc[fill % nq].reset_index(drop=True) if nq else template
    filler["system"] = pd.array(systems.to_numpy()[fill // nq] if nq else [], dtype=ID)
    rows = pd.concat([present, filler], ignore_index=True)
    out = rows.iloc[np.argsort(np.r_[cell, fill], kind="stable")].reset_index(drop=True)
    out.attrs = {"systems": list(systems)}
    return out


def _cut_message(query, system) -> str:
    return (
        f"the ranking of query {query} (system {system}) is in two places, so it cannot "
        "be read in blocks; sort the run by query first (TREC text: sort -s -k1,1), or "
        "evaluate it in memory (chunk_rows=None)"
    )


# --------------------------------------------------------------------------------------------
# Blocks of whole queries, from a file or a frame.


def run_blocks(run, chunk_rows: int, system: str | None = None, order: str = "rank") -> Iterator[pd.DataFrame]:
    """The run as run frames of about ``chunk_rows`` rows, each of whole queries.

    A path is read a block at a time: a TREC run or a run JSONL (as
    :func:`~retrieval_eval.formats.as_run` tells them apart) or a parquet file or dataset
    directory (columns of the run frame). A block is cut after a query's last line, so a query
    longer than ``chunk_rows`` makes one longer block; a malformed line raises the reader's
    :class:`~retrieval_eval.errors.FormatError` with the file's own line number. Anything else
    is read whole by :func:`~retrieval_eval.formats.as_run` and cut into blocks in memory.
    """
    for block, _ in _blocks(run, chunk_rows, system, order):
        yield block


def _blocks(
    run, chunk_rows: int, system: str | None = None, order: str = "rank"
) -> Iterator[tuple[pd.DataFrame, np.ndarray]]:
    """:func:`run_blocks`, each block with its rows' places in the run (their keys)."""
    from ...io import as_run
    from ...io.detect import jsonish
    from ...io.text import is_path as _is_path

    if not isinstance(chunk_rows, (int, np.integer)) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    if not _is_path(run):
        yield from frame_blocks(as_run(run, system=system), int(chunk_rows))
        return
    if is_parquet(run):
        blocks = parquet_blocks(run, int(chunk_rows), system)
    elif jsonish(run, None):  # the io layer's one rule: JSON by name or first character
        blocks = _jsonl_blocks(run, int(chunk_rows), system)
    else:
        blocks = trec_blocks(run, int(chunk_rows), system, order)
    offset = 0
    for block in blocks:
        yield block, offset + np.arange(len(block), dtype=np.int64)
        offset += len(block)


def _lines(path, first_bytes: int) -> Generator[tuple[bytes, int], int | None, None]:
    """Blocks of whole lines of a file, with the byte offset of each block in the file.

    The generator is sent the size of the next block (in bytes) after each one.
    """
    from ...io.text import read_error as _read_error

    size = first_bytes
    offset = 0
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed by the blocks it yields, past this function)
    except OSError as err:
        raise _read_error(path, err) from None
    with fh:
        while True:
            data = fh.read(size)
            if not data:
                return
            if not data.endswith(b"\n"):
                rest = fh.readline()
                if rest:
                    data = b"".join((data, rest))
            got = yield data, offset
            offset += len(data)
            if got:
                size = got


def _jsonl_blocks(path, chunk_rows: int, system) -> Iterator[pd.DataFrame]:
    """A run JSONL read in blocks of whole lines (a line is a whole ranking)."""
    from ...io import parse_run

    label = str(path)
    reader = _lines(path, chunk_rows * FIRST_BYTES_PER_ROW)
    size = None
    while True:
        try:
            data, at = reader.send(size) if size else next(reader)
        except StopIteration:
            return
        if not data.strip():
            continue
        try:
            frame = parse_run(data, label=label, system=system)
        except FormatError as err:
            raise relabel(err, path, at) from None
        size = max(256, int(len(data) / max(len(frame), 1) * chunk_rows))
        yield frame


# --------------------------------------------------------------------------------------------
# The streamed evaluation.


class Plan:
    """What scoring a block needs, built once from the judgments, and how blocks' results
    become one :class:`~retrieval_eval.evaluation.Evaluation`.

    A plan is plain data (frames and arrays): :mod:`retrieval_eval.dask` sends it to each
    worker once. :meth:`score` runs the engine on one block; :meth:`finish` puts the blocks'
    rows together (:func:`assemble`) and hands the per-query frame to the code every path
    shares (:func:`~retrieval_eval.analysis.result.finish_evaluation`).
    """

    def __init__(self, judgments, k=(1, 5, 10), threshold: int = 1, gain: str = "exponential"):
        from ...io import as_judgments
        from ...io.absent import judgments_meaning

        # The labels as in-memory evaluate reads them: an empty optional field is an absent one.
        self.judgments = judgments_meaning(as_judgments(judgments))
        self.ks = engine.check_ks(k)
        if gain not in engine.GAINS:
            raise ValueError(f"gain must be one of {engine.GAINS}, got {gain!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) or threshold < 1:
            raise ValueError(f"threshold must be an integer >= 1, got {threshold!r}")
        self.threshold, self.gain = int(threshold), gain
        self.index = JudgmentIndex(self.judgments)
        # A query labelled in several strata is also scored per (stratum, query) (see
        # strata.stratum_table): each block does that too.
        self.spanning = engine.strata_span_queries(self.judgments)
        self.j2 = self.mapping = self.composite = None
        if self.spanning:
            self.j2, self.mapping = stratum_keys(self.judgments)
            self.composite = self.j2["query_id"].array

    def __getstate__(self) -> dict:
        # A worker needs only what ``score`` reads: the labels' engine columns, not every
        # column of the judgments (:meth:`finish` runs where the plan was made).
        return {**self.__dict__, "judgments": None, "j2": None}

    def score(self, block: pd.DataFrame, keys: np.ndarray | None = None) -> dict:
        """The engine on one block of whole queries (a run frame, rows in file order).

        ``keys``: each row's place in the whole run (default 0, 1, 2...). Returns
        the block's per-query rows (``rows``, see :func:`block_metrics`) and each system's
        first key (``first``), and the same two for the (stratum, query) frame when
        queries span strata (``rows2``, ``first2``; that frame's systems are those ranking a
        judged query, as in memory).
        """
        keys = np.arange(len(block), dtype=np.int64) if keys is None else keys
        out: dict[str, Any] = {"rows": None, "first": {}, "rows2": None, "first2": {}, "heads": None}
        if not len(block):
            return out
        with found_once():  # the heads, the queries and the engine find the block's rankings once
            self._score(block, keys, out)
        return out

    def _score(self, block: pd.DataFrame, keys: np.ndarray, out: dict[str, Any]) -> None:
        # The order matters: the block's rankings are remembered until another frame's are
        # found, and the heads find those of their own rows last.
        out["rows"] = block_metrics(None, block, self.ks, self.threshold, self.gain, index=self.index)
        qids = _queries(block) if self.spanning else None
        out["heads"] = block_heads(block, keys)
        out["first"] = _first_keys(block["system"], keys)
        if self.spanning:
            judged = self.index.judged(block["query_id"])
            assert self.mapping is not None and self.composite is not None  # set with spanning
            r2 = stratum_run(block, self.mapping)
            if len(r2):
                rows = self.index.rows(qids)
                labels = self.index.frame.iloc[rows].assign(query_id=self.composite.take(rows))
                pq2 = engine.compute(labels, r2, k=self.ks, threshold=self.threshold, gain=self.gain)
                out["rows2"] = pq2[~pq2["missing"].to_numpy()]
                out["first2"] = _first_keys(block["system"][judged], keys[judged])

    def finish(
        self, scored: list[dict], queries=None, negatives=None, empty=(), label: str = "run", heads: bool = True
    ):
        """The :class:`~retrieval_eval.evaluation.Evaluation` of the blocks' results.

        Systems are ordered by their first row in the run, as the engine orders them.
        """
        negs = negative_id_list(queries, negatives)
        empty = list(empty)
        parts = [s["rows"] for s in scored if s["rows"] is not None]
        _check_empty(empty, parts, label)
        per_query = assemble(
            self.judgments, parts, _ordered(scored, "first"), self.ks, self.threshold, self.gain, label=label
        )
        by_stratum = None
        if self.spanning:
            assert self.j2 is not None  # set with spanning
            by_stratum = assemble(
                self.j2,
                [s["rows2"] for s in scored if s["rows2"] is not None],
                _ordered(scored, "first2"),
                self.ks,
                self.threshold,
                self.gain,
                label=label,
            )
        kept, note = (
            join_heads([s.get("heads") for s in scored])
            if heads
            else (None, "the rows were scored without keeping their rankings' heads")
        )
        return finish_evaluation(
            self.judgments,
            None,
            per_query,
            self.ks,
            self.threshold,
            self.gain,
            queries,
            negs,
            empty=empty,
            by_stratum=by_stratum,
            heads=kept,
            heads_note=note,
        )

    # -- for frameworks that score groups themselves (the Spark recipe in docs/scale.md) ------

    def schema(self) -> str:
        """The Spark DDL schema of :meth:`score`'s ``rows`` (``applyInPandas``' ``schema=``)."""
        types = {"string": "string", "int64": "bigint", "bool": "boolean", "float64": "double"}
        frame = _template(self.index.frame.iloc[:0], self.ks, self.threshold, self.gain)
        return ", ".join(f"`{c}` {types[str(t)]}" for c, t in frame.dtypes.items())

    def score_rows(self, part: pd.DataFrame) -> pd.DataFrame:
        """:meth:`score`'s ``rows`` for a frame of whole rankings that carries each row's place
        in the run as ``_key``: the function Spark's ``applyInPandas`` calls per query (a
        group's rows arrive in no particular order, so they are put back in key order)."""
        from ...io import as_run

        part = part.sort_values("_key", kind="stable")
        keys = part["_key"].to_numpy(dtype=np.int64)
        run = as_run(
            part[[c for c in ("system", "query_id", "rank", "doc_id", "score") if c in part.columns]].reset_index(
                drop=True
            )
        )
        rows = self.score(run, keys)["rows"]
        return rows if rows is not None else _template(self.index.frame.iloc[:0], self.ks, self.threshold, self.gain)

    def finish_rows(self, rows: pd.DataFrame, first: dict, queries=None, negatives=None):
        """:meth:`finish` from the rows every group returned, collected in one frame, and each
        system's first key (``{system: smallest key}``: the systems' order in the run).

        Refused when a query is labelled in several strata: the (stratum, query) frame the
        per-stratum table then needs is not among the rows (use :meth:`score`'s ``rows2``).
        """
        if self.spanning:
            raise ValueError(
                "some queries are labelled in several strata: finish_rows has no "
                "(stratum, query) rows for them; collect score()'s rows2 and use finish"
            )
        rows = rows.astype(_template(self.index.frame.iloc[:0], self.ks, self.threshold, self.gain).dtypes.to_dict())
        return self.finish(
            [{"rows": rows, "first": dict(first), "rows2": None, "first2": {}}],
            queries=queries,
            negatives=negatives,
            heads=False,
        )


def _first_keys(system, keys: np.ndarray) -> dict:
    """Each system's smallest key: the place of its first row in the run."""
    if not len(keys):
        return {}
    arr = arrays.arrow(system)
    if kernels.one_value(arr):  # the usual block: one system (its column's chunks say so)
        return {arr[0].as_py(): int(keys.min())}
    codes, names = arrays.codes(arr)
    first = np.full(len(names), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, codes, keys)
    return dict(zip(names.tolist(), first.tolist()))


def _ordered(scored: list[dict], field: str) -> list[str]:
    first: dict[str, int] = {}
    for s in scored:
        for name, key in s[field].items():
            first[name] = min(key, first.get(name, key))
    return sorted(first, key=first.__getitem__)


def evaluate_streamed(
    judgments,
    run,
    k=(1, 5, 10),
    threshold: int = 1,
    gain: str = "exponential",
    queries=None,
    negatives=None,
    chunk_rows: int = 1_000_000,
    system: str | None = None,
):
    """:func:`retrieval_eval.evaluation.evaluate`, reading the run in blocks of whole queries.

    Parameters
    ----------
    judgments
        Anything :func:`~retrieval_eval.formats.as_judgments` reads; held whole (labels are
        a small fraction of a run).
    run
        A path to a TREC run, a run JSONL or a parquet file or dataset directory (read a
        block at a time), or anything :func:`~retrieval_eval.formats.as_run` reads (read
        whole, then scored block by block).
    k, threshold, gain, queries, negatives
        As for :func:`~retrieval_eval.evaluation.evaluate`.
    chunk_rows
        About how many run rows a block holds; a block always ends after a query's last row.
    system
        Names every row's system, as in :func:`~retrieval_eval.formats.as_run`.

    Returns
    -------
    Evaluation
        Equal to the in-memory ``evaluate`` in every frame. It does not hold the run
        (``run`` is None): that is the point. A report from it therefore carries
        calibration only when one is passed in (``calibration=``).

    Raises
    ------
    FormatError
        A malformed line (with its line number), or a ranking in two places of the file (a
        block would score half of it); the message says how to sort the run.

    Notes
    -----
    Peak memory is the judgments plus two blocks (the one scored, with the engine's
    temporaries, and the next, read from a file on a second thread meanwhile: the bytes and
    the parsed frame) plus the per-query frame, which holds one row per (system, judged query).
    """
    from ...io.text import is_path as _is_path

    plan = Plan(judgments, k, threshold, gain)
    label = str(run) if _is_path(run) else "run"
    scored: list[Any]
    empty: list[Any]
    scored, empty = [], []
    blocks = _blocks(run, chunk_rows, system=system)
    for block, keys in read_ahead(blocks) if _is_path(run) else blocks:
        empty.extend(block.attrs.get("empty_rankings") or [])
        scored.append(plan.score(block, keys))
        del block
    return plan.finish(scored, queries=queries, negatives=negatives, empty=empty, label=label)


def _check_empty(empty: list, parts: list[pd.DataFrame], label: str) -> None:
    """An empty ranking (``[]``) names a cell no other line may rank: the reader refuses two
    lines for one (system, query) within a block, and this across blocks."""
    if not empty:
        return
    cells = pd.MultiIndex.from_tuples([(str(s), str(q)) for s, q in empty])
    if cells.has_duplicates:
        s, q = cells[cells.duplicated()][0]
        raise FormatError(label, None, f"duplicate entry for query {q} of system {s}")
    for p in parts:
        seen = pd.MultiIndex.from_arrays([p["system"].astype(object), p["query_id"].astype(object)])
        both = seen.isin(cells)
        if both.any():
            s, q = seen[both][0]
            raise FormatError(label, None, f"duplicate entry for query {q} of system {s}")
