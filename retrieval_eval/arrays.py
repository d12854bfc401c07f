"""Columnar primitives over arrow arrays: the vectorized steps both the readers and the engine
take (codes of a string column, offsets, takes across chunks, the blocks of a sorted run).

Base layer: imports :mod:`retrieval_eval.model` only. No per-row Python anywhere.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .model import ID

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "arrow",
    "block_starts",
    "codes",
    "keep_starts",
    "kept_starts",
    "fixed_width",
    "offsets",
    "run_starts",
    "strings_of",
    "take",
    "take_strings",
    "whole",
]


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
    pieces = [
        arr.chunk(c).take(pa.array(rows[by_chunk[cut[c] : cut[c + 1]]] - bounds[c]))
        for c in range(arr.num_chunks)
        if cut[c + 1] > cut[c]
    ]
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
    if _changes(arr) > n // 4:
        whole_ = whole(arr).dictionary_encode()  # dictionary in first-appearance order
        return (
            whole_.indices.to_numpy(zero_copy_only=False).astype(np.int32),
            pd.Index(pd.array(whole_.dictionary, dtype=ID), dtype=ID),
        )
    starts = run_starts(arr)
    heads = take(arr, starts).dictionary_encode()
    codes = np.repeat(heads.indices.to_numpy(zero_copy_only=False).astype(np.int32), np.diff(np.r_[starts, n]))
    return codes, pd.Index(pd.array(heads.dictionary, dtype=ID), dtype=ID)


def _changes(arr: Any) -> int:
    """How many neighbours differ (counted in an arrow bitmap: no index array is made)."""
    import pyarrow.compute as pc

    if len(arr) <= 1:
        return 0
    return int(pc.sum(pc.fill_null(pc.not_equal(arr[1:], arr[:-1]), True), min_count=0).as_py())


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


def block_starts(
    system: Any, qid: Any, rank: Any, strict: bool, only_in_order: bool = False
) -> tuple[np.ndarray, bool]:
    """The first row of each block of neighbouring rows with one (system, query), and whether
    ranks go up inside every block (``strict``: never equal). With ``only_in_order``, no
    starts (an empty array) when the ranks do not go up: a caller that then sorts the rows has
    no use for them (on a shuffled file they are every row).

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
    if only_in_order and not in_order:
        return np.zeros(0, dtype=np.int64), False
    return np.r_[0, pc.indices_nonzero(boundary).to_numpy() + 1].astype(np.int64), in_order


#: The blocks a reader found in the frames it made: (system column, query column, starts), the
#: columns' arrow arrays held weakly (a frame let go takes its entry with it). Newest last.
_KEPT: list[tuple[weakref.ref, weakref.ref, np.ndarray]] = []
_KEPT_MAX = 8


def _held(column: Any) -> Any:
    """The arrow array a pandas column holds: the object itself (``__arrow_array__``, which
    pandas answers with its own array, where ``pa.array`` may wrap a single chunk anew)."""
    values = column.array if isinstance(column, (pd.Series, pd.Index)) else column
    get = getattr(values, "__arrow_array__", None)
    return get() if get is not None else None


def keep_starts(system: pd.Series, qid: pd.Series, starts: np.ndarray) -> None:
    """Say that the (system, query) blocks of a frame's rows (columns ``system`` and ``qid``)
    start at ``starts`` (what :func:`block_starts` finds): the TREC reader, which found them
    while it read, hands them to the engine, which would compare the 10M neighbouring ids
    again (0.1 s). Kept by the identity of the arrow arrays the columns hold: arrow's arrays
    are immutable, so while the same objects live they hold the same values, and a column set
    anew (pandas makes a new array) or a frame made of other rows has other objects."""
    pair = _held(system), _held(qid)
    if pair[0] is None or pair[1] is None:
        return
    live = [e for e in _KEPT if e[0]() is not None and e[1]() is not None]
    _KEPT[:] = [*live[-(_KEPT_MAX - 1) :], (weakref.ref(pair[0]), weakref.ref(pair[1]), starts)]


def kept_starts(system: pd.Series, qid: pd.Series, rank: np.ndarray) -> tuple[np.ndarray, bool] | None:
    """:func:`block_starts` of these columns (``strict``) from what a reader kept of the very
    arrays they hold, else None. Only the blocks are kept: whether the ranks go up inside each
    is checked again on ``rank`` (a caller may have set the rank column), a neighbour compare
    of int64s."""
    if not _KEPT:
        return None
    pair = _held(system), _held(qid)
    for s, q, starts in reversed(list(_KEPT)):  # a copy: a reader on another thread may add
        if pair[0] is not None and s() is pair[0] and q() is pair[1]:
            up = rank[1:] > rank[:-1]
            up[starts[1:] - 1] = True  # a block's first row follows another block
            return starts, bool(up.all())
    return None


#: Ids up to this many bytes are moved as numpy fixed-width items (:func:`fixed_width`).
FIXED_WIDTH_MAX = 32


def fixed_width(arr: Any) -> np.ndarray | None:
    """The values of a (large_)string or (large_)binary column as one numpy array of fixed-width
    items, when every value has the same length (1 to :data:`FIXED_WIDTH_MAX` bytes) and none
    is null; else None.

    The items are unsigned integers for a width of 1, 2, 4 or 8 bytes (numpy moves those
    fastest), else ``S<width>``; either way only their bytes matter (:func:`strings_of` makes
    strings of them again). Ids of one width (``D0256951``, ``q0038``) are the usual case:
    moving them so costs a fraction of a take of variable-width strings. One chunk's values
    are a view of its data buffer (no copy); several chunks are copied into one array.
    """
    import pyarrow as pa

    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    chunks = [c for c in chunks if len(c)]
    if not chunks or not all(_is_bytes(c.type) and c.null_count == 0 for c in chunks):
        return None
    ends = [offsets(c) for c in chunks]
    width = int(ends[0][1] - ends[0][0])
    if not 0 < width <= FIXED_WIDTH_MAX:
        return None
    for e in ends:
        if int(e[-1] - e[0]) != width * (len(e) - 1) or not bool(np.all(np.diff(e) == width)):
            return None
    item = _ITEM.get(width, np.dtype(f"S{width}"))
    parts = [
        np.frombuffer(c.buffers()[2], dtype=np.uint8)[int(e[0]) : int(e[-1])].view(item) for c, e in zip(chunks, ends)
    ]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


_ITEM = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _is_bytes(t: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)


def strings_of(values: np.ndarray, width: int, type_: Any) -> pa.Array:
    """The arrow array of type ``type_`` (a string or binary type) whose values are the items
    of ``values`` (from :func:`fixed_width`, ``width`` bytes each); the bytes are not copied."""
    import pyarrow as pa

    n = len(values)
    wide = pa.types.is_large_string(type_) or pa.types.is_large_binary(type_)
    ends = np.arange(0, (n + 1) * width, width, dtype=np.int64 if wide else np.int32)
    data = np.ascontiguousarray(values).view(np.uint8)
    return pa.Array.from_buffers(type_, n, [None, pa.py_buffer(ends), pa.py_buffer(data)])


def take_strings(arr: Any, rows: np.ndarray) -> pa.Array:
    """``arr.take(rows)`` for a string column (see :func:`take`): by numpy over fixed-width items
    when every value has one short width (:func:`fixed_width`), else by arrow."""
    values = fixed_width(arr)
    if values is None or len(values) < _FIXED_TAKE_ROWS:
        return take(arr, rows)
    width = values.dtype.itemsize
    return strings_of(values[np.asarray(rows, dtype=np.int64)], width, arr.type)


#: Below this many rows, arrow's take is as fast as numpy's and :func:`take_strings` uses it.
_FIXED_TAKE_ROWS = 1024
