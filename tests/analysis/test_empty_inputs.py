"""Empty inputs never crash (issue 12, rule 4): score, score_by_stratum, evaluate, build_report,
calibrate and compare with no judgments and/or no run return an empty result: no metrics,
empty frames with the columns a non-empty call has, and a gate over it is INDETERMINATE."""

from __future__ import annotations

import pandas as pd
import pytest

import retrieval_eval as re_
import retrieval_eval.io as F
from retrieval_eval.analysis.calibration import SUMMARY_COLUMNS
from retrieval_eval.analysis.decisions.compare import TABLE_COLUMNS, compare

J = [{"query_id": "q1", "doc_uri": "a", "relevance": 1}, {"query_id": "q2", "doc_uri": "b", "relevance": 1}]
RUN = [
    {"query_id": "q1", "ranking": ["a", "x"], "scores": [0.9, 0.1]},
    {"query_id": "q2", "ranking": ["x", "b"], "scores": [0.8, 0.2]},
]
EMPTY_J = {"list": [], "frame": F.empty_judgments(), "parsed": re_.parse_judgments("")}
EMPTY_RUN = {"list": [], "frame": F.empty_run()}
GATES = ["recall@10:0.5", "worst-stratum:recall@10:0.5", "ndcg@10:ci-lower:0.1", "negative_satisfaction:0.9"]
CASES = (
    [(f"judgments={a}", EMPTY_J[a], "run", RUN) for a in EMPTY_J]
    + [("judgments", J, f"run={b}", EMPTY_RUN[b]) for b in EMPTY_RUN]
    + [(f"judgments={a}", EMPTY_J[a], f"run={b}", EMPTY_RUN[b]) for a in EMPTY_J for b in EMPTY_RUN]
)


def _ids(case):
    return f"{case[0]}-{case[2]}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_empty_inputs_give_empty_results_and_indeterminate_gates(case):
    _, judgments, _, run = case
    full = re_.evaluate(J, RUN, k=(10,))
    ev = re_.evaluate(judgments, run, k=(10,))
    # The per-query frame has the columns (and dtypes) of a non-empty evaluation.
    assert list(ev.per_query.columns) == list(full.per_query.columns)
    assert ev.per_query.dtypes.to_dict() == full.per_query.dtypes.to_dict()
    assert list(ev.per_stratum.columns) == list(full.per_stratum.columns)
    result = re_.score(judgments, run)
    assert list(result.per_query.columns) == ["precision", "recall", "ndcg", "mrr", "ap", "hit_rate"]
    by_stratum = re_.score_by_stratum(judgments, run)
    report = re_.build_report(judgments, run, k=10).with_gates(GATES).to_dict()
    gates = [g["status"] for g in report["verdict"]["gates"]]
    if len(judgments) == 0:  # nothing judged: no metric, nothing to gate
        assert (ev.summary["n"] == 0).all() and ev.summary.drop(columns="n").isna().all().all()
        assert ev.per_query.empty
        assert result.metrics == {} and result.per_query.empty
        assert dict(by_stratum) == {} and re_.worst_stratum(by_stratum, "recall@10") is None
        assert report["metrics"] == {}
        assert report["verdict"]["status"] == "INDETERMINATE"
        assert gates == ["INDETERMINATE"] * len(GATES)
    else:  # judged queries the run missed score zero (SPEC A3), and say so
        assert ev.per_query["missing"].all() and (ev.summary["n"] == 2).all()
        assert (ev.per_query[[c for c in ev.per_query.columns if "@" in c]] == 0).all().all()
        assert result.missing_queries == ["q1", "q2"]
        assert result.metrics["recall@10"].value == 0.0
        assert gates[0] == "FAIL"


@pytest.mark.parametrize("run", list(EMPTY_RUN.values()), ids=list(EMPTY_RUN))
@pytest.mark.parametrize("judgments", [J, []], ids=["judgments", "no-judgments"])
def test_calibrate_an_empty_run_is_an_empty_calibration(judgments, run):
    full = re_.calibrate(J, RUN)
    cal = re_.calibrate(judgments, run, negatives=["q9"])
    assert cal.systems == [] and cal.summary.empty
    assert list(cal.summary.columns) == list(SUMMARY_COLUMNS)
    for name in ("top1", "per_stratum", "intervals"):
        got, want = getattr(cal, name), getattr(full, name)
        assert got.empty and list(got.columns) == list(want.columns), name
    assert any("run is empty" in w for w in cal.warnings)
    report = re_.build_report(J, RUN, k=10, calibration=cal).with_gates(["negative_satisfaction:0.9"])
    assert report.to_dict()["verdict"]["gates"][0]["status"] == "INDETERMINATE"
    cal._repr_html_()


@pytest.mark.parametrize(
    "judgments,runs,why",
    [
        ([], [], "run is empty"),
        (J, [], "run is empty"),
        ([], {"a": RUN, "b": RUN}, "no judged query has a positive label"),
        (
            [{"query_id": "q1", "doc_uri": "a", "relevance": 0}],
            {"a": RUN, "b": RUN},
            "no judged query has a positive label",
        ),
    ],
)
def test_compare_with_nothing_to_compare_is_an_empty_comparison(judgments, runs, why):
    full = compare(J, {"a": RUN, "b": RUN}, n_resamples=10)
    c = compare(judgments, runs)
    assert c.table.empty and list(c.table.columns) == list(TABLE_COLUMNS)
    assert c.table.dtypes.to_dict() == full.table.dtypes.to_dict()
    assert list(c.per_query.columns) == list(full.per_query.columns)
    assert list(c.wins_ties_losses.columns) == list(full.wins_ties_losses.columns)
    assert any(why in w for w in c.warnings)
    assert c.n_queries == 0 and c.significant().empty
    c.to_markdown(), c.to_dict(), c._repr_html_(), repr(c)
    pd.testing.assert_frame_equal(c.to_frame(), c.table)
