"""BEIR dataset folders in: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

A BEIR passage is both the document and the chunk, so ``chunk_id = doc_uri = _id``; the
queries' text rides into the judgments, so ``validate`` checks it. The JSONL files are read by
pyarrow when well formed, else line by line, naming the line that is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import FormatError
from ..model import ID, empty_corpus, empty_judgments, empty_queries
from .columns import arrow_strings
from .frames import corpus_from_frame, queries_from_frame
from .qrels import read_qrels
from .text import decode, read_bytes

__all__ = ["BeirData", "read_beir", "read_beir_corpus", "read_beir_queries"]


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

    def __iter__(self) -> Iterator[pd.DataFrame]:
        return iter((self.corpus, self.queries, self.judgments))


def _jsonl_columns(path: Path, fields: tuple[str, ...]) -> dict[str, list[Any]]:
    """The named string fields of every line of a BEIR JSONL file (``_id`` required).

    Read by pyarrow's JSON reader when the file is well formed; a file it refuses is read line
    by line, which names the line that is wrong.
    """
    import pyarrow as pa
    import pyarrow.json as pj

    label = str(path)
    schema = pa.schema([(f, pa.large_string()) for f in fields])
    try:
        table = pj.read_json(
            path, parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
        )
        ids = table.column("_id")
        if ids.null_count == 0 and not pa.compute.any(pa.compute.equal(ids, "")).as_py():
            return {f: table.column(f) for f in fields}
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError):
        pass
    return _jsonl_careful(path, fields, label)


def _jsonl_careful(path: Path, fields: tuple[str, ...], label: str) -> dict[str, list[Any]]:
    import json

    text = decode(read_bytes(path), label)
    cols: dict[str, list[Any]] = {f: [] for f in fields}
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
        return arrow_strings(values)
    return pd.array(values, dtype=ID)


def read_beir_queries(path: str | os.PathLike[str]) -> pd.DataFrame:
    """BEIR's ``queries.jsonl`` (``_id``, ``text``) as the queries frame (``query_id = _id``,
    ``query = text``; ``metadata`` is not kept)."""
    cols = _jsonl_columns(Path(path), ("_id", "text"))
    return queries_from_frame(
        pd.DataFrame({"query_id": _strings(cols["_id"]), "query": _strings(cols["text"])}), label=str(path)
    )


def read_beir_corpus(path: str | os.PathLike[str]) -> pd.DataFrame:
    """BEIR's ``corpus.jsonl`` (``_id``, ``title``, ``text``) as the corpus frame: a BEIR
    passage is both the document and the chunk, so ``chunk_id = doc_uri = _id``; ``title``
    rides along as a column."""
    cols = _jsonl_columns(Path(path), ("_id", "title", "text"))
    ids = _strings(cols["_id"])
    return corpus_from_frame(
        pd.DataFrame(
            {"chunk_id": ids, "doc_uri": ids, "text": _strings(cols["text"]), "title": _strings(cols["title"])}
        ),
        label=str(path),
    )


def read_beir(folder: str | os.PathLike[str], split: str = "test") -> BeirData:
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
    root = Path(folder)
    if not root.is_dir():
        raise FormatError(
            str(folder),
            None,
            "not a folder; a BEIR dataset is a folder with corpus.jsonl, queries.jsonl and qrels/<split>.tsv",
        )
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
        judgments = judgments.assign(
            query=pd.array(text.reindex(judgments["query_id"].to_numpy(dtype=object)).to_numpy(dtype=object), dtype=ID)
        )
    return BeirData(corpus, queries, judgments, split)
