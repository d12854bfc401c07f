"""The plot style rules (retrieval_eval.viz.style): one colour per system in every plot, two
reserved colours for positives and negatives, intervals clipped to a bounded metric's range
with n beside each bar, thin strata and small score samples marked, nothing clipped."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_hex

from retrieval_eval import viz as P
from retrieval_eval.analysis.calibration import calibrate
from retrieval_eval.analysis.evaluation import evaluate
from retrieval_eval.viz import style as _style

SYSTEMS = ["alpha", "beta", "gamma", "delta"]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _data(n_strata: int = 3, per_stratum: int = 6, systems=SYSTEMS[:3], seed: int = 1, long_names: bool = False):
    """Runs with scores for ``systems``, judgments in ``n_strata`` strata, and 12 negatives."""
    rng = np.random.default_rng(seed)
    judgments, run, negatives = [], [], []
    for q in range(n_strata * per_stratum):
        stratum = f"stratum {q % n_strata}" + (" with a rather long name" if long_names else "")
        judgments.append({"query_id": f"q{q}", "doc_uri": f"d{q}", "relevance": 1, "stratum": stratum})
        for s in systems:
            docs = list(rng.permutation([f"d{q}", "x", "y"]))
            top = float(rng.uniform(0.5, 0.9))
            run.append({"system": s, "query_id": f"q{q}", "ranking": docs, "scores": [top, top - 0.1, top - 0.2]})
    for q in range(12):
        negatives.append(f"n{q}")
        for s in systems:
            top = float(rng.uniform(0.1, 0.6))
            run.append({"system": s, "query_id": f"n{q}", "ranking": ["y", "z"], "scores": [top, top - 0.1]})
    return judgments, run, negatives


@pytest.fixture(scope="module")
def three():
    judgments, run, negatives = _data()
    ev = evaluate(judgments, run, k=(1, 3), negatives=negatives)
    cal = calibrate(judgments, run, negatives=negatives, n_resamples=10)
    return ev, cal, (judgments, run, negatives)


def _hex(color) -> str:
    return to_hex(color, keep_alpha=False)


def test_system_colours_follow_order_of_first_appearance():
    colors = _style.system_colors(["b", "a", "b", "c"])
    assert list(colors) == ["b", "a", "c"]
    assert list(colors.values()) == list(_style.SYSTEM_COLORS[:3])


def test_positive_and_negative_colours_are_taken_by_no_system():
    reserved = {_style.POSITIVE_COLOR.lower(), _style.NEGATIVE_COLOR.lower(), _style.DARK_POSITIVE_COLOR.lower()}
    for palette in (_style.SYSTEM_COLORS, _style.DARK_SYSTEM_COLORS):
        assert not reserved & {c.lower() for c in palette}
        assert len(set(palette)) == len(palette)


def test_a_system_has_the_same_colour_in_every_plot(three):
    from retrieval_eval.analysis.decisions.compare import compare

    ev, cal, (judgments, run, negatives) = three
    expected = _style.system_colors(ev.systems)
    assert list(expected) == SYSTEMS[:3]
    seen: dict[str, list[str]] = {s: [] for s in expected}
    roc = P.plot_calibration(cal, "roc")
    pr = P.plot_calibration(cal, "pr")
    mak = P.plot_evaluation(ev, "metric_at_k")
    strata = P.plot_evaluation(ev, "strata")
    dist = P.plot_calibration(cal, "distribution")
    tradeoff = P.plot_calibration(cal, "tradeoff")
    for s in expected:
        seen[s] += [
            _hex(roc.lines_[s].get_color()),
            _hex(pr.lines_[s].get_color()),
            _hex(mak.lines_[s].get_color()),
            _hex(strata.bars_[s].patches[0].get_facecolor()),
            _hex(dist.axes_[SYSTEMS.index(s)].title.get_color()),
            _hex(tradeoff.axes_[SYSTEMS.index(s)].title.get_color()),
        ]
    # A plot of one system keeps that system's colour (not the palette's first).
    alone = P.plot_calibration(cal, "roc", system="gamma")
    seen["gamma"].append(_hex(alone.lines_["gamma"].get_color()))
    alone = P.plot_evaluation(ev, "strata", system="gamma")
    seen["gamma"].append(_hex(alone.bars_["gamma"].patches[0].get_facecolor()))
    alone = P.plot_calibration(cal, "distribution", system="gamma")
    seen["gamma"].append(_hex(alone.ax_.title.get_color()))
    # The forest plot leaves the baseline out, and still keeps the candidates' colours.
    forest = compare(
        judgments,
        run,
        baseline="alpha",
        k=3,
        metrics=["recall"],
        n_resamples=50,
        negatives=negatives,
        calibration=False,
    ).plot()
    for s, eb in forest.errorbars_.items():
        seen[s].append(_hex(eb.lines[2][0].get_color()[0]))
    for s, colors in seen.items():
        assert set(colors) == {expected[s].lower()}, s


def test_distribution_classes_use_the_reserved_colours(three):
    _, cal, _ = three
    d = P.plot_calibration(cal, "distribution", system="alpha")
    faces = {_hex(p.get_facecolor()) for p in d.ax_.patches}
    assert faces == {_style.POSITIVE_COLOR.lower(), _style.NEGATIVE_COLOR.lower()}


def _stratum_case(values_a, values_b):
    """One system, two strata with the given per-query recall@1 values (0 or 1 each)."""
    judgments, run = [], []
    for name, values in (("A", values_a), ("B", values_b)):
        for i, v in enumerate(values):
            q = f"{name}{i}"
            judgments.append({"query_id": q, "doc_uri": f"d{q}", "relevance": 1, "stratum": name})
            run.append({"query_id": q, "ranking": [f"d{q}" if v else "x"]})
    return evaluate(judgments, run, k=1)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=12), st.lists(st.booleans(), min_size=2, max_size=12))
def test_interval_artists_lie_within_the_metric_range(values_a, values_b):
    d = P.StratumDisplay.from_evaluation(_stratum_case(values_a, values_b), "recall").plot()
    assert ((d.values["ci_low"] >= 0) & (d.values["ci_high"] <= 1)).all()
    for eb in d.errorbars_.values():
        for segments in eb.lines[2]:
            xs = np.concatenate([seg[:, 0] for seg in segments.get_segments()])
            assert xs.min() >= 0 and xs.max() <= 1
    plt.close("all")


def test_interval_inside_the_range_is_not_clipped():
    # 6 queries, 3 hits: mean 0.5, sd sqrt(0.3), t(5) = 2.5706: 0.5 -/+ 0.5748 -> clipped;
    # 12 queries, 6 hits: sd sqrt(3/11), t(11) = 2.2010: 0.5 -/+ 0.3318, inside [0, 1].
    ev = _stratum_case([1, 0] * 3, [1, 0] * 6)
    v = P.StratumDisplay.from_evaluation(ev, "recall").values
    half = 2.200985160082949 * np.sqrt(3 / 11) / np.sqrt(12)
    assert v.loc[("run", "B"), "ci_low"] == pytest.approx(0.5 - half, abs=1e-9)
    assert v.loc[("run", "B"), "ci_high"] == pytest.approx(0.5 + half, abs=1e-9)
    assert (v.loc[("run", "A"), "ci_low"], v.loc[("run", "A"), "ci_high"]) == (0.0, 1.0)


def test_n_is_written_beside_each_bar_and_thin_strata_are_marked():
    ev = _stratum_case([1, 0, 1, 1], [1, 0, 1, 1, 0])  # 4 queries (thin) and 5 (not)
    d = P.StratumDisplay.from_evaluation(ev, "recall").plot()
    texts = [t.get_text() for t in d.n_labels_["run"]]
    assert texts == ["n=4 thin", "n=5"]
    assert d.values["thin"].tolist() == [True, False]
    assert d.thin_ == [d.bars_["run"].patches[0]]
    legend = [t.get_text() for t in d.legend_.get_texts()]
    assert any("thin" in t and "n < 5" in t for t in legend)
    # each n label sits right of its bar (and interval)
    for text, patch in zip(d.n_labels_["run"], d.bars_["run"].patches):
        assert text.get_position()[0] >= patch.get_width()


def test_a_distribution_with_few_samples_says_so_on_the_plot():
    few = P.ScoreDistributionDisplay.from_predictions([1, 1, 1, 1, 0, 0], [0.9, 0.8, 0.7, 0.3, 0.5, 0.2]).plot()
    note = few.few_samples_["system"]
    assert note.axes is few.ax_
    assert "4 positives, 2 negatives" in note.get_text() and "< 10" in note.get_text()
    enough = P.ScoreDistributionDisplay.from_predictions([1] * 10 + [0] * 10, np.linspace(0, 1, 20)).plot()
    assert enough.few_samples_ == {}


def _outside(fig) -> list[str]:
    """What ``fig`` draws past its own edges: axes whose tight box (title, labels, tick labels,
    legend, notes) leaves the figure, and visible texts of the axes that do."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    whole = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    out = []
    if whole.x0 < box.x0 - 1 or whole.y0 < box.y0 - 1 or whole.x1 > box.x1 + 1 or whole.y1 > box.y1 + 1:
        out.append(f"figure tight box {whole.bounds} beyond {box.bounds}")
    for ax in fig.axes:
        for t in [
            ax.title,
            ax.xaxis.label,
            ax.yaxis.label,
            *ax.texts,
            *(ax.get_legend().get_texts() if ax.get_legend() else []),
        ]:
            if not t.get_visible() or not t.get_text().strip():
                continue
            e = t.get_window_extent(renderer)
            if e.x0 < box.x0 - 1 or e.y0 < box.y0 - 1 or e.x1 > box.x1 + 1 or e.y1 > box.y1 + 1:
                out.append(t.get_text())
    return out


@pytest.mark.parametrize("size", ["default", "4 systems, 8 strata"])
def test_no_title_or_label_is_clipped(size):
    if size == "default":
        judgments, run, negatives = _data()
    else:
        judgments, run, negatives = _data(n_strata=8, per_stratum=3, systems=SYSTEMS, long_names=True)
    ev = evaluate(judgments, run, k=(1, 3), negatives=negatives)
    cal = calibrate(judgments, run, negatives=negatives, n_resamples=10)
    displays = [P.plot_calibration(cal, k) for k in ("roc", "pr", "distribution", "tradeoff")]
    displays += [P.plot_calibration(cal, "pr", positive="out")]
    displays += [P.plot_evaluation(ev, k) for k in ("strata", "metric_at_k")]
    displays += [P.plot_evaluation(ev, "delta", baseline="alpha", candidate="beta")]
    for d in displays:
        fig = d.figure_
        assert _outside(fig) == [], type(d).__name__
        title = fig.axes[0].title
        assert fig.bbox.contains(*title.get_window_extent().p0)
        assert fig.bbox.contains(*title.get_window_extent().p1)


def test_a_demo_system_has_one_colour_whatever_subset_a_plot_draws():
    # issue 28, item 7: a comparison's candidates (dense, rrf, without the baseline bm25) drew
    # rrf in bm25's colour, so rrf was pink in one notebook and orange in another
    full = _style.system_colors(["dense", "bm25", "rrf"])
    for subset in (["dense", "rrf"], ["rrf"], ["rrf", "dense"], ["bm25", "rrf"]):
        assert _style.system_colors(subset) == {s: full[s] for s in subset}


def test_pinned_systems_keep_their_colour_and_the_others_take_free_slots():
    try:
        _style.pin_system_colors(["base", "new"])
        assert _style.system_colors(["new"]) == {"new": _style.SYSTEM_COLORS[1]}
        assert _style.system_colors(["other", "new"]) == {
            "other": _style.SYSTEM_COLORS[0],
            "new": _style.SYSTEM_COLORS[1],
        }
    finally:
        _style.pin_system_colors(["dense", "bm25", "rrf"])
