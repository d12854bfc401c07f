"""A run's ranking boundaries are found once per public call (``engine.remembered.found_once``).

In one ``evaluate`` the tie check, the scan and the catalogue's scan each ask where the run's
rankings start (0.05-0.1 s per 10M rows each time; issue 30, goal 2). Within a public call the
answer for the run read last is kept with its columns and given again only for columns whose
values sit at the same place in memory: any other frame is read afresh.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import retrieval_eval as rev
from retrieval_eval.engine import scan
from retrieval_eval.engine.remembered import found_once


def _data(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    lines = [
        f"q{q:02d} Q0 d{int(d):03d} {r + 1} {100 - r - rng.integers(0, 2)}.{q} sys"
        for q in range(30)
        for r, d in enumerate(rng.choice(200, size=40, replace=False))
    ]
    read = rev.from_trec_run("\n".join(lines) + "\n")
    # Rebuilt from Python values: the reader's own blocks (test_kept_starts.py) are not kept
    # for these columns, so the engine finds them itself, and that is what is counted here.
    run = pd.DataFrame({c: pd.array(read[c].tolist(), dtype=read[c].dtype) for c in read.columns})
    qrels = "\n".join(f"q{q:02d} 0 d{d:03d} {1 + d % 2}" for q in range(0, 30, 2) for d in range(0, 200, 3)) + "\n"
    return rev.from_qrels(qrels), run


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every run the boundaries are found of (its length), with every run counted as large."""
    calls: list[int] = []
    real = scan._find_starts

    def counting(sys_arr, q_arr, rank):  # type: ignore[no-untyped-def]
        calls.append(len(rank))
        return real(sys_arr, q_arr, rank)

    monkeypatch.setattr(scan, "_find_starts", counting)
    monkeypatch.setattr(scan, "STEP_ROWS", 8)  # beside_starts' large-run path, on a small run
    return calls


def test_one_evaluate_finds_the_rankings_once(counted: list[int]) -> None:
    judgments, run = _data()
    with pytest.warns(rev.TiedScoresWarning):  # the tie check ran, and asked
        got = rev.evaluate(judgments, run, k=(5, 10), measures=["nDCG@10", "P_5"])
    assert counted == [len(run)]
    counted.clear()
    expected = rev.compute(judgments, run, k=(5, 10))  # not a public call: nothing remembered
    assert len(counted) == 1
    pd.testing.assert_series_equal(
        got.per_query["ndcg@10"].fillna(0).reset_index(drop=True),
        expected["ndcg@10"].reset_index(drop=True),
        check_names=False,
    )


def test_another_frame_of_the_same_shape_is_read_afresh(counted: list[int]) -> None:
    _, run = _data()
    rng = np.random.default_rng(1)
    shuffled = run.iloc[rng.permutation(len(run))].reset_index(drop=True)
    reranked = run.assign(rank=run["rank"].to_numpy()[::-1].copy())
    with found_once():
        first = scan.ranking_starts(run)
        again = scan.ranking_starts(run.copy(deep=False))  # the same columns: remembered
        assert len(counted) == 1
        for other in (shuffled, reranked, run):
            got = scan.ranking_starts(other)
            want = scan._block_starts(None, scan._arrow(other["query_id"]), pa.array(other["rank"]), strict=True)
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1] == want[1]
    assert len(counted) == 4  # the copy was remembered; each other frame was read
    np.testing.assert_array_equal(first[0], again[0])
    assert not scan.ranking_starts(shuffled)[1]  # shuffled rows: ranks do not go up in blocks


def test_outside_a_public_call_nothing_is_remembered(counted: list[int]) -> None:
    _, run = _data()
    scan.ranking_starts(run)
    scan.ranking_starts(run)
    assert counted == [len(run), len(run)]


def test_frames_read_in_turn_in_one_call_score_as_each_alone() -> None:
    """Three frames of one length scored in turn inside one scope (what a public call that
    reads several runs does) give each its own numbers, the remembered one never reused."""
    judgments, run = _data()
    rng = np.random.default_rng(3)
    shuffled = run.iloc[rng.permutation(len(run))].reset_index(drop=True)
    reranked = run.assign(rank=run["rank"].to_numpy()[::-1].copy())
    frames = (run, shuffled, reranked, run.copy(deep=False), run)
    alone = [rev.compute(judgments, f, k=(3, 10)) for f in frames]
    with found_once():
        together = [rev.compute(judgments, f, k=(3, 10)) for f in frames]
    for want, got in zip(alone, together):
        pd.testing.assert_frame_equal(got, want)
    assert not alone[2]["ndcg@10"].equals(alone[0]["ndcg@10"])  # reranked really ranks otherwise
