"""The metric engine: SPEC A3, once, vectorized over long DataFrames.

Every number the toolkit reports about rankings comes from :func:`compute`. The seed API
(``score``, ``query_metrics``), the DataFrame API (``evaluate``), the report, the CLI and the
notebooks are thin faces on it. Three policies live here and nowhere else:

* **Order** (:func:`_rankings`): a run's own order is authoritative; rows are ranked by their
  ``rank`` column within each (system, query_id). Readers decide ``rank`` (a TREC run read
  with ``order="score"`` is re-ranked the trec_eval way before it gets here).
* **Duplicates** (:func:`_scan`, also behind :func:`dedupe_run`): a key repeated inside one
  ranking counts once, at its first occurrence; a (query, key) pair labelled twice takes its
  last label. A repeat is not new evidence; counting it again pushes recall, AP and
  nDCG above 1.
* **Definitions** (:data:`METRIC_NAMES`, :func:`metric_name`): each metric once, with its
  cutoff, relevance threshold and gain stated in its name when they differ from the spec's
  defaults.

There is no per-query Python loop. :func:`_scan` reads the run in steps of whole rankings
(two steps run at once). In a step, ids are compared by 64-bit hashes computed in numpy, and
every match made on a hash is checked on the strings (a collision redoes the step with exact
codes); each step reduces its rows to per-ranking sums, each an ``np.bincount``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..arrays import (
    arrow as _arrow,
    block_starts as _block_starts,
    codes as _codes,
    offsets as _offsets,
    take as _take,
    whole as _whole,
)
from ..model import ID, UNSTRATIFIED, judgment_keys  # the key rule is data model

GAINS = ("exponential", "linear")
#: Per-query metrics, in the order they appear in every table.
METRIC_NAMES = ("precision", "recall", "ndcg", "mrr", "map", "hit_rate", "judged")
#: The six metrics the spec defines; ``judged`` is this project's addition.
SPEC_METRICS = METRIC_NAMES[:6]


def metric_name(metric: str, k: int, gain: str = "exponential") -> str:
    """The name a metric carries: ``ndcg@10``; ``ndcg_linear@10`` for trec_eval's gain.

    The name says what the number is, so a linear-gain nDCG can never be compared with (or
    gated as) the spec's exponential one by accident.
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    base = "ndcg_linear" if metric == "ndcg" and gain == "linear" else metric
    return f"{base}@{int(k)}"


#: The largest cutoff: ranks and cutoffs are int64 in the engine, and a larger k (which no
#: ranking can reach anyway) cannot be held, so it is refused rather than overflowing.
MAX_K = 2**63 - 1


def check_ks(k) -> tuple[int, ...]:
    """Normalize ``k`` (an int or an iterable of ints) to a sorted tuple of distinct cutoffs.

    Each cutoff is an integer from 1 to :data:`MAX_K`; anything else raises ValueError."""
    ks = (k,) if isinstance(k, (int, np.integer)) else tuple(k)
    if not ks:
        raise ValueError("at least one cutoff k is needed")
    out = []
    for value in ks:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"k must be a positive integer, got {value!r}")
        if value > MAX_K:
            raise ValueError(f"k must be at most {MAX_K} (the largest int64), got {value!r}")
        out.append(int(value))
    return tuple(sorted(set(out)))


@dataclass
class _Judged:
    """Judgments reduced to codes: one entry per (query, key) pair, the last label winning."""

    queries: pd.Index  # judged queries, in first-appearance order
    keys: pd.Index  # distinct keys
    rows: np.ndarray  # row positions (in the judgments frame) of the winning labels
    query: np.ndarray  # per pair: query code
    key: np.ndarray  # per pair: key code
    grade: np.ndarray  # per pair
    strata: np.ndarray  # per query: the stratum of its first label line, or _unstratified


def _judged(judgments: pd.DataFrame) -> _Judged:
    """Code the judgments once; the last label of a repeated (query, key) pair wins.

    ``validate`` reports such a pair as an error; scoring still needs one answer, and the last
    line is the one a person editing the file most recently wrote. (The engine applies the
    same rule step by step in :func:`_scan`.)
    """
    q_codes, queries = _codes(_arrow(judgments["query_id"]))
    k_codes, keys = _codes(_arrow(judgment_keys(judgments)))
    pair = q_codes.astype(np.int64) * max(len(keys), 1) + k_codes
    rows = np.flatnonzero(~_repeats(pair[::-1])[::-1])  # the last label of a pair wins
    return _Judged(
        queries=queries,
        keys=keys,
        rows=rows,
        query=q_codes[rows],
        key=k_codes[rows],
        grade=judgments["relevance"].to_numpy(dtype=np.int64)[rows],
        strata=_strata_of(judgments, q_codes, len(queries)),
    )


def relevance_table(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per (query_id, key) with its grade, in judgment order; the last label wins."""
    j = _judged(judgments)
    return pd.DataFrame({
        "query_id": pd.array(j.queries.take(j.query), dtype=ID),
        "key": pd.array(j.keys.take(j.key), dtype=ID),
        "relevance": j.grade,
    })


def _query_strata(judgments: pd.DataFrame, queries: pd.Index) -> np.ndarray:
    """Each query's stratum (that of its first label line), ``_unstratified`` without one."""
    j = _judged(judgments)
    at = _lookup(queries, j.queries)
    return np.where(at >= 0, j.strata[np.maximum(at, 0)] if len(j.strata) else UNSTRATIFIED,
                    UNSTRATIFIED).astype(object)


# --------------------------------------------------------------------------------------------
# Order and duplicates: the one place each is defined.

#: Rows handled per step of the scan. Rankings are never split across steps. Larger steps
#: make fewer numpy calls per row; of 64k-512k, 128k-256k were fastest, and 128k keeps the
#: two steps' temporaries (tens of MB, not the GBs of one pass over 10M rows) off the peak.
STEP_ROWS = 1 << 17


def _one_value(arr) -> bool:
    """Whether a string column is one value throughout, seen without reading every row.

    A run's system column usually is: the readers build it as one block of the value repeated,
    so its chunks share their buffers, and the distinct (buffers, offset, length) chunks are
    few. A column of other chunks answers False (its rows are then compared).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    if arr.null_count or not chunks:
        return False
    distinct = {}
    for c in chunks:
        where = tuple(b.address if b is not None else 0 for b in c.buffers())
        distinct.setdefault(where + (c.offset, len(c)), c)
        if len(distinct) > 4:
            return False
    return len(pc.unique(pa.chunked_array(list(distinct.values()), arr.type))) == 1


def _lookup(values, categories) -> np.ndarray:
    """Position of each value in ``categories`` (-1 when absent), by a C++ hash lookup."""
    import pyarrow.compute as pc

    found = pc.index_in(_whole(_arrow(values)), value_set=_whole(_arrow(categories)))
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


#: Hash tables have 2**_SPREAD slots per key: a quarter of the slots is taken, and only the
#: keys sharing a slot need a closer look.
_SPREAD = 2


def _slots(keys: np.ndarray, bits: int, mix: np.uint64 = _MIX1) -> np.ndarray:
    """Multiplicative hashing: a slot in a table of ``2**bits`` for each integer key."""
    out = keys.astype(np.uint64, copy=False) * mix
    out >>= np.uint64(64 - bits)
    return out.view(np.int64)


def _groups(codes: np.ndarray, heads: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
    """For each entry, the first and the previous entry equal to it (-1 for none before it).

    Without ``heads``, only the previous ones (the first ones are None).

    The entries are scattered into a table 2**_SPREAD times their number: only those sharing
    a slot can be equal. Those are scattered again, with another hash, and only the ones
    sharing a slot both times are sorted (stably, to keep row order).
    """
    n = len(codes)
    head = np.arange(n, dtype=np.int64) if heads else None
    prev = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return head, prev
    again = None  # all of them, then the suspects of the first table
    for mix in (_MIX1, _MIX2):  # a second table, of the first one's suspects, halves the sort
        bits = (n if again is None else len(again)).bit_length() + _SPREAD
        slot = _slots(codes if again is None else codes[again], bits, mix)
        table = np.empty(1 << bits, dtype=np.int32)  # only written slots are read
        own = np.arange(len(slot), dtype=np.int32)
        table[slot] = own
        lost = slot[table[slot] != own]
        if not len(lost):
            return head, prev
        shared = np.zeros(1 << bits, dtype=bool)
        shared[lost] = True
        again = np.flatnonzero(shared[slot]) if again is None else again[shared[slot]]
    members = again[np.argsort(codes[again], kind="stable")]
    grouped = codes[members]
    start = np.r_[True, grouped[1:] != grouped[:-1]]
    if heads:
        head[members] = members[np.flatnonzero(start)][np.cumsum(start) - 1]
    before = np.r_[-1, members[:-1]]
    before[start] = -1
    prev[members] = before
    return head, prev


def _repeats(codes: np.ndarray) -> np.ndarray:
    """True for every entry equal to an earlier one (first occurrences are False)."""
    return _groups(codes, heads=False)[1] >= 0


def _find(table_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Position of each of ``keys`` among the distinct ``table_keys`` (-1 when absent).

    A hash join: the table keys are scattered into a table 2**_SPREAD times their number and
    each key looks in its slot; the few table keys that lost their slot are searched apart.
    """
    n = len(table_keys)
    if n == 0:
        return np.full(len(keys), -1, dtype=np.int32)
    bits = n.bit_length() + _SPREAD
    t_slot, slot = _slots(table_keys, bits), _slots(keys, bits)
    table = np.full(1 << bits, -1, dtype=np.int32)
    own = np.arange(n, dtype=np.int32)
    table[t_slot] = own
    at = table[slot]
    at[table_keys[np.maximum(at, 0)] != keys] = -1
    lost = np.flatnonzero(table[t_slot] != own)
    if len(lost):
        shared = np.zeros(1 << bits, dtype=bool)
        shared[t_slot[lost]] = True
        retry = np.flatnonzero((at < 0) & shared[slot])
        by_key = lost[np.argsort(table_keys[lost])]
        near = np.minimum(np.searchsorted(table_keys[by_key], keys[retry]), len(by_key) - 1)
        match = table_keys[by_key[near]] == keys[retry]
        at[retry[match]] = by_key[near[match]]
    return at


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(s, s + l)`` for each start and length, vectorized."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) - np.repeat(offsets - starts, lengths)


def _fetch(arr, rows: np.ndarray) -> "pa.Array":
    """``arr.take(rows)`` as one array; a slice when ``rows`` is an ascending range."""
    import pyarrow as pa

    if len(rows) == 0:
        return _whole(arr.slice(0, 0))
    lo, hi = int(rows[0]), int(rows[-1]) + 1
    if hi - lo == len(rows) and (len(rows) < 2 or bool(np.all(np.diff(rows) == 1))):
        return _whole(arr.slice(lo, hi - lo))
    if lo < hi and bool(np.all(np.diff(rows) > 0)):
        return _whole(arr.slice(lo, hi - lo)).take(pa.array(rows - lo))
    return _take(arr, rows)


#: Ids up to this many bytes are hashed word by word across all ids at once (at most 8 steps);
#: longer ones by :func:`_long_hashes`, whose work is linear in their bytes.
_SHORT_ID = 64
#: Words of long ids hashed per vectorized step (bounds the temporary arrays to a few MB).
_WORD_BATCH = 1 << 18


def _hashes(arr) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit hash of each string of an arrow string column, and its length in bytes.

    Vectorized over 8-byte words. Equal strings hash equal; distinct strings can collide,
    except two of the same length up to 8 bytes (one word, and every step of the hash is a
    bijection of it). A match made on hashes is therefore checked (:func:`_same`). Hashing
    needs no table: 10M ids take about 0.1 s, where a hash table takes 0.5 s or more.

    Strings of up to :data:`_SHORT_ID` bytes are hashed one word position at a time across all
    of them; longer ones (:func:`_long_hashes`) with every word at once, so the cost is linear
    in the bytes with no Python step per word (a 50 MB id took 65 s word by word). Equal
    strings have equal lengths, so the two rules never have to agree with each other.
    """
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        parts = [_hashes(c) for c in arr.chunks]
        if not parts:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        return np.concatenate([h for h, _ in parts]), np.concatenate([n for _, n in parts])
    n = len(arr)
    offsets = _offsets(arr)
    lo, hi = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    data = np.zeros(hi - lo + 8, dtype=np.uint8)
    if hi > lo:
        data[:hi - lo] = np.frombuffer(arr.buffers()[2], dtype=np.uint8, count=hi - lo, offset=lo)
    # words[i]: the 8 bytes from byte i on, little-endian (an unaligned strided view).
    words = np.ndarray((hi - lo + 1,), dtype="<u8", buffer=data, strides=(1,))
    length = np.diff(offsets).astype(np.int64, copy=False)
    long = length > _SHORT_ID
    if n and bool(long.any()):
        out = np.empty(n, dtype=np.uint64)
        start = offsets[:-1] - lo
        out[~long] = _word_hashes(words, start[~long], length[~long])
        out[long] = _long_hashes(words, start[long], length[long])
        return out, length
    # Each word in turn: out = (out ^ word) * _MIX1, the string's length seeding it. Only the
    # product's top bits are used (as codes and slots), and they depend on every bit below.
    width = int(length[0]) if n else 0
    if n and bool(np.all(length == width)):
        out = length.astype(np.uint64) * _MIX2
        # Ids of one width (the usual case): word j of string i is at byte i * width + 8j, a
        # strided view of the bytes, read in place.
        for j in range(0, max(width, 1), 8):
            word = np.ndarray((n,), dtype="<u8", buffer=data, offset=j, strides=(width,))
            if width - j < 8:
                word = word & _low_bytes(np.uint64(width - j))
            out ^= word
            out *= _MIX1
        return out, length
    return _word_hashes(words, offsets[:-1] - lo, length), length


def _word_hashes(words: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Hashes of short strings (``start`` and ``length`` in the bytes ``words`` views), one
    word position at a time over the strings that still have bytes: a step per 8 bytes of the
    longest, so only for strings of up to :data:`_SHORT_ID` bytes."""
    out = length.astype(np.uint64) * _MIX2
    todo, left = None, length  # todo: the strings with bytes left
    while len(start):
        word = words[start]
        short = np.flatnonzero(left < 8)  # a last word: keep only the string's own bytes
        if len(short):
            word[short] &= _low_bytes(left[short].astype(np.uint64))
        if todo is None:
            out ^= word
            out *= _MIX1
        else:
            out[todo] = (out[todo] ^ word) * _MIX1
        more = np.flatnonzero(left > 8)
        if not len(more):
            break
        todo = more if todo is None else todo[more]
        start, left = start[more] + 8, left[more] - 8
    return out


def _mix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, in place: every output bit depends on every input bit."""
    x ^= x >> np.uint64(33)
    x *= _MIX1
    x ^= x >> np.uint64(33)
    x *= _MIX2
    x ^= x >> np.uint64(33)
    return x


def _long_hashes(words: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Hashes of long strings: the wrapping sum, over a string's words, of ``mix(word + k * C)``
    (k the word's position, so order counts), mixed with the length. Words of many strings are
    gathered and mixed in one vectorized step of up to :data:`_WORD_BATCH` words, and summed
    per string (``np.add.reduceat``); a string longer than a step is summed a step at a time.
    Linear in the bytes, with a Python step per 2 MB rather than per 8 bytes."""
    n_words = (length + 7) // 8
    ends = np.cumsum(n_words)
    out = np.zeros(len(start), dtype=np.uint64)
    i = 0
    while i < len(start):
        done = int(ends[i - 1]) if i else 0
        j = max(i + 1, int(np.searchsorted(ends, done + _WORD_BATCH, side="right")))
        if j == i + 1 and n_words[i] > _WORD_BATCH:  # one string longer than a step
            out[i] = _huge_sum(words, int(start[i]), int(length[i]))
        else:
            w = n_words[i:j]
            first = np.cumsum(w) - w
            k = np.arange(int(w.sum()), dtype=np.int64) - np.repeat(first, w)
            at = np.repeat(start[i:j], w) + 8 * k
            terms = _word_terms(words, at, k, np.repeat(length[i:j], w) - 8 * k)
            out[i:j] = np.add.reduceat(terms, first)
        i = j
    out ^= length.astype(np.uint64) * _MIX1
    return _mix64(out)


def _huge_sum(words: np.ndarray, start: int, length: int) -> np.uint64:
    """:func:`_long_hashes`' sum for one string of more than :data:`_WORD_BATCH` words, read
    in place (its words are a strided view of the bytes), a step at a time."""
    n_words = (length + 7) // 8
    view = np.lib.stride_tricks.as_strided(words[start:], shape=(n_words,), strides=(8,))
    steps = np.arange(_WORD_BATCH, dtype=np.uint64) * _MIX2  # k * C for k in a step
    total = 0
    for k0 in range(0, n_words, _WORD_BATCH):
        m = min(_WORD_BATCH, n_words - k0)
        word = view[k0:k0 + m] + steps[:m]
        word += np.uint64((k0 * int(_MIX2)) & 0xFFFFFFFFFFFFFFFF)
        if k0 + m == n_words and length % 8:  # the last word keeps only the string's bytes
            word[-1:] = ((view[-1:] & _low_bytes(np.uint64(length % 8))) + steps[m - 1:m]
                         + np.uint64((k0 * int(_MIX2)) & 0xFFFFFFFFFFFFFFFF))
        total += int(_mix64(word).sum())
    return np.uint64(total & 0xFFFFFFFFFFFFFFFF)


def _word_terms(words: np.ndarray, at: np.ndarray, k: np.ndarray, left: np.ndarray) -> np.ndarray:
    """``mix(word + k * C)`` for the words at byte offsets ``at`` (word number ``k`` of their
    string, ``left`` bytes of it from there on: a last word keeps only the string's bytes)."""
    word = words[at]
    last = np.flatnonzero(left < 8)
    if len(last):
        word[last] &= _low_bytes(left[last].astype(np.uint64))
    word += k.astype(np.uint64) * _MIX2
    return _mix64(word)


def _low_bytes(count):
    """The mask keeping the low ``count`` bytes (0 to 7) of a little-endian word."""
    return (np.uint64(1) << (count * np.uint64(8))) - np.uint64(1)


def _same(a, i: np.ndarray, b, j: np.ndarray) -> bool:
    """Whether string ``a[i]`` equals ``b[j]`` for every pair of positions.

    ``a`` and ``b`` are (arrow strings, hashes, lengths) as :func:`_hashes` gives them. Equal
    hashes and lengths settle strings of up to 8 bytes; longer ones are compared in arrow.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    (a_str, a_hash, a_len), (b_str, b_hash, b_len) = a, b
    if len(i) == 0:
        return True
    size = a_len[i]
    if not (np.array_equal(a_hash[i], b_hash[j]) and np.array_equal(size, b_len[j])):
        return False
    long = np.flatnonzero(size > 8)
    if not len(long):
        return True
    i, j = i[long], j[long]
    return bool(pc.all(pc.equal(a_str.take(pa.array(i)), b_str.take(pa.array(j)))).as_py())


@dataclass
class _Rankings:
    """A run's rankings: the (system, query) blocks of rows, in ranking order."""

    starts: np.ndarray  # per block: first row (in ``order`` when given, else in the frame)
    lengths: np.ndarray  # per block: raw entries
    system: np.ndarray  # per block: system code
    query: np.ndarray  # per block: query code (-1: the query is not among ``queries``)
    order: np.ndarray | None  # row permutation putting interleaved rankings together
    systems: pd.Index
    queries: pd.Index


def _ranking_starts(run: pd.DataFrame) -> tuple[np.ndarray, bool]:
    """The first row of each (system, query) block of a run frame, and whether ranks go up
    strictly inside every block (see :func:`_block_starts`)."""
    import pyarrow as pa

    sys_arr = _arrow(run["system"])
    return _block_starts(None if _one_value(sys_arr) else sys_arr, _arrow(run["query_id"]),
                         pa.array(run["rank"].to_numpy(dtype=np.int64)), strict=True)


def _rankings(run: pd.DataFrame, queries: pd.Index | None,
              found: tuple[np.ndarray, bool] | None = None) -> _Rankings:
    """Find the rankings of a run without hashing its rows.

    Rankings are contiguous runs of rows in files; only their first rows are hashed. A run
    whose rankings are interleaved, or whose ranks go down inside a ranking, is put in order
    by (first appearance of the ranking, rank): a run's own order is authoritative.
    ``found``: what :func:`_ranking_starts` says of ``run``, when already known.
    """
    n = len(run)
    sys_arr, q_arr = _arrow(run["system"]), _arrow(run["query_id"])
    starts, in_order = _ranking_starts(run) if found is None else found
    start_sys = _take(sys_arr, starts)
    start_q = _take(q_arr, starts)
    systems = pd.Index(pd.unique(pd.array(start_sys, dtype=ID)), dtype=ID)
    all_queries = pd.Index(pd.unique(pd.array(start_q, dtype=ID)), dtype=ID)
    if queries is None:
        queries = all_queries
    s_code = _lookup(start_sys, systems)
    q_code = _lookup(start_q, queries)
    # The (system, query) cell of each ranking; queries not in ``queries`` get codes past nq.
    nq = max(len(queries), 1)
    q_any = np.where(q_code >= 0, q_code, nq + _lookup(start_q, all_queries))
    cell_key = s_code * (nq + len(all_queries)) + q_any
    order = None
    if _repeats(cell_key).any() or not in_order:
        lengths = np.diff(np.r_[starts, n])
        cell_code, cell_first = _first_appearance(cell_key)
        row_cell = np.repeat(cell_code, lengths)
        order = np.lexsort((run["rank"].to_numpy(dtype=np.int64), row_cell))
        row_cell = row_cell[order]
        first_of = np.flatnonzero(np.r_[True, row_cell[1:] != row_cell[:-1]])
        s_code, q_code = s_code[cell_first], q_code[cell_first]
        starts = first_of
    return _Rankings(starts=starts, lengths=np.diff(np.r_[starts, n]), system=s_code,
                     query=q_code, order=order, systems=systems, queries=queries)


def _first_appearance(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` (ints) numbered in order of first appearance, and the position of
    each distinct value's first occurrence, in that order."""
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first, kind="stable")
    rank_of = np.empty(len(uniq), dtype=np.int64)
    rank_of[by_appearance] = np.arange(len(uniq))
    return rank_of[inverse.ravel()], first[by_appearance]


@dataclass
class _Scan:
    """What the metrics read of a run, after order, duplicates and the depth cut.

    Blocks are the rankings the scan read, in scan order. Without judgments, the rows are every
    kept entry in (scan block, position) order, with its source row. With judgments, each step
    reduced its entries to ``sums`` (per ranking, and per query) and no row is kept.
    """

    rankings: _Rankings
    block: np.ndarray  # per scanned block: its index in ``rankings``
    block_kept: np.ndarray  # per scanned block: deduplicated entries, cut at ``depth``
    block_dup: np.ndarray  # per scanned block: a key repeated among the entries read
    row_block: np.ndarray  # without judgments, per kept entry: scan block number
    row_position: np.ndarray  # ... its 0-based position in the deduplicated ranking
    row_source: np.ndarray  # ... and its row in the run frame
    sums: dict[str, np.ndarray]  # with judgments: what ``sums`` made of each step, joined


def _steps(cost: np.ndarray) -> np.ndarray:
    """Cut units (with their row costs) into consecutive steps of about STEP_ROWS rows."""
    n = len(cost)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    cum = np.cumsum(cost)
    marks = np.arange(1, int(cum[-1]) // STEP_ROWS + 1) * STEP_ROWS
    cuts = np.searchsorted(cum, marks, side="left") + 1
    return np.unique(np.r_[0, np.minimum(cuts, n), n]).astype(np.int64)


def _scan(run: pd.DataFrame, depth: int | None, judgments: pd.DataFrame | None = None,
          queries: pd.Index | None = None, label_codes: np.ndarray | None = None,
          threshold: int = 1, sums=None, found: tuple[np.ndarray, bool] | None = None) -> _Scan:
    """Order, deduplicate and cut a run to ``depth``, and (with judgments) grade its entries.

    This is where the run's own order, the first-occurrence rule for a repeated key and the
    last-label-wins rule for a repeated judgment are applied, for every face of the engine.

    The run is read in steps of whole rankings (STEP_ROWS rows). In a step, the ranked ids and
    the labels of the step's queries are coded by their hashes (:func:`_hashes`); a repeated
    key is then a repeated (ranking, code) pair and a label lookup is a (query, code) pair,
    and each match is checked on the strings.
    Only the entries the cutoffs can reach are read: a ranking is cut to its first ``depth``
    raw entries, and taken whole only when it repeated a key there (later entries move up).

    With ``judgments``, ``queries`` and ``label_codes`` (each label's query code) are given and
    only the rankings of those queries are read; the labels are sorted by query so that each
    step's labels are one slice. Each step counts its queries' labels (``threshold`` says
    which are relevant), ranks their grades into the ideal rankings, and hands its labelled
    entries and ideal rankings to ``sums`` (see :func:`_metric_sums`): a step's rows are
    reduced to per-ranking sums while they are small.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    rk = _rankings(run, queries, found)
    doc_arr = _arrow(run["doc_id"])
    graded = judgments is not None
    if graded:
        nq = len(rk.queries)
        chunk_id, doc_uri = _arrow(judgments["chunk_id"]), _arrow(judgments["doc_uri"])
        # The key is the chunk_id, else the doc_uri (qrels have no chunk_id: no copy then).
        keys = doc_uri if chunk_id.null_count == len(chunk_id) else pc.coalesce(chunk_id, doc_uri)
        keys = keys.cast(doc_arr.type)
        if isinstance(keys, pa.Array):
            keys = pa.chunked_array([keys], keys.type)
        grades = judgments["relevance"].to_numpy(dtype=np.int64)
        label_q = label_codes
        if len(label_q) > 1 and not bool(np.all(label_q[1:] >= label_q[:-1])):
            by_query = np.argsort(label_q, kind="stable")
            keys = pa.chunked_array([_take(keys, by_query)], keys.type)
            grades, label_q = grades[by_query], label_q[by_query]
        label_at = np.r_[0, np.cumsum(np.bincount(label_q, minlength=nq))].astype(np.int64)
        # Units are the judged queries; each brings its labels and its rankings.
        judged = np.flatnonzero(rk.query >= 0)
        blocks = judged[np.argsort(rk.query[judged], kind="stable")]
        unit_of_block = rk.query[blocks]
        n_units = nq
    else:
        label_at = keys = None
        blocks = np.arange(len(rk.starts))
        unit_of_block = blocks
        n_units = len(blocks)
    block_at = np.r_[0, np.cumsum(np.bincount(unit_of_block, minlength=n_units))].astype(np.int64)
    reach = rk.lengths[blocks] if depth is None else np.minimum(rk.lengths[blocks], depth)
    cost = np.bincount(unit_of_block, weights=reach, minlength=n_units)
    if graded:
        cost += np.diff(label_at)
    steps = _steps(cost)

    def step(ua: int, ub: int, exact: bool = False) -> dict[str, np.ndarray]:
        """One step: the rankings and labels of units ``ua`` to ``ub``.

        Ids are compared by their 64-bit hashes; every pair of ids the step treats as the same
        (a repeat in a ranking, a repeated label, an entry and its label) is then checked on
        the strings. A collision makes the step start again with exact codes (``exact``).
        """
        bs = blocks[block_at[ua]:block_at[ub]]
        length = rk.lengths[bs]
        take = length if depth is None else np.minimum(length, depth)
        group = unit_of_block[block_at[ua]:block_at[ub]] - ua  # per ranking: its unit in the step
        # A key is (group << shift) | code: group a ranking or a unit of the step, code an id.
        shift = np.uint64(64 - max(len(bs), ub - ua, 1).bit_length())
        cut_code = np.uint64(64) - shift
        got: dict[str, np.ndarray] = {}
        m = 0  # labels in the step
        if graded:
            # The last label of a repeated (query, key) pair wins.
            la, m = int(label_at[ua]), int(label_at[ub] - label_at[ua])
            labels = _whole(keys.slice(la, m))
            if exact:  # codes in first-appearance order: the same when docs follow the labels
                label_code = labels.dictionary_encode().indices.to_numpy(zero_copy_only=False)
                label_code = label_code.astype(np.uint64)
            else:
                label_ids = (labels, *_hashes(labels))
                label_code = label_ids[1] >> cut_code
            label_local = label_q[la:la + m].astype(np.int64) - ua
            pairs = label_local.astype(np.uint64) << shift | label_code
            later = _groups(pairs[::-1])[0]  # the first from the end: the last label
            loser = np.flatnonzero(later != np.arange(m))
            if not exact and not _same(label_ids, m - 1 - loser, label_ids, m - 1 - later[loser]):
                return step(ua, ub, exact=True)  # every label of a pair is the same key
            win_rows = (m - 1 - np.flatnonzero(later == np.arange(m)))[::-1]
            win_pairs = pairs[win_rows]
            win_grades = grades[la:la + m][win_rows]
            win_query = label_local[win_rows]
            n_judged = np.bincount(win_query, minlength=ub - ua)
            got.update(n_judged=n_judged,
                       n_relevant=np.bincount(win_query[win_grades >= threshold], minlength=ub - ua))
            # Each query's ideal ranking: its grades, best first. (Labels come sorted by
            # query: one stable sort of a nearly sorted key.)
            low = int(win_grades.min()) if len(win_rows) else 0
            span = int(win_grades.max()) - low + 1 if len(win_rows) else 1
            ideal = np.argsort(win_query * span + (span - 1 - (win_grades - low)), kind="stable")
            i_query, i_grade = win_query[ideal], win_grades[ideal]
            i_position = np.arange(len(ideal)) - (np.cumsum(n_judged) - n_judged)[i_query]
            counts = (i_grade != 0) & (i_position < depth) if depth is not None else i_grade != 0
            ideal = (i_query[counts], i_position[counts], i_grade[counts])
        while True:
            local = np.repeat(np.arange(len(bs), dtype=np.int64), take)
            first = rk.starts[bs]
            if rk.order is None and bool(np.all(take == length)) and len(bs) and \
                    bool(np.all(first[1:] == first[:-1] + length[:-1])):
                # Whole rankings, one after another in the frame: one slice of it.
                src = None  # rows first[0] on, made only if asked for
                docs = _whole(doc_arr.slice(int(first[0]), len(local)))
            else:
                rows = _ranges(first, take)
                src = rows if rk.order is None else rk.order[rows]
                docs = _fetch(doc_arr, src)
            if exact:
                both = pa.concat_arrays(([labels] if graded else []) + [docs]).dictionary_encode()
                doc_code = both.indices.to_numpy(zero_copy_only=False)[m:].astype(np.uint64)
            else:
                doc_ids = (docs, *_hashes(docs))
                doc_code = doc_ids[1] >> cut_code
            key = local.view(np.uint64) << shift
            key |= doc_code
            prev = _groups(key, heads=False)[1]
            dup = np.flatnonzero(prev >= 0)  # an earlier entry of its ranking is the same id
            if not exact and not _same(doc_ids, dup, doc_ids, prev[dup]):
                return step(ua, ub, exact=True)
            has_dup = np.bincount(local[dup], minlength=len(bs)) > 0
            redo = has_dup & (length > take)
            if not redo.any():
                break
            take = np.where(redo, length, take)
        if src is None and (len(dup) or not graded):
            src = np.arange(first[0], first[0] + len(local), dtype=np.int64)
        if len(dup):  # drop the repeats, then cut the rankings taken whole back to ``depth``
            keep = prev < 0
            entry = np.flatnonzero(keep)  # positions in ``docs``
            local, src = local[keep], src[keep]
            kept = np.bincount(local, minlength=len(bs))
            position = np.arange(len(local), dtype=np.int64) - np.repeat(np.cumsum(kept) - kept, kept)
            if depth is not None and bool(np.any(take > depth)):
                cut = position < depth
                local, src, position, entry = local[cut], src[cut], position[cut], entry[cut]
                kept = np.minimum(kept, depth)
            key = None
        else:  # the usual step: every entry kept, in place
            entry, kept, position = None, take, None
        got.update(kept=kept, dup=has_dup)
        if not graded:
            if position is None:
                position = np.arange(len(local), dtype=np.int64) - np.repeat(np.cumsum(kept) - kept, kept)
            got.update(row_block=local + block_at[ua], row_position=position, row_source=src)
            return got
        # Each kept entry's label, if it has one. With one ranking per query (group is
        # 0, 1, 2...) and nothing dropped, the repeats' keys are the lookup keys.
        if key is None or not np.array_equal(group, np.arange(len(bs))):
            key = group[local].astype(np.uint64) << shift
            key |= doc_code if entry is None else doc_code[entry]
        at = _find(win_pairs, key)
        has = np.flatnonzero(at >= 0)
        at = at[has]
        if not exact and not _same(doc_ids, has if entry is None else entry[has], label_ids, win_rows[at]):
            return step(ua, ub, exact=True)
        if position is None:  # an entry's position: its place after its ranking's first entry
            position_has = has - (np.cumsum(kept) - kept)[local[has]]
        else:
            position_has = position[has]
        got.update(sums((local[has], position_has, win_grades[at]), len(bs), ideal, ub - ua))
        return got

    spans = list(zip(steps[:-1].tolist(), steps[1:].tolist()))
    if len(spans) > 1:
        # Arrow and numpy release the GIL while they work: two steps run at once.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            results = list(pool.map(lambda span: step(*span), spans))
    else:
        results = [step(*span) for span in spans]
    out: dict[str, list[np.ndarray]] = {}
    for got in results:
        for name, values in got.items():
            out.setdefault(name, []).append(values)
    del results

    def cat(name: str, dtype=np.int64) -> np.ndarray:
        pieces = out.pop(name, None)
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)

    block_dup = cat("dup", bool)
    if graded and depth is not None:
        # The metrics stop at the cutoff, the report of a repeated key does not (SPEC A3):
        # the rankings with no repeat above the cutoff are read whole for one.
        late = np.flatnonzero(~block_dup & (rk.lengths[blocks] > depth))
        block_dup[late] = _repeat_anywhere(doc_arr, rk, blocks[late])
    pa.default_memory_pool().release_unused()  # the steps' ids, freed: give them back now
    return _Scan(
        rankings=rk, block=blocks, block_kept=cat("kept"), block_dup=block_dup,
        row_block=cat("row_block"), row_position=cat("row_position"), row_source=cat("row_source"),
        sums={name: cat(name) for name in list(out)},  # what is left: the steps' sums
    )


def _repeat_anywhere(doc_arr, rk: _Rankings, blocks: np.ndarray) -> np.ndarray:
    """Per ranking of ``blocks``: whether it repeats a key anywhere, every row read.

    Whether a ranking repeated a key is a fact about the ranking, not about the part of it the
    cutoffs reach: a retriever that returns a chunk twice at ranks 3 and 40 has the bug at k=10
    too. Rankings are read in steps of about STEP_ROWS rows; ids are compared by their hashes
    as in :func:`_scan`, and each repeat found is checked on the strings (a collision
    settles the step on exact codes).
    """
    out = np.zeros(len(blocks), dtype=bool)
    if not len(blocks):
        return out
    lengths = rk.lengths[blocks]
    steps = _steps(lengths)

    def part(a: int, b: int) -> None:
        length = lengths[a:b]
        rows = _ranges(rk.starts[blocks[a:b]], length)
        docs = _fetch(doc_arr, rows if rk.order is None else rk.order[rows])
        local = np.repeat(np.arange(b - a, dtype=np.int64), length)
        shift = np.uint64(64 - max(b - a, 1).bit_length())
        ids = (docs, *_hashes(docs))
        key = local.view(np.uint64) << shift
        key |= ids[1] >> (np.uint64(64) - shift)
        prev = _groups(key, heads=False)[1]
        dup = np.flatnonzero(prev >= 0)
        if not _same(ids, dup, ids, prev[dup]):  # a collision: exact codes for this step
            codes = docs.dictionary_encode().indices.to_numpy(zero_copy_only=False)
            key = local.view(np.uint64) << shift
            key |= codes.astype(np.uint64)
            dup = np.flatnonzero(_repeats(key))
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


def dedupe_run(run: pd.DataFrame, depth: int | None = None) -> pd.DataFrame:
    """The run as metrics see it: ordered, each key counted at its first occurrence only.

    Returns a new long frame (system, query_id, rank, doc_id, score, plus any other columns of
    the input) where ``rank`` is the 1-based position in the deduplicated ranking, cut to
    ``depth`` entries per ranking when given. ``top1`` of a query (calibration) is its row
    with rank 1 here.
    """
    scan = _scan(run, depth)
    out = run.iloc[scan.row_source].reset_index(drop=True)
    out["rank"] = (scan.row_position + 1).astype(np.int64)
    return out


# --------------------------------------------------------------------------------------------
# The engine.


def _metric_sums(ks: tuple[int, ...], threshold: int, gain: str):
    """What :func:`_scan` keeps of a step: each metric's sum per ranking at every cutoff.

    The returned function takes a step's labelled entries ``(block, position, grade)`` (rows in
    ranking order, blocks numbered from 0 in the step), its number of rankings, its queries'
    ideal rankings ``(query, position, grade)`` and its number of queries. It returns, per
    ranking, ``hits``, ``dcg``, ``ap`` (the sum of each hit's precision at its rank) and
    ``judged`` (one column per cutoff) and ``first_hit`` (0-based position, inf without one);
    per query, ``idcg``. Only labelled entries add to a sum: an unjudged entry has grade 0.
    """

    def discounted(grade: np.ndarray, position: np.ndarray) -> np.ndarray:
        term = grade.astype(float)
        if gain == "exponential":
            with np.errstate(over="ignore"):  # readers cap grades (MAX_RELEVANCE); a raw frame
                np.exp2(term, out=term)       # above it gives NaN, and the verdict says so
            term -= 1.0
        term /= np.log2(position + 2.0)
        return term

    def sums(rows, n_blocks: int, ideal, n_queries: int) -> dict[str, np.ndarray]:
        block, position, grade = rows
        hit = grade >= threshold
        h_block, h_pos = block[hit], position[hit]
        n_hits = len(h_block)
        h_start = np.flatnonzero(np.r_[True, h_block[1:] != h_block[:-1]]) if n_hits \
            else np.zeros(0, dtype=np.int64)
        # AP's term: a hit's precision at its rank, (hits up to it) / rank.
        ap_term = np.arange(1.0, n_hits + 1.0) - np.repeat(h_start, np.diff(np.r_[h_start, n_hits]))
        ap_term /= h_pos + 1.0
        first_hit = np.full(n_blocks, np.inf)
        first_hit[h_block[h_start]] = h_pos[h_start]
        gained = grade != 0
        g_block, g_pos = block[gained], position[gained]
        dcg_term = discounted(grade[gained], g_pos)
        i_query, i_pos, i_grade = ideal
        i_term = discounted(i_grade, i_pos)
        out = {name: np.zeros((n_blocks, len(ks))) for name in ("hits", "dcg", "ap", "judged")}
        out["idcg"] = np.zeros((n_queries, len(ks)))
        for c, kk in enumerate(ks):
            # Rows are in rank order within each ranking: "within k" is a mask on position.
            h_in, g_in, i_in = h_pos < kk, g_pos < kk, i_pos < kk
            out["hits"][:, c] = np.bincount(h_block[h_in], minlength=n_blocks)
            out["ap"][:, c] = np.bincount(h_block[h_in], weights=ap_term[h_in], minlength=n_blocks)
            out["dcg"][:, c] = np.bincount(g_block[g_in], weights=dcg_term[g_in], minlength=n_blocks)
            out["judged"][:, c] = np.bincount(block[position < kk], minlength=n_blocks)
            out["idcg"][:, c] = np.bincount(i_query[i_in], weights=i_term[i_in], minlength=n_queries)
        out["first_hit"] = first_hit
        return out

    return sums


def compute(
    judgments: pd.DataFrame,
    run: pd.DataFrame,
    k=(10,),
    threshold: int = 1,
    gain: str = "exponential",
) -> pd.DataFrame:
    """Per-query metrics for every system of ``run`` at every cutoff in ``k``: SPEC A3.

    ``judgments`` and ``run`` are the frames the readers return (``docs/data-model.md``).
    Returns one row per (system, query_id) for every judged query of every system, systems in
    first-appearance order, queries in the order they first appear in the judgments, with:

    * ``system``, ``query_id``, ``stratum`` (the query's stratum, ``_unstratified`` without);
    * ``n_judged``, ``n_relevant`` (labels at or above ``threshold``), ``retrieved``
      (deduplicated ranking length, up to the largest cutoff);
    * ``missing`` (the system has no ranking for the query: it scores zero, never dropped),
      ``no_positives`` (nothing at the threshold: excluded from averages), ``duplicates``
      (the ranking repeated a key anywhere, past the largest cutoff too; only the first
      occurrence counted);
    * ``top1_score``: the score of the first entry of the deduplicated ranking (NaN without
      scores), the signal out-of-distribution calibration works from;
    * one float column per metric and cutoff, named by :func:`metric_name`:
      precision (hits / k), recall (hits / relevant), ndcg (gain ``2**g - 1`` or ``g``,
      discount ``log2(rank + 1)``, ideal list = every judged grade of the query, sorted,
      cut at k), mrr (1 / rank of the first hit within k), map (average precision within k,
      over all relevant), hit_rate, judged (share of the top k that has any judgment: how far
      the closed-world assumption "unjudged = not relevant" is being trusted).

    Runs' queries without judgments are ignored, as trec_eval ignores them. ``threshold`` is
    an integer >= 1: an unjudged entry counts as grade 0, so a lower threshold would count
    every unjudged entry as relevant.
    """
    if gain not in GAINS:
        raise ValueError(f"gain must be one of {GAINS}, got {gain!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) or threshold < 1:
        raise ValueError(f"threshold must be an integer >= 1, got {threshold!r}")
    ks = check_ks(k)
    if len(run) >= STEP_ROWS:
        # Two independent reads at once (arrow works without the GIL): the run's ranking
        # boundaries, and the labels' query codes.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            finding = pool.submit(_ranking_starts, run)
            label_codes, queries = _codes(_arrow(judgments["query_id"]))
            found = finding.result()
    else:
        label_codes, queries = _codes(_arrow(judgments["query_id"]))
        found = None
    scan = _scan(run, ks[-1], judgments, queries, label_codes, threshold,
                 sums=_metric_sums(ks, threshold, gain), found=found)
    rk = scan.rankings
    systems = rk.systems if len(rk.systems) else pd.Index(["run"], dtype=ID)
    nq, ns = len(queries), len(systems)
    # The scan's sums per ranking (and per query), with no step at all when nothing is judged.
    sums = {name: scan.sums.get(name, np.zeros((0, len(ks)))) for name in
            ("hits", "dcg", "ap", "judged", "idcg")}
    first_hit = scan.sums.get("first_hit", np.zeros(0))
    n_relevant = scan.sums.get("n_relevant", np.zeros(0, dtype=np.int64))
    n_judged = scan.sums.get("n_judged", np.zeros(0, dtype=np.int64))

    # Per ranking (block) figures, scattered onto the (system x query) grid.
    cell = rk.system[scan.block] * nq + rk.query[scan.block]
    grid = ns * nq
    present = np.zeros(grid, dtype=bool)
    present[cell] = True
    dup_grid = np.zeros(grid, dtype=bool)
    dup_grid[cell] = scan.block_dup
    retrieved = np.zeros(grid, dtype=np.int64)
    retrieved[cell] = scan.block_kept
    top1 = np.full(grid, np.nan)
    first_row = rk.starts[scan.block]
    if rk.order is not None:
        first_row = rk.order[first_row]
    top1[cell] = run["score"].to_numpy(dtype=np.float64)[first_row]
    nrel = np.tile(n_relevant, ns)
    safe_nrel = np.where(nrel > 0, nrel, 1.0)

    def spread(values: np.ndarray) -> np.ndarray:
        out = np.zeros(grid)
        out[cell] = values
        return out

    columns: dict[str, np.ndarray] = {}
    for c, kk in enumerate(ks):
        g_hits, g_dcg = spread(sums["hits"][:, c]), spread(sums["dcg"][:, c])
        idcg = np.tile(sums["idcg"][:, c], ns)
        columns[metric_name("precision", kk)] = g_hits / kk
        columns[metric_name("recall", kk)] = np.where(nrel > 0, g_hits / safe_nrel, 0.0)
        with np.errstate(invalid="ignore"):  # inf / inf (see discounted) is NaN, not a warning
            columns[metric_name("ndcg", kk, gain)] = np.where(
                idcg > 0, g_dcg / np.where(idcg > 0, idcg, 1.0), 0.0
            )
        columns[metric_name("mrr", kk)] = spread(np.where(first_hit < kk, 1.0 / (first_hit + 1.0), 0.0))
        columns[metric_name("map", kk)] = np.where(nrel > 0, spread(sums["ap"][:, c]) / safe_nrel, 0.0)
        columns[metric_name("hit_rate", kk)] = (g_hits > 0).astype(float)
        columns[metric_name("judged", kk)] = spread(sums["judged"][:, c]) / kk

    ordered = {name: columns[name] for m in METRIC_NAMES for name in
               [metric_name(m, kk, gain) for kk in ks]}
    strata = _strata_of(judgments, label_codes, nq)
    frame = pd.DataFrame(
        {
            "system": pd.array(np.repeat(systems.to_numpy(), nq), dtype=ID),
            "query_id": pd.array(np.tile(queries.to_numpy(), ns), dtype=ID),
            "stratum": pd.array(np.tile(strata, ns), dtype=ID),
            "n_judged": np.tile(n_judged, ns).astype(np.int64),
            "n_relevant": nrel.astype(np.int64),
            "retrieved": retrieved,
            "missing": ~present,
            "no_positives": nrel == 0,
            "duplicates": dup_grid,
            "top1_score": top1,
            **ordered,
        }
    )
    frame.attrs["systems"] = list(systems)
    return frame


def strata_span_queries(judgments: pd.DataFrame) -> bool:
    """Whether some query's labels fall in more than one stratum (a missing one counts as
    ``_unstratified``)."""
    import pyarrow.compute as pc

    stratum = _arrow(judgments["stratum"])
    if len(stratum) == 0 or stratum.null_count == len(stratum):
        return False
    q_codes, queries = _codes(_arrow(judgments["query_id"]))
    s_codes, strata = _codes(pc.fill_null(stratum, UNSTRATIFIED))
    pairs = np.unique(q_codes.astype(np.int64) * max(len(strata), 1) + s_codes)
    return len(pairs) > len(queries)


def strata_in_order(judgments: pd.DataFrame) -> list[str]:
    """The strata of the judgments in the order they first appear (a label without one in
    ``_unstratified``): the order that breaks a tie for the worst stratum (SPEC A3).

    The file's own order is the one order every implementation sees alike; it is also the order
    a person wrote the classes in, usually the one they care about first.
    """
    import pyarrow.compute as pc

    if len(judgments) == 0:
        return []
    return [str(s) for s in _codes(pc.fill_null(_arrow(judgments["stratum"]), UNSTRATIFIED))[1]]


def _strata_of(judgments: pd.DataFrame, label_codes: np.ndarray, nq: int) -> np.ndarray:
    """Each query's stratum: that of its first label line, ``_unstratified`` when it has none."""
    if not nq:
        return np.zeros(0, dtype=object)
    # A query's first label is the head of a run of its labels: only the heads are searched.
    heads = np.flatnonzero(np.r_[True, label_codes[1:] != label_codes[:-1]])
    codes, first = np.unique(label_codes[heads], return_index=True)  # first occurrences
    first_row = np.full(nq, -1, dtype=np.int64)
    first_row[codes] = heads[first]
    import pyarrow.compute as pc

    strata = pc.fill_null(_take(_arrow(judgments["stratum"]), first_row), UNSTRATIFIED)
    return np.asarray(strata.to_pylist(), dtype=object)


def metric_columns(per_query: pd.DataFrame) -> list[str]:
    """The metric columns of a per-query frame, in table order."""
    return [c for c in per_query.columns if "@" in c]


def aggregate(per_query: pd.DataFrame, by=("system",)) -> pd.DataFrame:
    """Macro means over the scored queries (those with positives), with ``n`` = their count.

    Queries without positives are excluded, not scored zero: there was nothing for retrieval
    to find. Values are rounded to 12 decimals as the spec's report is. Groups with no scored
    query have ``n`` 0 and NaN means (a metric that was not computed is absent, not zero).
    """
    cols = metric_columns(per_query)
    by = list(by)
    scored = per_query[~per_query["no_positives"]]
    means = scored.groupby(by, sort=False, observed=True)[cols].mean()
    counts = (~per_query["no_positives"]).groupby(
        [per_query[c] for c in by], sort=False, observed=True
    ).sum()
    out = means.reindex(counts.index).round(12)
    out.insert(0, "n", counts.astype(np.int64))
    return out
