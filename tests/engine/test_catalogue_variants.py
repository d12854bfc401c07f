"""ir_measures' ``judged_only=True`` and ``gains={...}`` against ir_measures itself (its
pytrec_eval provider: trec_eval's -J and mapped qrels), per query, at 1e-9."""

from __future__ import annotations

import importlib

import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")
helpers = importlib.import_module("tests.engine.test_catalogue_ir_measures")
cat = importlib.import_module("retrieval_eval.engine.measures")

JUDGED = ["P(judged_only=True)@5", "P(rel=2,judged_only=True)@10", "RR(judged_only=True)",
          "Rprec(judged_only=True)", "AP(judged_only=True)", "AP(judged_only=True)@10",
          "nDCG(judged_only=True)", "nDCG(judged_only=True)@10", "R(judged_only=True)@10",
          "SetP(judged_only=True)", "SetF(judged_only=True)", "SetAP(judged_only=True)",
          "Success(judged_only=True)@5", "IPrec(judged_only=True)@0.3"]
GAINS = ["nDCG(gains={0:0,1:1,2:5,3:10,4:20})@10", "nDCG(gains={1:3})", "nDCG(gains={0:1,2:2})@5"]


@pytest.mark.parametrize("data", ["edge", 0, 1, 2])
def test_judged_only_and_gains_match_ir_measures(data):
    qrels, rows = (helpers.EDGE_QRELS, helpers.EDGE_RUN) if data == "edge" else helpers.generated(data)
    # One measure per ir_measures call: its pytrec_eval provider files an nDCG without gains
    # under the first invocation it has, which may carry another nDCG's gains map (a reference
    # bug: nDCG(judged_only=True) then reads mapped grades).
    for name in JUDGED + GAINS:
        helpers.check(qrels, rows, [name])


def test_judged_only_moves_the_labelled_documents_up():
    qrels, rows = [("1", "a", 1)], [("1", "x", 2.0), ("1", "a", 1.0)]
    got = helpers.ours(qrels, rows, ["RR", "RR(judged_only=True)"])
    assert got[["recip_rank", "recip_rank(judged_only=True)"]].iloc[0].tolist() == [0.5, 1.0]


def test_variant_names_and_refusals():
    assert [m.name for m in cat.parse_measure("nDCG(judged_only=False)@10")] == ["ndcg_cut_10"]
    for bad, why in [("Bpref(judged_only=True)", "judged_only applies"),
                     ("P(gains={1:2})@5", "nDCG only"), ("nDCG(gains={1:-2})", "integers >= 0"),
                     ("nDCG(judged_only=maybe)", "True or False")]:
        with pytest.raises(ValueError, match=why):
            cat.parse_measure(bad)
