"""``evaluate(..., measures=[...])``: catalogue measures in the per-query frame and summary."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrieval_eval as re_

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(5)
    qrels, run, q_lines, r_lines = {}, {}, [], []
    for q in range(15):
        qid = f"q{q:02d}"
        pool = [f"d{i}" for i in rng.choice(60, size=30, replace=False)]
        for d in pool[: int(rng.integers(1, 20))]:
            g = int(rng.choice([0, 1, 2]))
            qrels.setdefault(qid, {})[d] = g
            q_lines.append(f"{qid} 0 {d} {g}")
        if q in (4, 9):
            continue  # judged, not answered
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 25))]
        for i, (d, s) in enumerate(zip(docs, np.round(rng.random(len(docs)), 1))):
            run.setdefault(qid, {})[d] = float(s)
            r_lines.append(f"{qid} Q0 {d} {i + 1} {s} sys")
    (tmp_path / "qrels").write_text("\n".join(q_lines) + "\n")
    (tmp_path / "run").write_text("\n".join(r_lines) + "\n")
    j = re_.read_qrels(tmp_path / "qrels")
    r = re_.read_trec_run(tmp_path / "run", order="score")  # trec_eval's order
    return j, r, qrels, run


MEASURES = ["map", "gm_map", "P.5,10", "nDCG@10", "bpref", "RR", "num_ret"]


def test_measures_match_pytrec_eval_per_query_and_missing_queries_score_zero(data):
    j, r, qrels, run = data
    ev = re_.evaluate(j, r, k=10, measures=MEASURES)
    want = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "gm_map", "P.5,10", "ndcg_cut.10", "bpref", "recip_rank", "num_ret"}
    ).evaluate(run)
    pq = ev.per_query.set_index("query_id")
    asked = {"ndcg_cut_10": "nDCG@10", "recip_rank": "RR"}  # columns carry the names asked for
    for qid in pq.index:
        for name in ("map", "gm_map", "P_5", "P_10", "ndcg_cut_10", "bpref", "recip_rank", "num_ret"):
            expected = want[qid][name] if qid in want else (math.log(1e-5) if name == "gm_map" else 0.0)
            assert pq.loc[qid, asked.get(name, name)] == pytest.approx(expected, abs=1e-9), (qid, name)


def test_summary_uses_trec_evals_aggregate_over_every_judged_query(data):
    j, r, _, _ = data
    ev = re_.evaluate(j, r, k=10, measures=MEASURES)
    pq = ev.per_query
    assert ev.summary.loc["sys", "map"] == pytest.approx(pq["map"].mean(), abs=1e-12)
    assert ev.summary.loc["sys", "gm_map"] == pytest.approx(math.exp(pq["gm_map"].mean()), abs=1e-12)
    assert ev.summary.loc["sys", "num_ret"] == pq["num_ret"].sum()


def test_catalogue_precision_agrees_with_the_engines_own(data):
    j, r, _, _ = data
    ev = re_.evaluate(j, r, k=(5, 10), measures=["P.5,10", "recall.10"])
    pq = ev.per_query
    np.testing.assert_allclose(pq["P_10"], pq["precision@10"], atol=1e-12)
    np.testing.assert_allclose(pq["P_5"], pq["precision@5"], atol=1e-12)
    np.testing.assert_allclose(pq["recall.10"], pq["recall@10"], atol=1e-12)  # as asked


def test_without_measures_the_evaluation_is_unchanged(data):
    j, r, _, _ = data
    plain = re_.evaluate(j, r, k=10)
    more = re_.evaluate(j, r, k=10, measures=["map"])
    assert list(more.per_query.columns) == list(plain.per_query.columns) + ["map"]
    assert more.per_query.drop(columns="map").equals(plain.per_query)
    assert more.summary.drop(columns="map").equals(plain.summary)


def test_an_unknown_measure_name_fails_with_a_suggestion(data):
    j, r, _, _ = data
    with pytest.raises(ValueError, match="did you mean"):
        re_.evaluate(j, r, measures=["nDGC@10"])
