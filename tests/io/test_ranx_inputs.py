"""ranx ``Run``/``Qrels`` objects wherever a run or qrels is taken (issue 33 item 4): a list of
runs (ranx's usual form), a dict of runs, a single run; numbers checked against ranx."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev

ranx = pytest.importorskip("ranx")

QRELS = {"q1": {"d1": 2, "d3": 1}, "q2": {"d2": 1}, "q3": {"d4": 3, "d1": 1}}
RUN_A = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d1": 0.7, "d2": 0.6}, "q3": {"d4": 0.5, "d1": 0.4}}
RUN_B = {"q1": {"d3": 3.0, "d1": 2.0}, "q2": {"d2": 5.0, "d5": 1.0}, "q3": {"d9": 1.5, "d1": 1.0}}


def _runs():
    return [ranx.Run(RUN_A, name="a"), ranx.Run(RUN_B, name="b")]


def test_a_list_of_runs_reads_as_a_dict_of_runs_by_name():
    by_list = rev.as_run(_runs())
    by_dict = rev.as_run({"a": ranx.Run(RUN_A), "b": ranx.Run(RUN_B)})
    pd.testing.assert_frame_equal(by_list, by_dict)
    assert by_list["system"].unique().tolist() == ["a", "b"]
    assert len(by_list) == sum(len(d) for r in (RUN_A, RUN_B) for d in r.values())


def test_runs_without_names_are_numbered_and_twins_refused():
    got = rev.as_run([ranx.Run(RUN_A), ranx.Run(RUN_B)])
    assert got["system"].unique().tolist() == ["run1", "run2"]
    with pytest.raises(ValueError, match="two runs of the list are named 'a'"):
        rev.as_run([ranx.Run(RUN_A, name="a"), ranx.Run(RUN_B, name="a")])


def test_a_list_of_wire_dicts_still_reads_as_lines():
    got = rev.as_run([{"query_id": "q1", "ranking": ["d1", "d2"]}])
    assert got["doc_id"].tolist() == ["d1", "d2"]


@pytest.mark.parametrize(
    "metric, ours", [("ndcg@3", "ndcg_linear@3"), ("recall@3", "recall@3"), ("precision@3", "precision@3")]
)
def test_evaluate_qrels_and_a_list_of_runs_equals_ranx(metric, ours):
    ev = rev.evaluate(ranx.Qrels(QRELS), _runs(), k=(3,), gain="linear")
    for run in _runs():
        theirs = ranx.evaluate(ranx.Qrels(QRELS), run, metric, return_mean=False)
        per = ev.per_query[ev.per_query["system"] == run.name].set_index("query_id")
        got = per.loc[sorted(QRELS), ours].to_numpy(np.float64)
        assert np.allclose(got, np.asarray(theirs), atol=1e-12), (run.name, metric)


def test_compare_and_calibrate_take_a_list_of_runs():
    cmp = rev.compare(ranx.Qrels(QRELS), _runs(), baseline="a", k=3)
    assert set(cmp.table["system"].astype(str)) == {"b"}
    cal = rev.calibrate(ranx.Qrels(QRELS), _runs(), n_resamples=5)
    assert list(cal.summary.index) == ["a", "b"]


def test_fuse_a_list_of_runs_equals_ranx():
    ours = rev.fuse(_runs(), method="mnz", norm="min-max")
    theirs = ranx.fuse(_runs(), norm="min-max", method="mnz").to_dict()
    for q, d, s in ours[["query_id", "doc_id", "score"]].itertuples(index=False):
        assert s == pytest.approx(theirs[q][d], abs=1e-12)
    assert len(ours) == sum(len(v) for v in theirs.values())
