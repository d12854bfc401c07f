"""trec_eval's judgment-group measures (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``):
hand-computed cases, pytrec_eval's ``map`` / ``P`` / ``Rprec_mult`` per group averaged over the
groups (trec_eval's own definition), trec_eval 10.0's ``out.test.qrels_jg`` when
``RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR`` names its ``test/`` folder, and the refusals."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from retrieval_eval.engine.measures import compute, parse_measure
from retrieval_eval.engine.measures.avgjg import evaluate_jg

TEST_DIR = os.environ.get("RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR")


def jg_frame(lines):
    q, jg, doc, rel = zip(*lines)
    return pd.DataFrame({"query_id": q, "jg": jg, "doc_id": doc, "relevance": np.asarray(rel, np.int64)})


def run_frame(rows):
    q, doc, score = zip(*rows)
    frame = pd.DataFrame({"query_id": q, "doc_id": doc, "score": np.asarray(score, float)})
    frame["rank"] = frame.groupby("query_id").cumcount() + 1
    return frame


LINES = [
    ("q", "1", "a", 1),
    ("q", "1", "c", 2),
    ("q", "1", "b", 0),
    ("q", "2", "b", 1),
    ("q", "2", "a", 0),
    ("r", "1", "a", 0),
]
ROWS = [("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 1.0), ("r", "a", 1.0)]


def test_two_groups_average_their_values():
    got = evaluate_jg(jg_frame(LINES), run_frame(ROWS), ["map_avgjg", "P_avgjg.1,5", "Rprec_mult_avgjg.0.2,1"])
    q = got.set_index("query_id").loc["q"]
    # group 1: relevant a (rank 1), c (rank 3), R 2; group 2: relevant b (rank 2), R 1
    assert q["map_avgjg"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 2) / 2)
    assert q["P_avgjg_1"] == pytest.approx((1 + 0) / 2)
    assert q["P_avgjg_5"] == pytest.approx((2 / 5 + 1 / 5) / 2)
    # cutoffs (long)(x R + 0.9): x 0.2 -> 1 and 1; x 1 -> 2 and 1
    assert q["Rprec_mult_avgjg_0.20"] == pytest.approx((1 + 0) / 2)
    assert q["Rprec_mult_avgjg_1.00"] == pytest.approx((1 / 2 + 0) / 2)
    # a query whose one group has no relevant document: 0 everywhere (cutoff (long)0.9 = 0)
    assert (got.set_index("query_id").drop(columns="system").loc["r"].to_numpy(dtype=float) == 0).all()


def test_level_and_max_ret_are_trec_evals_l_and_M():
    got = evaluate_jg(jg_frame(LINES), run_frame(ROWS), ["map_avgjg"], level=2).set_index("query_id")
    assert got.loc["q", "map_avgjg"] == pytest.approx((1 / 3 + 0) / 2)  # only c (grade 2) of group 1
    cut = evaluate_jg(jg_frame(LINES), run_frame(ROWS), ["P_avgjg.5"], max_ret=1).set_index("query_id")
    assert cut.loc["q", "P_avgjg_5"] == pytest.approx((1 / 5 + 0) / 2)


def test_names_and_defaults():
    got = evaluate_jg(jg_frame(LINES), run_frame(ROWS))
    assert list(got.columns[:3]) == ["system", "query_id", "map_avgjg"]
    assert "P_avgjg_1000" in got.columns and "Rprec_mult_avgjg_2.00" in got.columns
    assert [m.name for m in parse_measure("P_avgjg.5,10")] == ["P_avgjg_5", "P_avgjg_10"]
    same = evaluate_jg(jg_frame(LINES), run_frame(ROWS), ["P_avgjg_5", "Rprec_mult_avgjg_0.20"])
    assert list(same.columns[2:]) == ["P_avgjg_5", "Rprec_mult_avgjg_0.20"]


def random_case(seed):
    rng = np.random.default_rng(seed)
    lines, rows = [], []
    for q in range(8):
        qid = f"q{q}"
        docs = [f"d{i:02d}" for i in range(40)]
        for g in range(int(rng.integers(1, 4))):
            for d in rng.choice(docs, size=int(rng.integers(1, 30)), replace=False):
                lines.append((qid, f"j{g}", str(d), int(rng.choice([0, 0, 1, 2]))))
        for d in rng.choice(docs, size=int(rng.integers(1, 40)), replace=False):
            rows.append((qid, str(d), float(rng.integers(0, 6))))  # ties: doc id descending
    return lines, rows


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2])
def test_each_group_is_pytrec_evals_measure_averaged(seed, level):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    lines, rows = random_case(seed)
    got = evaluate_jg(jg_frame(lines), run_frame(rows), level=level).set_index("query_id")
    run: dict = {}
    for q, d, s in rows:
        run.setdefault(q, {})[d] = s
    groups: dict = {}
    for q, g, d, r in lines:
        groups.setdefault(q, {}).setdefault(g, {})[d] = r
    for q, by_group in groups.items():
        sums: dict = {}
        for labels in by_group.values():
            ev = pytrec_eval.RelevanceEvaluator({q: labels}, {"map", "P", "Rprec_mult"}, relevance_level=level)
            for name, value in ev.evaluate({q: run[q]})[q].items():
                sums[name] = sums.get(name, 0.0) + value
        for name, total in sums.items():
            ours = {"map": "map_avgjg"}.get(name) or name.replace("P_", "P_avgjg_").replace(
                "Rprec_mult_", "Rprec_mult_avgjg_"
            )
            assert got.loc[q, ours] == pytest.approx(total / len(by_group), abs=1e-12), (q, ours)


def test_refusals():
    with pytest.raises(ValueError, match="avgjg measures only"):
        evaluate_jg(jg_frame(LINES), run_frame(ROWS), ["map"])
    with pytest.raises(ValueError, match="twice in judgment group"):
        evaluate_jg(jg_frame([*LINES, ("q", "1", "a", 0)]), run_frame(ROWS))
    with pytest.raises(ValueError, match="level"):
        evaluate_jg(jg_frame(LINES), run_frame(ROWS), level=0)
    with pytest.raises(ValueError, match="integer"):
        evaluate_jg(jg_frame(LINES).assign(relevance=0.5), run_frame(ROWS))
    from retrieval_eval.io.convert import as_judgments, as_run

    judgments = as_judgments(pd.DataFrame({"query_id": ["q"], "doc_uri": ["a"], "relevance": [1]}))
    with pytest.raises(ValueError, match="map_avgjg averages over judgment groups.*evaluate_jg"):
        compute(judgments, as_run(run_frame(ROWS)), ["map_avgjg"])


@pytest.mark.skipif(not TEST_DIR, reason="RETRIEVAL_EVAL_TREC_EVAL_TEST_DIR names no copy of trec_eval 10.0's test/")
def test_trec_evals_own_output():
    from retrieval_eval.io import read_trec_run
    from retrieval_eval.io.prefs import read_qrels_jg

    folder = Path(TEST_DIR)
    got = evaluate_jg(read_qrels_jg(folder / "qrels.123"), read_trec_run(folder / "results.test"))
    want = {}
    for line in (folder / "out.test.qrels_jg").read_text().splitlines():
        name, qid, value = line.split("\t")
        want[(name.strip(), qid)] = value
    names = [c for c in got.columns if c not in ("system", "query_id")]
    for row in got.itertuples(index=False):
        for i, name in enumerate(names):
            assert "%6.4f" % row[2 + i] == want[(name, row.query_id)], (name, row.query_id)
    assert len(got) * len(names) == sum(1 for _, q in want if q != "all")


def test_each_system_of_a_run_is_its_own_ranking():
    lines, rows = random_case(1)
    one = run_frame(rows)
    two = pd.concat([one.assign(system="A"), one.assign(system="B", score=-one["score"])], ignore_index=True)
    got = evaluate_jg(jg_frame(lines), two).set_index(["system", "query_id"])
    alone_b = evaluate_jg(jg_frame(lines), one.assign(score=-one["score"])).set_index("query_id")
    pd.testing.assert_frame_equal(got.loc["B"], alone_b.drop(columns="system"))
    assert not got.loc["A"].equals(got.loc["B"])
