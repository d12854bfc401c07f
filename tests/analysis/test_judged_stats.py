"""Judged metrics' statistics against independent oracles: numpy/scipy for the clustered
interval and paired tests, statsmodels for the cluster-robust standard error and the ANOVA
variance components, ppi_py for prediction-powered inference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

from retrieval_eval.analysis.judged import (
    compare_judged,
    judged_measurements,
    judged_summary,
    minimum_detectable_difference,
    planning_paragraph,
    planning_table,
    ppi_from_judgments,
    ppi_mean,
    queries_needed,
    query_means,
)
from retrieval_eval.analysis.judged.planning import samples_buy_little

sm = pytest.importorskip("statsmodels.api")
ppi = pytest.importorskip("ppi_py")


def _scores(q=30, m=4, seed=0, systems=("a",), shift=0.0, equal=True):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.2, 0.9, q)
    rows = []
    for s_i, s in enumerate(systems):
        for i in range(q):
            reps = m if equal else int(rng.integers(1, m + 1))
            for k in range(reps):
                rows.append((s, "faithfulness", f"q{i}", k, truth[i] + s_i * shift + rng.normal(0, 0.15)))
    return pd.DataFrame(rows, columns=["system", "metric", "query_id", "sample", "value"])


def test_value_is_the_mean_of_per_query_means_and_the_interval_is_student_t_on_them():
    df = _scores(equal=False, seed=3)
    row = judged_summary(df).iloc[0]
    means = df.groupby("query_id")["value"].mean().to_numpy()
    assert row["value"] == pytest.approx(means.mean(), abs=1e-12)
    assert row["n"] == len(means)
    assert row["stdev"] == pytest.approx(means.std(ddof=1), abs=1e-12)
    lo, hi = st.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=st.sem(means))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=1e-11)
    assert row["samples"] == len(df)


def test_clustered_standard_error_equals_statsmodels_cluster_robust_for_equal_cluster_sizes():
    df = _scores(q=25, m=5, seed=1)
    row = judged_summary(df).iloc[0]
    groups = pd.factorize(df["query_id"])[0]
    fit = sm.OLS(df["value"].to_numpy(), np.ones(len(df))).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert row["stdev"] / np.sqrt(row["n"]) == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert row["value"] == pytest.approx(float(fit.params[0]), abs=1e-12)


def test_naive_interval_pools_samples_and_is_narrower_when_queries_differ():
    df = _scores(q=25, m=5, seed=2)
    row = judged_summary(df).iloc[0]
    x = df["value"].to_numpy()
    lo, hi = st.t.interval(0.95, min(len(x) - 1, 120), loc=x.mean(), scale=st.sem(x))  # df capped (A3)
    assert (row["naive_ci_low"], row["naive_ci_high"]) == pytest.approx((lo, hi), abs=1e-11)
    assert row["naive_ci_high"] - row["naive_ci_low"] < row["ci_high"] - row["ci_low"]


@pytest.mark.parametrize("equal", [True, False])
def test_variance_components_are_the_one_way_anova_estimates(equal):
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    df = _scores(q=20, m=4, seed=5, equal=equal)
    row = judged_summary(df).iloc[0]
    table = anova_lm(ols("value ~ C(query_id)", data=df).fit())
    msb, msw = table["mean_sq"].iloc[0], table["mean_sq"].iloc[1]
    m = df.groupby("query_id").size().to_numpy()
    n0 = (m.sum() - (m**2).sum() / m.sum()) / (len(m) - 1)
    assert row["var_within"] == pytest.approx(msw, rel=1e-9)
    assert row["var_between"] == pytest.approx(max((msb - msw) / n0, 0), rel=1e-9)
    assert row["icc"] == pytest.approx(row["var_between"] / (row["var_between"] + msw), rel=1e-9)


def test_one_query_uses_its_samples_as_units():
    df = pd.DataFrame({"system": "a", "metric": "m", "query_id": "q1", "value": [0.5, 0.7, 0.6]})
    row = judged_summary(df).iloc[0]
    assert (row["value"], row["n"], row["stdev"]) == pytest.approx((0.6, 3, 0.1))
    lo, hi = st.t.interval(0.95, 2, loc=0.6, scale=0.1 / np.sqrt(3))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), abs=1e-11)


def test_one_sample_in_all_has_no_interval_and_no_ci_in_its_measurement():
    df = pd.DataFrame({"system": "a", "metric": "m", "query_id": ["q1"], "value": [0.5]})
    row = judged_summary(df).iloc[0]
    assert np.isnan(row["ci_low"]) and np.isnan(row["stdev"]) and np.isnan(row["var_within"])
    (m,) = judged_measurements(judged_summary(df))
    assert m.ci is None and m.deterministic is False and m.n == 1


def test_measurement_carries_the_extras():
    (m,) = judged_measurements(judged_summary(_scores()))
    d = m.to_dict()
    assert set(d) >= {"value", "n", "stdev", "ci", "deterministic", "samples", "var_between", "var_within", "icc"}
    assert d["deterministic"] is False and d["samples"] == 120


def test_query_means_and_strata_grouping_do_not_mutate_input():
    df = _scores(q=6, m=2).assign(stratum=["x"] * 6 + ["y"] * 6)
    before = df.copy()
    qm = query_means(df)
    assert len(qm) == 6 and (qm["samples"] == 2).all()
    t = judged_summary(df, by=("system", "metric", "stratum"))
    assert list(t["stratum"]) == ["x", "y"] and list(t["n"]) == [3, 3]
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization", "bootstrap"])
def test_paired_comparison_matches_scipy_on_per_query_differences(test):
    df = _scores(q=12, m=3, seed=7, systems=("a", "b"), shift=0.05)
    out = compare_judged(df, baseline="a", test=test, n_resamples=4096)
    qm = df.groupby(["system", "query_id"])["value"].mean().unstack(0)
    d = (qm["b"] - qm["a"]).to_numpy()
    row = out.iloc[0]
    assert row["delta"] == pytest.approx(d.mean(), abs=1e-12) and row["n"] == 12
    if test == "t":
        assert row["p"] == pytest.approx(st.ttest_rel(qm["b"], qm["a"]).pvalue, rel=1e-9)
    elif test == "wilcoxon":
        assert row["p"] == pytest.approx(st.wilcoxon(d).pvalue, rel=1e-9)
    elif test == "randomization":  # 2**12 = 4096: exact
        ref = st.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf)
        assert row["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    else:
        assert row["ci_low"] < row["delta"] < row["ci_high"]


def test_correction_runs_across_metrics_and_systems():
    a = _scores(q=15, m=2, seed=8, systems=("a", "b", "c"), shift=0.03)
    b = a.assign(metric="answer_relevancy", value=a["value"] * 0.9)
    out = compare_judged(pd.concat([a, b]), test="t", correction="bonferroni")
    assert len(out) == 4
    assert np.allclose(out["p_adjusted"], np.minimum(out["p"] * 4, 1))


def test_planning_formulas_by_hand():
    z = st.norm.ppf(0.975) + st.norm.ppf(0.8)
    assert minimum_detectable_difference(0.04, 0.02, 100, 2) == pytest.approx(z * np.sqrt(0.05 / 100))
    assert queries_needed(0.04, 0.02, 0.05, 2) == int(np.ceil(z**2 * 0.05 / 0.0025))
    table = planning_table(0.04, 0.02, queries=(50, 100), samples=(1, 4))
    assert list(table["queries"]) == [50, 50, 100, 100]
    assert table["mdd"].iloc[3] == pytest.approx(z * np.sqrt(0.045 / 100))
    assert table["noise_share"].iloc[1] == pytest.approx(0.005 / 0.045)


def test_samples_buy_little_when_between_query_variance_dominates():
    assert samples_buy_little(0.05, 0.002, 1)
    assert not samples_buy_little(0.01, 0.02, 1)


def test_planning_paragraph_names_the_queries_needed():
    rng = np.random.default_rng(0)
    d = rng.normal(0.01, 0.1, 40)
    text = planning_paragraph(d)
    need = int(np.ceil((st.norm.ppf(0.975) + st.norm.ppf(0.8)) ** 2 * d.var(ddof=1) / d.mean() ** 2))
    assert f"about {max(need, 2)} queries" in text
    assert "buy little" in planning_paragraph(d, var_within=0.0001, samples=3)
    assert "Too few" in planning_paragraph([0.1])


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_ppi_mean_equals_ppi_py(lam):
    rng = np.random.default_rng(11)
    truth = rng.uniform(0, 1, 1000)
    judge = np.clip(truth + 0.1 + rng.normal(0, 0.1, 1000), 0, 1)
    human = np.clip(truth + rng.normal(0, 0.05, 1000), 0, 1)
    y, yh, yu = human[:80], judge[:80], judge[80:]
    m = ppi_mean(y, yh, yu, alpha=0.05, lam=lam)
    assert m.value == pytest.approx(float(ppi.ppi_mean_pointestimate(y, yh, yu, lam=lam)[0]), abs=1e-12)
    lo, hi = ppi.ppi_mean_ci(y, yh, yu, alpha=0.05, lam=lam)
    assert m.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
    assert m.n == 80 and m.extra["unlabeled"] == 920


def test_ppi_from_judgments_matches_ppi_mean_on_the_items():
    rng = np.random.default_rng(4)
    q = [f"q{i}" for i in range(60)]
    truth = rng.uniform(0, 1, 60)
    synth = pd.DataFrame(
        {
            "query_id": np.repeat(q, 2),
            "metric": "faithfulness",
            "value": np.repeat(truth, 2) + 0.1 + rng.normal(0, 0.1, 120),
            "labeled_by": "synthetic:gpt",
        }
    )
    human = pd.DataFrame(
        {
            "query_id": q[:15],
            "metric": "faithfulness",
            "value": truth[:15] + rng.normal(0, 0.02, 15),
            "labeled_by": "human:ann",
        }
    )
    m = ppi_from_judgments(pd.concat([synth, human], ignore_index=True))
    s = synth.groupby("query_id", sort=False)["value"].mean()
    ref = ppi.ppi_mean_ci(human["value"].to_numpy(), s.iloc[:15].to_numpy(), s.iloc[15:].to_numpy(), alpha=0.05)
    assert m.ci == pytest.approx((float(ref[0][0]), float(ref[1][0])), abs=1e-12)


def test_ppi_refuses_bad_input():
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1, np.nan], [0.5, 0.5], [0.3])
    with pytest.raises(ValueError, match="2 human labels but 1"):
        ppi_mean([1, 0], [0.5], [0.3])
    with pytest.raises(ValueError, match="labeled_by"):
        ppi_from_judgments(pd.DataFrame({"query_id": ["q"], "metric": "m", "value": [1.0]}))


def test_planning_paragraph_says_when_judge_noise_dominates():
    rng = np.random.default_rng(1)
    d = rng.normal(0.01, 0.1, 40)
    text = planning_paragraph(d, var_within=0.02, samples=1)
    share = min(0.02 / d.var(ddof=1), 1.0)
    assert f"Judge noise is {share:.0%} of it: with 4 judge samples per query" in text


def test_summary_does_not_depend_on_row_order():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    df = _scores(q=8, m=3, seed=9, systems=("a", "b"), equal=False)

    @settings(max_examples=25, deadline=None)
    @given(st.permutations(list(range(len(df)))))
    def check(order):
        a = judged_summary(df).sort_values(["system", "metric"]).reset_index(drop=True)
        b = judged_summary(df.iloc[order]).sort_values(["system", "metric"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_exact=False, atol=1e-12)

    check()


def test_ppi_from_a_judgments_frame_uses_relevance_of_the_same_query_and_key():
    rng = np.random.default_rng(6)
    pairs = [(f"q{i}", f"d{j}") for i in range(20) for j in range(5)]
    grade = rng.integers(0, 4, len(pairs))
    synth = [
        {"query_id": q, "doc_uri": d, "relevance": int(min(3, g + rng.integers(0, 2))), "labeled_by": "synthetic:llm"}
        for (q, d), g in zip(pairs, grade)
    ]
    human = [
        {"query_id": q, "doc_uri": d, "relevance": int(g), "labeled_by": "human:ann"}
        for (q, d), g in list(zip(pairs, grade))[:30]
    ]
    judgments = pd.DataFrame(synth + human)
    m = ppi_from_judgments(judgments)
    y = np.array([h["relevance"] for h in human], float)
    yh = np.array([s["relevance"] for s in synth[:30]], float)
    yu = np.array([s["relevance"] for s in synth[30:]], float)
    lo, hi = ppi.ppi_mean_ci(y, yh, yu, alpha=0.05)
    assert m.ci == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
