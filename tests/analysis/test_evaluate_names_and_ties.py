"""evaluate(measures=): the measures asked for under the names asked for, each column's denominator
stated (issue 28 item 5); the Python API's one warning on tied scores (issue 33 item 6)."""

from __future__ import annotations

import io
import json
import warnings

import ir_measures
import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev
from retrieval_eval.analysis.evaluation.ties import tied_rankings
from retrieval_eval.cli.app import main
from retrieval_eval.model import ID

# Three judged queries: q1 and q2 have positives, q3 has none (trec_eval scores it 0, the spec
# leaves it out). No score ties: the name tests say nothing about ties.
JUDGMENTS = [
    {"query_id": "q1", "doc_uri": "a", "relevance": 2},
    {"query_id": "q1", "doc_uri": "b", "relevance": 0},
    {"query_id": "q1", "doc_uri": "e", "relevance": 1},
    {"query_id": "q2", "doc_uri": "c", "relevance": 1},
    {"query_id": "q3", "doc_uri": "d", "relevance": 0},
]
RUN = [
    {"query_id": "q1", "ranking": ["b", "a", "x", "e"], "scores": [4.0, 3.0, 2.0, 1.0]},
    {"query_id": "q2", "ranking": ["y", "c"], "scores": [2.0, 1.0]},
    {"query_id": "q3", "ranking": ["d"], "scores": [1.0]},
]
ASKED = ["nDCG@10", ir_measures.P @ 2, "P_2", "ndcg_cut.10", "recall@10"]


def _oracle(measure) -> dict[str, float]:
    """ir_measures' own per-query values (every judged query; one it leaves out scores 0)."""
    qrels = [ir_measures.Qrel(j["query_id"], j["doc_uri"], j["relevance"]) for j in JUDGMENTS]
    run = [ir_measures.ScoredDoc(r["query_id"], d, s) for r in RUN for d, s in zip(r["ranking"], r["scores"])]
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    return {q: got.get(q, 0.0) for q in ("q1", "q2", "q3")}


@pytest.fixture(scope="module")
def ev():
    return rev.evaluate(JUDGMENTS, RUN, measures=ASKED)


def test_the_summary_holds_n_and_exactly_the_measures_asked_under_their_names(ev):
    assert list(ev.summary.columns) == ["n", "nDCG@10", "P@2", "P_2", "ndcg_cut.10", "recall@10"]
    assert ev.catalogue == {"nDCG@10": "ndcg_cut_10", "P@2": "P_2", "P_2": "P_2", "ndcg_cut.10": "ndcg_cut_10"}
    # the per-query frame keeps what plots, gates and the report read, and the asked columns
    assert {"precision@10", "recall@1", "ndcg@10", "nDCG@10", "P@2", "ndcg_cut.10"} <= set(ev.per_query.columns)
    assert "ndcg_cut_10" not in ev.per_query.columns  # asked for by other names only


def test_the_asked_names_carry_ir_measures_own_numbers(ev):
    pq = ev.per_query.set_index("query_id")
    for name, measure in (
        ("nDCG@10", ir_measures.nDCG @ 10),
        ("P@2", ir_measures.P @ 2),
        ("ndcg_cut.10", ir_measures.nDCG @ 10),
        ("P_2", ir_measures.P @ 2),
    ):
        expected = _oracle(measure)
        np.testing.assert_allclose(
            pq[name].reindex(list(expected)).to_numpy(float), list(expected.values()), rtol=0, atol=1e-12
        )
        assert ev.summary.loc["run", name] == pytest.approx(np.mean(list(expected.values())), abs=1e-12)
    # by hand: q1's relevant a (grade 2) at rank 2, e (grade 1) at rank 4; q2's c at rank 2
    assert ev.summary.loc["run", "P_2"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3, abs=1e-15)
    assert ev.summary.loc["run", "recall@10"] == pytest.approx(1.0, abs=1e-15)  # spec: q1, q2 only


def test_each_column_states_its_denominator(ev):
    assert ev.counts.to_dict() == {"nDCG@10": 3, "P@2": 3, "P_2": 3, "ndcg_cut.10": 3, "recall@10": 2}
    assert ev.counts.dtype == np.int64 and int(ev.summary.loc["run", "n"]) == 2
    assert ev.counts_differ
    spec_only = rev.evaluate(JUDGMENTS, RUN, measures=["recall@10", "map@100"])
    assert list(spec_only.summary.columns) == ["n", "recall@10", "map@100"]
    assert not spec_only.counts_differ and spec_only.counts.to_dict() == {"recall@10": 2, "map@100": 2}


def test_a_k_given_keeps_the_spec_metrics_at_that_k_beside_the_measures():
    ev = rev.evaluate(JUDGMENTS, RUN, k=5, measures=["nDCG@10"])
    assert [c for c in ev.summary.columns if c.endswith("@1")] == []
    assert {"precision@5", "ndcg@5", "nDCG@10"} <= set(ev.summary.columns)
    assert "precision@10" not in ev.summary.columns


def test_a_multi_measure_name_gives_each_its_catalogue_name():
    ev = rev.evaluate(JUDGMENTS, RUN, measures=["P.1,2"])
    assert list(ev.summary.columns) == ["n", "P_1", "P_2"] and ev.catalogue == {"P_1": "P_1", "P_2": "P_2"}


def test_the_report_says_how_many_queries_a_metric_averages(ev):
    metrics = json.loads(ev.report().to_json())["metrics"]
    assert metrics["nDCG@10"]["queries"] == 3 and metrics["P_2"]["queries"] == 3
    assert "queries" not in metrics["recall@10"]  # averaged over the report's n
    plain = json.loads(rev.build_report(JUDGMENTS, RUN).to_json())["metrics"]
    assert all("queries" not in m for m in plain.values())


def test_the_notebook_view_notes_counts_that_differ(ev):
    html = ev._repr_html_()
    assert "other numbers of queries than n = 2" in html and "nDCG@10 3" in html
    assert "recall@10 3" not in html
    assert "other numbers of queries" not in rev.evaluate(JUDGMENTS, RUN, measures=["recall@10"])._repr_html_()


def test_names_counts_and_catalogue_survive_save_and_reload(ev):
    back = rev.Evaluation.from_dict(json.loads(json.dumps(ev.to_dict())))
    assert back.catalogue == ev.catalogue
    pd.testing.assert_frame_equal(back.summary, ev.summary)
    pd.testing.assert_series_equal(back.counts, ev.counts)


def test_compare_names_catalogue_measures_as_asked():
    judgments = rev.load_demo().judgments
    runs = rev.in_given_order(rev.load_demo().runs)
    c = rev.compare(judgments, runs, metrics=["nDCG@10", "ndcg@10"], test="t", calibration=False)
    assert c.metrics == ["nDCG@10", "ndcg@10"]
    ev = rev.evaluate(judgments, runs, measures=["nDCG@10"])
    pq = ev.per_query[~ev.per_query["no_positives"] & ~ev.per_query["negative"]]
    means = pq.groupby("system", observed=True)["nDCG@10"].mean()
    for row in c.table[c.table["metric"] == "nDCG@10"].itertuples():
        assert row.mean == pytest.approx(means[row.system], abs=1e-12)


# --------------------------------------------------------------------------------------------
# Tied scores

TIED = [  # q1: a and b tie, a first (trec_eval puts b first); q2: ties in trec_eval's order
    {"query_id": "q1", "ranking": ["a", "b", "x"], "scores": [2.0, 2.0, 1.0]},
    {"query_id": "q2", "ranking": ["z", "c"], "scores": [1.0, 1.0]},
]
TIED_J = [{"query_id": "q1", "doc_uri": "a", "relevance": 1}, {"query_id": "q2", "doc_uri": "c", "relevance": 1}]


def _ties(record) -> list:
    return [w for w in record if issubclass(w.category, rev.TiedScoresWarning)]


def test_only_ties_out_of_trec_evals_order_count():
    assert tied_rankings(rev.as_run(TIED)) == (1, 2)
    assert tied_rankings(rev.as_run(TIED[1:])) == (0, 1)
    assert issubclass(rev.TiedScoresWarning, UserWarning)


def _tied_rankings_by_sorting(run: pd.DataFrame) -> tuple[int, int]:
    """The oracle: the definition, spelled out with a sort per ranking and Python string order."""
    n_all = len(run[["system", "query_id"]].drop_duplicates())
    out = set()
    for key, part in run.groupby(["system", "query_id"], sort=False):
        part = part[part["score"].notna()]
        part = part.sort_values(["score", "rank"], kind="stable")  # stable: given order breaks equal ranks
        docs, scores = list(part["doc_id"].astype(object)), list(part["score"])
        if any(scores[i] == scores[i + 1] and docs[i + 1] > docs[i] for i in range(len(docs) - 1)):
            out.add(key)
    return len(out), n_all


@pytest.mark.parametrize("seed", range(12))
def test_tied_rankings_equal_the_definition_on_random_runs(seed):
    """Interleaved rankings, two systems, NaN scores, scores that go up, a ranking given twice,
    repeated ranks, few distinct scores (many ties) and ids whose UTF-8 bytes order them as
    code points (non-ASCII, astral)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    docs = np.array(["a", "b", "z", "é", "ß", "\U0001f600", "A", "aa", "d1", "d10", "d2"], dtype=object)
    run = pd.DataFrame(
        {
            "system": rng.choice(["s1", "s2"], n),
            "query_id": rng.choice([f"q{i}" for i in range(int(rng.integers(1, 120 if seed % 3 else 40)))], n),
            "rank": rng.integers(1, 40 if seed % 2 else 4, n),
            "doc_id": rng.choice(docs, n),
            "score": rng.choice(
                [1.0, 2.0, 3.0, np.nan, 0.5], n, p=[0.3, 0.3, 0.2, 0.1 * (seed % 3 > 0), 0.2 - 0.1 * (seed % 3 > 0)]
            ),
        }
    )
    if seed % 3 == 0:  # whole rankings, scores never going up, no NaN: the neighbours-only path
        run = run.sort_values(["system", "query_id", "score"], ascending=[True, True, False])
        run["rank"] = run.groupby(["system", "query_id"]).cumcount() + 1
    run = run.astype({"system": ID, "query_id": ID, "doc_id": ID}).reset_index(drop=True)
    assert tied_rankings(run) == _tied_rankings_by_sorting(run)


@pytest.mark.parametrize(
    "call",
    [
        lambda: rev.evaluate(TIED_J, TIED),
        lambda: rev.score(TIED_J, TIED),
        lambda: rev.score_by_stratum(TIED_J, TIED),
        lambda: rev.build_report(TIED_J, TIED),
        lambda: rev.compare(TIED_J, {"s1": TIED, "s2": TIED}, test="t", calibration=False),
    ],
    ids=["evaluate", "score", "score_by_stratum", "build_report", "compare"],
)
def test_each_public_call_warns_once_at_the_callers_line(call):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        call()
    tied = _ties(record)
    assert len(tied) == 1, [str(w.message) for w in tied]
    assert " of " in str(tied[0].message) and "in_given_order" in str(tied[0].message)
    assert tied[0].filename == __file__  # the lambda's line: the user's, not the package's


def test_the_warning_is_a_pytest_warns_match():
    with pytest.warns(rev.TiedScoresWarning, match=r"run: 1 of 2 rankings have tied scores"):
        rev.evaluate(TIED_J, TIED)


def test_a_run_whose_order_is_meant_is_read_as_given_without_a_warning():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ev = rev.evaluate(TIED_J, rev.in_given_order(TIED), k=1)
        again = rev.compare(TIED_J, rev.in_given_order({"s1": TIED, "s2": TIED}), test="t", calibration=False)
    assert _ties(record) == [] and len(again.systems) == 2
    p1 = ev.per_query.set_index("query_id")["precision@1"]
    assert p1["q1"] == 1.0  # a, relevant, kept first as given (trec_eval's order would put b first)
    assert (
        rev.evaluate(TIED_J, rev.rerank_by_score(rev.as_run(TIED)), k=1).per_query.set_index("query_id")["precision@1"][
            "q1"
        ]
        == 0.0
    )


def test_an_evaluation_compared_later_does_not_warn_again():
    with pytest.warns(rev.TiedScoresWarning):
        ev = rev.evaluate(TIED_J, {"s1": TIED, "s2": TIED})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rev.compare(TIED_J, ev, test="t", calibration=False)
    assert _ties(record) == []


def test_a_score_dict_is_ranked_by_score_and_never_warns():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rev.evaluate({"q1": {"a": 1}}, {"q1": {"a": 2.0, "b": 2.0}})
    assert _ties(record) == []


def test_the_command_line_warns_once_and_the_api_not_again(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 2.0 r\nq2 Q0 c 1 1.0 r\n", encoding="utf-8")
    labels = tmp_path / "qrels.json"
    labels.write_text(json.dumps({"q1": {"a": 1}, "q2": {"c": 1}}), encoding="utf-8")
    for verb in (["score", "--json"], ["compare", "--test", "t"]):
        runs = (
            ["--run", str(run)]
            if verb[0] == "score"
            else ["--run", str(run), "--run", str(run).replace("run.trec", "other.trec")]
        )
        if verb[0] == "compare":
            (tmp_path / "other.trec").write_text(run.read_text(encoding="utf-8"), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            main([verb[0], "--qrels", str(labels), *runs, *verb[1:]], stdout=out, stderr=err)
        assert _ties(record) == [], verb
        lines = [x for x in err.getvalue().splitlines() if "tied scores" in x]
        assert len(lines) == len(runs) // 2 and all(x.startswith("retrieval-eval: warning: ") for x in lines)


def test_a_mapping_counts_only_its_unmarked_runs():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rev.evaluate(TIED_J, {"meant": rev.in_given_order(TIED), "plain": TIED, "sorted": TIED[1:]})
    tied = _ties(record)
    assert len(tied) == 1 and str(tied[0].message).startswith("run: 1 of 3 rankings")  # plain's q1 only


def test_a_report_with_strata_carries_the_measures_at_the_top_only():
    demo = rev.load_demo()
    ev = rev.evaluate(demo.judgments, rev.in_given_order(demo.runs), measures=["nDCG@10"], queries=demo.queries)
    data = ev.report(system="bm25").to_dict()
    assert data["metrics"]["nDCG@10"]["value"] == pytest.approx(ev.summary.loc["bm25", "nDCG@10"], abs=1e-12)
    assert data["per_stratum"] and all("nDCG@10" not in s["metrics"] for s in data["per_stratum"].values())
