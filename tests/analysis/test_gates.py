"""Gates (SPEC A6): parsing, the three outcomes, every reason text, and verdict folding."""

from __future__ import annotations

import copy

import pytest
from conftest import load_expected

from retrieval_eval.analysis.decisions.gates import (
    Gate,
    GateError,
    GateResult,
    apply_gates,
    check_report,
    evaluate_gates,
    parse_gate,
    worse_status,
)
from retrieval_eval.errors import FormatError


def m(value, **extra):
    return {"value": value, "n": 1, "deterministic": True, **extra}


def report(metrics=None, per_stratum=None, status="PASS", reasons=(), queries_scored=2):
    out = {
        "spec_version": "1",
        "tool": {"name": "retrieval-eval", "version": "0.1.0"},
        "generated_at": "2026-01-01T00:00:00Z",
        "corpus": {"fingerprint": None},
        "judgments": {"queries": 2, "queries_scored": queries_scored, "labels": 4, "fingerprint": None},
        "metrics": metrics if metrics is not None else {"recall@5": m(0.75), "ndcg@5": m(0.6)},
        "verdict": {"status": status, "reasons": list(reasons)},
    }
    if per_stratum is not None:
        out["per_stratum"] = per_stratum
    return out


# -- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, kind, metric, threshold",
    [
        ("recall@5:0.8", "absolute", "recall@5", 0.8),
        ("ndcg@10:.5", "absolute", "ndcg@10", 0.5),
        ("ndcg@10:1e-1", "absolute", "ndcg@10", 0.1),
        ("ndcg@10:1", "absolute", "ndcg@10", 1.0),
        ("recall@5:-0.02", "delta", "recall@5", -0.02),
        ("recall@5:+0.01", "delta", "recall@5", 0.01),
        ("recall@5:-0", "delta", "recall@5", 0.0),
        ("worst-stratum:recall@5:0.7", "worst-stratum", "recall@5", 0.7),
        ("faithfulness:ci-lower:0.8", "ci-lower", "faithfulness", 0.8),
        ("negative_satisfaction:0.9", "absolute", "negative_satisfaction", 0.9),
        ("fpr@95tpr:ci-lower:0.1", "ci-lower", "fpr@95tpr", 0.1),
        ("auroc:-0.05", "delta", "auroc", -0.05),
    ],
)
def test_parse_gate_forms(expr, kind, metric, threshold):
    gate = parse_gate(expr)
    assert gate == Gate(expr, kind, metric, threshold)
    assert str(gate) == expr


@pytest.mark.parametrize(
    "expr, message",
    [
        ("recall@5:nan", "gate 'recall@5:nan': 'nan' is not a number"),
        ("recall@5:inf", "gate 'recall@5:inf': 'inf' is not a number"),
        ("recall@5:-inf", "gate 'recall@5:-inf': '-inf' is not a number"),
        ("recall@5:0.8abc", "gate 'recall@5:0.8abc': '0.8abc' is not a number"),
        ("recall@5:", "gate 'recall@5:': '' is not a number"),
        ("recall@5: 0.8", "gate 'recall@5: 0.8': ' 0.8' is not a number"),
        ("recall@5:1_0", "gate 'recall@5:1_0': '1_0' is not a number"),
        ("recall@5:0x1", "gate 'recall@5:0x1': '0x1' is not a number"),
        ("recall@5:1e999", "gate 'recall@5:1e999': '1e999' is not a finite number"),
        ("recall@5", "gate 'recall@5': expected metric:threshold"),
        ("a:b:c", "gate 'a:b:c': expected metric:threshold"),
        ("recall@5:0.8:0.9", "gate 'recall@5:0.8:0.9': expected metric:threshold"),
        ("worst-stratum:recall@5", "gate 'worst-stratum:recall@5': expected worst-stratum:metric:floor"),
        ("worst-stratum:recall@5:x", "gate 'worst-stratum:recall@5:x': 'x' is not a number"),
        ("recall@5:ci-lower:", "gate 'recall@5:ci-lower:': '' is not a number"),
        (":0.8", "gate ':0.8': expected metric:threshold, the metric is empty"),
    ],
)
def test_parse_gate_refuses_malformed(expr, message):
    with pytest.raises(GateError) as err:
        parse_gate(expr)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)


# -- worse_status -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, worse",
    [
        ("PASS", "PASS", "PASS"),
        ("PASS", "INDETERMINATE", "INDETERMINATE"),
        ("INDETERMINATE", "PASS", "INDETERMINATE"),
        ("INDETERMINATE", "FAIL", "FAIL"),
        ("FAIL", "INDETERMINATE", "FAIL"),
        ("PASS", "FAIL", "FAIL"),
        ("FAIL", "FAIL", "FAIL"),
    ],
)
def test_fail_beats_indeterminate_beats_pass(a, b, worse):
    assert worse_status(a, b) == worse


def test_worse_status_refuses_unknown():
    with pytest.raises(ValueError):
        worse_status("OK", "PASS")


# -- absolute -----------------------------------------------------------------------------------


def test_absolute_floor_is_inclusive():
    ev = evaluate_gates(report(), ["recall@5:0.75"])
    assert ev.status == "PASS"
    assert ev.results == [GateResult("recall@5:0.75", "PASS", 0.75)]
    assert ev.reasons == []


def test_absolute_below_floor_fails_with_reason():
    ev = evaluate_gates(report(), [parse_gate("recall@5:0.8")])
    assert ev.status == "FAIL"
    assert ev.results[0].to_dict() == {"expression": "recall@5:0.8", "status": "FAIL", "observed": 0.75}
    assert ev.reasons == ["recall@5:0.8: recall@5 is 0.7500, below 0.8"]


def test_fail_reason_shows_enough_digits_when_four_would_hide_the_shortfall():
    ev = evaluate_gates(report({"recall@5": m(0.79999)}), ["recall@5:0.8"])
    assert ev.status == "FAIL"
    assert ev.reasons == ["recall@5:0.8: recall@5 is 0.79999, below 0.8"]


def test_absent_metric_is_indeterminate_not_pass():
    ev = evaluate_gates(report(), ["nonexistent@3:0.5"])
    assert ev.status == "INDETERMINATE"
    assert ev.results == [GateResult("nonexistent@3:0.5", "INDETERMINATE")]
    assert ev.reasons == [
        "nonexistent@3:0.5: metric 'nonexistent@3' not present in the report (nearest in the report: ndcg@5, recall@5)"
    ]


def test_nothing_scored_reason():
    rep = report(metrics={}, queries_scored=0)
    ev = evaluate_gates(rep, ["recall@3:0.5", "recall@3:ci-lower:0.5", "recall@3:-0.1"])
    assert [r.status for r in ev.results] == ["INDETERMINATE"] * 3
    assert ev.reasons == [
        f"{g}: no query was scored, so 'recall@3' was not computed"
        for g in ["recall@3:0.5", "recall@3:ci-lower:0.5", "recall@3:-0.1"]
    ]


def test_nothing_scored_fixture_gate_reason():
    expected = load_expected("nothing-scored")
    rep = report(
        metrics={},
        queries_scored=0,
        per_stratum={"billing": {"n": 0, "metrics": {}}},
        status="INDETERMINATE",
        reasons=[expected["reason"]],
    )
    out = apply_gates(rep, ["recall@3:0.5"])
    assert out["verdict"]["status"] == "INDETERMINATE"
    assert out["verdict"]["reasons"] == [expected["reason"], expected["gate_reason"]]


# -- delta --------------------------------------------------------------------------------------


def test_delta_drop_of_exactly_the_tolerance_passes():
    # 0.50 - 0.52 is -0.020000000000000018 in binary floating point.
    assert 0.50 - 0.52 < -0.02
    ev = evaluate_gates(report({"recall@5": m(0.50)}), ["recall@5:-0.02"], baseline=report({"recall@5": m(0.52)}))
    assert ev.status == "PASS"
    assert ev.results == [GateResult("recall@5:-0.02", "PASS", 0.50, 0.52)]


def test_delta_rise_of_exactly_the_required_gain_passes():
    # 0.3 - 0.2 is 0.09999999999999998.
    assert 0.3 - 0.2 < 0.1
    ev = evaluate_gates(report({"a": m(0.3)}), ["a:+0.1"], baseline=report({"a": m(0.2)}))
    assert ev.status == "PASS"


def test_delta_regression_beyond_tolerance_fails():
    ev = evaluate_gates(report({"recall@5": m(0.86)}), ["recall@5:-0.02"], baseline=report({"recall@5": m(0.9)}))
    assert ev.status == "FAIL"
    assert ev.results[0].to_dict() == {
        "expression": "recall@5:-0.02",
        "status": "FAIL",
        "observed": 0.86,
        "baseline": 0.9,
    }
    assert ev.reasons == [
        "recall@5:-0.02: recall@5 fell 0.0400, from 0.9000 to 0.8600, beyond the allowed change of -0.02"
    ]


def test_delta_required_gain_not_reached_fails():
    ev = evaluate_gates(report({"a": m(0.61)}), ["a:+0.05"], baseline=report({"a": m(0.6)}))
    assert ev.status == "FAIL"
    assert ev.reasons == ["a:+0.05: a rose only 0.0100, from 0.6000 to 0.6100, beyond the allowed change of +0.05"]


def test_delta_without_baseline_is_indeterminate():
    ev = evaluate_gates(report(), ["recall@5:-0.02"])
    assert ev.status == "INDETERMINATE"
    assert ev.results == [GateResult("recall@5:-0.02", "INDETERMINATE", 0.75)]
    assert ev.reasons == ["recall@5:-0.02: no baseline value for 'recall@5'"]


def test_delta_with_baseline_missing_the_metric_is_indeterminate():
    ev = evaluate_gates(report(), ["recall@5:-0.02"], baseline=report({"ndcg@5": m(0.1)}))
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == ["recall@5:-0.02: no baseline value for 'recall@5'"]


def test_delta_on_metric_absent_from_report():
    ev = evaluate_gates(report(), ["mrr@5:-0.02"], baseline=report({"mrr@5": m(0.5)}))
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == [
        "mrr@5:-0.02: metric 'mrr@5' not present in the report (nearest in the report: recall@5, ndcg@5)"
    ]


# -- worst stratum ------------------------------------------------------------------------------


STRATA = {
    "billing": {"n": 3, "metrics": {"recall@5": m(0.9)}},
    "legal": {"n": 2, "metrics": {"recall@5": m(0.5)}},
    "empty": {"n": 0, "metrics": {"recall@5": m(0.0)}},
}


def test_worst_stratum_skips_unscored_strata_and_passes():
    ev = evaluate_gates(report(per_stratum=STRATA), ["worst-stratum:recall@5:0.5"])
    assert ev.status == "PASS"
    assert ev.results == [GateResult("worst-stratum:recall@5:0.5", "PASS", 0.5)]


def test_worst_stratum_fails_naming_the_stratum():
    ev = evaluate_gates(report(per_stratum=STRATA), ["worst-stratum:recall@5:0.7"])
    assert ev.status == "FAIL"
    assert ev.results[0].observed == 0.5
    assert ev.reasons == ["worst-stratum:recall@5:0.7: worst stratum 'legal' has recall@5 0.5000, below 0.7"]


def test_worst_stratum_all_unscored():
    strata = {"a": {"n": 0, "metrics": {}}, "b": {"n": 0, "metrics": {}}}
    ev = evaluate_gates(report(per_stratum=strata, queries_scored=0, metrics={}), ["worst-stratum:recall@3:0.5"])
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == ["worst-stratum:recall@3:0.5: no stratum was scored for 'recall@3'"]


def test_worst_stratum_without_strata():
    ev = evaluate_gates(report(), ["worst-stratum:recall@5:0.5"])
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == ["worst-stratum:recall@5:0.5: no per-stratum data for 'recall@5'"]


def test_worst_stratum_metric_missing_from_strata():
    ev = evaluate_gates(report(per_stratum=STRATA), ["worst-stratum:map@5:0.5"])
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == ["worst-stratum:map@5:0.5: no per-stratum data for 'map@5'"]


# -- ci-lower -----------------------------------------------------------------------------------


def test_ci_lower_pass_and_fail_compare_the_lower_end():
    rep = report({"faithfulness": {"value": 0.9, "n": 5, "ci": [0.82, 0.98]}})
    ok = evaluate_gates(rep, ["faithfulness:ci-lower:0.8"])
    assert ok.status == "PASS" and ok.results[0].observed == 0.82
    bad = evaluate_gates(rep, ["faithfulness:ci-lower:0.85"])
    assert bad.status == "FAIL"
    assert bad.reasons == [
        "faithfulness:ci-lower:0.85: the lower end of the interval on faithfulness is 0.8200, below 0.85"
    ]


def test_ci_lower_without_interval_is_indeterminate():
    ev = evaluate_gates(report(), ["recall@5:ci-lower:0.5"])
    assert ev.status == "INDETERMINATE"
    assert ev.results == [GateResult("recall@5:ci-lower:0.5", "INDETERMINATE", 0.75)]
    assert ev.reasons == ["recall@5:ci-lower:0.5: no confidence interval on 'recall@5', sample it more than once"]


# -- calibration metrics marked indeterminate ----------------------------------------------------


@pytest.mark.parametrize("gate", ["negative_satisfaction:0.5", "negative_satisfaction:ci-lower:0.1"])
def test_small_sample_calibration_metric_never_passes(gate):
    why = "only 3 negatives; at least 10 are needed"
    rep = report({"negative_satisfaction": {"value": 1.0, "n": 3, "ci": [0.9, 1.0], "indeterminate": why}})
    ev = evaluate_gates(rep, [gate])
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == [f"{gate}: 'negative_satisfaction' cannot be gated: {why}"]


def test_small_sample_baseline_makes_delta_indeterminate():
    why = "only 2 negatives"
    ev = evaluate_gates(
        report({"auroc": m(0.9)}), ["auroc:-0.05"], baseline=report({"auroc": m(0.95, indeterminate=why)})
    )
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == [f"auroc:-0.05: the baseline's 'auroc' cannot be gated: {why}"]


def test_worst_stratum_with_an_indeterminate_stratum():
    strata = {
        "a": {"n": 3, "metrics": {"auroc": m(0.9)}},
        "b": {"n": 1, "metrics": {"auroc": m(1.0, indeterminate="too few negatives")}},
    }
    ev = evaluate_gates(report(per_stratum=strata), ["worst-stratum:auroc:0.8"])
    assert ev.status == "INDETERMINATE"
    assert ev.reasons == ["worst-stratum:auroc:0.8: 'auroc' in stratum 'b' cannot be gated: too few negatives"]
    # A determinate stratum below the floor still fails: FAIL beats INDETERMINATE.
    ev = evaluate_gates(report(per_stratum=strata), ["worst-stratum:auroc:0.95"])
    assert ev.status == "FAIL"


# -- combining ----------------------------------------------------------------------------------


def test_combined_status_is_the_worst_and_reasons_follow_gate_order():
    ev = evaluate_gates(report(), ["recall@5:0.5", "missing@1:0.1", "ndcg@5:0.9"])
    assert [r.status for r in ev.results] == ["PASS", "INDETERMINATE", "FAIL"]
    assert ev.status == "FAIL"
    assert [r.split(":")[0] for r in ev.reasons] == ["missing@1", "ndcg@5"]


def test_no_gates_pass():
    ev = evaluate_gates(report(), [])
    assert ev.status == "PASS" and ev.results == [] and ev.reasons == []


def test_accepts_objects_with_to_dict():
    class R:
        def to_dict(self):
            return report()

    assert evaluate_gates(R(), ["recall@5:0.7"], baseline=R()).status == "PASS"


# -- apply_gates --------------------------------------------------------------------------------


def test_apply_gates_never_upgrades_and_does_not_mutate():
    expected = load_expected("unsound-judgments")
    rep = report({"recall@2": m(0.5)}, status="INDETERMINATE", reasons=[expected["reason"]], queries_scored=1)
    before = copy.deepcopy(rep)
    out = apply_gates(rep, [expected["gate"]["expression"]])
    assert rep == before
    assert out["verdict"]["gates"] == [
        {"expression": "recall@2:0.1", "status": expected["gate"]["gate_status"], "observed": 0.5}
    ]
    assert out["verdict"]["status"] == expected["gate"]["verdict"]
    assert out["verdict"]["reasons"] == [expected["reason"]]


def test_apply_gates_failure_downgrades_pass_and_indeterminate():
    for status in ("PASS", "INDETERMINATE"):
        out = apply_gates(report(status=status), ["recall@5:0.8"])
        assert out["verdict"]["status"] == "FAIL"
        assert out["verdict"]["reasons"][-1] == "recall@5:0.8: recall@5 is 0.7500, below 0.8"


def test_apply_gates_indeterminate_downgrades_pass_only():
    assert apply_gates(report(), ["x:0.1"])["verdict"]["status"] == "INDETERMINATE"
    assert apply_gates(report(status="FAIL"), ["x:0.1"])["verdict"]["status"] == "FAIL"


def test_apply_gates_without_gates_is_a_copy():
    rep = report()
    out = apply_gates(rep, [])
    assert out == rep and out is not rep and "gates" not in out["verdict"]


def test_gated_report_matches_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import json

    from conftest import spec_fixtures_dir

    schema = json.loads((spec_fixtures_dir() / "schemas" / "report.schema.json").read_text())
    out = apply_gates(
        report(per_stratum=STRATA), ["recall@5:0.8", "recall@5:-0.1", "worst-stratum:recall@5:0.1"], baseline=report()
    )
    jsonschema.validate(out, schema)


# -- check_report (baselines) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "baseline.json: not a report: expected a JSON object, got an array"),
        ({"spec_version": "1"}, "baseline.json: not a report: no 'metrics' object"),
        ({"metrics": {"recall@5": {"n": 1}}}, "baseline.json: metrics.recall@5 has no 'value'"),
        ({"metrics": {"recall@5": 0.5}}, "baseline.json: metrics.recall@5 must be an object with a 'value'"),
        ({"metrics": {"recall@5": {"value": "0.5"}}}, "baseline.json: metrics.recall@5.value must be a finite number"),
        ({"metrics": {"recall@5": {"value": True}}}, "baseline.json: metrics.recall@5.value must be a finite number"),
        ({"metrics": {"a": {"value": 0.5, "ci": [0.1]}}}, "baseline.json: metrics.a.ci must be two finite numbers"),
        (
            {"metrics": {}, "per_stratum": {"x": {"metrics": {}}}},
            "baseline.json: per_stratum.x.n must be a non-negative integer",
        ),
        (
            {"metrics": {}, "per_stratum": {"x": {"n": 1, "metrics": {"a": {}}}}},
            "baseline.json: per_stratum.x.metrics.a has no 'value'",
        ),
    ],
)
def test_check_report_refuses_non_reports(data, message):
    with pytest.raises(FormatError) as err:
        check_report(data, "baseline.json")
    assert str(err.value) == message


def test_check_report_accepts_a_report():
    assert check_report(report(per_stratum=STRATA)) == report(per_stratum=STRATA)


def test_absolute_floor_compares_at_twelve_decimals():
    # 0.1 + 0.2 + 0.3 + ... style sums land a hair off; the report's precision is 12 decimals.
    value = sum([0.1] * 3) / 3 * 3 - 0.3 + 0.3 - 1e-15  # 0.29999999999999993 or so
    assert value < 0.3
    assert evaluate_gates(report({"a": m(value)}), ["a:0.3"]).status == "PASS"
    assert evaluate_gates(report({"a": m(0.3 - 1e-9)}), ["a:0.3"]).status == "FAIL"
    rep = report({"a": {"value": 0.5, "n": 4, "ci": [0.3 - 1e-15, 0.7]}})
    assert evaluate_gates(rep, ["a:ci-lower:0.3"]).status == "PASS"
