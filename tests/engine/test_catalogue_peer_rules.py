"""Issue 27 item 5's engine causes, each against ir_measures or pytrec_eval (the oracle).

* a run with no rows: every catalogue measure of ``evaluate(measures=...)`` scores 0 for every
  judged query (the rule for an unanswered query), as ``precision@5`` in the same call does;
* ``NumRet(rel=r)`` is ir_measures' relevant retrieved at level r, and a family that does not
  read the relevance level refuses ``rel=`` instead of ignoring it;
* ``num_q`` is 1 a query (pytrec_eval and ir_measures), its summary the number of queries;
* ir_measures' keyword spellings ``Judged(cutoff=k)`` and ``SetF(beta=b)``.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import retrieval_eval as re_
from retrieval_eval.io.dicts import judgments_from_dict, run_from_dict

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")
cat = importlib.import_module("retrieval_eval.engine.measures")

QRELS = {"q1": {"d1": 1, "d2": 0, "d4": 2}, "q2": {"d3": 2, "d5": 1}, "q3": {"d6": 0}}
RUN = {"q1": {"d1": 3.0, "d9": 2.0, "d4": 1.0}, "q2": {"d5": 2.0, "d3": 1.5, "d2": 1.0}}


def oracle(names, qrels=QRELS, run=RUN):
    """ir_measures' per-query values {(measure, query): value}."""
    q = [ir_measures.Qrel(qid, d, g) for qid, docs in qrels.items() for d, g in docs.items()]
    r = [ir_measures.ScoredDoc(qid, d, s) for qid, docs in run.items() for d, s in docs.items()]
    return {
        (str(m.measure), m.query_id): m.value
        for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], q, r)
    }


def test_an_empty_run_scores_every_judged_query_zero_as_ir_measures_does():
    names = ["P@5", "AP", "nDCG@10", "RR", "R@10", "Rprec", "Bpref"]
    want = oracle(names, run={})
    assert len(want) == len(names) * 3 and set(want.values()) == {0.0}
    ev = re_.evaluate(judgments_from_dict(QRELS), run_from_dict({}), k=(5,), measures=names)
    pq = ev.per_query.set_index("query_id")
    assert sorted(pq.index) == ["q1", "q2", "q3"]
    for n in names:
        col = n  # the column carries the name asked for
        assert ev.catalogue[n] == cat.parse_measure(n)[0].name
        for qid in ("q1", "q2", "q3"):
            assert pq.loc[qid, col] == want[(str(ir_measures.parse_measure(n)), qid)], (n, qid)
        assert ev.summary[col].iloc[0] == 0.0
    # the same call's own precision@5 says the same
    assert (pq["precision@5"].fillna(0.0) == pq["P@5"]).all()


def test_a_system_without_rows_beside_others_is_not_left_out():
    # the catalogue's compute keeps trec_eval's rule (no row, no query) unless told the systems
    got = cat.compute(judgments_from_dict(QRELS), run_from_dict({}), ["P_5"], complete=True)
    assert len(got) == 0
    got = cat.compute(judgments_from_dict(QRELS), run_from_dict({}), ["P_5", "num_q"], complete=True, systems=["empty"])
    assert got["system"].tolist() == ["empty"] * 3
    assert got["P_5"].tolist() == [0.0, 0.0, 0.0] and got["num_q"].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("rel", [1, 2])
def test_numret_with_rel_is_relevant_retrieved(rel):
    want = oracle([f"NumRet(rel={rel})"])
    (m,) = cat.parse_measure(f"NumRet(rel={rel})")
    assert m.family == "num_rel_ret"
    got = cat.compute(judgments_from_dict(QRELS), run_from_dict(RUN), [m], complete=True).set_index("query_id")[m.name]
    assert {q: got[q] for q in got.index} == {q: v for (_, q), v in want.items()}
    num_ret = cat.compute(judgments_from_dict(QRELS), run_from_dict(RUN), ["num_ret"], complete=True)
    assert got.tolist() != num_ret["num_ret"].tolist()  # the case issue 27 found: read as num_ret


@pytest.mark.parametrize(
    "name",
    ["num_ret(rel=2)", "NumQ(rel=2)", "Judged(rel=2)@5", "num_q(rel=2)", "unj(rel=2)", "Judged(rel=2, cutoff=5)"],
)
def test_a_family_that_does_not_read_rel_refuses_it(name):
    with pytest.raises(ValueError, match=r"does not read a relevance level: rel=2 would be ignored"):
        cat.parse_measure(name)


@pytest.mark.parametrize("family, param", [("num_ret", None), ("Judged", 5), ("unj", 5), ("num_q", None)])
def test_make_refuses_rel_for_those_families_too(family, param):
    assert cat.make(family, param).rel is None
    with pytest.raises(ValueError, match=r"does not read a relevance level"):
        cat.make(family, param, 2)


def test_num_q_is_one_a_query_as_pytrec_eval_gives_it():
    want = pytrec_eval.RelevanceEvaluator(QRELS, {"num_q"}).evaluate(RUN)
    got = cat.compute(judgments_from_dict(QRELS), run_from_dict(RUN), ["num_q"]).set_index("query_id")
    assert {q: got.loc[q, "num_q"] for q in got.index} == {q: v["num_q"] for q, v in want.items()}
    assert cat.summarize(got.reset_index()).loc["run", "num_q"] == len(want)
    ev = re_.evaluate(judgments_from_dict(QRELS), run_from_dict(RUN), k=(5,), measures=["NumQ"])
    assert ev.per_query["NumQ"].tolist() == [1.0, 1.0, 1.0] and ev.summary["NumQ"].iloc[0] == 3.0


def test_the_trec_eval_command_still_prints_num_q_only_in_the_summary(tmp_path):
    from retrieval_eval.cli.trec_eval import SUMMARY_ONLY

    assert "num_q" in SUMMARY_ONLY


@pytest.mark.parametrize(
    "ours, same, theirs",
    [
        ("Judged(cutoff=2)", "Judged@2", "Judged@2"),
        ("SetF(beta=0.5)", "set_F.0.5", "SetF(beta=0.5)"),
        ("SetF(beta=1)", "set_F", "SetF"),
    ],
)
def test_ir_measures_keyword_spellings(ours, same, theirs):
    (m,) = cat.parse_measure(ours)
    assert m.name == cat.parse_measure(same)[0].name
    want = oracle([theirs])
    got = cat.compute(judgments_from_dict(QRELS), run_from_dict(RUN), [m], complete=True).set_index("query_id")[m.name]
    for (_, q), v in want.items():
        assert got[q] == pytest.approx(v, abs=1e-12), q
    assert np.isfinite(got.to_numpy()).all()


@pytest.mark.parametrize(
    "name",
    ["Judged(cutoff=0)", "Judged(cutoff=x)", "SetF(beta=-1)", "P(k=3)", "SetF(rel=0, beta=0.5)", "Judged(cutoff=3)@5"],
)
def test_a_keyword_argument_we_cannot_honour_is_refused(name):
    with pytest.raises(ValueError, match=r"unknown measure"):
        cat.parse_measure(name)
