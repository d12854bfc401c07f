"""A ranking's repeated documents, every row read (engine.duplicates.repeat_anywhere), against
the definition: a ranking repeats a document when its ids are fewer once made distinct.

The check sorts each ranking's id hashes and reads again only the rankings where two meet;
these tests hold it to the definition for rankings of one length and of many, in and out of
the frame's order, in steps of every size, with hashes that collide everywhere (every ranking
a suspect, every match refused by the strings) and with the filter bypassed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from retrieval_eval.engine import duplicates

ALPHABET = ["d", "doc-é-", "x" * 70, ""]  # short, non-ASCII, long (hashed word by word), bare


def _case(seed: int, one_length: bool):
    """Rankings as lists of ids, laid out as repeat_anywhere reads them: the doc column, each
    ranking's start and length, and (odd seeds) a row order that is not the column's."""
    rng = np.random.default_rng(seed)
    n_rankings = int(rng.integers(1, 40))
    depth = int(rng.integers(1, 30))
    prefix = ALPHABET[seed % len(ALPHABET)]
    rankings = []
    for _ in range(n_rankings):
        size = depth if one_length else int(rng.integers(1, 30))
        pool = int(rng.integers(size, 3 * size + 1)) if rng.random() < 0.6 else 10_000  # repeats likely, or rare
        rankings.append([f"{prefix}{rng.integers(pool)}" for _ in range(size)])
    lengths = np.array([len(r) for r in rankings], dtype=np.int64)
    starts = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    flat = [doc for r in rankings for doc in r]
    order = None
    if seed % 2:  # the column holds the rows shuffled; ``order`` gives them back
        perm = rng.permutation(len(flat))
        column = [None] * len(flat)
        for row, at in enumerate(perm):
            column[at] = flat[row]
        flat, order = column, perm.astype(np.int64)
    return rankings, pa.array(flat, pa.large_string()), starts, lengths, order


def _steps(n_blocks: int, step: int) -> np.ndarray:
    return np.unique(np.r_[np.arange(0, n_blocks, step), n_blocks]).astype(np.int64)


def _check(seed: int, one_length: bool, step: int) -> None:
    rankings, column, starts, lengths, order = _case(seed, one_length)
    rng = np.random.default_rng(seed + 1000)
    blocks = np.sort(rng.choice(len(rankings), size=int(rng.integers(1, len(rankings) + 1)), replace=False))
    got = duplicates.repeat_anywhere(column, starts, lengths, order, blocks, _steps(len(blocks), step))
    want = [len(set(rankings[b])) < len(rankings[b]) for b in blocks]
    assert got.tolist() == want


@pytest.mark.parametrize("step", [1, 3, 1000])
@pytest.mark.parametrize("one_length", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_repeats_match_the_definition(seed, one_length, step):
    _check(seed, one_length, step)


@pytest.mark.parametrize("one_length", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_colliding_hashes_make_every_ranking_a_suspect_and_the_strings_decide(monkeypatch, seed, one_length):
    """Every id hashes alike: every ranking of two rows or more is a suspect, every match on
    hashes fails its check on the strings (ids longer than 8 bytes; up to 8 the real hash cannot
    collide and the check trusts it) and the rankings are settled on exact codes."""
    real = duplicates.hashes
    monkeypatch.setattr(duplicates, "hashes", lambda arr: (np.zeros(len(arr), dtype=np.uint64), real(arr)[1]))
    rankings, column, starts, lengths, order = _case(seed, one_length)
    longer = pa.array([f"document-{s}" for s in column.to_pylist()], pa.large_string())
    exact = []
    real_exact = duplicates._repeats_exact
    monkeypatch.setattr(
        duplicates, "_repeats_exact", lambda ids, length: exact.append(len(length)) or real_exact(ids, length)
    )
    blocks = np.arange(len(rankings))
    got = duplicates.repeat_anywhere(longer, starts, lengths, order, blocks, _steps(len(blocks), 5))
    assert got.tolist() == [len(set(r)) < len(r) for r in rankings]
    assert sum(exact) == int(np.count_nonzero(lengths > 1))  # every ranking of 2+ rows read again


@pytest.mark.parametrize("seed", range(8))
def test_the_exact_check_alone_matches_the_definition(monkeypatch, seed):
    """With the sorted-hash filter bypassed (every ranking a suspect), the exact check decides
    every ranking by itself."""
    monkeypatch.setattr(duplicates, "_hash_repeats", lambda hashed, length: np.ones(len(length), dtype=bool))
    _check(seed, seed % 3 == 0, 4)


def test_only_suspects_are_read_again(monkeypatch):
    """Rankings of distinct ids are settled by their sorted hashes alone; a ranking with a
    repeat, and only that one, is read again and checked on the strings."""
    read_again: list[int] = []
    real_exact = duplicates._repeats_exact
    monkeypatch.setattr(
        duplicates, "_repeats_exact", lambda ids, length: read_again.append(len(length)) or real_exact(ids, length)
    )
    rankings = [[f"d{q}-{i}" for i in range(50)] for q in range(20)]
    rankings[7][40] = rankings[7][3]  # one repeat, past any cutoff
    column = pa.array([d for r in rankings for d in r], pa.large_string())
    lengths = np.full(20, 50, dtype=np.int64)
    starts = np.arange(0, 1000, 50, dtype=np.int64)
    got = duplicates.repeat_anywhere(column, starts, lengths, None, np.arange(20), np.array([0, 10, 20]))
    assert np.flatnonzero(got).tolist() == [7]
    assert read_again == [1]
    lengths[1:] = np.arange(51, 70)  # rankings of many lengths take the (ranking, hash) sort
    column = pa.array([f"e{i}" for i in range(int(lengths.sum()))], pa.large_string())
    starts = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    read_again.clear()
    got = duplicates.repeat_anywhere(column, starts, lengths, None, np.arange(20), np.array([0, 20]))
    assert not got.any() and read_again == []
