"""Judgments JSONL (SPEC A2): the fast arrow path and the careful pass.

A plain file (every line one object with only the known fields) is read by arrow, straight
from disk for a file; anything arrow cannot vouch for (a comment, an unknown field, a wrong
type...) is read again line by line by :func:`parse_judgments`'s careful pass, which either
returns the same frame or names the line that is wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import JUDGMENT_FIELDS, MAX_RELEVANCE, TOO_LARGE, empty_judgments
from .columns import (
    LARGE_STRING,
    arrow_strings,
    null_strings,
    numpy_column,
    object_column,
    plain_fields,
    release,
    string_array,
)
from .jsontext import is_int, json_lines, json_table, query_id_of
from .text import byte_blocks, decode, file_blocks, object_lines, read_bytes, regular_file, utf8_bytes

__all__ = ["KNOWN_JUDGMENT", "judgment_row", "judgments_from_rows", "parse_judgments", "read_judgments"]


_OPTIONAL_JUDGMENT_STR = tuple(f for f in JUDGMENT_FIELDS if f not in ("query_id", "doc_uri", "relevance"))


def judgment_row(obj: Any, line: int, label: str) -> tuple[Any, ...]:
    """Check one wire-format judgment; the known fields in JUDGMENT_FIELDS order, then extra."""
    query_id_of(obj, label, line)  # checked here, read again below
    uri = obj.get("doc_uri")
    if not isinstance(uri, str) or not uri:
        raise FormatError(label, line, "missing doc_uri")
    rel = obj.get("relevance")
    if not is_int(rel) or rel < 0:
        raise FormatError(label, line, "relevance must be a non-negative integer")
    if rel > MAX_RELEVANCE:
        raise FormatError(label, line, f"relevance {rel} {TOO_LARGE}")
    for name in _OPTIONAL_JUDGMENT_STR:
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise FormatError(label, line, f"{name} must be a string")
    extra = {k: v for k, v in obj.items() if k not in KNOWN_JUDGMENT} or None
    return tuple(obj.get(f) for f in JUDGMENT_FIELDS) + (extra,)


KNOWN_JUDGMENT = frozenset(JUDGMENT_FIELDS)


def judgments_from_rows(rows: list[tuple[Any, ...]], lines: list[int], label: str) -> pd.DataFrame:
    if not rows:
        return empty_judgments()
    cols = list(zip(*rows))
    data: dict[str, Any] = {}
    for i, name in enumerate(JUDGMENT_FIELDS):
        if name == "relevance":
            data[name] = np.asarray(cols[i], dtype=np.int64)
        else:
            data[name] = string_array(list(cols[i]), label, lines)
    extra = np.empty(len(rows), dtype=object)
    extra[:] = cols[len(JUDGMENT_FIELDS)]
    data["extra"] = object_column(extra)
    data["line"] = np.asarray(lines, dtype=np.int64)
    return pd.DataFrame(data, copy=False)


def parse_judgments(content: str, label: str = "judgments") -> pd.DataFrame:
    """Parse a judgments JSONL text into the judgments frame (one row per line, file order).

    Blank lines and ``//`` comments are skipped; ``line`` is the file's real line number so a
    message (``judgments:7: missing doc_uri``) points where an editor will. Unknown fields are
    kept in ``extra`` (dict, original order) so writing the labels back loses nothing another
    tool put there. ``null`` for an optional field means unset. ``relevance`` is an integer
    from 0 to :data:`MAX_RELEVANCE` (53): nDCG's gain ``2**grade - 1`` is computed in float64,
    exact for every such grade, and no DCG sum of them can overflow (1024 made it inf, and
    nDCG NaN). Lines are strict JSON (:func:`parse_json`: no NaN, no duplicate key, at most
    :data:`MAX_JSON_DEPTH` deep), on the fast path and the careful pass alike.

    Parameters
    ----------
    content : str
        The JSONL text.
    label : str
        Names the input in messages.

    Returns
    -------
    DataFrame
        The judgments frame (:data:`~retrieval_eval.model.JUDGMENT_COLUMNS`), one row per line.

    Raises
    ------
    FormatError
        A line that is not a valid judgment, naming ``label`` and the line.

    Examples
    --------
    >>> j = parse_judgments('{"query_id": "q1", "doc_uri": "d1", "relevance": 2}\\n')
    >>> j[["query_id", "doc_uri", "relevance", "line"]].values.tolist()
    [['q1', 'd1', 2, 1]]
    """
    data = utf8_bytes(content, None)
    fast = _judgments_fast(data) if data is not None else None
    if fast is not None:
        return fast
    return _judgments_python(content, label)


def _judgments_python(content: str, label: str) -> pd.DataFrame:
    """The careful pass: exact messages, real line numbers, unknown fields kept in ``extra``."""
    rows: list[tuple[Any, ...]] = []
    lines: list[int] = []
    for line, obj in json_lines(content, label, raw_floats=True):
        rows.append(judgment_row(obj, line, label))
        lines.append(line)
    return judgments_from_rows(rows, lines, label)


def _judgment_schema(fields: Iterable[str]) -> pa.Schema:
    return pa.schema([(f, pa.int64() if f == "relevance" else LARGE_STRING) for f in JUDGMENT_FIELDS if f in fields])


def _judgments_fast(data: bytes) -> pd.DataFrame | None:
    """The pyarrow path for judgments: a frame when every line is a plain, valid judgment, else None.

    Plain means: every line (no blank or comment lines, so row i is line i + 1) is one JSON
    object with only the known fields, each of its type (strings, ``relevance`` an integer)
    or null. arrow's JSON reader refuses the rest (unknown fields, wrong types, duplicate
    keys, a lone surrogate escape, NaN...); the checks it does not make (a missing or empty
    id, a missing or negative relevance, two objects on one line) are made on its columns.
    arrow is first given only the fields the first line has (parsing fields no line has
    doubles its work), and all the known fields when a later line has another one.
    On None the careful pass reads the text and gives the exact message.
    """
    total = object_lines(byte_blocks(data))  # no blank, comment or indented line
    got = None if total is None else _judgments_table(data, data.split(b"\n", 1)[0], total)
    return None if got is None else _judgments_from_table(*got)


def _judgments_file(path: str | os.PathLike[str]) -> tuple[pa.Table, set[str] | frozenset[str], int] | None:
    """:func:`_judgments_table` of an ASCII regular file of plain lines, read from disk."""
    if not regular_file(path):
        return None
    total = object_lines(file_blocks(path), ascii_only=True)
    if total is None:
        return None
    try:
        with open(path, "rb") as fh:
            first = fh.readline()
    except OSError:
        return None
    return _judgments_table(path, first, total)


def _judgments_table(
    source: bytes | str | os.PathLike[str], first: bytes, total: int
) -> tuple[pa.Table, set[str] | frozenset[str], int] | None:
    """arrow's table of ``total`` plain judgment lines (``first`` the first one), the fields it
    holds and the line count, else None."""
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not set(obj) <= KNOWN_JUDGMENT:
        return None
    fields: set[str] | frozenset[str] = set(obj) | {"query_id", "doc_uri", "relevance"}
    table = json_table(source, _judgment_schema(fields))
    if table is None and fields != KNOWN_JUDGMENT:
        fields = KNOWN_JUDGMENT
        table = json_table(source, _judgment_schema(fields))
    if table is None or table.num_rows != total:
        return None  # e.g. two objects on one line
    return table, fields, total


def _judgments_from_table(table: pa.Table, fields: set[str] | frozenset[str], total: int) -> pd.DataFrame | None:
    """The judgments frame from arrow's table, else None (a missing or empty id, a bad relevance).

    The string columns arrow parsed become the frame's columns as they are (no copy).
    """
    import pyarrow.compute as pc

    if not (plain_fields(table.column("query_id")) and plain_fields(table.column("doc_uri"))):
        return None
    rel_col = table.column("relevance")
    if rel_col.null_count or not pc.all(pc.greater_equal(rel_col, 0), min_count=0).as_py():
        return None
    if not pc.all(pc.less_equal(rel_col, MAX_RELEVANCE), min_count=0).as_py():
        return None  # the careful pass names the line
    strings = {name: table.column(name) for name in fields if name != "relevance"}
    relevance = numpy_column(rel_col, np.int64)
    del table, rel_col
    release()  # the parse buffers and the relevance column, before numpy allocates the rest
    cols: dict[str, Any] = {}
    nulls = null_strings(total)
    for name in JUDGMENT_FIELDS:
        if name == "relevance":
            cols[name] = relevance
        else:
            cols[name] = arrow_strings(strings.pop(name, nulls))
    cols["extra"] = object_column(np.full(total, None, dtype=object))
    cols["line"] = np.arange(1, total + 1, dtype=np.int64)
    return pd.DataFrame(cols, copy=False)


def read_judgments(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a judgments JSONL file; messages are labelled with the path.

    Parameters
    ----------
    path : str or PathLike
        A judgments JSONL file (UTF-8, a BOM accepted).

    Returns
    -------
    DataFrame
        The judgments frame, as :func:`parse_judgments` returns it.

    Raises
    ------
    FormatError
        The file cannot be read, or a line is not a valid judgment (naming the path and line).
    """
    got = _judgments_file(path)  # arrow reads a plain file from disk; it is never held as bytes
    if got is not None:
        fast = _judgments_from_table(*got)
        if fast is not None:
            return fast
    label = str(path)
    data = read_bytes(path)  # the careful pass reads it and has the last word
    if data.isascii():
        return _judgments_python(data.decode("ascii"), label)
    text = decode(data, label)
    fast = _judgments_fast(data[3:] if data.startswith(b"\xef\xbb\xbf") else data)
    if fast is not None:
        return fast
    return _judgments_python(text, label)
