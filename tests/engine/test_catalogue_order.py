"""trec_eval's order, as the catalogue's scan puts a run in it (:func:`trec_rankings`).

trec_eval sorts each ranking by score, descending, then by doc id, descending (byte order).
The scan checks the run's own order and sorts only what is out of it: whole rankings whose
scores go up somewhere, and runs of tied scores whose doc ids are not descending. The oracle
here is Python's ``sorted`` applied to each ranking, on runs mixing all of those cases.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as re_
from retrieval_eval.model import ID

scan_mod = importlib.import_module("retrieval_eval.engine.measures.scan")
engine_scan = importlib.import_module("retrieval_eval.engine.scan")


def _run(rows):
    frame = pd.DataFrame(rows, columns=["system", "query_id", "rank", "doc_id", "score"])
    return re_.as_run(frame)


def _expected(run: pd.DataFrame, queries: pd.Index) -> list[list[str]]:
    """Each ranking's doc ids in trec_eval's order, computed one ranking at a time."""
    rk = engine_scan.rankings(run, queries)
    order = np.arange(len(run)) if rk.order is None else rk.order
    docs, scores = run["doc_id"].to_numpy(object), run["score"].to_numpy(float)
    out = []
    for start, length in zip(rk.starts, rk.lengths):
        rows = order[start : start + length]
        if np.isnan(scores[rows]).any():  # a missing score: the run's own rank order
            out.append([docs[r] for r in rows])
        else:
            pairs = sorted(((scores[r], docs[r].encode()) for r in rows), reverse=True)
            out.append([d.decode() for _, d in pairs])
    return out


def _got(run: pd.DataFrame, queries: pd.Index) -> list[list[str]]:
    rk = scan_mod.trec_rankings(run, queries)
    order = np.arange(len(run)) if rk.order is None else rk.order
    docs = run["doc_id"].to_numpy(object)
    return [[docs[r] for r in order[s : s + n]] for s, n in zip(rk.starts, rk.lengths)]


def _generated(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for system in ("a", "b"):
        for q in range(12):
            n = int(rng.integers(1, 30))
            docs = [f"d{i}" for i in rng.choice(60, size=n, replace=False)]
            kind = q % 4
            if kind == 0:  # already in trec_eval's order
                scores = np.sort(rng.random(n))[::-1]
            elif kind == 1:  # in score order, ties listed with doc ids ascending
                scores = -np.sort(rng.integers(0, 4, size=n)).astype(float)
                order = np.lexsort((docs, -scores))
                docs, scores = [docs[i] for i in order], scores[order]
            elif kind == 2:  # scores go up: the ranking is sorted whole
                scores = np.round(rng.random(n) * 3) / 3
            else:  # a missing score somewhere: rank order
                scores = rng.random(n)
                scores[int(rng.integers(0, n))] = np.nan
            rows += [(system, f"q{q}", i + 1, d, s) for i, (d, s) in enumerate(zip(docs, scores))]
    order = rng.permutation(len(rows)) if seed % 2 else np.arange(len(rows))  # interleaved
    return _run([rows[i] for i in order])


@pytest.mark.parametrize("seed", range(6))
def test_generated_runs_are_put_in_trec_evals_order(seed):
    run = _generated(seed)
    queries = pd.Index(sorted(set(run["query_id"])), dtype=ID)
    assert _got(run, queries) == _expected(run, queries)


def test_a_run_already_in_order_is_not_reordered():
    run = _run([("s", "q", 1, "b", 2.0), ("s", "q", 2, "c", 1.0), ("s", "q", 3, "a", 1.0)])
    assert scan_mod.trec_rankings(run, pd.Index(["q"])).order is None


def test_tied_scores_are_ordered_by_doc_id_bytes_descending():
    # "é" (0xC3 0xA9 in UTF-8) sorts after "z" by bytes; "B" before "a".
    run = _run(
        [("s", "q", i + 1, d, 1.0) for i, d in enumerate(["B", "a", "z", "é"])]
        + [("s", "r", 1, "x", 1.0), ("s", "r", 2, "y", 3.0)]
    )
    assert _got(run, pd.Index(["q", "r"])) == [["é", "z", "a", "B"], ["y", "x"]]
