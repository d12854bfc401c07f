"""ranx's names (``f1@k``, ``dcg@k``, ``dcg_burges@k``, ``rbp.p``, and the aliases ranx shares
with trec_eval) against ranx itself, per query, at 1e-9.

ranx orders equal scores its own way, so the oracle gets distinct scores in trec_eval's order
(as the other oracle tests); ranx cannot hold a negative grade or an empty ranking, so the
data here has neither (the catalogue's handling of both is pinned against pytrec_eval)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

ranx = pytest.importorskip("ranx")
helpers = importlib.import_module("tests.engine.test_catalogue_ir_measures")

RANX = [
    "f1@1",
    "f1@5",
    "f1@10",
    "dcg@3",
    "dcg@10",
    "dcg_burges@5",
    "dcg_burges@20",
    "rbp.8",
    "rbp.95",
    "rbp.5",
    "precision@5",
    "recall@10",
    "hits@10",
    "hits@3",
    "hit_rate@5",
    "r_precision",
    "mrr",
    "mrr@1",
    "mrr@5",
    "map@10",
    "ndcg_burges@10",
    "bpref",
]
#: What ranx calls each: the same name, except ranx's hyphen in r-precision.
ORACLE = {"r_precision": "r-precision"}


def data(seed):
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(25):
        pool = [f"d{i}" for i in rng.choice(150, size=80, replace=False)]
        labels = pool[: int(rng.integers(1, 40))]
        qrels += [(f"q{q}", d, int(rng.integers(0, 4))) for d in labels]
        if not any(g > 0 for qq, _, g in qrels if qq == f"q{q}"):
            qrels.append((f"q{q}", labels[0], 1))
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 60))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, np.round(rng.random(len(docs)) * 5, 1))]
    return qrels, rows


@pytest.mark.parametrize("seed", range(3))
def test_ranx_names_match_ranx(seed):
    qrels, rows = data(seed)
    got = helpers.ours(qrels, rows, RANX)
    qd, rd = {}, {}
    for q, d, g in qrels:
        qd.setdefault(q, {})[d] = g
    for q, d, s in helpers.trec_scores(rows):
        rd.setdefault(q, {})[d] = s
    run = ranx.Run(rd)
    metrics = [ORACLE.get(n, n) for n in RANX]
    ranx.evaluate(ranx.Qrels(qd), run, metrics, make_comparable=True)
    col = {n: helpers.cat.parse_measure(n)[0].name for n in RANX}
    compared = 0
    for n, m in zip(RANX, metrics):
        for q, value in run.scores[m].items():
            if n == "bpref" and value != value:
                # ranx's bpref is 0/0 = NaN for a query with no judged non-relevant document
                # (a reference choice not followed: trec_eval, whose measure it is, says 1).
                assert not any(g == 0 for qq, _, g in qrels if qq == q)
                # (ours, trec_eval's, is pinned against pytrec_eval in test_measures_trec.py)
                compared += 1
                continue
            assert got.loc[q, col[n]] == pytest.approx(value, abs=1e-9), (n, q)
            compared += 1
    assert compared == len(RANX) * len(got)


def test_ranx_rbp_is_the_catalogues_rbp():
    names = [m.name for n in ("rbp.8", "RBP(p=0.8)", "RBP") for m in helpers.cat.parse_measure(n)]
    assert names == ["RBP(p=0.8)"] * 3
