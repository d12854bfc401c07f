"""ir_measures measure objects and strings mean what they mean in ir_measures (issue 28, item 4)."""

from __future__ import annotations

import re

import ir_measures
import numpy as np
import pytest

import retrieval_eval as rev
from retrieval_eval.engine.measures.registry import UnknownMeasure, parse_measure

DEMO = rev.load_demo()


def _oracle(measure, system: str) -> dict[str, float]:
    """ir_measures' own per-query values on the demo (ties kept in the run's rank order)."""
    j = DEMO.judgments
    key = j["chunk_id"].fillna(j["doc_uri"])
    qrels = [
        ir_measures.Qrel(str(q), str(k), int(r)) for q, k, r in zip(j["query_id"], key, j["relevance"], strict=True)
    ]
    r = DEMO.runs[DEMO.runs["system"] == system]
    run = [
        ir_measures.ScoredDoc(str(q), str(d), -float(rank))
        for q, d, rank in zip(r["query_id"], r["doc_id"], r["rank"], strict=True)
    ]
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


@pytest.mark.parametrize(
    "measure", [ir_measures.nDCG @ 10, ir_measures.P(rel=2) @ 5, ir_measures.AP @ 10, ir_measures.R @ 5, ir_measures.RR]
)
def test_an_ir_measures_object_gives_ir_measures_number(measure):
    ev = rev.evaluate(DEMO.judgments, DEMO.runs, measures=[measure])
    column = str(measure)  # the column carries the name as ir_measures prints it
    assert ev.catalogue[column] == parse_measure(str(measure))[0].name
    pq = ev.per_query[ev.per_query["system"] == "dense"].set_index("query_id")[column]
    expected = _oracle(measure, "dense")
    assert expected
    got = pq.reindex(list(expected)).to_numpy(dtype=np.float64)
    np.testing.assert_allclose(got, list(expected.values()), rtol=0, atol=1e-12)


def test_the_object_and_its_string_are_one_measure_and_not_this_projects_ndcg():
    assert [m.name for m in parse_measure(ir_measures.nDCG @ 10)] == [m.name for m in parse_measure("nDCG@10")]
    assert parse_measure("nDCG@10")[0].name != parse_measure("ndcg@10")[0].name  # linear vs exponential


@pytest.mark.parametrize("typo, other_look", [("nDCG@x", "ndcg"), ("ndcg@1o", "nDCG"), ("NDCG@10x", "nDCG")])
def test_a_suggestion_never_names_another_definition_that_looks_the_same(typo, other_look):
    with pytest.raises(UnknownMeasure) as err:
        parse_measure(typo)
    offered = re.search(r"did you mean (.*?)\?", str(err.value))
    names = offered.group(1).split(", ") if offered else []
    assert not [n for n in names if re.split(r"[@(_.]", n)[0] == other_look]
