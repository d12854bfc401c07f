"""calibration_cases: the positives a cutoff rejects and the expect_none queries it lets
through, with their top-1 passage (issue 29, item 5). Oracle: the rule by hand from the top-1
scores and the calibrated cutoff."""

from __future__ import annotations

import pandas as pd
import pytest

import retrieval_eval as rev


@pytest.fixture(scope="module")
def demo():
    d = rev.load_demo()
    return d, rev.calibrate(d.judgments, d.runs, queries=d.queries)


def test_cases_are_the_wrong_side_of_the_cutoff_by_hand(demo):
    d, cal = demo
    cases = rev.calibration_cases(cal, corpus=d.corpus)
    top1 = rev.dedupe_run(d.runs, 1)
    negatives = set(d.queries.loc[d.queries["expect_none"], "query_id"])
    positives = set(d.judgments.loc[d.judgments["relevance"] >= 1, "query_id"])
    for system in cal.systems:
        cut = cal.cutoff(system)
        mine = top1[top1["system"] == system]
        want = {(q, "rejected positive") for q, s in zip(mine["query_id"], mine["score"]) if q in positives and s < cut}
        want |= {
            (q, "accepted negative") for q, s in zip(mine["query_id"], mine["score"]) if q in negatives and s >= cut
        }
        got = cases[cases["system"] == system]
        assert set(zip(got["query_id"], got["case"])) == want, system


def test_each_case_has_its_top1_passage_score_and_margin(demo):
    d, cal = demo
    cases = rev.calibration_cases(cal, corpus=d.corpus, system="dense")
    corpus = d.corpus.set_index("chunk_id")["text"]
    top1 = rev.dedupe_run(d.runs[d.runs["system"] == "dense"], 1).set_index("query_id")
    for r in cases.itertuples(index=False):
        assert r.top1_doc_id == top1.loc[r.query_id, "doc_id"]
        assert r.top1_score == pytest.approx(top1.loc[r.query_id, "score"])
        assert r.margin == pytest.approx(r.top1_score - r.cutoff)
        assert r.top1_text == corpus.loc[r.top1_doc_id]
    assert set(cases["system"]) == {"dense"}


def test_closest_calls_first(demo):
    _, cal = demo
    cases = rev.calibration_cases(cal)
    for _, g in cases.groupby(["system", "case"]):
        assert g["margin"].abs().is_monotonic_increasing
    assert cases["top1_text"].isna().all()  # no corpus, no labels: no text, not made up
    assert str(cases["query_id"].dtype) == "string"


def test_text_falls_back_to_the_labels_chunk_text(demo):
    d, cal = demo
    cases = rev.calibration_cases(cal, judgments=d.judgments)
    known = set(d.judgments["chunk_id"])
    with_text = cases[cases["top1_doc_id"].isin(known)]
    assert len(with_text) and with_text["top1_text"].notna().all()


def test_unknown_system_is_one_clear_error(demo):
    _, cal = demo
    with pytest.raises(ValueError, match="unknown system 'nope'"):
        rev.calibration_cases(cal, system="nope")


def test_columns_are_stable(demo):
    _, cal = demo
    cases = rev.calibration_cases(cal)
    assert list(cases.columns) == [
        "system",
        "case",
        "query_id",
        "stratum",
        "query",
        "top1_doc_id",
        "top1_score",
        "cutoff",
        "margin",
        "top1_text",
    ]
    assert isinstance(cases, pd.DataFrame)
