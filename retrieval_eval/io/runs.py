"""Run JSONL (SPEC A2 + B1): ``{"query_id", "ranking", "scores"?, "system"?}`` a line.

arrow reads the lines into list columns when every line is plainly valid; otherwise the careful
pass (:func:`run_from_lines`) reads them and names the line that is wrong.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import DEFAULT_SYSTEM
from .columns import (
    LARGE_STRING,
    arrow_strings,
    block_rank,
    check_system,
    constant_strings,
    group_codes,
    new_run_frame,
    no_empty,
    numpy_column,
    plain_fields,
    release,
    string_array,
)
from .jsontext import finite, is_number, json_lines, json_table, query_id_of
from .text import byte_blocks, checked_bytes, decode, file_blocks, object_lines, read_bytes, regular_file, utf8_bytes

__all__ = ["parse_run", "read_run", "run_from_lines"]


_RUN_SCHEMA = None


def _count_object_lines(data: bytes) -> int | None:
    """How many non-blank lines ``data`` has when each of them starts with ``{``, else None."""
    count = object_lines(byte_blocks(data))
    if count is not None:
        return count
    count = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        if not line.startswith(b"{"):
            return None  # indentation, comments: let the careful pass decide
        count += 1
    return count


def _run_json_columns(source: bytes | str | os.PathLike[str], n_lines: int) -> dict[str, pa.ChunkedArray] | None:
    """arrow's read of ``n_lines`` run JSON object lines into columns (query_id, ranking, scores,
    system), else None: arrow refuses the text, or a line holds two objects.

    ``source`` is the bytes, or a path arrow reads straight from disk.
    """
    global _RUN_SCHEMA
    if _RUN_SCHEMA is None:
        _RUN_SCHEMA = pa.schema(
            [
                ("query_id", LARGE_STRING),
                ("ranking", pa.list_(LARGE_STRING)),
                ("scores", pa.list_(pa.float64())),
                ("system", LARGE_STRING),
            ]
        )
    # Unknown fields send the file to the careful pass: arrow would skip them unread (a NaN, a
    # duplicate key or a 100k-deep value in one would pass here and be refused there).
    table = json_table(source, _RUN_SCHEMA)
    if table is None or table.num_rows != n_lines:
        return None  # e.g. two objects on one line
    return {name: table.column(name) for name in _RUN_SCHEMA.names}


def _parse_run_fast(data: bytes, system: str | None) -> pd.DataFrame | None:
    """The pyarrow path: a frame when every line is unambiguously valid, else None."""
    if not data or data.isspace():
        return None
    n_lines = _count_object_lines(data)
    cols = None if n_lines is None else _run_json_columns(data, n_lines)
    return None if cols is None else _run_from_columns(cols, system)


def _run_file_columns(path: str | os.PathLike[str]) -> dict[str, pa.ChunkedArray] | None:
    """:func:`_run_json_columns` of an ASCII regular file of object lines, read from disk."""
    if not regular_file(path):
        return None
    n_lines = object_lines(file_blocks(path), ascii_only=True)
    return None if n_lines is None else _run_json_columns(path, n_lines)


def _run_from_columns(cols: dict[str, pa.ChunkedArray], system: str | None) -> pd.DataFrame | None:
    """The run frame from arrow's columns, else None (the careful pass then decides).

    ``cols`` is emptied as it goes, so each parsed column is let go once it is converted; the
    doc ids arrow parsed become the frame's column as they are (no copy).
    """
    import pyarrow.compute as pc

    qid = cols.pop("query_id").combine_chunks()
    ranking = cols.pop("ranking")
    if qid.null_count or ranking.null_count or not no_empty(qid):
        return None
    lengths = pc.list_value_length(ranking).to_numpy().astype(np.int64)
    docs = pc.list_flatten(ranking)
    del ranking
    if not plain_fields(docs):  # a null or empty id
        return None
    total = int(lengths.sum())
    # scores: absent or null on a line means that line has none
    scores_col = cols.pop("scores")
    if scores_col.null_count < len(scores_col):
        has = ~scores_col.is_null().to_numpy()
        slen = pc.list_value_length(scores_col).fill_null(0).to_numpy().astype(np.int64)
        if np.any(slen[has] != lengths[has]):
            return None
        flat = pc.list_flatten(scores_col)
        if flat.null_count or not pc.all(pc.is_finite(flat), min_count=0).as_py():
            return None
        values = numpy_column(flat, np.float64)
        del flat, scores_col
        if has.all():
            score = values
        else:
            score = np.full(total, np.nan)
            score[np.repeat(has, lengths)] = values
        del values
    else:
        score = np.full(total, np.nan)
        del scores_col
    release()  # the parsed scores
    # systems: the argument, else each line's own, else the default
    line_sys = None
    sys_col = cols.pop("system").combine_chunks()
    if system is None:
        if sys_col.null_count == len(sys_col):
            system = DEFAULT_SYSTEM
        else:
            line_sys = sys_col.fill_null(DEFAULT_SYSTEM)
            if not no_empty(line_sys):
                return None
            if len(pc.unique(line_sys)) == 1:
                system, line_sys = line_sys[0].as_py(), None  # one system: the constant column
    # one line per (system, query)
    if len(qid) and group_codes(system if line_sys is None else line_sys, qid).max() + 1 != len(qid):
        return None
    line_index = np.arange(len(lengths), dtype=np.int32 if len(lengths) < 2**31 else np.int64)
    parent = pa.array(np.repeat(line_index, lengths))  # the line of each row
    q_rows = arrow_strings(qid.take(parent))
    s_rows = constant_strings(cast(str, system), total) if line_sys is None else arrow_strings(line_sys.take(parent))
    del parent
    rank = block_rank((np.cumsum(lengths) - lengths)[lengths > 0], total)
    df = new_run_frame(s_rows, q_rows, rank, arrow_strings(docs), score)
    empty = np.flatnonzero(lengths == 0)
    if len(empty):
        qs = qid.take(pa.array(empty)).to_pylist()
        ss = [system] * len(qs) if line_sys is None else line_sys.take(pa.array(empty)).to_pylist()
        df.attrs["empty_rankings"] = list(zip(ss, qs))
    return df


def run_from_lines(items: Iterable[tuple[int, Any]], label: str, system: str | None) -> pd.DataFrame:
    """The careful pass over (line, object) pairs: exact messages, real line numbers."""
    seen: dict[tuple[str, str], int] = {}
    sys_col: list[str] = []
    q_col: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    lengths: list[int] = []
    lines: list[int] = []
    for line, obj in items:
        qid = query_id_of(obj, label, line)
        if "ranking" not in obj or obj["ranking"] is None:
            raise FormatError(label, line, "missing ranking")
        ranking = obj["ranking"]
        if not isinstance(ranking, list):
            raise FormatError(label, line, "ranking must be a list")
        for i, key in enumerate(ranking):
            if not isinstance(key, str) or not key:
                raise FormatError(label, line, f"ranking[{i}] must be a non-empty string")
        sc = obj.get("scores")
        if sc is not None:
            if not isinstance(sc, list):
                raise FormatError(label, line, "scores must be a list")
            if len(sc) != len(ranking):
                raise FormatError(label, line, f"scores has {len(sc)} entries, ranking has {len(ranking)}")
            for i, s in enumerate(sc):
                if not is_number(s) or not finite(s):
                    raise FormatError(label, line, f"scores[{i}] must be a finite number")
        own = obj.get("system")
        if own is not None and (not isinstance(own, str) or not own):
            raise FormatError(label, line, "system must be a non-empty string")
        name = system if system is not None else (own if own is not None else DEFAULT_SYSTEM)
        prev = seen.get((name, qid))
        if prev is not None:
            of = "" if name == DEFAULT_SYSTEM else f" of system {name}"
            raise FormatError(label, line, f"duplicate entry for query {qid}{of}, already on line {prev}")
        seen[(name, qid)] = line
        sys_col.append(name)
        q_col.append(qid)
        docs.extend(ranking)
        if sc is not None:
            scores.extend(float(s) for s in sc)
        else:
            scores.extend([math.nan] * len(ranking))
        lengths.append(len(ranking))
        lines.append(line)
    n = np.asarray(lengths, dtype=np.int64)
    total = int(n.sum())
    offsets = np.concatenate(([0], np.cumsum(n)[:-1])) if len(n) else np.zeros(0, dtype=np.int64)
    rank = np.arange(total, dtype=np.int64) - np.repeat(offsets, n) + 1
    row_lines = list(np.repeat(np.asarray(lines, dtype=np.int64), n))
    q_rows = string_array(list(np.repeat(np.asarray(q_col, dtype=object), n)), label, row_lines)
    s_rows = string_array(list(np.repeat(np.asarray(sys_col, dtype=object), n)), label, row_lines)
    doc_rows = string_array(docs, label, row_lines)
    df = new_run_frame(s_rows, q_rows, rank, doc_rows, np.asarray(scores, dtype=np.float64))
    empty = [(s, q) for s, q, k in zip(sys_col, q_col, lengths) if k == 0]
    if empty:
        df.attrs["empty_rankings"] = empty
    return df


def _parse_run(text: str | None, data: bytes | None, label: str, system: str | None) -> pd.DataFrame:
    check_system(system)
    data = utf8_bytes(text, data)
    if data is not None:
        fast = _parse_run_fast(data, system)
        if fast is not None:
            return fast
        if text is None:
            text = decode(data, label)
    df = run_from_lines(json_lines(text or "", label), label, system)
    return df


def parse_run(content: str | bytes, label: str = "run", system: str | None = None) -> pd.DataFrame:
    """Parse a run JSONL text into the long run frame (system, query_id, rank, doc_id, score).

    A line is ``{"query_id", "ranking": [...], "scores"?: [...], "system"?: str}``. Two lines
    for the same (system, query) are refused: the file no longer says what that query's
    ranking is, and picking one would be a guess. A key repeated *inside* a ranking is kept
    (the metric engine counts its first occurrence). ``system`` given here names every line's
    system (it overrides a line's own ``system``); else a line's field, else ``"run"``.
    ``rank`` is the 1-based position as written; ``score`` is NaN for a line without scores.
    A line with an empty ranking has no rows; its (system, query_id) is listed in
    ``df.attrs["empty_rankings"]``, so a caller can tell "answered nothing" from "missing".

    Parameters
    ----------
    content : str or bytes
        The JSONL text (bytes are checked to be UTF-8).
    label : str
        Names the input in messages.
    system : str, optional
        The system of every row.

    Returns
    -------
    DataFrame
        The run frame (:data:`~retrieval_eval.model.RUN_COLUMNS`), one row per ranking entry.

    Raises
    ------
    FormatError
        A line that is not a valid run line, or a (system, query) given twice, naming the line.

    Examples
    --------
    >>> run = parse_run('{"query_id": "q1", "ranking": ["d1", "d2"], "scores": [0.9, 0.5]}\\n')
    >>> run[["query_id", "rank", "doc_id", "score"]].values.tolist()
    [['q1', 1, 'd1', 0.9], ['q1', 2, 'd2', 0.5]]
    """
    if isinstance(content, (bytes, bytearray)):
        data, text = checked_bytes(bytes(content), label)
        return _parse_run(text, data, label, system)
    return _parse_run(content, None, label, system)


def read_run(path: str | os.PathLike[str], system: str | None = None) -> pd.DataFrame:
    """Read a run JSONL file (see :func:`parse_run`); messages are labelled with the path.

    Parameters
    ----------
    path : str or PathLike
        A run JSONL file.
    system : str, optional
        The system of every row (see :func:`parse_run`).

    Returns
    -------
    DataFrame
        The run frame.

    Raises
    ------
    FormatError
        The file cannot be read, or a line is not a valid run line (naming the path and line).
    """
    if system is None or (isinstance(system, str) and system):
        cols = _run_file_columns(path)  # arrow reads a plain file from disk; it is never held as bytes
        fast = None if cols is None else _run_from_columns(cols, system)
        if fast is not None:
            return fast
    label = str(path)
    data, text = checked_bytes(read_bytes(path), label)  # the careful pass has the last word
    return _parse_run(text, data, label, system)
