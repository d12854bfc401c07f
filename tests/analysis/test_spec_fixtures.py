"""The normative conformance cases of the spec (vendored in tests/fixtures/spec), one parametrized test per rule."""

from __future__ import annotations

import pytest
from conftest import load_expected, spec_fixtures_dir

import retrieval_eval as re_

TOL = 1e-12


def case(name: str):
    root = spec_fixtures_dir() / name
    run = root / "run.jsonl"
    return re_.read_judgments(root / "judgments.jsonl"), (re_.read_run(run) if run.exists() else None)


def assert_metrics(got: dict, expected: dict):
    assert set(expected) <= set(got), f"missing metrics {set(expected) - set(got)}"
    for name, value in expected.items():
        observed = got[name].value if hasattr(got[name], "value") else got[name]["value"]
        assert observed == pytest.approx(value, abs=TOL), name


@pytest.mark.parametrize("name", ["basic", "no-positives", "duplicate-ranking", "strata", "stratum-order"])
def test_macro_metrics_match_the_fixture(name):
    expected = load_expected(name)
    judgments, run = case(name)
    result = re_.score(judgments, run, k=expected["k"], threshold=expected.get("threshold", 1))
    assert_metrics(result.metrics, expected["metrics"])
    for m in result.metrics.values():
        assert m.n == 1 and m.deterministic is True


def test_basic_at_k1_and_per_query():
    expected = load_expected("basic")
    judgments, run = case("basic")
    assert_metrics(re_.score(judgments, run, k=1).metrics, expected["metrics_k1"])
    per_query = re_.score(judgments, run, k=3).per_query
    for qid, values in expected["per_query"].items():
        for metric, value in values.items():
            assert per_query.loc[qid, metric] == pytest.approx(value, abs=TOL)


def test_basic_to_qrels_lines():
    judgments, _ = case("basic")
    assert re_.to_qrels(judgments).splitlines() == load_expected("basic")["qrels_lines"]


def test_several_cutoffs_in_one_pass_equal_separate_calls():
    judgments, run = case("basic")
    both = re_.evaluate(judgments, run, k=(1, 3)).summary.iloc[0]
    for _k, key in ((3, "metrics"), (1, "metrics_k1")):
        for name, value in load_expected("basic")[key].items():
            assert both[name] == pytest.approx(value, abs=TOL)


def test_chunk_id_vectors():
    expected = load_expected("chunk-id")
    for v in expected["normalize"]:
        assert re_.normalize(v["in"]) == v["out"]
    for v in expected["text_sha"]:
        assert re_.text_sha(v["text"]) == v["out"]
    for v in expected["chunk_id"]:
        assert (
            re_.chunk_id(v["doc_uri"], v["doc_revision"], v["ordinal"], v["text"], v["chunker_fingerprint"]) == v["out"]
        )


def test_strata_scores_and_worst_stratum():
    expected = load_expected("strata")
    judgments, run = case("strata")
    per_stratum = re_.score_by_stratum(judgments, run, k=expected["k"])
    for name, s in expected["per_stratum"].items():
        assert per_stratum[name].n == s["n"]
        assert_metrics(per_stratum[name].metrics, s["metrics"])
    worst = re_.worst_stratum(per_stratum, expected["worst_stratum"]["metric"])
    assert worst["name"] == expected["worst_stratum"]["name"]
    assert worst["value"] == pytest.approx(expected["worst_stratum"]["value"], abs=TOL)
    ev = re_.evaluate(judgments, run, k=expected["k"])
    assert ev.worst_stratum(expected["worst_stratum"]["metric"])["name"] == "legal"


def test_stratum_order_is_code_point_order_scored_first():
    expected = load_expected("stratum-order")
    judgments, run = case("stratum-order")
    per_stratum = re_.score_by_stratum(judgments, run, k=expected["k"], threshold=expected["threshold"])
    assert list(per_stratum) == expected["scored_order"] + expected["unscored_order"]
    assert {k: v.n for k, v in per_stratum.items()} == expected["per_stratum_n"]
    report = re_.build_report(judgments, run, k=expected["k"], threshold=expected["threshold"])
    assert list(report.to_dict()["per_stratum"]) == expected["scored_order"] + expected["unscored_order"]
    assert report.to_dict()["per_stratum"]["zeta"] == {"n": 0, "metrics": {}}


@pytest.mark.parametrize("label", list(load_expected("summarize")["cases"]))
def test_summarize(label):
    c = load_expected("summarize")["cases"][label]
    got = re_.summarize(c["samples"]).to_dict()
    exp = c["expected"]
    assert set(got) == set(exp)
    for key in ("value", "stdev"):
        if key in exp:
            assert got[key] == pytest.approx(exp[key], abs=TOL)
    if "ci" in exp:
        assert got["ci"] == pytest.approx(exp["ci"], abs=TOL)
    assert got["n"] == exp["n"] and got["deterministic"] is exp["deterministic"]


def test_summarize_refuses_zero_samples():
    with pytest.raises(ValueError):
        re_.summarize([])


def test_no_positives_excluded_and_listed():
    expected = load_expected("no-positives")
    judgments, run = case("no-positives")
    result = re_.score(judgments, run, k=expected["k"])
    assert result.queries_without_positives == expected["queries_without_positives"]
    report = re_.build_report(judgments, run, k=expected["k"]).to_dict()
    assert report["judgments"]["queries"] == expected["queries"]
    assert report["judgments"]["queries_scored"] == expected["queries_scored"]


def test_nothing_scored_emits_no_metric_and_is_indeterminate():
    expected = load_expected("nothing-scored")
    judgments, run = case("nothing-scored")
    result = re_.score(judgments, run, k=3, threshold=expected["threshold"])
    assert result.metrics == {}
    report = re_.build_report(judgments, run, k=3, threshold=expected["threshold"])
    data = report.to_dict()
    assert data["metrics"] == {}
    assert data["judgments"]["queries"] == expected["queries"]
    assert data["judgments"]["queries_scored"] == expected["queries_scored"]
    assert data["verdict"]["status"] == expected["status"]
    assert expected["reason"] in data["verdict"]["reasons"]
    gated = report.with_gates(["recall@3:0.5"]).to_dict()
    assert gated["verdict"]["status"] == "INDETERMINATE"
    assert expected["gate_reason"] in gated["verdict"]["reasons"]


def test_duplicate_ranking_counts_first_occurrence_and_says_so():
    expected = load_expected("duplicate-ranking")
    judgments, run = case("duplicate-ranking")
    result = re_.score(judgments, run, k=expected["k"])
    assert result.queries_with_duplicates == expected["queries_with_duplicates"]
    for qid, ranking in expected["deduped_rankings"].items():
        raw = run[run["query_id"] == qid]["doc_id"].tolist()
        assert re_.dedupe(raw) == ranking
    for qid, values in expected["per_query"].items():
        for metric, value in values.items():
            if metric != "note":
                assert result.per_query.loc[qid, metric] == pytest.approx(value, abs=TOL)
    report = re_.build_report(judgments, run, k=expected["k"]).to_dict()
    assert report["verdict"]["status"] == expected["verdict"]
    assert expected["reason"] in report["verdict"]["reasons"]


@pytest.mark.parametrize("rejected", load_expected("duplicate-ranking")["rejected"]["cases"])
def test_malformed_runs_are_refused(rejected):
    content = (spec_fixtures_dir() / "duplicate-ranking" / rejected["file"]).read_text()
    with pytest.raises(re_.FormatError) as err:
        re_.parse_run(content)
    assert str(err.value) == rejected["message"]


def test_unsound_judgments_make_the_verdict_indeterminate():
    expected = load_expected("unsound-judgments")
    judgments, run = case("unsound-judgments")
    validation = re_.validate(judgments)
    assert validation.ok is expected["validate"]["ok"]
    assert sorted({i.code for i in validation.errors}) == expected["validate"]["error_codes"]
    report = re_.build_report(judgments, run, k=expected["k"])
    data = report.to_dict()
    assert data["judgments"]["queries"] == expected["queries"]
    assert data["judgments"]["queries_scored"] == expected["queries_scored"]
    assert data["verdict"]["status"] == expected["verdict"]
    assert expected["reason"] in data["verdict"]["reasons"]
    gated = report.with_gates([expected["gate"]["expression"]]).to_dict()
    assert gated["verdict"]["gates"][0]["status"] == expected["gate"]["gate_status"]
    assert gated["verdict"]["status"] == expected["gate"]["verdict"]


def test_unsorted_queries_issue_order():
    expected = load_expected("unsorted-queries")
    judgments = re_.read_judgments(spec_fixtures_dir() / "unsorted-queries" / "judgments.jsonl")
    result = re_.validate(judgments)
    order = []
    for issue in result.issues:
        if issue.code == "missing-query-text":
            order.append(f"{issue.code}:{issue.message.split()[1]}")
        elif issue.code == "thin-stratum":
            order.append(f"{issue.code}:{issue.message.split(chr(39))[1]}")
        else:
            order.append(issue.code)
    assert order == expected["issue_order"]
    d = result.to_dict()
    assert d["ok"] is expected["ok"] and d["queries"] == expected["queries"]
    assert d["labels"] == expected["labels"]
    assert list(d) == ["issues", "queries", "labels", "humanLabels", "syntheticLabels", "fingerprint", "strata", "ok"]


@pytest.mark.parametrize("form,file", [("beir", "beir.tsv"), ("trec", "trec.qrels")])
def test_qrels_both_forms(form, file):
    expected = load_expected("qrels")
    content = (spec_fixtures_dir() / "qrels" / file).read_text()
    got = re_.from_qrels(content)
    rows = got[["query_id", "doc_uri", "relevance"]].to_dict("records")
    assert [{k: (int(v) if k == "relevance" else v) for k, v in r.items()} for r in rows] == expected[form]
    assert (
        re_.to_qrels(re_.from_qrels((spec_fixtures_dir() / "qrels" / "beir.tsv").read_text())).splitlines()
        == expected["qrels_lines"]
    )
