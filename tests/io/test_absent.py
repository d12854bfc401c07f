"""SPEC A2: an optional string field that is empty ("") means the same as an absent one.

Each test names the rule it pins; the oracle is always the same input with the field left out
(hand-written expectations where the field makes a visible difference).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrieval_eval as re_
from retrieval_eval.analysis.drift import drift
from retrieval_eval.identity import chunk_id, text_sha
from retrieval_eval.viz.plotting import StratumDisplay

K = 3


def _j(qid, doc, rel, **more):
    return {"query_id": qid, "doc_uri": doc, "relevance": rel, **more}


def _strata_case(blank: str | None):
    """Judgments whose q1 and q2 have no stratum (written as ``blank``: "" or left out), q3 is
    literally ``_unstratified`` and q4 is ``legal``; a run that finds q1, q2 and q3 only."""

    def s(value):
        return {} if value is None else {"stratum": value}

    judgments = [
        _j("q1", "a", 1, query="one", **s(blank)),
        _j("q2", "b", 1, query="two", **s(blank)),
        _j("q3", "c", 1, query="three", stratum="_unstratified"),
        _j("q4", "d", 1, query="four", stratum="legal"),
    ]
    run = [{"query_id": q, "ranking": [d, "x"]} for q, d in (("q1", "a"), ("q2", "b"), ("q3", "c"))]
    run.append({"query_id": "q4", "ranking": ["x", "y"]})
    return judgments, run


def test_empty_stratum_is_the_unstratified_stratum_everywhere():
    judgments, run = _strata_case("")
    by_stratum = re_.score_by_stratum(judgments, run, k=K)
    # '' and the literal _unstratified are one stratum of three queries.
    assert list(by_stratum) == ["_unstratified", "legal"]
    assert by_stratum["_unstratified"].n == 3
    assert by_stratum["_unstratified"].metrics[f"recall@{K}"].value == 1.0
    ev = re_.evaluate(judgments, run, k=(K,))
    assert list(ev.per_stratum.index.get_level_values("stratum")) == ["_unstratified", "legal"]
    assert set(ev.per_query["stratum"]) == {"_unstratified", "legal"}
    report = ev.report().to_dict()
    assert list(report["per_stratum"]) == ["_unstratified", "legal"]
    assert re_.worst_stratum(by_stratum, f"recall@{K}")["name"] == "legal"
    assert ev.worst_stratum(f"recall@{K}")["name"] == "legal"
    display = StratumDisplay.from_evaluation(ev, "recall")
    assert display.strata == ["_unstratified", "legal"]
    # validate: one thin named stratum (legal); no stratum '' to warn about.
    result = re_.validate(judgments)
    assert result.strata == {"_unstratified": 3, "legal": 1}
    assert [i.message for i in result.issues if i.code == "thin-stratum"] == [
        "stratum 'legal' has only 1 labels, too few to gate on"
    ]
    scored = [{**r, "scores": [0.9, 0.1]} for r in run] + [{"query_id": "q5", "ranking": ["z"], "scores": [0.2]}]
    cal = re_.calibrate(judgments, scored, queries=[{"query_id": "q5", "stratum": "", "expect_none": True}])
    assert set(cal.per_stratum["stratum"]) == {"_unstratified", "legal"}
    assert "" not in set(cal.per_stratum["stratum"])


def test_empty_stratum_scores_exactly_as_an_absent_one():
    with_blank, run = _strata_case("")
    without, _ = _strata_case(None)
    a, b = re_.evaluate(with_blank, run, k=(1, K)), re_.evaluate(without, run, k=(1, K))
    pd.testing.assert_frame_equal(a.per_query, b.per_query)
    pd.testing.assert_frame_equal(a.per_stratum, b.per_stratum)
    ra, rb = a.report(now=None).to_dict(), b.report(now=None).to_dict()
    ra.pop("generated_at"), rb.pop("generated_at")
    assert ra == rb


def test_empty_stratum_in_a_queries_file_is_no_stratum():
    judgments = [_j("q1", "a", 1), _j("q2", "b", 1)]
    run = [{"query_id": "q1", "ranking": ["a"]}, {"query_id": "q2", "ranking": ["x"]}]
    queries = [
        {"query_id": "q1", "query": "one", "stratum": ""},
        {"query_id": "q2", "query": "two", "stratum": "legal"},
    ]
    ev = re_.evaluate(judgments, run, k=(K,), queries=queries)
    assert ev.per_query["stratum"].tolist() == ["_unstratified", "legal"]


def test_empty_fingerprint_is_no_fingerprint():
    judgments = [
        _j("q1", "a", 1, query="one", corpus_fingerprint="corpus/1", labeled_by="human:x"),
        _j("q1", "b", 0, query="one", corpus_fingerprint="", labeled_by=""),
    ]
    result = re_.validate(judgments)
    assert "mixed-fingerprints" not in {i.code for i in result.issues}
    assert result.fingerprint == "corpus/1"
    assert (result.human_labels, result.synthetic_labels) == (1, 0)
    corpus = {
        "corpus_fingerprint": "",
        "chunks": [{"chunk_id": chunk_id("a", "", 0, "A.", ""), "doc_uri": "a", "text": "A."}],
    }
    d = drift(judgments, re_.as_corpus(corpus))
    assert d.judgments_fingerprint == "corpus/1"
    assert d.corpus_fingerprint is None
    report = re_.build_report(judgments, [{"query_id": "q1", "ranking": ["a"]}], k=K, corpus=corpus).to_dict()
    assert report["corpus"]["fingerprint"] is None
    assert report["judgments"]["fingerprint"] == "corpus/1"


def test_empty_text_sha_falls_back_to_the_hash_of_chunk_text():
    live = {
        "chunk_id": chunk_id("doc", "r2", 0, "Moved text.", "live"),
        "doc_uri": "doc",
        "ordinal": 0,
        "text": "Moved text.",
    }
    corpus = re_.as_corpus({"corpus_fingerprint": "live", "chunks": [live]})
    stale = "c1:" + "0" * 32
    blank = [_j("q", "doc", 1, query="q", chunk_id=stale, text_sha="", chunk_text="Moved text.")]
    absent = [_j("q", "doc", 1, query="q", chunk_id=stale, chunk_text="Moved text.")]
    for judgments in (blank, absent):
        d = drift(judgments, corpus)
        assert d.findings["status"].tolist() == ["RE_ANCHORABLE"]
        assert d.findings["reanchor_to"].tolist() == [live["chunk_id"]]
    # validate: an empty text_sha is no text_sha, not a malformed one.
    assert "bad-text-sha" not in {i.code for i in re_.validate(blank).issues}
    # fix fills the hash in, as it does for a missing one.
    fixed = re_.fix(re_.as_judgments(blank), drift(blank, corpus)).judgments
    assert fixed["text_sha"].tolist() == [text_sha("Moved text.")]
    # A corpus chunk's empty text_sha is the hash of its text, too.
    corpus2 = re_.as_corpus({"corpus_fingerprint": "live", "chunks": [{**live, "text_sha": ""}]})
    assert drift(blank, corpus2).findings["status"].tolist() == ["RE_ANCHORABLE"]


def test_empty_chunk_id_is_a_document_level_label():
    judgments = [_j("q", "doc", 1, query="q", chunk_id="")]
    corpus = re_.as_corpus({"chunks": [{"chunk_id": chunk_id("doc", "", 0, "T.", ""), "doc_uri": "doc", "text": "T."}]})
    d = drift(judgments, corpus)
    assert d.findings["status"].tolist() == ["VALID"]
    assert d.findings["chunk_id"].tolist() == [""]  # the finding shows the label as written
    issues = {i.code for i in re_.validate(judgments).issues}
    assert "bad-chunk-id" not in issues and "no-chunk-ids" in issues
    # The key is the doc_uri: a ranking of documents finds it.
    assert re_.score(judgments, [{"query_id": "q", "ranking": ["doc"]}], k=K).metrics[f"recall@{K}"].value == 1.0
    assert re_.judgment_key({"doc_uri": "doc", "chunk_id": ""}) == "doc"


def test_empty_query_text_is_no_query_text():
    judgments = [_j("q1", "a", 1, query=""), _j("q1", "b", 0, query="words"), _j("q2", "c", 1, query="")]
    codes = [(i.code, i.message) for i in re_.validate(judgments).issues]
    assert ("missing-query-text", "query q2 has no query text on any row") in codes
    assert "inconsistent-query-text" not in {c for c, _ in codes}


def test_reading_keeps_empty_fields_as_written(tmp_path):
    text = (
        '{"query_id":"q1","query":"","doc_uri":"a","text_sha":"","chunk_text":"",'
        '"relevance":1,"corpus_fingerprint":"","labeled_by":"","stratum":"","notes":""}\n'
    )
    path = tmp_path / "judgments.jsonl"
    path.write_text(text, encoding="utf-8")
    judgments = re_.read_judgments(path)
    assert judgments.loc[0, "stratum"] == ""
    assert re_.serialize_judgments(judgments) == text
    queries = re_.read_queries(_write(tmp_path / "q.jsonl", '{"query_id":"q1","query":"","stratum":""}\n'))
    assert json.loads(re_.write_queries(queries)) == {"query_id": "q1", "query": "", "stratum": ""}
    corpus = {
        "corpus_fingerprint": "",
        "chunks": [{"chunk_id": "c1:" + "0" * 32, "doc_uri": "d", "doc_revision": "", "text": "", "text_sha": ""}],
    }
    assert json.loads(re_.write_corpus(re_.as_corpus(corpus))) == corpus


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


FIELDS = ("query", "stratum", "corpus_fingerprint", "labeled_by", "notes", "text_sha", "chunk_text")


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["q1", "q2", "q3"]),
            st.sampled_from(["a", "b", "c"]),
            st.integers(0, 2),
            st.sets(st.sampled_from(FIELDS)),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_property_blank_fields_change_nothing(rows):
    """Any set of optional fields written as "" gives the same scores, strata, validation and
    drift as the same fields left out."""
    blank = [_j(q, d, r, **{f: "" for f in fields}) for q, d, r, fields in rows]
    absent = [_j(q, d, r) for q, d, r, _ in rows]
    run = [{"query_id": "q1", "ranking": ["a", "b"]}, {"query_id": "q2", "ranking": ["c", "a"]}]
    a, b = re_.evaluate(blank, run, k=(1, 2)), re_.evaluate(absent, run, k=(1, 2))
    pd.testing.assert_frame_equal(a.per_query, b.per_query)
    pd.testing.assert_frame_equal(a.per_stratum, b.per_stratum)
    va, vb = re_.validate(blank).to_dict(), re_.validate(absent).to_dict()
    assert va == vb
    corpus = re_.as_corpus(
        {
            "corpus_fingerprint": "live",
            "chunks": [{"chunk_id": chunk_id(d, "", 0, d, ""), "doc_uri": d, "text": d} for d in "ab"],
        }
    )
    da, db = drift(blank, corpus), drift(absent, corpus)
    assert da.findings["status"].tolist() == db.findings["status"].tolist()
    assert da.judgments_fingerprint == db.judgments_fingerprint


@pytest.mark.parametrize("value", ["", None])
def test_blank_as_missing_never_mutates(value):
    from retrieval_eval.io.absent import judgments_meaning

    j = re_.as_judgments([_j("q", "a", 1, stratum=value)] if value is not None else [_j("q", "a", 1)])
    before = j.copy()
    judgments_meaning(j)
    pd.testing.assert_frame_equal(j, before)
