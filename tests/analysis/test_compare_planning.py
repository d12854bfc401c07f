"""``Comparison.planning``: for each difference that is not significant, the queries a paired
test would need, checked against the normal-approximation sample size computed with scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

import retrieval_eval as rev


@pytest.fixture(scope="module")
def comparison():
    demo = rev.load_demo()
    return rev.compare(demo.judgments, demo.runs, baseline="dense", k=10)


def test_every_difference_not_significant_gets_a_plan(comparison):
    plans = comparison.planning()
    quiet = comparison.table[~comparison.table["significant"]]
    assert len(plans) == len(quiet) > 0
    assert list(plans.columns) == ["system", "baseline", "metric", "paragraph"]
    assert str(plans["system"].dtype) == "string"


def test_the_number_of_queries_is_the_paired_normal_sample_size(comparison):
    pq = comparison.per_query
    z = st.norm.ppf(1 - comparison.alpha / 2) + st.norm.ppf(0.8)
    checked = 0
    for row in comparison.planning().itertuples(index=False):
        d = pq.loc[
            (pq["system"] == row.system) & (pq["baseline_system"] == row.baseline) & (pq["metric"] == row.metric),
            "delta",
        ].to_numpy(np.float64)
        if abs(d.mean()) < 1e-12 or d.var(ddof=1) == 0:
            assert "no number of queries" in row.paragraph
            continue
        want = max(math.ceil(z**2 * d.var(ddof=1) / d.mean() ** 2 - 1e-9), 2)
        assert f"need about {want} queries" in row.paragraph, row.paragraph
        checked += 1
    assert checked > 0


def test_the_terminal_report_prints_the_plans(tmp_path):
    import io

    from retrieval_eval.cli.app import main
    from retrieval_eval.datasets import demo_path

    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "compare",
            "--judgments",
            str(demo_path("judgments.jsonl")),
            "--run",
            str(demo_path("runs.jsonl")),
            "--baseline",
            "dense",
            "-k",
            "10",
        ],
        stdout=out,
        stderr=err,
    )
    assert code == 0, err.getvalue()
    assert "you would need about" in out.getvalue()
