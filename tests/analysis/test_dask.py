"""The Dask path (``retrieval_eval.dask.evaluate``) equals the in-memory ``evaluate``.

Run on a ``LocalCluster`` of two worker processes, on a generated run of 2.4 million rows
split into 24 partitions, with each query's rows spread over partitions; the oracle is the
in-memory :func:`retrieval_eval.evaluate` of the same rows in the same order. ``calibrate``
and ``compare`` take the Dask ``Evaluation`` as they take the run, with the same numbers.
"""

from __future__ import annotations

import subprocess
import sys

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from dask.distributed import Client, LocalCluster
from streaming_cases import assert_same, make_case

import retrieval_eval as re_
import retrieval_eval.io as formats
from retrieval_eval import dask as red
from retrieval_eval.errors import FormatError

N_QUERIES, DEPTH = 60_000, 20  # two systems: 2,400,000 run rows


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as c,
    ):
        yield c


def _ids(prefix: str, values: np.ndarray) -> pd.arrays.ArrowStringArray:
    return pd.array(prefix + pd.Series(values).astype(str), dtype="string")


@pytest.fixture(scope="module")
def big():
    """Two systems x 60,000 queries x 20 entries, repeated keys included; labels for 90% of
    the queries (and some the run never ranks), one stratum per query. (Queries labelled in
    two strata are scored per (stratum, query) too; the smaller cases below cover that.)"""
    rng = np.random.default_rng(17)
    n = N_QUERIES * DEPTH
    parts = []
    for s in ("bm25", "dense"):
        parts.append(
            pd.DataFrame(
                {
                    "system": pd.array([s] * n, dtype="string"),
                    "query_id": _ids("q", np.repeat(np.arange(N_QUERIES), DEPTH)),
                    "rank": np.tile(np.arange(1, DEPTH + 1), N_QUERIES).astype(np.int64),
                    "doc_id": _ids("d", rng.integers(0, 400, n)),
                    "score": rng.normal(size=n).round(6),
                }
            )
        )
    run = formats.as_run(pd.concat(parts, ignore_index=True))
    m = N_QUERIES * 8
    jq = rng.integers(0, int(N_QUERIES * 1.1), m)
    judgments = formats.as_judgments(
        pd.DataFrame(
            {
                "query_id": _ids("q", jq),
                "doc_uri": _ids("d", rng.integers(0, 400, m)),
                "relevance": rng.integers(0, 4, m),
                "stratum": np.array(["faq", "howto", "news"])[jq % 3],
            }
        )
    )
    return judgments, run


def _parquet(run: pd.DataFrame, path, parts: int) -> dd.DataFrame:
    """``run`` as ``parts`` parquet files the workers read themselves (no data in the graph)."""
    path.mkdir()
    for i, piece in enumerate(np.array_split(np.arange(len(run)), parts)):
        run.iloc[piece].to_parquet(path / f"part-{i:03d}.parquet", index=False)
    return dd.read_parquet(str(path))


def test_millions_of_rows_spread_over_partitions_equal_in_memory(client, big, tmp_path):
    judgments, run = big
    # Rows in random order: every query's rows are spread over the 24 partitions.
    spread = run.iloc[np.random.default_rng(0).permutation(len(run))].reset_index(drop=True)
    expected = re_.evaluate(judgments, spread)
    ddf = _parquet(spread, tmp_path / "spread", 24)
    assert ddf.npartitions == 24
    got = red.evaluate(judgments, ddf, shuffle=True)
    assert_same(expected, got)
    # What calibration reads of the run (each ranking's head) came back in the run's order.
    pd.testing.assert_frame_equal(got.heads, re_.dedupe_run(spread, depth=10), check_exact=True)


def test_a_run_sorted_by_query_is_scored_without_a_shuffle(client, big, tmp_path):
    judgments, run = big
    # 7 partitions cut mid-ranking: the cut rankings are put together on the client.
    ddf = _parquet(run, tmp_path / "sorted", 7)
    assert (len(np.array_split(np.arange(len(run)), 7)[0]) % DEPTH) != 0
    assert_same(re_.evaluate(judgments, run), red.evaluate(judgments, ddf, shuffle=False))


def test_a_split_ranking_is_refused_without_shuffle(client):
    j, r = make_case(8)
    ddf = dd.from_pandas(r.iloc[np.random.default_rng(1).permutation(len(r))], npartitions=5, sort=False)
    with pytest.raises(FormatError, match="in two places"):
        red.evaluate(j, ddf, shuffle=False)
    assert_same(re_.evaluate(j, ddf.compute()), red.evaluate(j, ddf, shuffle=True))


def test_rank_ties_keep_the_run_order_through_a_shuffle(client):
    # Equal ranks: the engine keeps the run's order, so the shuffle must bring it back.
    run = pd.DataFrame(
        {"query_id": ["q1", "q2", "q1", "q2", "q1"] * 4, "doc_id": [f"d{i}" for i in range(20)], "rank": [1] * 20}
    )
    j = [{"query_id": "q1", "doc_uri": "d0", "relevance": 1}, {"query_id": "q2", "doc_uri": "d6", "relevance": 2}]
    got = red.evaluate(j, dd.from_pandas(run, npartitions=4, sort=False), k=(1, 3))
    assert_same(re_.evaluate(j, run, k=(1, 3)), got)
    assert got.per_query["mrr@1"].tolist() == [1.0, 0.0]


def test_trec_and_csv_files_and_dask_judgments_equal_in_memory(client, tmp_path):
    j, r = make_case(9, n_queries=300)
    text = formats.to_trec_run(r).splitlines(keepends=True)
    half = len(text) // 2
    (tmp_path / "a.trec").write_text("".join(text[:half]))
    (tmp_path / "b.trec").write_text("".join(text[half:]))
    (tmp_path / "whole.txt").write_text("".join(text))
    expected = re_.evaluate(j, str(tmp_path / "whole.txt"))
    got = red.evaluate(dd.from_pandas(j, npartitions=3), str(tmp_path / "*.trec"))
    assert_same(expected, got)
    r.to_csv(tmp_path / "run.csv", index=False)
    assert_same(re_.evaluate(j, r), red.evaluate(j, str(tmp_path / "run.csv")))


def test_queries_negatives_and_options_pass_through(client):
    j, r = make_case(10)
    kw = dict(
        k=(2, 7),
        threshold=2,
        gain="linear",
        negatives=["q4"],
        queries=[{"query_id": "q70", "stratum": "ood", "expect_none": True}],
    )
    ddf = dd.from_pandas(r, npartitions=6, sort=False)
    assert_same(re_.evaluate(j, r, **kw), red.evaluate(j, ddf, **kw))


@pytest.mark.parametrize("shuffle", [False, True])
def test_calibrate_and_compare_take_the_dask_evaluation(client, shuffle):
    j, r = make_case(12, n_queries=120)
    negs = ["q5", "q6", "q7", "q50", "q51", "q52", "q53", "q54", "q90", "q91", "q92"]
    j = j[~j["query_id"].isin(negs)].reset_index(drop=True)
    if shuffle:  # a ranking's rows in several partitions
        r = r.iloc[np.random.default_rng(2).permutation(len(r))].reset_index(drop=True)
    ev = red.evaluate(j, dd.from_pandas(r, npartitions=6, sort=False), negatives=negs, shuffle=shuffle)
    a, b = re_.calibrate(j, r, negatives=negs), re_.calibrate(j, ev, negatives=negs)
    for name in ("summary", "top1", "per_stratum", "intervals"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    a, b = (re_.compare(j, r, negatives=negs, n_resamples=300), re_.compare(j, ev, negatives=negs, n_resamples=300))
    for name in ("table", "per_query", "wins_ties_losses"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    pd.testing.assert_frame_equal(a.calibration.table, b.calibration.table, check_exact=True)


def test_importing_the_package_does_not_import_dask():
    code = "import sys, retrieval_eval; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_dask_the_import_error_names_the_extra():
    code = (
        "import sys; sys.modules['dask'] = None\n"
        "try:\n    import retrieval_eval.dask\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "retrieval_eval.dask needs Dask: pip install 'retrieval-eval[dask]'"
