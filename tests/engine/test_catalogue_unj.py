"""trec_eval 10's ``unj`` (m_unjudged.c): against ir_measures' Judged@k where the two meet, and
against hand-computed values where they do not (negative grades, k past the ranking, empty
rankings, duplicates). trec_eval 9.0.8, which pytrec_eval wraps, has no unj."""

from __future__ import annotations

import importlib
import io

import numpy as np
import pytest

from retrieval_eval.cli.app import main
from retrieval_eval.cli.trec_eval import NICKNAMES, VERSION_NICKNAMES

ir_measures = pytest.importorskip("ir_measures")
trec = importlib.import_module("tests.engine.test_measures_trec")
cat = importlib.import_module("retrieval_eval.engine.measures")

CUTS = (1, 2, 5, 10, 20, 50)


def generated(seed):
    """Qrels with grades 0..2 (no negative ones) and rankings with distinct scores: ir_measures
    breaks score ties by doc id ascending, trec_eval descending."""
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for q in range(25):
        pool = [f"d{i}" for i in rng.choice(100, size=60, replace=False)]
        qrels += [(f"q{q}", d, int(rng.integers(0, 3))) for d in pool[: int(rng.integers(1, 40))]]
        docs = list(rng.permutation(pool))[: int(rng.integers(1, 45))]
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, rng.permutation(len(docs)))]
    return qrels, rows


@pytest.mark.parametrize("seed", range(4))
def test_unj_is_the_complement_of_ir_measures_judged_over_k(seed):
    # Judged@k divides by min(k, retrieved), unj_k by k: unj_k = min(k, ret) (1 - Judged@k) / k.
    qrels, rows = generated(seed)
    names = [f"unj.{','.join(map(str, CUTS))}"]
    ours = cat.compute(trec.judgments(qrels), trec.run(rows), names).set_index("query_id")
    ret = {}
    for q, _, _ in rows:
        ret[q] = ret.get(q, 0) + 1
    want = ir_measures.iter_calc(
        [ir_measures.Judged @ k for k in CUTS],
        [ir_measures.Qrel(q, d, g) for q, d, g in qrels],
        [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows],
    )
    compared = 0
    for m in want:
        k = m.measure["cutoff"]
        expected = min(k, ret[m.query_id]) * (1.0 - m.value) / k
        assert ours.loc[m.query_id, f"unj_{k}"] == pytest.approx(expected, abs=1e-9), (m.query_id, k)
        compared += 1
    assert compared == 25 * len(CUTS)
    assert ours[[f"unj_{k}" for k in CUTS]].to_numpy().max() > 0  # the data has unjudged docs


# a judged 1, b and d negative (in the pool, unjudged), c judged 0; x and y have no label.
HAND_QRELS = [
    ("q1", "a", 1),
    ("q1", "b", -1),
    ("q1", "c", 0),
    ("q1", "d", -2),
    ("q2", "a", 1),
    ("q3", "a", 1),
    ("q4", "a", 1),
]
HAND_RUN = [
    ("q1", "a", 9),
    ("q1", "b", 8),
    ("q1", "x", 7),
    ("q1", "c", 6),
    ("q1", "d", 5),
    ("q1", "y", 4),
    ("q2", "x", 1),  # one unlabelled document
    ("q4", "x", 3),
    ("q4", "x", 2),
    ("q4", "a", 1),
]  # x repeated: counts once
# q3 is labelled and unanswered: an empty ranking under complete (-c).


def hand(names, **kw):
    out = cat.compute(trec.judgments(HAND_QRELS), trec.run(HAND_RUN), names, **kw)
    return out.set_index("query_id")


def test_unj_counts_unlabelled_and_negatively_graded_documents():
    got = hand(["unj.1,2,5"])
    # q1's ranking: a (1), b (-1), x (none), c (0), d (-2), y (none).
    assert got.loc["q1", "unj_1"] == 0.0  # a is judged
    assert got.loc["q1", "unj_2"] == 1 / 2  # b: negative grade
    assert got.loc["q1", "unj_5"] == 3 / 5  # b, x, d (c is judged 0)


def test_unj_divides_by_k_past_the_end_of_the_ranking():
    got = hand(["unj.1,5,10,20"])
    assert got.loc["q1", "unj_10"] == 4 / 10  # 6 retrieved, 4 unjudged
    assert got.loc["q1", "unj_20"] == 4 / 20
    assert got.loc["q2", "unj_1"] == 1.0
    assert got.loc["q2", "unj_5"] == 1 / 5  # not 1: the rest counts as judged non-relevant


def test_unj_of_an_empty_ranking_is_zero_and_an_unanswered_query_is_not_evaluated():
    assert "q3" not in hand(["unj.5"]).index
    got = hand(["unj.5"], complete=True)
    assert got.loc["q3", "unj_5"] == 0.0


def test_a_repeated_document_counts_once_and_the_ones_below_move_up():
    got = hand(["unj.1,2,5"])
    assert got.loc["q4", "unj_1"] == 1.0  # x
    assert got.loc["q4", "unj_2"] == 1 / 2  # x, a (the second x dropped)
    assert got.loc["q4", "unj_5"] == 1 / 5


def test_unj_ignores_the_relevance_level_and_reads_only_the_top_max_ret():
    assert hand(["unj"], level=2).equals(hand(["unj"]))
    assert hand(["unj.5"], max_ret=1).loc["q1", "unj_5"] == 0.0  # only a is read


def test_unj_names_and_defaults_are_trec_evals():
    assert [m.name for m in cat.parse_measure("unj")] == ["unj_5", "unj_10", "unj_20"]
    assert [m.name for m in cat.parse_measure("unj.3,7")] == ["unj_3", "unj_7"]
    assert cat.parse_measure("unj_7") == cat.parse_measure("unj.7")
    summary = cat.summarize(hand(["unj.5"], complete=True).reset_index())
    assert summary["unj_5"].iloc[0] == pytest.approx((3 / 5 + 1 / 5 + 0 + 1 / 5) / 4)
    with pytest.raises(ValueError):
        cat.parse_measure("unj.0")


def test_the_trec_eval_command_prints_unj_like_P_and_all_trec_has_it_since_10(tmp_path):
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    # The readers clamp a negative grade to 0 (their rule), so the file leaves b and d out.
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in HAND_QRELS if g >= 0))
    rp.write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(HAND_RUN) if q != "q4"))
    out, err = io.StringIO(), io.StringIO()
    code = main(["trec_eval", "-q", "-m", "unj.2,5", "-m", "P.5", str(qp), str(rp)], stdout=out, stderr=err)
    assert (code, err.getvalue()) == (0, "")
    # q1's top 5: a (1), b, x (no label), c (0), d (no label); q2's: x alone.
    assert out.getvalue().splitlines() == [
        f"{'P_5':<22}\tq1\t0.2000",
        f"{'unj_2':<22}\tq1\t0.5000",
        f"{'unj_5':<22}\tq1\t0.6000",
        f"{'P_5':<22}\tq2\t0.0000",
        f"{'unj_2':<22}\tq2\t0.5000",
        f"{'unj_5':<22}\tq2\t0.2000",
        f"{'P_5':<22}\tall\t0.1000",
        f"{'unj_2':<22}\tall\t0.5000",
        f"{'unj_5':<22}\tall\t0.4000",
    ]
    assert "unj" in NICKNAMES["all_trec"]  # trec_eval 10.0 added it
    assert "unj" not in VERSION_NICKNAMES["9.0.8"]["all_trec"]  # 9.0.8 had none
