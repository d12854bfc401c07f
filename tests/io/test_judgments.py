"""Judgments JSONL (SPEC A2) and the spec's fixtures: one test per rule."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from conftest import load_expected, spec_fixtures_dir
from format_helpers import J, assert_dtypes, refused

import retrieval_eval.io as rio
from retrieval_eval.io import (
    CORPUS_COLUMNS,
    JUDGMENT_COLUMNS,
    as_judgments,
    atomic_write_text,
    from_qrels,
    parse_judgments,
    parse_run,
    read_corpus,
    read_judgments,
    read_qrels,
    read_run,
    serialize_judgments,
    to_qrels,
    write_corpus,
    write_judgments,
)

# ---------------------------------------------------------------------------------------------
# Spec fixtures
# ---------------------------------------------------------------------------------------------


def _rejected_cases():
    exp = load_expected("duplicate-ranking")
    return [(c["file"], c["message"]) for c in exp["rejected"]["cases"]]


@pytest.mark.parametrize("case", range(2))
def test_fixture_duplicate_ranking_rejected_with_exact_message(fixtures, case):
    file, message = _rejected_cases()[case]
    path = fixtures / "duplicate-ranking" / file
    assert refused(parse_run, path.read_text(encoding="utf-8")) == message
    # read_run names the file instead of "run"
    assert refused(read_run, path) == str(path) + message[len("run") :]


def test_fixture_repeated_key_inside_a_ranking_is_kept(fixtures):
    run = read_run(fixtures / "duplicate-ranking" / "run.jsonl")
    assert run[run.query_id == "q1"].doc_id.tolist() == ["d1"] * 5
    assert run[run.query_id == "q2"].doc_id.tolist() == ["d9", "d3", "d9", "d3"]
    assert run[run.query_id == "q2"]["rank"].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("shape,file", [("beir", "beir.tsv"), ("trec", "trec.qrels")])
def test_fixture_qrels_both_shapes(fixtures, shape, file):
    expected = load_expected("qrels")[shape]
    path = fixtures / "qrels" / file
    for df in (read_qrels(path), from_qrels(path.read_text(encoding="utf-8"))):
        assert_dtypes(df, JUDGMENT_COLUMNS)
        got = df[["query_id", "doc_uri", "relevance"]].astype(object).to_dict("records")
        assert got == expected


def test_fixture_qrels_lines(fixtures):
    beir = read_qrels(fixtures / "qrels" / "beir.tsv")
    assert to_qrels(beir).splitlines() == load_expected("qrels")["qrels_lines"]
    basic = read_judgments(fixtures / "basic" / "judgments.jsonl")
    assert to_qrels(basic).splitlines() == load_expected("basic")["qrels_lines"]


def _fixture_judgment_files():
    return sorted(p.relative_to(spec_fixtures_dir()).as_posix() for p in spec_fixtures_dir().glob("*/judgments.jsonl"))


def test_every_fixture_judgments_file_reads_and_round_trips(fixtures):
    files = _fixture_judgment_files()
    assert files
    for rel in files:
        path = fixtures / rel
        df = read_judgments(path)
        assert_dtypes(df, JUDGMENT_COLUMNS)
        lines = [ln for ln in path.read_text(encoding="utf-8").split("\n") if ln.strip()]
        assert len(df) == len(lines)
        # canonical bytes are a fixed point, and say the same labels as the file
        text = serialize_judgments(df)
        assert serialize_judgments(parse_judgments(text)) == text
        for line, obj in zip(text.split("\n"), lines):
            assert json.loads(line) == json.loads(obj)


def test_fixture_corpus_reads_with_fingerprints(fixtures):
    df = read_corpus(fixtures / "drift" / "corpus.json")
    assert_dtypes(df, CORPUS_COLUMNS)
    raw = json.loads((fixtures / "drift" / "corpus.json").read_text(encoding="utf-8"))
    assert df.attrs["corpus_fingerprint"] == raw["corpus_fingerprint"]
    assert df.attrs["chunker_fingerprint"] == raw["chunker_fingerprint"]
    assert df.chunk_id.tolist() == [c["chunk_id"] for c in raw["chunks"]]
    assert df.ordinal.tolist() == [c.get("ordinal") for c in raw["chunks"]]
    assert json.loads(write_corpus(df)) == raw


# ---------------------------------------------------------------------------------------------
# Judgments
# ---------------------------------------------------------------------------------------------


def test_judgments_frame_has_contract_columns_and_dtypes():
    df = parse_judgments(J + "\n")
    assert_dtypes(df, JUDGMENT_COLUMNS)
    assert list(df.columns) == list(JUDGMENT_COLUMNS)
    assert df.loc[0, "chunk_id"] is pd.NA and df.loc[0, "extra"] is None and df.loc[0, "line"] == 1
    for empty in (parse_judgments(""), rio.empty_judgments(), as_judgments([])):
        assert_dtypes(empty, JUDGMENT_COLUMNS)
        assert len(empty) == 0


REFUSED_JUDGMENTS = [
    ('{"doc_uri":"d","relevance":1}', "missing query_id"),
    ('{"query_id":"","doc_uri":"d","relevance":1}', "missing query_id"),
    ('{"query_id":null,"doc_uri":"d","relevance":1}', "missing query_id"),
    ('{"query_id":7,"doc_uri":"d","relevance":1}', "missing query_id"),
    ('{"query_id":"q","relevance":1}', "missing doc_uri"),
    ('{"query_id":"q","doc_uri":"","relevance":1}', "missing doc_uri"),
    ('{"query_id":"q","doc_uri":"d"}', "relevance must be a non-negative integer"),
    ('{"query_id":"q","doc_uri":"d","relevance":-1}', "relevance must be a non-negative integer"),
    ('{"query_id":"q","doc_uri":"d","relevance":true}', "relevance must be a non-negative integer"),
    ('{"query_id":"q","doc_uri":"d","relevance":1.0}', "relevance must be a non-negative integer"),
    ('{"query_id":"q","doc_uri":"d","relevance":"1"}', "relevance must be a non-negative integer"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"chunk_id":5}', "chunk_id must be a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"stratum":["a"]}', "stratum must be a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"query":{}}', "query must be a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"text_sha":1}', "text_sha must be a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"chunk_text":false}', "chunk_text must be a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"labeled_by":1}', "labeled_by must be a string"),
    ("[1, 2]", "must be a JSON object, got a list"),
    ('"text"', "must be a JSON object, got a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"x":NaN}', "invalid JSON, NaN is not a JSON number"),
    (
        '{"query_id":"q","doc_uri":"d","relevance":1,"x":"\\ud800"}',
        "invalid JSON, a lone surrogate escape is not valid Unicode",
    ),
]


@pytest.mark.parametrize("line,detail", REFUSED_JUDGMENTS)
def test_judgment_refusals_name_the_real_line(line, detail):
    # blank lines and // comments are skipped but still count as lines
    content = J + "\n\n// a comment\n   \n" + line + "\n" + J + "\n"
    assert refused(parse_judgments, content) == f"judgments:5: {detail}"


def test_judgment_invalid_json_detail():
    msg = refused(parse_judgments, J + '\n{"query_id": "q",\n')
    assert msg.startswith("judgments:2: invalid JSON, ")
    assert "column" in msg


def test_judgment_refusal_from_dicts_uses_the_index_and_from_files_the_path(tmp_path):
    assert refused(as_judgments, [json.loads(J), {"query_id": "q", "relevance": 1}]) == "judgments:2: missing doc_uri"
    path = tmp_path / "j.jsonl"
    path.write_text(J + '\n{"query_id":"q","doc_uri":"d","relevance":-2}\n', encoding="utf-8")
    assert refused(read_judgments, path) == f"{path}:2: relevance must be a non-negative integer"


def test_judgment_line_numbers_count_blank_and_comment_lines():
    df = parse_judgments("// header\n\n" + J + "\n  // indented comment\n" + J + "\n")
    assert df.line.tolist() == [3, 5]


def test_judgment_lines_split_on_newline_only():
    # U+2028 and NEL are legal raw inside JSON strings; they must not shift line numbers
    text = '{"query_id":"q","doc_uri":"d","relevance":1,"notes":"a\u2028b\x85c"}\n' + '{"query_id":"q"}\n'
    assert refused(parse_judgments, text) == "judgments:2: missing doc_uri"
    assert parse_judgments(text.split("\n")[0]).notes.tolist() == ["a\u2028b\x85c"]
    msg = refused(parse_judgments, '{"query_id":"q\x0c"}')
    assert msg == "judgments:1: invalid JSON, Invalid control character at column 15"


def test_judgment_bom_is_stripped(tmp_path):
    assert parse_judgments("\ufeff" + J).query_id.tolist() == ["q1"]
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + J.encode() + b"\n")
    assert read_judgments(path).doc_uri.tolist() == ["d1"]


def test_judgment_null_optional_field_is_unset():
    df = parse_judgments('{"query_id":"q","doc_uri":"d","relevance":0,"chunk_id":null,"notes":null}')
    assert df.loc[0, "chunk_id"] is pd.NA and df.loc[0, "extra"] is None
    assert serialize_judgments(df) == '{"query_id":"q","doc_uri":"d","relevance":0}\n'


def test_canonical_field_order_compact_non_ascii_and_trailing_newline():
    line = (
        '{"zeta": 1, "notes": "n", "stratum": "s", "labeled_at": "2024-01-01T00:00:00Z", '
        '"labeled_by": "human:ana", "corpus_fingerprint": "fp", "relevance": 2, "chunk_text": "café", '
        '"text_sha": "t1:00000000000000000000000000000000", "chunk_id": "c1:00000000000000000000000000000000", '
        '"doc_uri": "d", "query": "q?", "query_id": "q", "alpha": [1, 2]}'
    )
    expected = (
        '{"query_id":"q","query":"q?","doc_uri":"d","chunk_id":"c1:00000000000000000000000000000000",'
        '"text_sha":"t1:00000000000000000000000000000000","chunk_text":"café","relevance":2,'
        '"corpus_fingerprint":"fp","labeled_by":"human:ana","labeled_at":"2024-01-01T00:00:00Z",'
        '"stratum":"s","notes":"n","zeta":1,"alpha":[1,2]}\n'
    )
    assert serialize_judgments(parse_judgments(line)) == expected
    assert serialize_judgments(rio.empty_judgments()) == ""
    assert serialize_judgments([]) == ""


def test_unknown_fields_survive_byte_for_byte():
    canonical = (
        '{"query_id":"q1","doc_uri":"d1","relevance":1,"score":1e5,"weight":1.50,"neg":-0.0,'
        '"tiny":1E-7,"big":123456789012345678901234567890,"nested":{"b":[1.0,2.50e-3,{"z":null,"a":true}],'
        '"a":"é\\n\\"x\\""},"flag":false,"emoji":"😀"}\n'
        '{"query_id":"q2","doc_uri":"d2","relevance":0,"extra":{"line":3},"line":7}\n'
    )
    df = parse_judgments(canonical)
    assert list(df.loc[0, "extra"]) == ["score", "weight", "neg", "tiny", "big", "nested", "flag", "emoji"]
    assert df.loc[0, "extra"]["weight"] == 1.5
    assert df.line.tolist() == [1, 2]  # an unknown field called "line" stays in extra
    assert df.loc[1, "extra"] == {"extra": {"line": 3}, "line": 7}
    assert serialize_judgments(df) == canonical


def test_unknown_fields_from_dicts_write_as_json():
    df = as_judgments([{"query_id": "q", "doc_uri": "d", "relevance": 1, "w": 0.5, "n": np.int64(3)}])
    assert serialize_judgments(df) == '{"query_id":"q","doc_uri":"d","relevance":1,"w":0.5,"n":3}\n'


def test_write_judgments_writes_canonical_bytes_and_keeps_a_backup(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text("old\n", encoding="utf-8")
    write_judgments(parse_judgments('{"relevance": 1, "doc_uri": "d", "query_id": "q"}'), path, backup=True)
    assert path.read_bytes() == b'{"query_id":"q","doc_uri":"d","relevance":1}\n'
    assert (tmp_path / "j.jsonl.bak").read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "j.jsonl.bak"]


def test_atomic_write_leaves_the_original_intact_when_the_write_fails(tmp_path, monkeypatch):
    path = tmp_path / "j.jsonl"
    path.write_text("original\n", encoding="utf-8")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_judgments([json.loads(J)], path)
    assert path.read_text(encoding="utf-8") == "original\n"
    assert [p.name for p in tmp_path.iterdir()] == ["j.jsonl"]  # no temporary file left behind


def test_atomic_write_text_keeps_permissions_and_newlines(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("x", encoding="utf-8")
    os.chmod(path, 0o640)
    atomic_write_text(path, "a\r\nb\n")
    assert path.read_bytes() == b"a\r\nb\n"
    assert os.stat(path).st_mode & 0o777 == 0o640
