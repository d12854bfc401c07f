"""diff_runs: two systems per query, sorted by |delta|, with every relevant passage's ranks
(issue 29, item 2). Oracles: pytrec_eval per query, and hand-computed ranks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import retrieval_eval as rev


def _data(seed=7, n_q=12, n_docs=30, depth=15):
    rng = np.random.default_rng(seed)
    labels, rows = [], []
    for q in range(n_q):
        for d in rng.choice(n_docs, 10, replace=False):
            labels.append({"query_id": f"q{q}", "doc_uri": f"d{d}", "relevance": int(rng.integers(0, 4))})
        for system in ("A", "B"):
            for i, d in enumerate(rng.choice(n_docs, depth, replace=False)):
                rows.append(
                    {"system": system, "query_id": f"q{q}", "rank": i + 1, "doc_id": f"d{d}", "score": float(depth - i)}
                )
    return labels, rows


LABELS, ROWS = _data()


def _pytrec(measure: str, system: str) -> dict[str, float]:
    qrel = {}
    for x in LABELS:
        qrel.setdefault(x["query_id"], {})[x["doc_uri"]] = x["relevance"]
    run = {}
    for x in ROWS:
        if x["system"] == system:
            run.setdefault(x["query_id"], {})[x["doc_id"]] = x["score"]
    key = measure.replace(".", "_")
    return {q: v[key] for q, v in pytrec_eval.RelevanceEvaluator(qrel, {measure}).evaluate(run).items()}


@pytest.fixture(scope="module")
def diff():
    return rev.diff_runs(LABELS, ROWS, measure="ndcg_linear@10", systems=("A", "B"))


def test_values_agree_with_pytrec_eval_per_query(diff):
    a, b = _pytrec("ndcg_cut.10", "A"), _pytrec("ndcg_cut.10", "B")
    t = diff.queries.set_index("query_id")
    scored = [q for q in a if any(x["relevance"] >= 1 for x in LABELS if x["query_id"] == q)]
    assert sorted(t.index) == sorted(scored)
    for q in scored:
        assert t.loc[q, "a"] == pytest.approx(a[q]) and t.loc[q, "b"] == pytest.approx(b[q])
        assert t.loc[q, "delta"] == pytest.approx(b[q] - a[q])
    assert diff.a == pytest.approx(np.mean([a[q] for q in scored]))


def test_catalogue_measure_agrees_with_pytrec_eval():
    d = rev.diff_runs(LABELS, ROWS, measure="P_5", systems=("A", "B"))
    want = _pytrec("P.5", "B")
    t = d.queries.set_index("query_id")
    assert d.metric == "P_5" and all(t.loc[q, "b"] == pytest.approx(v) for q, v in want.items())


def test_queries_are_sorted_by_absolute_delta(diff):
    size = diff.queries["delta"].abs().to_numpy()
    assert (np.diff(size) <= 1e-15).all()


def test_moves_are_the_ranks_in_each_run_by_hand(diff):
    by_run = {(x["system"], x["query_id"], x["doc_id"]): x["rank"] for x in ROWS}
    rel = [x for x in LABELS if x["relevance"] >= 1 and x["query_id"] in set(diff.queries["query_id"])]
    assert len(diff.moves) == len(rel)
    for x in rel:
        row = diff.moves[(diff.moves["query_id"] == x["query_id"]) & (diff.moves["key"] == x["doc_uri"])].iloc[0]
        for side, system in (("rank_a", "A"), ("rank_b", "B")):
            want = by_run.get((system, x["query_id"], x["doc_uri"]))
            assert math.isnan(row[side]) if want is None else row[side] == want
        assert row["grade"] == x["relevance"]


def test_entered_and_left_are_the_top_k_set_differences(diff):
    k = diff.k
    for q in diff.queries["query_id"]:
        top = {
            s: {x["doc_id"] for x in ROWS if x["system"] == s and x["query_id"] == q and x["rank"] <= k} for s in "AB"
        }
        assert set(diff.entered[diff.entered["query_id"] == q]["key"]) == top["B"] - top["A"]
        assert set(diff.left[diff.left["query_id"] == q]["key"]) == top["A"] - top["B"]


def test_two_runs_give_the_same_diff_as_two_systems_of_one():
    one = rev.diff_runs(LABELS, ROWS, systems=("A", "B"))
    a = [x for x in ROWS if x["system"] == "A"]
    b = [x for x in ROWS if x["system"] == "B"]
    two = rev.diff_runs(LABELS, a, b)
    pd.testing.assert_frame_equal(one.queries, two.queries)
    pd.testing.assert_frame_equal(one.moves, two.moves)


def test_json_shape_is_the_issues():
    d = rev.diff_runs(LABELS, ROWS, systems=("A", "B"))
    data = d.to_dict()
    assert list(data) == ["metric", "a", "b", "queries"]
    q = data["queries"][0]
    assert list(q) == ["query_id", "a", "b", "delta", "moves"]
    assert all(list(m) == ["key", "grade", "rank_a", "rank_b"] for m in q["moves"])
    ranks = [m[s] for x in data["queries"] for m in x["moves"] for s in ("rank_a", "rank_b")]
    assert None in ranks and all(r is None or isinstance(r, int) for r in ranks)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"measure": "ndcg@zz"}, "unknown measure 'ndcg@zz'"),
        ({"measure": "P"}, "unknown measure 'P'"),  # several cutoffs: not one measure
        ({"systems": ("A", "Z")}, "unknown system 'Z'"),
        ({"systems": None}, None),
    ],
)
def test_bad_input_is_one_clear_error(kwargs, message):
    if message is None:  # two systems in one run need no naming
        assert rev.diff_runs(LABELS, ROWS, **kwargs).names == ("A", "B")
        return
    kwargs.setdefault("systems", ("A", "B"))
    with pytest.raises(ValueError, match=message):
        rev.diff_runs(LABELS, ROWS, **kwargs)


def test_a_run_with_three_systems_needs_them_named():
    rows = ROWS + [dict(x, system="C") for x in ROWS if x["system"] == "A"]
    with pytest.raises(ValueError, match="pass systems="):
        rev.diff_runs(LABELS, rows)


def test_demo_dense_against_bm25_matches_evaluate():
    d = rev.load_demo()
    diff = rev.diff_runs(d.judgments, d.runs, systems=("dense", "bm25"))
    summary = rev.evaluate(d.judgments, d.runs).summary
    assert diff.a == pytest.approx(summary.loc["dense", "ndcg@10"])
    assert diff.b == pytest.approx(summary.loc["bm25", "ndcg@10"])
