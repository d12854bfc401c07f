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
    too. Rankings are read in the scan's steps (two threads); each ranking's id hashes are
    sorted (:func:`_hash_repeats`), and only a ranking where two of them meet is read again
    (:func:`_repeats_exact`), every repeat checked on the strings.
    """
    out = np.zeros(len(blocks), dtype=bool)
    if not len(blocks):
        return out
    lengths = lengths[blocks]

    def part(a: int, b: int) -> None:
        length = lengths[a:b]
        rows = ranges(starts[blocks[a:b]], length)
        docs = fetch(doc_arr, rows if order is None else order[rows])
        hashed, size = hashes(docs)
        suspect = np.flatnonzero(_hash_repeats(hashed, length))
        if len(suspect):  # rare: a repeat, or two ids of one ranking sharing 32 hash bits
            within = ranges(np.cumsum(length)[suspect] - length[suspect], length[suspect])
            out[a + suspect] = _repeats_exact((docs.take(within), hashed[within], size[within]), length[suspect])

    spans = list(zip(steps[:-1].tolist(), steps[1:].tolist()))
    if len(spans) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            list(pool.map(lambda span: part(*span), spans))
    else:
        for span in spans:
            part(*span)
    return out


def _hash_repeats(hashed: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Per ranking (consecutive ``length`` rows of ``hashed``): whether two of its rows share
    the top 32 bits of their hashes. Equal ids hash equal, so a ranking without is free of
    repeats; one with is only a suspect.

    Each ranking's hashes are sorted (numpy's SIMD sort, which lets go of the GIL) and
    neighbours compared: a ranking is a few thousand rows at most, so its sort stays in cache,
    where a hash table over a step's rows reads memory at random. Rankings of one length (a
    run cut at one depth) are the rows of a matrix, sorted row by row; others are sorted as
    one array of (ranking, hash) keys.
    """
    top = (hashed >> np.uint64(32)).astype(np.uint32)
    n_blocks = len(length)
    if n_blocks and bool(np.all(length == length[0])):
        grid = np.sort(top.reshape(n_blocks, int(length[0])), axis=1)
        return np.asarray((grid[:, 1:] == grid[:, :-1]).any(axis=1))
    key = np.repeat(np.arange(n_blocks, dtype=np.uint64), length) << np.uint64(32)
    key |= top
    key.sort()
    same_key = np.flatnonzero(key[1:] == key[:-1])
    out = np.zeros(n_blocks, dtype=bool)
    out[(key[same_key] >> np.uint64(32)).astype(np.int64)] = True
    return out


def _repeats_exact(ids: tuple[Any, np.ndarray, np.ndarray], length: np.ndarray) -> np.ndarray:
    """Per ranking (consecutive ``length`` rows of ``ids``, as :func:`hashes` gives them with
    the strings): whether it repeats an id. Keys of (ranking, hash bits) are grouped and each
    repeat found is checked on the strings; a collision settles it on exact codes."""
    docs = ids[0]
    n_blocks = len(length)
    local = np.repeat(np.arange(n_blocks, dtype=np.int64), length)
    shift = np.uint64(64 - max(n_blocks, 1).bit_length())
    key = local.view(np.uint64) << shift
    key |= ids[1] >> (np.uint64(64) - shift)
    prev = groups(key, heads=False)[1]
    dup = np.flatnonzero(prev >= 0)
    if not same(ids, dup, ids, prev[dup]):  # a collision: exact codes
        codes = docs.dictionary_encode().indices.to_numpy(zero_copy_only=False)
        key = local.view(np.uint64) << shift
        key |= codes.astype(np.uint64)
        dup = np.flatnonzero(repeats(key))
    return np.bincount(local[dup], minlength=n_blocks) > 0
