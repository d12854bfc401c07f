"""File formats (SPEC A2, B1, B2): one test per rule, spec fixtures first."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import load_expected, spec_fixtures_dir
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.io import formats as F
from retrieval_eval.errors import FormatError
from retrieval_eval.io.formats import (
    CORPUS_COLUMNS,
    JUDGMENT_COLUMNS,
    QUERY_COLUMNS,
    RUN_COLUMNS,
    as_corpus,
    as_judgments,
    as_queries,
    as_run,
    atomic_write_text,
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
    to_qrels,
    to_trec_run,
    write_corpus,
    write_judgments,
    write_queries,
    write_run,
)


def refused(fn, *args, **kwargs) -> str:
    with pytest.raises(FormatError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def assert_dtypes(df: pd.DataFrame, columns: dict) -> None:
    assert list(df.columns[: len(columns)]) == list(columns)
    for name, dtype in columns.items():
        assert df[name].dtype == dtype, (name, df[name].dtype)
        if dtype == "string":
            assert isinstance(df[name].dtype, pd.StringDtype) and df[name].dtype.na_value is pd.NA


J = '{"query_id":"q1","doc_uri":"d1","relevance":1}'


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
    for empty in (parse_judgments(""), F.empty_judgments(), as_judgments([])):
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
    ('[1, 2]', "must be a JSON object, got a list"),
    ('"text"', "must be a JSON object, got a string"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"x":NaN}', "invalid JSON, NaN is not a JSON number"),
    ('{"query_id":"q","doc_uri":"d","relevance":1,"x":"\\ud800"}', "invalid JSON, a lone surrogate escape is not valid Unicode"),
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
    assert serialize_judgments(F.empty_judgments()) == ""
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


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def test_run_frame_is_long_with_contract_dtypes():
    run = parse_run('{"query_id":"q1","ranking":["a","b"]}\n{"query_id":"q2","ranking":["c"]}\n')
    assert_dtypes(run, RUN_COLUMNS)
    assert list(run.columns) == list(RUN_COLUMNS)
    assert run.system.tolist() == ["run"] * 3
    assert run.query_id.tolist() == ["q1", "q1", "q2"]
    assert run["rank"].tolist() == [1, 2, 1]
    assert run.doc_id.tolist() == ["a", "b", "c"]
    assert np.isnan(run.score).all()
    for empty in (parse_run(""), F.empty_run(), as_run([])):
        assert_dtypes(empty, RUN_COLUMNS)


def test_run_scores_align_with_ranking_and_lines_without_scores_are_nan():
    text = (
        '{"query_id":"q1","ranking":["a","b","c"],"scores":[3.5,2,-1e-3]}\n'
        '{"query_id":"q2","ranking":["d"]}\n'
        '{"query_id":"q3","ranking":["e","f"],"scores":[0.25,0.125],"extra":{"ignored":[1]}}\n'
    )
    run = parse_run(text)
    assert run.doc_id.tolist() == list("abcdef")
    np.testing.assert_array_equal(run.score.to_numpy(), [3.5, 2.0, -1e-3, np.nan, 0.25, 0.125])


def test_run_careful_pass_agrees_with_fast_path():
    text = (
        '{"query_id":"q1","ranking":["a","b"],"scores":[1,2]}\n\n'
        '// comment forces the careful pass\n'
        '{"query_id":"q2","ranking":["c"],"system":"bm25"}\n'
    )
    slow = parse_run(text)
    fast = parse_run(text.replace("// comment forces the careful pass\n", ""))
    pd.testing.assert_frame_equal(slow, fast)
    assert slow.system.tolist() == ["run", "run", "bm25"]


REFUSED_RUNS = [
    ('{"query_id":"q","ranking":["a",42]}', "ranking[1] must be a non-empty string"),
    ('{"query_id":"q","ranking":["a",""]}', "ranking[1] must be a non-empty string"),
    ('{"query_id":"q","ranking":[null]}', "ranking[0] must be a non-empty string"),
    ('{"query_id":"q","ranking":"a"}', "ranking must be a list"),
    ('{"query_id":"q"}', "missing ranking"),
    ('{"ranking":["a"]}', "missing query_id"),
    ('{"query_id":3,"ranking":["a"]}', "missing query_id"),
    ('["q",["a"]]', "must be a JSON object, got a list"),
    ('{"query_id":"q","ranking":["a"],"scores":"1"}', "scores must be a list"),
    ('{"query_id":"q","ranking":["a","b","c","d"],"scores":[1,2,3]}', "scores has 3 entries, ranking has 4"),
    ('{"query_id":"q","ranking":["a"],"scores":[NaN]}', "invalid JSON, NaN is not a JSON number"),
    ('{"query_id":"q","ranking":["a","b"],"scores":[1,Infinity]}', "invalid JSON, Infinity is not a JSON number"),
    ('{"query_id":"q","ranking":["a"],"scores":[1e400]}', "scores[0] must be a finite number"),
    ('{"query_id":"q","ranking":["a"],"scores":[true]}', "scores[0] must be a finite number"),
    ('{"query_id":"q","ranking":["a"],"scores":["1"]}', "scores[0] must be a finite number"),
    ('{"query_id":"q","ranking":["a"],"system":3}', "system must be a non-empty string"),
    ('{"query_id":"q","ranking":["a"],"system":""}', "system must be a non-empty string"),
    ('{"query_id":"q","ranking":["a"]} {"query_id":"r","ranking":["a"]}', "invalid JSON, Extra data at column 34"),
    ('{"query_id":"q1","ranking":["x"]}', "duplicate entry for query q1, already on line 1"),
]


@pytest.mark.parametrize("line,detail", REFUSED_RUNS)
def test_run_refusals_name_the_real_line(line, detail):
    content = '{"query_id":"q1","ranking":["d1"]}\n\n' + line + "\n"
    assert refused(parse_run, content) == f"run:3: {detail}"
    assert refused(parse_run, content.encode("utf-8")) == f"run:3: {detail}"


def test_run_duplicate_rule_is_per_system():
    text = (
        '{"query_id":"q1","ranking":["a"],"system":"bm25"}\n'
        '{"query_id":"q1","ranking":["b"],"system":"vector"}\n'
        '{"query_id":"q1","ranking":["c"]}\n'
    )
    run = parse_run(text)
    assert run.system.tolist() == ["bm25", "vector", "run"]
    dup = text + '{"query_id":"q1","ranking":["d"],"system":"vector"}\n'
    assert refused(parse_run, dup) == "run:4: duplicate entry for query q1 of system vector, already on line 2"


def test_run_system_argument_names_every_line():
    text = '{"query_id":"q1","ranking":["a"]}\n{"query_id":"q2","ranking":["b"],"system":"x"}\n'
    assert parse_run(text, system="hybrid").system.tolist() == ["hybrid", "hybrid"]
    assert parse_run(text).system.tolist() == ["run", "x"]
    clash = '{"query_id":"q1","ranking":["a"],"system":"x"}\n{"query_id":"q1","ranking":["b"],"system":"y"}\n'
    assert refused(parse_run, clash, system="z") == "run:2: duplicate entry for query q1 of system z, already on line 1"


def test_run_empty_ranking_is_listed():
    run = parse_run('{"query_id":"q1","ranking":[]}\n{"query_id":"q2","ranking":["a"]}\n')
    assert run.query_id.tolist() == ["q2"]
    assert run.attrs["empty_rankings"] == [("run", "q1")]


def test_read_run_labels_messages_with_the_path(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"query_id":"q","ranking":["a"]}\n{"query_id":"q","ranking":"a"}\n', encoding="utf-8")
    assert refused(read_run, path) == f"{path}:2: ranking must be a list"


_ids = st.text(alphabet="ab\"\\ é\u2028", min_size=1, max_size=3)
_line = st.fixed_dictionaries(
    {"ranking": st.lists(_ids, max_size=4)},
    optional={"system": st.sampled_from(["bm25", "vector"]), "scores": st.just(True)},
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_line, max_size=6), st.booleans())
def test_property_fast_path_and_careful_pass_return_the_same_frame(lines, pad):
    objs = []
    for i, line in enumerate(lines):
        obj = {"query_id": f"q{i}", "ranking": line["ranking"]}
        if "scores" in line:
            obj["scores"] = [float(len(line["ranking"]) - j) / 3 for j in range(len(line["ranking"]))]
        if "system" in line:
            obj["system"] = line["system"]
        objs.append(obj)
    text = "".join(json.dumps(o, ensure_ascii=pad) + ("\n\n" if pad else "\n") for o in objs)
    careful = F._run_python(F._json_lines(text, "run"), "run", None)
    fast = F._parse_run_fast(text.encode("utf-8"), None)
    if objs:
        assert fast is not None
        pd.testing.assert_frame_equal(fast, careful)
    pd.testing.assert_frame_equal(parse_run(text), careful)
    assert parse_run(text).attrs == careful.attrs


# Issue 19, rule 9: one rule per format on every path. Each hostile line is read alone (the
# fast arrow path takes it when it can) and after a comment line (the careful pass): the two
# outcomes must agree, refusals with the same message one line further down.
_DEEP = "[" * 100_000 + "]" * 100_000
_HOSTILE = {
    "deep unknown field": ',"x":' + _DEEP,
    "101 deep unknown field": ',"x":' + "[" * 100 + "]" * 100,
    "100 deep (allowed)": ',"x":' + "[" * 99 + "]" * 99,
    "NaN in unknown field": ',"x":NaN',
    "Infinity in unknown field": ',"x":-Infinity',
    "duplicate unknown key": ',"x":1,"x":2',
    "duplicate key inside unknown object": ',"x":{"a":1,"a":2}',
    "brackets inside a string": ',"x":"' + "[{" * 200 + '"',
}
_BASES = {
    "run": ('{"query_id":"q1","ranking":["d1","d2"],"scores":[2.0,1.0]', parse_run, read_run),
    "judgments": ('{"query_id":"q1","doc_uri":"d1","relevance":1', parse_judgments, read_judgments),
    "queries": ('{"query_id":"q1","query":"text"', parse_queries, read_queries),
}


def _outcome(fn, content, shift=0):
    try:
        df = fn(content)
    except FormatError as err:
        return ("refused", err.line - shift if err.line else None, err.detail)
    return ("accepted", len(df))


@pytest.mark.parametrize("fmt", sorted(_BASES))
@pytest.mark.parametrize("case", sorted(_HOSTILE))
def test_rule9_fast_path_and_careful_pass_refuse_the_same_lines(fmt, case, tmp_path):
    base, parse, read = _BASES[fmt]
    line = base + _HOSTILE[case] + "}"
    alone = line + "\n"
    careful = "// a comment sends the file to the careful pass\n" + alone
    first = _outcome(parse, alone)
    assert _outcome(parse, careful, shift=1) == first
    if fmt == "run":
        assert _outcome(parse, alone.encode("utf-8")) == first
    path = tmp_path / "in.jsonl"
    path.write_text(alone, encoding="utf-8")
    assert _outcome(read, path) == first
    accepted = case in ("100 deep (allowed)", "brackets inside a string")
    assert first[0] == ("accepted" if accepted else "refused"), first
    if "deep unknown" in case:
        assert first[2] == "invalid JSON, nested more than 100 deep"
    elif "NaN" in case or "Infinity" in case:
        assert first[2].endswith("is not a JSON number")
    elif "duplicate" in case:
        assert first[2] == 'invalid JSON, duplicate key "x"' or first[2] == 'invalid JSON, duplicate key "a"'


@pytest.mark.parametrize("fmt", sorted(_BASES))
def test_rule9_duplicate_known_key_is_refused_naming_line_and_key(fmt):
    base, parse, _ = _BASES[fmt]
    line = base + ',"query_id":"q2"}'
    for content in (line + "\n", "\n// c\n" + line + "\n"):
        msg = refused(parse, content)
        assert msg == f"{fmt}:{content.count(chr(10))}: invalid JSON, duplicate key \"query_id\""


_extra = st.sampled_from(sorted(_HOSTILE.values()) + [',"y":1', ',"y":[1,[2]]', ""])


@settings(max_examples=40, deadline=None)
@given(st.lists(_extra, min_size=1, max_size=4), st.sampled_from(sorted(_BASES)))
def test_rule9_property_a_file_is_read_the_same_way_on_every_path(extras, fmt):
    base, parse, _ = _BASES[fmt]
    lines = [base.replace('"q1"', f'"q{i}"') + extra + "}" for i, extra in enumerate(extras)]
    text = "\n".join(lines) + "\n"
    assert _outcome(parse, "// c\n" + text, shift=1) == _outcome(parse, text)


def test_write_run_round_trips_with_scores_and_systems(tmp_path):
    text = (
        '{"query_id":"q1","ranking":["a","b"],"scores":[0.5,0.25]}\n'
        '{"query_id":"q2","ranking":["c"],"system":"bm25"}\n'
        '{"query_id":"q1","ranking":["c","a"],"system":"bm25"}\n'
    )
    assert write_run(parse_run(text)) == (
        '{"query_id":"q1","ranking":["a","b"],"scores":[0.5,0.25]}\n'
        '{"query_id":"q2","ranking":["c"],"system":"bm25"}\n'
        '{"query_id":"q1","ranking":["c","a"],"system":"bm25"}\n'
    )
    path = tmp_path / "out.jsonl"
    out = write_run(parse_run(text), path)
    assert path.read_text(encoding="utf-8") == out
    pd.testing.assert_frame_equal(read_run(path), parse_run(text))
    # rows out of rank order are written in rank order
    shuffled = parse_run(text).iloc[::-1].reset_index(drop=True)
    assert write_run(shuffled).splitlines()[0].startswith('{"query_id":"q1","ranking":["c","a"]')


# ---------------------------------------------------------------------------------------------
# TREC runs
# ---------------------------------------------------------------------------------------------


def test_trec_run_is_ordered_by_the_rank_column_and_renumbered():
    text = "q1 Q0 d1 3 0.1 bm25\nq1 Q0 d2 1 0.2 bm25\nq2 Q0 d9 0 5 bm25\nq1 Q0 d3 2 0.9 bm25\n"
    run = from_trec_run(text)
    assert_dtypes(run, RUN_COLUMNS)
    assert run.query_id.tolist() == ["q1", "q1", "q1", "q2"]
    assert run.doc_id.tolist() == ["d2", "d3", "d1", "d9"]
    assert run["rank"].tolist() == [1, 2, 3, 1]
    assert run.score.tolist() == [0.2, 0.9, 0.1, 5.0]
    assert run.system.tolist() == ["bm25"] * 4


def test_trec_run_order_score_breaks_ties_by_doc_id_descending():
    # trec_eval's order: score descending, then doc id descending; the rank column is ignored
    text = "q1 Q0 a 1 0.5 r\nq1 Q0 c 2 0.5 r\nq1 Q0 b 3 0.9 r\nq1 Q0 b2 4 0.5 r\nq2 Q0 x 1 1 r\n"
    run = from_trec_run(text, order="score")
    assert run[run.query_id == "q1"].doc_id.tolist() == ["b", "c", "b2", "a"]
    assert run["rank"].tolist() == [1, 2, 3, 4, 1]
    assert from_trec_run(text).doc_id.tolist() == ["a", "c", "b", "b2", "x"]
    with pytest.raises(ValueError):
        from_trec_run(text, order="bogus")


def test_trec_run_system_from_run_name_unless_given():
    text = "q1 Q0 a 1 2 bm25\nq1 Q0 b 1 3 dense\n"
    assert from_trec_run(text).system.tolist() == ["bm25", "dense"]
    assert from_trec_run(text, system="mine").system.tolist() == ["mine", "mine"]


def test_trec_run_tolerates_tabs_repeated_spaces_crlf_blank_lines_and_comments():
    text = "# header\nq1\tQ0  d1 1 0.5 r\r\n\nq1 Q0 d2 2 0.25 r\n"
    run = from_trec_run(text)
    assert run.doc_id.tolist() == ["d1", "d2"]
    assert run.score.tolist() == [0.5, 0.25]


@pytest.mark.parametrize(
    "line,detail",
    [
        ("q1 Q0 d2 2", "expected 6 fields, got 4"),
        ("q1 Q0 d2 2 0.5", "expected 6 fields, got 5"),  # more than six: ignored (trec_eval)
        ("q1 Q0 d2 two 0.5 r", "rank must be an integer, got 'two'"),
        ("q1 Q0 d2 1.0 0.5 r", "rank must be an integer, got '1.0'"),
        ("q1 Q0 d2 99999999999999999999 0.5 r", "rank 99999999999999999999 is too large"),
        ("q1 Q0 d2 2 high r", "score must be a finite number, got 'high'"),
        ("q1 Q0 d2 2 nan r", "score must be a finite number, got 'nan'"),
        ("q1 Q0 d2 2 -inf r", "score must be a finite number, got '-inf'"),
    ],
)
def test_trec_run_refusals_name_the_real_line(line, detail, tmp_path):
    text = "q1 Q0 d1 1 1.0 r\n\n" + line + "\n"
    assert refused(from_trec_run, text) == f"run:3: {detail}"
    path = tmp_path / "r.trec"
    path.write_text(text, encoding="utf-8")
    assert refused(read_trec_run, path) == f"{path}:3: {detail}"


def test_to_trec_run_real_scores_synthetic_scores_and_run_name():
    scored = parse_run('{"query_id":"q1","ranking":["a","b"],"scores":[0.5,1e-05]}\n')
    assert to_trec_run(scored) == "q1 Q0 a 1 0.5 retrieval-eval\nq1 Q0 b 2 0.00001 retrieval-eval\n"
    plain = parse_run('{"query_id":"q1","ranking":["a","b","c"],"system":"bm25"}\n{"query_id":"q2","ranking":["d"]}\n')
    assert to_trec_run(plain, run_name="mine") == (
        "q1 Q0 a 1 3 bm25\nq1 Q0 b 2 2 bm25\nq1 Q0 c 3 1 bm25\nq2 Q0 d 1 1 mine\n"
    )
    # the synthetic score keeps the run's order under trec_eval's re-sort
    back = from_trec_run(to_trec_run(plain), order="score")
    assert back.doc_id.tolist() == ["a", "b", "c", "d"]
    assert to_trec_run(F.empty_run()) == ""
    with pytest.raises(ValueError, match="whitespace"):
        to_trec_run(as_run([{"query_id": "q 1", "ranking": ["a"]}]))


def test_trec_round_trip_keeps_scores():
    run = parse_run('{"query_id":"q1","ranking":["a","b"],"scores":[0.75,0.5],"system":"s"}\n')
    pd.testing.assert_frame_equal(from_trec_run(to_trec_run(run)), run)


# ---------------------------------------------------------------------------------------------
# Qrels
# ---------------------------------------------------------------------------------------------


def test_qrels_options_and_line_numbers():
    text = "# comment\n\nq1 0 c1:aa 2\nq1 0 c1:bb -3\n"
    df = from_qrels(text, as_chunk_ids=True, corpus_fingerprint="fp", labeled_by="human:trec")
    assert_dtypes(df, JUDGMENT_COLUMNS)
    assert df.chunk_id.tolist() == ["c1:aa", "c1:bb"] == df.doc_uri.tolist()
    assert df.relevance.tolist() == [2, 0]
    assert df.line.tolist() == [3, 4]
    assert df.corpus_fingerprint.tolist() == ["fp", "fp"] and df.labeled_by.tolist() == ["human:trec"] * 2
    assert df["query"].isna().all() and df.extra.isna().all()
    fast = from_qrels("q1 0 a 1\nq2 0 b 0\n")
    assert fast.line.tolist() == [1, 2] and fast.chunk_id.isna().all()


def test_qrels_fast_and_careful_paths_agree():
    fast = from_qrels("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n")
    careful = from_qrels("# c\nquery-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n")
    careful["line"] -= 1
    pd.testing.assert_frame_equal(fast, careful)


@pytest.mark.parametrize(
    "line,detail",
    [
        ("q1 0 d1 1 9", "expected 3 or 4 fields, got 5"),
        ("q1 d1", "expected 3 or 4 fields, got 2"),
        ("q1 0 d1 high", "relevance must be an integer, got 'high'"),
        ("q1 0 d1 1.5", "relevance must be an integer, got '1.5'"),
    ],
)
def test_qrels_refusals_name_the_real_line(line, detail):
    assert refused(from_qrels, "q1 0 d0 1\n# c\n" + line + "\n") == f"qrels:3: {detail}"


def test_qrels_first_line_with_a_bad_grade_is_not_taken_for_a_header():
    assert refused(from_qrels, "q1 d1 1.5\nq1 d2 1\n") == "qrels:1: relevance must be an integer, got '1.5'"
    assert from_qrels("query_id doc_id relevance\nq1 d2 1\n").doc_uri.tolist() == ["d2"]


def test_to_qrels_key_is_chunk_id_else_doc_uri():
    df = as_judgments(
        [
            {"query_id": "q1", "doc_uri": "d1", "chunk_id": "c1:x", "relevance": 2},
            {"query_id": "q1", "doc_uri": "d2", "relevance": 0},
        ]
    )
    assert to_qrels(df) == "q1 0 c1:x 2\nq1 0 d2 0\n"
    assert to_qrels([]) == ""


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
        ('{"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": true}]}', "corpus: chunks[0] ordinal must be an integer"),
        ('{"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": 1.5}]}', "corpus: chunks[0] ordinal must be an integer"),
        ('{"chunks": [{"chunk_id": "a", "doc_uri": "d", "text": 5}]}', "corpus: chunks[0] text must be a string"),
        ('{"corpus_fingerprint": 5, "chunks": []}', "corpus: corpus_fingerprint must be a string"),
        ('{\n  "chunks": [\n  }', "corpus:3: invalid JSON, Expecting value at column 3"),
    ],
)
def test_corpus_refusals(doc, message):
    assert refused(parse_corpus, doc) == message


def test_corpus_without_fingerprints_and_write_round_trip(tmp_path):
    df = parse_corpus('{"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": 2}, {"chunk_id": "b", "doc_uri": "d"}]}')
    assert df.attrs == {"corpus_fingerprint": None, "chunker_fingerprint": None}
    assert df.ordinal.tolist() == [2, pd.NA]
    path = tmp_path / "c.json"
    text = write_corpus(df, path)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text)
    assert json.loads(text) == {"chunks": [{"chunk_id": "a", "doc_uri": "d", "ordinal": 2}, {"chunk_id": "b", "doc_uri": "d"}]}
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
    fast = F._parse_run_fast(content, None)
    try:
        careful = F._run_python(F._json_lines(content.decode("utf-8"), "run"), "run", None)
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
    optional={name: _text for name in F._OPTIONAL_JUDGMENT_STR},
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_judgment, st.dictionaries(_text.filter(lambda k: k not in F.JUDGMENT_FIELDS), _json_value, max_size=3)),
        max_size=4,
    )
)
def test_property_canonical_bytes_are_a_fixed_point(items):
    dicts = [{**extra, **known} for known, extra in items]
    text = serialize_judgments(dicts)
    assert text == serialize_judgments(parse_judgments(text))
    again = parse_judgments(text)
    assert [json.loads(line) for line in text.split("\n")[:-1]] == [
        {**{k: d[k] for k in F.JUDGMENT_FIELDS if k in d}, **{k: d[k] for k in d if k not in F.JUDGMENT_FIELDS}}
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
    wide = pd.DataFrame([{"query_id": "q1", "ranking": ["a", "b"], "scores": [2, 1]}, {"query_id": "q2", "ranking": ["c"]}])
    run = as_run(wide)
    assert run.doc_id.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(run.score.to_numpy(), [2.0, 1.0, np.nan])
    bad = pd.DataFrame([{"query_id": "q1", "ranking": ["a"]}, {"query_id": "q1", "ranking": ["b"]}])
    assert refused(as_run, bad) == "run:2: duplicate entry for query q1, already on line 1"
    with pytest.raises(ValueError):
        as_run(wide, system="")


# ---------------------------------------------------------------------------------------------
# Fast file paths: the same frame or the same message as the careful pass
# ---------------------------------------------------------------------------------------------


def _same_outcome(read, parse, path, text, **kwargs):
    """``read(path)`` returns what ``parse(text)`` returns, or raises its message (label aside)."""
    try:
        expected = parse(text, **kwargs)
    except FormatError as err:
        message = str(err)
        assert refused(read, path, **kwargs) == str(path) + message[message.index(":") :]
        return None
    got = read(path, **kwargs)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got.attrs == expected.attrs
    return got


TREC_FILES = [
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\nq2 Q0 d1 1 3 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r",  # no final newline
    "q1 Q0 d1 1 0.5 r\r\nq1 Q0 d2 2 0.25 r\r\n",  # CRLF
    "q1 Q0 d1 1 0.5 r\rq1 Q0 d2 2 0.25 r\n",  # a lone CR splits fields, not lines
    "q1 Q0 d1 1 0.5 r\nq1\tQ0 d2 2 0.25 r\n",  # a tab
    "q1 Q0 d1 1 0.5 r\nq1  d2 2 0.25 r\n",  # an empty Q0 field: 5 fields
    "q1 Q0 d1 1 0.5 r\n q1 Q0 d2 2 0.25\n",  # a leading space: 5 fields
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 \n",  # a trailing space: 5 fields
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n\nq2 Q0 d1 1 1 r\n",  # a blank line
    "q1 Q0 d1 1 0.5 r\n# a comment line\nq2 Q0 d1 1 1 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 nan r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 x 0.25 r\n",
    "q1 Q0 d1 2 0.5 r\nq1 Q0 d2 1 0.25 r\nq1 Q0 d3 1 0.2 r\n",  # ranks out of order, a tie
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 1 0.25 r\nq1 Q0 d3 2 0.2 r\n",  # a query comes back
    "q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 b\nq1 Q0 d3 3 0.2 a\n",  # two systems, interleaved
    "q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 a\nq1 Q0 d3 1 0.2 b\n",  # two systems, grouped
    "q1 Q0 d\u00e9 1 0.5 r\n",  # not ASCII
    "\ufeffq1 Q0 d1 1 0.5 r\n",  # a BOM
    "q1 Q0 d1 1 0.5 r\n\n",
    "q1 X d1 +1 -0.5 r\nq1 Q0 d2 002 1e-3 r\n",
    "q1 Q0 d1 1 0.5 r\n# x y 1 2 z\n",  # a comment line of six fields
    "q1 Q0 d1 1 0.5 r\n#q1 Q0 d2 2 0.25 r\n",
    "q1 Q0 d1 3000000000 0.5 r\nq1 Q0 d2 3000000001 0.25 r\n",  # ranks past 2**31
    "q1 Q0 d1 1 1e400 r\n",  # a score that overflows a double
    "q1 Q0 d1 1 0.5 r\nq2 Q0 d2 1 0.25 s\nq2 Q0 d3 2 0.2 s\n",
    # the Q0 and run_name columns are first read as the first line's two values (booleans)
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 Q0\n",  # a run named like the first Q0 field
    "q1 Q0 d1 1 0.5 r\nq1 r d2 2 0.25 r\n",  # a Q0 field like the run name
    "q1 r d1 1 0.5 r\nq1 r d2 2 0.25 r\n",
    "q1 r d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 true\n",  # arrow's default true value is no run name
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 R\n",
    "q1 Q0 d1 1 0.5 r\nq1 q0 d2 2 0.25 r\n",
    "q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r x\n",
    "q1 Q0 d1 1 0.5 r\r\nq1 Q0 d2 2 0.25 s\r\n",
    "q1\tQ0\td1\t1\t0.5\tr\nq1\tQ0\td2\t2\t0.25\ts\n",
    "q1 Q0 d1 1 0.5 r\u00e9\nq1 Q0 d2 2 0.25 r\u00e9\n",
    "\n",
    "",
]


def _careful(parse):
    """``parse`` with arrow's read turned off: the careful pass alone."""

    def careful(text, **kwargs):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(F, "_arrow_table", lambda *args, **kw: None)
            return parse(text, **kwargs)

    return careful


def _same_as_careful(parse, careful, text, **kwargs):
    """``parse(text)`` returns what ``careful(text)`` returns, or raises its message."""
    try:
        expected = careful(text, **kwargs)
    except FormatError as err:
        assert refused(parse, text, **kwargs) == str(err)
        return
    got = parse(text, **kwargs)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got.attrs == expected.attrs


@pytest.mark.parametrize("together", [False, True])
@pytest.mark.parametrize("order", ["rank", "score"])
@pytest.mark.parametrize("system", [None, "mine"])
@pytest.mark.parametrize("case", range(len(TREC_FILES)))
def test_read_trec_run_fast_path_matches_the_careful_pass(case, system, order, together, tmp_path, monkeypatch):
    if together:  # what a large file takes: two things at once
        monkeypatch.setattr(F, "_TOGETHER_ROWS", 1)
    text = TREC_FILES[case]
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode("utf-8"))
    _same_outcome(read_trec_run, _careful(from_trec_run), path, text, system=system, order=order)
    _same_as_careful(from_trec_run, _careful(from_trec_run), text, system=system, order=order)


@pytest.mark.parametrize(
    ("text", "system", "reads"),
    [
        ("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n", None, ["bool"]),
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 b\n", None, ["bool", "dictionary"]),  # a second name
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 b\n", "mine", ["bool", "dictionary"]),
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 Q0\n", "mine", ["bool"]),  # a false, but names not needed
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25 Q0\n", None, ["bool", "dictionary"]),  # reads as false
        ("q1 Q0 d1 1 0.5 a\nq1 X d2 2 0.25 a\n", None, ["bool", "dictionary"]),  # refused by arrow
        ("q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 0.25\n", None, ["bool", "dictionary"]),  # refused twice
        ("q1 Q0 d1 1 0.5\nq1 Q0 d2 2 0.25 a\n", None, ["dictionary"]),  # no guess from line 1
    ],
)
def test_trec_run_reads_q0_and_run_name_as_bits_then_as_codes(text, system, reads, tmp_path, monkeypatch):
    got = []
    real = F._csv_table

    def spy(source, names, types, *args, **kwargs):
        got.append("bool" if pa.types.is_boolean(types["m"]) else "dictionary")
        return real(source, names, types, *args, **kwargs)

    monkeypatch.setattr(F, "_csv_table", spy)
    path = tmp_path / "run.trec"
    path.write_text(text)
    try:
        read_trec_run(path, system=system)
    except FormatError:  # the file read, then the careful pass, which tries arrow on the bytes
        assert got == reads + reads
    else:
        assert got == reads
    got.clear()
    try:
        from_trec_run(text, system=system)
    except FormatError:
        pass
    assert got == reads


def _trec_lines(n_queries, seed, systems=("bench",)):
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(n_queries):
        for system in systems:
            for r in range(1, int(rng.integers(1, 40)) + 1):
                lines.append(f"q{q} Q0 d{int(rng.integers(0, 10**6))} {r} {rng.random():.4f} {system}\n")
    return lines


@pytest.mark.parametrize(
    "variant", ["grouped", "two systems", "a query comes back", "ranks out of order", "crlf", "a tab", "a comment"]
)
def test_read_trec_run_in_many_chunks_matches_the_careful_pass(variant, monkeypatch, tmp_path):
    # small arrow blocks and scan blocks: chunk boundaries inside queries, lines cut across scan blocks
    monkeypatch.setattr(F, "_CSV_BLOCK", 1 << 10)
    monkeypatch.setattr(F, "_SCAN_BLOCK", 7)
    monkeypatch.setattr(F, "_TOGETHER_ROWS", 1)  # the two-thread read of a large file
    lines = _trec_lines(120, 3, systems=("a", "b") if variant == "two systems" else ("bench",))
    if variant == "a query comes back":
        lines.append(lines[0])
    elif variant == "ranks out of order":
        lines[5], lines[6] = lines[6], lines[5]
    elif variant == "crlf":
        lines = [line.replace("\n", "\r\n") for line in lines]
    elif variant == "a tab":
        lines[-3] = lines[-3].replace(" ", "\t", 1)
    elif variant == "a comment":
        lines.insert(50, "# a b c d e\n")
    text = "".join(lines)
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode("utf-8"))
    for order in ("rank", "score"):
        _same_outcome(read_trec_run, _careful(from_trec_run), path, text, order=order)
    if variant in ("grouped", "two systems", "crlf"):
        assert F._trec_run_file(path, "rank", None) is not None  # the fast path did read it


def test_read_trec_run_big_file_keeps_file_order_and_numbers_ranks(tmp_path):
    rng = np.random.default_rng(7)
    lines = []
    for q in range(300):
        for r in range(1, int(rng.integers(1, 40)) + 1):
            lines.append(f"q{q} Q0 d{int(rng.integers(0, 10**6))} {r} {rng.random():.4f} bench\n")
    text = "".join(lines)
    path = tmp_path / "run.trec"
    path.write_text(text, encoding="utf-8")
    got = _same_outcome(read_trec_run, from_trec_run, path, text)
    assert_dtypes(got, RUN_COLUMNS)
    assert got.system.unique().tolist() == ["bench"]
    assert F._trec_run_file(path, "rank", None) is not None  # the fast path did read it


QRELS_FILES = [
    "q1 0 d1 1\nq1 0 d2 0\n",
    "q1 d1 1\nq1 d2 2\n",
    "query-id corpus-id score\nq1 d1 1\nq2 d2 0\n",
    "query-id corpus-id score\n",
    "query-id corpus-id score\nq1 0 d1 1\n",
    "q1 0 d1 1\nq1  d2 1\n",  # an empty iteration field: the careful pass sees q1 d2 1
    "q1 0 d1 1\n# c x y\n",  # a comment line of four fields
    "# c\nq1 0 d1 1\n",
    "# a b\nq1 d1 1\n",  # a comment line that looks like a header
    "q1 0 d1 1\n\nq1 0 d2 1\n",
    " q1 0 d1 1\n",
    "q1 0 d1 1 \n",
    "q1 0 d1 -2\nq1 0 d2 +1\nq1 0 d3 007\n",
    "q1 0 d1 99999999999999999999\n",
    "q1 0 d1 1\r\nq1 0 d2 0\r\n",
    "q1 0 d1 1\rq1 0 d2 0\n",
    "q1\t0\td1\t1\n",
    "q1 0 d\u00e9 1\n",
    "\ufeffq1 0 d1 1\n",
    "q1 0 d1 1",
    "q1 0 d1 1\nq1 d2 1\n",
    "q1 0 d1 1.5\n",
    "\n",
    "",
]


@pytest.mark.parametrize("options", [{}, {"as_chunk_ids": True, "corpus_fingerprint": "fp", "labeled_by": "me"}])
@pytest.mark.parametrize("case", range(len(QRELS_FILES)))
def test_read_qrels_fast_path_matches_the_careful_pass(case, options, tmp_path):
    text = QRELS_FILES[case]
    path = tmp_path / "qrels.txt"
    path.write_bytes(text.encode("utf-8"))
    _same_outcome(read_qrels, _careful(from_qrels), path, text, **options)
    _same_as_careful(from_qrels, _careful(from_qrels), text, **options)


def test_read_qrels_in_many_chunks_matches_the_careful_pass(monkeypatch, tmp_path):
    monkeypatch.setattr(F, "_CSV_BLOCK", 1 << 10)
    monkeypatch.setattr(F, "_SCAN_BLOCK", 5)
    text = "".join(f"q{i // 7} 0 d{i} {i % 4 - 1}\r\n" for i in range(3000))
    path = tmp_path / "qrels.txt"
    path.write_bytes(text.encode("utf-8"))
    assert F._qrels_file(path) is not None  # the fast path did read it
    _same_outcome(read_qrels, _careful(from_qrels), path, text)


JUDGMENT_FILES = [
    J + "\n" + '{"query_id":"q1","doc_uri":"d2","relevance":0,"chunk_id":"c","stratum":null}\n',
    J,
    J + "\r\n" + J + "\r\n",
    '{"query_id":"q1","doc_uri":"d1","relevance":1,"labeled_by":"human:a","notes":"x\\u00e9\\ud83d\\ude00"}\n',
    J + "\n\n" + J + "\n",  # a blank line shifts line numbers
    J + "\n// a comment\n" + J + "\n",
    J + "\n  " + J + "\n",  # indented
    J + " " + J + "\n",  # two objects on one line
    J + " " + J + "\n\n",
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":1,"zz":1.50}\n',  # an unknown field
    '{"query_id":"q1","doc_uri":"d1","relevance":1,"zz":[1]}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":-1}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":1.0}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":"1"}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1"}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"","relevance":1}\n',
    J + "\n" + '{"query_id":null,"doc_uri":"d","relevance":1}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":1,"query":5}\n',
    J + "\n" + '{"query_id":"q1","query_id":"q2","doc_uri":"d1","relevance":1}\n',
    J + "\n" + '{"query_id":"\\ud800","doc_uri":"d1","relevance":1}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":99999999999999999999}\n',
    J + "\n" + '{"query_id":"q1","doc_uri":"d1","relevance":NaN}\n',
    J + "\n" + "[1]\n",
    "\ufeff" + J + "\n",
    '{"query_id":"q\u00e9","doc_uri":"d1","relevance":2}\n',
    "",
    "\n",
]


@pytest.mark.parametrize("case", range(len(JUDGMENT_FILES)))
def test_read_judgments_fast_path_matches_the_careful_pass(case, tmp_path):
    text = JUDGMENT_FILES[case]
    path = tmp_path / "j.jsonl"
    path.write_bytes(text.encode("utf-8"))
    expected = None
    try:
        expected = F._judgments_python(F._strip_bom(text), "judgments")
    except FormatError as err:
        message = str(err)
        assert refused(read_judgments, path) == str(path) + message[message.index(":") :]
        assert refused(parse_judgments, text) == message
    if expected is not None:
        for got in (read_judgments(path), parse_judgments(text)):
            pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_read_judgments_fast_path_reads_plain_files():
    text = "".join(f'{{"query_id":"q{i % 7}","doc_uri":"d{i}","relevance":{i % 4}}}\n' for i in range(500))
    assert F._judgments_fast(text.encode()) is not None
    pd.testing.assert_frame_equal(parse_judgments(text), F._judgments_python(text, "judgments"), check_exact=True)
    mixed = text + '{"query_id":"q","doc_uri":"d","relevance":1,"stratum":"s"}\n'  # a field the first line lacks
    df = F._judgments_fast(mixed.encode())
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
        m.setattr(F, "_contract_frame", lambda df, columns: False)
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
    out["empty"] = F.empty_judgments()
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
    out = {"reader": base, "trec": from_trec_run("q1 Q0 a 1 2 x\nq1 Q0 b 2 1 y\n"), "empty": F.empty_run()}
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
        return F._run_python(F._json_lines(content, "run"), "run", system)

    _same_outcome(read_run, careful, path, text, system=system)
    _same_outcome(read_run, parse_run, path, text, system=system)


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
    assert F._object_lines(blocks) == _object_lines_reference(data)


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
    monkeypatch.setattr(F, "_JSON_BLOCK", 1 << 12)
    monkeypatch.setattr(F, "_SCAN_BLOCK", 11)
    judgments, run = _judgment_lines(2000), _run_lines(600)
    if long_line:
        judgments += json.dumps({"query_id": "q", "doc_uri": "d" * 10_000, "relevance": 1}) + "\n"
        run += json.dumps({"query_id": "long", "ranking": [f"d{j}" for j in range(2000)]}) + "\n"
    (tmp_path / "j.jsonl").write_text(judgments, encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(run, encoding="utf-8")
    table = F._judgments_file(tmp_path / "j.jsonl")[0]  # the fast path reads it
    assert (table.column("query_id").num_chunks == 1) == long_line
    got = read_judgments(tmp_path / "j.jsonl")
    pd.testing.assert_frame_equal(got, F._judgments_python(judgments, "judgments"), check_exact=True)
    got = read_run(tmp_path / "r.jsonl")
    pd.testing.assert_frame_equal(got, F._run_python(F._json_lines(run, "run"), "run", None), check_exact=True)
    assert F._run_file_columns(tmp_path / "r.jsonl") is not None  # the fast path did read it


def _buffer_bytes(column: pd.Series) -> int:
    """The bytes of the distinct arrow buffers behind a "string" column."""
    arr = pa.array(column.array)
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    return sum({b.address: b.size for c in chunks for b in c.buffers() if b is not None}.values())


@pytest.mark.skipif(F._STRING.storage != "pyarrow", reason="arrow-backed strings only")
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
@pytest.mark.parametrize("n", [0, 1, F._REPEAT_BLOCK - 1, F._REPEAT_BLOCK, 2 * F._REPEAT_BLOCK + 3])
def test_constant_and_na_columns_hold_n_rows(n, value):
    const, na = pd.Series(F._constant_strings(value, n)), pd.Series(F._na_strings(n))
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
        _same_outcome(read_trec_run, from_trec_run, path, text)


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
            return F._judgments_python(content, "judgments")

        _same_outcome(read_judgments, careful, path, text)


@pytest.mark.parametrize(
    ("first", "n"),
    [([0], 1), ([0], 5), ([0, 2, 4], 6), ([0, 2, 4], 7), ([0, 3, 4], 6), ([0, 1, 2], 3), ([0, 2, 4], 5), ([], 0)],
)
def test_block_rank_counts_rows_from_each_block_start(first, n):
    # equal blocks take a shortcut; every shape must give 1..size in each block
    expected = np.concatenate([np.arange(1, b - a + 1) for a, b in zip(first, first[1:] + [n])]) if first else []
    got = F._block_rank(np.asarray(first, dtype=np.int64), n)
    assert got.dtype == np.int64 and got.flags.writeable
    assert got.tolist() == list(expected)
