"""The catalogue's ir_measures-only measures against ir_measures itself, per query, at 1e-9."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as re_

ir_measures = pytest.importorskip("ir_measures")
cat = importlib.import_module("retrieval_eval.engine.measures")  # rev.measures is the table


def frames(qrels, rows):
    j = re_.as_judgments([{"query_id": q, "doc_uri": d, "relevance": g} for q, d, g in qrels])
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    df.insert(0, "system", "run")
    df.insert(2, "rank", df.groupby("query_id", sort=False).cumcount() + 1)
    return j, re_.as_run(df)


@pytest.mark.parametrize("seed", range(4))
def test_judged_at_k_matches_ir_measures(seed):
    # Distinct scores: ir_measures breaks ties by doc id ascending, trec_eval descending.
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(20):
        pool = [f"d{i}" for i in rng.choice(100, size=50, replace=False)]
        qrels += [(f"q{q}", d, int(rng.integers(0, 3))) for d in pool[: int(rng.integers(1, 30))]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 40))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, rng.permutation(len(docs)))]
    names = ["Judged@1", "Judged@5", "Judged@10", "Judged@20", "Judged@100"]
    j, r = frames(qrels, rows)
    ours = cat.compute(j, r, names).set_index("query_id")
    want = ir_measures.iter_calc(
        [ir_measures.parse_measure(n) for n in names],
        [ir_measures.Qrel(q, d, g) for q, d, g in qrels],
        [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows],
    )
    compared = 0
    for m in want:
        assert ours.loc[m.query_id, str(m.measure)] == pytest.approx(m.value, abs=1e-9)
        compared += 1
    assert compared == 20 * len(names)


def test_judged_breaks_score_ties_the_trec_eval_way_not_ir_measures_way():
    # a and b tie; trec_eval's order is b, a: the top 1 is b, unjudged.
    j, r = frames([("q", "a", 1)], [("q", "a", 1.0), ("q", "b", 1.0)])
    assert cat.compute(j, r, ["Judged@1"])["Judged@1"].iloc[0] == 0.0
    want = next(
        iter(
            ir_measures.iter_calc(
                [ir_measures.Judged @ 1],
                [ir_measures.Qrel("q", "a", 1)],
                [ir_measures.ScoredDoc("q", "a", 1.0), ir_measures.ScoredDoc("q", "b", 1.0)],
            )
        )
    )
    assert want.value == 1.0  # ir_measures ranks a first (doc id ascending)


IR_NAMES = [
    "P@5",
    "P(rel=2)@5",
    "R@10",
    "R(rel=2)@10",
    "AP",
    "AP(rel=2)",
    "AP@10",
    "RR",
    "Rprec",
    "Bpref",
    "nDCG",
    "nDCG@10",
    "SetP",
    "SetR",
    "SetF",
    "SetAP",
    "NumRet",
    "NumRel",
    "NumRelRet",
    "Success@5",
    "IPrec@0.3",
    "infAP",
]


def test_ir_measures_names_mean_what_ir_measures_computes():
    rng = np.random.default_rng(9)
    qrels, rows = [], []
    for q in range(15):
        pool = [f"d{i}" for i in rng.choice(80, size=40, replace=False)]
        qrels += [(f"q{q}", d, int(rng.integers(0, 4))) for d in pool[: int(rng.integers(2, 25))]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 35))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, rng.permutation(len(docs)))]
    j, r = frames(qrels, rows)
    ours = cat.compute(j, r, IR_NAMES, compat="9.0.8").set_index("query_id")  # ir_measures' IPrec: pytrec_eval, 9.0.8
    column = {n: cat.parse_measure(n)[0].name for n in IR_NAMES}
    want = ir_measures.iter_calc(
        [ir_measures.parse_measure(n) for n in IR_NAMES],
        [ir_measures.Qrel(q, d, g) for q, d, g in qrels],
        [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows],
    )
    by_name = {str(ir_measures.parse_measure(n)): n for n in IR_NAMES}
    seen = set()
    for m in want:
        name = by_name[str(m.measure)]
        assert ours.loc[m.query_id, column[name]] == pytest.approx(m.value, abs=1e-9), (name, m.query_id)
        seen.add(name)
    assert seen == set(IR_NAMES)
