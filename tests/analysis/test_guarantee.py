"""Cutoffs with a guarantee: split-conformal retention, Clopper-Pearson refusal, Mondrian strata.

The formulas are checked against scipy (beta quantiles, exact binomial intervals); the promises
are checked by seeded simulation: 2,000 calibration sets drawn from known distributions, every
draw vectorized, the empirical rate compared with the promise within binomial tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from retrieval_eval import apply_cutoff, calibrate, load_demo
from retrieval_eval.analysis.calibration.guarantee import (
    POOLED,
    Guarantee,
    as_guarantee,
    beta_ppf,
    clopper_pearson_lower,
    conformal_cutoff,
    conformal_rank,
    coverage_interval,
)

ID = pd.StringDtype()
DRAWS = 2000


def binomial_tolerance(p: float, draws: int = DRAWS, sigmas: float = 4.0) -> float:
    """Four standard errors of a share over ``draws`` independent draws: a seeded test that
    is wrong by chance about once in 15,000."""
    return sigmas * math.sqrt(p * (1.0 - p) / draws)


def case(pos_by_stratum: dict[str, list[float]], neg: list[float], system: str = "s"):
    """Judgments, run and negatives: one hit per query, positives grouped by stratum."""
    judgments, rows = [], []
    for stratum, scores in pos_by_stratum.items():
        for i, s in enumerate(scores):
            q = f"{stratum}-{i}"
            judgments.append({"query_id": q, "doc_uri": f"d{q}", "relevance": 1, "stratum": stratum})
            rows.append((system, q, 1, f"d{q}", float(s)))
    for i, s in enumerate(neg):
        rows.append((system, f"n{i}", 1, f"dn{i}", float(s)))
    run = pd.DataFrame(rows, columns=["system", "query_id", "rank", "doc_id", "score"])
    for c in ("system", "query_id", "doc_id"):
        run[c] = run[c].astype(ID)
    return judgments, run, [f"n{i}" for i in range(len(neg))]


# -- the formulas ------------------------------------------------------------------------------


def test_conformal_rank_is_floor_of_alpha_times_n_plus_one():
    assert conformal_rank(45, 0.1) == 4  # floor(4.6)
    assert conformal_rank(9, 0.1) == 1  # floor(1.0): 0.1 * 10 is exactly enough
    assert conformal_rank(8, 0.1) == 0  # n + 1 < 1/alpha
    assert conformal_rank(19, 0.05) == 1
    assert list(conformal_rank(np.array([10, 20, 99]), 0.1)) == [1, 2, 10]


def test_conformal_cutoff_is_the_kth_smallest_score():
    scores = [
        0.9,
        0.1,
        0.5,
        0.3,
        0.7,
        0.2,
        0.8,
        0.4,
        0.6,
        0.05,
        0.95,
        0.85,
        0.75,
        0.65,
        0.55,
        0.45,
        0.35,
        0.25,
        0.15,
        0.99,
    ]  # n = 20, alpha 0.1: k = floor(2.1) = 2
    assert conformal_cutoff(scores, 0.1) == 0.1
    assert conformal_cutoff(scores, 0.2) == 0.2  # k = floor(4.2) = 4: 0.05, 0.1, 0.15, 0.2


def test_too_few_scores_give_no_conformal_cutoff():
    assert math.isnan(conformal_cutoff([0.5] * 8, 0.1))


def test_beta_ppf_matches_scipy():
    q = np.array([0.025, 0.05, 0.5, 0.95, 0.975])
    for a, b in ((42, 4), (11, 1), (1, 30), (3.5, 7.25), (300, 20)):
        np.testing.assert_allclose(beta_ppf(q, a, b), sps.beta.ppf(q, a, b), rtol=0, atol=1e-12)


@pytest.mark.parametrize("x,n", [(0, 30), (1, 30), (28, 30), (30, 30), (17, 45), (5, 7)])
@pytest.mark.parametrize("delta", [0.05, 0.1])
def test_clopper_pearson_lower_matches_scipy_binomtest(x, n, delta):
    expected = sps.binomtest(x, n, alternative="greater").proportion_ci(confidence_level=1 - delta, method="exact").low
    assert clopper_pearson_lower(x, n, delta) == pytest.approx(expected, abs=1e-12)


def test_coverage_interval_is_the_beta_of_the_order_statistic():
    cov, lo, hi = coverage_interval(45, 4, 0.05)
    assert cov == pytest.approx(1 - 4 / 46)
    assert lo == pytest.approx(sps.beta.ppf(0.025, 42, 4), abs=1e-12)
    assert hi == pytest.approx(sps.beta.ppf(0.975, 42, 4), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), alpha=st.floats(0.001, 0.5))
def test_marginal_coverage_lies_in_the_finite_sample_interval(n, alpha):
    """1 - alpha <= 1 - k/(n+1) < 1 - alpha + 1/(n+1) whenever a cutoff exists
    (Angelopoulos & Bates 2021, Theorem D.1)."""
    k = conformal_rank(n, alpha)
    if k < 1:
        assert n + 1 < 1 / alpha + 1e-6
        return
    cov = 1 - k / (n + 1)
    assert 1 - alpha - 1e-9 <= cov < 1 - alpha + 1 / (n + 1) + 1e-9


def test_guarantee_accepts_alpha_or_a_mapping():
    assert as_guarantee(0.2) == Guarantee(alpha=0.2)
    assert as_guarantee({"alpha": 0.05, "delta": 0.1}) == Guarantee(0.05, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        as_guarantee(1.5)
    with pytest.raises(TypeError):
        as_guarantee("0.1")


# -- the promises, by simulation --------------------------------------------------------------


def _draws(n: int, seed: int, draws: int = DRAWS) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(draws, n))


@pytest.mark.parametrize("n,alpha", [(45, 0.1), (11, 0.1), (200, 0.05)])
def test_a_new_positive_is_kept_with_the_promised_probability(n, alpha):
    """Marginal coverage: a fresh positive (one per calibration set) scores >= the cutoff
    with probability 1 - k/(n+1) >= 1 - alpha."""
    rng = np.random.default_rng(7)
    calib = rng.normal(size=(DRAWS, n))
    new = rng.normal(size=DRAWS)
    k = conformal_rank(n, alpha)
    cut = np.sort(calib, axis=1)[:, k - 1]
    kept = float(np.mean(new >= cut))
    promise = 1 - k / (n + 1)
    assert promise >= 1 - alpha
    assert abs(kept - promise) <= binomial_tolerance(promise)
    # the exact coverage of each drawn cutoff, averaged: same promise, far less noise
    exact = float(np.mean(sps.norm.sf(cut)))
    assert abs(exact - promise) <= binomial_tolerance(promise) / 4


@pytest.mark.parametrize("n,alpha,delta", [(45, 0.1, 0.05), (11, 0.1, 0.1)])
def test_the_coverage_interval_holds_with_the_stated_confidence(n, alpha, delta):
    """The coverage of the drawn cutoff, 1 - F(C), falls in the central 1 - delta interval in a
    share 1 - delta of calibration sets."""
    calib = _draws(n, 11)
    k = conformal_rank(n, alpha)
    coverage = sps.norm.sf(np.sort(calib, axis=1)[:, k - 1])
    _, lo, hi = coverage_interval(n, k, delta)
    inside = float(np.mean((coverage >= lo) & (coverage <= hi)))
    assert abs(inside - (1 - delta)) <= binomial_tolerance(1 - delta)


def test_the_refusal_lower_bound_holds_with_the_stated_confidence():
    """Negatives ~ N(-2, 1); the true share refused at the drawn cutoff is Phi(C + 2). The
    Clopper-Pearson bound lies below it in at least 1 - delta of the draws."""
    rng = np.random.default_rng(3)
    n_pos, n_neg, alpha, delta = 45, 30, 0.1, 0.05
    cut = np.sort(rng.normal(size=(DRAWS, n_pos)), axis=1)[:, conformal_rank(n_pos, alpha) - 1]
    neg = rng.normal(-2.0, 1.0, size=(DRAWS, n_neg))
    refused = (neg < cut[:, None]).sum(axis=1)
    lower = clopper_pearson_lower(refused, n_neg, delta)
    held = float(np.mean(lower <= sps.norm.cdf(cut + 2.0)))
    assert held >= 1 - delta - binomial_tolerance(1 - delta)


def test_each_stratum_keeps_its_promise_where_a_pooled_cutoff_does_not():
    """Mondrian: strata A ~ N(0, 1) and B ~ N(2, 1). The pooled conformal cutoff sits low, so B
    over-retains and A under-retains; per-stratum cutoffs give each 1 - k/(n+1)."""
    rng = np.random.default_rng(5)
    n, alpha = 40, 0.1
    a = rng.normal(0.0, 1.0, size=(DRAWS, n))
    b = rng.normal(2.0, 1.0, size=(DRAWS, n))
    k = conformal_rank(n, alpha)
    pooled = np.sort(np.c_[a, b], axis=1)[:, conformal_rank(2 * n, alpha) - 1]
    promise = 1 - k / (n + 1)
    for scores, shift in ((a, 0.0), (b, 2.0)):
        own = np.sort(scores, axis=1)[:, k - 1]
        assert abs(np.mean(sps.norm.sf(own - shift)) - promise) <= binomial_tolerance(promise) / 4
    assert np.mean(sps.norm.sf(pooled)) < 1 - alpha  # stratum A: the pooled promise breaks


# -- calibrate(guarantee=..., by="stratum") ---------------------------------------------------


def test_calibrate_with_a_guarantee_uses_the_conformal_cutoff():
    demo = load_demo()
    c = calibrate(demo.judgments, demo.runs, demo.queries, guarantee=0.1)
    pos = c.top1[(c.top1["system"] == "dense") & (c.top1["kind"] == "positive")]["top1_score"]
    assert c.cutoff("dense") == np.sort(pos.to_numpy())[3]  # n = 45: k = 4
    row = c.guarantee[(c.guarantee["system"] == "dense") & (c.guarantee["stratum"] == POOLED)]
    assert int(row["rank"].iloc[0]) == 4 and int(row["n_positive"].iloc[0]) == 45
    assert c.report_block("dense")["method"] == "conformal"
    neg = c.top1[(c.top1["system"] == "dense") & (c.top1["kind"] == "negative")]["top1_score"]
    refused = int((neg < c.cutoff("dense")).sum())
    assert int(row["negatives_refused"].iloc[0]) == refused
    assert float(row["negative_satisfaction_lower"].iloc[0]) == pytest.approx(
        sps.binomtest(refused, len(neg), alternative="greater").proportion_ci(0.95).low, abs=1e-12
    )


def test_default_calibration_has_no_guarantee_block():
    demo = load_demo()
    c = calibrate(demo.judgments, demo.runs, demo.queries)
    assert c.guarantee is None
    assert "guarantee" not in c.to_dict() and "guarantee" not in c.report_block("dense")
    assert c.report_block("dense")["method"] == "quantile"


def test_too_few_positives_for_alpha_give_no_cutoff_and_say_so():
    j, r, negs = case({"a": [0.5, 0.6, 0.7, 0.8, 0.9]}, [0.1] * 10)
    c = calibrate(j, r, negatives=negs, guarantee=0.1)
    assert math.isnan(c.cutoff("s"))
    assert any("too few for a retention guarantee" in w for w in c.warnings)
    with pytest.raises(ValueError, match="no cutoff"):
        apply_cutoff(r, c)


def test_a_fixed_cutoff_is_kept_under_a_guarantee():
    j, r, negs = case({"a": list(np.linspace(0.5, 1.0, 20))}, [0.1] * 10)
    c = calibrate(j, r, negatives=negs, guarantee=0.1, cutoff=0.42)
    assert c.cutoff("s") == 0.42
    assert c.report_block("s")["method"] == "fixed"


def test_each_stratum_is_calibrated_on_its_own_positives():
    a = list(np.linspace(0.20, 0.80, 19))  # n = 19, alpha 0.1: k = 2
    b = list(np.linspace(0.60, 0.95, 19))
    j, r, negs = case({"a": a, "b": b}, list(np.linspace(0.0, 0.5, 12)))
    c = calibrate(j, r, negatives=negs, guarantee=0.1, by="stratum")
    table = c.guarantee.set_index("stratum")
    assert table.loc["a", "cutoff"] == sorted(a)[1]
    assert table.loc["b", "cutoff"] == sorted(b)[1]
    assert table.loc[POOLED, "cutoff"] == sorted(a + b)[conformal_rank(38, 0.1) - 1]
    assert set(table["source"]) == {"conformal"}
    # per_stratum shows each positive stratum with its own cutoff
    ps = c.per_stratum.set_index("stratum")
    assert ps.loc["b", "cutoff"] == sorted(b)[1]


def test_a_stratum_too_small_falls_back_to_the_pooled_cutoff_and_says_which():
    j, r, negs = case({"big": list(np.linspace(0.3, 0.9, 30)), "tiny": [0.5, 0.55, 0.6]}, [0.1] * 10)
    c = calibrate(j, r, negatives=negs, guarantee=0.1, by="stratum")
    table = c.guarantee.set_index("stratum")
    assert table.loc["tiny", "source"] == "pooled"
    assert table.loc["tiny", "cutoff"] == table.loc[POOLED, "cutoff"]
    assert pd.isna(table.loc["tiny", "rank"]) and math.isnan(table.loc["tiny", "coverage"])
    assert any("tiny (3)" in w and "pooled cutoff" in w for w in c.warnings)


def test_apply_cutoff_applies_each_querys_stratum_cutoff():
    demo = load_demo()
    c = calibrate(demo.judgments, demo.runs, demo.queries, guarantee=0.1, by="stratum")
    cut = apply_cutoff(demo.runs, c)
    strata = c.top1[["system", "query_id", "stratum"]]
    own = c.guarantee[c.guarantee["stratum"] != POOLED][["system", "stratum", "cutoff"]]
    pooled = c.guarantee[c.guarantee["stratum"] == POOLED].set_index("system")["cutoff"]
    # the oracle: a plain loop over the run's rows
    limit = {}
    for s, q, st_ in strata.itertuples(index=False):
        match = own[(own["system"] == s) & (own["stratum"] == st_)]
        limit[(s, q)] = float(match["cutoff"].iloc[0]) if len(match) else float(pooled[s])
    expected = [
        row
        for row in demo.runs.itertuples(index=False)
        if row.score >= limit.get((row.system, row.query_id), float(pooled[row.system]))
    ]
    assert len(cut) == len(expected)
    assert list(zip(cut["query_id"], cut["doc_id"])) == [(e.query_id, e.doc_id) for e in expected]


def test_by_stratum_without_a_guarantee_uses_the_quantile_per_stratum():
    demo = load_demo()
    c = calibrate(demo.judgments, demo.runs, demo.queries, by="stratum")
    pos = c.top1[(c.top1["system"] == "dense") & (c.top1["kind"] == "positive") & (c.top1["stratum"] == "statements")][
        "top1_score"
    ].to_numpy()
    row = c.guarantee[(c.guarantee["system"] == "dense") & (c.guarantee["stratum"] == "statements")]
    assert float(row["cutoff"].iloc[0]) == pytest.approx(np.quantile(pos, 0.1))
    assert c.summary.equals(calibrate(demo.judgments, demo.runs, demo.queries).summary)


def test_by_takes_only_stratum():
    demo = load_demo()
    with pytest.raises(ValueError, match="by must be"):
        calibrate(demo.judgments, demo.runs, demo.queries, by="system")


def test_calibrate_with_a_fixed_cutoff_for_one_system_names_each_method():
    demo = load_demo()
    c = calibrate(demo.judgments, demo.runs, demo.queries, guarantee=0.1, cutoff={"rrf": 0.03})
    assert c.summary["method"].to_dict() == {"dense": "conformal", "bm25": "conformal", "rrf": "fixed"}
    assert c.cutoff("rrf") == 0.03


def test_the_html_view_shows_the_guarantee_table():
    demo = load_demo()
    html = calibrate(demo.judgments, demo.runs, demo.queries, guarantee=0.1)._repr_html_()
    assert "split-conformal cutoff: retention &gt;= 90%" in html and "coverage_ci_low" in html


# -- plots -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")  # one calibration, drawn by several tests; none changes it
def mondrian_bm25():
    demo = load_demo()
    bm25 = demo.runs[demo.runs["system"] == "bm25"]
    return calibrate(demo.judgments, bm25, demo.queries, guarantee=0.1, by="stratum")


def test_stratum_cutoff_display_marks_each_strata_cutoff(mondrian_bm25):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from retrieval_eval.viz.shift import StratumCutoffDisplay

    disp = StratumCutoffDisplay.from_calibration(mondrian_bm25, "bm25").plot()
    table = mondrian_bm25.guarantee.set_index("stratum")
    for stratum, mark in disp.cutoff_marks_.items():
        assert mark.get_xdata()[0] == table.loc[stratum, "cutoff"]
    assert set(disp.cutoff_marks_) == {"builtin-types", "data-model", "expressions", "statements"}
    plt.close(disp.figure_)


def test_tradeoff_plot_shows_per_stratum_cutoffs_and_names_the_conformal_cutoff(mondrian_bm25):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from retrieval_eval.viz.plotting import CutoffTradeoffDisplay

    disp = CutoffTradeoffDisplay.from_calibration(mondrian_bm25).plot()
    texts = {t.get_text() for t in disp.ax_.texts}
    assert {"builtin-types", "data-model", "expressions", "statements"} <= texts
    assert "split conformal" in disp.cutoff_lines_["bm25"].get_label()
    plt.close(disp.figure_)


def test_stratum_cutoff_display_needs_a_by_stratum_calibration():
    from retrieval_eval.viz.shift import StratumCutoffDisplay

    demo = load_demo()
    with pytest.raises(ValueError, match='by="stratum"'):
        StratumCutoffDisplay.from_calibration(calibrate(demo.judgments, demo.runs, demo.queries))


def test_the_cutoff_explorer_marks_per_stratum_cutoffs(mondrian_bm25):
    pytest.importorskip("ipywidgets")
    from retrieval_eval.viz.widgets import explore_cutoff

    ex = explore_cutoff(mondrian_bm25, plot=True, dpi=30)
    ax = ex._figure.axes[0]
    assert {"builtin-types", "data-model", "expressions", "statements"} <= {t.get_text() for t in ax.texts}


def test_a_fixed_cutoff_carries_no_promise_in_the_guarantee_table():
    j, r, negs = case({"a": list(np.linspace(0.5, 1.0, 20))}, [0.1] * 10)
    c = calibrate(j, r, negatives=negs, guarantee=0.1, cutoff=0.42)
    row = c.guarantee.iloc[0]
    assert row["source"] == "fixed" and pd.isna(row["rank"]) and math.isnan(row["coverage"])
    assert row["cutoff"] == 0.42 and row["negatives_refused"] == 10
