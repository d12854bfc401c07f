"""Label agreement: kappa against scikit-learn, alpha against the krippendorff package, the
metric effect against the engine run on each label set by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

krippendorff = pytest.importorskip("krippendorff")
from sklearn.metrics import cohen_kappa_score

from retrieval_eval import label_agreement, load_demo
from retrieval_eval.analysis.trust.agreement import cohen_kappa, krippendorff_alpha, overlapping_labels
from retrieval_eval.engine.metrics import aggregate, compute

GRADES = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def demo():
    return load_demo()


def labels(pairs, who):
    return [{"query_id": q, "doc_uri": d, "relevance": g, "labeled_by": who, "stratum": s} for q, d, g, s in pairs]


grades = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=60)


@settings(max_examples=60, deadline=None)
@given(grades)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_scikit_learn(weights, pairs):
    a, b = np.array(pairs).T
    ours = cohen_kappa(a, b, weights, labels=GRADES)
    with warnings.catch_warnings():  # sklearn warns where kappa is 0/0, and returns NaN
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score(a, b, weights=weights, labels=GRADES)
    if math.isnan(ours):
        assert math.isnan(theirs)
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4),
    st.integers(2, 30),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["nominal", "ordinal", "interval"]),
)
def test_krippendorff_alpha_matches_the_krippendorff_package(raters, units, seed, level):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 4, size=(raters, units)).astype(float)
    m[rng.random(m.shape) < 0.25] = np.nan
    present = (~np.isnan(m)).sum(axis=0) >= 2
    if present.sum() < 1 or np.unique(m[:, present][~np.isnan(m[:, present])]).size < 2:
        return  # alpha is 0/0 there; the package raises
    ours = krippendorff_alpha(m, level)
    theirs = krippendorff.alpha(
        reliability_data=m,
        level_of_measurement=level,
        value_domain=[0.0, 1.0, 2.0, 3.0] if level == "ordinal" else None,
    )
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_units_are_the_pairs_labeled_by_two_labelers():
    a = labels([("q1", "d1", 3, "s"), ("q1", "d2", 0, "s"), ("q2", "d3", 1, "t")], "human:ann")
    b = labels([("q1", "d1", 2, "s"), ("q2", "d3", 1, "t"), ("q2", "d9", 2, "t")], "synthetic:x")
    u = overlapping_labels(a + b)
    assert list(zip(u["query_id"], u["key"])) == [("q1", "d1"), ("q2", "d3")]
    assert list(u["human:ann"]) == [3.0, 1.0] and list(u["synthetic:x"]) == [2.0, 1.0]


def test_demo_agreement_against_scikit_learn_and_krippendorff(demo):
    ag = label_agreement(demo.judgments, demo.judgments_lexical)
    first, second = ag.labelers
    a = ag.units[first].to_numpy(int)
    b = ag.units[second].to_numpy(int)
    assert len(a) == 118
    assert ag.value("kappa") == pytest.approx(cohen_kappa_score(a, b, labels=GRADES))
    assert ag.value("kappa_quadratic") == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=GRADES))
    assert ag.value("kappa_binary") == pytest.approx(cohen_kappa_score(a >= 1, b >= 1))
    assert ag.value("alpha") == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement="ordinal")
    )
    # the confusion matrix: rows the first labeler
    expected = pd.crosstab(a, b).reindex(index=GRADES, columns=GRADES, fill_value=0)
    assert (ag.confusion.to_numpy() == expected.to_numpy()).all()


def test_low_agreement_is_warned_about(demo):
    ag = label_agreement(demo.judgments, demo.judgments_lexical)
    assert ag.value("kappa_binary") < 0.6
    assert any("below 0.6" in w for w in ag.warnings)


def test_per_stratum_kappa_is_the_strata_own(demo):
    ag = label_agreement(demo.judgments, demo.judgments_lexical)
    first, second = ag.labelers
    for rec in ag.per_stratum.itertuples(index=False):
        u = ag.units[ag.units["stratum"] == rec.stratum]
        a, b = u[first].to_numpy() >= 1, u[second].to_numpy() >= 1
        expected = cohen_kappa_score(a, b, labels=[False, True])
        assert rec.kappa_binary == pytest.approx(expected, abs=1e-12, nan_ok=True)
        assert rec.n == len(u)


def test_metric_effect_scores_the_shared_queries_with_each_label_set(demo):
    ag = label_agreement(demo.judgments, demo.judgments_lexical, run=demo.runs, k=10)
    shared = sorted(set(demo.judgments_lexical["query_id"]))
    run = demo.runs[demo.runs["query_id"].isin(shared)]
    for labels_, col in ((demo.judgments, "labels_first"), (demo.judgments_lexical, "labels_second")):
        mine = labels_[labels_["query_id"].isin(shared)]
        means = aggregate(compute(mine, run, k=(10,)))
        got = ag.metrics[ag.metrics["metric"] == "ndcg@10"].set_index("system")[col]
        for system in ("dense", "bm25", "rrf"):
            assert got[system] == pytest.approx(means.loc[system, "ndcg@10"])
        n_col = "n_first" if col == "labels_first" else "n_second"
        with_positive = mine.loc[mine["relevance"] >= 1, "query_id"].nunique()
        assert (ag.metrics[n_col] == with_positive).all()


def test_one_labeler_is_refused():
    with pytest.raises(ValueError, match="needs two labelers"):
        label_agreement(labels([("q1", "d1", 1, "s")], "human:ann"))


def test_few_shared_units_make_every_measurement_indeterminate():
    a = labels([("q1", f"d{i}", i % 2, "s") for i in range(6)], "human:ann")
    b = labels([("q1", f"d{i}", (i // 2) % 2, "s") for i in range(6)], "synthetic:x")
    ag = label_agreement(a + b)
    assert all("indeterminate" in m for m in ag.measurements().values())


def test_plot_is_the_confusion_heatmap(demo):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    disp = label_agreement(demo.judgments, demo.judgments_lexical).plot()
    assert disp.image_.get_array().shape == (4, 4)
    plt.close(disp.figure_)


def test_html_view_names_both_labelers(demo):
    html = label_agreement(demo.judgments, demo.judgments_lexical)._repr_html_()
    assert "lexical-overlap" in html and "kappa_binary" in html


def test_alpha_spans_every_labeler_while_kappa_compares_the_first_two():
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 4, size=30)
    sets = []
    for who, noise in (("human:a", 0), ("human:b", 1), ("synthetic:c", 2)):
        g = np.clip(truth + rng.integers(-noise, noise + 1, size=30), 0, 3)
        keep = rng.random(30) < 0.85  # each labeler skips some units
        sets += labels([("q1", f"d{i}", int(g[i]), "s") for i in range(30) if keep[i]], who)
    ag = label_agreement(sets)
    assert ag.labelers == ["human:a", "human:b", "synthetic:c"]
    wide = overlapping_labels(sets)
    matrix = wide[["human:a", "human:b", "synthetic:c"]].to_numpy(float).T
    assert ag.value("alpha") == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"), abs=1e-9
    )
    both = wide[wide["human:a"].notna() & wide["human:b"].notna()]
    assert ag.value("kappa") == pytest.approx(
        cohen_kappa_score(both["human:a"].astype(int), both["human:b"].astype(int), labels=GRADES)
    )
