"""Plot fixes of issue 33 item 6: readable metric names and ``labels=``, a log k axis for the
metric-at-k plot, no "worst stratum" hatch on data without strata, the per-query plot in the
systems' colours."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev
from retrieval_eval.viz import PerQueryDeltaDisplay
from retrieval_eval.viz.labels import display_name
from retrieval_eval.viz.style import system_colors

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.colors as mcolors
import matplotlib.pyplot as plt


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def demo():
    return rev.load_demo()


@pytest.fixture(scope="module")
def evaluation(demo):
    return rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)


def _unstratified():
    rng = np.random.default_rng(0)
    judgments = [{"query_id": f"q{i}", "doc_uri": f"d{i}", "relevance": 1} for i in range(8)]
    runs = {
        s: [{"query_id": f"q{i}", "ranking": list(rng.permutation([f"d{i}", "x", "y"]))} for i in range(8)]
        for s in ("a", "b")
    }
    return judgments, runs


@pytest.mark.parametrize(
    "name, shown",
    [
        ("ndcg@10", "nDCG@10 (exp. gain)"),
        ("ndcg_linear@10", "nDCG@10 (linear gain)"),
        ("recall@k", "Recall@k"),
        ("precision@5", "P@5"),
        ("map@100", "MAP@100"),
        ("hit_rate@1", "Hit rate@1"),
        ("faithfulness", "faithfulness"),
        ("bm25", "bm25"),
    ],
)
def test_display_names(name, shown):
    assert display_name(name) == shown
    assert display_name(name, {name: "X"}) == "X"


def test_metric_at_k_uses_a_log_axis_labelled_by_k(evaluation):
    disp = evaluation.plot("metric_at_k", metric="ndcg")
    a = disp.ax_
    assert a.get_xscale() == "log"
    assert [t.get_text() for t in a.get_xticklabels()] == ["1", "5", "10"]
    # on the log axis 5 and 10 are as far apart as log(2) of the span log(10): not crowded
    x = a.transData.transform([(5, 0), (10, 0)])[:, 0]
    x1 = a.transData.transform([(1, 0)])[0, 0]
    assert (x[1] - x[0]) / (x[1] - x1) == pytest.approx(np.log10(2), rel=1e-6)
    assert a.get_ylabel().startswith("nDCG@k (exp. gain)")


def test_labels_rename_systems_and_metrics(evaluation):
    labels = {"bm25": "BM25", "dense": "Dense retriever", "ndcg@k": "NDCG (graded)@k"}
    disp = evaluation.plot("metric_at_k", metric="ndcg", labels=labels)
    texts = [t.get_text() for t in disp.legend_.get_texts()]
    assert "BM25" in texts and "Dense retriever" in texts and "rrf" in texts
    assert disp.ax_.get_ylabel().startswith("NDCG (graded)@k")
    strata = evaluation.plot("strata", metric="recall", labels={"bm25": "BM25"})
    assert "BM25" in [t.get_text() for t in strata.legend_.get_texts()]
    assert strata.ax_.get_xlabel().startswith("Recall@10")


def test_no_worst_stratum_hatch_without_strata():
    judgments, runs = _unstratified()
    ev = rev.evaluate(judgments, runs, k=(3,))
    assert not ev.has_strata
    disp = ev.plot("strata", metric="recall")
    assert disp.worst_ == []
    assert all(p.get_hatch() in (None, "") for bars in disp.bars_.values() for p in bars.patches)
    assert "worst stratum" not in [t.get_text() for t in disp.legend_.get_texts()]


def test_with_strata_one_hatched_bar_per_system(evaluation):
    disp = evaluation.plot("strata", metric="recall")
    assert len(disp.worst_) == len(evaluation.systems)
    assert "worst stratum" in [t.get_text() for t in disp.legend_.get_texts()]


def test_per_query_from_comparison_in_system_colours(demo):
    cmp = rev.compare(demo.judgments, demo.runs, baseline="bm25", k=10, queries=demo.queries)
    disp = PerQueryDeltaDisplay.from_comparison(cmp, "ndcg@10", "dense").plot(labels={"dense": "Dense"})
    colours = system_colors(cmp.systems)
    d = disp.deltas["delta"].to_numpy()
    faces = [mcolors.to_hex(p.get_facecolor()) for p in disp.bars_.patches]
    assert {f for f, x in zip(faces, d) if x > 0} == {mcolors.to_hex(colours["dense"])}
    assert {f for f, x in zip(faces, d) if x < 0} == {mcolors.to_hex(colours["bm25"])}
    assert "Dense better" in disp.legend_.get_texts()[0].get_text()


def test_comparison_plot_per_query_in_system_colours(demo):
    cmp = rev.compare(demo.judgments, demo.runs, baseline="bm25", k=10, queries=demo.queries)
    disp = cmp.plot("per_query", metric="ndcg@10", system="dense")
    colours = system_colors(cmp.systems)
    d = disp.deltas["delta"].to_numpy()
    faces = [mcolors.to_hex(p.get_facecolor()) for p in disp.bars_.patches]
    # without colours the losses are LOSS_COLOR, which is also rrf's slot: bm25's wins in rrf's colour
    assert {f for f, x in zip(faces, d) if x < 0} == {mcolors.to_hex(colours["bm25"])}
    assert {f for f, x in zip(faces, d) if x > 0} == {mcolors.to_hex(colours["dense"])}


def test_tie_line_is_the_clis_and_the_apis():
    from retrieval_eval.analysis.evaluation.ties import tie_message, tied_rankings, warn_tied_scores
    from retrieval_eval.cli.inputs import tie_warning

    run = rev.as_run(
        [
            {"query_id": "q1", "ranking": ["a", "b", "c"], "scores": [0.5, 0.5, 0.1]},
            {"query_id": "q2", "ranking": ["a", "b"], "scores": [0.9, 0.1]},
            {"query_id": "q3", "ranking": ["a", "b"]},
        ]
    )
    assert tied_rankings(run) == (1, 3)
    assert tie_warning(run, "r.trec") == (
        "r.trec: 1 of 3 rankings have tied scores; they are read by rank (the file's order); "
        "--order score orders ties by doc id descending, as trec_eval does"
    )
    assert tie_message(run.iloc[3:], "x", "o", "f") is None
    with pytest.warns(UserWarning, match="run: 1 of 3 rankings have tied scores"):
        warn_tied_scores(run, run)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_tied_scores({"q1": {"a": 0.5, "b": 0.5}}, rev.as_run({"q1": {"a": 0.5, "b": 0.5}}))


def test_run_queries_without_judgments_are_named_in_the_view(demo):
    judgments = [{"query_id": "q1", "doc_uri": "d1", "relevance": 1}]
    run = [{"query_id": "q1", "ranking": ["d2", "d1"]}, {"query_id": "qx", "ranking": ["d1"]}]
    ev = rev.evaluate(judgments, run, k=(1,))
    assert ev.unjudged_queries == ["qx"]
    assert list(ev.per_query["query_id"]) == ["q1"]
    assert "1 run queries without judgments left out" in ev._repr_html_()
    # declared negatives (expect_none) are not "without judgments": the demo has none such
    full = rev.evaluate(demo.judgments, demo.runs, queries=demo.queries)
    assert full.unjudged_queries == []


def test_metric_at_k_of_an_evaluation_made_with_measures_only():
    # evaluate(measures=...) without k keeps only the asked measures in the summary; the
    # metric-at-k plot reads the spec's columns from per_query, with the summary's means
    demo = rev.load_demo()
    runs = rev.in_given_order(demo.runs)
    full = rev.evaluate(demo.judgments, runs, k=(1, 5, 10), queries=demo.queries)
    asked = rev.evaluate(demo.judgments, runs, queries=demo.queries, measures=["nDCG@10"])
    assert "recall@5" not in asked.summary.columns
    got = asked.plot("metric_at_k").values
    want = full.plot("metric_at_k").values
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=0, atol=1e-12)
    assert got["value"].notna().all()
