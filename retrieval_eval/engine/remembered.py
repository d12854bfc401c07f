"""The ranking boundaries of the run read last, kept for the length of one public call.

In one ``evaluate`` the tie check, the scan and the catalogue's scan each ask where the run's
rankings start (:func:`retrieval_eval.engine.scan.ranking_starts`); inside :func:`found_once`
the answer is found once. Imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

__all__ = ["found_once", "recalled", "remember"]

#: Inside :func:`found_once`: the ranking boundaries of the run read last, with its columns
#: (held, so that no other array can take their place in memory). One run only: a streamed
#: call reads block after block, and none is held past the next.
_FOUND: ContextVar[list[tuple[tuple[Any, ...], tuple[Any, ...], tuple[np.ndarray, bool]]] | None] = ContextVar(
    "ranking_starts_found", default=None
)


@contextmanager
def found_once() -> Iterator[None]:
    """Within: :func:`ranking_starts` of a run is found once, however many readers ask in turn
    (in one public call the tie check, the scan and the catalogue's scan each do: 0.05-0.1 s
    per 10M rows each time). Nothing writes to a frame's columns within a call, and arrow's are
    immutable, so columns whose values sit at the same place in memory hold the same values."""
    token = _FOUND.set([])
    try:
        yield
    finally:
        _FOUND.reset(token)


def _place(arr: Any) -> tuple[Any, ...]:
    """Where an array's values sit in memory: its buffers' addresses (and offsets, lengths)."""
    import pyarrow as pa

    if isinstance(arr, np.ndarray):
        return (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    return tuple((c.type, c.offset, len(c), tuple(0 if b is None else b.address for b in c.buffers())) for c in chunks)


def recalled(columns: tuple[Any, ...]) -> tuple[np.ndarray, bool] | None:
    """What :func:`ranking_starts` found of these columns, when they are the run read last."""
    memo = _FOUND.get()
    if not memo:
        return None
    where, _, found = memo[0]
    return found if where == tuple(_place(c) for c in columns) else None


def remember(columns: tuple[Any, ...], found: tuple[np.ndarray, bool]) -> None:
    memo = _FOUND.get()
    if memo is not None:
        memo[:] = [(tuple(_place(c) for c in columns), columns, found)]
