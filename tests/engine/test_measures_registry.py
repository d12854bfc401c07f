"""The registry's one name parser, its measures() table, and the exponential-gain nDCG."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import retrieval_eval as re_

cat = importlib.import_module("retrieval_eval.engine.measures")  # rev.measures is the table
from retrieval_eval.engine.measures import parse_measure


def names(text):
    return [m.name for m in parse_measure(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("P_10", ["P_10"]),
        ("P.5,10", ["P_5", "P_10"]),
        ("ndcg_cut_10", ["ndcg_cut_10"]),
        ("ndcg_cut.5", ["ndcg_cut_5"]),
        ("map", ["map"]),
        ("recip_rank", ["recip_rank"]),
        ("Rprec", ["Rprec"]),
        ("bpref", ["bpref"]),
        ("iprec_at_recall_0.10", ["iprec_at_recall_0.10"]),
        ("Rprec_mult_0.20", ["Rprec_mult_0.20"]),
        ("11pt_avg", ["11pt_avg"]),
        ("set_F", ["set_F"]),
    ],
)
def test_trec_eval_names_parse_to_themselves(text, expected):
    assert names(text) == expected


def test_a_trec_eval_family_alone_stands_for_its_default_parameters():
    assert names("P") == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert names("success") == ["success_1", "success_5", "success_10"]
    assert len(names("iprec_at_recall")) == 11


@pytest.mark.parametrize(
    "text, expected",
    [
        ("nDCG@10", "ndcg_cut_10"),
        ("P@5", "P_5"),
        ("P(rel=2)@5", "P(rel=2)_5"),
        ("AP", "map"),
        ("AP@10", "map_cut_10"),
        ("RR", "recip_rank"),
        ("R@10", "recall_10"),
        ("Rprec", "Rprec"),
        ("Bpref", "bpref"),
        ("SetP", "set_P"),
        ("SetR", "set_recall"),
        ("SetF", "set_F"),
        ("SetAP", "set_map"),
        ("NumRet", "num_ret"),
        ("NumRel", "num_rel"),
        ("NumRelRet", "num_rel_ret"),
        ("NumQ", "num_q"),
        ("IPrec@0.1", "iprec_at_recall_0.10"),
        ("Success@5", "success_5"),
        ("nDCG", "ndcg"),
        ("infAP", "infAP"),
    ],
)
def test_ir_measures_names_parse_to_the_trec_eval_measure(text, expected):
    assert names(text) == [expected]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("precision@10", "P_10"),
        ("recall@10", "recall_10"),
        ("hits@5", "hits@5"),
        ("hit_rate@5", "success_5"),
        ("mrr@10", "RR@10"),
        ("RR@5", "RR@5"),
        ("RR(rel=2)@5", "RR(rel=2)@5"),
        ("r_precision", "Rprec"),
        ("mrr", "recip_rank"),
        ("map@10", "map_cut_10"),
        ("bpref", "bpref"),
        ("ndcg_burges@10", "ndcg_exp_cut_10"),
    ],
)
def test_ranx_names_parse_as_aliases(text, expected):
    assert names(text) == [expected]


def test_a_cutoff_family_alone_is_its_default_cutoffs_ranxs_hits_included():
    # The registry's one rule (trec_eval's: P is P_5 ... P_1000). ranx's plain hits counts the
    # whole ranking; here that is num_rel_ret, and plain hits is hits@10.
    assert names("hits") == ["hits@10"]
    assert names("RR") == ["recip_rank"] and names("mrr") == ["recip_rank"]


def test_ndcg_at_k_means_this_projects_exponential_gain_and_the_name_says_so():
    assert names("ndcg@10") == ["ndcg_exp_cut_10"]  # the spec's gain, not ranx's linear one
    assert names("ndcg_linear@10") == names("nDCG@10") == ["ndcg_cut_10"]


def test_a_relevance_level_shows_in_the_name():
    (m,) = parse_measure("P(rel=2)@5")
    assert (m.family, m.param, m.rel, m.name) == ("P", 5, 2, "P(rel=2)_5")


@pytest.mark.parametrize("text", ["ndgc@10", "P_0", "precison@10", "", "P(p=2)@5", "nDCG@x", "iprec_at_recall_1.5"])
def test_an_unknown_name_is_an_error_naming_close_ones(text):
    with pytest.raises(ValueError, match="unknown measure"):
        parse_measure(text)


def test_an_unknown_name_suggests_the_closest_names():
    with pytest.raises(ValueError, match="did you mean.*ndcg"):
        parse_measure("ndgc")


def _suggested(text: str) -> list[str]:
    with pytest.raises(ValueError) as info:
        parse_measure(text)
    message = str(info.value)
    assert message.count("\n") == 0 and message.startswith(f"unknown measure {text!r}")
    return message.split("did you mean ")[1].split("?")[0].split(", ") if "did you mean" in message else []


@pytest.mark.parametrize(
    "text,first",
    [
        ("ndgc@10", "nDCG@10"),  # a typo in the stem: the user's cutoff and syntax come back
        ("nDGC@10", "nDCG@10"),
        ("precison@10", "precision@10"),
        ("recal_20", "recall_20"),
        ("Succes@5", "Success@5"),
        ("ndcg_cutt_10", "ndcg_cut_10"),
        ("mrr@1O", "mrr@10"),
        ("bprf", "Bpref"),
        ("mapp", "map"),
    ],
)
def test_suggestions_keep_the_cutoff_and_every_one_parses(text, first):
    close = _suggested(text)
    assert close[0] == first
    assert 1 <= len(close) <= 3 and text not in close
    for name in close:
        assert parse_measure(name)  # a suggestion is a name the parser reads


@pytest.mark.parametrize(
    "text",
    [
        "P@1e400",
        "P.inf",
        "P.nan",
        "mrr@1O",
        "P_5.5",
        "iprec_at_recall.x",
        "P.99999999999999999999",
        "success@2147483648",
        "nDCG(gains={1:99999999999999999999})",
    ],
)
def test_a_cutoff_that_is_not_a_positive_integer_is_a_one_line_error(text):
    # float('1e400') is infinite: int() of it raised OverflowError, a traceback past the CLI.
    with pytest.raises(ValueError, match=r"must be a (positive integer|number)|up to 2,147,483,647"):
        parse_measure(text)


def test_the_largest_cutoff_computes():
    # P_k divides the relevant retrieved by k; past 2**31 - 1 the name is refused (above), at it
    # the value is computed without overflow (numpy's int64 took a 20-digit one as an error).
    j = re_.as_judgments([{"query_id": "q", "doc_uri": "a", "relevance": 1}])
    r = re_.as_run([{"system": "s", "query_id": "q", "rank": 1, "doc_id": "a", "score": 1.0}])
    got = cat.compute(j, r, ["P.2147483647", "ndcg_cut.2147483647"])
    assert got["P_2147483647"].iloc[0] == pytest.approx(1 / (2**31 - 1), rel=1e-12)
    assert got["ndcg_cut_2147483647"].iloc[0] == 1.0


def test_measures_table_lists_every_family_once_with_stable_columns():
    table = cat.measures()
    assert list(table.columns) == [
        "name",
        "aliases",
        "parameter",
        "cutoff",
        "aggregate",
        "definition",
        "verified_against",
    ]
    assert table["name"].is_unique
    assert table["cutoff"].dtype == bool
    assert (table["definition"].str.len() > 0).all()
    # every name in the table parses back to its family
    for name in table["name"]:
        assert {m.family for m in parse_measure(name)} == {name}


def test_measures_is_exported_at_the_top_level():
    assert re_.measures().equals(cat.measures())


# ---------------------------------------------------------------- the exponential gain


def test_exponential_ndcg_matches_a_hand_computed_value():
    j = re_.as_judgments([{"query_id": "q", "doc_uri": d, "relevance": g} for d, g in [("a", 3), ("b", 0), ("c", 1)]])
    r = re_.as_run([{"query_id": "q", "ranking": ["x", "a", "y", "c", "b"]}])
    got = cat.compute(j, r, ["ndcg@4"], order="rank")["ndcg_exp_cut_4"].iloc[0]
    dcg = 7 / math.log2(3) + 1 / math.log2(5)
    idcg = 7 / math.log2(2) + 1 / math.log2(3)
    assert got == pytest.approx(dcg / idcg, abs=1e-12)


def test_exponential_ndcg_matches_the_engine_on_generated_runs():
    rng = np.random.default_rng(3)
    labels, lines = [], []
    for q in range(40):
        docs = [f"d{i}" for i in rng.choice(100, size=30, replace=False)]
        labels += [{"query_id": f"q{q}", "doc_uri": d, "relevance": int(rng.integers(0, 4))} for d in docs[:15]]
        lines.append({"query_id": f"q{q}", "ranking": list(rng.permutation(docs))[:20]})
    j, r = re_.as_judgments(labels), re_.as_run(lines)
    engine = re_.compute(j, r, k=(3, 10)).set_index("query_id")
    ours = cat.compute(j, r, ["ndcg@3", "ndcg@10"], order="rank").set_index("query_id")
    for k in (3, 10):
        np.testing.assert_allclose(
            ours[f"ndcg_exp_cut_{k}"].to_numpy(), engine.loc[ours.index, f"ndcg@{k}"].to_numpy(), atol=1e-12
        )
