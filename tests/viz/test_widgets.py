"""The cutoff explorer: driving the slider and the system dropdown from code updates the
numbers (checked against hand-computed values) and the query lists."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest

pytest.importorskip("ipywidgets")

from retrieval_eval.analysis.calibration import calibrate
from retrieval_eval.viz.widgets import CutoffExplorer, explore_cutoff

# System A: positives' top-1 0.9, 0.8, 0.7, 0.6 (cutoff p10 = 0.63); negatives 0.2, 0.6, 0.1.
# System B: positives' top-1 0.5, 0.45, 0.3, 0.2 (cutoff p10 = 0.23); negatives 0.35, 0.1, 0.05.
RUN = [
    {"system": "A", "query_id": "p0", "ranking": ["a", "b"], "scores": [0.9, 0.5]},
    {"system": "A", "query_id": "p1", "ranking": ["c", "x"], "scores": [0.8, 0.75]},
    {"system": "A", "query_id": "p2", "ranking": ["x", "d"], "scores": [0.7, 0.65]},
    {"system": "A", "query_id": "p3", "ranking": ["e"], "scores": [0.6]},
    {"system": "A", "query_id": "n0", "ranking": ["y"], "scores": [0.2]},
    {"system": "A", "query_id": "n1", "ranking": ["y"], "scores": [0.6]},
    {"system": "A", "query_id": "n2", "ranking": ["y"], "scores": [0.1]},
    {"system": "B", "query_id": "p0", "ranking": ["a", "b"], "scores": [0.5, 0.4]},
    {"system": "B", "query_id": "p1", "ranking": ["c"], "scores": [0.45]},
    {"system": "B", "query_id": "p2", "ranking": ["d"], "scores": [0.3]},
    {"system": "B", "query_id": "p3", "ranking": ["e"], "scores": [0.2]},
    {"system": "B", "query_id": "n0", "ranking": ["y"], "scores": [0.35]},
    {"system": "B", "query_id": "n1", "ranking": ["y"], "scores": [0.1]},
    {"system": "B", "query_id": "n2", "ranking": ["y"], "scores": [0.05]},
]
JUDGMENTS = [
    {"query_id": "p0", "query": "what is a", "doc_uri": "a", "relevance": 1},
    {"query_id": "p0", "query": "what is a", "doc_uri": "b", "relevance": 1},
    {"query_id": "p1", "query": "what is c", "doc_uri": "c", "relevance": 1},
    {"query_id": "p2", "query": "what is d", "doc_uri": "d", "relevance": 1},
    {"query_id": "p3", "query": "what is e <b>", "doc_uri": "e", "relevance": 1},
]
QUERIES = [
    {"query_id": "n0", "query": "weather on mars", "expect_none": True},
    {"query_id": "n1", "query": "best pizza in town", "expect_none": True},
    {"query_id": "n2", "query": "lottery numbers", "expect_none": True},
]


@pytest.fixture(scope="module")
def cal():
    return calibrate(JUDGMENTS, RUN, queries=QUERIES, n_resamples=10)


@pytest.fixture
def explorer(cal):
    return explore_cutoff(cal, run=RUN, judgments=JUDGMENTS, k=10, plot=False)


def test_starts_at_the_calibrated_cutoff_of_the_first_system(explorer):
    s = explorer.state()
    assert explorer.system.value == "A" and list(explorer.system.options) == ["A", "B"]
    assert explorer.slider.value == pytest.approx(0.63)
    assert (explorer.slider.min, explorer.slider.max) == pytest.approx((0.1, 0.9))
    assert s["negative_satisfaction"] == pytest.approx(1.0)
    assert s["positive_retention"] == pytest.approx(0.75)
    # p0 keeps a (0.9) not b (0.5): 1/2; p1 1; p2 keeps d (0.65): 1; p3 loses e (0.6): 0
    assert s["recall@10"] == pytest.approx(2.5 / 4)
    assert s["recall@10 without cutoff"] == pytest.approx(1.0)
    assert s["negatives_above"] == [] and s["positives_below"] == ["p3"]


@pytest.mark.parametrize(
    "cutoff, neg_sat, pos_ret, recall, above, below",
    [
        (0.6, 2 / 3, 1.0, 3.5 / 4, ["n1"], []),  # a hit exactly at the cutoff stays
        (0.68, 1.0, 3 / 4, 1.5 / 4, [], ["p3"]),  # p2 keeps only x (0.7), not d (0.65)
        (0.3, 2 / 3, 1.0, 1.0, ["n1"], []),
        (0.85, 1.0, 1 / 4, 0.5 / 4, [], ["p3", "p2", "p1"]),
    ],
)
def test_slider_updates_numbers_and_lists(explorer, cutoff, neg_sat, pos_ret, recall, above, below):
    explorer.slider.value = cutoff
    s = explorer.state()
    assert s["cutoff"] == pytest.approx(cutoff)
    assert s["negative_satisfaction"] == pytest.approx(neg_sat, abs=1e-12)
    assert s["positive_retention"] == pytest.approx(pos_ret, abs=1e-12)
    assert s["recall@10"] == pytest.approx(recall, abs=1e-12)
    assert s["negatives_above"] == above and s["positives_below"] == below
    assert f"{neg_sat:.1%} of 3" in explorer.numbers.value
    assert f"{recall:.3f}" in explorer.numbers.value


def test_switching_system_resets_range_and_cutoff(explorer):
    explorer.slider.value = 0.85
    explorer.system.value = "B"
    s = explorer.state()
    assert s["system"] == "B"
    assert explorer.slider.value == pytest.approx(0.23)
    assert (explorer.slider.min, explorer.slider.max) == pytest.approx((0.05, 0.5))
    assert s["negative_satisfaction"] == pytest.approx(2 / 3)
    assert s["positive_retention"] == pytest.approx(3 / 4)
    assert s["recall@10"] == pytest.approx(3 / 4)  # p0 keeps a and b; p3 (0.2) loses e
    assert s["negatives_above"] == ["n0"] and s["positives_below"] == ["p3"]
    explorer.slider.value = 0.42
    s = explorer.state()
    assert s["positive_retention"] == pytest.approx(2 / 4)
    assert s["recall@10"] == pytest.approx(1.5 / 4)  # p0 keeps a only, p1 keeps c
    explorer.system.value = "A"
    assert explorer.slider.value == pytest.approx(0.63)
    assert explorer.state()["recall@10"] == pytest.approx(2.5 / 4)


def test_lists_show_query_text_escaped_and_are_capped(cal):
    ex = explore_cutoff(cal, run=RUN, judgments=JUDGMENTS, plot=False, max_rows=2)
    ex.slider.value = 0.85
    html = ex.lists.value
    assert "what is e &lt;b&gt;" in html and "<b>" in html  # text escaped, our markup kept
    assert "what is d" in html and "what is c" not in html  # p3, p2 shown; p1 cut
    assert "and 1 more" in html
    ex.slider.value = 0.15
    assert "best pizza in town" in ex.lists.value and "weather on mars" in ex.lists.value


def test_without_judgments_recall_is_not_available(cal):
    ex = explore_cutoff(cal, plot=False)
    assert ex.state()["recall@10"] is None
    assert "pass run= and judgments=" in ex.numbers.value
    ex.slider.value = 0.6
    assert ex.state()["negative_satisfaction"] == pytest.approx(2 / 3)


def test_run_defaults_to_the_calibrations_rows(cal):
    ex = explore_cutoff(cal, judgments=JUDGMENTS, plot=False)
    ex.slider.value = 0.68
    assert ex.state()["recall@10"] == pytest.approx(1.5 / 4)


def test_slider_at_its_maximum_keeps_only_the_best_hit(explorer):
    explorer.slider.value = explorer.slider.max
    s = explorer.state()
    assert s["cutoff"] == pytest.approx(0.9)
    assert s["positive_retention"] == pytest.approx(1 / 4)
    assert s["recall@10"] == pytest.approx(0.5 / 4)


def test_a_cut_that_leaves_no_hit_scores_every_positive_zero(explorer):
    # Above every score the cut run is empty: the engine scores each positive as missing.
    assert explorer._recall("A", 0.95) == 0.0


def test_plot_is_rendered_and_follows_the_slider(cal):
    ex = explore_cutoff(cal, run=RUN, judgments=JUDGMENTS, plot=True, dpi=30)
    assert isinstance(ex, CutoffExplorer)
    first = ex.image.value
    assert first[:8] == b"\x89PNG\r\n\x1a\n"
    ex.slider.value = 0.3
    assert ex._line.get_xdata()[0] == pytest.approx(0.3)
    assert ex.image.value != first
    assert ex.image in ex.widget.children
    assert "application/vnd.jupyter.widget-view+json" in ex._repr_mimebundle_()


# --------------------------------------------------------------------------------------------
# The static fallback (what nbconvert and code hosts show) and a missing ipywidgets.


def test_display_carries_a_static_fallback_of_the_current_state(cal):
    import base64

    ex = explore_cutoff(cal, run=RUN, judgments=JUDGMENTS, plot=True, dpi=30)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live view stays first
    png = base64.b64decode(bundle["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == ex.image.value
    page = bundle["text/html"]
    assert "<script" not in page
    assert "data:image/png;base64," + bundle["image/png"] in page  # the plot, embedded
    # A starts at its calibrated cutoff 0.63: all 3 negatives below, 3 of 4 positives kept.
    assert "0.63 (calibrated 0.63)" in page
    assert "100.0% of 3" in page and "75.0% of 4" in page
    assert "CutoffExplorer(system='A'" in bundle["text/plain"]
    ex.slider.value = 0.3  # n1 (0.6) above: 2 of 3 negatives below; every positive kept
    page = ex._repr_mimebundle_()["text/html"]
    assert "66.7% of 3" in page and "100.0% of 4" in page and "best pizza in town" in page


def test_sweep_table_holds_hand_computed_shares(cal):
    ex = explore_cutoff(cal, plot=False)
    sweep = ex.sweep(rows=3)  # A's scores span 0.1 .. 0.9: 0.1, 0.5, 0.9, plus 0.63 (both)
    assert sweep["cutoff"].tolist() == pytest.approx([0.1, 0.5, 0.63, 0.9])
    # negatives 0.2, 0.6, 0.1 (share < c); positives 0.9, 0.8, 0.7, 0.6 (share >= c)
    assert sweep["negative_satisfaction"].tolist() == pytest.approx([0, 2 / 3, 1, 1])
    assert sweep["positive_retention"].tolist() == pytest.approx([1, 1, 0.75, 0.25])
    assert sweep["explored"].tolist() == [False, False, True, False]
    assert sweep["calibrated"].tolist() == [False, False, True, False]
    html = ex.static_html()
    assert "<b>sweep</b>" in html and "66.7%" in html and "explored / calibrated" in html


def test_the_plot_shows_the_systems_own_colour(cal):
    from matplotlib.colors import to_hex

    from retrieval_eval.viz.style import system_colors

    ex = explore_cutoff(cal, plot=True, dpi=30)
    ex.system.value = "B"
    title = ex._figure.axes[0].title
    assert to_hex(title.get_color()) == system_colors(["A", "B"])["B"].lower()


def test_a_missing_ipywidgets_gives_one_line_naming_the_extra(cal, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # as after a plain `pip install .`
    with pytest.raises(ImportError) as info:
        explore_cutoff(cal)
    message = str(info.value)
    assert "\n" not in message
    assert "pip install 'retrieval-eval[notebook]'" in message
    assert info.value.__cause__ is None and info.value.__suppress_context__
