"""Score drift between two runs: KS against scipy, PSI against a hand computation, the cutoff
shift and the flips against plain loops."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from retrieval_eval import load_demo, score_shift
from retrieval_eval.analysis.calibration.shift import ks_2samp, psi

ID = pd.StringDtype()


def run_of(scores: dict[str, float], system: str) -> pd.DataFrame:
    run = pd.DataFrame(
        {
            "system": system,
            "query_id": list(scores),
            "rank": 1,
            "doc_id": [f"d-{q}" for q in scores],
            "score": list(scores.values()),
        }
    )
    for c in ("system", "query_id", "doc_id"):
        run[c] = run[c].astype(ID)
    return run


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture(scope="module")
def dense_pair(demo):
    dense = demo.runs[demo.runs["system"] == "dense"]
    after = dense.assign(
        score=(dense["score"] * 0.9 + 0.03).round(6), system=pd.array(["dense-v2"] * len(dense), dtype=ID)
    )
    return dense, after


@pytest.mark.parametrize("m,n,shift,seed", [(30, 45, 0.5, 1), (12, 12, 0.0, 2), (200, 150, 0.2, 3), (75, 75, 0.1, 4)])
def test_ks_matches_scipy_exact(m, n, shift, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=m), rng.normal(shift, 1.0, size=n)
    d, p, method = ks_2samp(x, y)
    expected = sps.ks_2samp(x, y, method="exact")
    assert method == "exact"
    assert d == pytest.approx(expected.statistic, abs=1e-12)
    assert p == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-12)


def test_ks_beyond_ten_thousand_uses_the_kolmogorov_distribution():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=10_001), rng.normal(0.02, 1.0, size=10_500)
    d, p, method = ks_2samp(x, y)
    assert method == "asymptotic"
    assert d == pytest.approx(sps.ks_2samp(x, y).statistic, abs=1e-12)
    en = x.size * y.size / (x.size + y.size)
    assert p == pytest.approx(sps.kstwobign.sf(math.sqrt(en) * d), rel=1e-9)


def test_psi_is_the_sum_over_before_quantile_bins():
    before = np.arange(1.0, 11.0)  # deciles: edges 1.9, 2.8, ..., 9.1 -> one value per bin
    after = np.array([1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 10.0, 10.0, 10.0, 10.0])
    value, table = psi(before, after, bins=10)
    # hand computation: shares 0.1 before everywhere; after 0.4 in bins 0 and 9, 0.2 in bin 4,
    # and 0 (counted as 0.5/10 = 0.05) in the seven others
    a = np.array([0.4, 0.05, 0.05, 0.05, 0.2, 0.05, 0.05, 0.05, 0.05, 0.4])
    expected = float(np.sum((a - 0.1) * np.log(a / 0.1)))
    assert value == pytest.approx(expected, rel=1e-12)
    assert list(table["n_after"]) == [4, 0, 0, 0, 2, 0, 0, 0, 0, 4]


def test_psi_of_a_distribution_against_itself_is_zero():
    x = np.random.default_rng(1).normal(size=500)
    assert psi(x, x)[0] == 0.0


def test_cutoffs_are_each_runs_calibrated_cutoff(demo, dense_pair):
    from retrieval_eval import calibrate

    before, after = dense_pair
    s = score_shift(before, after, judgments=demo.judgments, queries=demo.queries)
    assert s.value("cutoff_before") == pytest.approx(calibrate(demo.judgments, before, demo.queries).cutoff("dense"))
    assert s.value("cutoff_after") == pytest.approx(calibrate(demo.judgments, after, demo.queries).cutoff("dense-v2"))
    lo, hi = s.summary.loc["cutoff_shift", ["ci_low", "ci_high"]]
    assert lo <= s.value("cutoff_shift") <= hi


def test_the_cutoff_shift_interval_is_a_seeded_paired_bootstrap(demo, dense_pair):
    before, after = dense_pair
    s = score_shift(before, after, judgments=demo.judgments, queries=demo.queries, n_resamples=500, seed=3)
    pos = s.top1[s.top1["kind"] == "positive"]
    b, a = pos["top1_before"].to_numpy(), pos["top1_after"].to_numpy()
    idx = np.random.default_rng(3).integers(0, b.size, size=(500, b.size))
    diffs = np.quantile(a[idx], 0.1, axis=1) - np.quantile(b[idx], 0.1, axis=1)
    assert s.summary.loc["cutoff_shift", "ci_low"] == pytest.approx(np.percentile(diffs, 2.5))
    assert s.summary.loc["cutoff_shift", "ci_high"] == pytest.approx(np.percentile(diffs, 97.5))


def test_flips_count_decisions_changed_under_the_old_cutoff(demo, dense_pair):
    before, after = dense_pair
    s = score_shift(before, after, judgments=demo.judgments, queries=demo.queries)
    old = s.value("cutoff_before")
    flips = sum((b >= old) != (a >= old) for b, a in zip(s.top1["top1_before"], s.top1["top1_after"]))
    assert s.value("flip_share") == pytest.approx(flips / len(s.top1))
    pos = s.decisions.set_index("kind").loc["positive"]
    lost = sum(
        (b >= old) and not (a >= old)
        for b, a, k in zip(s.top1["top1_before"], s.top1["top1_after"], s.top1["kind"])
        if k == "positive"
    )
    assert int(pos["newly_refused"]) == lost


def test_a_fixed_cutoff_is_the_old_cutoff_for_flips():
    before = run_of({f"q{i}": 0.1 * i for i in range(12)}, "a")
    after = run_of({f"q{i}": 0.1 * i + 0.15 for i in range(12)}, "b")
    s = score_shift(before, after, cutoff=0.5)
    # decisions change for q4 (0.4 -> 0.55) and q3 (0.3 -> 0.45 stays refused): only q4
    assert s.value("flip_share") == pytest.approx(1 / 12)
    assert math.isnan(s.value("cutoff_before"))
    assert any("no positives" in w for w in s.warnings)


def test_only_shared_queries_are_compared_and_the_rest_listed():
    before = run_of({f"q{i}": 0.05 * i for i in range(12)}, "a")
    after = run_of({f"q{i}": 0.05 * i for i in range(2, 14)}, "b")
    s = score_shift(before, after)
    assert len(s.top1) == 10 and s.only_before == ["q0", "q1"] and s.only_after == ["q12", "q13"]
    assert any("left out" in w for w in s.warnings)


def test_too_few_shared_queries_make_every_measurement_indeterminate():
    before = run_of({f"q{i}": 0.1 * i for i in range(5)}, "a")
    s = score_shift(before, before.assign(system=pd.array(["b"] * 5, dtype=ID)))
    assert all("indeterminate" in m for m in s.metrics().values())


def test_a_run_with_several_systems_needs_system(demo):
    with pytest.raises(ValueError, match="pass system="):
        score_shift(demo.runs, demo.runs)
    s = score_shift(demo.runs, demo.runs, judgments=demo.judgments, queries=demo.queries, system=("dense", "dense"))
    assert s.value("psi") == 0.0 and s.value("ks") == 0.0 and s.value("flip_share") == 0.0


def test_to_dict_carries_the_gate_block(demo, dense_pair):
    before, after = dense_pair
    s = score_shift(before, after, judgments=demo.judgments, queries=demo.queries)
    d = s.to_dict()
    assert set(d["score_shift"]) == {"psi", "ks", "flip_share", "cutoff_shift"}
    assert d["score_shift"]["psi"]["value"] == pytest.approx(psi(s.top1["top1_before"], s.top1["top1_after"])[0])
    assert d["score_shift"]["ks"]["pvalue"] == pytest.approx(s.value("ks_pvalue"))


def test_plot_overlays_both_distributions_and_both_cutoffs(demo, dense_pair):
    import matplotlib

    matplotlib.use("Agg")
    before, after = dense_pair
    disp = score_shift(before, after, judgments=demo.judgments, queries=demo.queries).plot()
    assert set(disp.lines_) == {"before", "after"}
    assert disp.ax_.get_xlabel() == "top-1 score"
    import matplotlib.pyplot as plt

    plt.close(disp.figure_)


def test_html_view_shows_the_summary_and_the_decisions(demo, dense_pair):
    before, after = dense_pair
    html = score_shift(before, after, judgments=demo.judgments, queries=demo.queries)._repr_html_()
    assert "Score shift" in html and "flip_share" in html and "newly_refused" in html


def test_with_a_guarantee_each_cutoff_is_the_conformal_one(demo, dense_pair):
    from retrieval_eval.analysis.calibration.guarantee import conformal_cutoff

    before, after = dense_pair
    s = score_shift(before, after, judgments=demo.judgments, queries=demo.queries, guarantee=0.1)
    pos = s.top1[s.top1["kind"] == "positive"]
    assert s.value("cutoff_before") == conformal_cutoff(pos["top1_before"], 0.1)
    assert s.value("cutoff_after") == conformal_cutoff(pos["top1_after"], 0.1)
    assert s.settings["guarantee"] == {"alpha": 0.1, "delta": 0.05}
