"""``rows_of``: the rows of a frame taken chunk by chunk equal pandas' ``iloc``."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from retrieval_eval.io.columns import rows_of
from retrieval_eval.model import ID


def _chunked_frame() -> pd.DataFrame:
    ids = pa.chunked_array([["q1", "q1", "q2"], [], ["q3", None, "q4", "q4"]], type=pa.large_string())
    docs = pa.chunked_array([["d1", "d2", "d3"], ["d4", "d5", "d6", "d7"]])
    return pd.DataFrame(
        {
            "query_id": pd.array(ids.cast(pa.string()), dtype=ID)
            if ID.storage == "pyarrow"
            else pd.array(ids.to_pylist(), dtype=ID),
            "doc_uri": pd.array(docs, dtype=ID) if ID.storage == "pyarrow" else pd.array(docs.to_pylist(), dtype=ID),
            "score": np.arange(7, dtype=np.float64) / 2,
            "rank": np.arange(1, 8, dtype=np.int64),
        },
        index=np.arange(10, 17),
    )


@pytest.mark.parametrize("rows", [[], [0], [6, 0, 3], [3, 3, 2, 5, 4, 6], list(range(7))])
def test_equal_to_iloc(rows):
    frame = _chunked_frame()
    got = rows_of(frame, np.array(rows, dtype=np.int64))
    want = frame.iloc[rows].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    assert list(got.dtypes) == list(frame.dtypes)


def test_input_not_changed():
    frame = _chunked_frame()
    before = frame.copy()
    rows_of(frame, np.array([1, 4]))
    pd.testing.assert_frame_equal(frame, before)
