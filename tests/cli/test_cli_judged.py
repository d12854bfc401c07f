"""``retrieval-eval score --judged`` and ``compare --judged``: judged metrics in the report, their
gates (INDETERMINATE, never a usage error, over an absent metric), bad judge files exit 2."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import scipy.stats as st

import retrieval_eval as rev
from retrieval_eval.cli import app as cli

DEMO = Path(rev.__file__).parent / "datasets" / "demo"
J, RUN = str(DEMO / "judgments.jsonl"), str(DEMO / "runs.jsonl")
SAMPLES = str(DEMO / "judge_samples.parquet")


def main(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if not line.startswith("retrieval-eval: warning: ")]


def test_score_judged_reports_the_clustered_interval():
    code, out, err = main("score", "--judgments", J, "--run", RUN, "--system", "dense", "--judged", SAMPLES, "--json")
    assert code == 0, err
    m = json.loads(out)["metrics"]["faithfulness"]
    raw = pd.read_parquet(SAMPLES)
    means = raw[(raw["system"] == "dense") & (raw["metric"] == "faithfulness")].groupby("query_id")["value"].mean()
    lo, hi = st.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=st.sem(means))
    assert m["value"] == pytest.approx(means.mean(), abs=1e-12) and m["n"] == 45
    assert m["ci"] == pytest.approx([lo, hi], abs=1e-11) and m["deterministic"] is False


def test_ci_lower_gate_on_a_judged_metric_fails_below_the_interval():
    code, out, _ = main(
        "score",
        "--judgments",
        J,
        "--run",
        RUN,
        "--system",
        "dense",
        "--judged",
        SAMPLES,
        "--gate",
        "faithfulness:ci-lower:0.78",
        "--gate",
        "faithfulness:0.78",
        "--json",
    )
    gates = json.loads(out)["verdict"]["gates"]
    assert code == 1 and [g["status"] for g in gates] == ["FAIL", "PASS"]


def test_gate_on_absent_judged_metric_is_indeterminate_exit_1_not_a_usage_error():
    code, out, err = main(
        "score", "--judgments", J, "--run", RUN, "--system", "dense", "--gate", "faithfulness:ci-lower:0.8", "--json"
    )
    assert code == 1 and not _errors(err)
    verdict = json.loads(out)["verdict"]
    assert verdict["status"] == "INDETERMINATE"
    assert "metric 'faithfulness' not present in the report (nearest in the report: " in verdict["reasons"][-1]


def test_judged_is_repeatable(tmp_path):
    raw = pd.read_parquet(SAMPLES)
    raw = raw[raw["system"] == "dense"]
    a = raw[raw["metric"] == "faithfulness"].drop(columns="truth")
    b = raw[raw["metric"] == "answer_relevancy"].drop(columns="truth")
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_json(tmp_path / "b.jsonl", orient="records", lines=True)
    code, out, err = main(
        "score",
        "--judgments",
        J,
        "--run",
        RUN,
        "--system",
        "dense",
        "--judged",
        tmp_path / "a.csv",
        "--judged",
        tmp_path / "b.jsonl",
        "--json",
    )
    assert code == 0, err
    assert {"faithfulness", "answer_relevancy"} <= set(json.loads(out)["metrics"])


def test_bad_judge_file_is_one_line_with_file_and_line_exit_2(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"query_id": "st-01", "metric": "faithfulness", "value": 0.5}\n'
        '{"query_id": "st-02", "metric": "faithfulness", "value": "n/a"}\n'
    )
    code, _, err = main("score", "--judgments", J, "--run", RUN, "--system", "dense", "--judged", path)
    assert code == 2
    (line,) = _errors(err)
    assert line == f"retrieval-eval: error: {path}:2: value must be a number, got 'n/a'"


def test_unjudged_query_in_judge_file_is_a_warning(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"query_id": "st-01", "metric": "m", "value": 0.5}\n{"query_id": "nope", "metric": "m", "value": 0.5}\n'
    )
    code, out, err = main("score", "--judgments", J, "--run", RUN, "--system", "dense", "--judged", path, "--json")
    assert code in (0, 1)
    assert "retrieval-eval: warning: " in err and "(nope)" in err
    assert json.loads(out)["metrics"]["m"]["n"] == 1


def test_compare_with_judged_still_compares_retrieval_metrics_the_same():
    # The judged metric itself is compared in tests/analysis/test_judged_compare.py (it needs
    # compare to accept any per-query metric column).
    args = ("compare", "--judgments", J, "--run", RUN, "--metric", "ndcg", "--json")
    code, out, err = main(*args, "--judged", SAMPLES)
    code0, out0, _ = main(*args)
    assert code == code0 == 0, err
    assert json.loads(out)["comparisons"] == json.loads(out0)["comparisons"]
