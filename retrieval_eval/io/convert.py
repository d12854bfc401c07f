"""The entry point: ``as_judgments``, ``as_run``, ``as_queries``, ``as_corpus``.

Every public function that takes data calls one of these once, where the data enters; the
layers below take the data-model frames they return and trust them. Each accepts a frame, a
list of wire-format dicts, a path (read by the format :mod:`retrieval_eval.io.detect` finds:
:func:`read_labels`, :func:`read_run_file`, :func:`read_queries_file`,
:func:`read_corpus_file`), or the field's shapes (PyTerrier frames, pytrec_eval/ranx dicts and
objects: :mod:`retrieval_eval.io.dicts`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FormatError
from ..model import RUN_COLUMNS, empty_run
from .beir import read_beir, read_beir_corpus, read_beir_queries
from .columns import arrow_of
from .corpus import corpus_from_obj, parse_corpus, read_corpus
from .detect import HEAD, expect, jsonish, sniff, sniff_bytes
from .dicts import (
    is_score_dict,
    judgments_from_dict,
    labels_from_object,
    rank_marks,
    run_from_dict,
    run_from_object,
    runs_from_objects,
)
from .frames import (
    corpus_from_frame,
    judgments_from_frame,
    label_frame,
    queries_from_frame,
    refuse_swapped,
    run_from_any_frame,
    run_from_frame,
)
from .jsontext import parse_json
from .judgments import judgment_row, judgments_from_rows, parse_judgments, read_judgments
from .qrels import from_qrels, read_qrels
from .queries import parse_queries, queries_from_lines, read_queries
from .runs import parse_run, read_run, run_from_lines
from .tabular import read_table_labels, read_table_run
from .text import decode, is_path, read_bytes, stream_bytes
from .trec import from_trec_run, order_trec, read_trec_run

__all__ = [
    "as_corpus",
    "as_judgments",
    "as_queries",
    "as_run",
    "read_corpus_file",
    "read_labels",
    "read_queries_file",
    "read_run_file",
    "refuse_swapped",
    "rerank_by_score",
]


def as_judgments(obj: Any, label: str = "judgments", keep_negative: bool = False) -> pd.DataFrame:
    """Coerce judgments to the judgments frame, never mutating the input.

    Accepts the frame a reader returns (required columns checked, dtypes cast, optional columns
    added as NA, a copy returned), a list of wire-format dicts (checked like file lines, with
    line = 1-based index in messages), a path of any labels format or a BEIR folder (read by
    the format :mod:`retrieval_eval.io.detect` finds: JSONL judgments, TREC/BEIR qrels, parquet,
    CSV, a pytrec_eval JSON dict), or the field's shapes of :mod:`retrieval_eval.io.dicts`
    (a PyTerrier ``qid, docno, label`` frame, a ``{qid: {doc: grade}}`` dict, a ranx ``Qrels``).
    A grade above :data:`MAX_RELEVANCE` is refused, naming the row (the file line for a
    reader's frame), as every reader refuses it: its exponential gain would not be exact in
    float64.
    A run given here (see :func:`refuse_swapped`; a run file by :mod:`retrieval_eval.io.detect`)
    is refused with one line naming the order ``(judgments, run)``.

    Parameters
    ----------
    obj : DataFrame, list of dicts, path, dict or ranx Qrels
        The judgments, in any of the shapes above.
    label : str
        Names the input in messages.
    keep_negative : bool
        A frame's negative grades are kept (trec_eval's "in the pool, not judged"), not refused.

    Returns
    -------
    DataFrame
        A new judgments frame (:data:`~retrieval_eval.model.JUDGMENT_COLUMNS`, then any columns
        the input added).

    Raises
    ------
    FormatError
        A malformed input (naming the line or row), or a run given as labels.
    TypeError
        An object of no accepted shape.

    Examples
    --------
    >>> j = as_judgments([{"query_id": "q1", "doc_uri": "d1", "relevance": 1}])
    >>> j[["query_id", "doc_uri", "relevance"]].values.tolist()
    [['q1', 'd1', 1]]
    """
    refuse_swapped(obj, "labels", label)
    if isinstance(obj, pd.DataFrame):
        return judgments_from_frame(label_frame(obj), label, keep_negative)
    if is_path(obj):
        return read_labels(obj, api=True)
    if isinstance(obj, (list, tuple)):
        rows = [judgment_row(o, i, label) for i, o in enumerate(obj, start=1)]
        return judgments_from_rows(rows, [0] * len(rows), label)
    foreign = labels_from_object(obj, label)
    if foreign is not None:
        return foreign
    raise TypeError(f"cannot read judgments from {type(obj).__name__}; give a DataFrame, a list of dicts or a path")


def as_run(obj: Any, system: str | None = None, label: str = "run") -> pd.DataFrame:  # long: numpydoc
    """Coerce a run to the long run frame, never mutating the input.

    Accepts the frame a reader returns (``system`` added as ``"run"``, ``score`` as NaN and
    ``rank`` as 1..n per query in row order when missing), a list of wire-format dicts
    (``{"query_id", "ranking", ...}``, checked like file lines; a list of long rows with
    ``doc_id`` also works; so does a frame with a ``ranking`` column, one row per query), a path
    of any run format (JSONL, TREC, parquet, CSV, a pytrec_eval JSON dict: the format
    :mod:`retrieval_eval.io.detect` finds), a dict ``{system_name: run}`` whose runs are coerced
    and concatenated with the key as their system, or the field's shapes of
    :mod:`retrieval_eval.io.dicts` (a PyTerrier ``qid, docno, score, rank`` frame, a
    ``{qid: {doc: score}}`` dict ranked by score, a ranx ``Run``, a list of ranx ``Run``
    objects read as ``{run.name: run}``).
    ``system`` given here names the system of every row. Labels given here (see
    :func:`refuse_swapped`; a labels file by :mod:`retrieval_eval.io.detect`) are refused with one
    line naming the order ``(judgments, run)``.

    Parameters
    ----------
    obj : DataFrame, list of dicts, path, dict or ranx Run
        The run, in any of the shapes above.
    system : str, optional
        The system of every row.
    label : str
        Names the input in messages.

    Returns
    -------
    DataFrame
        A new run frame (:data:`~retrieval_eval.model.RUN_COLUMNS`, then any columns the input
        added).

    Raises
    ------
    FormatError
        A malformed input (naming the line or row), or labels given as a run.
    ValueError
        ``system`` (or a key of a dict of runs) is not a non-empty string.
    TypeError
        An object of no accepted shape.

    Examples
    --------
    >>> run = as_run({"bm25": [{"query_id": "q1", "ranking": ["d1", "d2"]}]})
    >>> run[["system", "query_id", "rank", "doc_id"]].values.tolist()
    [['bm25', 'q1', 1, 'd1'], ['bm25', 'q1', 2, 'd2']]
    """
    if system is not None and (not isinstance(system, str) or not system):
        raise ValueError("system must be a non-empty string")
    refuse_swapped(obj, "run", label)
    if isinstance(obj, pd.DataFrame):
        return run_from_any_frame(obj, system, label)
    if is_path(obj):
        return read_run_file(obj, system=system, api=True)
    if is_score_dict(obj):
        return run_from_dict(obj, system, label)
    if isinstance(obj, Mapping):
        parts = []
        for name, run in obj.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"system names must be non-empty strings, got {name!r}")
            parts.append(as_run(run, system=name, label=label))
        if not parts:
            return empty_run()
        out = pd.concat([p[list(RUN_COLUMNS)] for p in parts], ignore_index=True)
        out = out.astype(RUN_COLUMNS)
        empty = [pair for p in parts for pair in p.attrs.get("empty_rankings", [])]
        if empty:
            out.attrs["empty_rankings"] = empty
        out.attrs.update(rank_marks(obj))  # runs fused by rank (analysis.fusion) keep their mark
        return out
    if isinstance(obj, (list, tuple)):
        if (named := runs_from_objects(obj)) is not None:  # ranx Run objects: {run.name: run}
            return as_run(named, label=label)
        if obj and isinstance(obj[0], Mapping) and "doc_id" in obj[0] and "ranking" not in obj[0]:
            return run_from_frame(pd.DataFrame(list(obj)), label, system)
        return run_from_lines(enumerate(obj, start=1), label, system)
    foreign = run_from_object(obj, system, label)
    if foreign is not None:
        return foreign
    raise TypeError(
        f"cannot read a run from {type(obj).__name__}; give a DataFrame, a list of dicts, a dict of runs or a path"
    )


def as_queries(obj: Any, label: str = "queries") -> pd.DataFrame:
    """Coerce queries to the queries frame (a frame, a list of wire dicts, or a JSONL path).

    Parameters
    ----------
    obj : DataFrame, list of dicts or path
        The queries.
    label : str
        Names the input in messages.

    Returns
    -------
    DataFrame
        A new queries frame (:data:`~retrieval_eval.model.QUERY_COLUMNS`).

    Raises
    ------
    FormatError
        A malformed input, or a query given twice.
    TypeError
        An object of no accepted shape.

    Examples
    --------
    >>> as_queries([{"query_id": "q1", "expect_none": True}])["expect_none"].tolist()
    [True]
    """
    if isinstance(obj, pd.DataFrame):
        return queries_from_frame(obj, label)
    if is_path(obj):
        return read_queries_file(obj)  # queries JSONL or BEIR's queries.jsonl
    if isinstance(obj, (list, tuple)):
        return queries_from_lines(enumerate(obj, start=1), label)
    raise TypeError(f"cannot read queries from {type(obj).__name__}; give a DataFrame, a list of dicts or a path")


def as_corpus(obj: Any, label: str = "corpus") -> pd.DataFrame:
    """Coerce a corpus to the corpus frame (a frame, the wire dict, a list of chunk dicts, a path).

    Fingerprints travel in ``attrs``; a frame's attrs are copied, missing ones set to None.

    Parameters
    ----------
    obj : DataFrame, dict, list of chunk dicts or path
        The corpus.
    label : str
        Names the input in messages.

    Returns
    -------
    DataFrame
        A new corpus frame (:data:`~retrieval_eval.model.CORPUS_COLUMNS`), fingerprints in
        ``attrs``.

    Raises
    ------
    FormatError
        A chunk without ``chunk_id`` or ``doc_uri``, or a field of the wrong type.
    TypeError
        An object of no accepted shape.

    Examples
    --------
    >>> as_corpus([{"chunk_id": "d1#0", "doc_uri": "d1"}])["doc_uri"].tolist()
    ['d1']
    """
    if isinstance(obj, pd.DataFrame):
        return corpus_from_frame(obj, label)
    if is_path(obj):
        return read_corpus_file(obj)  # corpus JSON or BEIR's corpus.jsonl
    if isinstance(obj, Mapping):
        return corpus_from_obj(dict(obj), label)
    if isinstance(obj, (list, tuple)):
        return corpus_from_obj({"chunks": list(obj)}, label)
    raise TypeError(
        f"cannot read a corpus from {type(obj).__name__}; give a DataFrame, a dict, a list of chunks or a path"
    )


def rerank_by_score(run: Any, label: str = "run") -> pd.DataFrame:
    """The run with every ranking re-ranked by score descending, then doc id descending (the
    order trec_eval evaluates in); ``rank`` renumbered 1..n, scores kept. The same rule as
    ``read_trec_run(order="score")``, applied to a run of any format.

    Parameters
    ----------
    run : DataFrame, path, list of dicts or dict
        Anything :func:`as_run` reads.
    label : str
        Names the run in messages.

    Returns
    -------
    DataFrame
        The run frame, each ranking in trec_eval's order.

    Raises
    ------
    FormatError
        The run has no scores.

    Examples
    --------
    >>> run = as_run([{"query_id": "q1", "ranking": ["a", "b"], "scores": [0.1, 0.9]}])
    >>> rerank_by_score(run)["doc_id"].tolist()
    ['b', 'a']
    """
    run = as_run(run, label=label)
    if len(run) and run["score"].isna().all():
        raise FormatError(label, None, "order 'score' needs scores, and the run has none")
    return order_trec(
        arrow_of(run["system"]),
        arrow_of(run["query_id"]),
        arrow_of(run["doc_id"]),
        run["rank"].to_numpy(),
        run["score"].to_numpy(dtype=np.float64),
        "score",
    )


# ---------------------------------------------------------------------------------------------
# A path: read by the format the one rule (retrieval_eval.io.detect) finds
# ---------------------------------------------------------------------------------------------


def read_labels(
    path: str | os.PathLike[str],
    as_chunk_ids: bool = False,
    split: str = "test",
    data: bytes | None = None,
    label: str | None = None,
    api: bool = False,
) -> pd.DataFrame:
    """Judgments from a file or folder of any labels format: judgments JSONL, TREC or BEIR
    qrels, a BEIR folder (its ``qrels/<split>.tsv``, query text from ``queries.jsonl``),
    parquet or CSV. ``data`` gives the bytes when they were already read (stdin); ``api``: see
    :func:`~retrieval_eval.io.detect.expect`."""
    label = str(path) if label is None else label
    data = stream_bytes(path) if data is None else data  # a pipe or FIFO: read once
    found = sniff_bytes(data[:HEAD], str(path)) if data is not None else sniff(path)
    expect(found, "labels", label, api)
    if found.kind == "beir":
        return read_beir(path, split=split).judgments
    if found.kind == "json-dict":
        return judgments_from_dict(_load_dict(path, data, label), label)
    if found.kind in ("parquet", "csv"):
        return read_table_labels(path, found.kind, data=data, label=label, api=api)
    if as_chunk_ids and found.kind == "judgments":
        raise FormatError(
            label, None, "--as-chunk-ids (as_chunk_ids=True) applies to qrels, and this file is judgments JSONL"
        )
    if found.kind == "judgments" or (found.kind is None and jsonish(path, data)):
        if data is not None:
            return parse_judgments(decode(data, label), label=label)
        return read_judgments(path)
    if data is not None:
        return from_qrels(data, as_chunk_ids=as_chunk_ids, label=label)
    return read_qrels(path, as_chunk_ids=as_chunk_ids)


def _load_dict(path: str | os.PathLike[str], data: bytes | None, label: str) -> dict[str, Any]:
    """A whole JSON document (a pytrec_eval/ranx dict), by the rule every JSON reader applies
    (:func:`~retrieval_eval.io.jsontext.parse_json`): a query or a document given twice is
    refused naming the key and its line, as JSONL inputs refuse a duplicate, instead of the
    last one silently winning."""
    obj = parse_json(decode(data if data is not None else read_bytes(path), label), label=label)
    if not isinstance(obj, dict):
        raise FormatError(label, None, "expected a JSON object {qid: {doc: value}}")
    return obj


def read_run_file(
    path: str | os.PathLike[str],
    system: str | None = None,
    order: str = "rank",
    data: bytes | None = None,
    label: str | None = None,
    api: bool = False,
) -> pd.DataFrame:
    """A run from a file of any run format: JSONL, TREC, parquet or CSV.

    ``order="rank"`` keeps each ranking's own order (the JSONL list, the TREC rank column);
    ``order="score"`` re-ranks every ranking by score descending, then doc id descending, the
    order trec_eval evaluates in (:func:`rerank_by_score`).
    """
    if order not in ("rank", "score"):
        raise ValueError(f"order must be 'rank' or 'score', got {order!r}")
    label = str(path) if label is None else label
    data = stream_bytes(path) if data is None else data  # a pipe or FIFO: read once
    found = sniff_bytes(data[:HEAD], str(path)) if data is not None else sniff(path)
    expect(found, "run", label, api)
    if found.kind == "json-dict":
        run = run_from_dict(_load_dict(path, data, label), system, label)
    elif found.kind in ("parquet", "csv"):
        run = read_table_run(path, found.kind, system=system, data=data, label=label, api=api)
    elif found.kind == "trec-run" or (found.kind is None and not jsonish(path, data)):
        if data is not None:
            return from_trec_run(data, label=label, order=order, system=system)
        return read_trec_run(path, order=order, system=system)
    elif data is not None:
        run = parse_run(data, label=label, system=system)
    else:
        run = read_run(path, system=system)
    if order == "score":
        return rerank_by_score(run, label=label)
    return run


def read_queries_file(
    path: str | os.PathLike[str], data: bytes | None = None, label: str | None = None
) -> pd.DataFrame:
    """Queries from queries JSONL or BEIR's ``queries.jsonl`` (``_id``, ``text``)."""
    label = str(path) if label is None else label
    data = stream_bytes(path) if data is None else data  # a pipe or FIFO: read once
    found = sniff_bytes(data[:HEAD], str(path)) if data is not None else sniff(path)
    expect(found, "queries", label)
    if found.kind == "beir-queries":
        if data is not None:
            raise FormatError(label, None, "BEIR queries.jsonl is read from a file, not stdin")
        return read_beir_queries(path)
    if data is not None:
        return parse_queries(decode(data, label), label=label)
    return read_queries(path)


def read_corpus_file(path: str | os.PathLike[str], data: bytes | None = None, label: str | None = None) -> pd.DataFrame:
    """A corpus from a corpus JSON document or BEIR's ``corpus.jsonl``."""
    label = str(path) if label is None else label
    data = stream_bytes(path) if data is None else data  # a pipe or FIFO: read once
    found = sniff_bytes(data[:HEAD], str(path)) if data is not None else sniff(path)
    expect(found, "corpus", label)
    if found.kind == "beir-corpus":
        if data is not None:
            raise FormatError(label, None, "BEIR corpus.jsonl is read from a file, not stdin")
        return read_beir_corpus(path)
    if data is not None:
        return parse_corpus(decode(data, label), label=label)
    return read_corpus(path)
