"""The engine's vectorized primitives: hash codes of string ids, hash joins and groups of
integer keys, ranges of rows. No per-row Python anywhere.

Ids are compared by 64-bit hashes computed in numpy (:func:`hashes`), and every match made on
a hash is checked on the strings (:func:`same`); integer keys are grouped (:func:`groups`,
:func:`repeats`) and looked up (:func:`find`) through scatter tables rather than sorts.
Imports :mod:`retrieval_eval.arrays` and :mod:`retrieval_eval.model` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ..arrays import arrow as _arrow
from ..arrays import offsets as _offsets
from ..arrays import take as _take
from ..arrays import whole as _whole

if TYPE_CHECKING:
    import pyarrow as pa


def one_value(arr: Any) -> bool:
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
    distinct: dict[tuple[int, ...], Any] = {}
    for c in chunks:
        where = tuple(b.address if b is not None else 0 for b in c.buffers())
        distinct.setdefault(where + (c.offset, len(c)), c)
        if len(distinct) > 4:
            return False
    return len(pc.unique(pa.chunked_array(list(distinct.values()), arr.type))) == 1


def lookup(values: Any, categories: Any) -> np.ndarray:
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


@overload
def groups(codes: np.ndarray, heads: Literal[True] = ...) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def groups(codes: np.ndarray, heads: bool) -> tuple[np.ndarray | None, np.ndarray]: ...
def groups(codes: np.ndarray, heads: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
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
    assert again is not None  # the loop returns unless a slot is shared
    members = again[np.argsort(codes[again], kind="stable")]
    grouped = codes[members]
    start = np.r_[True, grouped[1:] != grouped[:-1]]
    if heads:
        assert head is not None
        head[members] = members[np.flatnonzero(start)][np.cumsum(start) - 1]
    before = np.r_[-1, members[:-1]]
    before[start] = -1
    prev[members] = before
    return head, prev


def repeats(codes: np.ndarray) -> np.ndarray:
    """True for every entry equal to an earlier one (first occurrences are False)."""
    return groups(codes, heads=False)[1] >= 0


def find(table_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
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


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``range(s, s + l)`` for each start and length, vectorized."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) - np.repeat(offsets - starts, lengths)


def fetch(arr: Any, rows: np.ndarray) -> pa.Array:
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


def hashes(arr: Any) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit hash of each string of an arrow string column, and its length in bytes.

    Vectorized over 8-byte words. Equal strings hash equal; distinct strings can collide,
    except two of the same length up to 8 bytes (one word, and every step of the hash is a
    bijection of it). A match made on hashes is therefore checked (:func:`same`). Hashing
    needs no table: 10M ids take about 0.1 s, where a hash table takes 0.5 s or more.

    Strings of up to :data:`_SHORT_ID` bytes are hashed one word position at a time across all
    of them; longer ones (:func:`_long_hashes`) with every word at once, so the cost is linear
    in the bytes with no Python step per word (a 50 MB id took 65 s word by word). Equal
    strings have equal lengths, so the two rules never have to agree with each other.
    """
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        parts = [hashes(c) for c in arr.chunks]
        if not parts:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        return np.concatenate([h for h, _ in parts]), np.concatenate([n for _, n in parts])
    n = len(arr)
    offsets = _offsets(arr)
    lo, hi = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    data = np.zeros(hi - lo + 8, dtype=np.uint8)
    if hi > lo:
        data[: hi - lo] = np.frombuffer(arr.buffers()[2], dtype=np.uint8, count=hi - lo, offset=lo)
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
        word = view[k0 : k0 + m] + steps[:m]
        word += np.uint64((k0 * int(_MIX2)) & 0xFFFFFFFFFFFFFFFF)
        if k0 + m == n_words and length % 8:  # the last word keeps only the string's bytes
            word[-1:] = (
                (view[-1:] & _low_bytes(np.uint64(length % 8)))
                + steps[m - 1 : m]
                + np.uint64((k0 * int(_MIX2)) & 0xFFFFFFFFFFFFFFFF)
            )
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


def _low_bytes(count: Any) -> Any:
    """The mask keeping the low ``count`` bytes (0 to 7) of a little-endian word."""
    return (np.uint64(1) << (count * np.uint64(8))) - np.uint64(1)


def same(
    a: tuple[Any, np.ndarray, np.ndarray], i: np.ndarray, b: tuple[Any, np.ndarray, np.ndarray], j: np.ndarray
) -> bool:
    """Whether string ``a[i]`` equals ``b[j]`` for every pair of positions.

    ``a`` and ``b`` are (arrow strings, hashes, lengths) as :func:`hashes` gives them. Equal
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


def first_appearance(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``values`` (ints) numbered in order of first appearance, and the position of
    each distinct value's first occurrence, in that order."""
    uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first, kind="stable")
    rank_of = np.empty(len(uniq), dtype=np.int64)
    rank_of[by_appearance] = np.arange(len(uniq))
    return rank_of[inverse.ravel()], first[by_appearance]
