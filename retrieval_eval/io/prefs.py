"""trec_eval's preference judgments and judgment groups: ``-R prefs``, ``-R qrels_prefs`` and
``-R qrels_jg`` files, read into frames.

* :func:`read_prefs`: ``qid jg jsg docno rel_level`` (trec_eval's ``get_prefs.c``): a judgment
  group (jg, one user at one time) made of judgment sub-groups (jsg), each a ranking of its
  documents by ``rel_level`` (a number; 0 means non-relevant).
* :func:`read_qrels_prefs`: a TREC qrels file read as preferences (``get_qrels_prefs.c``):
  ``qid iter docno rel``, the iter field being the judgment group and ``"0"`` the one sub-group.
* :func:`read_qrels_jg`: a TREC qrels file whose iter field names a judgment group
  (``get_qrels_jg.c``): ``qid jg docno rel``, rel an integer grade.

Each returns a frame with string ids (``query_id``, ``jg``, ``jsg``, ``doc_id``) and the level
(``rel_level`` float64 for preferences, ``relevance`` int64 for judgment groups), in file order.
A line starting with ``#`` is a comment (trec_eval 10.0 skips them); blank lines are skipped.
Malformed input is one :class:`~retrieval_eval.errors.FormatError` line naming the file, the
line and the problem: a line without exactly the fields of its format, a level that is not a
number (trec_eval's ``atof`` would read it as 0), a document twice in one judgment group of a
``qrels_jg`` file (trec_eval refuses it too), an empty file (trec_eval cannot read it).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FormatError
from ..model import ID
from .text import checked_bytes, decode, read_bytes, read_error
from .whitespace import INT_RE, parse_float_field, table_lines

__all__ = ["read_prefs", "read_qrels_jg", "read_qrels_prefs"]

PREFS_COLUMNS = ("query_id", "jg", "jsg", "doc_id", "rel_level")
JG_COLUMNS = ("query_id", "jg", "doc_id", "relevance")


def _lines(path: str | os.PathLike[str], width: int, fields: str) -> tuple[str, list[int], list[list[str]]]:
    """(label, line numbers, fields) of every line of ``path`` that is not blank or a comment."""
    label = str(path)
    try:
        data = read_bytes(path)
    except OSError as err:
        raise read_error(path, err) from None
    data, _ = checked_bytes(data, label)
    numbers, rows = [], []
    for number, row in table_lines(decode(data, label)):
        if len(row) != width:
            raise FormatError(label, number, f"expected {width} fields ({fields}), found {len(row)}")
        numbers.append(number)
        rows.append(row)
    if not rows:
        raise FormatError(label, None, f"no judgment lines ({fields})")
    return label, numbers, rows


def _levels(label: str, numbers: list[int], texts: list[str], integer: bool) -> np.ndarray:
    """The level column: floats (``atof``'s numbers) or integers (``atol``'s), checked."""
    out = np.empty(len(texts), dtype=np.int64 if integer else np.float64)
    for i, (number, text) in enumerate(zip(numbers, texts)):
        if integer:
            if not INT_RE.match(text):
                raise FormatError(label, number, f"relevance {text!r} is not an integer")
            out[i] = int(text)
            continue
        value = parse_float_field(text)
        if value is None:
            raise FormatError(label, number, f"rel_level {text!r} is not a finite number")
        out[i] = value
    return out


def _strings(rows: list[list[str]], column: int) -> Any:
    return pd.array([r[column] for r in rows], dtype=ID)


def read_prefs(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A trec_eval ``-R prefs`` file: ``query_id jg jsg doc_id rel_level`` per line.

    Returns
    -------
    pandas.DataFrame
        Columns ``query_id``, ``jg``, ``jsg``, ``doc_id`` (strings) and ``rel_level`` (float64).

    Raises
    ------
    FormatError
        One line naming the file, the line and the problem.
    """
    label, numbers, rows = _lines(path, 5, "query_id jg jsg doc_id rel_level")
    return pd.DataFrame(
        {
            "query_id": _strings(rows, 0),
            "jg": _strings(rows, 1),
            "jsg": _strings(rows, 2),
            "doc_id": _strings(rows, 3),
            "rel_level": _levels(label, numbers, [r[4] for r in rows], False),
        }
    )


def read_qrels_prefs(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A TREC qrels file read as preferences (trec_eval's ``-R qrels_prefs``): the iter field
    is the judgment group, every line of a group in the one sub-group ``"0"``.

    Returns
    -------
    pandas.DataFrame
        :func:`read_prefs`' columns.
    """
    label, numbers, rows = _lines(path, 4, "query_id jg doc_id rel_level")
    return pd.DataFrame(
        {
            "query_id": _strings(rows, 0),
            "jg": _strings(rows, 1),
            "jsg": pd.array(["0"] * len(rows), dtype=ID),
            "doc_id": _strings(rows, 2),
            "rel_level": _levels(label, numbers, [r[3] for r in rows], False),
        }
    )


def read_qrels_jg(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A TREC qrels file with judgment groups (trec_eval's ``-R qrels_jg``): the iter field is
    the judgment group (one user's judgments); a grade below 0 is "in the pool, not judged".

    Returns
    -------
    pandas.DataFrame
        Columns ``query_id``, ``jg``, ``doc_id`` (strings) and ``relevance`` (int64).

    Raises
    ------
    FormatError
        One line naming the file, the line and the problem (a document twice in one judgment
        group of a query included).
    """
    label, numbers, rows = _lines(path, 4, "query_id jg doc_id relevance")
    frame = pd.DataFrame(
        {
            "query_id": _strings(rows, 0),
            "jg": _strings(rows, 1),
            "doc_id": _strings(rows, 2),
            "relevance": _levels(label, numbers, [r[3] for r in rows], True),
        }
    )
    twice = frame.duplicated(["query_id", "jg", "doc_id"]).to_numpy()
    if twice.any():
        at = int(np.argmax(twice))
        raise FormatError(
            label,
            numbers[at],
            f"document {rows[at][2]} is already judged in judgment group "
            f"{rows[at][1]} of query {rows[at][0]} (trec_eval refuses duplicate docs)",
        )
    return frame
