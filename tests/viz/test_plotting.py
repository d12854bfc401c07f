"""Plotting helpers: precomputed values against hand-computed ones, and the Display contract
(``plot`` returns self with ``ax_``/``figure_``, draws on a given ax, never calls ``plt.show``,
and importing the module does not import matplotlib)."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from retrieval_eval import viz as P
from retrieval_eval.analysis.calibration import calibrate
from retrieval_eval.analysis.drift import DriftResult, DriftSummary
from retrieval_eval.analysis.evaluation import evaluate

# Student-t 0.975 quantiles from a printed table (independent of retrieval_eval.analysis.stats).
T975 = {1: 12.706204736174707, 2: 4.302652729911275}


@pytest.fixture(autouse=True)
def _no_show_and_close(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("plt.show() must never be called")

    monkeypatch.setattr(plt, "show", boom)
    yield
    plt.close("all")


# --------------------------------------------------------------------------------------------
# A small calibration: positives' top-1 [0.9, 0.8, 0.7, 0.6], negatives' [0.2, 0.6, 0.1].

POS = [0.9, 0.8, 0.7, 0.6]
NEG = [0.2, 0.6, 0.1]


def _small_run(system="dense", pos=POS, neg=NEG):
    run, judgments = [], []
    for i, s in enumerate(pos):
        run.append({"system": system, "query_id": f"p{i}", "ranking": [f"d{i}", "x"], "scores": [s, s / 2]})
        judgments.append({"query_id": f"p{i}", "query": f"covered question {i}", "doc_uri": f"d{i}", "relevance": 1})
    for i, s in enumerate(neg):
        run.append({"system": system, "query_id": f"n{i}", "ranking": [f"e{i}"], "scores": [s]})
    negatives = [f"n{i}" for i in range(len(neg))]
    return run, judgments, negatives


@pytest.fixture(scope="module")
def small_cal():
    run, judgments, negatives = _small_run()
    return calibrate(judgments, run, negatives=negatives, n_resamples=10)


def _rrf_cal():
    """Two systems: a cosine-like one and an RRF one whose scores are 1/(60 + rank)."""
    rng = np.random.default_rng(7)
    run, judgments, negatives = [], [], []
    for i in range(12):
        judgments.append({"query_id": f"p{i}", "doc_uri": f"d{i}", "relevance": 1})
        s = float(rng.uniform(0.55, 0.9))
        run.append({"system": "dense", "query_id": f"p{i}", "ranking": [f"d{i}", "x"], "scores": [s, s - 0.05]})
        run.append({"system": "rrf", "query_id": f"p{i}", "ranking": [f"d{i}", "x"], "scores": [1 / 61, 1 / 62]})
    for i in range(12):
        negatives.append(f"n{i}")
        s = float(rng.uniform(0.1, 0.5))
        run.append({"system": "dense", "query_id": f"n{i}", "ranking": ["y", "z"], "scores": [s, s - 0.05]})
        run.append({"system": "rrf", "query_id": f"n{i}", "ranking": ["y", "z"], "scores": [1 / 61, 1 / 62]})
    return calibrate(judgments, run, negatives=negatives, n_resamples=10)


# --------------------------------------------------------------------------------------------
# Precomputed values.


def test_tradeoff_curve_values_at_given_cutoffs(small_cal):
    d = P.CutoffTradeoffDisplay.from_calibration(small_cal, cutoffs=[0.05, 0.1, 0.6, 0.65, 0.95])
    c = d.curve
    assert c["cutoff"].tolist() == [0.05, 0.1, 0.6, 0.65, 0.95]
    # negatives strictly below c; positives at or above c
    np.testing.assert_allclose(c["negative_satisfaction"], [0, 0, 2 / 3, 1, 1], atol=1e-12)
    np.testing.assert_allclose(c["positive_retention"], [1, 1, 1, 3 / 4, 0], atol=1e-12)


def test_tradeoff_default_grid_contains_every_observed_score_and_the_chosen_cutoff(small_cal):
    d = P.CutoffTradeoffDisplay.from_calibration(small_cal)
    grid = d.curve["cutoff"].to_numpy()
    assert set(POS + NEG) <= set(grid.tolist())
    assert np.all(np.diff(grid) > 0)
    ch = d.chosen.loc["dense"]
    # p10 of [0.6, 0.7, 0.8, 0.9] with linear interpolation: 0.6 + 0.3 * 0.1 = 0.63
    assert ch["cutoff"] == pytest.approx(0.63, abs=1e-12)
    assert ch["negative_satisfaction"] == pytest.approx(1.0)
    assert ch["positive_retention"] == pytest.approx(0.75)


def test_tradeoff_from_sweep_adds_engine_recall(small_cal):
    from retrieval_eval.analysis.calibration import cutoff_sweep

    run, judgments, negatives = _small_run()
    sweep = cutoff_sweep(judgments, run, negatives=negatives, cutoffs=[0.1, 0.63, 0.85], k=10)
    d = P.CutoffTradeoffDisplay.from_sweep(sweep, small_cal)
    np.testing.assert_allclose(d.curve["positive_retention"], [1, 0.75, 0.25])
    # one relevant doc per positive, ranked first: recall@10 after the cut = retention
    np.testing.assert_allclose(d.curve["recall@10"], [1, 0.75, 0.25])
    d.plot()
    assert set(d.lines_["dense"]) == {"negative_satisfaction", "positive_retention", "recall@10"}
    assert d.ax_.get_ylabel() == "share of queries; recall@10"
    assert d.cutoff_lines_["dense"].get_xdata()[0] == pytest.approx(0.63)


def test_roc_points_and_area_match_hand_computation(small_cal):
    d = P.RocCurveDisplay.from_calibration(small_cal)
    c = d.curve[d.curve["system"] == "dense"]
    np.testing.assert_allclose(c["threshold"], [np.inf, 0.9, 0.8, 0.7, 0.6, 0.2, 0.1])
    np.testing.assert_allclose(c["fpr"], [0, 0, 0, 0, 1 / 3, 2 / 3, 1], atol=1e-12)
    np.testing.assert_allclose(c["tpr"], [0, 0.25, 0.5, 0.75, 1, 1, 1], atol=1e-12)
    # Mann-Whitney with the 0.6/0.6 tie counted 1/2: 11.5 / 12
    assert d.auroc["dense"] == pytest.approx(11.5 / 12, abs=1e-12)
    area = float(np.sum(np.diff(c["fpr"]) * (c["tpr"].to_numpy()[1:] + c["tpr"].to_numpy()[:-1]) / 2))
    assert area == pytest.approx(d.auroc["dense"], abs=1e-12)


def test_precision_recall_points_and_average_precision(small_cal):
    d = P.PrecisionRecallDisplay.from_calibration(small_cal)
    c = d.curve
    np.testing.assert_allclose(c["recall"], [0, 0.25, 0.5, 0.75, 1, 1, 1], atol=1e-12)
    np.testing.assert_allclose(c["precision"], [1, 1, 1, 1, 4 / 5, 4 / 6, 4 / 7], atol=1e-12)
    # AP = sum over thresholds of (delta recall) * precision = 0.25 * (1 + 1 + 1 + 0.8)
    assert d.aupr["dense"] == pytest.approx(0.95, abs=1e-12)
    assert d.prevalence["dense"] == pytest.approx(4 / 7)


def test_precision_recall_out_treats_negatives_as_the_class(small_cal):
    d = P.PrecisionRecallDisplay.from_calibration(small_cal, positive="out")
    c = d.curve
    # negatives by ascending score: 0.1 (N), 0.2 (N), 0.6 (N and P tie), ...
    np.testing.assert_allclose(c["recall"].to_numpy()[:4], [0, 1 / 3, 2 / 3, 1], atol=1e-12)
    np.testing.assert_allclose(c["precision"].to_numpy()[:4], [1, 1, 1, 3 / 4], atol=1e-12)
    assert d.aupr["dense"] == pytest.approx(small_cal.summary.loc["dense", "aupr_out"])


def test_score_distribution_holds_each_class_and_the_calibration_figures(small_cal):
    d = P.ScoreDistributionDisplay.from_calibration(small_cal, score_label="cosine")
    pos = d.scores.loc[d.scores["kind"] == "positive", "top1_score"].tolist()
    neg = d.scores.loc[d.scores["kind"] == "negative", "top1_score"].tolist()
    assert sorted(pos) == sorted(POS) and sorted(neg) == sorted(NEG)
    st = d.stats.loc["dense"]
    assert st["cutoff"] == pytest.approx(0.63)
    assert st["separation_margin"] == pytest.approx(0.75 - 0.2)
    assert st["auroc"] == pytest.approx(11.5 / 12)


def test_score_distribution_draws_cutoff_and_labels(small_cal):
    d = P.ScoreDistributionDisplay.from_calibration(small_cal, score_label="cosine").plot()
    ax = d.ax_
    assert ax.get_xlabel() == "top-1 score (cosine)"
    assert ax.get_ylabel().startswith("share of queries")
    line = d.cutoff_lines_["dense"]
    assert line.get_xdata()[0] == pytest.approx(0.63)
    assert line.get_label() == "cutoff 0.630 (p10 of positives)"
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "positives (n=4)" in texts and any(t.startswith("negatives") and "n=3" in t for t in texts)
    title = ax.get_legend().get_title().get_text()
    assert "AUROC 0.958" in title and "separation margin 0.550" in title
    assert d.notes_ == {}


def test_fixed_cutoff_is_labelled_fixed():
    run, judgments, negatives = _small_run()
    cal = calibrate(judgments, run, negatives=negatives, cutoff=0.5, n_resamples=10)
    d = P.ScoreDistributionDisplay.from_calibration(cal).plot()
    assert d.cutoff_lines_["dense"].get_label() == "cutoff 0.500 (fixed)"
    assert d.ax_.get_xlabel() == "top-1 score"


def test_rank_based_system_gets_a_note_and_several_systems_a_row_of_axes():
    cal = _rrf_cal()
    assert bool(cal.summary.loc["rrf", "rank_based"]) and not bool(cal.summary.loc["dense", "rank_based"])
    d = P.ScoreDistributionDisplay.from_calibration(cal).plot()
    assert len(d.axes_) == 2 and d.ax_.shape == (2,)
    assert set(d.notes_) == {"rrf"}
    assert d.notes_["rrf"].get_text() == P.RANK_BASED_NOTE
    assert d.notes_["rrf"].axes is d.axes_[1]
    t = P.CutoffTradeoffDisplay.from_calibration(cal).plot()
    assert set(t.notes_) == {"rrf"}
    roc = P.RocCurveDisplay.from_calibration(cal).plot()
    assert "(rank-based)" in roc.lines_["rrf"].get_label()
    assert "(rank-based)" not in roc.lines_["dense"].get_label()


def test_from_predictions_goes_through_calibration():
    y = [True] * 4 + [False] * 3
    s = POS + NEG
    roc = P.RocCurveDisplay.from_predictions(y, s, name="m")
    assert roc.auroc["m"] == pytest.approx(11.5 / 12)
    pr = P.PrecisionRecallDisplay.from_predictions(y, s)
    assert pr.aupr["system"] == pytest.approx(0.95)
    dist = P.ScoreDistributionDisplay.from_predictions(y, s, cutoff=0.65)
    assert dist.stats.loc["system", "cutoff"] == 0.65
    tr = P.CutoffTradeoffDisplay.from_predictions(y, s, cutoffs=[0.65])
    assert tr.curve["negative_satisfaction"].tolist() == [1.0]
    with pytest.raises(ValueError, match="values"):
        P.RocCurveDisplay.from_predictions([True], [0.1, 0.2])


# --------------------------------------------------------------------------------------------
# Evaluation displays on a hand case (k = 1, 2).
#   stratum A: qa1 {d1, d2}, qa2 {d3}, qa3 {d4, d5};  stratum B: qb1 {d6}, qb2 {d7, d8}
#   s1 recall@2: qa1 .5, qa2 1, qa3 0, qb1 1, qb2 1     recall@1: .5, 1, 0, 1, .5
#   s2 recall@2: qa1 1, qa2 0, qa3 .5, qb1 0, qb2 .5    recall@1: .5, 0, .5, 0, .5

LABELS = {
    "qa1": ("A", ["d1", "d2"]),
    "qa2": ("A", ["d3"]),
    "qa3": ("A", ["d4", "d5"]),
    "qb1": ("B", ["d6"]),
    "qb2": ("B", ["d7", "d8"]),
}
RANKINGS = {
    "s1": {"qa1": ["d1", "x"], "qa2": ["d3"], "qa3": ["x", "y"], "qb1": ["d6"], "qb2": ["d7", "d8"]},
    "s2": {"qa1": ["d1", "d2"], "qa2": ["x"], "qa3": ["d4"], "qb1": ["x"], "qb2": ["d7"]},
}


HAND_JUDGMENTS = [
    {"query_id": q, "doc_uri": d, "relevance": 1, "stratum": st} for q, (st, docs) in LABELS.items() for d in docs
]
HAND_RUN = [{"system": s, "query_id": q, "ranking": r} for s, by_q in RANKINGS.items() for q, r in by_q.items()]


@pytest.fixture(scope="module")
def hand_ev():
    return evaluate(HAND_JUDGMENTS, HAND_RUN, k=(1, 2))


def test_stratum_values_intervals_and_worst(hand_ev):
    d = P.StratumDisplay.from_evaluation(hand_ev, "recall", k=2)
    v = d.values
    assert d.metric == "recall@2"
    assert v.loc[("s1", "A"), "value"] == pytest.approx(0.5)
    assert v.loc[("s1", "B"), "value"] == pytest.approx(1.0)
    assert v.loc[("s2", "B"), "value"] == pytest.approx(0.25)
    assert v.loc[("s1", "A"), "n"] == 3 and v.loc[("s1", "B"), "n"] == 2
    half_a = T975[2] * 0.5 / np.sqrt(3)  # values .5, 1, 0: sd .5
    # The t interval 0.5 -/+ 0.742 leaves [0, 1] on both sides: clipped to the metric's range.
    assert 0.5 - half_a < 0 and 0.5 + half_a > 1
    assert v.loc[("s1", "A"), "ci_low"] == 0.0
    assert v.loc[("s1", "A"), "ci_high"] == 1.0
    half_b = T975[1] * np.sqrt(0.125) / np.sqrt(2)  # values 0, .5: sd sqrt(.125)
    assert 0.25 - half_b < 0 and 0.25 + half_b > 1  # 0.25 -/+ 3.18 over two queries
    assert (v.loc[("s2", "B"), "ci_low"], v.loc[("s2", "B"), "ci_high"]) == (0.0, 1.0)
    assert v.loc[("s1", "B"), "ci_low"] == pytest.approx(1.0)  # sd 0: zero-width
    assert v["worst"].to_dict() == {("s1", "A"): True, ("s1", "B"): False, ("s2", "A"): False, ("s2", "B"): True}


def test_stratum_plot_labels_n_and_highlights_worst(hand_ev):
    d = P.StratumDisplay.from_evaluation(hand_ev, "recall@2").plot()
    labels = [t.get_text() for t in d.ax_.get_yticklabels()]
    assert labels == ["A", "B"]
    # n beside each bar, strata below THIN_STRATUM (5) queries marked thin
    assert [t.get_text() for t in d.n_labels_["s1"]] == ["n=3 thin", "n=2 thin"]
    assert set(d.bars_) == {"s1", "s2"} and len(d.bars_["s1"].patches) == 2
    assert len(d.worst_) == 2
    assert d.bars_["s1"].patches[0] in d.worst_ and d.bars_["s2"].patches[1] in d.worst_
    assert all(p.get_hatch() == "///" for p in d.worst_)
    assert d.ax_.get_xlabel().startswith("Recall@2")  # the readable name (viz.labels)


def test_stratum_interval_skipped_for_single_query():
    judgments = [
        {"query_id": "q1", "doc_uri": "d1", "relevance": 1, "stratum": "solo"},
        {"query_id": "q2", "doc_uri": "d2", "relevance": 1, "stratum": "pair"},
        {"query_id": "q3", "doc_uri": "d3", "relevance": 1, "stratum": "pair"},
    ]
    run = [
        {"query_id": "q1", "ranking": ["d1"]},
        {"query_id": "q2", "ranking": ["d2"]},
        {"query_id": "q3", "ranking": ["x"]},
    ]
    d = P.StratumDisplay.from_evaluation(evaluate(judgments, run, k=1), "recall")
    assert np.isnan(d.values.loc[("run", "solo"), "ci_low"])
    assert np.isfinite(d.values.loc[("run", "pair"), "ci_low"])
    d.plot()


def test_metric_at_k_values(hand_ev):
    d = P.MetricAtKDisplay.from_evaluation(hand_ev, "recall")
    v = d.values.set_index(["system", "k"])["value"]
    assert v[("s1", 1)] == pytest.approx(0.6) and v[("s1", 2)] == pytest.approx(0.7)
    assert v[("s2", 1)] == pytest.approx(0.3) and v[("s2", 2)] == pytest.approx(0.4)
    d.plot()
    np.testing.assert_allclose(d.lines_["s2"].get_ydata(), [0.3, 0.4])
    assert list(d.ax_.get_xticks()) == [1, 2]


def test_per_query_delta_order_and_counts(hand_ev):
    d = P.PerQueryDeltaDisplay.from_evaluation(hand_ev, "recall", k=2, baseline="s1", candidate="s2")
    assert d.deltas["query_id"].tolist() == ["qa1", "qa3", "qb2", "qa2", "qb1"]
    np.testing.assert_allclose(d.deltas["delta"], [0.5, 0.5, -0.5, -1, -1])
    assert d.counts == {"wins": 2, "losses": 3, "ties": 0}
    d.plot()
    heights = [p.get_height() for p in d.bars_.patches]
    np.testing.assert_allclose(heights, [0.5, 0.5, -0.5, -1, -1])
    assert [t.get_text() for t in d.ax_.get_xticklabels()] == ["qa1", "qa3", "qb2", "qa2", "qb1"]
    # a bar takes the colour of the system that did better: wins s2's, losses s1's
    colors = {matplotlib.colors.to_hex(p.get_facecolor()) for p in d.bars_.patches[:2]}
    assert colors == {P.system_colors(["s1", "s2"])["s2"].lower()}
    colors = {matplotlib.colors.to_hex(p.get_facecolor()) for p in d.bars_.patches[2:]}
    assert colors == {P.system_colors(["s1", "s2"])["s1"].lower()}


def test_per_query_delta_from_a_comparison():
    compare = pytest.importorskip("retrieval_eval.analysis.decisions.compare")
    cmp = compare.compare(
        HAND_JUDGMENTS, HAND_RUN, baseline="s1", k=2, metrics=["recall"], n_resamples=20, calibration=False
    )
    d = P.PerQueryDeltaDisplay.from_comparison(cmp, "recall")
    assert (d.baseline, d.candidate, d.metric) == ("s1", "s2", "recall@2")
    assert d.deltas["query_id"].tolist() == ["qa1", "qa3", "qb2", "qa2", "qb1"]
    np.testing.assert_allclose(d.deltas["delta"], [0.5, 0.5, -0.5, -1, -1])
    assert P.plot_comparison(cmp).counts == {"wins": 2, "losses": 3, "ties": 0}
    with pytest.raises(ValueError, match="not compared"):
        P.PerQueryDeltaDisplay.from_comparison(cmp, "ndcg")


def test_score_label_can_name_each_systems_score():
    cal = _rrf_cal()
    d = P.ScoreDistributionDisplay.from_calibration(cal, score_label={"dense": "cosine"}).plot()
    assert [a.get_xlabel() for a in d.axes_] == ["top-1 score (cosine)", "top-1 score"]


def test_per_query_delta_defaults_to_the_two_systems_and_needs_names_otherwise(hand_ev):
    d = P.PerQueryDeltaDisplay.from_evaluation(hand_ev, "recall@2")
    assert (d.baseline, d.candidate) == ("s1", "s2")
    with pytest.raises(ValueError, match="no system"):
        P.PerQueryDeltaDisplay.from_evaluation(hand_ev, "recall@2", baseline="s1", candidate="zz")


# --------------------------------------------------------------------------------------------
# Drift.


def _drift_result():
    findings = pd.DataFrame(
        {c: pd.Series([], dtype="string") for c in ("query_id", "doc_uri", "chunk_id", "status", "reanchor_to")}
    )
    summary = DriftSummary(valid=5, re_anchorable=1, merged=0, split=2, orphaned=3, invalid_ratio=6 / 11)
    return DriftResult(findings=findings, summary=summary)


def test_drift_counts_in_status_order():
    d = P.DriftDisplay.from_drift(_drift_result())
    assert list(d.counts.index) == ["VALID", "RE_ANCHORABLE", "MERGED", "SPLIT", "ORPHANED"]
    assert d.counts.tolist() == [5, 1, 0, 2, 3]
    d.plot()
    assert [p.get_height() for p in d.bars_.patches] == [5, 1, 0, 2, 3]
    assert d.ax_.get_title() == "label drift: 54.5% not VALID (of 11)"
    assert [t.get_text().split("\n")[0] for t in d.ax_.get_xticklabels()] == list(d.counts.index)


# --------------------------------------------------------------------------------------------
# The Display contract.


def _all_displays(cal, ev):
    return [
        P.ScoreDistributionDisplay.from_calibration(cal),
        P.RocCurveDisplay.from_calibration(cal),
        P.PrecisionRecallDisplay.from_calibration(cal),
        P.CutoffTradeoffDisplay.from_calibration(cal),
        P.StratumDisplay.from_evaluation(ev, "ndcg"),
        P.MetricAtKDisplay.from_evaluation(ev, "ndcg"),
        P.PerQueryDeltaDisplay.from_evaluation(ev, "ndcg"),
        P.DriftDisplay.from_drift(_drift_result()),
    ]


def test_plot_returns_self_with_axes_and_figure(small_cal, hand_ev):
    for disp in _all_displays(small_cal, hand_ev):
        out = disp.plot()
        assert out is disp
        assert disp.figure_ is not None
        ax = disp.axes_[0]
        assert ax.figure is disp.figure_
        plt.close(disp.figure_)


def test_plot_draws_on_the_given_axes(small_cal, hand_ev):
    for disp in _all_displays(small_cal, hand_ev):
        fig, ax = plt.subplots()
        disp.plot(ax=ax)
        assert disp.ax_ is ax and disp.figure_ is fig
        assert len(fig.axes) == 1
        plt.close(fig)


def test_several_systems_accept_an_array_of_axes_of_the_right_size():
    cal = _rrf_cal()
    fig, axes = plt.subplots(1, 2)
    d = P.ScoreDistributionDisplay.from_calibration(cal).plot(ax=axes)
    assert list(d.axes_) == list(axes)
    with pytest.raises(ValueError, match="needs 2"):
        P.CutoffTradeoffDisplay.from_calibration(cal).plot(ax=axes[0])


def test_colours_follow_the_theme(small_cal):
    with plt.style.context("dark_background"):
        d = P.ScoreDistributionDisplay.from_calibration(small_cal).plot()
        fg = matplotlib.colors.to_rgb(plt.rcParams["text.color"])
        assert matplotlib.colors.to_rgb(d.cutoff_lines_["dense"].get_color()) == fg == (1, 1, 1)
    d = P.ScoreDistributionDisplay.from_calibration(small_cal).plot()
    assert matplotlib.colors.to_rgb(d.cutoff_lines_["dense"].get_color()) == (0, 0, 0)


def test_shortcuts_dispatch_and_refuse_unknown_kinds(small_cal, hand_ev):
    assert isinstance(P.plot_calibration(small_cal), P.ScoreDistributionDisplay)
    assert isinstance(P.plot_calibration(small_cal, "roc"), P.RocCurveDisplay)
    pr = P.plot_calibration(small_cal, "pr", positive="out")
    assert isinstance(pr, P.PrecisionRecallDisplay) and pr.positive == "out"
    tr = P.plot_calibration(small_cal, "tradeoff", cutoffs=[0.5, 0.7])
    assert tr.curve["cutoff"].tolist() == [0.5, 0.7]
    assert isinstance(P.plot_evaluation(hand_ev), P.StratumDisplay)
    assert isinstance(P.plot_evaluation(hand_ev, "metric_at_k", metric="mrr"), P.MetricAtKDisplay)
    delta = P.plot_evaluation(hand_ev, "delta", metric="recall", k=2, baseline="s2", candidate="s1")
    assert delta.counts == {"wins": 3, "losses": 2, "ties": 0}
    assert isinstance(P.plot_drift(_drift_result()), P.DriftDisplay)
    fig, ax = plt.subplots()
    assert P.plot_drift(_drift_result(), ax=ax).ax_ is ax
    with pytest.raises(ValueError, match="kind"):
        P.plot_calibration(small_cal, "histogram")
    with pytest.raises(ValueError, match="kind"):
        P.plot_evaluation(hand_ev, "bars")


def test_unknown_system_and_metric_are_refused(small_cal, hand_ev):
    with pytest.raises(ValueError, match="no system 'bm25'"):
        P.RocCurveDisplay.from_calibration(small_cal, system="bm25")
    with pytest.raises(ValueError, match="no metric"):
        P.StratumDisplay.from_evaluation(hand_ev, "recall@7")


def test_importing_plotting_does_not_import_matplotlib():
    """No viz module (nor every public viz name) loads matplotlib or ipywidgets on import."""
    code = (
        "import sys, pkgutil, importlib, retrieval_eval.viz as v; "
        "[importlib.import_module(f'retrieval_eval.viz.{m.name}') "
        "for m in pkgutil.iter_modules(v.__path__)]; [getattr(v, n) for n in v.__all__]; "
        "bad = [m for m in ('matplotlib', 'ipywidgets') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
