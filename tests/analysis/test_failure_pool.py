"""label_pool: the unjudged top-k entries of every system, pooled and weighted, written as a
to-label judgments file that reads back once graded (issue 29, item 4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import retrieval_eval as rev
from retrieval_eval.errors import FormatError

LABELS = [
    {"query_id": "q1", "query": "first", "doc_uri": "u1", "chunk_id": "c1", "relevance": 2, "chunk_text": "one"},
    {"query_id": "q1", "doc_uri": "u2", "chunk_id": "c2", "relevance": 0},
    {"query_id": "q2", "query": "second", "doc_uri": "u3", "chunk_id": "c3", "relevance": 1},
]
RUN = [
    *(
        {"system": "A", "query_id": "q1", "rank": i + 1, "doc_id": d, "score": 5.0 - i}
        for i, d in enumerate(["c1", "h1", "c2", "h2", "h9"])
    ),
    *(
        {"system": "B", "query_id": "q1", "rank": i + 1, "doc_id": d, "score": 5.0 - i}
        for i, d in enumerate(["h2", "c1", "h3", "c2", "h8"])
    ),
    *(
        {"system": "A", "query_id": "q2", "rank": i + 1, "doc_id": d, "score": 5.0 - i}
        for i, d in enumerate(["c3", "h4", "h5"])
    ),
    {"system": "B", "query_id": "q9", "rank": 1, "doc_id": "h7", "score": 1.0},  # a query nobody labelled
]


@pytest.fixture(scope="module")
def pool():
    return rev.label_pool(LABELS, RUN, k=4, measure="precision@4")


def test_the_pool_is_the_union_of_the_holes_of_every_top_k(pool):
    got = set(zip(pool.frame["query_id"], pool.frame["key"]))
    assert got == {("q1", "h1"), ("q1", "h2"), ("q1", "h3"), ("q2", "h4"), ("q2", "h5")}


def test_systems_and_best_rank_by_hand(pool):
    f = pool.frame.set_index("key")
    assert f.loc["h2", "systems"] == 2 and f.loc["h2", "best_rank"] == 1
    assert f.loc["h1", "systems"] == 1 and f.loc["h1", "best_rank"] == 2


def test_weights_share_each_rankings_slack_over_its_holes(pool):
    # precision@4: A/q1 holes h1, h2 -> 0.25 .. 0.75, slack 0.5, 0.25 per hole; B/q1 holes h2, h3
    # -> 0.5 .. 1.0, 0.25 each; A/q2 holes h4, h5 -> 0.25 .. 0.75, 0.25 each.
    f = pool.frame.set_index("key")["weight"]
    assert f.to_dict() == pytest.approx({"h2": 0.5, "h1": 0.25, "h3": 0.25, "h4": 0.25, "h5": 0.25})
    assert pool.frame["key"].iloc[0] == "h2"
    assert bool(pool.frame["weight"].is_monotonic_decreasing)


def test_the_file_is_judgments_without_relevance(pool):
    lines = [json.loads(x) for x in pool.to_jsonl().splitlines()]
    assert len(lines) == len(pool)
    assert all("relevance" not in x for x in lines)
    first = lines[0]
    assert first == {"query_id": "q1", "query": "first", "doc_uri": "h2", "chunk_id": "h2"}


def test_graded_file_reads_back_as_judgments_and_ungraded_is_refused(pool, tmp_path):
    path = tmp_path / "to-label.jsonl"
    pool.write(path)
    with pytest.raises(FormatError, match=r"to-label.jsonl:1: relevance"):
        rev.read_judgments(path)
    graded = "".join(json.dumps({**json.loads(x), "relevance": 1}) + "\n" for x in path.read_text().splitlines())
    path.write_text(graded)
    back = rev.read_judgments(path)
    assert len(back) == len(pool) and (back["relevance"] == 1).all()
    merged = rev.as_judgments(LABELS + back.drop(columns=["extra", "line"]).to_dict("records"))
    assert (
        rev.judgment_bounds(merged, [x for x in RUN if x["system"] == "A"], measures="P_4", k=4)
        .per_query["unjudged"]
        .sum()
        == 0
    )  # graded, the pool fills every hole of the top 4


def test_demo_pool_uses_the_corpus_documents_and_text():
    d = rev.load_demo()
    pool = rev.label_pool(d.judgments, d.runs, k=5, corpus=d.corpus, queries=d.queries, limit=30)
    assert len(pool) == 30
    corpus = d.corpus.set_index("chunk_id")
    for r in pool.frame.itertuples(index=False):
        assert r.doc_uri == corpus.loc[r.key, "doc_uri"] and r.text == corpus.loc[r.key, "text"]
    judged = set(zip(d.judgments["query_id"], d.judgments["chunk_id"]))
    assert not any((q, k) in judged for q, k in zip(pool.frame["query_id"], pool.frame["key"]))
    assert np.all(pool.frame["best_rank"] <= 5)


def test_bad_measure_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown measure 'zz'"):
        rev.label_pool(LABELS, RUN, measure="zz")
