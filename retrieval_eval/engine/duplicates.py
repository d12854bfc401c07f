"""Whether a ranking repeats a document anywhere, every row read (not only the rows the
cutoffs reach): the late check of :func:`retrieval_eval.engine.scan.scan_run`.

Imports :mod:`retrieval_eval.engine.kernels` only.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .kernels import fetch, groups, hashes, ranges, repeats, same

__all__ = ["repeat_anywhere"]


def repeat_anywhere(
    doc_arr: Any,
    starts: np.ndarray,
    lengths: np.ndarray,
    order: np.ndarray | None,
    blocks: np.ndarray,
    steps: np.ndarray,
) -> np.ndarray:
    """Per ranking of ``blocks``: whether it repeats a key anywhere, every row read.

    A ranking is the rows ``starts[b]`` to ``starts[b] + lengths[b]`` (of ``order`` when
    given) of the doc-id column ``doc_arr``; ``steps`` cuts ``blocks`` into the scan's steps.

    Whether a ranking repeated a key is a fact about the ranking, not about the part of it the
    cutoffs reach: a retriever that returns a chunk twice at ranks 3 and 40 has the bug at k=10
    too. Rankings are read in the scan's steps; ids are compared by their hashes as in
    :func:`~retrieval_eval.engine.scan.scan_run`, and each repeat found is checked on the strings (a collision
    settles the step on exact codes).
    """
    out = np.zeros(len(blocks), dtype=bool)
    if not len(blocks):
        return out
    lengths = lengths[blocks]

    def part(a: int, b: int) -> None:
        length = lengths[a:b]
        rows = ranges(starts[blocks[a:b]], length)
        docs = fetch(doc_arr, rows if order is None else order[rows])
        local = np.repeat(np.arange(b - a, dtype=np.int64), length)
        shift = np.uint64(64 - max(b - a, 1).bit_length())
        ids = (docs, *hashes(docs))
        key = local.view(np.uint64) << shift
        key |= ids[1] >> (np.uint64(64) - shift)
        prev = groups(key, heads=False)[1]
        dup = np.flatnonzero(prev >= 0)
        if not same(ids, dup, ids, prev[dup]):  # a collision: exact codes for this step
            codes = docs.dictionary_encode().indices.to_numpy(zero_copy_only=False)
            key = local.view(np.uint64) << shift
            key |= codes.astype(np.uint64)
            dup = np.flatnonzero(repeats(key))
        out[a:b] = np.bincount(local[dup], minlength=b - a) > 0

    spans = list(zip(steps[:-1].tolist(), steps[1:].tolist()))
    if len(spans) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            list(pool.map(lambda span: part(*span), spans))
    else:
        for span in spans:
            part(*span)
    return out
