"""validate lists its issues in file order, then by code (issue 28, item 9)."""

from __future__ import annotations

import json

import retrieval_eval as rev
from retrieval_eval.analysis.trust.validation import validate

GOOD = "c1:" + "a" * 32


def _text(rows: list[dict]) -> str:
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def _row(q, cid, grade=1, query="text", **more):
    return {"query_id": q, "query": query, "doc_uri": "d", "chunk_id": cid, "relevance": grade, **more}


def test_issues_of_one_label_come_by_code():
    # the second label repeats the first and is also a malformed id and hash:
    # bad-chunk-id < bad-text-sha < duplicate-label < inconsistent-query-text
    rows = [_row("q1", "bad"), _row("q1", "bad", query="other", text_sha="t1:nothex")]
    codes = [i.code for i in validate(rev.parse_judgments(_text(rows))).errors]
    assert codes == ["bad-chunk-id", "bad-chunk-id", "bad-text-sha", "duplicate-label", "inconsistent-query-text"]


def test_issues_follow_the_file_even_when_the_frame_was_sorted():
    rows = [_row("q2", "x2"), _row("q1", GOOD), _row("q3", "x3"), _row("q1", "x1")]
    frame = rev.parse_judgments(_text(rows))
    by_query = frame.sort_values("query_id", kind="stable")
    messages = [i.message for i in validate(by_query).errors]
    assert messages == [f"malformed chunk_id on query {q}: {c}" for q, c in [("q2", "x2"), ("q3", "x3"), ("q1", "x1")]]
    assert [i.to_dict() for i in validate(by_query).issues] == [i.to_dict() for i in validate(frame).issues]
