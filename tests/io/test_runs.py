"""Run JSONL (SPEC A2 + B1): one test per rule, and the fast path against the careful pass."""

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
    RUN_COLUMNS,
    as_run,
    parse_judgments,
    parse_queries,
    parse_run,
    read_judgments,
    read_queries,
    read_run,
    write_run,
)
from retrieval_eval.io import jsontext as io_json
from retrieval_eval.io import runs as io_runs

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
    for empty in (parse_run(""), rio.empty_run(), as_run([])):
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
        "// comment forces the careful pass\n"
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


_ids = st.text(alphabet='ab"\\ é\u2028', min_size=1, max_size=3)
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
    careful = io_runs.run_from_lines(io_json.json_lines(text, "run"), "run", None)
    fast = io_runs._parse_run_fast(text.encode("utf-8"), None)
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
        assert msg == f'{fmt}:{content.count(chr(10))}: invalid JSON, duplicate key "query_id"'


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
