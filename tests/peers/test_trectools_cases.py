"""trectools' own test cases that evaluate a (qrels, run, measure), ported: our value equals theirs.

Source: github.com/joaopalotti/trectools (BSD 3-Clause License, Copyright (c) 2022, Joao
Palotti, Harrisen Scells, and Guido Zuccon), commit 8a896def007e3d657eb29f820ee3de98e2f32691:
unittests/testtreceval.py with unittests/files/qrel1.txt and r4.run (quoted below, with
attribution, in our own layout). Their ``trec_eval=True`` is trec_eval's tie order, as ours;
their ``depth=1000`` reads the top 1000; their means are over the queries, to 4 decimals.

The cases on ``input.uic0301`` (3.5 MB, 100 topics) and ``robust03_cs_qrels.txt`` (2.7 MB) run
on a reduction of those two files, ``data/trectools_uic0301_robust03.json`` (derived from them,
same license and attribution): for each topic both files hold, the number of documents retrieved,
the number of relevant documents (grade >= 1) and the ranks (trec_eval's order; the scores are
distinct) at which relevant documents were retrieved. Reciprocal rank, AP, P@k and recall@k read
nothing else, so each topic is rebuilt as relevant docs ``r0 r1 ...`` and non-relevant fillers at
the other ranks, and every value is the one the full files give. ``input.uic0301_top30`` is the
first 30 rows of its 10 topics (checked when the reduction was made): the ranking cut at 30.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.peers.peer_helpers import mean, per_query

# qrel1.txt: (query, doc suffix, grade); doc ids are doc<query>_<suffix>
QREL1 = {
    "1": {f"doc1_{i}": g for i, g in enumerate([0, 0, 1, 0, 0, 0, 0, 2, 0, 0])},
    "2": {f"doc2_{i}": g for i, g in enumerate([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])},
    "3": {f"doc3_{i}": g for i, g in enumerate([0, 0, 0, 0, 0, 0, 0, 0, 0, 1])},
}
# r4.run: (query, doc, score)
R4 = {
    "1": {"doc1_1": 1, "doc1_2": 0.81, "doc1_3": 0.80},
    "2": {"doc2_1": 2, "doc2_3": 1, "doc2_2": 0.5},
    "3": {"doc3_1": 5, "doc3_2": 0.7, "doc3_3": 0.5},
}


@pytest.mark.parametrize(
    "method, name, want",
    [
        ("get_reciprocal_rank(depth=1000)", "recip_rank", 0.5000),
        ("get_map(depth=1000)", "map", 0.2685),
        ("get_precision(depth=1000)", "P_1000", 0.0010),
        ("get_recall(depth=1000)", "recall_1000", 0.3889),
    ],
)
def test_trectools_teval1(method, name, want):
    assert round(mean(QREL1, R4, name, complete=False), 4) == want, method


def test_the_cases_are_not_trivially_equal():
    # their four expected values differ, and the run ranks by score, not by file order
    swapped = {**R4, "2": {"doc2_1": 0.4, "doc2_3": 1, "doc2_2": 0.5}}
    assert round(mean(QREL1, swapped, "recip_rank", complete=False), 4) != 0.5


REDUCED = json.loads((Path(__file__).parent / "data" / "trectools_uic0301_robust03.json").read_text())
COMMON = ["303", "307", "310", "314", "320", "322", "325", "330", "336", "341"]


def rebuilt(depth: int | None = None, topics=None):
    """The reduced topics as (qrels, run) dicts; ``depth`` cuts each ranking (the top30 file)."""
    qrels, run = {}, {}
    for q, t in REDUCED.items():
        if topics is not None and q not in topics:
            continue
        qrels[q] = {f"r{i}": 1 for i in range(t["num_rel"])}
        n = t["n_ret"] if depth is None else min(depth, t["n_ret"])
        at = {r: f"r{i}" for i, r in enumerate(t["rel_ranks"])}
        run[q] = {at.get(r, f"n{r}"): float(n - r + 1) for r in range(1, n + 1)}
    return qrels, run


def test_the_reduction_is_whole():
    assert len(REDUCED) == 100 and sum(len(t["rel_ranks"]) for t in REDUCED.values()) == 3711
    assert all(t["n_ret"] <= 1000 and len(t["rel_ranks"]) <= t["num_rel"] for t in REDUCED.values())


#: trectools' method -> (our measure at a depth, trec_eval's -M)
MEASURE = {
    "get_reciprocal_rank": lambda k: ("recip_rank", k),
    "get_map": lambda k: ("map", k),
    "get_precision": lambda k: (f"P_{k}", None),
    "get_recall": lambda k: (f"recall_{k}", None),
}


def teval(method, depth, per_q=False, top30=False):
    name, max_ret = MEASURE[method](depth)
    qrels, run = rebuilt(30 if top30 else None, COMMON if top30 else None)
    got = per_query(qrels, run, name, complete=False, max_ret=max_ret)
    return got if per_q else float(got.mean())


@pytest.mark.parametrize(
    "method, depth, want",
    [
        ("get_reciprocal_rank", 1000, 0.6466),
        ("get_map", 1000, 0.2396),
        ("get_precision", 1000, 0.0371),
        *[
            ("get_recall", k, v)
            for k, v in {
                5: 0.0858,
                10: 0.1314,
                15: 0.1686,
                20: 0.1968,
                30: 0.2530,
                100: 0.4243,
                200: 0.5323,
                500: 0.6569,
                1000: 0.7518,
            }.items()
        ],
    ],
)
def test_trectools_teval2_means(method, depth, want):
    assert round(teval(method, depth), 4) == want


@pytest.mark.parametrize(
    "method, depth, topics, want",
    [
        ("get_reciprocal_rank", 1000, ["378", "650", "624"], [0.0017, 0.1429, 0.3333]),
        ("get_map", 1000, ["622", "609", "320"], [0.4926, 0.2808, 0.2335]),
        ("get_precision", 30, ["607", "433", "375"], [0.1333, 0.0333, 0.5333]),
        ("get_recall", 30, ["607", "433", "375", "303"], [0.3636, 0.0769, 0.2000, 0.1000]),
    ],
)
def test_trectools_teval2_per_query(method, depth, topics, want):
    got = teval(method, depth, per_q=True)
    assert [round(float(got[t]), 4) for t in topics] == want


@pytest.mark.parametrize(
    "method, depth2, depth3, equal",
    [
        ("get_reciprocal_rank", 30, 1000, True),
        ("get_map", 30, 1000, True),
        ("get_precision", 30, 30, True),
        ("get_precision", 500, 500, False),
        ("get_recall", 30, 30, True),
        ("get_recall", 500, 500, False),
    ],
)
def test_trectools_whole_run_at_a_depth_against_the_top30_file(method, depth2, depth3, equal):
    """The full run read to a depth against the top-30 file, on the 10 common topics: equal at
    30 (for RR and AP the depth is trec_eval's -M), not equal at 500 (10 cases each)."""
    a = teval(method, depth2, per_q=True).loc[COMMON]
    b = teval(method, depth3, per_q=True, top30=True).loc[COMMON]
    for t in COMMON:
        assert (round(float(a[t]) - float(b[t]), 4) == 0) is equal, t  # unittest's places=4
