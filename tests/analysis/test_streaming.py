"""Streamed evaluation (``evaluate(..., chunk_rows=)``) equals the in-memory one.

The oracle is the in-memory :func:`retrieval_eval.evaluate` (itself pinned to the spec fixtures
and to pytrec_eval elsewhere): every frame of the streamed Evaluation must be equal to it, with
block sizes small enough to cut every input into many blocks.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import spec_fixtures_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streaming_cases import assert_same, make_case

import retrieval_eval as re_
import retrieval_eval.io as formats
from retrieval_eval.analysis.evaluation.streaming import run_blocks
from retrieval_eval.datasets import demo_path
from retrieval_eval.errors import FormatError


def one_stratum_per_query(judgments: pd.DataFrame) -> pd.DataFrame:
    first = judgments.groupby("query_id", sort=False)["stratum"].transform("first")
    return judgments.assign(stratum=first)


# --------------------------------------------------------------------------------------------
# Equal to in memory, whatever the input form and however small the blocks.


@pytest.mark.parametrize("chunk_rows", [1, 7, 100, 10_000])
def test_streamed_frame_equals_in_memory_at_every_block_size(chunk_rows):
    j, r = make_case(1)
    assert_same(re_.evaluate(j, r), re_.evaluate(j, r, chunk_rows=chunk_rows))


def test_streamed_trec_file_equals_in_memory(tmp_path):
    j, r = make_case(2)
    path = tmp_path / "run.trec"
    path.write_text(formats.to_trec_run(r))
    expected = re_.evaluate(j, str(path))
    assert_same(expected, re_.evaluate(j, str(path), chunk_rows=25))
    assert_same(expected, re_.evaluate(j, path, chunk_rows=60, k=(1, 5, 10)))


def test_streamed_jsonl_file_equals_in_memory(tmp_path):
    j, r = make_case(3)
    path = tmp_path / "run.jsonl"
    formats.write_run(r, path)
    assert_same(re_.evaluate(j, str(path)), re_.evaluate(j, str(path), chunk_rows=25))


def test_streamed_parquet_file_and_dataset_equal_in_memory(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    j, r = make_case(4)
    table = pa.Table.from_pandas(r, preserve_index=False)
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=50)
    (tmp_path / "ds").mkdir()
    half = len(r) // 2  # a dataset of two files, a ranking cut between them
    pq.write_table(table.slice(0, half), tmp_path / "ds" / "part-0.parquet", row_group_size=33)
    pq.write_table(table.slice(half), tmp_path / "ds" / "part-1.parquet", row_group_size=33)
    expected = re_.evaluate(j, r)
    assert_same(expected, re_.evaluate(j, str(tmp_path / "run.parquet"), chunk_rows=20))
    assert_same(expected, re_.evaluate(j, str(tmp_path / "ds"), chunk_rows=20))


def test_a_query_longer_than_a_block_is_one_block(tmp_path):
    j, r = make_case(5, long_query=500)
    path = tmp_path / "run.trec"
    path.write_text(formats.to_trec_run(r))
    blocks = list(run_blocks(str(path), 50))
    assert max(len(b) for b in blocks) >= 500  # the long query was not cut
    assert len(blocks) > 10
    assert_same(re_.evaluate(j, str(path)), re_.evaluate(j, str(path), chunk_rows=50))
    assert_same(re_.evaluate(j, r), re_.evaluate(j, r, chunk_rows=50))


@pytest.mark.parametrize("seed", range(10))
def test_trec_blocks_read_every_row_as_the_whole_file_does(tmp_path, seed):
    """The block reader (one reused buffer, whole queries) against the whole-file read: plain
    text (arrow from the buffer) and text the careful pass reads (comments, blank lines, CRLF,
    tabs, no final newline), queries longer than a block, two systems, blocks of 1-40 rows."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(int(rng.integers(1, 25))):
        for sys_ in ("a", "b")[: 1 + seed % 2]:
            for r in range(1, int(rng.choice([1, 3, 60])) + 1):
                sep = "\t" if seed % 5 == 1 and rng.random() < 0.2 else " "
                lines.append(
                    sep.join([f"q{q}", "Q0", f"d{int(rng.integers(0, 99))}", str(r), f"{rng.random():.3f}", sys_])
                )
                if seed % 5 == 2 and rng.random() < 0.05:
                    lines.append(rng.choice(["# a comment", ""]))
    end = "\r\n" if seed % 5 == 3 else "\n"
    text = end.join(lines) + ("" if seed % 5 == 4 else end)
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode())
    whole = formats.read_trec_run(path)
    for chunk_rows in (1, 7, 40):
        blocks = list(run_blocks(str(path), chunk_rows))
        assert len(blocks) > 1 or len(whole) <= chunk_rows
        streamed = pd.concat(blocks, ignore_index=True)
        pd.testing.assert_frame_equal(streamed, whole)


@pytest.mark.parametrize("seed", range(10))
def test_block_heads_equal_the_scan_of_every_row(seed):
    """The usual block's heads (only the first rows of each ranking deduplicated) equal the
    heads the scan of every row gives; blocks with a doc repeated near the top, NaN scores,
    a ranking in two pieces or ranks out of order take the scan itself."""
    from retrieval_eval.analysis.evaluation import heads as h

    rng = np.random.default_rng(seed)
    rows = []
    for q in range(int(rng.integers(1, 15))):
        for sys_ in ("a", "b")[: 1 + seed % 2]:
            depth = int(rng.choice([1, 5, 10, 11, 30]))
            docs = rng.permutation(999)[:depth] if seed % 3 else rng.integers(0, 12, depth)  # 0: repeats
            rows += [(sys_, f"q{q}", r + 1, f"d{d}", float(depth - r)) for r, d in enumerate(docs)]
    block = pd.DataFrame(rows, columns=["system", "query_id", "rank", "doc_id", "score"])
    if seed % 5 == 4:
        block.loc[rng.random(len(block)) < 0.1, "score"] = np.nan
    if seed % 7 == 6 and len(block) > 3:
        block = pd.concat([block.iloc[2:], block.iloc[:2]], ignore_index=True)  # a ranking in two pieces
    block = formats.as_run(block)
    keys = np.arange(len(block), dtype=np.int64) * 3 + 100
    got = h.block_heads(block, keys)
    want = h._heads_by_scan(block, block[h._RUN], keys)
    pd.testing.assert_frame_equal(got, want)


def test_streamed_blocks_hold_whole_queries_and_every_row(tmp_path):
    j, r = make_case(6)
    path = tmp_path / "run.trec"
    path.write_text(formats.to_trec_run(r))
    blocks = list(run_blocks(str(path), 25))
    assert sum(len(b) for b in blocks) == len(r)
    seen = [set(zip(b["system"], b["query_id"])) for b in blocks]
    for a in range(len(seen)):
        for b in range(a + 1, len(seen)):
            assert not seen[a] & seen[b]


def test_one_stratum_per_query_and_negatives_and_queries_file():
    j, r = make_case(7)
    j = one_stratum_per_query(j)
    queries = [{"query_id": "q3", "expect_none": True}, {"query_id": "q69", "stratum": "ood"}]
    kw = dict(k=(3, 10), threshold=2, gain="linear", queries=queries, negatives=["q5"])
    assert_same(re_.evaluate(j, r, **kw), re_.evaluate(j, r, chunk_rows=11, **kw))


def test_streamed_demo_equals_in_memory():
    j, r = demo_path("judgments.jsonl"), demo_path("runs.jsonl")
    q = demo_path("queries.jsonl")
    assert_same(re_.evaluate(j, str(r), queries=q), re_.evaluate(j, str(r), queries=q, chunk_rows=500))


@pytest.mark.parametrize(
    "case",
    ["basic", "strata", "stratum-order", "no-positives", "nothing-scored", "duplicate-ranking", "unsound-judgments"],
)
def test_streamed_spec_fixtures_equal_in_memory(case):
    folder = spec_fixtures_dir() / case
    j, r = str(folder / "judgments.jsonl"), str(folder / "run.jsonl")
    assert_same(re_.evaluate(j, r, k=(1, 3, 10)), re_.evaluate(j, r, k=(1, 3, 10), chunk_rows=2))


def test_empty_rankings_stay_answered_across_blocks(tmp_path):
    lines = [
        {"query_id": "q1", "ranking": ["a", "b"]},
        {"query_id": "q2", "ranking": []},
        {"query_id": "q3", "ranking": ["c"]},
        {"query_id": "q4", "ranking": []},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    j = [{"query_id": q, "doc_uri": "a", "relevance": 1} for q in ("q1", "q2", "q3", "q4", "q5")]
    expected = re_.evaluate(j, str(path))
    assert expected.per_query["missing"].tolist() == [False, False, False, False, True]
    assert_same(expected, re_.evaluate(j, str(path), chunk_rows=1))


def test_an_empty_run_streams_to_the_in_memory_answer(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("")
    j = [{"query_id": "q1", "doc_uri": "a", "relevance": 1}]
    assert_same(re_.evaluate(j, formats.empty_run()), re_.evaluate(j, str(path), chunk_rows=5))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000), chunk_rows=st.integers(1, 300), n_queries=st.integers(1, 30), depth=st.integers(1, 25)
)
def test_streamed_equals_in_memory_property(seed, chunk_rows, n_queries, depth):
    j, r = make_case(seed, n_queries=n_queries, depth=depth, systems=("a", "b"))
    assert_same(re_.evaluate(j, r, k=(1, 5)), re_.evaluate(j, r, k=(1, 5), chunk_rows=chunk_rows))


# --------------------------------------------------------------------------------------------
# What a block cannot see is refused, never scored.


def test_a_ranking_in_two_places_of_a_file_is_refused(tmp_path):
    lines = ["q1 Q0 a 1 3.0 s", "q1 Q0 b 2 2.0 s", "q2 Q0 c 1 1.0 s", "q2 Q0 d 2 0.5 s", "q1 Q0 e 3 0.2 s"]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    j = [{"query_id": "q1", "doc_uri": "e", "relevance": 1}]
    with pytest.raises(FormatError, match=r"query q1 \(system s\) is in two places.*sort -s -k1,1"):
        re_.evaluate(j, str(path), chunk_rows=2)
    assert re_.evaluate(j, str(path)).per_query["recall@10"].iloc[0] == 1.0


def test_a_malformed_line_is_named_with_its_line_in_the_file(tmp_path):
    good = [f"q{i // 3} Q0 d{i} {i % 3 + 1} 1.0 s" for i in range(30)]
    good[22] = "q7 Q0 d22 x 1.0 s"
    path = tmp_path / "run.trec"
    path.write_text("\n".join(good) + "\n")
    j = [{"query_id": "q1", "doc_uri": "d1", "relevance": 1}]
    with pytest.raises(FormatError) as whole:
        re_.evaluate(j, str(path))
    with pytest.raises(FormatError) as streamed:
        re_.evaluate(j, str(path), chunk_rows=4)
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.line == 23


def test_a_jsonl_query_on_two_lines_in_two_blocks_is_refused(tmp_path):
    path = tmp_path / "run.jsonl"
    lines = [
        {"query_id": "q1", "ranking": ["a"]},
        {"query_id": "q2", "ranking": ["b"]},
        {"query_id": "q1", "ranking": ["c"]},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    j = [{"query_id": "q1", "doc_uri": "a", "relevance": 1}]
    with pytest.raises(FormatError, match="q1"):
        re_.evaluate(j, str(path), chunk_rows=1)


def test_chunk_rows_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="chunk_rows"):
        re_.evaluate(
            [{"query_id": "q", "doc_uri": "a", "relevance": 1}], [{"query_id": "q", "ranking": ["a"]}], chunk_rows=0
        )


def test_systems_keep_their_order_of_first_appearance_in_the_run():
    # Grouping the frame's rows by query puts C's ranking of q1 before B's of q2.
    run = [
        {"system": "A", "query_id": "q1", "ranking": ["a"]},
        {"system": "B", "query_id": "q2", "ranking": ["b"]},
        {"system": "C", "query_id": "q1", "ranking": ["c"]},
    ]
    j = [
        {"query_id": "q1", "doc_uri": "a", "relevance": 1, "stratum": "x"},
        {"query_id": "q1", "doc_uri": "c", "relevance": 1, "stratum": "y"},
        {"query_id": "q2", "doc_uri": "b", "relevance": 1},
    ]
    streamed = re_.evaluate(j, run, chunk_rows=1)
    assert streamed.systems == ["A", "B", "C"]
    assert_same(re_.evaluate(j, run), streamed)


# --------------------------------------------------------------------------------------------
# The per-group functions of the Spark recipe (docs/scale.md), with pandas standing in for
# Spark's groupBy("query_id").applyInPandas: rows of a group in any order, keys carried.


def test_spark_recipe_functions_equal_in_memory():
    from retrieval_eval.analysis.evaluation.streaming import Plan

    j, r = make_case(12)
    j = one_stratum_per_query(j)
    keyed = r.assign(_key=np.arange(len(r), dtype=np.int64) * 3 + 5)
    shuffled = keyed.iloc[np.random.default_rng(2).permutation(len(keyed))]
    plan = Plan(j, k=(1, 5, 10))
    rows = pd.concat([plan.score_rows(g) for _, g in shuffled.groupby("query_id", sort=False)], ignore_index=True)
    first = keyed.groupby("system")["_key"].min().to_dict()
    assert_same(re_.evaluate(j, r), plan.finish_rows(rows, first))


def test_spark_schema_names_every_column_of_the_rows():
    from retrieval_eval.analysis.evaluation.streaming import Plan

    j, r = make_case(13)
    plan = Plan(j, k=(1, 5))
    names = [part.split("` ")[0].strip(" `") for part in plan.schema().split(", ")]
    assert names == list(re_.evaluate(j, r, k=(1, 5)).per_query.drop(columns="negative").columns)


def test_finish_rows_refuses_queries_in_several_strata():
    from retrieval_eval.analysis.evaluation.streaming import Plan

    j, r = make_case(14)  # labels of some queries fall in two strata
    plan = Plan(j)
    with pytest.raises(ValueError, match="several strata"):
        plan.finish_rows(plan.score_rows(r.assign(_key=np.arange(len(r)))), {"bm25": 0})


def test_a_streamed_report_equals_the_in_memory_one_given_the_calibration():
    from retrieval_eval.analysis.calibration import calibrate

    j, r, q = demo_path("judgments.jsonl"), str(demo_path("runs.jsonl")), demo_path("queries.jsonl")
    whole = re_.evaluate(j, r, queries=q)
    streamed = re_.evaluate(j, r, queries=q, chunk_rows=700)
    assert streamed.run is None  # the run was never held
    cal = calibrate(j, r, queries=q)
    from datetime import datetime, timezone

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for system in whole.systems:
        assert (
            streamed.report(system=system, calibration=cal, now=now).to_dict()
            == whole.report(system=system, calibration=cal, now=now).to_dict()
        )
    # Without one, the streamed report has no calibration (it would need every top-1 score).
    assert "calibration" not in streamed.report(system="dense", now=now).to_dict()
