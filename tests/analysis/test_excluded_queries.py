"""evaluate().per_query: a query excluded from the averages (no label at the threshold, or an
expect_none negative) has NaN metric cells, so the per-query means are the summary (issue 12,
rule 8); the seed API's score().per_query keeps the spec's values."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval as re_

JUDGMENTS = [
    {"query_id": "q1", "doc_uri": "g2", "relevance": 2},
    {"query_id": "q2", "doc_uri": "g1", "relevance": 1},  # nothing at threshold 2
    {"query_id": "q3", "doc_uri": "z", "relevance": 0},  # declared expect_none below
]
RUNS = {
    "a": [
        {"query_id": "q1", "ranking": ["x", "g2"]},
        {"query_id": "q2", "ranking": ["g1", "x"]},
        {"query_id": "q3", "ranking": ["z"]},
    ],
    "b": [{"query_id": "q1", "ranking": ["g2"]}, {"query_id": "q2", "ranking": ["g1"]}],
}


def test_excluded_queries_have_nan_metric_cells_and_keep_their_flags():
    ev = re_.evaluate(JUDGMENTS, RUNS, k=(1, 2), threshold=2, negatives=["q3"])
    pq = ev.per_query.set_index(["system", "query_id"])
    metrics = [c for c in pq.columns if "@" in c]
    for system in ("a", "b"):
        assert pq.loc[(system, "q2"), "no_positives"] and pq.loc[(system, "q3"), "negative"]
        assert pq.loc[[(system, "q2"), (system, "q3")], metrics].isna().all().all()
        assert pq.loc[(system, "q1"), metrics].notna().all()
    # Hand-computed for q1: a finds g2 at rank 2, b at rank 1.
    assert pq.loc[("a", "q1"), "recall@1"] == 0.0 and pq.loc[("a", "q1"), "mrr@2"] == 0.5
    assert pq.loc[("b", "q1"), "ndcg@1"] == 1.0
    assert pq.loc[("b", "q3"), "missing"]  # the flags stay


def test_per_query_means_are_the_summary():
    ev = re_.evaluate(JUDGMENTS, RUNS, k=(1, 2), threshold=2, negatives=["q3"])
    metrics = [c for c in ev.per_query.columns if "@" in c]
    means = ev.per_query.groupby("system")[metrics].mean()
    pd.testing.assert_frame_equal(means, ev.summary[metrics], check_names=False, atol=1e-12, check_index_type=False)


def test_score_per_query_keeps_the_spec_values_of_an_excluded_query():
    # q2 at threshold 2: nothing relevant, but its grade-1 document ranked first has gain:
    # nDCG = ((2**1 - 1) / log2(2)) / ((2**1 - 1) / log2(2)) = 1; every hit-based value is 0.
    result = re_.score(JUDGMENTS[:2], RUNS["a"][:2], k=2, threshold=2)
    assert result.queries_without_positives == ["q2"]
    assert result.per_query.loc["q2"].to_dict() == {
        "precision": 0.0,
        "recall": 0.0,
        "ndcg": 1.0,
        "mrr": 0.0,
        "ap": 0.0,
        "hit_rate": 0.0,
    }
    assert result.metrics["mrr@2"].value == 0.5  # q1 only


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["q1", "q2", "q3", "q4"]), st.sampled_from("abcd"), st.integers(0, 3)),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 3),
    st.sets(st.sampled_from(["q1", "q2", "q3", "q4"]), max_size=2),
    st.integers(0, 1000),
)
def test_property_per_query_means_equal_the_summary(labels, threshold, negatives, seed):
    rng = np.random.default_rng(seed)
    judgments = [{"query_id": q, "doc_uri": d, "relevance": g if q not in negatives else 0} for q, d, g in labels]
    runs = {
        s: [
            {"query_id": q, "ranking": list(rng.permutation(list("abcdxy"))[: rng.integers(1, 6)])}
            for q in ("q1", "q2", "q3", "q4")
            if rng.random() < 0.8
        ]
        or [{"query_id": "q1", "ranking": ["x"]}]
        for s in ("s1", "s2")
    }
    ev = re_.evaluate(judgments, runs, k=(1, 3), threshold=threshold, negatives=sorted(negatives))
    metrics = [c for c in ev.per_query.columns if "@" in c]
    excluded = (ev.per_query["no_positives"] | ev.per_query["negative"]).to_numpy()
    assert ev.per_query.loc[excluded, metrics].isna().all().all()
    assert ev.per_query.loc[~excluded, metrics].notna().all().all()
    means = ev.per_query.groupby("system", sort=False)[metrics].mean().reindex(ev.summary.index)
    np.testing.assert_allclose(means.to_numpy(float), ev.summary[metrics].to_numpy(float), atol=1e-12, equal_nan=True)
