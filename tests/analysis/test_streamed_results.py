"""``calibrate`` and ``compare`` accept a streamed ``Evaluation`` (one that never held its run):
the numbers equal those of the whole run, frame for frame.

The oracle is the in-memory path on the same rows: ``calibrate(judgments, run)`` and
``compare(judgments, run)``. A streamed evaluation carries the head of every ranking out of
its blocks (ranks 1-10, what calibration reads); a block size of a few rows cuts every case
into many blocks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streaming_cases import make_case

import retrieval_eval as rev
import retrieval_eval.io as formats

NEGATIVES = ["q3", "q11", "q12", "q40", "q41", "q42", "q43", "q44", "q45", "q46", "q47", "q60", "q61"]


def _case(seed: int = 5):
    j, r = make_case(seed, n_queries=80)
    j = j[~j["query_id"].isin(NEGATIVES)].reset_index(drop=True)  # a negative has no label
    return j, r


def assert_same_calibration(a, b):
    for name in ("summary", "top1", "per_stratum", "intervals"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    assert a.warnings == b.warnings
    assert a.missing_negatives == b.missing_negatives


def assert_same_comparison(a, b):
    for name in ("table", "per_query", "wins_ties_losses"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    assert (a.warnings, a.missing, a.excluded) == (b.warnings, b.missing, b.excluded)
    assert (a.calibration is None) == (b.calibration is None)
    if a.calibration is not None:
        pd.testing.assert_frame_equal(a.calibration.table, b.calibration.table, check_exact=True)


@pytest.mark.parametrize("chunk_rows", [7, 50, 10_000])
def test_calibrate_of_a_streamed_evaluation_equals_the_whole_run(chunk_rows):
    j, r = _case()
    ev = rev.evaluate(j, r, negatives=NEGATIVES, chunk_rows=chunk_rows)
    assert ev.run is None
    assert_same_calibration(rev.calibrate(j, r, negatives=NEGATIVES), rev.calibrate(j, ev, negatives=NEGATIVES))


def test_calibrate_of_a_streamed_trec_file_equals_the_whole_run(tmp_path):
    j, r = _case(6)
    path = tmp_path / "run.trec"
    # Sorted by query (the file a streamed read takes), rows of a query in system order.
    path.write_text(formats.to_trec_run(r.sort_values("query_id", kind="stable")))
    ev = rev.evaluate(j, str(path), negatives=NEGATIVES, chunk_rows=30)
    assert_same_calibration(rev.calibrate(j, str(path), negatives=NEGATIVES), rev.calibrate(j, ev, negatives=NEGATIVES))


def test_rank_based_scores_are_flagged_as_in_memory():
    # Scores a fixed function of rank (RRF-like): the rank-based check reads ranks 1-10 of
    # every ranking, which the heads keep, deeper rows included to prove the cut is exact.
    j, r = _case(7)
    r = r.assign(score=1.0 / (60 + r["rank"].to_numpy()))
    ev = rev.evaluate(j, r, negatives=NEGATIVES, chunk_rows=11)
    whole, streamed = (rev.calibrate(j, r, negatives=NEGATIVES), rev.calibrate(j, ev, negatives=NEGATIVES))
    assert whole.summary["rank_based"].all()
    assert_same_calibration(whole, streamed)


def test_scores_only_below_the_head_still_make_a_scored_system():
    # bm25 has scores only at ranks past 10: calibrated (every top-1 missing), as in memory.
    j, r = _case(8)
    deep = (r["system"] == "bm25").to_numpy() & (r["rank"].to_numpy() <= 10)
    r = r.assign(score=np.where(deep, np.nan, r["score"].to_numpy()))
    ev = rev.evaluate(j, r, negatives=NEGATIVES, chunk_rows=9)
    assert_same_calibration(rev.calibrate(j, r, negatives=NEGATIVES), rev.calibrate(j, ev, negatives=NEGATIVES))


def test_interleaved_rankings_keep_the_run_order():
    # Rows in random order: blocks are cut by query, rankings ordered by their first row.
    j, r = _case(9)
    r = r.iloc[np.random.default_rng(3).permutation(len(r))].reset_index(drop=True)
    ev = rev.evaluate(j, r, negatives=NEGATIVES, chunk_rows=13)
    assert_same_calibration(rev.calibrate(j, r, negatives=NEGATIVES), rev.calibrate(j, ev, negatives=NEGATIVES))


@pytest.mark.parametrize("test", ["randomization", "t"])
def test_compare_of_a_streamed_evaluation_equals_the_whole_run(test):
    j, r = _case(10)
    ev = rev.evaluate(j, r, k=(5, 10), negatives=NEGATIVES, chunk_rows=17)
    kw = dict(negatives=NEGATIVES, test=test, n_resamples=500)
    assert_same_comparison(rev.compare(j, r, **kw), rev.compare(j, ev, **kw))
    # The calibration comparison (negatives declared, scores present) is part of it.
    assert rev.compare(j, ev, **kw).calibration is not None
    assert_same_comparison(
        rev.compare(j, r, k=5, baseline="dense", **kw), rev.compare(j, ev, k=5, baseline="dense", **kw)
    )


def test_compare_calibration_of_a_streamed_evaluation_equals_the_whole_run():
    j, r = _case(11)
    ev = rev.evaluate(j, r, negatives=NEGATIVES, chunk_rows=23)
    a = rev.compare_calibration(j, r, negatives=NEGATIVES, n_resamples=300)
    b = rev.compare_calibration(j, ev, negatives=NEGATIVES, n_resamples=300)
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)


def test_an_in_memory_evaluation_stands_in_for_its_run():
    j, r = _case(12)
    ev = rev.evaluate(j, r, negatives=NEGATIVES)
    assert_same_calibration(rev.calibrate(j, r, negatives=NEGATIVES), rev.calibrate(j, ev, negatives=NEGATIVES))
    assert_same_comparison(
        rev.compare(j, r, negatives=NEGATIVES, n_resamples=200),
        rev.compare(j, ev, negatives=NEGATIVES, n_resamples=200),
    )


def test_compare_refuses_an_evaluation_made_with_other_settings():
    j, r = _case(13)
    ev = rev.evaluate(j, r, k=(5,), negatives=NEGATIVES, chunk_rows=50)
    with pytest.raises(ValueError, match="made at k=\\[5\\]"):
        rev.compare(j, ev, k=10, negatives=NEGATIVES)
    with pytest.raises(ValueError, match="same threshold and negatives"):
        rev.compare(j, ev, k=5)
    with pytest.raises(ValueError, match="has no ndcg_linear@5"):
        rev.compare(j, ev, k=5, negatives=NEGATIVES, metrics=["ndcg_linear"])


def test_a_ranking_in_two_places_is_not_calibrated_from_half_of_it():
    # An unjudged query's lines in two places: its metrics do not exist, so evaluate streams
    # it, but its top-1 score would come from half a ranking: calibrate refuses, naming it.
    j = [{"query_id": "q1", "doc_uri": "a", "relevance": 1}]
    r = pd.DataFrame(
        {
            "query_id": ["q1", "q9", "q1", "q9"],
            "doc_id": ["a", "b", "c", "d"],
            "rank": [1, 1, 2, 2],
            "score": [0.9, 0.8, 0.7, 0.6],
        }
    )
    path_rows = formats.as_run(r)
    ev = rev.evaluate(j, path_rows, chunk_rows=1)
    # Cut in memory by query first, so this frame is fine: same numbers as the whole run.
    assert_same_calibration(rev.calibrate(j, r), rev.calibrate(j, ev))


def test_a_file_with_an_unjudged_ranking_in_two_places_is_refused_by_calibrate(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q9 Q0 b 1 0.8 s\nq1 Q0 a 1 0.9 s\nq9 Q0 d 2 0.6 s\n")
    j = [{"query_id": "q1", "doc_uri": "a", "relevance": 1}]
    ev = rev.evaluate(j, str(path), chunk_rows=1)
    with pytest.raises(ValueError, match="query q9 .system s. is in two places"):
        rev.calibrate(j, ev)
