"""Corpus JSON (SPEC A2): ``{"corpus_fingerprint", "chunker_fingerprint", "chunks": [...]}``."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from ..errors import FormatError
from ..model import CORPUS_COLUMNS, FINGERPRINTS, empty_corpus
from .columns import string_array
from .jsontext import is_int, not_object, parse_json
from .text import decode, read_bytes

__all__ = ["corpus_from_obj", "parse_corpus", "read_corpus"]


_CORPUS_SHAPE = "must be a JSON object with a chunks list"


def corpus_from_obj(obj: Any, label: str) -> pd.DataFrame:
    if not isinstance(obj, dict) or "chunks" not in obj:
        raise FormatError(label, None, _CORPUS_SHAPE)
    chunks = obj["chunks"]
    if not isinstance(chunks, list):
        raise FormatError(label, None, _CORPUS_SHAPE)
    attrs = {}
    for key in FINGERPRINTS:
        v = obj.get(key)
        if v is not None and not isinstance(v, str):
            raise FormatError(label, None, f"{key} must be a string")
        attrs[key] = v
    cols: dict[str, list[Any]] = {c: [] for c in CORPUS_COLUMNS}
    for i, ch in enumerate(chunks):
        where = f"chunks[{i}]"
        if not isinstance(ch, dict):
            raise FormatError(label, None, f"{where} {not_object(ch)}")
        for req in ("chunk_id", "doc_uri"):
            v = ch.get(req)
            if v is None or v == "":
                raise FormatError(label, None, f"{where} has no {req}")
            if not isinstance(v, str):
                raise FormatError(label, None, f"{where} {req} must be a string")
        for opt in ("doc_revision", "text", "text_sha"):
            v = ch.get(opt)
            if v is not None and not isinstance(v, str):
                raise FormatError(label, None, f"{where} {opt} must be a string")
        o = ch.get("ordinal")
        if o is not None and (not is_int(o) or abs(o) > 2**63 - 1):
            raise FormatError(label, None, f"{where} ordinal must be an integer")
        for c in CORPUS_COLUMNS:
            cols[c].append(ch.get(c))
    data: dict[str, Any] = {}
    for c, dtype in CORPUS_COLUMNS.items():
        if dtype == "Int64":
            data[c] = pd.array(cols[c], dtype="Int64")
        else:
            data[c] = string_array(cols[c], label)
    df = pd.DataFrame(data) if chunks else empty_corpus()
    df.attrs.update(attrs)
    return df


def parse_corpus(content: str, label: str = "corpus") -> pd.DataFrame:
    """Parse a corpus JSON document into the corpus frame (one row per chunk, file order).

    ``df.attrs`` carries ``corpus_fingerprint`` and ``chunker_fingerprint`` (None when absent),
    which drift compares against the labels' fingerprint. Chunk fields other than the six the
    spec names are not kept (the frame has no ``extra`` column); ``chunks[i]`` in messages is
    0-based, as in JSON Pointer.

    Parameters
    ----------
    content : str
        The corpus JSON text.
    label : str
        Names the input in messages.

    Returns
    -------
    DataFrame
        The corpus frame (:data:`~retrieval_eval.model.CORPUS_COLUMNS`), fingerprints in ``attrs``.

    Raises
    ------
    FormatError
        Invalid JSON, or a document or chunk of the wrong shape (naming ``chunks[i]``).

    Examples
    --------
    >>> c = parse_corpus('{"corpus_fingerprint": "v1", "chunks": [{"chunk_id": "d1#0", "doc_uri": "d1"}]}')
    >>> c["chunk_id"].tolist(), c.attrs["corpus_fingerprint"]
    (['d1#0'], 'v1')
    """
    return corpus_from_obj(parse_json(content, label), label)


def read_corpus(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a corpus JSON file (see :func:`parse_corpus`); messages are labelled with the path.

    Parameters
    ----------
    path : str or PathLike
        A corpus JSON file.

    Returns
    -------
    DataFrame
        The corpus frame.

    Raises
    ------
    FormatError
        The file cannot be read, or is not a valid corpus (naming the path).
    """
    label = str(path)
    return parse_corpus(decode(read_bytes(path), label), label=label)
