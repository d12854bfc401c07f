"""The catalogue's later ir_measures measures against ir_measures itself, per query, at 1e-9.

ERR@k and nDCG(dcg='exp-log2')@k against gdeval (ir_measures' gdeval provider runs gdeval.pl,
which prints 5 decimals: the oracle here runs the same script printing 17 significant digits);
RBP, INST, SDCG, NERR8-11 against ir_measures' cwl_eval provider (RBP's residual against
cwl_eval's own best-case bound, which ir_measures drops); Compat against its compat provider.

Ties: trec_eval orders equal scores by doc id, descending, as the catalogue does; cwl_eval keeps
the file order, compat and ir_measures sort by doc id ascending, gdeval as trec_eval. So the
oracles get each ranking with distinct scores in trec_eval's order (``trec_scores``), and
``test_ties_follow_trec_eval_not_the_providers`` names the difference.
"""

from __future__ import annotations

import importlib
import logging
import subprocess

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as re_

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")
cat = importlib.import_module("retrieval_eval.engine.measures")
logging.getLogger("ir_measures.cwl_eval").setLevel(logging.ERROR)


def frames(qrels, rows):
    """Judgments and run frames; negative grades kept as given (the readers clamp them)."""
    j = re_.as_judgments([{"query_id": q, "doc_uri": d, "relevance": max(g, 0)} for q, d, g in qrels])
    j = j.assign(relevance=np.array([g for _, _, g in qrels], dtype=np.int64))
    df = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    df.insert(0, "system", "run")
    df.insert(2, "rank", df.groupby("query_id", sort=False).cumcount() + 1)
    return j, re_.as_run(df)


def trec_scores(rows):
    """The run with distinct scores in trec_eval's order (score, then doc id, descending)."""
    out = []
    for q in dict.fromkeys(q for q, _, _ in rows):
        mine = sorted([r for r in rows if r[0] == q], key=lambda r: r[1], reverse=True)
        mine = sorted(mine, key=lambda r: r[2], reverse=True)
        out += [(q, d, float(len(mine) - i)) for i, (_, d, _) in enumerate(mine)]
    return out


def ours(qrels, rows, names):
    j, r = frames(qrels, rows)
    # ir_measures computes trec_eval's measures with pytrec_eval (trec_eval 9.0.8): IPrec rounds as 9.0.8.
    return cat.compute(j, r, names, compat="9.0.8").set_index("query_id")


def check(qrels, rows, names, oracle_names=None):
    """Every per-query value of ``names`` equals ir_measures' value of ``oracle_names``."""
    oracle_names = oracle_names or names
    got = ours(qrels, rows, names)
    want = ir_measures.iter_calc(
        [ir_measures.parse_measure(n) for n in oracle_names],
        [ir_measures.Qrel(q, d, g) for q, d, g in qrels],
        [ir_measures.ScoredDoc(q, d, s) for q, d, s in trec_scores(rows)],
    )
    column = {str(ir_measures.parse_measure(o)): cat.parse_measure(n)[0].name for n, o in zip(names, oracle_names)}
    compared = 0
    for m in want:
        if m.query_id not in got.index:  # labelled, unanswered: ir_measures says 0, trec_eval skips
            assert m.value == 0.0
            continue
        assert got.loc[m.query_id, column[str(m.measure)]] == pytest.approx(m.value, abs=1e-9), (
            str(m.measure),
            m.query_id,
        )
        compared += 1
    assert compared == len(got) * len(names), "ir_measures and the catalogue score other queries"


# Numeric query ids: gdeval reads only those.
EDGE_QRELS = [
    ("1", "a", 1),
    ("1", "b", 0),
    ("1", "c", 2),
    ("1", "d", 1),  # ties
    ("2", "a", 3),
    ("2", "b", 2),
    ("2", "c", 1),
    ("2", "d", 0),
    ("2", "e", 4),
    ("2", "z", 3),
    ("3", "a", -1),
    ("3", "b", 1),
    ("3", "c", 0),
    ("3", "e", 2),  # negative grades
    ("4", "a", 0),
    ("4", "b", 0),  # no relevant
    ("6", "a", 1),
    ("6", "b", 1),
    ("6", "c", 1),  # one retrieved
    ("7", "a", 1),  # never retrieved
] + [("5", f"m{i}", 1 + i % 3) for i in range(25)]  # more relevant than k
EDGE_RUN = (
    [
        ("1", "a", 1.0),
        ("1", "b", 1.0),
        ("1", "c", 1.0),
        ("1", "x", 2.0),
        ("1", "d", 0.5),
        ("1", "y", 0.5),
        ("2", "d", 9),
        ("2", "c", 8),
        ("2", "q", 7),
        ("2", "a", 6),
        ("2", "b", 5),
        ("2", "w", 4),
        ("2", "e", 3),
        ("3", "a", 5),
        ("3", "x", 4),
        ("3", "d", 3),
        ("3", "b", 2),
        ("3", "c", 1),
        ("3", "e", 0.5),
        ("4", "a", 2),
        ("4", "x", 1),
        ("6", "b", 1.0),
        ("8", "a", 1.0),  # a run query without labels: not evaluated
    ]
    + [("5", f"m{i}", 100 - i) for i in range(0, 40, 3)]
    + [("5", f"u{i}", 50 - i) for i in range(5)]
)


def generated(seed, max_grade=3, n_q=20):
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(n_q):
        pool = [f"d{i}" for i in rng.choice(150, size=80, replace=False)]
        qrels += [(str(q), d, int(rng.integers(-1, max_grade + 1))) for d in pool[: int(rng.integers(1, 50))]]
        if q % 6 == 5:
            continue  # labelled, never retrieved
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 70))]
        rows += [(str(q), d, float(s)) for d, s in zip(docs, np.round(rng.random(len(docs)) * 5, 1))]
    return qrels, rows


CWL = [
    "RBP(rel=1,p=0.8)",
    "RBP(rel=2,p=0.5)",
    "RBP(rel=1,p=0.95)",
    "SDCG(max_rel=4)@5",
    "SDCG(max_rel=3)@10",
    "SDCG(min_rel=1,max_rel=3)@20",
    "INST(max_rel=4)",
    "INST(T=3.0,max_rel=3)",
    "NERR8(max_rel=4)@5",
    "NERR8(max_rel=3)@20",
    "NERR9(max_rel=4)@10",
    "NERR10(max_rel=4)",
    "NERR10(p=0.7,max_rel=3)",
    "NERR11(max_rel=4)",
    "NERR11(T=2.0,max_rel=3)",
]
COMPAT = ["Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)"]


def test_cwl_eval_measures_match_on_edge_cases():
    check(EDGE_QRELS, EDGE_RUN, CWL)


@pytest.mark.parametrize("seed", range(3))
def test_cwl_eval_measures_match_on_generated_data(seed):
    check(*generated(seed), CWL)


def test_rbp_without_rel_is_graded_and_with_rel_binary():
    # ir_measures' RBP(p=0.8) without rel is graded too (its trectools provider, not installed
    # here): the graded one is checked against ranx (test_catalogue_ranx.py).
    qrels, rows = [("1", "a", 3), ("1", "b", 1)], [("1", "a", 2.0), ("1", "b", 1.0)]
    got = ours(qrels, rows, ["RBP(p=0.5)", "RBP(rel=1,p=0.5)"]).iloc[0]
    assert got["RBP(p=0.5)"] == pytest.approx(0.5 * (3 + 0.5 * 1), abs=1e-15)
    assert got["RBP(rel=1,p=0.5)"] == pytest.approx(0.5 * (1 + 0.5), abs=1e-15)


def test_rbp_residual_is_cwl_evals_best_case_bound():
    from cwl.cwl_eval import RankingMaker
    from cwl.ruler.cwl_ruler import RBPCWLMetric
    from ir_measures.providers.cwl_eval import IrmQrelHandler

    for qrels, rows in [(EDGE_QRELS, EDGE_RUN), generated(7)]:
        got = ours(qrels, rows, ["RBP_residual(p=0.8)", "RBP(rel=1,p=0.8)"])
        handler = IrmQrelHandler(1, None, None)
        for q, d, g in qrels:
            handler.put_value(q, d, max(g, 0))
        for q in got.index:
            maker = RankingMaker(
                q, handler, min_gain=0.0, max_gain=1.0, cost_dict=None, max_cost=1.0, min_cost=1.0, max_n=1000
            )
            for _, d, _ in sorted(((r for r in trec_scores(rows) if r[0] == q)), key=lambda r: -r[2]):
                maker.add(d, "_")
            metric = RBPCWLMetric(0.8)
            metric.residuals = True
            value = metric.measure(maker.get_ranking())
            assert got.loc[q, "RBP(rel=1,p=0.8)"] == pytest.approx(value, abs=1e-9)
            assert got.loc[q, "RBP_residual(p=0.8)"] == pytest.approx(metric.residual_expected_utility, abs=1e-9)


def test_without_max_rel_the_top_grade_of_the_judgments_is_the_scale():
    names = ["INST", "SDCG@5", "NERR10(p=0.7)"]
    check(EDGE_QRELS, EDGE_RUN, names, ["INST(max_rel=4)", "SDCG(max_rel=4)@5", "NERR10(p=0.7,max_rel=4)"])


def test_rbp_is_moffat_and_zobels_where_cwl_eval_renormalizes_its_1000_ranks():
    qrels, rows = [("1", "a", 1)], [("1", "a", 1.0)]
    got = ours(qrels, rows, ["RBP(p=0.99)"]).iloc[0, -1]
    assert got == pytest.approx(0.01, abs=1e-15)  # (1 - p) p**0
    cwl = next(
        iter(
            ir_measures.iter_calc(
                [ir_measures.parse_measure("RBP(rel=1,p=0.99)")],
                [ir_measures.Qrel(*r) for r in qrels],
                [ir_measures.ScoredDoc(*r) for r in rows],
            )
        )
    ).value
    assert cwl == pytest.approx(0.01 / (1 - 0.99**1000), abs=1e-15)


def test_compat_matches_on_edge_cases():
    check(EDGE_QRELS, EDGE_RUN, COMPAT)


@pytest.mark.parametrize("seed", range(3))
def test_compat_matches_on_generated_data(seed):
    check(*generated(seed), COMPAT)


def gdeval(qrels, rows, k, tmp_path):
    """gdeval.pl as ir_measures ships it, printing 17 significant digits instead of 5."""
    import pkgutil

    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl").decode()
    assert script.count("%.5f,%.5f") == 1
    (tmp_path / "gdeval.pl").write_text(script.replace("%.5f,%.5f", "%.17g,%.17g"))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 1 {s!r} run\n" for q, d, s in rows))
    out = subprocess.check_output(
        ["perl", str(tmp_path / "gdeval.pl"), str(tmp_path / "qrels"), str(tmp_path / "run"), str(k)], text=True
    )
    table = {}
    for line in out.splitlines()[1:]:
        _, q, ndcg, err = line.split(",")
        table[q] = (float(ndcg), float(err))
    return table


@pytest.mark.parametrize("k", [1, 3, 10, 20])
@pytest.mark.parametrize("data", ["edge", 0, 1, 2])
def test_err_and_exp_ndcg_match_gdeval(k, data, tmp_path):
    qrels, rows = (EDGE_QRELS, EDGE_RUN) if data == "edge" else generated(data, max_grade=4)
    want = gdeval(qrels, rows, k, tmp_path)  # ties in the run as given: gdeval orders as trec_eval
    got = ours(qrels, rows, [f"ERR@{k}", f"nDCG(dcg='exp-log2')@{k}"])
    assert want, "gdeval scored nothing"
    for q, (ndcg, err) in want.items():
        assert got.loc[q, f"ERR@{k}"] == pytest.approx(err, abs=1e-9), q
        assert got.loc[q, f"ndcg_exp_cut_{k}"] == pytest.approx(ndcg, abs=1e-9), q
    # gdeval leaves out a query without a relevant label; the catalogue scores it 0.
    for q in set(got.index) - set(want):
        assert got.loc[q, f"ERR@{k}"] == 0.0 and got.loc[q, f"ndcg_exp_cut_{k}"] == 0.0


def test_err_agrees_with_ir_measures_gdeval_provider_at_its_5_decimals():
    check_at = ours(EDGE_QRELS, EDGE_RUN, ["ERR@10"])
    want = ir_measures.iter_calc(
        [ir_measures.ERR @ 10],
        [ir_measures.Qrel(*r) for r in EDGE_QRELS],
        [ir_measures.ScoredDoc(*r) for r in EDGE_RUN],
    )
    seen = 0
    for m in want:
        if m.query_id not in check_at.index:
            continue
        assert check_at.loc[m.query_id, "ERR@10"] == pytest.approx(m.value, abs=5e-6)
        seen += 1
    assert seen >= 5


def test_ties_follow_trec_eval_not_the_providers():
    # b and a tie; trec_eval's order is b, a. cwl_eval keeps the file order (a, b).
    qrels, rows = [("1", "a", 1)], [("1", "a", 1.0), ("1", "b", 1.0)]
    assert ours(qrels, rows, ["RBP(p=0.5)"]).iloc[0, -1] == pytest.approx(0.25)
    theirs = next(
        iter(
            ir_measures.iter_calc(
                [ir_measures.parse_measure("RBP(rel=1,p=0.5)")],
                [ir_measures.Qrel(*r) for r in qrels],
                [ir_measures.ScoredDoc(*r) for r in rows],
            )
        )
    ).value
    assert theirs == pytest.approx(0.5)


def test_a_repeated_doc_counts_once():
    qrels = [("1", "a", 2), ("1", "b", 1)]
    twice = ours(qrels, [("1", "a", 3.0), ("1", "x", 2.0), ("1", "a", 1.0), ("1", "b", 0.5)], CWL + COMPAT + ["ERR@10"])
    once = ours(qrels, [("1", "a", 3.0), ("1", "x", 2.0), ("1", "b", 0.5)], CWL + COMPAT + ["ERR@10"])
    pd.testing.assert_frame_equal(twice, once)


@pytest.mark.parametrize("seed", range(3))
def test_rr_with_a_cutoff_matches_ir_measures(seed):
    # ir_measures' RR@k: 1 / rank of the first relevant document within the top k, else 0.
    qrels, rows = generated(seed)
    names = ["RR@1", "RR@3", "RR@10", "RR(rel=2)@5", "RR(rel=3)@20"]
    check(qrels, rows, names)


def test_rr_with_a_cutoff_on_edge_cases():
    check(EDGE_QRELS, EDGE_RUN, ["RR@1", "RR@2", "RR@5", "RR(rel=2)@3"])


def test_new_names_parse_and_bad_ones_say_why():
    assert [m.name for m in cat.parse_measure("RBP")] == ["RBP(p=0.8)"]
    assert [m.name for m in cat.parse_measure("RBP(rel=1,p=0.8)")] == ["RBP(rel=1,p=0.8)"]
    assert [m.name for m in cat.parse_measure("INST(max_rel=3)")] == ["INST(T=1,max_rel=3)"]
    assert [m.name for m in cat.parse_measure("nDCG(dcg='exp-log2')@5")] == ["ndcg_exp_cut_5"]
    assert [m.name for m in cat.parse_measure("ERR")] == ["ERR@10"]
    assert [m.name for m in cat.parse_measure("SDCG")] == ["SDCG@10"]
    for bad, why in [
        ("SDCG(T=1)@10", "max_rel, min_rel"),
        ("RBP(p=1)", "below 1"),
        ("Compat@5", "p= and normalize="),
        ("NERR10(max_rel=3)@5", "takes no cutoff"),
    ]:
        with pytest.raises(ValueError, match=why):
            cat.parse_measure(bad)
