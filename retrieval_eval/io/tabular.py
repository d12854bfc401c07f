"""Parquet and CSV judgments and runs, read through pyarrow (no Python loop).

A table holds the data-model columns (``query_id, doc_uri, relevance, ...`` for judgments;
``system, query_id, rank, doc_id, score`` for a run), or PyTerrier's (``qid, docno, label``;
``qid, docno, score, rank``), which are renamed as :mod:`retrieval_eval.io.frames` renames a
PyTerrier frame. Ids must be text: a numeric id column is refused, never converted, because
``007`` and ``7`` are different ids. Written by :func:`retrieval_eval.io.writers.write_parquet`.

Every refusal names the file and the row (parquet: ``row N``, 1-based) or the line (CSV: the
file's line, the header being line 1), and what is wrong.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import FormatError
from ..model import ID, JUDGMENT_FIELDS
from .columns import check_system
from .detect import ORDER_HINT, READ_WITH, sniff
from .frames import judgments_from_frame, label_frame, run_frame, run_from_any_frame, swapped_columns

__all__ = ["read_table_labels", "read_table_run"]

_INT = r"^\s*[+-]?[0-9]+\s*$"
_FLOAT = r"^\s*([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(nan|NaN|inf|Inf|infinity|Infinity))\s*$"


def _csv_table(path: Any, data: bytes | None, label: str) -> pa.Table:
    """Every CSV column as text (types are checked per column afterwards, naming the line)."""
    import pyarrow.csv as pcsv

    source = pa.BufferReader(data) if data is not None else str(path)
    header = _csv_header(path, data, label)
    convert = pcsv.ConvertOptions(
        column_types={c: pa.large_string() for c in header}, strings_can_be_null=True, quoted_strings_can_be_null=False
    )
    try:
        return pcsv.read_csv(source, convert_options=convert)
    except pa.ArrowInvalid:
        pass
    bad: list[Any] = []

    def on_bad(row: Any) -> str:
        if not bad:
            bad.append(row)
        return "skip"

    try:
        pcsv.read_csv(
            pa.BufferReader(data) if data is not None else str(path),
            convert_options=convert,
            read_options=pcsv.ReadOptions(use_threads=False),
            parse_options=pcsv.ParseOptions(invalid_row_handler=on_bad),
        )
    except pa.ArrowInvalid as err:
        raise FormatError(label, None, f"not a CSV table ({_one_line(err)})") from None
    if bad:
        row = bad[0]
        raise FormatError(label, row.number, f"expected {row.expected_columns} fields, found {row.actual_columns}")
    raise FormatError(label, None, "not a CSV table")


def _csv_header(path: Any, data: bytes | None, label: str) -> list[str]:
    import csv

    if data is None:
        try:
            with open(path, "rb") as fh:
                first = fh.readline()
        except OSError as err:
            raise FormatError(label, None, f"cannot read: {err.strerror or err}") from None
    else:
        first = data.split(b"\n", 1)[0]
    try:
        text = first.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        raise FormatError(label, 1, "not valid UTF-8") from None
    names = next(csv.reader([text]), [])
    if not names or any(not n for n in names):
        raise FormatError(label, 1, "the first line must name the columns (a header)")
    return names


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


#: A parquet file may hold at most this many rows per byte of file (beyond
#: :data:`PARQUET_FREE_ROWS`). A real run or judgment costs several bytes a row on disk even
#: compressed (its doc ids, its scores), and 50 to 100 bytes in memory; a file packing more rows
#: than this into each byte is a decompression bomb (40M dictionary-encoded rows in 373 KB ran a
#: reader to 6.3 GB), refused before anything is expanded.
MAX_PARQUET_ROWS_PER_BYTE = 10
#: Rows any parquet file may hold whatever its size.
PARQUET_FREE_ROWS = 1_000_000


def _parquet_table(path: Any, data: bytes | None, label: str) -> pa.Table:
    import pyarrow.parquet as pq

    source = pa.BufferReader(data) if data is not None else str(path)
    try:
        meta = pq.read_metadata(source)
        size = len(data) if data is not None else os.path.getsize(path)
        if meta.num_rows > max(PARQUET_FREE_ROWS, MAX_PARQUET_ROWS_PER_BYTE * size):
            raise FormatError(
                label,
                None,
                f"holds {meta.num_rows:,} rows in {size:,} bytes, more than "
                f"{MAX_PARQUET_ROWS_PER_BYTE} rows per byte: refused unread as a decompression bomb",
            )
        return pq.read_table(pa.BufferReader(data) if data is not None else str(path))
    except (pa.ArrowInvalid, OSError) as err:
        raise FormatError(label, None, f"not a readable parquet file ({_one_line(err)})") from None


class _Where:
    """How a row is named in messages: a CSV line (header = line 1) or a parquet row."""

    def __init__(self, label: str, csv: bool) -> None:
        self.label, self.csv = label, csv

    def error(self, row: int, detail: str) -> FormatError:
        if self.csv:
            return FormatError(self.label, row + 2, detail)
        return FormatError(self.label, None, f"row {row + 1}: {detail}")


def _text_column(table: pa.Table, name: str, where: _Where, required: bool) -> None:
    import pyarrow.compute as pc

    col = table.column(name)
    t = col.type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)):
        raise FormatError(
            where.label,
            None,
            f"column {name} holds {t}, and ids must be text (a number is never turned into an id: 007 and 7 differ)",
        )
    if required and len(col):
        empty = pc.fill_null(pc.equal(pc.utf8_length(col.cast(pa.large_string())), 0), True)
        if pc.any(empty).as_py():
            row = int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])
            raise where.error(row, f"{name} is empty")


def _number_column(table: pa.Table, name: str, where: _Where, integer: bool, what: str) -> pa.Array:
    """A numeric column as int64/float64; text (CSV) is checked against the number pattern
    first, so the first bad value is named with its row. An infinite float is refused; a missing
    one (NaN, null, an empty cell) is left to :func:`_refuse_partial_scores`."""
    import pyarrow.compute as pc

    col = table.column(name)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        ok = pc.match_substring_regex(col, _INT if integer else _FLOAT)
        ok = pc.fill_null(ok, not integer)
        if not pc.all(ok, min_count=0).as_py():  # an empty column (a header-only CSV) is all right
            row = int(np.flatnonzero(~ok.to_numpy(zero_copy_only=False))[0])
            raise where.error(row, f"{what}, found {col[row].as_py()!r}")
        col = pc.cast(pc.utf8_trim_whitespace(col), pa.int64() if integer else pa.float64())
    elif pa.types.is_boolean(col.type) or not (
        pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type)
    ):
        raise FormatError(where.label, None, f"column {name} holds {col.type}: {what}")
    values = col.to_numpy(zero_copy_only=False).astype(np.float64)
    if integer:
        bad = np.isnan(values) | (values != np.round(values))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise where.error(row, f"{what}, found {col[row].as_py()!r}")
        return pa.array(values.astype(np.int64))
    if np.isinf(values).any():
        row = int(np.flatnonzero(np.isinf(values))[0])
        raise where.error(row, f"{name} must be a finite number, found {col[row].as_py()!r}")
    return pa.array(values)


def _frame(table: pa.Table) -> pd.DataFrame:
    mapping = {pa.string(): ID, pa.large_string(): ID}
    return table.to_pandas(types_mapper=mapping.get)


def _load(path: Any, fmt: str, data: bytes | None, label: str) -> tuple[pa.Table, _Where]:
    if fmt == "parquet":
        return _parquet_table(path, data, label), _Where(label, False)
    return _csv_table(path, data, label), _Where(label, True)


def _refuse_swapped(columns: list[str], role: str, label: str, api: bool) -> None:
    """A table of the other role is refused as :func:`retrieval_eval.io.detect.expect` refuses a
    file: what it looks like and what reads it (and, through the Python API, the order)."""
    swapped = swapped_columns(columns, role)
    if swapped:
        other = "run" if role == "labels" else "labels"
        raise FormatError(
            label, None, f"{swapped}; pass it with {READ_WITH[other]}" + (f"; {ORDER_HINT}" if api else "")
        )


def read_table_labels(
    path: str | os.PathLike[str],
    fmt: str | None = None,
    data: bytes | None = None,
    label: str | None = None,
    api: bool = False,
) -> pd.DataFrame:
    """Judgments from a parquet or CSV table (``fmt``: ``"parquet"``/``"csv"``, else by the
    file's kind). Columns: ``query_id``, ``doc_uri``, ``relevance`` (or PyTerrier's ``qid``,
    ``docno``, ``label``; ir_measures' ``doc_id``), and any optional judgment field; an
    ``extra`` column written by :func:`write_parquet` holds the unknown fields as JSON text.
    ``line`` is the row's CSV line or 1-based parquet row. A negative grade is kept as the
    table says and refused by the coercion (only qrels text has TREC's "judged, harmful")."""
    label = str(path) if label is None else label
    fmt = fmt or _kind(path)
    table, where = _load(path, fmt, data, label)
    _refuse_swapped(table.column_names, "labels", label, api)
    table = table.rename_columns(list(label_frame(pd.DataFrame(columns=table.column_names)).columns))
    missing = [c for c in ("query_id", "doc_uri", "relevance") if c not in table.column_names]
    if missing:
        raise FormatError(
            label,
            None,
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            "(judgments need query_id, doc_uri, relevance; or PyTerrier's qid, docno, label)",
        )
    for name in table.column_names:
        if name in JUDGMENT_FIELDS and name != "relevance":
            _text_column(table, name, where, required=name in ("query_id", "doc_uri"))
    rel = _number_column(table, "relevance", where, True, "relevance must be an integer")
    if len(rel) and np.asarray(rel).min() < 0:
        row = int(np.flatnonzero(np.asarray(rel) < 0)[0])
        raise where.error(row, f"relevance must be >= 0, found {np.asarray(rel)[row]}")
    table = table.set_column(table.column_names.index("relevance"), "relevance", rel)
    extra = None
    if "extra" in table.column_names:
        extra = table.column("extra")
        table = table.drop_columns(["extra"])
    frame = _frame(table)
    first = 2 if where.csv else 1
    frame["line"] = np.arange(first, first + len(frame), dtype=np.int64)
    if extra is not None:
        frame["extra"] = _extra_values(extra, where)
    return judgments_from_frame(frame, label)  # the table's swap was refused above, its names renamed


def _extra_values(col: pa.ChunkedArray, where: _Where) -> np.ndarray:
    """The ``extra`` column's JSON objects (None where null); only non-null rows are parsed."""
    out = np.full(len(col), None, dtype=object)
    values = col.to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(pd.notna(values)):
        try:
            obj = json.loads(values[i])
        except (TypeError, ValueError):
            obj = None
        if not isinstance(obj, dict):
            raise where.error(int(i), "extra must be a JSON object")
        out[i] = obj
    return out


def read_table_run(
    path: str | os.PathLike[str],
    fmt: str | None = None,
    system: str | None = None,
    data: bytes | None = None,
    label: str | None = None,
    api: bool = False,
) -> pd.DataFrame:
    """A run from a parquet or CSV table: ``query_id, doc_id`` and optionally ``system``,
    ``rank``, ``score`` (or PyTerrier's ``qid, docno, score, rank`` with 0-based ranks).
    Without ``rank`` the row order is the ranking order, as for a frame."""
    label = str(path) if label is None else label
    fmt = fmt or _kind(path)
    table, where = _load(path, fmt, data, label)
    _refuse_swapped(table.column_names, "run", label, api)
    pyterrier = "qid" in table.column_names and "docno" in table.column_names
    names = table.column_names
    rename = {
        "qid": "query_id" if "query_id" not in names else "qid",
        "docno": "doc_id" if "doc_id" not in names else "docno",
    }
    table = table.rename_columns([rename.get(c, c) for c in names])
    pyterrier = pyterrier and "query_id" not in names
    missing = [c for c in ("query_id", "doc_id") if c not in table.column_names]
    if missing:
        raise FormatError(
            label,
            None,
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            "(a run needs query_id, doc_id; or PyTerrier's qid, docno)",
        )
    for name in ("query_id", "doc_id", "system"):
        if name in table.column_names:
            _text_column(table, name, where, required=name != "system")
    if "score" in table.column_names:
        table = table.set_column(
            table.column_names.index("score"),
            "score",
            _number_column(table, "score", where, False, "score must be a number"),
        )
    if "rank" in table.column_names:
        table = table.set_column(
            table.column_names.index("rank"),
            "rank",
            _number_column(table, "rank", where, True, "rank must be an integer"),
        )
    frame = _frame(table)
    if "score" in frame.columns:
        _refuse_partial_scores(frame, where)
    if pyterrier:  # back to PyTerrier's names, so its rank rule (0-based) applies in one place
        frame = run_frame(frame.rename(columns={"query_id": "qid", "doc_id": "docno"}))
    check_system(system)  # as as_run checks it
    return run_from_any_frame(frame, system, label)  # the table's swap was refused above


def _refuse_partial_scores(frame: pd.DataFrame, where: _Where) -> None:
    """Refuse a missing score (NaN, null, an empty cell) in a ranking that has other scores.

    The one rule of every run format: a JSONL line has scores for all its entries or none, a
    TREC line's score is a finite number. A ranking without any score (a system written
    without scores) stays valid, its scores NaN, as a JSONL line without ``scores`` is.
    """
    missing = frame["score"].isna().to_numpy()
    if not missing.any():
        return
    keys = [c for c in ("system", "query_id") if c in frame.columns]
    scored = (~frame["score"].isna()).groupby([frame[c] for c in keys], sort=False, dropna=False).transform("any")
    bad = missing & scored.to_numpy(dtype=bool)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise where.error(
            row,
            f"score is missing (empty, NaN or null) in query {frame['query_id'].iloc[row]}, "
            "whose other rows have scores; a ranking has a score on every row or on none",
        )


def _kind(path: Any) -> str:
    kind = sniff(path).kind
    if kind not in ("parquet", "csv"):
        raise FormatError(str(path), None, "not a parquet or CSV table")
    return kind
