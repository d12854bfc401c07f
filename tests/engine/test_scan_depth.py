"""The scan reads no deeper than the measures asked for need (issue 13).

A cutoff measure (P@k, nDCG@k, Judged@k ...) reads the top k only; a measure without a cutoff
(R-precision, bpref, map) reads the whole ranking. Checked against pytrec_eval on rankings
deeper than the cutoffs; with repeated documents (which pytrec_eval cannot be given) above and
below the cut, against the same measures read from whole rankings.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from test_measures_trec import assert_agrees

cat = importlib.import_module("retrieval_eval.engine.measures")
scan_module = importlib.import_module("retrieval_eval.engine.measures.scan")

CUTOFF_ONLY = ["P.1,3,5", "recall.3,5", "relative_P.3", "success.1,5", "map_cut.5", "ndcg_cut.3,5"]


def _data(seed: int, repeats: bool = False):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(12):
        docs = [f"d{i}" for i in rng.choice(60, size=40, replace=False)]
        qrels += [(f"q{q}", d, int(rng.integers(0, 3))) for d in docs[:20]]
        ranking = list(rng.permutation(docs))[:30]
        if repeats and q % 3 == 0:  # a repeat above the largest cutoff, and one below it
            ranking = ranking[:2] + [ranking[0]] + ranking[2:10] + [ranking[1]] + ranking[10:]
        run += [(f"q{q}", d, float(len(ranking) - i)) for i, d in enumerate(ranking)]
    return qrels, run


@pytest.fixture
def depths(monkeypatch):
    seen = []
    real = scan_module.scan_run
    monkeypatch.setattr(
        scan_module, "scan_run", lambda run, depth, *a, **kw: seen.append(depth) or real(run, depth, *a, **kw)
    )
    return seen


@pytest.mark.parametrize("seed", range(3))
def test_cutoff_measures_read_the_top_k_only_and_agree_with_pytrec_eval(depths, seed):
    qrels, run = _data(seed)
    assert_agrees(qrels, run, CUTOFF_ONLY)
    assert depths == [5]


@pytest.mark.parametrize("request_", [["Rprec"], ["bpref"], ["P.5", "map"], ["num_ret", "P.3"]])
def test_a_measure_without_a_cutoff_reads_the_whole_ranking(depths, request_):
    qrels, run = _data(7)
    assert_agrees(qrels, run, request_)
    assert depths == [None]


def test_max_ret_below_the_cutoffs_still_cuts_first(depths):
    from test_measures_trec import judgments
    from test_measures_trec import run as run_frame

    qrels, run = _data(3)
    deep = cat.compute(judgments(qrels), run_frame(run), ["P_5", "map"], max_ret=4)
    cut = cat.compute(judgments(qrels), run_frame(run), ["P_5"], max_ret=4)
    assert depths == [4, 4]  # -M cuts first, whatever the measures need
    np.testing.assert_array_equal(cut["P_5"].to_numpy(), deep["P_5"].to_numpy())


def test_repeats_above_and_below_the_cut_give_the_whole_rankings_values(depths):
    """A ranking repeating a document inside the top k is read further (the repeat drops out
    and later entries move up): the values equal those of a whole-ranking scan."""
    from test_measures_trec import judgments
    from test_measures_trec import run as run_frame

    qrels, run = _data(5, repeats=True)
    names = ["P_3", "P_5", "recall_5", "ndcg_cut_5", "map_cut_5", "success_1", "Judged@5"]
    cut = cat.compute(judgments(qrels), run_frame(run), names)
    whole = cat.compute(judgments(qrels), run_frame(run), names + ["Rprec"])
    assert depths == [5, None]
    for name in names:
        np.testing.assert_array_equal(cut[name].to_numpy(), whole[name].to_numpy(), err_msg=name)
