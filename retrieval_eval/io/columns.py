"""Data-model columns built from arrow arrays and Python values, without per-row Python.

The id columns arrow parses become a frame's "string" columns as they are (chunked, no copy,
:func:`arrow_strings`); a column whose rows are all alike (a run's one system, a field qrels
lack) is one small block repeated (:func:`constant_strings`, :func:`null_strings`). Also the
grouping of a run's rows by (system, query) that readers and writers share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..arrays import arrow as _arrow
from ..arrays import codes as _codes
from ..arrays import offsets as _offsets
from ..arrays import take as _take
from ..errors import FormatError
from ..model import ID

__all__ = [
    "LARGE_STRING",
    "arrow_of",
    "arrow_strings",
    "block_rank",
    "check_system",
    "constant_strings",
    "group_codes",
    "group_starts",
    "in_group_order",
    "na_strings",
    "new_run_frame",
    "no_empty",
    "rows_of",
    "null_strings",
    "numpy_column",
    "object_column",
    "plain_fields",
    "release",
    "string_array",
]


LARGE_STRING = pa.large_string()  # the text type of pandas' "string" columns


def string_array(values: list[Any], label: str, lines: Sequence[Any] | None = None) -> pd.api.extensions.ExtensionArray:
    """``values`` (str or None) as a "string" array; a lone surrogate is a FormatError."""
    try:
        return pd.array(values, dtype=ID)
    except (UnicodeEncodeError, UnicodeDecodeError):
        for i, v in enumerate(values):
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    line = lines[i] if lines is not None and lines[i] else None
                    raise FormatError(label, line, "text is not valid Unicode (a lone surrogate escape)") from None
        raise


def arrow_strings(arr: pa.Array | pa.ChunkedArray) -> Any:
    """A pyarrow string array as a pandas "string" array, without a Python-object detour.

    A chunked array is kept as it is (pandas holds a chunked array), so the chunks arrow's
    readers return become the column with no copy of their text.
    """
    if arr.type != LARGE_STRING:
        arr = arr.cast(LARGE_STRING)
    if ID.storage == "pyarrow":
        return pd.arrays.ArrowStringArray(arr)
    return pd.array(arr.to_pandas(types_mapper={pa.string(): ID, LARGE_STRING: ID}.get), dtype=ID)


def utf8_view(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A large_binary column as large_string, sharing its buffers: for bytes already known to
    be valid UTF-8 (a field of UTF-8 text cut at ASCII spaces and newlines is UTF-8), so that
    arrow's check of every string is not paid a second time."""
    return pa.chunked_array([c.view(LARGE_STRING) for c in col.chunks], LARGE_STRING)


#: Rows in the block that a constant or all-null string column repeats (see :func:`_repeated`).
_REPEAT_BLOCK = 1 << 16


def _repeated(block: pa.Array, n: int) -> pa.ChunkedArray:
    """``n`` rows of a column whose rows are all alike, as ``block`` repeated chunk after chunk.

    Every chunk is the same arrow array (its buffers shared), so a 10M-row column of one run
    name or of nulls costs one block (under 1 MB), not 10M offsets and copies of the text.
    """
    full, rest = divmod(n, len(block)) if len(block) else (0, 0)
    return pa.chunked_array([block] * full + ([block.slice(0, rest)] if rest else []), block.type)


def _const_large_strings(value: str, n: int) -> pa.ChunkedArray:
    """``n`` copies of ``value`` as large_string (one shared block, built from buffers)."""
    k = min(n, _REPEAT_BLOCK)
    raw = value.encode("utf-8")
    offsets = np.arange(0, (k + 1) * len(raw), len(raw), dtype=np.int64) if raw else np.zeros(k + 1, np.int64)
    return _repeated(pa.Array.from_buffers(LARGE_STRING, k, [None, pa.py_buffer(offsets), pa.py_buffer(raw * k)]), n)


def constant_strings(value: str, n: int) -> Any:
    return arrow_strings(_const_large_strings(value, n))


def null_strings(n: int) -> pa.ChunkedArray:
    """``n`` nulls as large_string: one block of nulls repeated (see :func:`_repeated`).

    A frame's absent columns each wrap the same one (arrow arrays are immutable, and each
    column is its own pandas array, so a write to one column reaches no other).
    """
    return _repeated(pa.nulls(min(n, _REPEAT_BLOCK), LARGE_STRING), n)


def na_strings(n: int) -> Any:
    return arrow_strings(null_strings(n))


def plain_fields(col: pa.ChunkedArray, comment: bool = False) -> bool:
    """True when no value of a string/binary column is null or empty (nor, with ``comment``,
    starts with ``#``), read off the offsets buffers with no per-value work."""
    for chunk in col.chunks:
        if len(chunk) == 0:
            continue
        if chunk.null_count:
            return False
        offsets = _offsets(chunk)
        if not np.all(offsets[1:] > offsets[:-1]):
            return False
        if comment:
            data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)
            if np.any(data[offsets[:-1]] == ord("#")):
                return False
    return True


def _writable(values: Any) -> Any:
    """A numpy array the caller may write into: arrow's zero-copy views are read-only."""
    if isinstance(values, np.ndarray) and not values.flags.writeable:
        return values.copy()
    return values


def object_column(values: np.ndarray) -> pd.Series:
    """An object column that a frame takes as it is: given a bare object array, pandas scans it
    to infer a type (0.1 s and ~70 MB of temporaries at 3M rows)."""
    return pd.Series(values, dtype=object, copy=False)


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    """One new (writable) array of ``dtype`` from ``parts``, in a single copy."""
    return np.concatenate(parts, dtype=dtype) if parts else np.zeros(0, dtype)


def numpy_column(col: pa.ChunkedArray, dtype: Any) -> np.ndarray:
    """A null-free numeric arrow column as one writable numpy array (its chunks copied once)."""
    return _concat([c.to_numpy() for c in col.chunks], dtype)


def new_run_frame(system: Any, qid: Any, rank: Any, doc: Any, score: Any) -> pd.DataFrame:
    return pd.DataFrame(
        {"system": system, "query_id": qid, "rank": _writable(rank), "doc_id": doc, "score": _writable(score)},
        copy=False,
    )


def rows_of(frame: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """``frame.iloc[rows]`` with a fresh 0-based index, each arrow string column taken chunk
    by chunk (:func:`~retrieval_eval.arrays.take`).

    pandas takes from an arrow column with arrow's take, which first joins all its chunks: a
    copy of the whole column to read a few of its rows. A frame arrow's readers made has a
    chunk per block of the file, and a few rows of it cost a copy of every one (5-10 ms for
    10k rows of a 1M-row block). Other columns are taken by pandas.
    """
    rows = np.asarray(rows, dtype=np.int64)
    out = {}
    for name in frame.columns:
        col = frame[name]
        if col.dtype == ID and ID.storage == "pyarrow":
            out[name] = arrow_strings(_take(_arrow(col), rows))
        else:
            out[name] = col.iloc[rows].reset_index(drop=True)
    return pd.DataFrame(out, columns=frame.columns, copy=False)


def no_empty(arr: pa.Array) -> bool:
    import pyarrow.compute as pc

    return len(arr) == 0 or not pc.any(pc.equal(pc.binary_length(arr), 0)).as_py()


def check_system(system: str | None) -> None:
    if system is not None and (not isinstance(system, str) or not system):
        raise ValueError("system must be a non-empty string")


def arrow_of(col: pd.Series) -> pa.Array:
    """A "string" column as one contiguous large_string arrow array (no Python objects)."""
    arr = pa.array(col.array)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr.cast(LARGE_STRING)


def group_codes(system: Any, qid: Any) -> np.ndarray:
    """Integer code per row for its (system, query_id), numbered in order of first appearance.

    ``system`` is an arrow array, or a str when every row has that system.
    """
    cq = _codes(qid)[0].astype(np.int64)
    if isinstance(system, str):
        return cq
    cs = _codes(system)[0].astype(np.int64)
    if len(cs) and cs.max() == 0:
        return cq
    combined = cs * (int(cq.max()) + 1 if len(cq) else 1) + cq
    return pd.factorize(combined, sort=False)[0].astype(np.int64)


def in_group_order(codes: np.ndarray, rank: np.ndarray, strict: bool = False) -> bool:
    """True when rows are already grouped by code (ascending) and ranked within each group
    (``strict``: no two rows of a group share a rank)."""
    same = codes[1:] == codes[:-1]
    up = rank[1:] > rank[:-1] if strict else rank[1:] >= rank[:-1]
    return bool(np.all(codes[1:] >= codes[:-1])) and bool(np.all(~same | up))


def group_starts(sorted_codes: np.ndarray) -> np.ndarray:
    if len(sorted_codes) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], sorted_codes[1:] != sorted_codes[:-1])))


def block_rank(first: np.ndarray, n: int) -> np.ndarray:
    """1-based position of each of ``n`` rows in its block; blocks start at rows ``first``."""
    size = n // len(first) if len(first) else 0
    if size and size * len(first) == n and bool(np.all(first == np.arange(0, n, size))):
        # Blocks of one size (a run cut at one depth): one row of ranks, copied down.
        rank: np.ndarray = np.empty((len(first), size), dtype=np.int64)
        rank[:] = np.arange(1, size + 1, dtype=np.int64)
        return rank.reshape(-1)
    rank = np.ones(n, dtype=np.int64)
    rank[first[1:]] -= np.diff(first)
    return np.cumsum(rank, out=rank)


def read_pool() -> pa.MemoryPool:
    """The memory pool arrow's readers build a file's columns in: the system allocator.

    arrow's default pool (mimalloc in pyarrow 26) hands freed pages back to the kernel and
    faults them in again while a big file is parsed; on a virtual machine each fault is costly.
    Reading the 10M-line benchmark run took 4-7 s of system time in the default pool and 0.7 s
    in this one, its user time unchanged (``benchmarks/bench_all_trec.py`` reports both). Only
    what the readers allocate is affected: the process's default pool is left alone.
    """
    return pa.system_memory_pool()


def release() -> None:
    """Hand the memory arrow freed back to the system now, so numpy's arrays do not stack on it.

    arrow's allocator keeps freed pages for reuse; a big read frees hundreds of MB of parse
    buffers and chunks, and without this the process's peak is their sum with what follows.
    """
    pa.default_memory_pool().release_unused()
