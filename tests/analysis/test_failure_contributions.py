"""``inspect_query``'s per-entry contributions: each column sums to the query's metric. Checked
against the engine's own values for every demo query and system, and against pytrec_eval
(trec_eval's linear-gain ``ndcg_cut``, ``P``, ``recall``, ``recip_rank``) where they meet."""

from __future__ import annotations

import pytest

import retrieval_eval as rev

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture(scope="module")
def demo():
    return rev.load_demo()


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_contributions_sum_to_the_engines_values(demo, gain):
    scored = demo.judgments.groupby("query_id")["relevance"].max()
    checked = 0
    for qid in list(scored[scored >= 1].index)[:15]:
        for system in ("dense", "bm25"):
            ins = rev.inspect_query(demo.judgments, demo.runs, qid, system=system, k=10, gain=gain)
            ndcg = "ndcg@10" if gain == "exponential" else "ndcg_linear@10"
            for m in ("precision@10", "recall@10", ndcg, "mrr@10"):
                assert ins.ranking[f"contrib_{m}"].sum() == pytest.approx(ins.metrics[m], abs=1e-12), (qid, m)
                checked += 1
    assert checked == 15 * 2 * 4


def test_contributions_match_pytrec_eval_with_linear_gain(demo):
    j, r = demo.judgments, demo.runs[demo.runs["system"] == "bm25"]
    qrel = {}
    for q, key, g in zip(j["query_id"], j["chunk_id"].fillna(j["doc_uri"]), j["relevance"]):
        qrel.setdefault(q, {})[key] = int(g)
    run = {}
    for q, d, rank in zip(r["query_id"], r["doc_id"], r["rank"]):
        run.setdefault(q, {})[d] = -float(rank)  # the run's own order
    want = pytrec_eval.RelevanceEvaluator(qrel, {"ndcg_cut.10", "P.10", "recall.10", "recip_rank"}).evaluate(run)
    for qid in ("st-01", "dm-11", "ex-01", "bt-05"):
        ranking = rev.inspect_query(j, demo.runs, qid, system="bm25", k=10, gain="linear").ranking
        assert ranking["contrib_ndcg_linear@10"].sum() == pytest.approx(want[qid]["ndcg_cut_10"], abs=1e-9)
        assert ranking["contrib_precision@10"].sum() == pytest.approx(want[qid]["P_10"], abs=1e-9)
        assert ranking["contrib_recall@10"].sum() == pytest.approx(want[qid]["recall_10"], abs=1e-9)
        if ranking["relevant"].any():  # recip_rank reads the whole ranking; MRR@10 the top 10
            assert ranking["contrib_mrr@10"].sum() == pytest.approx(want[qid]["recip_rank"], abs=1e-9)


def test_a_query_without_positives_has_no_contributions():
    judgments = [{"query_id": "q", "doc_uri": "a", "relevance": 0}, {"query_id": "q", "doc_uri": "b", "relevance": 0}]
    run = [{"query_id": "q", "ranking": ["a", "b", "c"]}]
    ranking = rev.inspect_query(judgments, run, "q", k=3).ranking
    cols = [c for c in ranking.columns if c.startswith("contrib_")]
    assert len(cols) == 4 and ranking[cols].isna().all().all()
