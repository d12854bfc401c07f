"""Judged metrics everywhere a metric goes: evaluate's frames, the report (valid against the
spec schema), gates of all four forms, tables. Numbers checked against numpy/scipy by hand."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
from conftest import spec_fixtures_dir

import retrieval_eval as rev
from retrieval_eval.analysis.decisions.gates import evaluate_gates
from retrieval_eval.datasets import demo_path

SAMPLES = demo_path("judge_samples.parquet")


@pytest.fixture(scope="module")
def demo():
    return rev.load_demo()


@pytest.fixture(scope="module")
def ev(demo):
    return rev.evaluate(demo.judgments, demo.runs, k=10, judged=SAMPLES)


@pytest.fixture(scope="module")
def raw():
    return pd.read_parquet(SAMPLES)


def _t_interval(x):
    return st.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=st.sem(x))


def test_per_query_column_is_the_mean_of_the_querys_samples(ev, raw):
    want = raw[raw["metric"] == "faithfulness"].groupby(["system", "query_id"])["value"].mean()
    pq = ev.per_query.set_index(["system", "query_id"])["faithfulness"]
    assert np.allclose(pq.reindex(want.index).to_numpy(), want.to_numpy(), atol=1e-12)
    assert ev.per_query["faithfulness"].dtype == np.float64


def test_per_passage_metric_averages_passages_and_samples_of_a_query(ev, raw):
    want = raw[raw["metric"] == "context_relevance"].groupby(["system", "query_id"])["value"].mean()
    got = ev.per_query.set_index(["system", "query_id"])["context_relevance"].reindex(want.index)
    assert np.allclose(got.to_numpy(), want.to_numpy(), atol=1e-12)


def test_summary_and_judged_table_are_the_clustered_measurement(ev, raw):
    means = raw[(raw["metric"] == "faithfulness") & (raw["system"] == "dense")].groupby("query_id")["value"].mean()
    row = ev.judged.set_index(["system", "metric"]).loc[("dense", "faithfulness")]
    assert ev.summary.loc["dense", "faithfulness"] == pytest.approx(means.mean(), abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(_t_interval(means.to_numpy()), abs=1e-11)
    assert row["n"] == 45 and row["samples"] == 135


def test_per_stratum_judged_value_is_the_strata_mean(ev, demo, raw):
    strata = demo.judgments.drop_duplicates("query_id").set_index("query_id")["stratum"].astype(str)
    sub = raw[(raw["metric"] == "answer_relevancy") & (raw["system"] == "rrf")]
    means = sub.groupby("query_id")["value"].mean()
    want = means.groupby(strata.reindex(means.index)).mean()
    got = ev.per_stratum.xs("rrf", level="system")["answer_relevancy"]
    assert np.allclose(got.reindex(want.index).to_numpy(), want.to_numpy(), atol=1e-12)


def test_report_carries_judged_measurements_and_validates_against_the_schema(ev):
    data = ev.report(system="dense").to_dict()
    schema = json.loads((spec_fixtures_dir() / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)
    m = data["metrics"]["faithfulness"]
    assert m["deterministic"] is False and m["n"] == 45 and len(m["ci"]) == 2
    assert {"samples", "var_between", "var_within", "icc"} <= set(m)
    assert data["metrics"]["ndcg@10"]["deterministic"] is True
    stratum = data["per_stratum"]["expressions"]["metrics"]["context_relevance"]
    assert stratum["n"] == 12 and stratum["deterministic"] is False


def test_all_four_gate_forms_on_judged_metrics(ev, demo):
    report = ev.report(system="dense")
    value = report.metrics["faithfulness"].value
    lower = report.metrics["faithfulness"].ci[0]
    res = evaluate_gates(
        report,
        [f"faithfulness:{value - 0.01}", f"faithfulness:ci-lower:{lower + 0.001}", "worst-stratum:faithfulness:0.5"],
    )
    assert [r.status for r in res.results] == ["PASS", "FAIL", "PASS"]
    assert res.results[1].observed == pytest.approx(lower)
    base = rev.evaluate(demo.judgments, demo.runs, k=10, judged=SAMPLES).report(system="bm25")
    delta = evaluate_gates(report, ["faithfulness:-0.0"], baseline=base)
    assert delta.results[0].baseline == pytest.approx(base.metrics["faithfulness"].value)
    assert delta.status == ("PASS" if value >= base.metrics["faithfulness"].value else "FAIL")


def test_ci_lower_gate_over_one_sample_in_all_is_indeterminate(demo):
    one = pd.DataFrame({"query_id": ["st-01"], "metric": ["faithfulness"], "value": [0.9]})
    ev = rev.evaluate(demo.judgments, demo.runs[demo.runs["system"] == "dense"], k=10, judged=one)
    report = ev.report()
    assert "ci" not in report.metrics["faithfulness"].to_dict()
    res = evaluate_gates(report, ["faithfulness:ci-lower:0.5"])
    assert res.status == "INDETERMINATE" and "no confidence interval" in res.reasons[0]


def test_gate_on_a_judged_metric_the_report_lacks_names_the_nearest(demo):
    report = rev.evaluate(demo.judgments, demo.runs, k=10).report(system="dense")
    res = evaluate_gates(report, ["faithfulness:ci-lower:0.8"])
    assert res.status == "INDETERMINATE"
    assert res.reasons[0].startswith("faithfulness:ci-lower:0.8: metric 'faithfulness' not present in the report")


def test_tables_and_html_show_judged_metrics(ev):
    assert "faithfulness" in ev.to_markdown() and "var_between" in ev.to_markdown("judged")
    assert "icc" in ev._repr_html_()
    assert "faithfulness" in ev.to_latex("judged")


def test_judge_scores_without_system_go_to_the_only_system_and_are_refused_with_several(demo):
    rows = [{"query_id": "st-01", "metric": "m", "value": 0.5}]
    ev = rev.evaluate(demo.judgments, demo.runs[demo.runs["system"] == "bm25"], k=10, judged=rows)
    assert ev.judged["system"].tolist() == ["bm25"]
    with pytest.raises(ValueError, match="name no system, but the run has 3"):
        rev.evaluate(demo.judgments, demo.runs, k=10, judged=rows)
    with pytest.raises(ValueError, match="system\\(s\\) nope the run does not have"):
        rev.evaluate(demo.judgments, demo.runs, k=10, judged=[dict(rows[0], system="nope")])


def test_evaluate_without_judged_is_unchanged(demo):
    ev = rev.evaluate(demo.judgments, demo.runs, k=10)
    assert ev.judged is None and ev.judged_metrics == []


def test_build_report_takes_judged(demo):
    report = rev.build_report(demo.judgments, demo.runs, system="bm25", judged=SAMPLES)
    assert report.metrics["answer_relevancy"].deterministic is False
