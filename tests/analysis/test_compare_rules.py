"""compare's statistics (issue 12, rule 7): ties in the bootstrap p-value, exact p-values for
few queries, no significance on fewer than 5, and the gain that follows from a metric's name.
Oracles: exact rational arithmetic, a hand enumeration of sign assignments, scipy."""

from __future__ import annotations

import io
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval as re_
from retrieval_eval.analysis import stats
from retrieval_eval.analysis.decisions.compare import EXACT_MAX_QUERIES, MIN_PAIRED_QUERIES, compare
from retrieval_eval.analysis.stats import paired
from retrieval_eval.cli import app as cli


def _exact_sign_flip_p(d) -> float:
    """Two-sided sign-flip p-value by brute force over every assignment, in exact rationals."""
    exact = [Fraction(repr(float(x))) for x in d]
    observed = abs(sum(exact))
    hits = sum(
        abs(sum(s * x for s, x in zip(signs, exact))) >= observed
        for signs in itertools.product((1, -1), repeat=len(exact))
    )
    return hits / 2 ** len(exact)


def test_bootstrap_p_value_counts_resampled_means_within_1e12_of_zero_as_ties():
    """Decimal differences whose resampled means are exactly 0 in rational arithmetic come out
    as +-1e-17 in floats depending on the order of the sum; the oracle recounts the same
    resamples exactly, where 0 is a tie counted on both sides."""
    d = np.array([0.1, 0.2, -0.3, 0.7, -0.1, -0.6])
    n, B, seed = len(d), 2000, 3
    got = stats.paired_bootstrap(d, n_resamples=B, seed=seed)
    weights = paired._bootstrap_weights(np.random.default_rng(seed), B, n)  # the same resamples
    exact = [Fraction(repr(float(x))) for x in d]
    sums = [sum(int(w) * x for w, x in zip(row, exact)) for row in weights]
    assert sum(s == 0 for s in sums) > 50  # the case is really about ties at zero
    le, ge = sum(s <= 0 for s in sums), sum(s >= 0 for s in sums)
    assert got.pvalue == pytest.approx(min(1.0, 2 * (min(le, ge) + 1) / (B + 1)), abs=1e-15)
    # The float sums disagree with the exact ones on some of those ties, both ways.
    floats = weights @ d / n
    assert np.any((floats != 0) & np.array([s == 0 for s in sums]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.3, -0.1, -0.2, 1 / 3, -1 / 3, 0.5]), min_size=2, max_size=12),
    st.integers(0, 10),
)
def test_property_bootstrap_p_value_does_not_move_with_the_order_of_the_sum(values, seed):
    """Reversing the queries changes only float rounding of each resampled mean (the weights
    are reversed with them): the p-value stays."""
    d = np.array(values)
    n, B = len(d), 300
    w = paired._bootstrap_weights(np.random.default_rng(seed), B, n)
    forward = w @ d / n
    backward = w[:, ::-1] @ d[::-1] / n

    def p(means):
        le = np.count_nonzero(means <= stats.TIE)
        ge = np.count_nonzero(means >= -stats.TIE)
        return min(1.0, 2 * (min(le, ge) + 1) / (B + 1))

    assert p(forward) == p(backward) == stats.paired_bootstrap(d, n_resamples=B, seed=seed).pvalue


def _setup(n_queries: int, seed: int = 0):
    """Graded judgments and two systems with random rankings."""
    rng = np.random.default_rng(seed)
    judgments, runs = [], {"a": [], "b": []}
    for q in range(n_queries):
        for d in range(4):
            judgments.append({"query_id": f"q{q}", "doc_uri": f"d{d}", "relevance": int(rng.integers(0, 4))})
        judgments.append({"query_id": f"q{q}", "doc_uri": "d9", "relevance": 1})
        for name in runs:
            runs[name].append(
                {"query_id": f"q{q}", "ranking": list(rng.permutation(["d0", "d1", "d2", "d3", "d9", "x"]))}
            )
    return judgments, runs


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
@pytest.mark.parametrize("n", [1, 3, 6, 9])
def test_few_queries_give_the_exact_randomization_p_value(test, n):
    """n <= 16: every sign assignment, whatever n_resamples (here far below 2**n); never a
    p-value below what 2**n assignments can give."""
    judgments, runs = _setup(n, seed=n)
    c = compare(judgments, runs, test=test, n_resamples=20, metrics=["ndcg", "recall", "mrr"])
    assert c.exact
    for row in c.table.itertuples(index=False):
        d = c.per_query[(c.per_query["metric"] == row.metric)]["delta"].to_numpy()
        assert row.p_value == pytest.approx(_exact_sign_flip_p(d), abs=1e-12)
        assert row.p_value >= 1 / 2**n
    assert "2^" in c.describe()


def test_exact_p_values_agree_with_scipy_permutation_test():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    for n in (2, 5, 11, EXACT_MAX_QUERIES):
        d = np.round(rng.normal(0.05, 0.2, size=(3, n)), 3)
        got = stats.paired_randomization(d, exact=True)
        assert got.exact and got.n_resamples == 2**n
        for row, p in zip(d, got.pvalue):
            ref = scipy_stats.permutation_test(
                (row,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
            )
            assert p == pytest.approx(ref.pvalue, abs=1e-12)


def test_more_queries_than_the_exact_limit_are_resampled():
    judgments, runs = _setup(EXACT_MAX_QUERIES + 1)
    c = compare(judgments, runs, test="randomization", n_resamples=200, metrics=["ndcg"])
    assert not c.exact and c.table["p_value"].iloc[0] >= 1 / 201


@pytest.mark.parametrize("test", ["t", "randomization", "wilcoxon", "bootstrap"])
def test_fewer_than_5_paired_queries_warn_and_are_never_significant(test):
    # Four queries, the candidate far better on every one: the t-test alone would call it.
    judgments = [{"query_id": f"q{i}", "doc_uri": "hit", "relevance": 1} for i in range(4)]
    runs = {
        "a": [{"query_id": f"q{i}", "ranking": ["x"] * 1 + [f"y{i}", "hit"][: 1 + i % 2]} for i in range(4)],
        "b": [{"query_id": f"q{i}", "ranking": ["hit"]} for i in range(4)],
    }
    c = compare(judgments, runs, test=test, alpha=0.5, correction="none", metrics=["recall", "mrr"])
    assert int(c.table["n"].iloc[0]) == 4 < MIN_PAIRED_QUERIES
    assert not c.table["significant"].any()
    assert any("fewer than 5" in w for w in c.warnings)
    if test == "t":
        assert (c.table["p_value"] < 0.5).all()  # what significance would have been without the rule
    judgments5, runs5 = _setup(5)
    assert not any("fewer than 5" in w for w in compare(judgments5, runs5, test=test).warnings)


def test_compare_ndcg_linear_and_ndcg_side_by_side_take_their_gain_from_the_name():
    judgments, runs = _setup(8, seed=4)
    lin = re_.evaluate(judgments, runs, k=(10,), gain="linear").summary
    exp = re_.evaluate(judgments, runs, k=(10,)).summary
    c = compare(judgments, runs, metrics=["ndcg_linear", "ndcg"])
    assert c.metrics == ["ndcg_linear@10", "ndcg@10"]
    rows = c.table.set_index("metric")
    assert rows.loc["ndcg_linear@10", "mean"] == pytest.approx(lin.loc["b", "ndcg_linear@10"], abs=1e-12)
    assert rows.loc["ndcg_linear@10", "baseline_mean"] == pytest.approx(lin.loc["a", "ndcg_linear@10"], abs=1e-12)
    assert rows.loc["ndcg@10", "mean"] == pytest.approx(exp.loc["b", "ndcg@10"], abs=1e-12)
    assert rows.loc["ndcg_linear@10", "mean"] != pytest.approx(rows.loc["ndcg@10", "mean"])
    # gain="linear" makes a bare ndcg the linear one.
    assert compare(judgments, runs, metrics=["ndcg"], gain="linear").metrics == ["ndcg_linear@10"]


def test_cli_compare_metric_ndcg_linear_and_gain(tmp_path):
    judgments, runs = _setup(6, seed=2)
    jp, rp = tmp_path / "j.jsonl", tmp_path / "r.jsonl"
    jp.write_text("".join(json.dumps(j) + "\n" for j in judgments))
    rp.write_text("".join(json.dumps({**line, "system": s}) + "\n" for s, lines in runs.items() for line in lines))
    for extra, want in (
        (["--metric", "ndcg_linear"], ["ndcg_linear@10"]),
        (["--metric", "ndcg", "--metric", "ndcg_linear"], ["ndcg@10", "ndcg_linear@10"]),
        (["--metric", "ndcg", "--gain", "linear"], ["ndcg_linear@10"]),
    ):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["compare", "--judgments", str(jp), "--run", str(rp), "--json", *extra], stdout=out, stderr=err)
        assert code == 0, err.getvalue()
        assert [row["metric"] for row in json.loads(out.getvalue())["comparisons"]] == want


def test_bootstrap_pvalue_counts_float_noise_at_zero_on_both_sides():
    """The one p-value rule behind paired_bootstrap and compare_calibration, by hand: five
    resampled differences that are 0 up to float noise, three above, one below."""
    dist = np.array([1e-17, -2e-17, 0.0, 3e-13, -1e-16, 0.3, 0.25, 0.1, -0.2])
    # <= 0 (ties included): 5 + 1 = 6; >= 0: 5 + 3 = 8; p = 2 * (6 + 1) / (9 + 1) -> 1.
    assert stats.bootstrap_pvalue(dist) == 1.0
    # Noise past 1e-12 is a sign: 1e-11 counts only above zero.
    assert stats.bootstrap_pvalue(np.array([1e-11, 1e-11, 0.1, -0.2])) == pytest.approx(2 * 2 / 5)
    both = stats.bootstrap_pvalue(np.column_stack([dist, -dist]))
    assert both.tolist() == [1.0, 1.0]
