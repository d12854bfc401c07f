"""fix() never writes two labels of one query on one chunk (issue 28, item 1).

Two labels re-anchored onto the same live chunk (two passages merged into one chunk, or a
re-anchored label landing on a chunk another label already names) would make a duplicate label,
which validate rejects. Equal grades collapse to the first label; different grades stay as they
were and go to a person as GRADE_CONFLICT.
"""

from __future__ import annotations

import json

import pandas as pd

import retrieval_eval as rev
from retrieval_eval.analysis.drift import drift, fix
from retrieval_eval.analysis.trust.validation import validate
from retrieval_eval.identity import chunk_id, text_sha

DEMO = rev.load_demo()


def _frame(rows: list[dict]) -> pd.DataFrame:
    return rev.parse_judgments("\n".join(json.dumps(r) for r in rows) + "\n")


def _corpus(chunks: list[tuple[str, int, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "chunk_id": pd.array([chunk_id(d, "r2", o, t, "live/2") for d, o, t in chunks], dtype="string"),
            "doc_uri": pd.array([d for d, _, _ in chunks], dtype="string"),
            "ordinal": pd.array([o for _, o, _ in chunks], dtype="Int64"),
            "text": pd.array([t for _, _, t in chunks], dtype="string"),
            "text_sha": pd.array([text_sha(t) for _, _, t in chunks], dtype="string"),
        }
    )
    frame.attrs["corpus_fingerprint"] = "live/2"
    return frame


STALE = ["c1:" + c * 32 for c in "0123"]
MERGED_CORPUS = _corpus([("doc://a", 0, "Alpha one. Alpha two."), ("doc://a", 1, "Beta one.")])
MERGED_ID = MERGED_CORPUS["chunk_id"].iloc[0]


def _label(cid, text, grade, **more):
    return {"query_id": "q", "doc_uri": "doc://a", "chunk_id": cid, "chunk_text": text, "relevance": grade, **more}


def test_two_merged_labels_of_one_grade_collapse_to_the_first():
    j = _frame(
        [
            _label(STALE[0], "Alpha one.", 2, labeled_by="human:ann"),
            _label(STALE[1], "Alpha two.", 2, labeled_by="human:bob"),
        ]
    )
    result = drift(j, MERGED_CORPUS)
    assert result.findings["status"].tolist() == ["MERGED", "MERGED"]
    fixed = fix(j, result)
    out = fixed.judgments
    assert len(out) == 1 and fixed.collapsed == 1 and fixed.reanchored == 1
    assert out["chunk_id"].tolist() == [MERGED_ID]
    assert out["labeled_by"].tolist() == ["human:ann"]  # the first's provenance
    assert out["chunk_text"].tolist() == ["Alpha one."]
    assert len(fixed.needs_review) == 0
    assert validate(out).ok


def test_two_merged_labels_of_different_grades_stay_as_they_were_for_review():
    j = _frame([_label(STALE[0], "Alpha one.", 2), _label(STALE[1], "Alpha two.", 1)])
    fixed = fix(j, drift(j, MERGED_CORPUS))
    out = fixed.judgments
    assert out["chunk_id"].tolist() == STALE[:2]
    pd.testing.assert_frame_equal(
        out[["query_id", "chunk_id", "relevance", "corpus_fingerprint"]],
        j[["query_id", "chunk_id", "relevance", "corpus_fingerprint"]],
    )
    assert fixed.reanchored == 0 and fixed.collapsed == 0
    review = fixed.needs_review
    assert review["status"].tolist() == ["GRADE_CONFLICT", "GRADE_CONFLICT"]
    assert review["judgment_index"].tolist() == [0, 1]
    for reason in review["reason"]:
        assert MERGED_ID in reason and "grades 2 and 1" in reason
    assert validate(out).ok


def test_a_reanchor_onto_a_valid_label_of_another_grade_is_a_conflict():
    j = _frame([_label(MERGED_ID, "Alpha one. Alpha two.", 3), _label(STALE[0], "Alpha two.", 1)])
    result = drift(j, MERGED_CORPUS)
    assert result.findings["status"].tolist() == ["VALID", "MERGED"]
    fixed = fix(j, result)
    assert fixed.judgments["chunk_id"].tolist() == [MERGED_ID, STALE[0]]
    assert fixed.needs_review["status"].tolist() == ["GRADE_CONFLICT"]
    assert "grades 3 and 1" in fixed.needs_review["reason"].iloc[0]
    assert validate(fixed.judgments).ok


def test_labels_of_other_queries_on_the_same_chunk_do_not_collide():
    j = _frame([_label(STALE[0], "Alpha one.", 2), {**_label(STALE[1], "Alpha two.", 1), "query_id": "p"}])
    fixed = fix(j, drift(j, MERGED_CORPUS))
    assert fixed.judgments["chunk_id"].tolist() == [MERGED_ID, MERGED_ID]
    assert fixed.reanchored == 2 and fixed.collapsed == 0 and len(fixed.needs_review) == 0


def test_the_demo_rechunk_fix_passes_validate():
    # judgments.jsonl against corpus_v2.json: st-05 (grades 3, 2) and st-10 (3, 1) merge two
    # labels of different grades into one chunk; ex-01 and ex-09 two labels of grade 3 each.
    j = DEMO.judgments
    fixed = fix(j, drift(j, DEMO.corpus_v2))
    assert validate(fixed.judgments).ok
    assert fixed.collapsed == 2
    assert len(fixed.judgments) == len(j) - 2
    review = fixed.needs_review
    torn = review[review["status"] == "GRADE_CONFLICT"]
    assert torn["query_id"].tolist() == ["st-05", "st-05", "st-10", "st-10"]
    assert torn["judgment_index"].tolist() == [19, 20, 43, 46]
    assert all("grades 3 and 2" in r for r in torn["reason"].iloc[:2])
    assert all("grades 3 and 1" in r for r in torn["reason"].iloc[2:])
    # the conflicting labels are exactly as they were; the first of each collapsed pair stays
    for i in (19, 20, 43, 46):
        pd.testing.assert_series_equal(fixed.judgments.loc[i], j.loc[i])
    assert 54 in fixed.judgments.index and 55 not in fixed.judgments.index
    assert 89 in fixed.judgments.index and 90 not in fixed.judgments.index
    assert fixed.judgments.loc[54, "labeled_at"] == j.loc[54, "labeled_at"]
    assert fixed.judgments.loc[54, "chunk_text"] == j.loc[54, "chunk_text"]


def test_review_records_name_status_and_reason():
    j = _frame([_label(STALE[0], "Alpha one.", 2), _label(STALE[1], "Alpha two.", 1)])
    records = fix(j, drift(j, MERGED_CORPUS)).review_records()
    assert [r["status"] for r in records] == ["GRADE_CONFLICT"] * 2
    assert set(records[0]) == {"query_id", "doc_uri", "chunk_id", "status", "reason"}


def test_labels_that_were_already_duplicates_are_left_to_validate():
    # two labels of one (query, chunk) in the input: fix moves both and settles nothing; the
    # duplicate is the input's, and validate reports it before and after alike
    j = _frame([_label(STALE[0], "Alpha one.", 2), _label(STALE[0], "Alpha one.", 1)])
    fixed = fix(j, drift(j, MERGED_CORPUS))
    assert fixed.judgments["chunk_id"].tolist() == [MERGED_ID, MERGED_ID]
    assert fixed.collapsed == 0 and len(fixed.needs_review) == 0 and fixed.reanchored == 2
    assert [i.code for i in validate(j).errors] == [i.code for i in validate(fixed.judgments).errors]
