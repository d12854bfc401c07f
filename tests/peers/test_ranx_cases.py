"""ranx's own test cases that evaluate a (qrels, run, measure), ported: our value equals ranx's.

Source: github.com/AmenRa/ranx (MIT License, Copyright (c) 2020 Elias Bassani), commit
2cae52f00c2c15136a07d573027744109792604d: tests/unit/ranx/meta/evaluate_test.py and
tests/unit/ranx/metrics/{bpref,f1,rank_biased_precision,zero_division_error}_test.py. The qrels,
runs and expected values are theirs (quoted with attribution); the layout is ours. Where ranx
states an expected value as a formula, the formula is kept; where a test only checks that a
mean equals the mean of its single-query calls, the per-query values are written out by hand.

ranx's numba-array cases list each ranking in order with equal scores: ``ordered=True`` keeps
that order (ranx reads the arrays as already ranked). Names are ranx's own, read by our registry,
with one documented exception each:

* ranx's ``ndcg@k`` is linear gain (Jarvelin); this project's ``ndcg@k`` is exponential gain
  (docs/metrics.md, "the ambiguous name rule"), so those cases run under ``ndcg_linear@k`` and
  ``test_ranx_ndcg_name_means_exponential_gain_here`` pins the difference;
* ranx's ``recall`` without k (the whole ranking) is ``set_recall`` here: plain ``recall`` is
  trec_eval's family name (recall_5 ... recall_1000).

Counted in docs/conformance.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.peers.peer_helpers import mean, per_query

L2 = np.log2


def ids(pairs):
    """ranx's ``[[doc, grade], ...]`` arrays (numeric doc ids) as a ``{doc: grade}`` dict."""
    return {str(d): g for d, g in pairs}


# evaluate_test.py: (case, qrels per query, rankings per query, ranx name, expected mean)
PRED6 = [1, 2, 3, 4, 5, 7]
PRED7 = [4, 5, 6, 2, 1, 7, 3]
PRED_R = [2, 4, 3, 1, 5, 6, 7]
GRADED = {"2": 5, "4": 4, "5": 3, "10": 2}
P1, P2, P3 = [1, 2, 3, 4, 5], [10, 5, 2, 4, 3], [1, 3, 6, 7, 8]  # grades 0,5,0,4,3 / 2,3,5,4,0 / none
IDCG_LIN = 5 / L2(2) + 4 / L2(3) + 3 / L2(4) + 2 / L2(5)
IDCG_EXP = 31 / L2(2) + 15 / L2(3) + 7 / L2(4) + 3 / L2(5)
EVALUATE = [
    ("hits_single", [[1, 4, 5, 6]], [PRED6], "hits@5", 3),
    ("hits_parallel", [[1, 4, 5, 6], [1, 4, 6]], [PRED6, [1, 2, 4, 3, 5, 7]], "hits@5", 2.5),
    ("hit_rate_single", [[1, 2, 4]], [[1, 2, 4, 3, 5, 7]], "hit_rate@5", 1),
    ("hit_rate_parallel", [[9, 6, 8, 6], [1, 2, 4]], [PRED6, [1, 2, 4, 3, 5, 7]], "hit_rate@5", 0.5),
    ("precision_single", [[1, 4, 5, 6]], [PRED6], "precision@5", 3 / 5),
    ("precision_parallel", [[1, 2, 3], [4, 5, 6, 7], [8, 9]], [PRED7] * 3, "precision@5", (2 / 5 + 3 / 5 + 0) / 3),
    ("average_precision", [[1, 4, 5, 6]], [PRED6], "map@6", 0.525),
    (
        "average_precision_parallel",
        [[1, 2, 3], [4, 5, 6, 7], [8, 9]],
        [PRED7] * 3,
        "map@7",
        ((1 / 4 + 2 / 5 + 3 / 7) / 3 + (1 + 1 + 1 + 4 / 6) / 4 + 0) / 3,
    ),
    ("reciprocal_rank_single", [[3]], [[2, 3, 1, 4, 5]], "mrr@5", 0.5),
    ("reciprocal_rank_single_no_match", [[3]], [[2, 1, 4, 5]], "mrr@5", 0.0),
    ("reciprocal_rank_parallel", [[3], [1], [3]], [[2, 3, 1, 4, 5], [1, 2, 3, 4, 5], [1, 1, 1, 4, 5]], "mrr@5", 0.5),
    ("r_precision_single", [[1, 2, 3]], [PRED_R], "r-precision", 2 / 3),
    ("r_precision_parallel", [[1, 2, 3], [1, 2]], [PRED_R] * 2, "r-precision", (2 / 3 + 1 / 2) / 2),
    ("recall_single", [[1, 2, 3]], [PRED_R], "recall@2", 1 / 3),
    ("recall_parallel", [[1, 2, 3], [1, 2]], [PRED_R] * 2, "recall@2", (1 / 3 + 1 / 2) / 2),
    ("dcg_jarvelin_1", [GRADED], [P1], "dcg@10", 5 / L2(3) + 4 / L2(5) + 3 / L2(6)),
    ("dcg_jarvelin_2", [GRADED], [P2], "dcg@10", 2 / L2(2) + 3 / L2(3) + 5 / L2(4) + 4 / L2(5)),
    ("dcg_jarvelin_3", [GRADED], [P3], "dcg@10", 0.0),
    ("ndcg_jarvelin_1", [GRADED], [P1], "ndcg_linear@10", (5 / L2(3) + 4 / L2(5) + 3 / L2(6)) / IDCG_LIN),
    ("ndcg_jarvelin_2", [GRADED], [P2], "ndcg_linear@10", (2 / L2(2) + 3 / L2(3) + 5 / L2(4) + 4 / L2(5)) / IDCG_LIN),
    ("ndcg_jarvelin_3", [GRADED], [P3], "ndcg_linear@10", 0.0),
    ("dcg_burges_1", [GRADED], [P1], "dcg_burges@10", 31 / L2(3) + 15 / L2(5) + 7 / L2(6)),
    ("dcg_burges_2", [GRADED], [P2], "dcg_burges@10", 3 / L2(2) + 7 / L2(3) + 31 / L2(4) + 15 / L2(5)),
    ("dcg_burges_3", [GRADED], [P3], "dcg_burges@10", 0.0),
    ("ndcg_burges_1", [GRADED], [P1], "ndcg_burges@10", (31 / L2(3) + 15 / L2(5) + 7 / L2(6)) / IDCG_EXP),
    ("ndcg_burges_2", [GRADED], [P2], "ndcg_burges@10", (3 / L2(2) + 7 / L2(3) + 31 / L2(4) + 15 / L2(5)) / IDCG_EXP),
    ("ndcg_burges_3", [GRADED], [P3], "ndcg_burges@10", 0.0),
]


def as_dicts(qrels, preds):
    q = {f"q{i}": (dict(g) if isinstance(g, dict) else {str(d): 1 for d in g}) for i, g in enumerate(qrels)}
    return q, {f"q{i}": [str(d) for d in p] for i, p in enumerate(preds)}


@pytest.mark.parametrize("case, qrels, preds, name, want", EVALUATE, ids=[c[0] for c in EVALUATE])
def test_ranx_evaluate_cases(case, qrels, preds, name, want):
    q, r = as_dicts(qrels, preds)
    assert mean(q, r, name, ordered=True) == pytest.approx(want, abs=1e-12)


def test_ranx_ndcg_name_means_exponential_gain_here():
    """ranx's ``ndcg@10`` (linear) is ``ndcg_linear@10`` here; our ``ndcg@10`` is exponential."""
    q, r = as_dicts([GRADED], [P2])
    lin = (2 / L2(2) + 3 / L2(3) + 5 / L2(4) + 4 / L2(5)) / IDCG_LIN
    assert mean(q, r, "ndcg@10", ordered=True) != pytest.approx(lin, abs=1e-6)
    assert mean(q, r, "ndcg@10", ordered=True) == pytest.approx(mean(q, r, "ndcg_burges@10", ordered=True))


# metrics/bpref_test.py and metrics/f1_test.py share the qrels; the runs differ in q4.
QRELS_BF = {
    "q1": {"d2": 1, "d5": 1, "d1": 0, "d4": 0},
    "q2": {"d2": 1, "d5": 1, "d1": 0, "d6": 0},
    "q3": {"d2": 1, "d5": 1, "d7": 1, "d1": 0, "d6": 0, "d8": 0},
    "q4": {"d2": 1, "d4": 1, "d6": 1, "d9": 1, "d1": 0, "d3": 0, "d7": 0, "d8": 0},
}
RUN_BF = {
    "q1": {"d1": 10, "d2": 9, "d3": 8, "d4": 7},
    "q2": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5},
    "q3": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5, "d7": 4, "d8": 3},
}


def test_ranx_bpref():
    run = {**RUN_BF, "q4": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d6": 5, "d7": 4, "d8": 3}}
    want = [
        1 / 2 * (1 - 1 / 2),
        1 / 2 * ((1 - 1 / 2) + (1 - 1 / 2)),
        1 / 3 * ((1 - 1 / 3) + (1 - 1 / 3) + (1 - 2 / 3)),
        1 / 4 * ((1 - 1 / 4) + (1 - 2 / 4) + (1 - 2 / 4)),
    ]
    got = per_query(QRELS_BF, run, "bpref")
    assert got.loc[["q1", "q2", "q3", "q4"]].tolist() == pytest.approx(want, abs=1e-12)


def test_ranx_f1_without_k_is_the_whole_ranking():
    run = {**RUN_BF, "q4": {"d1": 10, "d12": 9, "d3": 8, "d14": 7, "d16": 5, "d7": 4, "d8": 3}}
    got = per_query(QRELS_BF, run, "f1").loc[["q1", "q2", "q3", "q4"]]
    p = per_query(QRELS_BF, run, "precision").loc[got.index]
    r = per_query(QRELS_BF, run, "set_recall").loc[got.index]
    # ranx states f1 as 2 P R / (P + R) of its own precision and recall (k = 0: the whole ranking)
    for q in ("q1", "q2", "q3"):
        assert got[q] == pytest.approx(2 * p[q] * r[q] / (p[q] + r[q]), abs=1e-12)
    assert got.tolist() == pytest.approx([1 / 3, 1 / 2, 6 / 11, 0.0], abs=1e-12)  # by hand


@pytest.mark.parametrize("name, want", [("rbp.5", 0.7661), ("rbp.8", 0.4526), ("rbp.95", 0.1881)])
def test_ranx_rank_biased_precision(name, want):
    qrels = {"q1": {"d1": 1, "d2": 1, "d6": 1, "d11": 1, "d17": 1}}
    run = {"q1": {f"d{i}": 21 - i for i in range(1, 21)}}
    assert round(mean(qrels, run, name), 4) == want


ZQRELS = {"q_1": {"doc_a": 1}, "q_2": {"doc_b": 1}, "q_3": {"doc_c": 1}, "q_4": {"doc_d": 1}}
ZRUN = {"q_1": {"doc_a": 1.0}, "q_2": {"doc_b": 1.0}, "q_3": {}, "q_4": {"doc_d": 1.0}}


@pytest.mark.parametrize("name", ["precision", "set_recall", "f1"])
def test_ranx_zero_division(name):
    """An empty ranking scores 0, never a division by zero (ranx: the mean is 0.75)."""
    assert mean(ZQRELS, ZRUN, name) == 0.75


def test_ranx_plain_recall_is_trec_eval_family_here():
    """ranx's ``recall`` (no k) is ``set_recall`` here: plain ``recall`` is trec_eval's cutoffs."""
    from tests.peers.peer_helpers import cat

    assert [m.name for m in cat.parse_measure("recall")][:2] == ["recall_5", "recall_10"]
    assert math.isclose(mean(ZQRELS, ZRUN, "set_recall"), 0.75)
