"""judgment_bounds: each number as scored and with every unjudged top-k entry labelled at the
top grade (issue 29, item 3). Oracle: pytrec_eval on the original qrels and on the qrels
completed with the holes of each system's top k; hand-computed cases for the comparison."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import retrieval_eval as rev


def _data(seed=11, n_q=10, n_docs=40, depth=20):
    rng = np.random.default_rng(seed)
    labels, rows = [], []
    for q in range(n_q):
        for d in rng.choice(n_docs, 12, replace=False):
            labels.append({"query_id": f"q{q}", "doc_uri": f"d{d}", "relevance": int(rng.integers(0, 4))})
        labels.append({"query_id": f"q{q}", "doc_uri": "dtop", "relevance": 1})  # every query has a positive
        for system in ("A", "B", "C"):
            for i, d in enumerate(rng.choice(n_docs, depth, replace=False)):
                rows.append(
                    {"system": system, "query_id": f"q{q}", "rank": i + 1, "doc_id": f"d{d}", "score": float(depth - i)}
                )
    return labels, rows


LABELS, ROWS = _data()
K = 10


def _qrel(labels):
    out = {}
    for x in labels:
        out.setdefault(x["query_id"], {})[x["doc_uri"]] = x["relevance"]
    return out


def _run(system):
    out = {}
    for x in ROWS:
        if x["system"] == system:
            out.setdefault(x["query_id"], {})[x["doc_id"]] = x["score"]
    return out


def _completed(system, grade):
    qrel = _qrel(LABELS)
    for x in ROWS:
        if x["system"] == system and x["rank"] <= K and x["doc_id"] not in qrel[x["query_id"]]:
            qrel[x["query_id"]][x["doc_id"]] = grade
    return qrel


@pytest.fixture(scope="module")
def bounds():
    return rev.judgment_bounds(LABELS, ROWS, measures=["ndcg_cut_10", "P_10", "recall_10"], k=K)


@pytest.mark.parametrize(
    "measure, trec", [("ndcg_cut_10", "ndcg_cut.10"), ("P_10", "P.10"), ("recall_10", "recall.10")]
)
@pytest.mark.parametrize("system", ["A", "B", "C"])
def test_value_and_upper_agree_with_pytrec_eval_on_the_completed_qrels(bounds, measure, trec, system):
    key = trec.replace(".", "_")
    value = pytrec_eval.RelevanceEvaluator(_qrel(LABELS), {trec}).evaluate(_run(system))
    upper = pytrec_eval.RelevanceEvaluator(_completed(system, 3), {trec}).evaluate(_run(system))
    rows = bounds.per_query[(bounds.per_query["system"] == system) & (bounds.per_query["measure"] == measure)]
    rows = rows.set_index("query_id")
    for q in value:
        assert rows.loc[q, "value"] == pytest.approx(value[q][key])
        assert rows.loc[q, "upper"] == pytest.approx(upper[q][key])


def test_seed_metric_upper_agrees_with_pytrec_eval_linear_gain():
    b = rev.judgment_bounds(LABELS, ROWS, measures="ndcg_linear@10", k=K)
    upper = pytrec_eval.RelevanceEvaluator(_completed("B", 3), {"ndcg_cut.10"}).evaluate(_run("B"))
    rows = b.per_query[b.per_query["system"] == "B"].set_index("query_id")
    assert all(rows.loc[q, "upper"] == pytest.approx(v["ndcg_cut_10"]) for q, v in upper.items())


def test_unjudged_counts_the_holes_of_the_top_k(bounds):
    qrel = _qrel(LABELS)
    rows = bounds.per_query[bounds.per_query["measure"] == "P_10"]
    for r in rows.itertuples(index=False):
        want = sum(
            1
            for x in ROWS
            if x["system"] == r.system
            and x["query_id"] == r.query_id
            and x["rank"] <= K
            and x["doc_id"] not in qrel[r.query_id]
        )
        assert r.unjudged == want


def test_the_grade_given_to_holes_can_be_chosen():
    b = rev.judgment_bounds(LABELS, ROWS, measures="P_10", k=K, grade=1)
    upper = pytrec_eval.RelevanceEvaluator(_completed("A", 1), {"P.10"}).evaluate(_run("A"))
    rows = b.per_query[b.per_query["system"] == "A"].set_index("query_id")
    assert b.grade == 1 and all(rows.loc[q, "upper"] == pytest.approx(v["P_10"]) for q, v in upper.items())


def test_summary_is_the_interval_of_possible_means(bounds):
    rows = bounds.per_query
    s = bounds.summary.set_index(["system", "measure"])
    for (system, measure), g in rows.groupby(["system", "measure"]):
        assert s.loc[(system, measure), "mean"] == pytest.approx(g["value"].mean())
        assert s.loc[(system, measure), "mean_low"] == pytest.approx(np.minimum(g["value"], g["upper"]).mean())
        assert s.loc[(system, measure), "mean_high"] == pytest.approx(np.maximum(g["value"], g["upper"]).mean())


def test_precision_and_recall_only_rise_when_holes_are_relevant(bounds):
    rows = bounds.per_query[bounds.per_query["measure"].isin(["P_10", "recall_10"])]
    assert (rows["upper"] >= rows["value"] - 1e-12).all()
    assert ((rows["upper"] > rows["value"]) == (rows["unjudged"] > 0)).all()


def test_ndcg_can_fall_when_a_hole_is_relevant_so_low_and_high_are_both_kept():
    # d1 (grade 3) on top, a hole at rank 3: labelled 3, it adds 7/log2(4) = 3.5 to DCG but
    # 7/log2(3) to the ideal, so nDCG falls from 1 to (7 + 3.5) / (7 + 7 / log2(3)).
    labels = [{"query_id": "q", "doc_uri": "d1", "relevance": 3}]
    rows = [
        {"system": "S", "query_id": "q", "rank": i + 1, "doc_id": d, "score": 3.0 - i}
        for i, d in enumerate(["d1", "d2", "x"])
    ]
    labels.append({"query_id": "q", "doc_uri": "d2", "relevance": 0})
    b = rev.judgment_bounds(labels, rows, measures="ndcg@3", k=3)
    r = b.per_query.iloc[0]
    assert r["value"] == pytest.approx(1.0)
    assert r["upper"] == pytest.approx((7 + 3.5) / (7 + 7 / np.log2(3)))
    assert (r["low"], r["high"]) == (r["upper"], r["value"])


def test_could_flip_by_hand():
    labels = [
        {"query_id": "q", "doc_uri": "d1", "relevance": 1},
        {"query_id": "q", "doc_uri": "d2", "relevance": 0},
        {"query_id": "q", "doc_uri": "d3", "relevance": 1},
    ]

    def run(system, docs):
        return [
            {"system": system, "query_id": "q", "rank": i + 1, "doc_id": d, "score": 2.0 - i}
            for i, d in enumerate(docs)
        ]

    # A = [d1, x]: 0.5, up to 1; B = [y, z]: 0, up to 1. B - A = -0.5, range [-1, 0.5]: could flip.
    b = rev.judgment_bounds(labels, run("A", ["d1", "x"]) + run("B", ["y", "z"]), measures="P_2", k=2)
    c = b.comparisons.iloc[0]
    assert (c["a"], c["b"]) == ("A", "B")
    assert (c["delta"], c["delta_low"], c["delta_high"]) == pytest.approx((-0.5, -1.0, 0.5))
    assert bool(c["could_flip"])
    # A = [d1, d3]: 1, no hole; B = [y, d2]: 0, up to 0.5. B - A = -1, range [-1, -0.5]: cannot flip.
    b = rev.judgment_bounds(labels, run("A", ["d1", "d3"]) + run("B", ["y", "d2"]), measures="P_2", k=2)
    c = b.comparisons.iloc[0]
    assert (c["delta"], c["delta_low"], c["delta_high"]) == pytest.approx((-1.0, -1.0, -0.5))
    assert not bool(c["could_flip"])


def test_a_query_without_positives_stays_out_of_the_means():
    labels = [{"query_id": "q1", "doc_uri": "d1", "relevance": 1}, {"query_id": "q2", "doc_uri": "d1", "relevance": 0}]
    rows = [{"system": "S", "query_id": q, "rank": 1, "doc_id": "x", "score": 1.0} for q in ("q1", "q2")]
    b = rev.judgment_bounds(labels, rows, measures="precision@1", k=1)
    r = b.per_query.set_index("query_id")
    assert np.isnan(r.loc["q2", "value"]) and np.isnan(r.loc["q2", "upper"]) and not r.loc["q2", "scored"]
    assert b.summary["n"].tolist() == [1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"measures": ["nope@3"]}, "unknown measure 'nope@3'"),
        ({"k": 0}, "k must be a positive integer"),
        ({"gain": "cubic"}, "gain must be one of"),
    ],
)
def test_bad_input_is_one_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rev.judgment_bounds(LABELS, ROWS, **kwargs)


def test_inputs_are_not_mutated():
    j, r = rev.as_judgments(LABELS), rev.as_run(ROWS)
    j0, r0 = j.copy(), r.copy()
    rev.judgment_bounds(j, r, measures=["ndcg@10"])
    pd.testing.assert_frame_equal(j, j0)
    pd.testing.assert_frame_equal(r, r0)
