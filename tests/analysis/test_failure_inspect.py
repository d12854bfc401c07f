"""inspect_query: one query's top k with labels, gains and text (issue 29, item 1).

Oracles: hand-computed gains and ranks on a small case, and pytrec_eval for the query's metrics.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import retrieval_eval as rev
from retrieval_eval.analysis.failure import entry_gains

LABELS = [
    {
        "query_id": "q1",
        "query": "what is x",
        "doc_uri": "d1",
        "relevance": 3,
        "chunk_text": "x is a letter",
        "stratum": "s1",
    },
    {"query_id": "q1", "doc_uri": "d2", "relevance": 0},
    {"query_id": "q1", "doc_uri": "d3", "relevance": 1},
    {"query_id": "q1", "doc_uri": "d9", "relevance": 2},  # retrieved at rank 6, below k = 4
    {"query_id": "q1", "doc_uri": "d8", "relevance": 1},  # never retrieved
    {"query_id": "q2", "doc_uri": "d1", "relevance": 1},
]
RANKING = ["d2", "d5", "d1", "d3", "d7", "d9"]  # d5, d7 unjudged
RUN = [
    {"system": "A", "query_id": "q1", "rank": i + 1, "doc_id": d, "score": 10.0 - i} for i, d in enumerate(RANKING)
] + [{"system": "B", "query_id": "q1", "rank": 1, "doc_id": "d1", "score": 1.0}]


@pytest.fixture(scope="module")
def case():
    return rev.as_judgments(LABELS), rev.as_run(RUN)


def test_ranking_rows_grades_and_holes(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4)
    top = ins.ranking
    assert top["rank"].tolist() == [1, 2, 3, 4]
    assert top["key"].tolist() == ["d2", "d5", "d1", "d3"]
    assert top["score"].tolist() == [10.0, 9.0, 8.0, 7.0]
    assert top["grade"].iloc[[0, 2, 3]].tolist() == [0.0, 3.0, 1.0] and math.isnan(top["grade"].iloc[1])
    assert top["judged"].tolist() == [True, False, True, True]
    assert top["relevant"].tolist() == [False, False, True, True]
    assert str(top["key"].dtype) == "string" and top["grade"].dtype == np.float64


def test_gains_are_the_exponential_and_linear_definitions_by_hand(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4)
    # d1: grade 3 at rank 3 -> gain 2**3 - 1 = 7, discounted 7 / log2(4) = 3.5; d3: 1 / log2(5).
    assert ins.ranking["gain"].tolist() == [0.0, 0.0, 7.0, 1.0]
    assert ins.ranking["discounted_gain"].tolist() == pytest.approx([0.0, 0.0, 3.5, 1 / math.log2(5)])
    lin = rev.inspect_query(j, r, "q1", system="A", k=4, gain="linear")
    assert lin.ranking["gain"].tolist() == [0.0, 0.0, 3.0, 1.0]
    assert lin.ranking["discounted_gain"].tolist() == pytest.approx([0.0, 0.0, 1.5, 1 / math.log2(5)])


def test_the_discounted_gains_sum_to_the_engines_dcg(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4)
    ideal = 7 + 3 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)  # grades 3, 2, 1, 1
    assert ins.ranking["discounted_gain"].sum() / ideal == pytest.approx(ins.metrics["ndcg@4"])


def test_entry_gains_match_the_formula_on_many_entries():
    rng = np.random.default_rng(3)
    grade, rank = rng.integers(0, 5, 200), rng.integers(1, 60, 200)
    gain, disc = entry_gains(grade, rank)
    assert gain == pytest.approx(2.0**grade - 1) and disc == pytest.approx((2.0**grade - 1) / np.log2(rank + 1))


def test_missed_lists_relevant_outside_the_top_k_with_their_rank(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4)
    assert ins.missed["key"].tolist() == ["d9", "d8"]
    assert ins.missed["grade"].tolist() == [2, 1]
    assert ins.missed["rank"].iloc[0] == 6.0 and math.isnan(ins.missed["rank"].iloc[1])


def test_metrics_agree_with_pytrec_eval(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4, gain="linear")
    qrel = {"q1": {x["doc_uri"]: x["relevance"] for x in LABELS if x["query_id"] == "q1"}}
    run = {"q1": {d: 10.0 - i for i, d in enumerate(RANKING)}}
    want = pytrec_eval.RelevanceEvaluator(qrel, {"ndcg_cut.4", "P.4", "recall.4"}).evaluate(run)["q1"]
    assert ins.metrics["ndcg_linear@4"] == pytest.approx(want["ndcg_cut_4"])
    assert ins.metrics["precision@4"] == pytest.approx(want["P_4"])
    assert ins.metrics["recall@4"] == pytest.approx(want["recall_4"])


def test_text_query_and_stratum_come_from_the_labels_or_corpus(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4)
    assert ins.query == "what is x" and ins.stratum == "s1" and ins.expect_none is None
    assert ins.ranking["text"].iloc[2] == "x is a letter" and pd.isna(ins.ranking["text"].iloc[1])


def test_query_file_gives_expect_none_and_calibration_gives_the_cutoff():
    d = rev.load_demo()
    cal = rev.calibrate(d.judgments, d.runs, queries=d.queries)
    ins = rev.inspect_query(
        d.judgments, d.runs, "dm-11", system="bm25", corpus=d.corpus, queries=d.queries, calibration=cal
    )
    top1 = cal.top1[(cal.top1["system"] == "bm25") & (cal.top1["query_id"] == "dm-11")].iloc[0]
    assert ins.top1_score == pytest.approx(top1["top1_score"])
    assert ins.cutoff == pytest.approx(cal.cutoff("bm25")) and ins.above_cutoff is bool(top1["above_cutoff"])
    assert ins.expect_none is False
    assert ins.ranking["text"].notna().all()  # every chunk of the demo is in its corpus


def test_a_query_the_system_did_not_answer_misses_everything(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q2", system="A")
    assert len(ins.ranking) == 0 and ins.missed["key"].tolist() == ["d1"] and math.isnan(ins.missed["rank"].iloc[0])
    assert math.isnan(ins.top1_score)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"query_id": "nope", "system": "A"}, "unknown query 'nope'"),
        ({"query_id": "q1", "system": "Z"}, "unknown system 'Z'"),
        ({"query_id": "q1"}, "pass system="),
        ({"query_id": "q1", "system": "A", "k": 0}, "k must be a positive integer"),
        ({"query_id": "q1", "system": "A", "gain": "cubic"}, "gain must be one of"),
    ],
)
def test_bad_input_is_one_clear_error(case, kwargs, message):
    j, r = case
    with pytest.raises(ValueError, match=message):
        rev.inspect_query(j, r, **kwargs)


def test_inputs_are_not_mutated(case):
    j, r = case
    j0, r0 = j.copy(), r.copy()
    rev.inspect_query(j, r, "q1", system="A")
    pd.testing.assert_frame_equal(j, j0)
    pd.testing.assert_frame_equal(r, r0)


def test_to_dict_and_repr(case):
    j, r = case
    ins = rev.inspect_query(j, r, "q1", system="A", k=4)
    data = ins.to_dict()
    assert data["ranking"][1]["grade"] is None and data["missed"][1]["rank"] is None
    assert repr(ins) == "QueryInspection(query_id='q1', system='A', k=4, judged=3/4, missed=2)"
