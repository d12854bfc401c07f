"""The fixed-width id helpers of retrieval_eval.arrays (numpy moves of short ids of one width)
and the reader paths that use them: every result equals arrow's own take and the reading of
the same run in another line order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from retrieval_eval.arrays import block_starts, codes, fixed_width, strings_of, take_strings
from retrieval_eval.io import from_trec_run
from retrieval_eval.io.text import has_hex_prefix

ROWS = 5000  # above take_strings' numpy threshold


def _ids(values: list[str], type_: pa.DataType | None = None) -> pa.Array:
    return pa.array(values, type=pa.large_string() if type_ is None else type_)


def _perm(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n)


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()])
@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 8, 13, 32])
def test_one_width_takes_equal_arrow(type_: pa.DataType, width: int) -> None:
    rng = np.random.default_rng(width)
    values = ["".join(rng.choice(list("0123456789abc"), width)) for _ in range(ROWS)]
    arr = _ids(values, type_)
    fixed = fixed_width(arr)
    assert fixed is not None and fixed.dtype.itemsize == width and len(fixed) == ROWS
    perm = _perm(ROWS, width)
    out = take_strings(arr, perm)
    assert out.type == arr.type
    assert out.equals(pc.take(arr, pa.array(perm)))
    want = [values[i] for i in perm]
    assert out.to_pylist() == (
        want if pa.types.is_unicode(type_) or pa.types.is_large_unicode(type_) else [v.encode() for v in want]
    )


def test_leading_zeros_are_kept() -> None:
    values = [f"{i:08d}" for i in range(ROWS)]  # "00000000", "00000001", ...
    out = take_strings(_ids(values), _perm(ROWS)).to_pylist()
    assert sorted(out) == values and out[0].startswith("0") and len(set(map(len, out))) == 1


def test_unicode_ids_of_one_byte_width() -> None:
    # "é" is 2 bytes, "ab" is 2 bytes: one byte width, different character counts
    values = (["é", "ab", "ß", "zz"] * (ROWS // 4 + 1))[:ROWS]
    arr = _ids(values)
    assert fixed_width(arr) is not None
    perm = _perm(ROWS, 1)
    assert take_strings(arr, perm).to_pylist() == [values[i] for i in perm]


@pytest.mark.parametrize(
    "values",
    [
        ["a", "bb"] * (ROWS // 2),  # mixed widths
        ["x" * 40, "y" * 40] * (ROWS // 2),  # longer than FIXED_WIDTH_MAX
        ["", "a"] * (ROWS // 2),  # an empty value
        ["", ""] * (ROWS // 2),  # only empty values
    ],
    ids=["mixed", "long", "one-empty", "all-empty"],
)
def test_other_columns_take_arrow_path(values: list[str]) -> None:
    arr = _ids(values)
    assert fixed_width(arr) is None
    perm = _perm(len(values), 2)
    assert take_strings(arr, perm).equals(pc.take(arr, pa.array(perm)))


def test_nulls_and_empty_array() -> None:
    assert fixed_width(_ids(["ab", None, "cd"])) is None
    assert fixed_width(_ids([])) is None
    assert take_strings(_ids([]), np.zeros(0, dtype=np.int64)).to_pylist() == []


def test_chunked_and_sliced_columns() -> None:
    values = [f"d{i:05d}" for i in range(ROWS)]
    chunked = pa.chunked_array([_ids(values[:1000]), _ids(values[1000:3000]).slice(0), _ids(values[3000:])])
    perm = _perm(ROWS, 3)
    assert take_strings(chunked, perm).to_pylist() == [values[i] for i in perm]
    sliced = _ids(["zz"] + values).slice(1)  # a data buffer that does not start at the first value
    fixed = fixed_width(sliced)
    assert fixed is not None
    assert strings_of(fixed, fixed.dtype.itemsize, pa.large_string()).to_pylist() == values


def test_strings_of_roundtrip_types() -> None:
    values = np.array([b"abc", b"xyz", b"000"], dtype="S3")
    assert strings_of(values, 3, pa.string()).to_pylist() == ["abc", "xyz", "000"]
    assert strings_of(values, 3, pa.large_binary()).to_pylist() == [b"abc", b"xyz", b"000"]


@pytest.mark.parametrize("shuffled", [False, True])
def test_codes_first_appearance_order(shuffled: bool) -> None:
    rng = np.random.default_rng(4)
    raw = np.repeat(rng.permutation(50), 40)
    if shuffled:
        raw = rng.permutation(raw)
    values = [f"q{v:03d}" for v in raw]
    got, distinct = codes(_ids(values))
    want, uniques = pd.factorize(pd.Series(values), sort=False)
    assert np.array_equal(got, want) and list(distinct) == list(uniques)


def test_block_starts_only_in_order() -> None:
    qid = _ids(["a", "a", "b", "b"])
    rank = pa.array([1, 2, 2, 1])
    starts, in_order = block_starts(None, qid, rank, strict=True)
    assert list(starts) == [0, 2] and in_order is False
    starts, in_order = block_starts(None, qid, rank, strict=True, only_in_order=True)
    assert len(starts) == 0 and in_order is False
    starts, in_order = block_starts(None, qid, pa.array([1, 2, 1, 2]), strict=True, only_in_order=True)
    assert list(starts) == [0, 2] and in_order is True


@pytest.mark.parametrize(
    "text, expected",
    [
        (b"", False),
        (b"0", False),
        (b"x", False),
        (b"0x", True),
        (b"0X", True),
        (b"x0", False),
        (b"ax" * 100 + b"0x", True),
        (b"aX" * 100 + b"0X", True),
        (b"ax" * 100, False),
        (b"00 1x", False),
    ],
)
def test_has_hex_prefix(text: bytes, expected: bool) -> None:
    for data in (text, bytearray(text), memoryview(text)):
        assert has_hex_prefix(data) is expected


def test_has_hex_prefix_equals_two_byte_search() -> None:
    rng = np.random.default_rng(5)
    for _ in range(2000):
        data = bytes(rng.choice(list(b"0xXa "), rng.integers(0, 120)))
        assert has_hex_prefix(data) == (b"0x" in data or b"0X" in data), data


def _run_lines(n_queries: int, depth: int, doc_width: str) -> list[str]:
    rng = np.random.default_rng(6)
    lines = []
    for q in range(n_queries):
        docs = rng.choice(10 * depth, depth, replace=False)
        for r, d in enumerate(docs, start=1):
            doc = f"D{d:07d}" if doc_width == "one" else f"D{d}"
            lines.append(f"q{q:03d} Q0 {doc} {r} {100 - r / 7:.4f} sys")
    return lines


@pytest.mark.parametrize("doc_width", ["one", "mixed"])
@pytest.mark.parametrize("order", ["rank", "score"])
def test_shuffled_run_reads_as_sorted(doc_width: str, order: str) -> None:
    lines = _run_lines(40, 60, doc_width)  # 2,400 rows: the numpy take path
    shuffled = [lines[i] for i in _perm(len(lines), 7)]
    sorted_ = from_trec_run("\n".join(lines) + "\n", order=order)
    # the queries of the shuffled file come in its own first-appearance order
    firsts = list(dict.fromkeys(line.split()[0] for line in shuffled))
    expected = sorted_.set_index("query_id").loc[firsts].reset_index()[list(sorted_.columns)]
    got = from_trec_run("\n".join(shuffled) + "\n", order=order)
    pd.testing.assert_frame_equal(got, expected.astype(got.dtypes.to_dict()))
