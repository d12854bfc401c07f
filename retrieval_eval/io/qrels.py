"""Qrels (SPEC A2): TREC (``qid iter docid rel``) and BEIR (``query-id corpus-id score``, header)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import JUDGMENT_FIELDS, MAX_RELEVANCE, TOO_LARGE, empty_judgments
from .columns import (
    LARGE_STRING,
    arrow_strings,
    constant_strings,
    null_strings,
    numpy_column,
    object_column,
    plain_fields,
    release,
    string_array,
)
from .text import checked_bytes, decode, read_bytes, regular_file, utf8_bytes
from .whitespace import INT_RE, arrow_table, space_table_file, table_lines

__all__ = ["from_qrels", "read_qrels"]


def _is_header(fields: list[str]) -> bool:
    """BEIR's header row (``query-id corpus-id score``): 3 fields, the last a word, not a grade."""
    return len(fields) == 3 and fields[2].replace("-", "").replace("_", "").isalpha()


def _qrels_python(
    text: str, label: str, keep_negative: bool = False
) -> tuple[list[Any], list[Any], list[Any], list[int]]:
    q, d, r, lines = [], [], [], []
    first = True
    for line, f in table_lines(text):
        if first and _is_header(f):
            first = False
            continue
        first = False
        if len(f) == 4:
            qid, doc, rel = f[0], f[2], f[3]
        elif len(f) == 3:
            qid, doc, rel = f
        else:
            raise FormatError(label, line, f"expected 3 or 4 fields, got {len(f)}")
        if not INT_RE.match(rel):
            raise FormatError(label, line, f"relevance must be an integer, got {rel!r}")
        value = int(rel)
        if value > MAX_RELEVANCE:
            raise FormatError(label, line, f"relevance {value} {TOO_LARGE}")
        q.append(qid)
        d.append(doc)
        r.append(value if keep_negative else max(value, 0))
        lines.append(line)
    return q, d, r, lines


def _qrels_columns(first: bytes, second: bytes) -> tuple[int, list[str]] | None:
    """From a qrels file's first two lines: whether line 1 is BEIR's header, and the column names
    of the lines arrow reads (4 fields: TREC, 3: BEIR); None for a shape the careful pass decides."""
    if first.lstrip().startswith(b"#"):
        return None
    header = int(_is_header([f.decode("utf-8", "replace") for f in first.split()]))
    width = len((second if header else first).split())
    names = {4: ["q", "it", "d", "r"], 3: ["q", "d", "r"]}.get(width)
    return None if names is None else (header, names)


_QRELS_TYPES = {"q": LARGE_STRING, "d": LARGE_STRING, "r": pa.int64()}


def _qrels_arrow(
    table: pa.Table | None, header: int, keep_negative: bool = False
) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    """(query ids, doc ids, grades, line numbers) from arrow's read of qrels lines, else None.

    None when an id is empty (the careful pass would count another number of fields) or a line
    is a ``#`` comment. The iteration column is not read: a 4-field line whose iteration field
    is empty (``q  d 1``) is the 3-field line ``q d 1`` to the careful pass, the same row.
    """
    if table is None or table.num_rows == 0:
        return None
    qid, doc = table.column("q"), table.column("d")
    if not (plain_fields(qid, comment=True) and plain_fields(doc)):
        return None
    rel = numpy_column(table.column("r"), np.int64)
    if len(rel) and rel.max() > MAX_RELEVANCE:
        return None  # the careful pass names the line
    del table
    release()  # the parse buffers and the grade column, before numpy allocates the rest
    if not keep_negative:
        np.maximum(rel, 0, out=rel)  # TREC's "judged, harmful" grade is 0 here
    lines = np.arange(1 + header, len(rel) + 1 + header, dtype=np.int64)
    return arrow_strings(qid), arrow_strings(doc), rel, lines


def _qrels_fast(data: bytes, keep_negative: bool = False) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    nl = data.find(b"\n")
    first = data if nl < 0 else data[:nl]
    rest = b"" if nl < 0 else data[nl + 1 :]
    shape = _qrels_columns(first, rest[: rest.find(b"\n")] if b"\n" in rest else rest)
    if shape is None:
        return None
    header, names = shape
    return _qrels_arrow(arrow_table(rest if header else data, names, _QRELS_TYPES), header, keep_negative)


def _qrels_file(
    path: str | os.PathLike[str], keep_negative: bool = False
) -> tuple[Any, Any, np.ndarray, np.ndarray] | None:
    """The fast read of a plain qrels file (see :func:`plain_space_table`) straight from disk."""
    if not regular_file(path):
        return None
    try:
        with open(path, "rb") as fh:
            shape = _qrels_columns(fh.readline(), fh.readline())
    except OSError:
        return None
    if shape is None:
        return None
    header, names = shape
    return _qrels_arrow(space_table_file(path, names, _QRELS_TYPES, skip_rows=header)[0], header, keep_negative)


def _from_qrels(
    text: str | None,
    data: bytes | None,
    label: str,
    as_chunk_ids: bool,
    corpus_fingerprint: str | None,
    labeled_by: str | None,
    keep_negative: bool = False,
) -> pd.DataFrame:
    data = utf8_bytes(text, data)
    fast = _qrels_fast(data, keep_negative) if data is not None else None
    if fast is None:
        if text is None:
            assert data is not None
            text = decode(data, label)
        q, d, r, ln = _qrels_python(text, label, keep_negative)
        q_arr, d_arr = string_array(q, label, ln), string_array(d, label, ln)
        fast = q_arr, d_arr, np.asarray(r, dtype=np.int64), np.asarray(ln, dtype=np.int64)
    # mypy cannot spread a union of tuples (either branch is the same 4-tuple)
    return _qrels_frame(*fast, as_chunk_ids, corpus_fingerprint, labeled_by)  # type: ignore[call-arg]


def _qrels_frame(
    q_arr: Any,
    d_arr: Any,
    rel: np.ndarray,
    lines: np.ndarray,
    as_chunk_ids: bool,
    corpus_fingerprint: str | None,
    labeled_by: str | None,
) -> pd.DataFrame:
    """The judgments frame of qrels rows; the fields qrels lack are compact NA columns."""
    n = len(rel)
    if n == 0:
        return empty_judgments()
    data_cols: dict[str, Any] = {}
    nulls = null_strings(n)
    for name in JUDGMENT_FIELDS:
        if name == "query_id":
            data_cols[name] = q_arr
        elif name == "doc_uri":
            data_cols[name] = d_arr
        elif name == "chunk_id" and as_chunk_ids:
            data_cols[name] = d_arr.copy()
        elif name == "relevance":
            data_cols[name] = rel
        elif name == "corpus_fingerprint" and corpus_fingerprint is not None:
            data_cols[name] = constant_strings(corpus_fingerprint, n)
        elif name == "labeled_by" and labeled_by is not None:
            data_cols[name] = constant_strings(labeled_by, n)
        else:
            data_cols[name] = arrow_strings(nulls)
    data_cols["extra"] = object_column(np.full(n, None, dtype=object))
    data_cols["line"] = lines
    return pd.DataFrame(data_cols, copy=False)


def from_qrels(
    content: str | bytes,
    as_chunk_ids: bool = False,
    corpus_fingerprint: str | None = None,
    labeled_by: str | None = None,
    label: str = "qrels",
    keep_negative: bool = False,
) -> pd.DataFrame:
    """Parse TREC (``qid iter docid rel``) or BEIR (``query-id corpus-id score``, header) qrels.

    Both shapes exist in the wild (trec_eval, BEIR, ir_datasets exports), so both are read:
    3 or 4 whitespace-separated fields, ``#`` comments and blank lines skipped, the BEIR header
    skipped, a negative grade (TREC's "judged, harmful") clamped to 0 (SPEC A2) unless
    ``keep_negative``: trec_eval reads a negative grade as "in the pool, not judged" (infAP,
    ``unj``, ``num_nonrel_judged_ret``, ``rbp_resid``, ``relstring``'s ``.``), and the
    ``trec_eval`` command reads qrels so; :func:`~retrieval_eval.engine.measures.compute` follows
    trec_eval on such a frame. The id goes to
    ``doc_uri``, and also to ``chunk_id`` with ``as_chunk_ids=True``. Returns a judgments frame.
    A grade above :data:`MAX_RELEVANCE` (53) is refused naming its line, on the fast path and
    the careful one alike: nDCG's gain ``2**grade - 1`` is exact in float64 only up to there,
    and a larger grade (1024) overflowed it into a NaN metric.

    Parameters
    ----------
    content : str or bytes
        The qrels text.
    as_chunk_ids : bool
        Also use the id as ``chunk_id``.
    corpus_fingerprint, labeled_by : str, optional
        Set on every row.
    label : str
        Names the input in messages.
    keep_negative : bool
        Keep a negative grade as it is written (trec_eval's reading) instead of clamping it to 0.

    Returns
    -------
    DataFrame
        The judgments frame; ``line`` is each row's line in the text.

    Raises
    ------
    FormatError
        A line with another number of fields, or a grade that is not an integer up to
        :data:`MAX_RELEVANCE`, naming the line.

    Examples
    --------
    >>> j = from_qrels("q1 0 d1 2\\nq1 0 d2 -1\\n")
    >>> j[["query_id", "doc_uri", "relevance"]].values.tolist()
    [['q1', 'd1', 2], ['q1', 'd2', 0]]
    >>> from_qrels("q1 0 d2 -1\n", keep_negative=True)["relevance"].tolist()
    [-1]
    """
    if isinstance(content, (bytes, bytearray)):
        data, text = checked_bytes(bytes(content), label)
        return _from_qrels(text, data, label, as_chunk_ids, corpus_fingerprint, labeled_by, keep_negative)
    return _from_qrels(content, None, label, as_chunk_ids, corpus_fingerprint, labeled_by, keep_negative)


def read_qrels(
    path: str | os.PathLike[str],
    as_chunk_ids: bool = False,
    corpus_fingerprint: str | None = None,
    labeled_by: str | None = None,
    keep_negative: bool = False,
) -> pd.DataFrame:
    """Read a qrels file (see :func:`from_qrels`); messages are labelled with the path.

    Parameters
    ----------
    path : str or PathLike
        A TREC or BEIR qrels file.
    as_chunk_ids, corpus_fingerprint, labeled_by, keep_negative
        See :func:`from_qrels` (``keep_negative``: trec_eval's reading of a negative grade).

    Returns
    -------
    DataFrame
        The judgments frame.

    Raises
    ------
    FormatError
        The file cannot be read, or a line is malformed (naming the path and line).
    """
    fast = _qrels_file(path, keep_negative)
    if fast is not None:
        return _qrels_frame(*fast, as_chunk_ids, corpus_fingerprint, labeled_by)
    label = str(path)
    data, text = checked_bytes(read_bytes(path), label)
    return _from_qrels(text, data, label, as_chunk_ids, corpus_fingerprint, labeled_by, keep_negative)
