"""The report: schema-valid, honest verdict reasons, and a faithful round trip."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import jsonschema
import pytest
from conftest import spec_fixtures_dir

import retrieval_eval as re_

CASES = ["basic", "strata", "stratum-order", "no-positives", "nothing-scored", "duplicate-ranking", "unsound-judgments"]


def schema():
    return json.loads((spec_fixtures_dir() / "schemas" / "report.schema.json").read_text())


def fixture_report(name, **kw):
    root = spec_fixtures_dir() / name
    return re_.build_report(root / "judgments.jsonl", root / "run.jsonl", **kw)


@pytest.mark.parametrize("name", CASES)
def test_report_validates_against_the_spec_schema(name):
    data = fixture_report(name, k=3).to_dict()
    jsonschema.validate(data, schema(), format_checker=jsonschema.FormatChecker())
    assert data["spec_version"] == "1"
    assert data["tool"] == {"name": "retrieval-eval", "version": re_.TOOL_VERSION}


def test_gated_report_validates_and_round_trips_with_intervals():
    report = fixture_report("basic", k=3).to_dict()
    report["metrics"]["faithfulness"] = re_.summarize([0.8, 1.0, 0.6]).to_dict()
    back = re_.Report.from_dict(json.loads(json.dumps(report)))
    assert back.metrics["faithfulness"].ci == tuple(report["metrics"]["faithfulness"]["ci"])
    gated = back.with_gates(["faithfulness:ci-lower:0.1", "recall@3:0.9"]).to_dict()
    jsonschema.validate(gated, schema())
    assert [g["status"] for g in gated["verdict"]["gates"]] == ["PASS", "FAIL"]
    assert gated["verdict"]["status"] == "FAIL"


def test_generated_at_is_utc_iso():
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert fixture_report("basic", k=3, now=now).to_dict()["generated_at"] == "2026-01-02T03:04:05Z"


def test_per_stratum_only_when_judgments_carry_strata():
    assert "per_stratum" not in fixture_report("basic", k=3).to_dict()
    assert set(fixture_report("strata", k=3).to_dict()["per_stratum"]) == {"billing", "legal"}


def test_missing_and_excluded_queries_are_named_in_reasons():
    judgments = [
        {"query_id": "q1", "query": "a", "doc_uri": "d1", "relevance": 1, "labeled_by": "human:x"},
        {"query_id": "q2", "query": "b", "doc_uri": "d2", "relevance": 1, "labeled_by": "human:x"},
        {"query_id": "q3", "query": "c", "doc_uri": "d3", "relevance": 0, "labeled_by": "human:x"},
    ]
    run = [{"query_id": "q1", "ranking": ["d1"]}]
    data = re_.build_report(judgments, run, k=1).to_dict()
    assert data["verdict"]["status"] == "PASS"
    assert "1 judged query had no run entry and scored zero" in data["verdict"]["reasons"]
    assert (
        "1 judged query has no label at relevance >= 1 and was excluded from the averages" in data["verdict"]["reasons"]
    )
    assert data["metrics"]["recall@1"]["value"] == 0.5


def test_report_names_drift_when_a_corpus_is_given():
    root = spec_fixtures_dir() / "drift"
    judgments = re_.read_judgments(root / "judgments.jsonl")
    run = [{"query_id": q, "ranking": ["x"]} for q in ("q1", "q2", "q3", "q4")]
    data = re_.build_report(judgments, run, k=1, corpus=root / "corpus.json").to_dict()
    assert data["judgments"]["drift"]["invalid_ratio"] == 0.75
    assert "75% of judgments no longer match the live corpus" in data["verdict"]["reasons"]
    assert data["corpus"]["chunks"] == 4 and data["corpus"]["documents"] == 1
    jsonschema.validate(data, schema())


def test_multi_system_report_needs_a_system_name():
    judgments = [{"query_id": "q1", "doc_uri": "d1", "relevance": 1}]
    run = {"a": [{"query_id": "q1", "ranking": ["d1"]}], "b": [{"query_id": "q1", "ranking": ["x"]}]}
    ev = re_.evaluate(judgments, run, k=(1,))
    with pytest.raises(ValueError, match="name one with system="):
        ev.report()
    assert ev.report(system="b").to_dict()["metrics"]["recall@1"]["value"] == 0.0
    assert "<table>" in ev._repr_html_() and "<table>" in ev.report(system="a")._repr_html_()


def test_empty_judgments_give_an_indeterminate_report():
    data = re_.build_report([], [{"query_id": "q1", "ranking": ["d1"]}]).to_dict()
    assert data["metrics"] == {}
    assert data["verdict"]["status"] == "INDETERMINATE"
    assert "no judged queries, so no metric was computed" in data["verdict"]["reasons"]


def test_queries_file_strata_fill_unstratified_judgments():
    judgments = [
        {"query_id": "q1", "doc_uri": "d1", "relevance": 1},
        {"query_id": "q2", "doc_uri": "d2", "relevance": 1, "stratum": "own"},
    ]
    queries = [{"query_id": "q1", "stratum": "from-file"}, {"query_id": "q2", "stratum": "ignored"}, {"query_id": "q3"}]
    run = [{"query_id": "q1", "ranking": ["d1"]}, {"query_id": "q2", "ranking": ["x"]}]
    ev = re_.evaluate(judgments, run, k=(1,), queries=queries)
    assert ev.per_query.set_index("query_id")["stratum"].to_dict() == {"q1": "from-file", "q2": "own"}
    data = ev.report().to_dict()
    assert data["per_stratum"]["from-file"]["metrics"]["recall@1"]["value"] == 1.0
    assert data["per_stratum"]["own"]["metrics"]["recall@1"]["value"] == 0.0


def test_an_empty_ranking_scores_zero_but_is_not_missing():
    judgments = [
        {"query_id": "q1", "doc_uri": "d1", "relevance": 1},
        {"query_id": "q2", "doc_uri": "d2", "relevance": 1},
    ]
    run = re_.parse_run('{"query_id": "q1", "ranking": []}\n')
    ev = re_.evaluate(judgments, run, k=(1,))
    assert ev.per_query.set_index("query_id")["missing"].to_dict() == {"q1": False, "q2": True}
    assert ev.summary.loc["run", "recall@1"] == 0.0
    assert "1 judged query had no run entry and scored zero" in ev.report().to_dict()["verdict"]["reasons"]


def test_calibration_figures_per_stratum_feed_worst_stratum_gates():
    demo = re_.load_demo()
    ev = re_.evaluate(demo.judgments, demo.runs, k=(10,), queries=demo.queries)
    data = ev.report(system="dense").to_dict()
    jsonschema.validate(data, schema())
    near, off = data["per_stratum"]["near-miss"], data["per_stratum"]["off-topic"]
    cal = re_.calibrate(demo.judgments, demo.runs, queries=demo.queries).top1
    dense_neg = cal[(cal["system"] == "dense") & (cal["kind"] == "negative")]
    cutoff = data["calibration"]["cutoff"]
    for entry, stratum in ((near, "near-miss"), (off, "off-topic")):
        scores = dense_neg.loc[dense_neg["stratum"] == stratum, "top1_score"]
        assert entry["n"] == len(scores)
        assert entry["metrics"]["negative_satisfaction"]["value"] == pytest.approx((scores < cutoff).mean(), abs=1e-12)
    worst = min(near["metrics"]["negative_satisfaction"]["value"], off["metrics"]["negative_satisfaction"]["value"])
    gated = re_.Report(data).with_gates(
        [f"worst-stratum:negative_satisfaction:{worst}", f"worst-stratum:negative_satisfaction:{worst + 0.01}"]
    )
    assert [g["status"] for g in gated.to_dict()["verdict"]["gates"]] == ["PASS", "FAIL"]
    rrf = ev.report(system="rrf").with_gates(["worst-stratum:negative_satisfaction:0.1"]).to_dict()
    assert rrf["verdict"]["gates"][0]["status"] == "INDETERMINATE"
