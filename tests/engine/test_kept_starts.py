"""The TREC reader hands the blocks it found to the engine (``arrays.keep_starts``).

While it reads a run whose rankings stand together, the reader finds where each (system, query)
block starts; the engine would find the same by comparing every neighbouring id again (0.1 s
per 10M rows; issue 30, goal 2). It is given them only for the very column objects the reader
made (arrow's arrays are immutable: the same live objects hold the same values), and checks
the ranks again itself. The oracle is :func:`retrieval_eval.arrays.block_starts` on the same
columns, and a frame rebuilt from plain Python values, which nothing was kept for.
"""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import retrieval_eval as rev
from retrieval_eval import arrays
from retrieval_eval.engine import scan


def _text(seed: int, systems=("bm25",)) -> str:
    rng = np.random.default_rng(seed)
    return "".join(
        f"q{q:02d} Q0 d{int(d):03d} {r + 1} {100 - r - int(rng.integers(0, 2))}.{q} {name}\n"
        for name in systems
        for q in range(25)
        for r, d in enumerate(rng.choice(300, size=int(rng.integers(1, 30)), replace=False))
    )


def _defined(run: pd.DataFrame) -> tuple[np.ndarray, bool]:
    """block_starts on the run's columns: what the engine finds without help."""
    system = arrays.arrow(run["system"])
    return arrays.block_starts(system, arrays.arrow(run["query_id"]), pa.array(run["rank"]), strict=True)


def _rebuilt(run: pd.DataFrame) -> pd.DataFrame:
    """The same rows in new columns (nothing kept for them)."""
    return pd.DataFrame({c: pd.array(run[c].tolist(), dtype=run[c].dtype) for c in run.columns})


@pytest.mark.parametrize(
    "systems, system", [(("bm25",), None), (("bm25", "dense", "splade"), None), (("a", "b"), "one")]
)
def test_the_kept_blocks_are_those_the_engine_finds(systems, system) -> None:
    run = rev.from_trec_run(_text(1, systems), system=system)
    kept = arrays.kept_starts(run["system"], run["query_id"], run["rank"].to_numpy())
    assert kept is not None  # the reader kept them
    want = _defined(run)
    np.testing.assert_array_equal(kept[0], want[0])
    assert kept[1] is want[1] is True
    got = scan.ranking_starts(run)
    np.testing.assert_array_equal(got[0], want[0])
    as_run = rev.io.as_run(run)  # what evaluate reads: the same arrays in a new frame
    assert arrays.kept_starts(as_run["system"], as_run["query_id"], as_run["rank"].to_numpy()) is not None


@pytest.mark.parametrize("order", ["rank", "score"])
def test_a_run_the_reader_ordered_keeps_its_groups(order: str) -> None:
    """Lines of several rankings interleaved (and scores out of rank order): the reader groups
    and orders them, and keeps where the groups it made start."""
    lines = _text(8, ("bm25", "dense")).splitlines(keepends=True)
    np.random.default_rng(9).shuffle(lines)
    run = rev.from_trec_run("".join(lines), order=order)
    kept = arrays.kept_starts(run["system"], run["query_id"], run["rank"].to_numpy())
    assert kept is not None
    want = _defined(run)
    np.testing.assert_array_equal(kept[0], want[0])
    assert kept[1] is want[1] is True
    assert len(want[0]) == 50  # 25 queries of two systems, each one block


def test_other_columns_get_nothing_and_ranks_are_checked_again() -> None:
    run = rev.from_trec_run(_text(2))
    sliced = run.iloc[5:].reset_index(drop=True)
    rebuilt = _rebuilt(run)
    for other in (sliced, rebuilt):
        assert arrays.kept_starts(other["system"], other["query_id"], other["rank"].to_numpy()) is None
    # The same id columns with other ranks: the blocks are kept, the order is not.
    reranked = run.assign(rank=run["rank"].to_numpy()[::-1].copy())
    tied = run.assign(rank=np.ones(len(run), dtype=np.int64))
    for other in (reranked, tied):
        got = scan.ranking_starts(other)
        want = _defined(other)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] is want[1] is False


def test_a_column_set_in_place_is_not_the_column_read() -> None:
    run = rev.from_trec_run(_text(3))
    before = arrays._held(run["query_id"])
    run.loc[0, "query_id"] = "q99"  # arrow arrays are immutable: pandas makes a new one
    assert arrays._held(run["query_id"]) is not before
    assert arrays.kept_starts(run["system"], run["query_id"], run["rank"].to_numpy()) is None
    got = scan.ranking_starts(run)
    want = _defined(run)
    np.testing.assert_array_equal(got[0], want[0])
    assert len(got[0]) == len(scan.ranking_starts(_rebuilt(run))[0])


def test_a_frame_let_go_takes_its_entry_with_it() -> None:
    run = rev.from_trec_run(_text(4))
    ref = arrays._KEPT[-1][1]
    assert ref() is arrays._held(run["query_id"])
    del run
    gc.collect()
    assert ref() is None
    for _ in range(arrays._KEPT_MAX + 3):
        rev.from_trec_run(_text(5))
    assert len(arrays._KEPT) <= arrays._KEPT_MAX


@pytest.mark.parametrize("seed", [6, 7])
def test_evaluate_on_a_read_run_equals_evaluate_on_its_copy(seed: int) -> None:
    text = _text(seed, ("bm25", "dense"))
    run = rev.from_trec_run(text)
    qrels = rev.from_qrels("".join(f"q{q:02d} 0 d{d:03d} {d % 3}\n" for q in range(25) for d in range(0, 300, 7)))
    variants = {
        "read": run,
        "reranked": run.assign(rank=run.groupby(["system", "query_id"]).cumcount().to_numpy()[::-1] + 1),
    }
    for name, frame in variants.items():
        with pytest.warns(rev.TiedScoresWarning) if name == "read" else _nothing():
            got = rev.evaluate(qrels, frame, k=(3, 10)).per_query
        with pytest.warns(rev.TiedScoresWarning) if name == "read" else _nothing():
            want = rev.evaluate(qrels, _rebuilt(frame), k=(3, 10)).per_query
        pd.testing.assert_frame_equal(got, want, check_exact=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
