"""Queries JSONL (SPEC B2): ``{"query_id", "query"?, "stratum"?, "expect_none"?}`` a line."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FormatError
from ..model import empty_queries
from .columns import string_array
from .jsontext import json_lines, query_id_of
from .text import decode, read_bytes

__all__ = ["parse_queries", "queries_from_lines", "read_queries"]


def queries_from_lines(items: Iterable[tuple[int, Any]], label: str) -> pd.DataFrame:
    seen: dict[str, int] = {}
    q_id, q_text, q_stratum, q_none, lines = [], [], [], [], []
    for line, obj in items:
        qid = query_id_of(obj, label, line)
        for name in ("query", "stratum"):
            v = obj.get(name)
            if v is not None and not isinstance(v, str):
                raise FormatError(label, line, f"{name} must be a string")
        none = obj.get("expect_none")
        if none is not None and not isinstance(none, (bool, np.bool_)):
            raise FormatError(label, line, "expect_none must be true or false")
        if qid in seen:
            raise FormatError(label, line, f"duplicate entry for query {qid}, already on line {seen[qid]}")
        seen[qid] = line
        q_id.append(qid)
        q_text.append(obj.get("query"))
        q_stratum.append(obj.get("stratum"))
        q_none.append(bool(none))
        lines.append(line)
    if not q_id:
        return empty_queries()
    return pd.DataFrame(
        {
            "query_id": string_array(q_id, label, lines),
            "query": string_array(q_text, label, lines),
            "stratum": string_array(q_stratum, label, lines),
            "expect_none": np.asarray(q_none, dtype=bool),
        }
    )


def parse_queries(content: str, label: str = "queries") -> pd.DataFrame:
    """Parse a queries JSONL text (``{"query_id", "query"?, "stratum"?, "expect_none"?}``).

    ``expect_none: true`` marks an out-of-distribution query (nothing in the corpus answers
    it); it must be a JSON boolean, because a truthy string silently turning a query into a
    negative would change what calibration measures. A query declared twice is refused.
    Fields other than the four are ignored.

    Parameters
    ----------
    content : str
        The JSONL text.
    label : str
        Names the input in messages.

    Returns
    -------
    DataFrame
        The queries frame (:data:`~retrieval_eval.model.QUERY_COLUMNS`), one row per line.

    Raises
    ------
    FormatError
        A line that is not a valid query line, or a query given twice, naming the line.

    Examples
    --------
    >>> q = parse_queries('{"query_id": "q1", "query": "what is x"}\\n{"query_id": "q2", "expect_none": true}\\n')
    >>> q[["query_id", "expect_none"]].values.tolist()
    [['q1', False], ['q2', True]]
    """
    return queries_from_lines(json_lines(content, label), label)


def read_queries(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a queries JSONL file (see :func:`parse_queries`); messages name the path.

    Parameters
    ----------
    path : str or PathLike
        A queries JSONL file.

    Returns
    -------
    DataFrame
        The queries frame.

    Raises
    ------
    FormatError
        The file cannot be read, or a line is malformed (naming the path and line).
    """
    label = str(path)
    return parse_queries(decode(read_bytes(path), label), label=label)
