"""compare over every pair of systems and any cutoffs (issue 33 item 1, issue 28 item 3).

Oracles: ranx's ``compare`` (means, paired t p-values, Fisher randomization p-values within
Monte-Carlo error, the superscript pattern), statsmodels' ``multipletests`` for the one
correction over every row, scipy's ``wilcoxon`` for each zero_method, and the engine's own
``evaluate`` only where it is the definition (the per-query columns compared).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss
from statsmodels.stats.multitest import multipletests

import retrieval_eval as rev
from retrieval_eval.analysis.decisions.compare import Comparison, compare

ranx = pytest.importorskip("ranx")

SYSTEMS = ["bm25", "dense", "rrf", "splade", "colbert"]
N_QUERIES, DEPTH = 50, 100


def _data(seed: int = 7):
    """Five systems' 100-document runs on 50 graded queries (grades 0-3), scores without ties."""
    rng = np.random.default_rng(seed)
    qrels, jrows = {}, []
    for q in range(N_QUERIES):
        qid = f"q{q:02d}"
        docs = rng.choice(300, size=30, replace=False)
        grades = rng.choice([0, 1, 2, 3], size=30, p=[0.55, 0.25, 0.12, 0.08])
        grades[0] = max(grades[0], 1)  # every query has a positive
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(docs, grades)}
        jrows += [{"query_id": qid, "doc_id": f"d{d}", "relevance": int(g)} for d, g in zip(docs, grades)]
    runs, rrows = {}, []
    for i, s in enumerate(SYSTEMS):
        runs[s] = {}
        for qid, labels in qrels.items():
            docs = rng.choice(300, size=DEPTH, replace=False)
            # better systems lift the labelled documents' scores a little more
            boost = np.array([labels.get(f"d{d}", 0) for d in docs]) * (0.3 + 0.15 * i)
            scores = rng.random(DEPTH) + boost + np.arange(DEPTH) * 1e-9
            runs[s][qid] = {f"d{d}": float(x) for d, x in zip(docs, scores)}
            order = np.argsort(-scores)  # a frame without ranks is read in row order
            rrows += [{"system": s, "query_id": qid, "doc_id": f"d{docs[o]}", "score": float(scores[o])} for o in order]
    return qrels, runs, pd.DataFrame(jrows), pd.DataFrame(rrows)


QRELS, RUNS, JUDGMENTS, RUN = _data()
#: ours -> ranx's name of the same measure
SAME = {
    "ndcg_linear@10": "ndcg@10",
    "ndcg@10": "ndcg_burges@10",
    "map@100": "map@100",
    "recall@100": "recall@100",
    "P_5": "precision@5",
}


@pytest.fixture(scope="module")
def ranx_report():
    def report(stat_test, **kw):
        return ranx.compare(
            ranx.Qrels(QRELS),
            [ranx.Run(RUNS[s], name=s) for s in SYSTEMS],
            metrics=list(SAME.values()),
            stat_test=stat_test,
            max_p=0.05,
            **kw,
        )

    return report


@pytest.fixture(scope="module")
def t_all():
    return compare(JUDGMENTS, RUN, metrics=list(SAME), pairs="all", test="t", correction="none")


def test_all_pairs_has_every_pair_once_for_every_metric(t_all):
    pairs = set(zip(t_all.table["system"], t_all.table["baseline"]))
    assert len(pairs) == 10 and len(t_all.table) == 10 * len(SAME)
    assert {frozenset(p) for p in pairs} == {frozenset((a, b)) for i, a in enumerate(SYSTEMS) for b in SYSTEMS[i + 1 :]}
    # the earlier system in run order is a row's baseline
    assert all(SYSTEMS.index(b) < SYSTEMS.index(s) for s, b in pairs)
    assert t_all.baseline is None and t_all.pairs == "all"
    assert list(t_all.table.columns[:3]) == ["system", "baseline", "metric"]
    assert str(t_all.table["baseline"].dtype) == "string"


def test_means_equal_ranx_for_every_cutoff_and_name(t_all, ranx_report):
    rep = ranx_report("student")
    for row in t_all.table.itertuples():
        assert row.mean == pytest.approx(rep.results[row.system][SAME[row.metric]], abs=1e-12)
        assert row.baseline_mean == pytest.approx(rep.results[row.baseline][SAME[row.metric]], abs=1e-12)


def test_paired_t_p_values_equal_ranx(t_all, ranx_report):
    rep = ranx_report("student")
    for row in t_all.table.itertuples():
        theirs = rep.comparisons[row.system, row.baseline][SAME[row.metric]]["p_value"]
        assert row.p_value == pytest.approx(theirs, rel=1e-9, abs=1e-15)


def test_randomization_p_values_agree_with_ranx_fisher_within_monte_carlo_error(ranx_report):
    rep = ranx_report("fisher", n_permutations=20_000, random_seed=3)
    # continuous measures only: on a lattice (P_5 moves in steps of 0.2) many sign assignments tie
    # the observed mean difference exactly, and ranx's float comparison (no tolerance) misses some
    # of those ties, giving a smaller p (0.0883 against 0.1024 on this data)
    continuous = ["ndcg_linear@10", "ndcg@10", "map@100", "recall@100"]
    c = compare(
        JUDGMENTS,
        RUN,
        metrics=continuous,
        pairs="all",
        test="randomization",
        n_resamples=20_000,
        seed=1,
        correction="none",
    )
    ours = c.table["p_value"].to_numpy()
    theirs = np.array([rep.comparisons[r.system, r.baseline][SAME[r.metric]]["p_value"] for r in c.table.itertuples()])
    # two independent estimates of one p, 20,000 draws each: 5 standard deviations of their difference
    p = (ours + theirs) / 2
    assert np.all(np.abs(ours - theirs) <= 5 * np.sqrt(p * (1 - p) * 2 / 20_000) + 1e-4)
    assert np.corrcoef(ours, theirs)[0, 1] > 0.995


def test_superscript_pattern_equals_ranx(t_all, ranx_report):
    rep = ranx_report("student")
    md = t_all.to_markdown(layout="wide")
    rows = [line.split(" | ") for line in md.splitlines()[2 : 2 + len(SYSTEMS)]]
    letters = {s: chr(ord("a") + i) for i, s in enumerate(SYSTEMS)}
    cols = md.splitlines()[0].strip("| ").split(" | ")[2:]
    label_to_ours = {rev.viz.metric_label(m)[0]: m for m in SAME}
    for row in rows:
        system = row[1]
        for header, text in zip(cols, row[2:]):
            metric = SAME[label_to_ours[header]]
            ours = text.split("<sup>")[1].split("</sup>")[0] if "<sup>" in text else ""
            theirs = "".join(
                letters[o]
                for o in SYSTEMS
                if o != system
                and rep.comparisons[system, o][metric]["significant"]
                and rep.results[system][metric] > rep.results[o][metric]
            )
            assert ours == theirs, (system, header)


def test_one_correction_runs_over_every_row_of_every_pair_and_cutoff():
    c = compare(
        JUDGMENTS, RUN, k=[5, 10], metrics=["ndcg", "recall", "map@100"], pairs="all", test="t", correction="holm"
    )
    assert sorted(set(c.table["metric"])) == sorted(["ndcg@5", "ndcg@10", "recall@5", "recall@10", "map@100"])
    expected = multipletests(c.table["p_value"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(c.table["p_adjusted"].to_numpy(), expected, rtol=1e-12)
    assert (c.table["significant"] == (c.table["p_adjusted"] <= 0.05)).all()
    assert "across 50 comparisons" in c.describe()


def test_a_named_baseline_is_listed_first_among_all_pairs():
    c = compare(JUDGMENTS, RUN, metrics=["ndcg"], pairs="all", baseline="rrf", test="t")
    rows = c.table[(c.table["system"] == "rrf") | (c.table["baseline"] == "rrf")]
    assert (rows["baseline"] == "rrf").all() and len(rows) == 4


def test_baseline_pairs_as_before_name_the_baseline_in_every_row():
    c = compare(JUDGMENTS, RUN, metrics=["ndcg"], baseline="dense", test="t")
    assert set(c.table["baseline"]) == {"dense"} and c.baseline == "dense"
    assert list(c.table["system"]) == ["bm25", "rrf", "splade", "colbert"]


def test_the_columns_compared_are_the_evaluations_columns():
    c = compare(JUDGMENTS, RUN, k=[5, 10], metrics=["ndcg", "nDCG@10", "P_5"], pairs="all", test="t")
    ev = rev.evaluate(JUDGMENTS, RUN, k=(5, 10), measures=["nDCG@10", "P_5"])
    summary = ev.summary
    for row in c.table.itertuples():
        assert row.mean == pytest.approx(summary.loc[row.system, row.metric], abs=1e-12)


def test_catalogue_names_and_cutoffs_reach_the_comparison():
    c = compare(JUDGMENTS, RUN, metrics=["nDCG@10", "P.5,10", "map@100", "ndcg_linear@10"], test="t")
    assert c.metrics == ["nDCG@10", "P_5", "P_10", "map@100", "ndcg_linear@10"]  # as asked
    # trec_eval's nDCG@10 and the spec's linear-gain nDCG@10 are one number
    t = c.table.set_index(["system", "metric"])["mean"]
    for s in SYSTEMS[1:]:
        assert t[(s, "nDCG@10")] == pytest.approx(t[(s, "ndcg_linear@10")], abs=1e-12)


def test_an_unknown_metric_names_both_vocabularies():
    with pytest.raises(ValueError, match="neither a spec metric .* nor a catalogue measure"):
        compare(JUDGMENTS, RUN, metrics=["nonsense@10"])


def test_any_metric_column_of_an_evaluation_is_comparable():
    ev = rev.evaluate(JUDGMENTS, RUN, k=(10,))
    rng = np.random.default_rng(0)
    pq = ev.per_query.assign(faithfulness=rng.random(len(ev.per_query)))
    ev.per_query = pq  # an LLM-judged column, as helper metrics add them
    c = compare(JUDGMENTS, ev, metrics=["faithfulness", "ndcg"], pairs="all", test="t", correction="none")
    assert c.metrics == ["faithfulness", "ndcg@10"]
    row = c.table[(c.table["system"] == "dense") & (c.table["metric"] == "faithfulness")].iloc[0]
    wide = pq.pivot(index="query_id", columns="system", values="faithfulness")
    ref = ss.ttest_rel(wide["dense"], wide["bm25"])
    assert row.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert row["mean"] == pytest.approx(wide["dense"].mean(), abs=1e-12)


def test_queries_left_out_are_listed_not_dropped_silently():
    j = pd.concat([JUDGMENTS, pd.DataFrame([{"query_id": "zz-none", "doc_id": "d1", "relevance": 0}])])
    r = pd.concat(
        [
            RUN,
            pd.DataFrame(
                [
                    {"system": s, "query_id": q, "doc_id": "d1", "score": 1.0}
                    for s in SYSTEMS
                    for q in ("zz-none", "zz-unjudged")
                ]
            ),
        ]
    )
    c = compare(j, r, metrics=["ndcg"], test="t")
    assert c.excluded == ["zz-none"] and c.unjudged == ["zz-unjudged"]
    assert any("zz-none" in w for w in c.warnings) and any("zz-unjudged" in w for w in c.warnings)
    assert c.n_queries == N_QUERIES


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_rows_equal_scipy_for_each_zero_method(zero_method):
    c = compare(
        JUDGMENTS,
        RUN,
        metrics=["ndcg", "hit_rate", "mrr"],
        pairs="all",
        test="wilcoxon",
        zero_method=zero_method,
        correction="none",
    )
    pq = c.per_query
    for row in c.table.itertuples():
        d = pq[(pq["system"] == row.system) & (pq["baseline_system"] == row.baseline) & (pq["metric"] == row.metric)][
            "delta"
        ].to_numpy()
        if not d.any():
            continue
        assert row.p_value == pytest.approx(ss.wilcoxon(d, zero_method=zero_method).pvalue, rel=1e-9)
    assert {
        "wilcox": "zero differences dropped",
        "pratt": "Pratt's treatment of zeros",
        "zsplit": "zero differences split",
    }[zero_method] in c.describe()


def test_zero_method_is_checked():
    with pytest.raises(ValueError, match="zero_method"):
        compare(JUDGMENTS, RUN, test="wilcoxon", zero_method="drop")


def test_per_query_and_wins_name_both_systems(t_all):
    pq, wtl = t_all.per_query, t_all.wins_ties_losses
    assert len(pq) == len(t_all.table) * N_QUERIES
    sub = pq[(pq["system"] == "rrf") & (pq["baseline_system"] == "dense") & (pq["metric"] == "map@100")]
    assert sub["delta"].mean() == pytest.approx(
        t_all.table.set_index(["system", "baseline", "metric"]).loc[("rrf", "dense", "map@100"), "delta"]
    )
    w = wtl.set_index(["system", "baseline", "metric"]).loc[("rrf", "dense", "map@100")]
    assert (w.wins, w.ties, w.losses) == ((sub["delta"] > 0).sum(), (sub["delta"] == 0).sum(), (sub["delta"] < 0).sum())


def _same(a: Comparison, b: Comparison) -> None:
    for name in ("table", "per_query", "wins_ties_losses"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    for attr in (
        "baseline",
        "systems",
        "metrics",
        "k",
        "ks",
        "pairs",
        "test",
        "zero_method",
        "correction",
        "alpha",
        "confidence",
        "n_resamples",
        "seed",
        "exact",
        "missing",
        "excluded",
        "unjudged",
        "warnings",
    ):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert a.to_markdown() == b.to_markdown() and a._repr_html_() == b._repr_html_()
    for layout in ("long", "wide"):
        assert a.to_latex(layout=layout) == b.to_latex(layout=layout)
        assert a.to_markdown(layout=layout) == b.to_markdown(layout=layout)


def test_a_comparison_reloads_from_json_the_same(t_all):
    text = json.dumps(t_all.to_dict(), allow_nan=False)  # JSON-safe: no NaN, no numpy scalars
    _same(t_all, Comparison.from_dict(json.loads(text)))


def test_a_comparison_reloads_from_parquet_the_same(t_all, tmp_path):
    t_all.to_parquet(tmp_path / "c.parquet")
    _same(t_all, Comparison.read_parquet(tmp_path / "c.parquet"))


def test_a_comparison_with_calibration_reloads_the_same(tmp_path):
    demo = rev.load_demo()
    c = compare(demo.judgments, demo.runs, baseline="bm25", queries=demo.queries, n_resamples=300)
    assert c.calibration is not None
    back = Comparison.from_dict(json.loads(json.dumps(c.to_dict(), allow_nan=False)))
    _same(c, back)
    pd.testing.assert_frame_equal(back.calibration.table, c.calibration.table)
    c.to_parquet(tmp_path / "d.parquet")
    _same(c, Comparison.read_parquet(tmp_path / "d.parquet"))


def test_a_reloaded_comparison_plots_the_same(t_all, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    t_all.to_parquet(tmp_path / "c.parquet")
    back = Comparison.read_parquet(tmp_path / "c.parquet")
    for kind in ("forest", "per_query"):
        a, b = t_all.plot(kind), back.plot(kind)
        la = [t.get_text() for t in a.ax_.get_yticklabels()] + [a.ax_.get_title(), a.ax_.get_xlabel()]
        lb = [t.get_text() for t in b.ax_.get_yticklabels()] + [b.ax_.get_title(), b.ax_.get_xlabel()]
        assert la == lb
        import matplotlib.pyplot as plt

        plt.close("all")


def test_read_parquet_refuses_a_file_that_is_no_comparison(tmp_path):
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="not a comparison"):
        Comparison.read_parquet(tmp_path / "x.parquet")


def test_a_comparison_without_p_values_reloads_with_nan_not_zero():
    j = pd.DataFrame([{"query_id": "q1", "doc_id": "a", "relevance": 1}])
    r = pd.DataFrame([{"system": s, "query_id": "q1", "doc_id": d, "score": 1.0} for s, d in (("x", "a"), ("y", "b"))])
    c = compare(j, r, metrics=["ndcg", "P_5"], test="t", pairs="all")
    assert c.table["p_value"].isna().all()
    back = Comparison.from_dict(json.loads(json.dumps(c.to_dict(), allow_nan=False)))
    _same(c, back)
    assert back.table["p_value"].isna().all()
