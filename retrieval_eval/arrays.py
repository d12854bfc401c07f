"""Columnar primitives over arrow arrays: the vectorized steps both the readers and the engine
take (codes of a string column, offsets, takes across chunks, the blocks of a sorted run).

Base layer: imports :mod:`retrieval_eval.model` only. No per-row Python anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .model import ID

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow", "block_starts", "codes", "offsets", "run_starts", "take", "whole"]


def arrow(values: Any) -> pa.Array | pa.ChunkedArray:
    """The arrow strings behind a column (no copy when the column is arrow-backed)."""
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    values = values.array if isinstance(values, (pd.Index, pd.Series)) else values
    if values.dtype != ID:
        values = pd.array(values, dtype=ID)
    return pa.array(values)


def whole(arr: Any) -> pa.Array:
    import pyarrow as pa

    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def take(arr: Any, rows: np.ndarray) -> pa.Array:
    """``arr.take(rows)`` as one array, chunk by chunk for a chunked array.

    (Arrow's own take on a chunked array first concatenates every chunk: a copy of the whole
    column to read a few of its rows.)
    """
    import pyarrow as pa

    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(arr, pa.Array):
        return arr.take(pa.array(rows))
    if arr.num_chunks <= 1:
        return whole(arr).take(pa.array(rows))
    bounds = np.cumsum([0] + [len(c) for c in arr.chunks])
    chunk = np.searchsorted(bounds, rows, side="right") - 1
    ordered = bool(np.all(chunk[1:] >= chunk[:-1]))
    by_chunk = np.arange(len(rows)) if ordered else np.argsort(chunk, kind="stable")
    cut = np.searchsorted(chunk[by_chunk], np.arange(arr.num_chunks + 1))
    pieces = [arr.chunk(c).take(pa.array(rows[by_chunk[cut[c]:cut[c + 1]]] - bounds[c]))
              for c in range(arr.num_chunks) if cut[c + 1] > cut[c]]
    out = pa.concat_arrays(pieces) if pieces else arr.chunk(0).slice(0, 0)
    return out if ordered else out.take(pa.array(np.argsort(by_chunk)))


def run_starts(arr: Any) -> np.ndarray:
    """Start of every run of equal adjacent values (an arrow bitmap, not a 10M-byte mask)."""
    import pyarrow.compute as pc

    n = len(arr)
    if n <= 1:
        return np.zeros(n, dtype=np.int64)
    change = pc.fill_null(pc.not_equal(arr[1:], arr[:-1]), True)
    return np.r_[0, pc.indices_nonzero(change).to_numpy() + 1].astype(np.int64)


def codes(arr: Any) -> tuple[np.ndarray, pd.Index]:
    """Codes (first-appearance order) and distinct values of a string column.

    Files keep a query's lines together, so only the first value of each run of equal values
    is hashed: 100k query ids rather than 3M label lines. A column whose values change on most
    rows (a shuffled file) is hashed whole, in one pass.
    """
    n = len(arr)
    starts = run_starts(arr)
    if len(starts) > n // 4:
        whole_ = whole(arr).dictionary_encode()  # dictionary in first-appearance order
        return (whole_.indices.to_numpy(zero_copy_only=False).astype(np.int32),
                pd.Index(pd.array(whole_.dictionary, dtype=ID), dtype=ID))
    heads = take(arr, starts).dictionary_encode()
    codes = np.repeat(heads.indices.to_numpy(zero_copy_only=False).astype(np.int32),
                      np.diff(np.r_[starts, n]))
    return codes, pd.Index(pd.array(heads.dictionary, dtype=ID), dtype=ID)


def tie_runs(n: int, tie: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of tied neighbours among ``n`` rows: row ``i + 1`` continues row ``i``'s run for
    each ``i`` in ``tie``, and starts a new run otherwise. Returns each row's run number and
    each run's first row."""
    new_run = np.ones(n, dtype=bool)
    new_run[tie + 1] = False
    return np.cumsum(new_run) - 1, np.flatnonzero(new_run)


def offsets(chunk: Any) -> np.ndarray:
    """The offsets of a (large_)string or (large_)binary array, as a numpy view."""
    import pyarrow as pa

    wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    n = len(chunk)
    return np.frombuffer(chunk.buffers()[1], dtype=np.int64 if wide else np.int32)[chunk.offset : chunk.offset + n + 1]


def block_starts(system: Any, qid: Any, rank: Any, strict: bool) -> tuple[np.ndarray, bool]:
    """The first row of each block of neighbouring rows with one (system, query), and whether
    ranks go up inside every block (``strict``: never equal).

    ``system`` is a string column, or None when one value names every row; ``rank`` is an
    arrow integer column. Only neighbours are compared, in arrow bitmaps: no row is hashed and
    no per-row numpy array is made.
    """
    import pyarrow.compute as pc

    n = len(qid)
    if n <= 1:  # one row is one block (and arrow 14 crashes on an empty comparison)
        return np.zeros(n, dtype=np.int64), True
    boundary = pc.not_equal(qid[1:], qid[:-1])
    if system is not None:
        boundary = pc.or_(boundary, pc.not_equal(system[1:], system[:-1]))
    boundary = pc.fill_null(boundary, True)
    up = pc.greater if strict else pc.greater_equal
    in_order = bool(pc.all(pc.or_(up(rank[1:], rank[:-1]), boundary), min_count=0).as_py())
    return np.r_[0, pc.indices_nonzero(boundary).to_numpy() + 1].astype(np.int64), in_order
