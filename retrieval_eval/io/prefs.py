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
from .columns import arrow_strings
from .text import checked_bytes, decode, read_bytes, read_error
from .whitespace import INT_RE, arrow_table, parse_float_field, table_lines

__all__ = ["read_prefs", "read_qrels_jg", "read_qrels_prefs"]

PREFS_COLUMNS = ("query_id", "jg", "jsg", "doc_id", "rel_level")
JG_COLUMNS = ("query_id", "jg", "doc_id", "relevance")


def _data(path: str | os.PathLike[str]) -> tuple[str, bytes, str | None]:
    """(label, bytes without a BOM, the text when checking decoded it) of ``path``."""
    label = str(path)
    try:
        data = read_bytes(path)
    except OSError as err:
        raise read_error(path, err) from None
    data, text = checked_bytes(data, label)
    return label, data, text


def _fast(data: bytes, names: list[str], integer: bool) -> pd.DataFrame | None:
    """Arrow's strict read of a file with one space (or tab) between fields, no comment, no
    blank line, levels that are finite numbers; None for anything else (the careful pass then
    reads it and names any problem with its line)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    level = names[-1]
    types = {n: pa.string() for n in names[:-1]} | {level: pa.int64() if integer else pa.float64()}
    table = arrow_table(data, names, types, keep_it=True)
    if table is None or table.num_rows == 0:
        return None
    values = table.column(level).to_numpy()
    if not integer and not np.isfinite(values).all():
        return None
    if pc.any(pc.starts_with(table.column(names[0]), "#")).as_py():
        return None  # a comment line
    if any(pc.any(pc.equal(pc.utf8_length(table.column(n)), 0)).as_py() for n in names[:-1]):
        return None  # two separators in a row: the careful pass splits on any run of them
    out = {n: arrow_strings(table.column(n)) for n in names[:-1]}
    return pd.DataFrame({**out, level: values.astype(np.int64 if integer else np.float64)})


def _lines(label: str, data: bytes, text: str | None, width: int, fields: str) -> tuple[list[int], list[list[str]]]:
    """(line numbers, fields) of every line that is not blank or a comment."""
    numbers, rows = [], []
    for number, row in table_lines(text if text is not None else decode(data, label)):
        if len(row) != width:
            raise FormatError(label, number, f"expected {width} fields ({fields}), found {len(row)}")
        numbers.append(number)
        rows.append(row)
    if not rows:
        raise FormatError(label, None, f"no judgment lines ({fields})")
    return numbers, rows


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
    label, data, text = _data(path)
    fast = _fast(data, list(PREFS_COLUMNS), integer=False)
    if fast is not None:
        return fast
    numbers, rows = _lines(label, data, text, 5, "query_id jg jsg doc_id rel_level")
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
    label, data, text = _data(path)
    fast = _fast(data, ["query_id", "jg", "doc_id", "rel_level"], integer=False)
    if fast is not None:
        jsg = pd.array(np.full(len(fast), "0", dtype=object), dtype=ID)
        return fast.assign(jsg=jsg)[list(PREFS_COLUMNS)]
    numbers, rows = _lines(label, data, text, 4, "query_id jg doc_id rel_level")
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
    label, data, text = _data(path)
    frame = _fast(data, list(JG_COLUMNS), integer=True)
    if frame is not None and not frame.duplicated(["query_id", "jg", "doc_id"]).any():
        return frame
    numbers, rows = _lines(label, data, text, 4, "query_id jg doc_id relevance")
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
