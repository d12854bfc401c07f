"""``compare`` on a judged metric: the paired test of per-query means of two systems judged on
the same queries, against scipy. Needs ``compare`` to accept any per-query metric column of the
evaluation it is given (helper h5's rewrite of analysis/compare.py); until then the tests skip,
saying so. The same numbers from the judged subpackage's own paired helper are always checked."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

import retrieval_eval as rev
from retrieval_eval.analysis.judged import compare_judged
from retrieval_eval.datasets import demo_path

SAMPLES = demo_path("judge_samples.parquet")


@pytest.fixture(scope="module")
def demo():
    return rev.load_demo()


@pytest.fixture(scope="module")
def ev(demo):
    return rev.evaluate(demo.judgments, demo.runs, k=10, judged=SAMPLES)


def _per_query(metric):
    raw = pd.read_parquet(SAMPLES)
    return raw[raw["metric"] == metric].groupby(["query_id", "system"])["value"].mean().unstack()


def _compare(demo, ev, **kw):
    try:
        return rev.compare(demo.judgments, ev, baseline="dense", k=10, **kw)
    except ValueError as err:
        if "unknown metric" in str(err) or "faithfulness" in str(err):
            pytest.skip(f"compare does not take judged metric names on this branch yet: {err}")
        raise


def test_compare_t_test_on_a_judged_metric_matches_scipy(demo, ev):
    c = _compare(demo, ev, metrics=["faithfulness"], test="t", correction="none")
    pq = _per_query("faithfulness")
    row = c.table.set_index("system").loc["bm25"]
    assert row["delta"] == pytest.approx((pq["bm25"] - pq["dense"]).mean(), abs=1e-12)
    assert row["p_value"] == pytest.approx(st.ttest_rel(pq["bm25"], pq["dense"]).pvalue, rel=1e-9)


def test_compare_corrects_across_judged_and_retrieval_metrics(demo, ev):
    c = _compare(demo, ev, metrics=["faithfulness", "ndcg"], test="t", correction="bonferroni")
    assert len(c.table) == 4
    assert np.allclose(c.table["p_adjusted"], np.minimum(c.table["p_value"] * 4, 1))


def test_cli_compare_judged_metric(tmp_path):
    import io

    from retrieval_eval.cli import app as cli

    d = demo_path()
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        [
            "compare",
            "--judgments",
            str(d / "judgments.jsonl"),
            "--run",
            str(d / "runs.jsonl"),
            "--judged",
            str(SAMPLES),
            "--metric",
            "faithfulness",
            "--test",
            "t",
            "--json",
        ],
        stdout=out,
        stderr=err,
    )
    if code == 2 and "faithfulness" in err.getvalue():
        pytest.skip(f"compare refuses the judged metric on this branch: {err.getvalue().strip()}")
    assert code == 0, err.getvalue()
    rows = json.loads(out.getvalue())["comparisons"]
    pq = _per_query("faithfulness")
    by = {r["system"]: r for r in rows}
    assert by["bm25"]["delta"] == pytest.approx((pq["bm25"] - pq["dense"]).mean(), abs=1e-9)


def test_judged_paired_helper_matches_scipy_on_the_demo(ev):
    out = compare_judged(ev.judged_scores, baseline="dense", test="t", correction="holm")
    pq = _per_query("answer_relevancy")
    row = out[(out["metric"] == "answer_relevancy") & (out["system"] == "rrf")].iloc[0]
    assert row["p"] == pytest.approx(st.ttest_rel(pq["rrf"], pq["dense"]).pvalue, rel=1e-9)
    assert row["n"] == 45
