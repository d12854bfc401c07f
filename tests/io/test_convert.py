"""Corpus and queries, the as_* coercions, and what every reader shares (missing files, UTF-8)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from format_helpers import assert_dtypes, refused
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval.io as rio
from retrieval_eval.errors import FormatError
from retrieval_eval.io import (
    CORPUS_COLUMNS,
    JUDGMENT_COLUMNS,
    QUERY_COLUMNS,
    RUN_COLUMNS,
    as_corpus,
    as_judgments,
    as_queries,
    as_run,
    from_qrels,
    from_trec_run,
    parse_corpus,
    parse_judgments,
    parse_queries,
    parse_run,
    read_corpus,
    read_judgments,
    read_qrels,
    read_queries,
    read_run,
    read_trec_run,
    serialize_judgments,
    to_trec_run,
    write_corpus,
    write_judgments,
    write_queries,
    write_run,
)
from retrieval_eval.io import jsontext as io_json
from retrieval_eval.io import judgments as io_judgments
from retrieval_eval.io import runs as io_runs

# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc,message",
    [
        ("[]", "corpus: must be a JSON object with a chunks list"),
        ('{"chunk": []}', "corpus: must be a JSON object with a chunks list"),
        ('{"chunks": {}}', "corpus: must be a JSON object with a chunks list"),
        ('{"chunks": [{"chunk_id": "a", "doc_uri": "d"}, 3]}', "corpus: chunks[1] must be a JSON object, got a number"),
        ('{"chunks": [{"chunk_id": "a", "doc_uri": "d"}, {"doc_uri": "d"}]}', "corpus: chunks[1] has no chunk_id"),
        ('{"chunks": [{"chunk_id": "a"}]}', "corpus: chunks[0] has no doc_uri"),
        ('{"chunks": [{"chunk_id": 1, "doc_uri": "d"}]}', "corpus: chunks[0] chunk_id must be a string"),
        (
            '{"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": true}]}',
            "corpus: chunks[0] ordinal must be an integer",
        ),
        (
            '{"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": 1.5}]}',
            "corpus: chunks[0] ordinal must be an integer",
        ),
        ('{"chunks": [{"chunk_id": "a", "doc_uri": "d", "text": 5}]}', "corpus: chunks[0] text must be a string"),
        ('{"corpus_fingerprint": 5, "chunks": []}', "corpus: corpus_fingerprint must be a string"),
        ('{\n  "chunks": [\n  }', "corpus:3: invalid JSON, Expecting value at column 3"),
    ],
)
def test_corpus_refusals(doc, message):
    assert refused(parse_corpus, doc) == message


def test_corpus_without_fingerprints_and_write_round_trip(tmp_path):
    df = parse_corpus(
        '{"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": 2}, {"chunk_id": "b", "doc_uri": "d"}]}'
    )
    assert df.attrs == {"corpus_fingerprint": None, "chunker_fingerprint": None}
    assert df.ordinal.tolist() == [2, pd.NA]
    path = tmp_path / "c.json"
    text = write_corpus(df, path)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text)
    assert json.loads(text) == {
        "chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": 2}, {"chunk_id": "b", "doc_uri": "d"}]
    }
    pd.testing.assert_frame_equal(read_corpus(path), df)
    assert_dtypes(parse_corpus('{"chunks": []}'), CORPUS_COLUMNS)


# ---------------------------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------------------------


def test_queries_parse_and_write():
    text = '{"query_id":"q1","query":"refund?","stratum":"billing"}\n// ood\n{"query_id":"q2","expect_none":true}\n'
    df = parse_queries(text)
    assert_dtypes(df, QUERY_COLUMNS)
    assert df.expect_none.tolist() == [False, True]
    assert df.loc[1, "query"] is pd.NA
    assert write_queries(df) == (
        '{"query_id":"q1","query":"refund?","stratum":"billing"}\n{"query_id":"q2","expect_none":true}\n'
    )
    assert_dtypes(parse_queries(""), QUERY_COLUMNS)


@pytest.mark.parametrize(
    "line,detail",
    [
        ('{"query_id":"q2","expect_none":"yes"}', "expect_none must be true or false"),
        ('{"query_id":"q2","expect_none":1}', "expect_none must be true or false"),
        ('{"query_id":"q1"}', "duplicate entry for query q1, already on line 1"),
        ('{"query":"x"}', "missing query_id"),
        ('{"query_id":"q2","stratum":3}', "stratum must be a string"),
        ("[]", "must be a JSON object, got a list"),
    ],
)
def test_queries_refusals(line, detail):
    assert refused(parse_queries, '{"query_id":"q1"}\n\n' + line + "\n") == f"queries:3: {detail}"


# ---------------------------------------------------------------------------------------------
# Coercion
# ---------------------------------------------------------------------------------------------


def test_as_judgments_from_dicts_path_and_frame_without_mutating(tmp_path):
    dicts = [
        {"query_id": "q1", "doc_uri": "d1", "relevance": 2, "custom": {"k": 1}},
        {"query_id": "q2", "doc_uri": "d2", "relevance": 0, "stratum": "s"},
    ]
    snapshot = json.loads(json.dumps(dicts))
    from_dicts = as_judgments(dicts)
    assert dicts == snapshot
    assert from_dicts.line.tolist() == [0, 0]
    path = tmp_path / "j.jsonl"
    write_judgments(dicts, path)
    from_path = as_judgments(path)
    assert from_path.line.tolist() == [1, 2]
    pd.testing.assert_frame_equal(from_dicts.drop(columns="line"), from_path.drop(columns="line"))
    assert as_judgments(str(path)).equals(from_path)

    frame = pd.DataFrame({"query_id": ["q1"], "doc_uri": ["d1"], "relevance": [1.0], "mine": [7]})
    before = frame.copy()
    out = as_judgments(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert_dtypes(out, JUDGMENT_COLUMNS)
    assert out["mine"].tolist() == [7] and out.line.tolist() == [0]
    out.loc[0, "query_id"] = "changed"
    out.loc[0, "mine"] = 8
    pd.testing.assert_frame_equal(frame, before)
    again = as_judgments(from_path)
    again.loc[0, "doc_uri"] = "x"
    assert from_path.loc[0, "doc_uri"] == "d1"


def test_as_judgments_refuses_bad_frames():
    with pytest.raises(FormatError, match="missing column relevance"):
        as_judgments(pd.DataFrame({"query_id": ["q"], "doc_uri": ["d"]}))
    with pytest.raises(FormatError, match="relevance must be a non-negative integer"):
        as_judgments(pd.DataFrame({"query_id": ["q"], "doc_uri": ["d"], "relevance": [1.5]}))
    with pytest.raises(FormatError, match="missing doc_uri"):
        as_judgments(pd.DataFrame({"query_id": ["q"], "doc_uri": [None], "relevance": [1]}))
    with pytest.raises(TypeError):
        as_judgments(42)


def test_as_judgments_reads_qrels_paths(tmp_path):
    path = tmp_path / "x.qrels"
    path.write_text("q1 0 d1 1\n", encoding="utf-8")
    assert as_judgments(path).doc_uri.tolist() == ["d1"]


def test_as_run_from_every_shape_without_mutating(tmp_path):
    lines = [{"query_id": "q1", "ranking": ["a", "b"], "scores": [2, 1]}]
    snapshot = json.loads(json.dumps(lines))
    run = as_run(lines)
    assert lines == snapshot
    assert run.score.tolist() == [2.0, 1.0]

    long = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"]})
    before = long.copy()
    out = as_run(long)
    pd.testing.assert_frame_equal(long, before)
    assert_dtypes(out, RUN_COLUMNS)
    assert out.system.tolist() == ["run"] * 3 and out["rank"].tolist() == [1, 2, 1] and out.score.isna().all()

    both = as_run({"bm25": lines, "dense": long})
    assert_dtypes(both, RUN_COLUMNS)
    assert both.system.tolist() == ["bm25", "bm25", "dense", "dense", "dense"]

    jsonl = tmp_path / "r.jsonl"
    write_run(run, jsonl)
    pd.testing.assert_frame_equal(as_run(jsonl), run)
    trec = tmp_path / "r.txt"
    trec.write_text(to_trec_run(run), encoding="utf-8")
    assert as_run(trec).doc_id.tolist() == ["a", "b"]
    assert as_run(str(trec), system="x").system.tolist() == ["x", "x"]
    with pytest.raises(FormatError, match=r"run:1: ranking\[0\] must be a non-empty string"):
        as_run([{"query_id": "q", "ranking": [1]}])


def test_as_queries_and_as_corpus(tmp_path):
    q = pd.DataFrame({"query_id": ["q1", "q2"], "expect_none": [True, None]})
    before = q.copy()
    out = as_queries(q)
    pd.testing.assert_frame_equal(q, before)
    assert_dtypes(out, QUERY_COLUMNS)
    assert out.expect_none.tolist() == [True, False]
    assert as_queries([{"query_id": "a", "expect_none": True}]).expect_none.tolist() == [True]
    with pytest.raises(FormatError, match="duplicate"):
        as_queries(pd.DataFrame({"query_id": ["a", "a"]}))

    corpus = as_corpus({"corpus_fingerprint": "fp", "chunks": [{"chunk_id": "c", "doc_uri": "d"}]})
    assert corpus.attrs["corpus_fingerprint"] == "fp"
    copy = as_corpus(corpus)
    assert copy.attrs == corpus.attrs and copy is not corpus
    assert_dtypes(as_corpus(pd.DataFrame({"chunk_id": ["c"], "doc_uri": ["d"], "ordinal": [3]})), CORPUS_COLUMNS)
    path = tmp_path / "c.json"
    write_corpus(corpus, path)
    assert as_corpus(path).chunk_id.tolist() == ["c"]


# ---------------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", [read_judgments, read_run, read_trec_run, read_qrels, read_corpus, read_queries])
def test_readers_refuse_missing_files_and_folders(reader, tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert refused(reader, missing) == f"{missing}: cannot read: no such file or directory"
    assert refused(reader, tmp_path) == f"{tmp_path}: cannot read: is a directory"


@pytest.mark.parametrize("reader", [read_judgments, read_run, read_trec_run, read_qrels, read_queries, read_corpus])
def test_readers_name_the_line_of_invalid_utf8(reader, tmp_path):
    path = tmp_path / "bad"
    path.write_bytes(b"first line\n\nab\xffcd\n")
    assert refused(reader, path) == f"{path}:3: not valid UTF-8 (byte 0xff at column 3)"


def test_whitespace_tables_split_on_ascii_whitespace_only():
    # trec_eval splits on C isspace; a no-break space or U+2028 inside an id is part of the id,
    # and both the fast path and the careful pass agree on that
    text = "q1 Q0 d\u00a0x 1 0.5 r\nq1 Q0 d\u2028y 2 0.25 r\n"
    assert from_trec_run(text).doc_id.tolist() == ["d\u00a0x", "d\u2028y"]
    assert from_trec_run("# c\n" + text).doc_id.tolist() == ["d\u00a0x", "d\u2028y"]
    assert from_qrels("q1 0 d\u00a0x 1\n").doc_uri.tolist() == ["d\u00a0x"]
    assert from_qrels("q1\t0 d\u00a0x\v1\n").doc_uri.tolist() == ["d\u00a0x"]


@pytest.mark.parametrize(
    "content",
    [
        b'{"query_id":"q","ranking":["a",]}\n',
        b'{"query_id":"q","ranking":["a"]} // c\n',
        b"{'query_id':'q','ranking':['a']}\n",
        b'{"query_id":"q","ranking":["a"],"scores":[Infinity]}\n',
        b'{"query_id":"q","ranking":["a"],"scores":[01]}\n',
        b'{"query_id":"q","ranking":["a\x01"]}\n',
        b'{"query_id":"q","ranking":["a"]}\n\x00\n',
        b'{"query_id":"q","ranking":["a"],"x":[1,}\n',
        b'{"query_id":"q","ranking":["a"],"query_id":"r"}\n',
        b'{"query_id":"q","ranking":["a"]}\r\n{"query_id":"r","ranking":["b"]}\r\n',
        b'{"query_id":"q","ranking":["a"],"system":null,"scores":null}   \n',
    ],
)
def test_fast_path_never_accepts_what_the_careful_pass_refuses(content):
    fast = io_runs._parse_run_fast(content, None)
    try:
        careful = io_runs.run_from_lines(io_json.json_lines(content.decode("utf-8"), "run"), "run", None)
    except FormatError as err:
        assert fast is None
        assert refused(parse_run, content) == str(err)
    else:
        if fast is not None:
            pd.testing.assert_frame_equal(fast, careful)
        pd.testing.assert_frame_equal(parse_run(content), careful)


def test_as_run_frame_columns_are_cast_and_numeric_ids_refused():
    frame = pd.DataFrame(
        {
            "query_id": pd.Categorical(["q1", "q1", "q2"]),
            "doc_id": np.array(["a", "b", "c"], dtype=object),
            "system": ["s", None, "s"],
            "score": [1, 2, 3],
        }
    )
    run = as_run(frame)
    assert_dtypes(run, RUN_COLUMNS)
    assert run.system.tolist() == ["s", "run", "s"] and run.score.tolist() == [1.0, 2.0, 3.0]
    assert run["rank"].tolist() == [1, 1, 1]  # numbered per (system, query)
    # ids are never numbers: 1 and "001" would silently stop matching
    assert refused(as_run, pd.DataFrame({"query_id": [1, 2], "doc_id": ["a", "b"]})) == (
        "run: column query_id must hold strings, found 1"
    )
    assert refused(as_run, pd.DataFrame({"query_id": ["q", None], "doc_id": ["a", "b"]})) == "run: missing query_id"
    assert refused(as_run, pd.DataFrame({"query_id": ["q"]})) == "run: missing column doc_id"


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)
_json_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_judgment = st.fixed_dictionaries(
    {"query_id": _text.filter(bool), "doc_uri": _text.filter(bool), "relevance": st.integers(0, 3)},
    optional={name: _text for name in io_judgments._OPTIONAL_JUDGMENT_STR},
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            _judgment, st.dictionaries(_text.filter(lambda k: k not in rio.JUDGMENT_FIELDS), _json_value, max_size=3)
        ),
        max_size=4,
    )
)
def test_property_canonical_bytes_are_a_fixed_point(items):
    dicts = [{**extra, **known} for known, extra in items]
    text = serialize_judgments(dicts)
    assert text == serialize_judgments(parse_judgments(text))
    again = parse_judgments(text)
    assert [json.loads(line) for line in text.split("\n")[:-1]] == [
        {**{k: d[k] for k in rio.JUDGMENT_FIELDS if k in d}, **{k: d[k] for k in d if k not in rio.JUDGMENT_FIELDS}}
        for d in dicts
    ]
    assert again.line.tolist() == list(range(1, len(dicts) + 1))


def test_writers_accept_concatenated_frames():
    one = parse_run('{"query_id":"q1","ranking":["a","b"],"scores":[2,1]}\n')
    both = as_run({"x": one, "y": pd.concat([one, one.iloc[:0]], ignore_index=True)})
    assert to_trec_run(both) == "q1 Q0 a 1 2 x\nq1 Q0 b 2 1 x\nq1 Q0 a 1 2 y\nq1 Q0 b 2 1 y\n"
    assert write_run(both).splitlines()[1] == '{"query_id":"q1","ranking":["a","b"],"scores":[2.0,1.0],"system":"y"}'


@pytest.mark.parametrize("careful", ["", "// forces the careful pass\n"])
def test_run_score_that_overflows_a_double_is_refused(careful):
    text = careful + '{"query_id":"q","ranking":["a","b"],"scores":[1,' + "9" * 400 + "]}\n"
    line = 2 if careful else 1
    assert refused(parse_run, text) == f"run:{line}: scores[1] must be a finite number"
    assert parse_run(careful + '{"query_id":"q","ranking":["a"],"scores":[1.7e308]}\n').score.tolist() == [1.7e308]


def test_as_run_reads_a_wire_like_frame_one_row_per_query():
    wide = pd.DataFrame(
        [{"query_id": "q1", "ranking": ["a", "b"], "scores": [2, 1]}, {"query_id": "q2", "ranking": ["c"]}]
    )
    run = as_run(wide)
    assert run.doc_id.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(run.score.to_numpy(), [2.0, 1.0, np.nan])
    bad = pd.DataFrame([{"query_id": "q1", "ranking": ["a"]}, {"query_id": "q1", "ranking": ["b"]}])
    assert refused(as_run, bad) == "run:2: duplicate entry for query q1, already on line 1"
    with pytest.raises(ValueError):
        as_run(wide, system="")
