"""The judge-score reader: tidy and wide rows, JSONL/CSV/parquet/DataFrame, ragas frames matched
by query text, and one-line errors naming the file and line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from retrieval_eval.errors import FormatError
from retrieval_eval.io.judge_scores import JUDGE_SCORE_COLUMNS, read_judge_scores

JUDGMENTS = [
    {"query_id": "q1", "query": "what is bm25?", "doc_uri": "d1", "relevance": 1},
    {"query_id": "q2", "query": "how do embeddings work", "doc_uri": "d2", "relevance": 2},
]


def _jsonl(tmp_path, rows, name="scores.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_tidy_jsonl_reads_every_column_with_stable_dtypes(tmp_path):
    path = _jsonl(
        tmp_path,
        [
            {"query_id": "q1", "metric": "faithfulness", "value": 0.9, "system": "bm25", "sample": 0, "judge": "gpt"},
            "// a comment",
            {"query_id": "q1", "metric": "faithfulness", "value": 0.7, "system": "bm25", "sample": 1, "judge": "gpt"},
            {"query_id": "q2", "metric": "context_relevance", "value": 1, "system": "bm25", "chunk_id": "c1"},
        ],
    )
    df = read_judge_scores(path)
    assert tuple(df.columns) == JUDGE_SCORE_COLUMNS
    assert df["value"].tolist() == [0.9, 0.7, 1.0] and df["sample"].tolist() == [0, 1, 0]
    assert df["key"].tolist()[2] == "c1" and pd.isna(df["key"].iloc[0])
    assert (
        str(df["query_id"].dtype) == str(pd.StringDtype(na_value=np.nan))
        or df["query_id"].dtype.kind == "O"
        or isinstance(df["query_id"].dtype, pd.StringDtype)
    )
    assert df["sample"].dtype == np.int64 and df["value"].dtype == np.float64


def test_wide_rows_melt_one_metric_per_column_in_file_order(tmp_path):
    frame = pd.DataFrame(
        {"query_id": ["q1", "q2"], "system": ["a", "a"], "faithfulness": [0.5, 0.6], "answer_relevancy": [0.7, 0.8]}
    )
    df = read_judge_scores(frame)
    assert df["metric"].tolist() == ["faithfulness", "answer_relevancy"] * 2
    assert df["value"].tolist() == [0.5, 0.7, 0.6, 0.8]


def test_csv_and_parquet_read_the_same_as_the_frame(tmp_path):
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "metric": "faithfulness", "value": [0.5, 0.25, 1.0]})
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_parquet(tmp_path / "s.parquet")
    want = read_judge_scores(frame)
    for name in ("s.csv", "s.parquet"):
        pd.testing.assert_frame_equal(read_judge_scores(tmp_path / name), want)


def test_repeated_rows_without_sample_are_numbered_in_order():
    df = read_judge_scores([{"query_id": "q1", "metric": "m", "value": v} for v in (0.1, 0.2, 0.3)])
    assert df["sample"].tolist() == [0, 1, 2]


def test_ragas_frame_matched_by_query_text():
    ragas = pd.DataFrame(
        {
            "user_input": ["how do embeddings work", "what is bm25?"],
            "response": ["...", "..."],
            "retrieved_contexts": [["a"], ["b"]],
            "faithfulness": [0.8, 0.4],
            "answer_relevancy": [0.9, 0.3],
        }
    )
    df = read_judge_scores(ragas, judgments=JUDGMENTS)
    assert df["query_id"].tolist() == ["q2", "q2", "q1", "q1"]
    assert set(df["metric"]) == {"faithfulness", "answer_relevancy"}


def test_ragas_row_matching_no_query_is_an_error_naming_it():
    ragas = pd.DataFrame({"question": ["what is bm25?", "unknown question"], "faithfulness": [0.8, 0.4]})
    with pytest.raises(FormatError, match=r"^judge scores:2: question 'unknown question' matches no judged query"):
        read_judge_scores(ragas, judgments=JUDGMENTS)


def test_ragas_frame_without_judgments_is_refused():
    with pytest.raises(FormatError, match="pass the judgments"):
        read_judge_scores(pd.DataFrame({"user_input": ["x"], "faithfulness": [0.8]}))


@pytest.mark.parametrize(
    "row, detail",
    [
        ('{"query_id": "q1", "metric": "m", "value": "high"}', "value must be a number, got 'high'"),
        ('{"query_id": "q1", "metric": "m", "value": true}', "value must be a number, got True"),
        ('{"query_id": "q1", "metric": "m", "value": null}', "value is missing"),
        ('{"query_id": "q1", "metric": "m", "value": NaN}', "invalid JSON"),
        ('{"query_id": "", "metric": "m", "value": 1}', "missing query_id"),
        ('{"query_id": "q1", "metric": "", "value": 1}', "missing metric"),
        ('{"query_id": "q1", "metric": "m", "value": 1, "sample": -1}', "sample must be a non-negative integer"),
        ("[1, 2]", "must be a JSON object"),
        ('{"query_id": "q1", "metric": "m", "value": 1', "invalid JSON"),
    ],
)
def test_bad_jsonl_lines_are_refused_with_file_and_line(tmp_path, row, detail):
    path = _jsonl(tmp_path, [{"query_id": "q0", "metric": "m", "value": 0.5}, "", row])
    with pytest.raises(FormatError) as err:
        read_judge_scores(path)
    assert str(err.value).startswith(f"{path}:3: ") and detail in str(err.value)


def test_nan_cell_in_a_wide_frame_is_refused_with_its_row():
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "faithfulness": [0.5, np.nan]})
    with pytest.raises(FormatError, match=r"^judge scores:2: value is missing"):
        read_judge_scores(frame)


def test_infinite_value_is_refused():
    with pytest.raises(FormatError, match="finite"):
        read_judge_scores(pd.DataFrame({"query_id": ["q1"], "metric": ["m"], "value": [np.inf]}))


def test_csv_errors_name_the_file_line(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("query_id,metric,value\nq1,m,0.5\nq2,m,abc\n")
    with pytest.raises(FormatError, match=r"s\.csv:3: value must be a number, got 'abc'"):
        read_judge_scores(path)
    path.write_text("query_id,metric,value\nq1,m,\n")
    with pytest.raises(FormatError, match=r"s\.csv:2: value is empty"):
        read_judge_scores(path)


def test_value_outside_declared_range_is_an_error():
    rows = [
        {"query_id": "q1", "metric": "faithfulness", "value": 0.5},
        {"query_id": "q2", "metric": "faithfulness", "value": 7},
    ]
    with pytest.raises(FormatError, match=r":2: faithfulness value 7.0 is outside its declared range \[0, 1\]"):
        read_judge_scores(rows, ranges={"faithfulness": (0, 1)})
    assert len(read_judge_scores(rows)) == 2  # no declared range, no check


def test_duplicate_system_query_metric_sample_is_an_error_naming_the_first_line(tmp_path):
    path = _jsonl(
        tmp_path,
        [
            {"query_id": "q1", "metric": "m", "value": 0.5, "sample": 0},
            {"query_id": "q1", "metric": "m", "value": 0.6, "sample": 1},
            {"query_id": "q1", "metric": "m", "value": 0.7, "sample": 0},
        ],
    )
    with pytest.raises(FormatError, match=r":3: duplicate score for query q1, metric m, sample 0, already on line 1"):
        read_judge_scores(path)


def test_same_sample_for_another_system_or_key_is_not_a_duplicate():
    rows = [
        {"query_id": "q1", "metric": "m", "value": 0.5, "sample": 0, "system": s, "chunk_id": c}
        for s in ("a", "b")
        for c in ("c1", "c2")
    ]
    assert len(read_judge_scores(rows)) == 4


def test_a_query_without_judgments_is_a_warning_and_kept():
    rows = [{"query_id": "q1", "metric": "m", "value": 0.5}, {"query_id": "q9", "metric": "m", "value": 0.5}]
    with pytest.warns(UserWarning, match=r"1 scored query has no judgments \(q9\)"):
        df = read_judge_scores(rows, judgments=JUDGMENTS)
    assert df.attrs["unjudged"] == ["q9"] and len(df) == 2


def test_no_score_column_and_empty_input_are_refused(tmp_path):
    with pytest.raises(FormatError, match="no score column"):
        read_judge_scores(pd.DataFrame({"query_id": ["q1"], "response": ["x"]}))
    with pytest.raises(FormatError, match="no judge scores"):
        read_judge_scores(_jsonl(tmp_path, ["// nothing"]))
    with pytest.raises(FormatError, match="missing column value"):
        read_judge_scores([{"query_id": "q1", "metric": "m"}])


def test_input_frame_is_not_mutated():
    frame = pd.DataFrame({"query_id": ["q1"], "faithfulness": [0.5]})
    before = frame.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_judge_scores(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_key_is_chunk_id_else_doc_uri():
    rows = [
        {"query_id": "q1", "metric": "context_relevance", "value": 1, "chunk_id": "c1", "doc_uri": "d1"},
        {"query_id": "q1", "metric": "context_relevance", "value": 0, "doc_uri": "d2"},
    ]
    assert read_judge_scores(rows)["key"].tolist() == ["c1", "d2"]


def test_wide_and_tidy_rows_of_the_same_scores_read_the_same():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=30, deadline=None)
    @given(
        st.lists(
            st.tuples(
                st.sampled_from(["q1", "q2", "q3"]), st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False)
            ),
            min_size=1,
            max_size=12,
        )
    )
    def check(rows):
        wide = pd.DataFrame(rows, columns=["query_id", "faithfulness", "answer_relevancy"])
        tidy = wide.melt(id_vars="query_id", var_name="metric", value_name="value", ignore_index=False)
        tidy = tidy.sort_index(kind="stable").reset_index(drop=True)
        a, b = read_judge_scores(wide), read_judge_scores(tidy)
        pd.testing.assert_frame_equal(a, b)

    check()


def test_a_bad_cell_of_a_wide_csv_names_its_line_and_column(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("query_id,faithfulness,answer_relevancy\nq1,0.5,0.7\nq2,0.4,high\n")
    with pytest.raises(
        FormatError, match=r"wide\.csv:3: value must be a number, got 'high' \(column answer_relevancy\)$"
    ):
        read_judge_scores(path)
