"""Fast paths of JSONL files and frames, and the compact columns: the same frame or message as the careful pass."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from format_helpers import JUDGMENT_FILES, J, assert_dtypes, refused, same_outcome
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval.io as rio
from retrieval_eval.errors import FormatError
from retrieval_eval.io import (
    JUDGMENT_COLUMNS,
    as_judgments,
    as_run,
    from_qrels,
    from_trec_run,
    parse_judgments,
    parse_run,
    read_judgments,
    read_qrels,
    read_run,
    read_trec_run,
)
from retrieval_eval.io import columns as io_columns
from retrieval_eval.io import frames as io_frames
from retrieval_eval.io import jsontext as io_json
from retrieval_eval.io import judgments as io_judgments
from retrieval_eval.io import runs as io_runs
from retrieval_eval.io import text as io_text
from retrieval_eval.model import ID


@pytest.mark.parametrize("case", range(len(JUDGMENT_FILES)))
def test_read_judgments_fast_path_matches_the_careful_pass(case, tmp_path):
    text = JUDGMENT_FILES[case]
    path = tmp_path / "j.jsonl"
    path.write_bytes(text.encode("utf-8"))
    expected = None
    try:
        expected = io_judgments._judgments_python(io_text.strip_bom(text), "judgments")
    except FormatError as err:
        message = str(err)
        assert refused(read_judgments, path) == str(path) + message[message.index(":") :]
        assert refused(parse_judgments, text) == message
    if expected is not None:
        for got in (read_judgments(path), parse_judgments(text)):
            pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_read_judgments_fast_path_reads_plain_files():
    text = "".join(f'{{"query_id":"q{i % 7}","doc_uri":"d{i}","relevance":{i % 4}}}\n' for i in range(500))
    assert io_judgments._judgments_fast(text.encode()) is not None
    pd.testing.assert_frame_equal(
        parse_judgments(text), io_judgments._judgments_python(text, "judgments"), check_exact=True
    )
    mixed = text + '{"query_id":"q","doc_uri":"d","relevance":1,"stratum":"s"}\n'  # a field the first line lacks
    df = io_judgments._judgments_fast(mixed.encode())
    assert df is not None and df.stratum.iloc[-1] == "s" and df.stratum.isna().sum() == 500
    assert_dtypes(df, JUDGMENT_COLUMNS)


def _coerce_both_ways(monkeypatch, fn, frame, **kwargs):
    """``fn(frame)`` on the vectorized path and with it disabled: the same frame or message."""

    def outcome():
        try:
            out = fn(frame, **kwargs)
        except FormatError as err:
            return str(err)
        return out

    fast = outcome()
    with monkeypatch.context() as m:
        m.setattr(io_frames, "_contract_frame", lambda df, columns: False)
        slow = outcome()
    if isinstance(slow, str):
        assert fast == slow
        return None
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    assert fast.attrs == slow.attrs
    return fast


def _judgments_variants():
    base = parse_judgments(J + "\n" + '{"query_id":"q2","doc_uri":"d2","relevance":0,"stratum":"s"}\n')
    out = {"reader": base}
    for name, column, value in [
        ("extra NaN", "extra", [np.nan, None]),
        ("extra NA", "extra", [pd.NA, None]),  # no truth value: the column is rebuilt
        ("extra dict", "extra", [{"a": 1}, None]),
        ("empty doc", "doc_uri", pd.array(["d1", ""], dtype="string")),
        ("NA query", "query_id", pd.array(["q1", None], dtype="string")),
        ("negative", "relevance", np.array([1, -1], dtype=np.int64)),
    ]:
        df = base.copy()
        values = np.empty(2, dtype=object)
        values[:] = value if column == "extra" else [None, None]
        df[column] = values if column == "extra" else value
        out[name] = df
    out["empty"] = rio.empty_judgments()
    out["attrs"] = base.copy()
    out["attrs"].attrs["x"] = 1
    out["index"] = base.set_axis([5, 6])
    return out


@pytest.mark.parametrize("variant", list(_judgments_variants()))
def test_as_judgments_vectorized_path_matches_the_careful_one(variant, monkeypatch):
    frame = _judgments_variants()[variant]
    before = frame.copy(deep=True)
    got = _coerce_both_ways(monkeypatch, as_judgments, frame)
    pd.testing.assert_frame_equal(frame, before)
    if got is not None and len(got):
        got.loc[0, "query_id"] = "changed"
        got.loc[0, "relevance"] = 7
        got.at[0, "extra"] = {"b": 2}  # a reader's column of None is kept, not copied
        pd.testing.assert_frame_equal(frame, before)  # the input is never written through


def _run_variants():
    base = parse_run('{"query_id":"q","ranking":["a","b"],"scores":[2,1]}\n{"query_id":"e","ranking":[]}\n')
    out = {"reader": base, "trec": from_trec_run("q1 Q0 a 1 2 x\nq1 Q0 b 2 1 y\n"), "empty": rio.empty_run()}
    for name, column, value in [
        ("NA system", "system", pd.array(["run", None], dtype="string")),
        ("empty doc", "doc_id", pd.array(["a", ""], dtype="string")),
        ("inf score", "score", np.array([np.inf, 1.0])),
        ("NaN score", "score", np.array([np.nan, 1.0])),
    ]:
        df = base.copy()
        df[column] = value
        out[name] = df
    return out


@pytest.mark.parametrize("system", [None, "mine"])
@pytest.mark.parametrize("variant", list(_run_variants()))
def test_as_run_vectorized_path_matches_the_careful_one(variant, system, monkeypatch):
    frame = _run_variants()[variant]
    before = frame.copy(deep=True)
    got = _coerce_both_ways(monkeypatch, as_run, frame, system=system)
    pd.testing.assert_frame_equal(frame, before)
    if got is not None and len(got):
        got.loc[0, "doc_id"] = "changed"
        got.loc[0, "rank"] = 9
        pd.testing.assert_frame_equal(frame, before)


RUN_FILES = [
    '{"query_id":"q1","ranking":["a","b"],"scores":[2,1]}\n{"query_id":"q2","ranking":[]}\n{"query_id":"q3","ranking":["c"]}\n',
    '{"query_id":"q1","ranking":["a","b"],"system":"x"}\n{"query_id":"q1","ranking":["c"],"system":"y"}\n',
    '{"query_id":"q1","ranking":["a"]}\n{"query_id":"q1","ranking":["b"]}\n',  # a duplicate query
    '{"query_id":"q1","ranking":["a",""]}\n',
    '{"query_id":"q1","ranking":["a"],"scores":[1,2]}\n',
    '{"query_id":"q1","ranking":["a"]}\n\n// c\n{"query_id":"q2","ranking":["b"]}\n',
    '{"query_id":"q\u00e9","ranking":["a"]}\n',
    '{"query_id":"q1","ranking":["a"]} {"query_id":"q2","ranking":["b"]}\n',
    '{"query_id":"q1","ranking":["a","b"],"system":"x"}\n{"query_id":"q2","ranking":[],"system":"x"}\n',
    '{"query_id":"q1","ranking":["a"],"system":"x"}\n{"query_id":"q1","ranking":["b"],"system":"x"}\n',
    '{"query_id":"q1","ranking":["a"],"scores":[1]}\n{"query_id":"q2","ranking":["b","c"]}\n',
    '{"query_id":"q1","ranking":["a"],"scores":[1e400]}\n',
    "",
]


@pytest.mark.parametrize("system", [None, "mine"])
@pytest.mark.parametrize("case", range(len(RUN_FILES)))
def test_read_run_fast_path_matches_the_careful_pass(case, system, tmp_path):
    text = RUN_FILES[case]
    path = tmp_path / "run.jsonl"
    path.write_bytes(text.encode("utf-8"))

    def careful(content, system=None):
        return io_runs.run_from_lines(io_json.json_lines(content, "run"), "run", system)

    same_outcome(read_run, careful, path, text, system=system)
    same_outcome(read_run, parse_run, path, text, system=system)


def _object_lines_reference(text: bytes):
    lines = text.split(b"\n")
    if text.endswith(b"\n"):
        lines.pop()
    if not text or not all(line.startswith(b"{") for line in lines):
        return None
    return len(lines)


@settings(max_examples=200, deadline=None)
@given(st.text("{}\n a", max_size=30), st.lists(st.integers(0, 30), max_size=4))
def test_object_lines_counts_the_same_lines_whatever_the_blocks(text, cuts):
    data = text.encode()
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    blocks = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    assert io_text.object_lines(blocks) == _object_lines_reference(data)


def _judgment_lines(n):
    return "".join(
        f'{{"query_id":"q{i // 9}","doc_uri":"d{i}","relevance":{i % 3}'
        + (',"stratum":"s"' if i % 5 == 0 else "")
        + "}\n"
        for i in range(n)
    )


def _run_lines(n):
    return "".join(
        f'{{"query_id":"q{i}","ranking":{json.dumps([f"d{j}" for j in range(i % 12)])}'
        + (f',"scores":{json.dumps([float(j) for j in range(i % 12)])}' if i % 3 else "")
        + "}\n"
        for i in range(n)
    )


@pytest.mark.parametrize("long_line", [False, True])
def test_jsonl_readers_in_many_chunks_match_the_careful_pass(long_line, monkeypatch, tmp_path):
    # small arrow blocks and scan blocks; a line longer than a block makes arrow read it whole
    monkeypatch.setattr(io_json, "_JSON_BLOCK", 1 << 12)
    monkeypatch.setattr(io_text, "_SCAN_BLOCK", 11)
    judgments, run = _judgment_lines(2000), _run_lines(600)
    if long_line:
        judgments += json.dumps({"query_id": "q", "doc_uri": "d" * 10_000, "relevance": 1}) + "\n"
        run += json.dumps({"query_id": "long", "ranking": [f"d{j}" for j in range(2000)]}) + "\n"
    (tmp_path / "j.jsonl").write_text(judgments, encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(run, encoding="utf-8")
    table = io_judgments._judgments_file(tmp_path / "j.jsonl")[0]  # the fast path reads it
    assert (table.column("query_id").num_chunks == 1) == long_line
    got = read_judgments(tmp_path / "j.jsonl")
    pd.testing.assert_frame_equal(got, io_judgments._judgments_python(judgments, "judgments"), check_exact=True)
    got = read_run(tmp_path / "r.jsonl")
    pd.testing.assert_frame_equal(
        got, io_runs.run_from_lines(io_json.json_lines(run, "run"), "run", None), check_exact=True
    )
    assert io_runs._run_file_columns(tmp_path / "r.jsonl") is not None  # the fast path did read it


def _buffer_bytes(column: pd.Series) -> int:
    """The bytes of the distinct arrow buffers behind a "string" column."""
    arr = pa.array(column.array)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    return sum({b.address: b.size for c in chunks for b in c.buffers() if b is not None}.values())


@pytest.mark.skipif(ID.storage != "pyarrow", reason="arrow-backed strings only")
def test_constant_and_absent_string_columns_are_compact(tmp_path):
    n = 300_000
    (tmp_path / "r.trec").write_text("".join(f"q{i // 100} Q0 d{i} {i % 100 + 1} 0.5 bench\n" for i in range(n)))
    (tmp_path / "q.trec").write_text("".join(f"q{i // 100} 0 d{i} 1\n" for i in range(n)))
    (tmp_path / "j.jsonl").write_text(_judgment_lines(n))
    run = read_trec_run(tmp_path / "r.trec")
    assert _buffer_bytes(run["system"]) < 2**20 < n * 8  # not n offsets
    pd.testing.assert_series_equal(run["system"], pd.Series(["bench"] * n, dtype="string", name="system"))
    qrels = read_qrels(tmp_path / "q.trec", labeled_by="me")
    assert _buffer_bytes(qrels["labeled_by"]) < 2**20 and qrels["labeled_by"].eq("me").all()
    for df in (qrels, read_judgments(tmp_path / "j.jsonl")):
        for name in ("query", "text_sha", "notes"):
            assert _buffer_bytes(df[name]) < 2**20 and df[name].isna().all() and len(df) == n


@pytest.mark.parametrize("value", ["x\u00e9", ""])
@pytest.mark.parametrize(
    "n", [0, 1, io_columns._REPEAT_BLOCK - 1, io_columns._REPEAT_BLOCK, 2 * io_columns._REPEAT_BLOCK + 3]
)
def test_constant_and_na_columns_hold_n_rows(n, value):
    const, na = pd.Series(io_columns.constant_strings(value, n)), pd.Series(io_columns.na_strings(n))
    assert len(const) == len(na) == n
    assert const.eq(value).all() and na.isna().all()
    assert const.dtype == na.dtype == "string"


def test_absent_columns_share_no_writable_state():
    for df in (from_qrels("q1 0 d1 1\nq2 0 d2 0\n"), parse_judgments(J + "\n" + J + "\n")):
        df.loc[0, "notes"] = "x"
        assert df["notes"].iloc[0] == "x"
        assert df["stratum"].isna().all() and df["query"].isna().all() and df["notes"].isna().sum() == 1


def test_every_reader_returns_a_frame_one_can_write_into(tmp_path):
    (tmp_path / "j.jsonl").write_text(J + "\n" + J + "\n", encoding="utf-8")
    (tmp_path / "q.trec").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n", encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"query_id":"q1","ranking":["a","b"],"scores":[2,1]}\n', encoding="utf-8")
    frames = [read_judgments(tmp_path / "j.jsonl"), read_qrels(tmp_path / "q.trec")]
    frames += [as_judgments(frames[0])]
    runs = [read_trec_run(tmp_path / "r.trec"), read_run(tmp_path / "r.jsonl")]
    runs += [as_run(runs[0]), as_run(runs[1], system="x")]
    for df in frames:
        df.loc[0, "relevance"] = 5
        df.loc[0, "line"] = 9
        assert df.loc[0, "relevance"] == 5
    for df in runs:
        df.loc[0, "rank"] = 7
        df.loc[0, "score"] = 0.0
        df.loc[0, "doc_id"] = "z"
        assert df.loc[0, "rank"] == 7 and df.loc[0, "doc_id"] == "z"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize(
    "reader,text",
    [
        (read_trec_run, "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n"),
        (read_run, '{"query_id":"q1","ranking":["a","b"]}\n{"query_id":"q1","ranking":["c"]}\n'),  # refused
        (read_run, '{"query_id":"q1","ranking":["a","b"]}\n'),
    ],
)
def test_readers_read_a_pipe_once(reader, text, tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(text, encoding="utf-8"))
    writer.start()
    try:
        plain = tmp_path / "plain"
        plain.write_text(text, encoding="utf-8")
        try:
            expected = reader(plain)
        except FormatError as err:
            message = str(err)
            assert refused(reader, fifo) == str(fifo) + message[len(str(plain)) :]
        else:
            pd.testing.assert_frame_equal(reader(fifo), expected)
    finally:
        writer.join(timeout=5)


_TREC_ODD = ["nan", "#", "#q", "é", " ", "", "\t", "\r", "x", "1.5", "-1"]
_trec_line = st.tuples(
    st.sampled_from(["q1", "q2", "q3"]),
    st.sampled_from(["Q0", "0"]),
    st.sampled_from(["d1", "d2", "d3"]),
    st.sampled_from(["1", "2", "3", "+1", "002"]),
    st.sampled_from(["0.5", "1", "2.5e-1", "-3"]),
    st.sampled_from(["r", "s"]),
)
_trec_odd_line = st.tuples(_trec_line, st.integers(0, 5), st.sampled_from(_TREC_ODD))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_trec_line, _trec_line, _trec_line, _trec_odd_line), min_size=1, max_size=8), st.booleans())
def test_read_trec_run_agrees_with_the_text_parser_on_generated_files(lines, final_newline):
    import tempfile

    rendered = []
    for line in lines:
        if isinstance(line[0], tuple):  # a well-formed line with one field replaced by an odd token
            fields, at, odd = line
            fields = list(fields)
            fields[at] = odd
            line = fields
        rendered.append(" ".join(line))
    text = "\n".join(rendered) + ("\n" if final_newline else "")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "run.trec")
        with open(path, "wb") as fh:
            fh.write(text.encode("utf-8"))
        same_outcome(read_trec_run, from_trec_run, path, text)


_JSON_VALUES = ['"q1"', '"d1"', '""', "1", "0", "-1", "1.5", "null", "true", "[]", '"\\u00e9"']
_JSON_KEYS = ["query_id", "doc_uri", "relevance", "stratum", "notes", "zz"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.just({}),
            st.dictionaries(st.sampled_from(["stratum", "notes"]), st.sampled_from(['"s"', "null"]), max_size=2),
            st.dictionaries(st.sampled_from(_JSON_KEYS), st.sampled_from(_JSON_VALUES), max_size=3),
            st.sampled_from(["", "// c", "  ", "{} {}"]),
        ),
        max_size=5,
    )
)
def test_read_judgments_agrees_with_the_careful_pass_on_generated_files(lines):
    import tempfile

    base = {"query_id": '"q"', "doc_uri": '"d"', "relevance": "1"}
    rendered = []
    for line in lines:
        if isinstance(line, dict):
            fields = {**base, **line}
            rendered.append("{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}")
        else:
            rendered.append(line)
    text = "\n".join(rendered) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "j.jsonl")
        with open(path, "wb") as fh:
            fh.write(text.encode("utf-8"))

        def careful(content):
            return io_judgments._judgments_python(content, "judgments")

        same_outcome(read_judgments, careful, path, text)


@pytest.mark.parametrize(
    ("first", "n"),
    [([0], 1), ([0], 5), ([0, 2, 4], 6), ([0, 2, 4], 7), ([0, 3, 4], 6), ([0, 1, 2], 3), ([0, 2, 4], 5), ([], 0)],
)
def test_block_rank_counts_rows_from_each_block_start(first, n):
    # equal blocks take a shortcut; every shape must give 1..size in each block
    expected = np.concatenate([np.arange(1, b - a + 1) for a, b in zip(first, first[1:] + [n])]) if first else []
    got = io_columns.block_rank(np.asarray(first, dtype=np.int64), n)
    assert got.dtype == np.int64 and got.flags.writeable
    assert got.tolist() == list(expected)
