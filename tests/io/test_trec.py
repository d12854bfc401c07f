"""TREC runs and qrels (SPEC A2): one test per rule."""

from __future__ import annotations

import pandas as pd
import pytest
from format_helpers import assert_dtypes, refused

import retrieval_eval.io as rio
from retrieval_eval.io import (
    JUDGMENT_COLUMNS,
    RUN_COLUMNS,
    as_judgments,
    as_run,
    from_qrels,
    from_trec_run,
    parse_run,
    read_trec_run,
    to_qrels,
    to_trec_run,
)

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
    assert to_trec_run(rio.empty_run()) == ""
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
