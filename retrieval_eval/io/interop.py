"""The field's shapes in and out: BEIR folders, ir_datasets, PyTerrier frames, pytrec_eval and
ranx dicts and objects (``docs/interop.md``).

Everything here turns a foreign shape into the data-model frames (``docs/data-model.md``)
once, where it enters; ``as_judgments``/``as_run`` call the hooks (:mod:`.frames` renames
PyTerrier's columns, :mod:`.dicts` reads the dicts, :mod:`.beir` the folders), so every function
that takes a frame takes these shapes too. This module gathers them, and adds the shapes out
(:func:`to_dict`) and ir_datasets. No import of the foreign packages: ``ir_datasets``,
``ranx`` and ``pyterrier`` objects are read through the methods and columns they document
(duck typing), so none of them is a dependency.

The mappings:

* PyTerrier result frame ``qid, docno, score, rank`` -> ``query_id, doc_id, score, rank``;
  PyTerrier ranks start at 0 (``pyterrier.model.FIRST_RANK``), the data model's at 1, so
  ``rank + 1``. Without ``rank``, ranks come from ``score`` as PyTerrier's ``add_ranks`` makes
  them (descending, ties in row order). PyTerrier qrels ``qid, docno, label`` ->
  ``query_id, doc_uri, relevance``; ir_measures qrels ``query_id, doc_id, relevance`` ->
  ``doc_uri``.
* pytrec_eval/ranx dicts: a run ``{qid: {doc: score}}`` has no order of its own, so it is
  ranked by score descending then doc id descending, the order trec_eval (and so
  pytrec_eval) evaluates in; qrels ``{qid: {doc: grade}}``, a negative grade read as 0 as
  :func:`retrieval_eval.io.qrels.from_qrels` reads TREC's "judged, harmful".
* ranx ``Run``/``Qrels`` (anything with ``to_dict()`` returning such a dict): through
  ``to_dict()``; a run's ``name`` becomes its system. A list of ``Run`` objects (ranx's form
  for several systems, ``compare(qrels, runs=[...])``) reads as ``{run.name: run}``, and a
  dict ``{name: Run}`` as any dict of runs, so every function that takes runs takes both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FormatError
from ..model import judgment_keys
from .beir import BeirData, read_beir, read_beir_corpus, read_beir_queries
from .convert import as_corpus, as_judgments, as_queries, as_run, rerank_by_score
from .detect import sniff
from .dicts import (
    is_score_dict,
    judgments_from_dict,
    labels_from_object,
    run_from_dict,
    run_from_object,
    runs_from_objects,
)
from .frames import LABEL_ALIASES, RUN_ALIASES, is_pyterrier_run, label_frame, run_frame

__all__ = [
    "BeirData",
    "IrDataset",
    "from_ir_datasets",
    "read_beir",
    "rerank_by_score",
    "to_dict",
    # re-exported from the modules that read each shape
    "LABEL_ALIASES",
    "RUN_ALIASES",
    "is_pyterrier_run",
    "is_score_dict",
    "judgments_from_dict",
    "label_frame",
    "labels_from_object",
    "read_beir_corpus",
    "read_beir_queries",
    "run_frame",
    "run_from_dict",
    "run_from_object",
    "runs_from_objects",
]

# ---------------------------------------------------------------------------------------------
# pytrec_eval / ranx shape out
# ---------------------------------------------------------------------------------------------


def _first_per_key(q: pd.Series, key: pd.Series) -> np.ndarray:
    return ~pd.DataFrame({"q": q, "k": key}).duplicated().to_numpy()


def _nested(q: np.ndarray, k: np.ndarray, v: list[Any]) -> dict[str, dict[str, Any]]:
    """``{q: {k: v}}`` in first-appearance order of q (rows already grouped by q)."""
    out: dict[str, dict[str, Any]] = {}
    if len(q) == 0:
        return out
    starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
    ends = np.append(starts[1:], len(q))
    for s, e in zip(starts.tolist(), ends.tolist()):
        out[q[s]] = dict(zip(k[s:e].tolist(), v[s:e]))
    return out


def to_dict(data: Any) -> dict[str, Any]:
    """Judgments or a run in pytrec_eval/ranx shape.

    Judgments give ``{qid: {key: grade}}`` (key = chunk_id else doc_uri, the key a ranking
    entry is matched on; a repeated key keeps its first label, as the engine does). A run gives
    ``{qid: {doc_id: score}}`` (a repeated doc keeps its first occurrence; a query without
    scores gets ``n - rank + 1``, as :func:`~retrieval_eval.io.writers.to_trec_run` writes), or
    ``{system: {qid: {doc_id: score}}}`` when it holds several systems. Which one ``data`` is
    comes from its columns (``relevance``: judgments), or from the file's kind for a path.

    pytrec_eval and ranx rank a dict by score, so a run whose order differs from its scores'
    order changes meaning in this shape; :func:`rerank_by_score` shows the order they use.
    """
    if isinstance(data, (str, os.PathLike)):
        kind = sniff(data)
        data = as_judgments(data) if kind.role == "labels" else as_run(data)
    if isinstance(data, pd.DataFrame) and ("relevance" in data.columns or "label" in data.columns):
        j = as_judgments(data)
        key = judgment_keys(j).astype(object)
        order = np.argsort(pd.factorize(j["query_id"])[0], kind="stable")
        q = j["query_id"].to_numpy(dtype=object)[order]
        k = key.to_numpy(dtype=object)[order]
        rel = j["relevance"].to_numpy()[order].tolist()
        keep = _first_per_key(pd.Series(q), pd.Series(k))
        return _nested(q[keep], k[keep], [r for r, ok in zip(rel, keep) if ok])
    run = as_run(data)
    out: dict[str, dict[str, Any]] = {}
    for system in pd.unique(run["system"]):
        r = run[run["system"] == system]
        codes = pd.factorize(r["query_id"])[0]
        order = np.lexsort((r["rank"].to_numpy(), codes))
        q = r["query_id"].to_numpy(dtype=object)[order]
        d = r["doc_id"].to_numpy(dtype=object)[order]
        s = r["score"].to_numpy(dtype=np.float64)[order]
        sc = codes[order]
        starts = np.flatnonzero(np.concatenate(([True], sc[1:] != sc[:-1]))) if len(sc) else np.zeros(0, int)
        n = np.diff(np.append(starts, len(sc)))
        pos = np.arange(len(sc)) - np.repeat(starts, n)
        no_scores = np.repeat(_all_nan_per_group(s, starts), n)
        synthetic = (np.repeat(n, n) - pos).astype(np.float64)
        s = np.where(no_scores, synthetic, s)
        keep = _first_per_key(pd.Series(q), pd.Series(d))
        out[str(system)] = _nested(q[keep], d[keep], s[keep].tolist())
    if len(out) == 1:
        return next(iter(out.values()))
    return out


def _all_nan_per_group(s: np.ndarray, starts: np.ndarray) -> np.ndarray:
    if len(s) == 0:
        return np.zeros(0, dtype=bool)
    have = np.add.reduceat((~np.isnan(s)).astype(np.int64), starts)
    return have == 0


# ---------------------------------------------------------------------------------------------
# ir_datasets
# ---------------------------------------------------------------------------------------------


@dataclass
class IrDataset:
    """What :func:`from_ir_datasets` read: each frame, or None when the dataset has none."""

    judgments: pd.DataFrame | None
    queries: pd.DataFrame | None
    corpus: pd.DataFrame | None
    run: pd.DataFrame | None


def _has(dataset: Any, what: str) -> bool:
    it = getattr(dataset, f"{what}_iter", None)
    if not callable(it):
        return False
    has = getattr(dataset, f"has_{what}", None)
    return bool(has()) if callable(has) else True


def _records(items: Any, label: str) -> pd.DataFrame:
    rows = list(items)
    if rows and not hasattr(rows[0], "_fields"):
        raise FormatError(label, None, f"expected named tuples, found {type(rows[0]).__name__}")
    return pd.DataFrame(rows, columns=list(rows[0]._fields) if rows else None)


def _text_field(frame: pd.DataFrame, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in frame.columns), None)


def from_ir_datasets(dataset: Any, docs: bool = True) -> IrDataset:
    """Read an ``ir_datasets`` dataset through the iterators it has: ``qrels_iter()``
    (``query_id, doc_id, relevance``), ``queries_iter()`` (``query_id`` and ``text``, or
    ``title``/``query``), ``docs_iter()`` (``doc_id`` and ``text`` or ``body``; skipped with
    ``docs=False``, since a corpus can be millions of documents) and ``scoreddocs_iter()``
    (``query_id, doc_id, score``, ranked by score as trec_eval does).

    Duck-typed: ``ir_datasets`` is not imported, so it stays an optional install; any object
    with those methods (yielding named tuples) works.
    """
    dataset_id = getattr(dataset, "dataset_id", None)
    label = str(dataset_id()) if callable(dataset_id) else "ir_datasets"
    judgments = queries = corpus = run = None
    if _has(dataset, "qrels"):
        q = _records(dataset.qrels_iter(), f"{label} qrels")
        q = q.rename(columns={"doc_id": "doc_uri"})
        if len(q):
            q = q.assign(relevance=np.maximum(pd.to_numeric(q["relevance"]).to_numpy(), 0))
        judgments = as_judgments(
            q[[c for c in q.columns if c in ("query_id", "doc_uri", "relevance")]]
            if len(q)
            else pd.DataFrame(columns=["query_id", "doc_uri", "relevance"]),
            label=f"{label} qrels",
        )
    if _has(dataset, "queries"):
        q = _records(dataset.queries_iter(), f"{label} queries")
        field = _text_field(q, ("text", "title", "query"))
        frame = pd.DataFrame({"query_id": q.get("query_id", pd.Series([], dtype=object))})
        if field:
            frame["query"] = q[field]
        queries = as_queries(frame, label=f"{label} queries")
    if docs and _has(dataset, "docs"):
        d = _records(dataset.docs_iter(), f"{label} docs")
        field = _text_field(d, ("text", "body"))
        ids = d.get("doc_id", pd.Series([], dtype=object))
        frame = pd.DataFrame({"chunk_id": ids, "doc_uri": ids})
        if field:
            frame["text"] = d[field]
        if "title" in d.columns:
            frame["title"] = d["title"]
        corpus = as_corpus(frame, label=f"{label} docs")
    if _has(dataset, "scoreddocs"):
        s = _records(dataset.scoreddocs_iter(), f"{label} scoreddocs")
        if len(s):
            frame = pd.DataFrame({"query_id": s["query_id"], "doc_id": s["doc_id"], "score": s["score"]})
            run = rerank_by_score(as_run(frame, label=f"{label} scoreddocs"), label=f"{label} scoreddocs")
        else:
            run = as_run(pd.DataFrame({"query_id": [], "doc_id": []}, dtype=object))
    return IrDataset(judgments, queries, corpus, run)
