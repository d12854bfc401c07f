"""Each query's label counts by grade (``q_levels``, trec_eval's ``rel_levels``), as the
catalogue's scan counts them (every measure's num_rel and ideal ranking start there).

The oracle is a plain-Python count: the last label of a repeated (query, doc) pair wins, and
each query counts its winning labels of grade 0 up to the highest winning grade of any query
(negative grades are not counted). The runs are large enough to be read in several steps on
two threads, and small enough for one.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as re_

scan_mod = importlib.import_module("retrieval_eval.engine.measures.scan")
engine_scan = importlib.import_module("retrieval_eval.engine.scan")
trec = importlib.import_module("tests.engine.test_measures_trec")


def _judgments(rng, n_queries: int, per_query: int) -> pd.DataFrame:
    rows = []
    for q in range(n_queries):
        for _ in range(per_query):
            rows.append((f"q{q}", f"d{int(rng.integers(0, per_query * 2))}", int(rng.integers(-2, 4))))
    # The highest grade appears only on labels that a later label of the same pair overrides.
    rows.append(("q0", "top", 9))
    rows.append(("q0", "top", 1))
    order = rng.permutation(len(rows))  # the labels of a query need not be together
    rows = [rows[i] for i in order] + [("q0", "top", 1)]
    return trec.judgments(rows)  # negative grades kept


def _run(rng, n_queries: int, depth: int) -> pd.DataFrame:
    q = np.repeat([f"q{i}" for i in range(n_queries)], depth)
    doc = [f"d{int(x)}" for x in rng.integers(0, depth * 2, size=len(q))]
    frame = pd.DataFrame(
        {
            "system": "s",
            "query_id": q,
            "rank": np.tile(np.arange(1, depth + 1), n_queries),
            "doc_id": doc,
            "score": -np.tile(np.arange(depth, dtype=float), n_queries),
        }
    )
    return re_.as_run(frame)


def _expected(judgments: pd.DataFrame, queries: pd.Index) -> np.ndarray:
    last = {}
    for q, d, g in zip(judgments["query_id"], judgments["doc_uri"], judgments["relevance"]):
        last[(q, d)] = int(g)
    top = max([g for g in last.values() if g >= 0], default=0)
    out = np.zeros((len(queries), top + 1), dtype=np.int64)
    at = {q: i for i, q in enumerate(queries)}
    for (q, _), g in last.items():
        if g >= 0:
            out[at[q], g] += 1
    return out


@pytest.mark.parametrize("n_queries,depth", [(5, 20), (300, 600)])
@pytest.mark.parametrize("seed", [0, 1])
def test_levels_match_a_plain_count(n_queries, depth, seed):
    rng = np.random.default_rng(seed)
    judgments = _judgments(rng, n_queries, 15)
    run = _run(rng, n_queries, depth)
    if depth == 600:
        assert len(run) > engine_scan.STEP_ROWS  # several steps, on two threads
    arrays = scan_mod.scan(judgments, run)
    assert arrays.q_levels.dtype == np.int64
    np.testing.assert_array_equal(arrays.q_levels, _expected(judgments, arrays.queries))
    # With no run, the same labels give the same counts.
    empty = scan_mod.scan(judgments, run.iloc[:0])
    np.testing.assert_array_equal(empty.q_levels, arrays.q_levels)
