"""trectools' own test cases that evaluate a (qrels, run, measure), ported: our value equals theirs.

Source: github.com/joaopalotti/trectools (BSD 3-Clause License, Copyright (c) 2022, Joao
Palotti, Harrisen Scells, and Guido Zuccon), commit 8a896def007e3d657eb29f820ee3de98e2f32691:
unittests/testtreceval.py with unittests/files/qrel1.txt and r4.run (quoted below, with
attribution, in our own layout). Their ``trec_eval=True`` is trec_eval's tie order, as ours;
their ``depth=1000`` reads the top 1000; their means are over the queries, to 4 decimals.

Not ported (listed in docs/conformance.md): the cases on ``input.uic0301`` (3.5 MB) and
``robust03_cs_qrels.txt`` (2.7 MB): those files are not vendored here.
"""

from __future__ import annotations

import pytest

from tests.peers.peer_helpers import mean

# qrel1.txt: (query, doc suffix, grade); doc ids are doc<query>_<suffix>
QREL1 = {"1": {f"doc1_{i}": g for i, g in enumerate([0, 0, 1, 0, 0, 0, 0, 2, 0, 0])},
         "2": {f"doc2_{i}": g for i, g in enumerate([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])},
         "3": {f"doc3_{i}": g for i, g in enumerate([0, 0, 0, 0, 0, 0, 0, 0, 0, 1])}}
# r4.run: (query, doc, score)
R4 = {"1": {"doc1_1": 1, "doc1_2": 0.81, "doc1_3": 0.80},
      "2": {"doc2_1": 2, "doc2_3": 1, "doc2_2": 0.5},
      "3": {"doc3_1": 5, "doc3_2": 0.7, "doc3_3": 0.5}}


@pytest.mark.parametrize("method, name, want", [
    ("get_reciprocal_rank(depth=1000)", "recip_rank", 0.5000),
    ("get_map(depth=1000)", "map", 0.2685),
    ("get_precision(depth=1000)", "P_1000", 0.0010),
    ("get_recall(depth=1000)", "recall_1000", 0.3889),
])
def test_trectools_teval1(method, name, want):
    assert round(mean(QREL1, R4, name, complete=False), 4) == want, method


def test_the_cases_are_not_trivially_equal():
    # their four expected values differ, and the run ranks by score, not by file order
    swapped = {**R4, "2": {"doc2_1": 0.4, "doc2_3": 1, "doc2_2": 0.5}}
    assert round(mean(QREL1, swapped, "recip_rank", complete=False), 4) != 0.5
