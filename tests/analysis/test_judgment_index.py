"""``JudgmentIndex``: the labels of some queries found in one lookup, against the definition."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from retrieval_eval.analysis.evaluation.blocks import JudgmentIndex
from retrieval_eval.model import ID


def _labels(rng, n_queries, n_rows):
    names = [f"q{i}" for i in range(n_queries)] + ["é", "\U0001d52e", "q 1"]
    qids = rng.choice(names, size=n_rows)
    return pd.DataFrame(
        {
            "query_id": pd.array(qids, dtype=ID),
            "doc_uri": pd.array([f"d{i}" for i in range(n_rows)], dtype=ID),
            "chunk_id": pd.array([None] * n_rows, dtype=ID),
            "relevance": rng.integers(0, 3, n_rows),
            "stratum": pd.array(["all"] * n_rows, dtype=ID),
        }
    )


@pytest.mark.parametrize("seed", range(6))
def test_rows_are_each_asked_querys_labels_in_file_order(seed):
    rng = np.random.default_rng(seed)
    labels = _labels(rng, n_queries=int(rng.integers(1, 300)), n_rows=int(rng.integers(1, 2000)))
    index = JudgmentIndex(labels)
    present = list(dict.fromkeys(labels["query_id"]))
    asked = list(rng.choice(present, size=min(len(present), 7), replace=False)) + ["absent", "q-1"]
    rng.shuffle(asked)
    got = index.rows(pa.array(asked))
    # The definition: every label row of an asked query; queries in the index's order, each
    # query's rows in file order.
    order = {q: i for i, q in enumerate(present)}
    want = sorted(
        (i for i, q in enumerate(labels["query_id"]) if q in set(asked)),
        key=lambda i: (order[labels["query_id"][i]], i),
    )
    assert got.tolist() == want
    pd.testing.assert_frame_equal(
        index.take(pa.array(asked)).reset_index(drop=True), labels.iloc[want].reset_index(drop=True)
    )
    assert index.judged(pd.Series(asked, dtype=ID)).tolist() == [q in order for q in asked]


def test_nothing_asked_nothing_found():
    index = JudgmentIndex(_labels(np.random.default_rng(1), 5, 20))
    assert index.rows(pa.array([], type=pa.string())).tolist() == []
    assert index.judged(pd.Series([], dtype=ID)).tolist() == []
