"""retrieval_eval.analysis.stats against independent oracles: scipy.stats and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retrieval_eval.analysis import stats as S
from retrieval_eval.analysis.stats import paired

scipy = pytest.importorskip("scipy")
ss = pytest.importorskip("scipy.stats")
sp = pytest.importorskip("scipy.special")


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


# ---------------------------------------------------------------- special functions


def test_erfc_matches_scipy_with_relative_accuracy_in_the_tails():
    x = np.concatenate([np.linspace(-6, 25, 3101), [0.0, 1e-300, -1e-10, 1.2247, 1.2248]])
    ref = sp.erfc(x)
    assert np.max(np.abs(S.erfc(x) - ref) / ref) < 2e-13


def test_norm_cdf_and_sf_match_scipy():
    # Relative error grows like eps * x**2 (the rounding of x**2 in exp(-x**2/2)).
    x = np.linspace(-8, 8, 1601)
    assert np.max(np.abs(S.norm_cdf(x) - ss.norm.cdf(x)) / ss.norm.cdf(x)) < 3e-14
    assert np.max(np.abs(S.norm_sf(x) - ss.norm.sf(x)) / ss.norm.sf(x)) < 3e-14
    x = np.linspace(-37, 37, 741)
    assert np.max(np.abs(S.norm_cdf(x) - ss.norm.cdf(x)) / ss.norm.cdf(x)) < 1e-12


def test_norm_ppf_matches_scipy_to_full_precision():
    q = np.concatenate([np.logspace(-300, -1, 300), np.linspace(0.01, 0.99, 99), 1 - np.logspace(-15, -1, 50)])
    ref = ss.norm.ppf(q)
    assert np.max(np.abs(S.norm_ppf(q) - ref) / np.maximum(np.abs(ref), 1)) < 1e-14
    assert S.norm_ppf(0.0) == -np.inf and S.norm_ppf(1.0) == np.inf
    assert np.isnan(S.norm_ppf(1.5))


@pytest.mark.parametrize("df", [2, 3, 5.5, 9, 14, 15, 30, 119, 120, 1000, 9999])
def test_t_cdf_matches_scipy(df):
    t = np.concatenate([np.linspace(-30, 30, 601), [1e-8, -1e-5, 3e-3]])
    ref = ss.t.cdf(t, df)
    keep = ref > 1e-250
    assert np.max(np.abs(S.t_cdf(t, df) - ref)[keep] / ref[keep]) < 1e-12


def test_t_cdf_cauchy_case_matches_closed_form():
    # df = 1 is the Cauchy distribution: cdf = 1/2 + atan(t)/pi (scipy's t.cdf is off near 0).
    t = np.array([-1e6, -3.0, -1e-8, 0.0, 1e-8, 0.5, 40.0])
    ref = np.arctan2(1.0, -t) / np.pi  # = 1/2 + atan(t)/pi, without cancellation for t << 0
    assert np.allclose(S.t_cdf(t, 1), ref, rtol=1e-14, atol=0)


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 10, 29, 120, 1000, 9999, 1e6])
def test_t_ppf_matches_scipy(df):
    q = np.array([1e-12, 1e-6, 0.001, 0.025, 0.05, 0.3, 0.5, 0.7, 0.975, 0.999999])
    ref = ss.t.ppf(q, df)
    # scipy < 1.16 (the last line for Python 3.10) is itself ~2e-11 off at df = 1 against the
    # closed form tan(pi (q - 1/2)); the closed-form test below holds ours to 1e-13 there.
    tol = 1e-11 if tuple(int(x) for x in scipy.__version__.split(".")[:2]) >= (1, 16) else 5e-11
    assert np.max(np.abs(S.t_ppf(q, df) - ref) / np.maximum(np.abs(ref), 1)) < tol


def test_t_ppf_matches_the_closed_forms_for_one_and_two_degrees_of_freedom():
    q = np.array([1e-6, 0.001, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999])
    one = -1.0 / np.tan(np.pi * q)  # = tan(pi (q - 1/2)), well conditioned in the tails
    two = (2 * q - 1) / np.sqrt(2 * q * (1 - q))
    assert np.max(np.abs(S.t_ppf(q, 1) - one) / np.maximum(np.abs(one), 1)) < 1e-13
    assert np.max(np.abs(S.t_ppf(q, 2) - two) / np.maximum(np.abs(two), 1)) < 1e-13


def test_t_ppf_known_table_value():
    # The 97.5% quantile with 9 df, from any t table: 2.262157...
    assert float(S.t_ppf(0.975, 9)) == pytest.approx(2.262157162798205, rel=1e-14)
    # With 2 df the quantile has a closed form: t = (2q - 1) sqrt(2 / (1 - (2q - 1)^2)).
    q = 0.975
    u = 2 * q - 1
    assert float(S.t_ppf(q, 2)) == pytest.approx(u * math.sqrt(2 / (1 - u * u)), rel=1e-14)


def test_betainc_matches_scipy():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.2, 40, 500)
    b = rng.uniform(0.2, 40, 500)
    x = rng.uniform(0, 1, 500)
    ref = sp.betainc(a, b, x)
    got = S.betainc(a, b, x)
    assert np.max(np.abs(got - ref)) < 1e-13


# ---------------------------------------------------------------- paired t-test


@pytest.mark.parametrize("n", [2, 3, 10, 57, 500, 10_000])
def test_paired_t_matches_scipy_ttest_rel(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=(12, n))
    b = a + rng.normal(0.05, 1, size=(12, n))
    got = S.paired_t(a, b)
    ref = ss.ttest_rel(a, b, axis=1)
    assert np.allclose(got.statistic, ref.statistic, rtol=1e-13, atol=0)
    assert np.max(np.abs(got.pvalue - ref.pvalue)) < 1e-10
    assert np.max(np.abs(got.pvalue - ref.pvalue) / ref.pvalue) < 1e-10
    assert got.df == n - 1


def test_paired_t_single_comparison_returns_floats():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=20), rng.normal(size=20)
    got = S.paired_t(a, b)
    ref = ss.ttest_rel(a, b)
    assert isinstance(got.pvalue, float)
    assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_paired_t_identical_systems_give_p_one():
    a = np.array([0.1, 0.5, 0.7])
    r = S.paired_t(a, a)
    assert r.statistic == 0.0 and r.pvalue == 1.0


def test_paired_t_constant_shift_gives_p_zero():
    assert S.paired_t(np.array([1.0, 2.0, 4.0]) + 0.5, np.array([1.0, 2.0, 4.0])).pvalue == 0.0


# ---------------------------------------------------------------- randomization test


@pytest.mark.parametrize("n", [2, 5, 9, 13])
def test_randomization_exact_enumeration_matches_scipy(n):
    rng = np.random.default_rng(100 + n)
    d = rng.normal(0.4, 1, size=(6, n))
    got = S.paired_randomization(d, n_resamples=10_000)
    assert got.exact and got.n_resamples == 2**n
    for i in range(6):
        ref = ss.permutation_test((d[i],), _mean, permutation_type="samples", n_resamples=10_000, vectorized=True)
        assert got.pvalue[i] == pytest.approx(ref.pvalue, abs=1e-15)


def test_randomization_exact_on_hand_case():
    # d = (1, 2, 3): the 8 sign vectors give |sum| in {6, 4, 2, 0, 0, 2, 4, 6}; |obs| = 6,
    # so 2 of 8 are at least as extreme: p = 1/4.
    r = S.paired_randomization([1.0, 2.0, 3.0])
    assert r.exact and r.pvalue == 0.25 and r.statistic == 2.0


def test_randomization_ties_in_metric_values_count_as_ties():
    # Differences on a 1/3 grid: sums reached in different orders must still tie.
    d = np.array([1 / 3, 2 / 3, 1.0, 1 / 3, 0.0, -2 / 3, 1 / 3, 1 / 3])
    exact = S.paired_randomization(d)
    signs = paired._all_signs(d.size)
    sums = signs @ np.round(d * 3)  # integer arithmetic: no rounding at all
    expected = np.mean(np.abs(sums) >= abs(np.round(d * 3).sum()))
    assert exact.pvalue == expected


@pytest.mark.parametrize("n", [20, 75])
def test_randomization_with_scipys_resamples_matches_scipy(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.25, 1, size=(5, n))
    signs = S.sign_flips(n, 3000, 11, like_scipy=True)
    got = S.paired_randomization(d, signs=signs, two_sided="double")
    for i in range(5):
        ref = ss.permutation_test(
            (d[i],), _mean, permutation_type="samples", n_resamples=3000, vectorized=True, rng=np.random.default_rng(11)
        )
        assert got.pvalue[i] == pytest.approx(ref.pvalue, abs=1e-15)


def test_randomization_random_resamples_agree_with_scipy_statistically():
    rng = np.random.default_rng(7)
    d = rng.normal(0.15, 1, size=(4, 200))
    got = S.paired_randomization(d, n_resamples=10_000, seed=3)
    assert not got.exact
    for i in range(4):
        ref = ss.permutation_test(
            (d[i],),
            _mean,
            permutation_type="samples",
            n_resamples=10_000,
            vectorized=True,
            rng=np.random.default_rng(99),
        ).pvalue
        se = math.sqrt(2 * max(ref * (1 - ref), 1e-4) / 10_000)
        assert abs(got.pvalue[i] - ref) < 5 * se


def test_randomization_p_value_is_never_zero_and_uses_plus_one_rule():
    d = np.full(40, 0.5)  # every flip but the identity gives a smaller |mean|
    r = S.paired_randomization(d, n_resamples=999, seed=1)
    assert not r.exact
    assert r.pvalue == pytest.approx(1 / 1000)


def test_randomization_is_seeded_and_vectorized_rows_match_single_rows():
    rng = np.random.default_rng(8)
    d = rng.normal(0.1, 1, size=(3, 60))
    both = S.paired_randomization(d, n_resamples=2000, seed=5)
    again = S.paired_randomization(d, n_resamples=2000, seed=5)
    assert np.array_equal(both.pvalue, again.pvalue)
    for i in range(3):
        assert S.paired_randomization(d[i], n_resamples=2000, seed=5).pvalue == both.pvalue[i]


def test_randomization_identical_systems_give_p_one():
    a = np.linspace(0, 1, 30)
    assert S.paired_randomization(a, a, n_resamples=500).pvalue == 1.0


# ---------------------------------------------------------------- bootstrap


def test_paired_bootstrap_interval_is_percentile_of_resampled_means():
    rng = np.random.default_rng(4)
    d = rng.normal(0.2, 1, size=(2, 50))
    got = S.paired_bootstrap(d, n_resamples=4000, seed=9)
    # Reproduce the resamples independently: rows of rng.integers(0, n, (B, n)) indices.
    idx = np.random.default_rng(9).integers(0, 50, size=(4000, 50))
    means = d[:, idx].mean(axis=2)  # (2, B)
    lo, hi = np.quantile(means, [0.025, 0.975], axis=1)
    assert np.allclose(got.ci_low, lo, rtol=0, atol=1e-14)
    assert np.allclose(got.ci_high, hi, rtol=0, atol=1e-14)
    le = (means <= 0).sum(axis=1)
    ge = (means >= 0).sum(axis=1)
    assert np.allclose(got.pvalue, np.minimum(1, 2 * (np.minimum(le, ge) + 1) / 4001))
    assert np.allclose(got.statistic, d.mean(axis=1))


def test_paired_bootstrap_identical_systems_give_zero_interval_and_p_one():
    a = np.linspace(0, 1, 25)
    r = S.paired_bootstrap(a, a, n_resamples=300)
    assert (r.ci_low, r.ci_high, r.pvalue) == (0.0, 0.0, 1.0)


def test_bootstrap_ci_reproduces_scipy_bootstrap_percentile():
    rng = np.random.default_rng(12)
    pos, neg = rng.normal(1, 1, 40), rng.normal(0, 1, 25)
    got = S.auroc_ci(pos, neg, n_resamples=2000, seed=3)
    ref = ss.bootstrap(
        (pos, neg),
        lambda p, n, axis=-1: S.auroc(p, n),
        vectorized=True,
        method="percentile",
        n_resamples=2000,
        rng=np.random.default_rng(3),
    )
    assert got.ci_low == pytest.approx(ref.confidence_interval.low, abs=1e-14)
    assert got.ci_high == pytest.approx(ref.confidence_interval.high, abs=1e-14)
    got = S.median_difference_ci(pos, neg, n_resamples=2000, seed=3)
    ref = ss.bootstrap(
        (pos, neg),
        lambda p, n, axis=-1: np.median(p, axis=-1) - np.median(n, axis=-1),
        vectorized=True,
        method="percentile",
        n_resamples=2000,
        rng=np.random.default_rng(3),
    )
    assert got.ci_low == pytest.approx(ref.confidence_interval.low, abs=1e-14)
    assert got.ci_high == pytest.approx(ref.confidence_interval.high, abs=1e-14)
    assert got.statistic == pytest.approx(np.median(pos) - np.median(neg), abs=1e-15)


def test_bootstrap_ci_paired_reproduces_scipy():
    rng = np.random.default_rng(13)
    x, y = rng.normal(size=30), rng.normal(size=30)
    got = S.bootstrap_ci(lambda a, b: (a - b).mean(axis=-1), x, y, n_resamples=1000, seed=2, paired=True)
    ref = ss.bootstrap(
        (x, y),
        lambda a, b, axis=-1: (a - b).mean(axis=axis),
        vectorized=True,
        paired=True,
        method="percentile",
        n_resamples=1000,
        rng=np.random.default_rng(2),
    )
    assert got.ci_low == pytest.approx(ref.confidence_interval.low, abs=1e-14)
    assert got.ci_high == pytest.approx(ref.confidence_interval.high, abs=1e-14)


def test_bootstrap_ci_empty_sample_gives_nan():
    r = S.auroc_ci([0.3, 0.4], [], n_resamples=10)
    assert math.isnan(r.statistic) and math.isnan(r.ci_low) and math.isnan(r.ci_high)


# ---------------------------------------------------------------- Wilcoxon


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12, 14, 20, 50, 51, 120])
@pytest.mark.parametrize("kind", ["continuous", "ties", "zeros"])
def test_wilcoxon_matches_scipy_defaults(n, kind):
    rng = np.random.default_rng(n * 7 + len(kind))
    rows = {9: 3, 12: 1}.get(n, 15)  # scipy's own permutation path is slow
    a, b = rng.normal(size=(rows, n)), rng.normal(size=(rows, n))
    if kind == "ties":
        a, b = np.round(a), np.round(b) * 0.5
    if kind == "zeros":
        a, b = np.round(a * 2) / 2, np.round(b * 2) / 2
    got = S.wilcoxon(a, b)
    for i in range(rows):
        if np.all(a[i] == b[i]):
            assert got.pvalue[i] == 1.0
            continue
        ref = ss.wilcoxon(a[i], b[i])
        assert abs(got.pvalue[i] - ref.pvalue) < 1e-12
        assert got.statistic[i] == ref.statistic


def test_wilcoxon_method_selection():
    cont = np.arange(1.0, 11.0) * np.array([1, -1] * 5)  # no ties, no zeros, n = 10
    assert S.wilcoxon(cont).method == "exact"
    assert S.wilcoxon(np.r_[cont, 0.0]).method == "permutation"
    assert S.wilcoxon(np.r_[cont, 11.0, 12.0, 0.0]).method == "permutation"  # n = 13
    assert S.wilcoxon(np.r_[cont, 11.0, 12.0, 13.0, 0.0]).method == "asymptotic"  # n = 14
    assert S.wilcoxon(np.arange(1.0, 51.0)).method == "exact"  # n = 50, no ties
    assert S.wilcoxon(np.arange(1.0, 52.0)).method == "asymptotic"  # n = 51
    assert S.wilcoxon(np.r_[np.arange(1.0, 60.0)]).method == "asymptotic"
    assert S.wilcoxon(np.r_[np.ones(20), -2.0]).method == "asymptotic"


def test_wilcoxon_exact_hand_case():
    # d = (1, 2, 3, 4): all positive, R+ = 10 is the single most extreme of 16 assignments,
    # so p = 2 * 1/16.
    r = S.wilcoxon([1.0, 2.0, 3.0, 4.0])
    assert r.pvalue == 0.125 and r.statistic == 0.0


# ---------------------------------------------------------------- corrections


def test_bonferroni_hand_computed():
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert np.allclose(S.adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 1.0], atol=1e-15)


def test_holm_hand_computed():
    # sorted: 0.01 (x4 = 0.04), 0.03 (x3 = 0.09), 0.04 (x2 = 0.08 -> max with 0.09), 0.5 (x1)
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert np.allclose(S.adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.5], atol=1e-15)


def test_holm_clips_to_one():
    assert np.array_equal(S.adjust_pvalues([0.4, 0.6], "holm"), [0.8, 0.8])
    assert np.array_equal(S.adjust_pvalues([0.6, 0.9], "holm"), [1.0, 1.0])


def test_bh_hand_computed():
    # m = 4, sorted 0.01, 0.03, 0.04, 0.5: m p / i = 0.04, 0.06, 0.0533.., 0.5;
    # running minimum from the top: 0.04, 0.05333, 0.05333, 0.5.
    p = np.array([0.01, 0.04, 0.03, 0.5])
    assert np.allclose(S.adjust_pvalues(p, "fdr_bh"), [0.04, 0.16 / 3, 0.16 / 3, 0.5], atol=1e-15)


def test_bh_matches_scipy_false_discovery_control():
    rng = np.random.default_rng(21)
    p = rng.uniform(size=(7, 9)) ** 3
    got = S.adjust_pvalues(p, "fdr_bh")
    ref = ss.false_discovery_control(p.ravel()).reshape(p.shape)
    assert np.max(np.abs(got - ref)) < 1e-15


def test_adjust_keeps_nan_out_of_the_family_and_none_is_identity():
    p = np.array([0.01, np.nan, 0.02])
    out = S.adjust_pvalues(p, "bonferroni")
    assert np.isnan(out[1]) and np.allclose(out[[0, 2]], [0.02, 0.04])
    assert np.array_equal(S.adjust_pvalues([0.3, 0.01], "none"), [0.3, 0.01])
    with pytest.raises(ValueError):
        S.adjust_pvalues([0.1], "sidak")


# ---------------------------------------------------------------- Wilson


def _wilson_by_hand(k, n, z):
    p = k / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return center - half, center + half


def test_wilson_hand_values():
    z = 1.959963984540054  # the 97.5% normal quantile
    for k, n in [(0, 10), (3, 10), (10, 10), (47, 50), (1, 1)]:
        lo, hi = S.wilson_interval(k, n)
        elo, ehi = _wilson_by_hand(k, n, z)
        assert lo == pytest.approx(max(elo, 0.0), abs=1e-15)
        assert hi == pytest.approx(min(ehi, 1.0), abs=1e-15)
    # 0 of 10 at 95%: the upper limit is z^2 / (n + z^2) = 0.27753...
    assert S.wilson_interval(0, 10)[1] == pytest.approx(z * z / (10 + z * z), abs=1e-15)


def test_wilson_vectorized_and_empty():
    lo, hi = S.wilson_interval(np.array([0, 5, 0]), np.array([10, 10, 0]), confidence=0.9)
    assert np.isnan(lo[2]) and np.isnan(hi[2])
    z = 1.6448536269514722
    elo, ehi = _wilson_by_hand(5, 10, z)
    assert lo[1] == pytest.approx(elo, abs=1e-15) and hi[1] == pytest.approx(ehi, abs=1e-15)


# ---------------------------------------------------------------- AUROC


def test_auroc_hand_cases():
    assert S.auroc([3.0, 4.0], [1.0, 2.0]) == 1.0  # perfect separation
    assert S.auroc([1.0, 2.0], [3.0, 4.0]) == 0.0
    assert S.auroc([1.0, 2.0], [1.0, 2.0]) == 0.5  # equal distributions
    assert S.auroc([0.5], [0.5]) == 0.5  # a tie counts 1/2
    # pos (1, 3), neg (2, 3): pairs 1>2 no, 1>3 no, 3>2 yes, 3=3 half -> 1.5 / 4
    assert S.auroc([1.0, 3.0], [2.0, 3.0]) == 0.375


def test_auroc_matches_mann_whitney_and_batches_rows():
    rng = np.random.default_rng(31)
    pos = np.round(rng.normal(0.5, 1, size=(6, 30)), 1)
    neg = np.round(rng.normal(0.0, 1, size=(6, 20)), 1)
    got = S.auroc(pos, neg)
    for i in range(6):
        u = ss.mannwhitneyu(pos[i], neg[i]).statistic
        assert got[i] == pytest.approx(u / 600, abs=1e-15)
        assert S.auroc(pos[i], neg[i]) == got[i]


def test_rank_average_matches_scipy_rankdata():
    rng = np.random.default_rng(32)
    x = np.round(rng.normal(size=(5, 40)), 1)
    assert np.array_equal(S.rank_average(x), ss.rankdata(x, axis=1))


def test_inputs_are_not_mutated():
    a = np.array([0.3, 0.1, 0.9, 0.4])
    b = np.array([0.2, 0.2, 0.5, 0.4])
    a0, b0 = a.copy(), b.copy()
    S.paired_t(a, b), S.wilcoxon(a, b), S.paired_randomization(a, b), S.paired_bootstrap(a, b, n_resamples=50)
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_nan_differences_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        S.paired_t([0.1, np.nan], [0.2, 0.3])


def test_swapping_the_systems_keeps_every_two_sided_p_value():
    rng = np.random.default_rng(41)
    a = np.round(rng.uniform(size=(4, 35)), 2)
    b = np.round(rng.uniform(size=(4, 35)), 2)
    for fn in (S.paired_t, S.wilcoxon, lambda x, y: S.paired_randomization(x, y, n_resamples=999, seed=2)):
        p_ab, p_ba = fn(a, b).pvalue, fn(b, a).pvalue
        assert np.allclose(p_ab, p_ba, rtol=0, atol=1e-15)
        assert ((p_ab > 0) & (p_ab <= 1)).all()
    boot_ab = S.paired_bootstrap(a, b, n_resamples=500, seed=3)
    boot_ba = S.paired_bootstrap(b, a, n_resamples=500, seed=3)
    assert np.allclose(boot_ab.ci_low, -boot_ba.ci_high, atol=1e-15)
    assert np.allclose(boot_ab.pvalue, boot_ba.pvalue, atol=1e-15)
