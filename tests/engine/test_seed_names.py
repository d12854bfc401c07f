"""The seed metrics' names: declared once (measures/seed.py), parsed by one function."""

from __future__ import annotations

import doctest

import pytest

from retrieval_eval.engine import metrics
from retrieval_eval.engine.measures import seed
from retrieval_eval.engine.measures.seed import parse_metric


def test_metric_names_are_the_declarations_in_table_order():
    assert metrics.METRIC_NAMES == ("precision", "recall", "ndcg", "mrr", "map", "hit_rate", "judged")
    assert metrics.METRIC_NAMES[:6] == metrics.SPEC_METRICS


@pytest.mark.parametrize("metric", metrics.METRIC_NAMES)
@pytest.mark.parametrize("gain", metrics.GAINS)
@pytest.mark.parametrize("k", [1, 10, 1000])
def test_parse_metric_reads_back_every_column_name(metric, gain, k):
    name = metrics.metric_name(metric, k, gain)
    base, at, g = parse_metric(name)
    assert (base, at) == (metric, k)
    assert g == ("linear" if metric == "ndcg" and gain == "linear" else None)


@pytest.mark.parametrize(
    "name",
    ["bleu", "recall@0", "recall@-1", "recall@1.5", "Recall@10", "recall@", "@10", "P_10", "", "ndcg_linear_x@3"],
)
def test_parse_metric_refuses_what_is_no_seed_metric(name):
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric(name)


def test_a_bare_name_has_no_cutoff():
    assert parse_metric("mrr") == ("mrr", None, None)
    assert parse_metric("ndcg_linear") == ("ndcg", None, "linear")


def test_the_docstring_examples_run():
    result = doctest.testmod(seed, verbose=False)
    assert result.attempted >= 2 and result.failed == 0
