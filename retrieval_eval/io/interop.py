"""The field's shapes in and out: BEIR folders, ir_datasets, PyTerrier frames, pytrec_eval and
ranx dicts and objects (``docs/interop.md``).

Everything here turns a foreign shape into the data-model frames (``docs/data-model.md``)
once, where it enters; ``as_judgments``/``as_run`` call these hooks, so every function that
takes a frame takes these shapes too. No import of the foreign packages: ``ir_datasets``,
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
  :func:`retrieval_eval.formats.from_qrels` reads TREC's "judged, harmful".
* ranx ``Run``/``Qrels`` (anything with ``to_dict()`` returning such a dict): through
  ``to_dict()``; a run's ``name`` becomes its system.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FormatError

__all__ = ["BeirData", "IrDataset", "from_ir_datasets", "read_beir", "rerank_by_score", "to_dict"]

from ..model import ID as _STRING

#: PyTerrier / ir_measures column -> data-model column, per role.
RUN_ALIASES = {"qid": "query_id", "docno": "doc_id"}
LABEL_ALIASES = {"qid": "query_id", "docno": "doc_uri", "label": "relevance"}


# ---------------------------------------------------------------------------------------------
# Frames
# ---------------------------------------------------------------------------------------------


def is_pyterrier_run(df: pd.DataFrame) -> bool:
    return "qid" in df.columns and "docno" in df.columns and "query_id" not in df.columns


def run_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier result frame renamed to the run frame's columns (rank 0-based -> 1-based);
    any other frame as it is. The input is never modified."""
    if not is_pyterrier_run(df):
        return df
    out = df.rename(columns=RUN_ALIASES)
    if "rank" in out.columns:
        rank = pd.to_numeric(out["rank"], errors="coerce")
        out = out.assign(rank=rank + 1)
    elif "score" in out.columns:
        # pyterrier.model.add_ranks: score descending, ties in row order (method="first").
        rank = out.groupby("query_id", sort=False)["score"].rank(ascending=False, method="first")
        out = out.assign(rank=rank)
    return out


def label_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A PyTerrier (``qid, docno, label``) or ir_measures (``query_id, doc_id, relevance``)
    qrels frame renamed to the judgments frame's columns; any other frame as it is."""
    cols = set(df.columns)
    rename: dict[str, str] = {}
    if "qid" in cols and "query_id" not in cols:
        rename["qid"] = "query_id"
    if "doc_uri" not in cols:
        if "docno" in cols:
            rename["docno"] = "doc_uri"
        elif "doc_id" in cols:
            rename["doc_id"] = "doc_uri"
    if "label" in cols and "relevance" not in cols:
        rename["label"] = "relevance"
    return df.rename(columns=rename) if rename else df


# ---------------------------------------------------------------------------------------------
# pytrec_eval / ranx dicts and objects
# ---------------------------------------------------------------------------------------------


def is_score_dict(obj: Any) -> bool:
    """True for ``{qid: {doc: number}}`` (pytrec_eval/ranx), as opposed to ``{system: run}``."""
    if not isinstance(obj, Mapping) or not obj:
        return False
    first = next(iter(obj.values()))
    if not isinstance(first, Mapping):
        return False
    inner = next(iter(first.values()), None)
    return inner is None or isinstance(inner, (int, float, np.integer, np.floating))


def _flatten(d: Mapping, label: str, what: str) -> tuple[list, list, list]:
    for q, inner in d.items():
        if not isinstance(q, str) or not q:
            raise FormatError(label, None, f"query id {q!r} must be a non-empty string")
        if not isinstance(inner, Mapping):
            raise FormatError(label, None, f"query {q}: expected {{doc: {what}}}, found {type(inner).__name__}")
    counts = [len(v) for v in d.values()]
    qids = np.repeat(np.array(list(d.keys()), dtype=object), counts)
    docs = list(chain.from_iterable(v.keys() for v in d.values()))
    values = list(chain.from_iterable(v.values() for v in d.values()))
    kind = pd.api.types.infer_dtype(docs, skipna=False) if docs else "string"
    if kind != "string" or "" in docs:
        bad = next(i for i, x in enumerate(docs) if not isinstance(x, str) or not x)
        raise FormatError(label, None, f"query {qids[bad]}: doc id {docs[bad]!r} must be a non-empty string")
    return qids.tolist(), docs, values


def _bad_value(qids: list, docs: list, values: list, ok: np.ndarray, label: str, what: str) -> None:
    bad = int(np.flatnonzero(~ok)[0])
    raise FormatError(label, None, f"query {qids[bad]}, doc {docs[bad]}: {what}, got {values[bad]!r}")


def _numbers(values: list) -> tuple[np.ndarray, np.ndarray]:
    """The values as float64 and a mask of those that were real numbers (not bool, not text)."""
    arr = np.asarray(values, dtype=object)
    is_num = np.fromiter((isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                          for v in arr), dtype=bool, count=len(arr))
    out = np.full(len(arr), np.nan)
    out[is_num] = arr[is_num].astype(np.float64)
    return out, is_num


def run_from_dict(d: Mapping, system: str | None = None, label: str = "run") -> pd.DataFrame:
    """The run frame of a pytrec_eval/ranx run ``{qid: {doc: score}}``, ranked by score
    descending then doc id descending (trec_eval's order: the dict has no order of its own)."""
    from .formats import DEFAULT_SYSTEM, _order_trec

    import pyarrow as pa

    qids, docs, values = _flatten(d, label, "score")
    scores, ok = _numbers(values)
    if len(ok) and not (ok & np.isfinite(scores)).all():
        _bad_value(qids, docs, values, ok & np.isfinite(scores), label, "score must be a finite number")
    if not qids:
        from .formats import empty_run

        return empty_run()
    name = system or DEFAULT_SYSTEM
    return _order_trec(name, pa.array(qids, pa.large_string()), pa.array(docs, pa.large_string()),
                       np.zeros(len(qids), np.int64), scores, "score")


def judgments_from_dict(d: Mapping, label: str = "judgments") -> pd.DataFrame:
    """The judgments frame of pytrec_eval/ranx qrels ``{qid: {doc: grade}}``, in dict order;
    ``line`` is the 1-based position of the pair in that order."""
    from .formats import JUDGMENT_COLUMNS, as_judgments

    qids, docs, values = _flatten(d, label, "grade")
    grades, ok = _numbers(values)
    integral = ok & np.isfinite(grades) & (grades == np.round(grades))
    if len(ok) and not integral.all():
        if ok.all():
            raise FormatError(label, None, "grades must be integers, and these are fractional "
                              "scores: {qid: {doc: score}} is a run; pass it as the run (--run, as_run)")
        _bad_value(qids, docs, values, integral, label, "relevance must be an integer")
    frame = pd.DataFrame({
        "query_id": pd.array(qids, dtype=_STRING),
        "doc_uri": pd.array(docs, dtype=_STRING),
        "relevance": np.maximum(grades, 0).astype(np.int64),
        "line": np.arange(1, len(qids) + 1, dtype=np.int64),
    })
    out = as_judgments(frame, label=label)
    return out[list(JUDGMENT_COLUMNS)]


def run_from_object(obj: Any, system: str | None, label: str) -> pd.DataFrame | None:
    """A ranx ``Run`` (or anything whose ``to_dict()`` gives ``{qid: {doc: score}}``) as a run
    frame, its ``name`` as the system unless ``system`` is given; None for other objects."""
    to_dict_ = getattr(obj, "to_dict", None)
    if isinstance(obj, (pd.DataFrame, pd.Series)) or not callable(to_dict_):
        return None
    d = to_dict_()
    if not isinstance(d, Mapping):
        return None
    name = getattr(obj, "name", None)
    return run_from_dict(d, system or (name if isinstance(name, str) and name else None), label)


def labels_from_object(obj: Any, label: str) -> pd.DataFrame | None:
    """Judgments from a ``{qid: {doc: grade}}`` dict or a ranx ``Qrels`` (``to_dict()``)."""
    if isinstance(obj, Mapping):
        return judgments_from_dict(obj, label)
    to_dict_ = getattr(obj, "to_dict", None)
    if isinstance(obj, (pd.DataFrame, pd.Series)) or not callable(to_dict_):
        return None
    d = to_dict_()
    return judgments_from_dict(d, label) if isinstance(d, Mapping) else None


def rerank_by_score(run: pd.DataFrame, label: str = "run") -> pd.DataFrame:
    """The run with every ranking re-ranked by score descending, then doc id descending (the
    order trec_eval evaluates in); ``rank`` renumbered 1..n, scores kept. The same rule as
    ``read_trec_run(order="score")``, applied to a run of any format."""
    from .formats import _arrow_of, _order_trec, as_run

    run = as_run(run, label=label)
    if len(run) and run["score"].isna().all():
        raise FormatError(label, None, "order 'score' needs scores, and the run has none")
    return _order_trec(_arrow_of(run["system"]), _arrow_of(run["query_id"]), _arrow_of(run["doc_id"]),
                       run["rank"].to_numpy(), run["score"].to_numpy(dtype=np.float64), "score")


def _first_per_key(q: pd.Series, key: pd.Series) -> np.ndarray:
    return ~pd.DataFrame({"q": q, "k": key}).duplicated().to_numpy()


def _nested(q: np.ndarray, k: np.ndarray, v: list) -> dict[str, dict[str, Any]]:
    """``{q: {k: v}}`` in first-appearance order of q (rows already grouped by q)."""
    out: dict[str, dict[str, Any]] = {}
    if len(q) == 0:
        return out
    starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
    ends = np.append(starts[1:], len(q))
    for s, e in zip(starts.tolist(), ends.tolist()):
        out[q[s]] = dict(zip(k[s:e].tolist(), v[s:e]))
    return out


def to_dict(data: Any) -> dict:
    """Judgments or a run in pytrec_eval/ranx shape.

    Judgments give ``{qid: {key: grade}}`` (key = chunk_id else doc_uri, the key a ranking
    entry is matched on; a repeated key keeps its first label, as the engine does). A run gives
    ``{qid: {doc_id: score}}`` (a repeated doc keeps its first occurrence; a query without
    scores gets ``n - rank + 1``, as :func:`~retrieval_eval.formats.to_trec_run` writes), or
    ``{system: {qid: {doc_id: score}}}`` when it holds several systems. Which one ``data`` is
    comes from its columns (``relevance``: judgments), or from the file's kind for a path.

    pytrec_eval and ranx rank a dict by score, so a run whose order differs from its scores'
    order changes meaning in this shape; :func:`rerank_by_score` shows the order they use.
    """
    from .formats import as_judgments, as_run
    from ..engine.metrics import judgment_keys

    if isinstance(data, (str, os.PathLike)):
        from .detect import sniff

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
    out: dict[str, dict] = {}
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
# BEIR
# ---------------------------------------------------------------------------------------------


@dataclass
class BeirData:
    """A BEIR dataset folder read into the data model: ``corpus`` (one row per passage: BEIR's
    passage is both the document and the chunk, so ``chunk_id = doc_uri = _id``; ``title`` rides
    along), ``queries`` (``query_id = _id``, ``query = text``) and ``judgments`` (the split's
    qrels, with the query text of ``queries.jsonl``). A file the folder lacks gives an empty
    frame."""

    corpus: pd.DataFrame
    queries: pd.DataFrame
    judgments: pd.DataFrame
    split: str

    def __iter__(self):
        return iter((self.corpus, self.queries, self.judgments))


def _jsonl_columns(path: Path, fields: tuple[str, ...]) -> dict[str, list]:
    """The named string fields of every line of a BEIR JSONL file (``_id`` required).

    Read by pyarrow's JSON reader when the file is well formed; a file it refuses is read line
    by line, which names the line that is wrong.
    """
    import pyarrow as pa
    import pyarrow.json as pj

    label = str(path)
    schema = pa.schema([(f, pa.large_string()) for f in fields])
    try:
        table = pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema,
                                                                 unexpected_field_behavior="ignore"))
        ids = table.column("_id")
        if ids.null_count == 0 and not pa.compute.any(pa.compute.equal(ids, "")).as_py():
            return {f: table.column(f) for f in fields}
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError):
        pass
    return _jsonl_careful(path, fields, label)


def _jsonl_careful(path: Path, fields: tuple[str, ...], label: str) -> dict[str, list]:
    import json

    from .formats import _decode, _read_bytes

    text = _decode(_read_bytes(path), label)
    cols: dict[str, list] = {f: [] for f in fields}
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as err:
            raise FormatError(label, n, f"invalid JSON, {getattr(err, 'msg', err)}") from None
        if not isinstance(obj, dict):
            raise FormatError(label, n, "a line must be a JSON object with _id")
        if not isinstance(obj.get("_id"), str) or not obj["_id"]:
            raise FormatError(label, n, "missing _id (BEIR lines carry a string _id)")
        for f in fields:
            v = obj.get(f)
            if v is not None and not isinstance(v, str):
                raise FormatError(label, n, f"{f} must be a string")
            cols[f].append(v)
    return cols


def _strings(values: Any) -> Any:
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        from .formats import _arrow_strings

        return _arrow_strings(values)
    return pd.array(values, dtype=_STRING)


def read_beir_queries(path: str | os.PathLike) -> pd.DataFrame:
    """BEIR's ``queries.jsonl`` (``_id``, ``text``) as the queries frame (``query_id = _id``,
    ``query = text``; ``metadata`` is not kept)."""
    from .formats import as_queries

    cols = _jsonl_columns(Path(path), ("_id", "text"))
    return as_queries(pd.DataFrame({"query_id": _strings(cols["_id"]), "query": _strings(cols["text"])}),
                      label=str(path))


def read_beir_corpus(path: str | os.PathLike) -> pd.DataFrame:
    """BEIR's ``corpus.jsonl`` (``_id``, ``title``, ``text``) as the corpus frame: a BEIR
    passage is both the document and the chunk, so ``chunk_id = doc_uri = _id``; ``title``
    rides along as a column."""
    from .formats import as_corpus

    cols = _jsonl_columns(Path(path), ("_id", "title", "text"))
    ids = _strings(cols["_id"])
    return as_corpus(pd.DataFrame({"chunk_id": ids, "doc_uri": ids, "text": _strings(cols["text"]),
                                   "title": _strings(cols["title"])}), label=str(path))


def read_beir(folder: str | os.PathLike, split: str = "test") -> BeirData:
    """Read a BEIR dataset folder: ``corpus.jsonl`` (``_id``, ``title``, ``text``),
    ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (``query-id corpus-id
    score``, with its header).

    Returns
    -------
    BeirData
        ``corpus``, ``queries`` and ``judgments`` frames (unpackable in that order). The
        judgments carry each query's text from ``queries.jsonl``, so ``validate`` checks it.

    Raises
    ------
    FormatError
        A folder without ``qrels/<split>.tsv`` (naming the splits it has), or a malformed line
        in any of the files (file and line named).
    """
    from .formats import empty_corpus, empty_judgments, empty_queries, read_qrels

    root = Path(folder)
    if not root.is_dir():
        raise FormatError(str(folder), None, "not a folder; a BEIR dataset is a folder with "
                          "corpus.jsonl, queries.jsonl and qrels/<split>.tsv")
    qrels = root / "qrels" / f"{split}.tsv"
    if qrels.is_file():
        judgments = read_qrels(qrels)
    elif (root / "qrels").is_dir():
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv"))
        raise FormatError(str(qrels), None, f"no such split; this folder has {', '.join(splits) or 'none'}")
    else:
        judgments = empty_judgments()
    queries = read_beir_queries(root / "queries.jsonl") if (root / "queries.jsonl").is_file() else empty_queries()
    corpus = read_beir_corpus(root / "corpus.jsonl") if (root / "corpus.jsonl").is_file() else empty_corpus()
    if len(judgments) and len(queries):
        text = pd.Series(queries["query"].array, index=queries["query_id"].to_numpy(dtype=object))
        judgments = judgments.assign(query=pd.array(text.reindex(judgments["query_id"].to_numpy(dtype=object))
                                                    .to_numpy(dtype=object), dtype=_STRING))
    return BeirData(corpus, queries, judgments, split)


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
    from .formats import as_corpus, as_judgments, as_queries, as_run

    judgments = queries = corpus = run = None
    if _has(dataset, "qrels"):
        q = _records(dataset.qrels_iter(), f"{label} qrels")
        q = q.rename(columns={"doc_id": "doc_uri"})
        if len(q):
            q = q.assign(relevance=np.maximum(pd.to_numeric(q["relevance"]).to_numpy(), 0))
        judgments = as_judgments(q[[c for c in q.columns if c in ("query_id", "doc_uri", "relevance")]]
                                 if len(q) else pd.DataFrame(columns=["query_id", "doc_uri", "relevance"]),
                                 label=f"{label} qrels")
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
