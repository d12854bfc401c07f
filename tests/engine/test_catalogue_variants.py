"""ir_measures' ``judged_only=True`` and ``gains={...}`` against ir_measures itself (its
pytrec_eval provider: trec_eval's -J and mapped qrels), per query, at 1e-9."""

from __future__ import annotations

import importlib

import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")
helpers = importlib.import_module("tests.engine.test_catalogue_ir_measures")
cat = importlib.import_module("retrieval_eval.engine.measures")

JUDGED = [
    "P(judged_only=True)@5",
    "P(rel=2,judged_only=True)@10",
    "RR(judged_only=True)",
    "Rprec(judged_only=True)",
    "AP(judged_only=True)",
    "AP(judged_only=True)@10",
    "nDCG(judged_only=True)",
    "nDCG(judged_only=True)@10",
    "R(judged_only=True)@10",
    "SetP(judged_only=True)",
    "SetF(judged_only=True)",
    "SetAP(judged_only=True)",
    "Success(judged_only=True)@5",
    "IPrec(judged_only=True)@0.3",
]
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
    for bad, why in [
        ("Bpref(judged_only=True)", "judged_only applies"),
        ("P(gains={1:2})@5", "nDCG only"),
        ("nDCG(gains={1:-2})", "numbers >= 0"),
        ("nDCG(judged_only=maybe)", "True or False"),
    ]:
        with pytest.raises(ValueError, match=why):
            cat.parse_measure(bad)
    for bad, why in [
        ("nDCG(judged_only=-1)@10", "True or False"),
        ("nDCG(judged_only=)", "True or False"),
        ("nDCG(gains=5)", "map of grades"),
        ("SDCG(max_rel=inf)@10", "finite"),
        ("RBP(rel=1e400)", "finite"),
    ]:
        # These recursed until RecursionError, or raised OverflowError, before.
        with pytest.raises(ValueError, match=why):
            cat.parse_measure(bad)


_STEMS = [
    "P",
    "P@",
    "P_",
    "P.",
    "nDCG@",
    "RBP(p=",
    "RBP(rel=",
    "Compat(p=",
    "set_F.",
    "utility.",
    "ndcg.1=",
    "iprec_at_recall_",
    "Rprec_mult_",
    "SDCG(max_rel=",
    "nDCG(gains={1:",
    "ERR@",
    "unj.",
    "P(rel=",
    "hits@",
    "rbp.",
    "map_cut.",
    "ndcg_cut.1=",
    "Judged@",
    "NERR8(max_rel=",
    "nDCG(judged_only=",
    "nDCG(gains=",
    "P(judged_only=True,rel=",
    "INST(T=",
    "nDCG(gains={1:2},judged_only=",
    "Compat(p=0.5,normalize=",
    "AP(rel=",
    "SetF(beta=",
]
_VALUES = [
    "nan",
    "inf",
    "-inf",
    "1e400",
    "-1",
    "0",
    "1O",
    "",
    "1e-400",
    "2**3",
    "9" * 30,
    " 5",
    "1,",
    "1,,2",
    "0.5)",
    "True",
    "x)",
    "(",
    ")",
    "{}",
    "=",
    "\\",
    "é",
]


@pytest.mark.parametrize("stem", _STEMS)
def test_any_malformed_parameter_is_a_value_error(stem):
    """Whatever follows a measure's name, the parser answers or raises ValueError (the
    one-line error of evaluate and the CLI), never another exception."""
    for value in _VALUES:
        for text in (stem + value, stem + value + ")", stem + value + "})", stem + value + ")@5"):
            try:
                cat.parse_measure(text)
            except ValueError:
                pass
