"""The io layer's layout (issue 13): one home per name, the data model's rules in model.py."""

from __future__ import annotations

import pandas as pd

import retrieval_eval as rev
import retrieval_eval.io as rio
from retrieval_eval import model
from retrieval_eval.engine import metrics


def test_the_io_package_exports_the_names_the_top_level_exports():
    for name in rio.__all__:
        obj = getattr(rio, name)
        if hasattr(rev, name):
            assert getattr(rev, name) is obj, name


def test_the_schemas_and_empty_frames_live_in_the_model():
    assert rio.RUN_COLUMNS is model.RUN_COLUMNS and rio.empty_run is model.empty_run
    for empty, columns in (
        (model.empty_judgments, model.JUDGMENT_COLUMNS),
        (model.empty_run, model.RUN_COLUMNS),
        (model.empty_queries, model.QUERY_COLUMNS),
        (model.empty_corpus, model.CORPUS_COLUMNS),
    ):
        frame = empty()
        assert len(frame) == 0 and list(frame.columns) == list(columns)
    for required, columns in (
        (model.JUDGMENT_REQUIRED, model.JUDGMENT_COLUMNS),
        (model.RUN_REQUIRED, model.RUN_COLUMNS),
        (model.QUERY_REQUIRED, model.QUERY_COLUMNS),
        (model.CORPUS_REQUIRED, model.CORPUS_COLUMNS),
    ):
        assert set(required) <= set(columns)


def test_judgment_key_is_chunk_id_else_doc_uri_and_the_engine_uses_that_rule():
    j = pd.DataFrame({"doc_uri": ["d1", "d2", "d3"], "chunk_id": [None, "d2#4", ""]}, dtype=model.ID)
    assert model.judgment_keys(j).tolist() == ["d1", "d2#4", ""]
    assert model.judgment_keys(j).dtype == model.ID
    assert metrics.judgment_keys is model.judgment_keys


def test_a_frame_without_a_required_column_names_it():
    for fn, frame, missing in (
        (rio.as_judgments, pd.DataFrame({"query_id": ["q"], "relevance": [1]}), "doc_uri"),
        (rio.as_run, pd.DataFrame({"query_id": ["q"]}), "doc_id"),
        (rio.as_queries, pd.DataFrame({"query": ["x"]}), "query_id"),
        (rio.as_corpus, pd.DataFrame({"chunk_id": ["c"]}), "doc_uri"),
    ):
        try:
            fn(frame)
        except rev.FormatError as err:
            assert f"missing column {missing}" in str(err)
        else:
            raise AssertionError(f"{fn.__name__} took a frame without {missing}")
