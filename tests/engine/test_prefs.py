"""trec_eval's preference measures (``prefs_*``): hand-computed cases, a line-by-line port of
trec_eval's C code on random preferences (:mod:`tests.engine.prefs_oracle`), trec_eval 10.0's
own test outputs when ``RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR`` names its ``test/`` folder, and the
refusals."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from retrieval_eval.engine.measures import compute, measures, parse_measure, summarize
from retrieval_eval.engine.measures.prefs import NAMES, evaluate_prefs
from tests.engine.prefs_oracle import c_prefs

TEST_DIR = os.environ.get("RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR")


def prefs_frame(lines):
    q, jg, jsg, doc, level = zip(*lines)
    return pd.DataFrame({"query_id": q, "jg": jg, "jsg": jsg, "doc_id": doc, "rel_level": np.asarray(level, float)})


def run_frame(rows):
    q, doc, score = zip(*rows)
    frame = pd.DataFrame({"query_id": q, "doc_id": doc, "score": np.asarray(score, float)})
    frame["rank"] = frame.groupby("query_id").cumcount() + 1
    return frame


def values(lines, rows, **kw):
    got = evaluate_prefs(prefs_frame(lines), run_frame(rows), **kw)
    return got.set_index("query_id").drop(columns="system")


def test_one_complete_group_matches_the_hand_count():
    # get_prefs.c's example: d4 (6) > d1 (3) > d2, d6 (2) > d3, d5 (0): 13 preferences.
    levels = {"d1": 3, "d2": 2, "d3": 0, "d4": 6, "d5": 0, "d6": 2}
    lines = [("q", "u", "s", d, lv) for d, lv in levels.items()]
    # ranking d4, d3, d1, x (unjudged), d2; d5 and d6 not retrieved
    rows = [("q", "d4", 5), ("q", "d3", 4), ("q", "d1", 3), ("q", "x", 2), ("q", "d2", 1)]
    got = values(lines, rows).loc["q"]
    # both retrieved: d4>d1, d4>d2, d4>d3, d1>d2 fulfilled; d1>d3, d2>d3 not (6)
    # one retrieved: d4>d6, d4>d5, d1>d6, d1>d5, d2>d5 fulfilled; d6>d3 not (6); d6>d5 neither
    want = {
        "prefs_num_prefs_poss": 13,
        "prefs_num_prefs_ful": 9,
        "prefs_num_prefs_ful_ret": 4,
        "prefs_simp": 9 / 13,
        "prefs_pair": 9 / 13,
        "prefs_avgjg": 9 / 13,
        "prefs_simp_ret": 4 / 6,
        "prefs_pair_ret": 4 / 6,
        "prefs_avgjg_ret": 4 / 6,
        "prefs_simp_imp": 9 / 12,
        "prefs_pair_imp": 9 / 12,
        "prefs_avgjg_imp": 9 / 12,
        # R 4 >= N 2: + R_ret (R - N) = 3 * 2 fulfilled, + R (R - N) = 4 * 2 possible
        "prefs_avgjg_Rnonrel": (9 + 6) / (13 + 8),
        # R_ret 3 >= N_ret 1: (4 + 3 * 2) / (6 + 4 * 2), trec_eval's num_rel in the possible
        "prefs_avgjg_Rnonrel_ret": (4 + 6) / (6 + 8),
    }
    assert got.to_dict() == pytest.approx(want, abs=1e-15)


def test_a_partial_group_is_closed_transitively():
    # get_prefs.c's example: sub-group 1 ranks d1 > d2 > d3, sub-group 2 d2 > d4: d1 > d4 follows.
    lines = [
        ("q", "u", "1", "d1", 3),
        ("q", "u", "1", "d2", 2),
        ("q", "u", "1", "d3", 1),
        ("q", "u", "2", "d2", 5),
        ("q", "u", "2", "d4", 4),
    ]
    rows = [("q", "d4", 3), ("q", "d1", 2), ("q", "d2", 1)]
    got = values(lines, rows).loc["q"]
    # d1>d2 fulfilled (both retrieved); d1>d3, d2>d3 implied; d2>d4, d1>d4 failed
    assert got["prefs_num_prefs_poss"] == 5 and got["prefs_num_prefs_ful"] == 3
    assert got["prefs_num_prefs_ful_ret"] == 1
    assert got["prefs_simp_ret"] == pytest.approx(1 / 3) and got["prefs_simp_imp"] == pytest.approx(3 / 5)
    # no level 0: R 4 >= N 0, (3 + 3 * 4) / (5 + 4 * 4); _ret: (1 + 3 * 3) / (3 + 4 * 3)
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(15 / 21)
    assert got["prefs_avgjg_Rnonrel_ret"] == pytest.approx(10 / 15)


def test_groups_that_disagree_separate_simp_avgjg_and_pair():
    # user 1: d1 > d2 > d3 (all fulfilled); user 2: d2 > d1, d3 (one of two fulfilled)
    lines = [
        ("q", "u1", "0", "d1", 2),
        ("q", "u1", "0", "d2", 1),
        ("q", "u1", "0", "d3", 0),
        ("q", "u2", "0", "d2", 1),
        ("q", "u2", "0", "d1", 0),
        ("q", "u2", "0", "d3", 0),
    ]
    rows = [("q", "d1", 3), ("q", "d2", 2), ("q", "d3", 1)]
    got = values(lines, rows).loc["q"]
    assert got["prefs_simp"] == pytest.approx(4 / 5)
    assert got["prefs_avgjg"] == pytest.approx((1 + 1 / 2) / 2)
    # pairs: {d1, d2} 1 of 2, {d1, d3} 1 of 1, {d2, d3} 2 of 2
    assert got["prefs_pair"] == pytest.approx((1 / 2 + 1 + 1) / 3)


def test_ties_in_score_rank_doc_ids_ascending_as_the_prefs_code_does():
    lines = [("q", "u", "0", "a", 1), ("q", "u", "0", "b", 0)]
    got = values(lines, [("q", "b", 1.0), ("q", "a", 1.0)]).loc["q"]
    assert got["prefs_simp_ret"] == 1.0  # a before b (the qrels code would put b first)


def test_max_ret_cuts_the_ranking():
    lines = [("q", "u", "0", "a", 1), ("q", "u", "0", "b", 0)]
    rows = [("q", "b", 2.0), ("q", "a", 1.0)]
    assert values(lines, rows).loc["q", "prefs_simp_ret"] == 0.0
    cut = values(lines, rows, max_ret=1).loc["q"]
    assert cut["prefs_num_prefs_ful_ret"] == 0 and cut["prefs_simp_imp"] == 0.0  # b retrieved alone


def test_queries_without_results_are_left_out_unless_complete():
    lines = [("q1", "u", "0", "a", 1), ("q1", "u", "0", "b", 0), ("q2", "u", "0", "a", 1), ("q2", "u", "0", "b", 0)]
    rows = [("q1", "a", 1.0)]
    assert list(values(lines, rows).index) == ["q1"]
    full = values(lines, rows, complete=True)
    assert list(full.index) == ["q1", "q2"]
    assert full.loc["q2", "prefs_num_prefs_poss"] == 1 and full.loc["q2", "prefs_simp"] == 0.0


def random_case(seed):
    rng = np.random.default_rng(seed)
    lines, rows = [], []
    for q in range(6):
        qid = f"q{q}"
        docs = [f"d{i:02d}" for i in rng.choice(30, size=int(rng.integers(3, 14)), replace=False)]
        for g in range(int(rng.integers(1, 4))):
            truth = {d: int(rng.choice([0, 0, 0, 1, 2, 3])) for d in docs}  # often R < N
            for s in range(int(rng.integers(1, 4))):
                part = rng.choice(docs, size=int(rng.integers(2, len(docs) + 1)), replace=False)
                for d in part:
                    lines.append((qid, f"u{g}", f"s{s}", str(d), float(truth[str(d)])))
            if rng.random() < 0.2:
                lines.append(lines[-1])  # a line twice: a complete group counts it twice
        retrieved = rng.choice(
            docs + [f"x{i}" for i in range(5)], size=int(rng.integers(0, len(docs) + 5)), replace=False
        )
        rows.extend((qid, str(d), float(rng.integers(0, 4))) for d in retrieved)  # ties
    return lines, rows


@pytest.mark.parametrize("seed", range(12))
def test_every_measure_equals_trec_evals_code_on_random_preferences(seed):
    lines, rows = random_case(seed)
    want = c_prefs(lines, rows)
    got = values(lines, rows) if rows else pd.DataFrame()
    assert sorted(got.index) == sorted(want)
    for q, vals in want.items():
        for name in NAMES:
            assert got.loc[q, name] == pytest.approx(vals[name], abs=1e-12), (q, name)


def test_max_ret_equals_trec_evals_code():
    lines, rows = random_case(3)
    want = c_prefs(lines, rows, max_ret=4)
    got = values(lines, rows, max_ret=4)
    for q, vals in want.items():
        assert got.loc[q, list(NAMES)].to_numpy() == pytest.approx([vals[n] for n in NAMES], abs=1e-12)


def test_the_catalogue_declares_them_and_refuses_them_on_qrels():
    assert [m.name for m in parse_measure("prefs_simp")] == ["prefs_simp"]
    table = measures().set_index("name")
    assert set(NAMES) <= set(table.index)
    assert table.loc["prefs_num_prefs_poss", "aggregate"] == "sum"
    from retrieval_eval.io.convert import as_judgments, as_run

    judgments = as_judgments(pd.DataFrame({"query_id": ["q"], "doc_uri": ["a"], "relevance": [1]}))
    run = as_run(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}))
    with pytest.raises(ValueError, match="prefs_simp is a preference measure.*evaluate_prefs"):
        compute(judgments, run, ["prefs_simp"])


def test_summary_sums_the_counts_and_averages_the_rest():
    lines, rows = random_case(5)
    got = evaluate_prefs(prefs_frame(lines), run_frame(rows))
    table = summarize(got).iloc[0]
    assert table["prefs_num_prefs_poss"] == got["prefs_num_prefs_poss"].sum()
    assert table["prefs_simp"] == pytest.approx(got["prefs_simp"].mean())


@pytest.mark.parametrize(
    "lines, match",
    [
        (
            [("q", "u", "1", "a", 2), ("q", "u", "1", "b", 1), ("q", "u", "2", "b", 2), ("q", "u", "2", "a", 1)],
            "inconsistent preferences",
        ),
        (
            [("q", "u", "1", "a", 2), ("q", "u", "1", "b", 0), ("q", "u", "2", "b", 1), ("q", "u", "2", "c", 0)],
            "both 0 and non-0",
        ),
        ([("q", "u", "1", "a", 2), ("q", "u", "1", "a", 1)], "two rel_levels"),
    ],
)
def test_inconsistent_preferences_are_refused(lines, match):
    with pytest.raises(ValueError, match=match):
        evaluate_prefs(prefs_frame(lines), run_frame([("q", "a", 1.0)]))


def test_bad_frames_and_measures_are_refused():
    good = prefs_frame([("q", "u", "0", "a", 1), ("q", "u", "0", "b", 0)])
    run = run_frame([("q", "a", 1.0), ("q", "a", 0.5)])
    with pytest.raises(ValueError, match="repeats doc a"):
        evaluate_prefs(good, run)
    with pytest.raises(ValueError, match="prefs_\\* measures only"):
        evaluate_prefs(good, run_frame([("q", "a", 1.0)]), measures=["map"])
    with pytest.raises(ValueError, match="missing|column"):
        evaluate_prefs(good.drop(columns="jsg"), run_frame([("q", "a", 1.0)]))
    with pytest.raises(ValueError, match="strings"):
        evaluate_prefs(good.assign(query_id=[1, 1]), run_frame([("q", "a", 1.0)]))
    with pytest.raises(ValueError, match="finite"):
        evaluate_prefs(good.assign(rel_level=[np.nan, 0.0]), run_frame([("q", "a", 1.0)]))


def test_the_input_frames_are_not_changed():
    lines, rows = random_case(2)
    p, r = prefs_frame(lines), run_frame(rows)
    p0, r0 = p.copy(), r.copy()
    evaluate_prefs(p, r)
    pd.testing.assert_frame_equal(p, p0)
    pd.testing.assert_frame_equal(r, r0)


def expected_values(path):
    out = {}
    for line in Path(path).read_text().splitlines():
        name, qid, value = line.split("\t")
        out[(name.strip(), qid)] = value
    return out


@pytest.mark.skipif(not TEST_DIR, reason="RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR names no copy of trec_eval 10.0's test/")
@pytest.mark.parametrize(
    "reader, judgments, run, expected",
    [
        ("read_prefs", "prefs.test", "prefs.results.test", "out.test.prefs"),
        ("read_qrels_prefs", "qrels.test", "results.test", "out.test.qrels_prefs"),
    ],
)
def test_trec_evals_own_outputs(reader, judgments, run, expected):
    from retrieval_eval.io import prefs as readers
    from retrieval_eval.io import read_trec_run

    folder = Path(TEST_DIR)
    got = evaluate_prefs(getattr(readers, reader)(folder / judgments), read_trec_run(folder / run))
    want = expected_values(folder / expected)
    checked = 0
    for row in got.itertuples(index=False):
        for name in NAMES:
            value = getattr(row, name)
            text = str(int(value)) if "_num_" in name else "%6.4f" % value
            assert text == want[(name, row.query_id)], (name, row.query_id)
            checked += 1
    assert checked == 14 * len({q for _, q in want if q != "all"})


def test_each_system_of_a_run_is_its_own_ranking():
    lines, rows = random_case(7)
    one = run_frame(rows)
    two = pd.concat([one.assign(system="A"), one.assign(system="B", score=-one["score"])], ignore_index=True)
    got = evaluate_prefs(prefs_frame(lines), two).set_index(["system", "query_id"])
    alone_a = evaluate_prefs(prefs_frame(lines), one).set_index("query_id").drop(columns="system")
    alone_b = evaluate_prefs(prefs_frame(lines), one.assign(score=-one["score"])).set_index("query_id")
    pd.testing.assert_frame_equal(got.loc["A"], alone_a)
    pd.testing.assert_frame_equal(got.loc["B"], alone_b.drop(columns="system"))


def test_blocks_of_rankings_give_the_same_values(monkeypatch):
    from retrieval_eval.engine.measures import prefs as module

    lines, rows = random_case(4)
    whole = values(lines, rows)
    monkeypatch.setattr(module, "PAIR_BLOCK", 1)  # every ranking a block of its own
    assert len(set(module.blocks(*_rows_of(lines, rows)).tolist())) > 1
    pd.testing.assert_frame_equal(values(lines, rows), whole)


def _rows_of(lines, rows):
    from retrieval_eval.engine.measures import prefs as module
    from retrieval_eval.io.convert import as_run

    p, r = module.check_prefs(prefs_frame(lines)), as_run(run_frame(rows))
    ranked = module.ranked_judged(p, r, None, doc_desc=False)
    rk = module.rankings(p["query_id"].to_numpy(dtype=object), ranked, ["run"], False)
    judged, njr = module._judged_docids(p, ranked, rk)
    return module._rows(p, judged, njr), len(rk), module.PAIR_BLOCK


def test_rnonrel_keeps_the_first_r_non_relevant_documents_with_trec_evals_arithmetic():
    # one relevant d1, three non-relevant; ranking d1, d2, d3 (d4 not retrieved): R 1 < N 3
    lines = [("q", "u", "0", "d1", 1), ("q", "u", "0", "d2", 0), ("q", "u", "0", "d3", 0), ("q", "u", "0", "d4", 0)]
    got = values(lines, [("q", "d1", 3), ("q", "d2", 2), ("q", "d3", 1)]).loc["q"]
    # kept: d2, the first non-relevant; trec_eval then counts every line of the group (the
    # non-relevant ones too) against it: d1 > d2 fulfilled, d2, d3, d4 not: 1 / 4
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 4)
    # retrieved only: d1, d2, d3 against d2: 1 / 3
    assert got["prefs_avgjg_Rnonrel_ret"] == pytest.approx(1 / 3)
    assert got["prefs_simp"] == 1.0  # d1 > d2, d3 fulfilled, d1 > d4 implied: fulfilled too
