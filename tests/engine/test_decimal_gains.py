"""Decimal gains in gain maps (trec_eval reads a gain with ``atof``: ``ndcg.1=3,2=9,4=4.5``).

Oracles: a hand-computed nDCG, and the integer-gain path (which relabels grades by their gain,
:func:`variants._mapped`), a separate computation: nDCG does not change when every gain is
multiplied by one constant, so a map of half-integers equals the doubled integer map.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import retrieval_eval.engine.measures as cat

trec = importlib.import_module("tests.engine.test_measures_trec")

QRELS = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 3), ("q1", "x", 0)]
RUN = [("q1", "c", 3.0), ("q1", "a", 2.0), ("q1", "x", 1.5), ("q1", "b", 1.0)]


def test_ndcg_with_a_decimal_gain_by_hand():
    # grade 3 gains 2.5; grades 1 and 2 gain themselves. Ranking c a x b: 2.5, 1, 0, 2.
    got = cat.compute(trec.judgments(QRELS), trec.run(RUN), ["ndcg.3=2.5", "nDCG(gains={3:2.5})@2"])
    dcg = 2.5 + 1 / math.log2(3) + 0 + 2 / math.log2(5)
    ideal = 2.5 + 2 / math.log2(3) + 1 / 2
    assert got["ndcg(gains={3:2.5})"].iloc[0] == pytest.approx(dcg / ideal, abs=1e-12)
    cut = (2.5 + 1 / math.log2(3)) / (2.5 + 2 / math.log2(3))
    assert got["ndcg_cut_2(gains={3:2.5})"].iloc[0] == pytest.approx(cut, abs=1e-12)
    assert got["ndcg(gains={3:2.5})"].iloc[0] != pytest.approx(
        cat.compute(trec.judgments(QRELS), trec.run(RUN), ["ndcg"])["ndcg"].iloc[0], abs=1e-6
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("base", ["ndcg", "ndcg_cut.5", "ndcg_cut.20"])
def test_half_integer_gains_equal_the_doubled_integer_map(seed, base):
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(12):
        pool = [f"d{i}" for i in rng.choice(50, size=25, replace=False)]
        qrels += [(f"q{q}", d, int(rng.choice([-1, 0, 1, 2, 3, 4]))) for d in pool[: int(rng.integers(1, 25))]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 25))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, np.round(rng.random(len(docs)) * 3, 1))]
    j, r = trec.judgments(qrels), trec.run(rows)
    half = "0=0,1=0.5,2=1.5,3=2.5,4=4.5"
    whole = "0=0,1=1,2=3,3=5,4=9"
    a = cat.compute(j, r, [_with(base, half)])
    b = cat.compute(j, r, [_with(base, whole)])
    va, vb = a.iloc[:, 2].to_numpy(), b.iloc[:, 2].to_numpy()
    assert np.allclose(va, vb, atol=1e-12, rtol=0)
    assert (va > 0).sum() > 3  # the data exercises the gains


def _with(base: str, gains: str) -> str:
    """``ndcg.1=3`` or ``nDCG(gains={1:3})@5`` for a cutoff (trec_eval's ndcg_cut takes no map)."""
    if base == "ndcg":
        return f"ndcg.{gains}"
    return f"nDCG(gains={{{gains.replace('=', ':')}}})@{base.split('.')[1]}"


def test_decimal_gain_names_parse_back_and_a_whole_decimal_is_the_integer():
    m = cat.parse_measure("ndcg.1=3,2=9,4=4.5")[0]
    assert m.name == "ndcg(gains={1:3,2:9,4:4.5})"
    assert cat.parse_measure(m.name) == [m]
    assert cat.parse_measure("G.1=3.0") == cat.parse_measure("G.1=3")
    assert cat.parse_measure("G.1=.5")[0].name == "G(gains={1:0.5})"
