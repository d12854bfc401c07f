"""Label drift after re-chunking (SPEC A5): drift() classifies, fix() re-anchors."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
from conftest import spec_fixtures_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_eval.analysis.drift import DRIFT_STATUSES, DriftResult, drift, fix
from retrieval_eval.identity import chunk_id, normalize, text_sha
from retrieval_eval.io import JUDGMENT_FIELDS as KNOWN

STRING_COLUMNS = [c for c in KNOWN if c != "relevance"]


# -- building frames per docs/data-model.md (independent of the readers) ----------------------


def judgments_frame(rows: list[dict]) -> pd.DataFrame:
    data: dict = {c: pd.array([r.get(c) for r in rows], dtype="string") for c in STRING_COLUMNS}
    data["relevance"] = np.array([r.get("relevance", 1) for r in rows], dtype=np.int64)
    extras = [{k: v for k, v in r.items() if k not in KNOWN} or None for r in rows]
    data["extra"] = pd.Series(extras, dtype=object)
    data["line"] = np.arange(1, len(rows) + 1, dtype=np.int64)
    return pd.DataFrame(data, columns=[*KNOWN, "extra", "line"])


def corpus_frame(chunks: list[dict], fingerprint: str | None = "live/2") -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "chunk_id": pd.array([c["chunk_id"] for c in chunks], dtype="string"),
            "doc_uri": pd.array([c["doc_uri"] for c in chunks], dtype="string"),
            "doc_revision": pd.array([c.get("doc_revision") for c in chunks], dtype="string"),
            "ordinal": pd.array([c.get("ordinal") for c in chunks], dtype="Int64"),
            "text": pd.array([c.get("text") for c in chunks], dtype="string"),
            "text_sha": pd.array([c.get("text_sha") for c in chunks], dtype="string"),
        }
    )
    frame.attrs["corpus_fingerprint"] = fingerprint
    frame.attrs["chunker_fingerprint"] = fingerprint
    return frame


def load_case(case: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    folder = spec_fixtures_dir() / case
    rows = [
        json.loads(line)
        for line in (folder / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("//")
    ]
    raw = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
    corpus = corpus_frame(raw["chunks"], raw.get("corpus_fingerprint"))
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return judgments_frame(rows), corpus, expected


def chunk(doc: str, ordinal: int, text: str, *, cid: str | None = None, sha: bool = True, rev="r2"):
    return {
        "chunk_id": cid or chunk_id(doc, rev, ordinal, text, "live/2"),
        "doc_uri": doc,
        "doc_revision": rev,
        "ordinal": ordinal,
        "text": text,
        "text_sha": text_sha(text) if sha else None,
    }


STALE = "c1:" + "0" * 32
STALE2 = "c1:" + "1" * 32


def label(query_id="q", doc="doc://a", cid=STALE, text=None, sha=None, **more):
    row = {"query_id": query_id, "doc_uri": doc, "relevance": 1, **more}
    if cid is not None:
        row["chunk_id"] = cid
    if text is not None:
        row["chunk_text"] = text
    if sha is not None:
        row["text_sha"] = sha
    return row


def statuses(result: DriftResult) -> list[str]:
    return result.findings["status"].tolist()


# -- conformance fixtures ----------------------------------------------------------------------

CASES = ["drift", "merge"]


@pytest.mark.parametrize("case", CASES)
def test_fixture_statuses_summary_reanchor_split(case):
    judgments, corpus, expected = load_case(case)
    result = drift(judgments, corpus)
    got = dict(zip(result.findings["query_id"], result.findings["status"], strict=True))
    assert got == expected["statuses"]
    assert result.summary.to_dict() == expected["summary"]
    reanchor = {
        q: t for q, t in zip(result.findings["query_id"], result.findings["reanchor_to"], strict=True) if not pd.isna(t)
    }
    assert reanchor == expected.get("reanchor", {})
    split = {
        q: s for q, s in zip(result.findings["query_id"], result.findings["split_into"], strict=True) if s is not None
    }
    assert split == expected.get("split_into", {})


@pytest.mark.parametrize("case", CASES)
def test_fixture_to_dict_is_the_drift_json(case):
    judgments, corpus, expected = load_case(case)
    result = drift(judgments, corpus)
    out = json.loads(json.dumps(result.to_dict()))
    assert list(out) == ["findings", "summary", "judgments_fingerprint", "corpus_fingerprint"]
    assert out["summary"] == expected["summary"]
    assert out["corpus_fingerprint"] == corpus.attrs["corpus_fingerprint"]
    # Every fixture judgment was labeled against one older fingerprint, except q1 in `drift`.
    fps = set(judgments["corpus_fingerprint"].dropna())
    assert out["judgments_fingerprint"] == (fps.pop() if len(fps) == 1 else None)
    for item in out["findings"]:
        assert item["status"] == expected["statuses"][item["query_id"]]
        assert ("reanchor_to" in item) == (item["status"] in ("RE_ANCHORABLE", "MERGED"))
        assert ("split_into" in item) == (item["status"] == "SPLIT")
        assert "chunk_id" in item  # every fixture label is chunk-level
        assert list(item)[:2] == ["query_id", "doc_uri"]


@pytest.mark.parametrize("case", CASES)
def test_fixture_fix_reanchors_stamps_and_leaves_the_rest(case):
    judgments, corpus, expected = load_case(case)
    before = judgments.copy(deep=True)
    result = drift(judgments, corpus)
    fixed = fix(judgments, result)
    out = fixed.judgments
    live_fp = corpus.attrs["corpus_fingerprint"]
    reanchor = expected.get("reanchor", {})
    assert fixed.reanchored == len(reanchor)
    for i, qid in enumerate(judgments["query_id"]):
        status = expected["statuses"][qid]
        if status in ("RE_ANCHORABLE", "MERGED"):
            assert out["chunk_id"].iloc[i] == reanchor[qid]
            assert out["corpus_fingerprint"].iloc[i] == live_fp
        elif status == "VALID":
            assert out["chunk_id"].iloc[i] == judgments["chunk_id"].iloc[i]
            assert out["corpus_fingerprint"].iloc[i] == live_fp
        else:
            pd.testing.assert_frame_equal(out.iloc[[i]], judgments.iloc[[i]])
    review = {q for q, s in expected["statuses"].items() if s in ("SPLIT", "ORPHANED")}
    assert set(fixed.needs_review["query_id"]) == review
    assert set(fixed.needs_review["status"]) <= {"SPLIT", "ORPHANED"}
    pd.testing.assert_frame_equal(judgments, before)  # input not mutated
    again = drift(out, corpus)
    assert again.summary.re_anchorable == 0 and again.summary.merged == 0
    assert again.summary.valid == result.summary.valid + len(reanchor)


def test_fix_keeps_merged_labels_text_and_hash_as_judged():
    judgments, corpus, _ = load_case("merge")
    out = fix(judgments, drift(judgments, corpus)).judgments
    for col in ("chunk_text", "text_sha", "query", "labeled_by", "relevance", "line", "extra"):
        pd.testing.assert_series_equal(out[col], judgments[col])
    assert list(out.columns) == list(judgments.columns)
    assert out.dtypes.equals(judgments.dtypes)


# -- one rule per test -------------------------------------------------------------------------

LIVE_A = [
    chunk("doc://a", 0, "Alpha one. Alpha two."),
    chunk("doc://a", 1, "Beta one."),
    chunk("doc://a", 2, "Gamma one."),
]


def test_document_level_label_valid_while_document_has_live_chunks():
    result = drift(judgments_frame([label(cid=None), label(doc="doc://gone", cid=None)]), corpus_frame(LIVE_A))
    assert statuses(result) == ["VALID", "ORPHANED"]
    assert result.findings["chunk_id"].isna().all()
    assert "chunk_id" not in result.to_dict()["findings"][0]


def test_live_chunk_id_is_valid_even_when_text_fields_disagree():
    result = drift(judgments_frame([label(cid=LIVE_A[1]["chunk_id"], text="something else")]), corpus_frame(LIVE_A))
    assert statuses(result) == ["VALID"]
    assert pd.isna(result.findings["reanchor_to"].iloc[0])


def test_re_anchorable_by_text_sha_alone():
    result = drift(judgments_frame([label(sha=text_sha("Beta one."))]), corpus_frame(LIVE_A))
    assert statuses(result) == ["RE_ANCHORABLE"]
    assert result.findings["reanchor_to"].iloc[0] == LIVE_A[1]["chunk_id"]


def test_re_anchorable_by_hash_of_chunk_text_after_normalization():
    result = drift(judgments_frame([label(text="  Beta one.\r\n")]), corpus_frame(LIVE_A))
    assert statuses(result) == ["RE_ANCHORABLE"]
    assert result.findings["reanchor_to"].iloc[0] == LIVE_A[1]["chunk_id"]


def test_corpus_text_sha_is_computed_from_text_when_absent():
    chunks = [chunk("doc://a", 0, "Beta one.", sha=False)]
    result = drift(judgments_frame([label(sha=text_sha("Beta one."))]), corpus_frame(chunks))
    assert statuses(result) == ["RE_ANCHORABLE"]


def test_re_anchor_prefers_the_same_document_over_earlier_corpus_order():
    chunks = [chunk("doc://b", 0, "Shared text."), chunk("doc://a", 5, "Shared text.")]
    result = drift(judgments_frame([label(text="Shared text.")]), corpus_frame(chunks))
    assert result.findings["reanchor_to"].iloc[0] == chunks[1]["chunk_id"]


def test_re_anchor_to_two_equal_chunks_of_the_document_takes_the_first_in_corpus_order():
    """SPEC A5: the same text twice in a document: the first in corpus order wins, whatever
    the ordinals say (the second chunk here has the lower ordinal)."""
    chunks = [chunk("doc://a", 3, "Twice."), chunk("doc://a", 1, "Twice.")]
    for labeled in (label(text="Twice."), label(sha=text_sha("Twice."))):
        result = drift(judgments_frame([labeled]), corpus_frame(chunks))
        assert result.findings["reanchor_to"].iloc[0] == chunks[0]["chunk_id"]
    result = drift(judgments_frame([label(text="Twice.")]), corpus_frame(chunks[::-1]))
    assert result.findings["reanchor_to"].iloc[0] == chunks[1]["chunk_id"]


def test_re_anchor_to_another_document_takes_first_in_corpus_order():
    chunks = [chunk("doc://c", 9, "Moved."), chunk("doc://b", 0, "Moved.")]
    result = drift(judgments_frame([label(text="Moved.")]), corpus_frame(chunks))
    assert statuses(result) == ["RE_ANCHORABLE"]
    assert result.findings["reanchor_to"].iloc[0] == chunks[0]["chunk_id"]


def test_text_sha_wins_over_chunk_text_for_identity():
    # The hash says Beta; the text says Gamma. The hash is the label's identity.
    result = drift(judgments_frame([label(sha=text_sha("Beta one."), text="Gamma one.")]), corpus_frame(LIVE_A))
    assert result.findings["reanchor_to"].iloc[0] == LIVE_A[1]["chunk_id"]


def test_split_lists_every_piece_in_ordinal_order():
    chunks = [
        chunk("doc://a", 2, "Part two."),
        chunk("doc://a", 1, "Part one."),
        chunk("doc://b", 0, "Part three."),  # another document: never part of the split
        chunk("doc://a", 3, "Unrelated."),
    ]
    labeled = "Part one.\n\nPart two.\n\nPart three."
    result = drift(judgments_frame([label(text=labeled)]), corpus_frame(chunks))
    assert statuses(result) == ["SPLIT"]
    assert result.findings["split_into"].iloc[0] == [chunks[1]["chunk_id"], chunks[0]["chunk_id"]]
    assert pd.isna(result.findings["reanchor_to"].iloc[0])


def test_split_orders_a_chunk_without_ordinal_as_ordinal_zero_ties_in_corpus_order():
    chunks = [
        chunk("doc://a", 1, "Part b."),
        {**chunk("doc://a", 0, "Part c."), "ordinal": None},  # no ordinal: sorts as 0 ...
        chunk("doc://a", 0, "Part a."),  # ... and ties with this one, which comes later
        chunk("doc://a", 2, "Part d."),
    ]
    labeled = "Part a. Part b. Part c. Part d."
    result = drift(judgments_frame([label(text=labeled)]), corpus_frame(chunks))
    assert statuses(result) == ["SPLIT"]
    ids = [c["chunk_id"] for c in chunks]
    assert result.findings["split_into"].iloc[0] == [ids[1], ids[2], ids[0], ids[3]]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["One.", "Two.", "Three."]), st.one_of(st.none(), st.integers(0, 3))),
        min_size=1,
        max_size=7,
    )
)
def test_ties_follow_corpus_order_and_split_follows_ordinals(pieces):
    """Property: a re-anchor to equal text is the first such chunk in corpus order; a SPLIT
    lists its chunks by (ordinal, a missing one as 0; then corpus order)."""
    chunks = [{**chunk("doc://a", i, text, cid=f"c1:{i + 2:032x}"), "ordinal": o} for i, (text, o) in enumerate(pieces)]
    frame = corpus_frame(chunks)
    for text in ("One.", "Two."):
        first = next((c["chunk_id"] for c in chunks if c["text"] == text), None)
        result = drift(judgments_frame([label(text=text)]), frame)
        if first is not None:
            assert result.findings["reanchor_to"].iloc[0] == first
    inside = [(c["ordinal"] or 0, i, c["chunk_id"]) for i, c in enumerate(chunks) if c["text"] in ("One.", "Two.")]
    result = drift(judgments_frame([label(text="One. Two.")]), frame)
    if len(inside) >= 2:
        assert result.findings["split_into"].iloc[0] == [cid for _, _, cid in sorted(inside)]


def test_split_beats_merged():
    chunks = [chunk("doc://a", 0, "One."), chunk("doc://a", 1, "Two."), chunk("doc://a", 2, "Zero. One. Two. Three.")]
    result = drift(judgments_frame([label(text="One. Two.")]), corpus_frame(chunks))
    assert statuses(result) == ["SPLIT"]


def test_one_piece_inside_the_labeled_text_is_not_a_split():
    chunks = [chunk("doc://a", 0, "Part one."), chunk("doc://a", 1, "Elsewhere.")]
    result = drift(judgments_frame([label(text="Part one. Part two.")]), corpus_frame(chunks))
    assert statuses(result) == ["ORPHANED"]


def test_empty_live_chunk_never_occurs_inside_the_labeled_text():
    chunks = [chunk("doc://a", 0, "Part one."), chunk("doc://a", 1, "   "), chunk("doc://a", 2, "")]
    result = drift(judgments_frame([label(text="Part one. Part two.")]), corpus_frame(chunks))
    assert statuses(result) == ["ORPHANED"]


def test_empty_labeled_text_is_contained_in_nothing():
    chunks = [chunk("doc://a", 0, "Anything at all.")]
    result = drift(judgments_frame([label(text=" \n ")]), corpus_frame(chunks))
    assert statuses(result) == ["ORPHANED"]


def test_merged_re_anchors_to_the_shortest_containing_chunk():
    chunks = [
        chunk("doc://a", 0, "Intro. Fact. More text here."),
        chunk("doc://a", 1, "Fact. Tail."),
        chunk("doc://a", 2, "Other."),
    ]
    result = drift(judgments_frame([label(text="Fact.")]), corpus_frame(chunks))
    assert statuses(result) == ["MERGED"]
    assert result.findings["reanchor_to"].iloc[0] == chunks[1]["chunk_id"]


def test_merged_tie_takes_the_first_in_corpus_order():
    chunks = [chunk("doc://a", 4, "Fact. Bbbb."), chunk("doc://a", 2, "Aaaa. Fact.")]
    result = drift(judgments_frame([label(text="Fact.")]), corpus_frame(chunks))
    assert result.findings["reanchor_to"].iloc[0] == chunks[0]["chunk_id"]


def test_merged_only_within_the_same_document():
    chunks = [chunk("doc://b", 0, "Fact. Tail."), chunk("doc://a", 0, "Other.")]
    result = drift(judgments_frame([label(text="Fact.")]), corpus_frame(chunks))
    assert statuses(result) == ["ORPHANED"]


def test_label_with_only_a_hash_cannot_be_split_or_merged():
    # The live chunk plainly contains the old text, but a hash carries no text to search for.
    chunks = [chunk("doc://a", 0, "Fact. Tail.")]
    result = drift(judgments_frame([label(sha=text_sha("Fact."))]), corpus_frame(chunks))
    assert statuses(result) == ["ORPHANED"]


def test_gone_document_is_orphaned():
    result = drift(judgments_frame([label(doc="doc://gone", text="Beta one. and more")]), corpus_frame(LIVE_A))
    assert statuses(result) == ["ORPHANED"]


def test_summary_counts_and_invalid_ratio():
    rows = [
        label(cid=LIVE_A[0]["chunk_id"]),
        label(cid=None),
        label(text="Beta one."),
        label(text="Alpha two."),
        label(text="Nothing."),
        label(text="Beta one. Gamma one."),
    ]
    result = drift(judgments_frame(rows), corpus_frame(LIVE_A))
    assert statuses(result) == ["VALID", "VALID", "RE_ANCHORABLE", "MERGED", "ORPHANED", "SPLIT"]
    assert result.summary.to_dict() == {
        "valid": 2,
        "re_anchorable": 1,
        "merged": 1,
        "split": 1,
        "orphaned": 1,
        "invalid_ratio": round(4 / 6, 12),
    }
    assert result.summary["merged"] == 1


def test_no_judgments_gives_empty_findings_and_zero_ratio():
    result = drift(judgments_frame([]), corpus_frame(LIVE_A))
    assert result.summary.invalid_ratio == 0.0
    assert result.summary.total == 0
    assert list(result.findings.columns) == [
        "query_id",
        "doc_uri",
        "chunk_id",
        "status",
        "reanchor_to",
        "split_into",
        "judgment_index",
    ]
    assert result.to_dict()["findings"] == []


def test_findings_dtypes_and_judgment_order():
    rows = [label(query_id=f"q{i}", text="Nothing.") for i in (3, 1, 2)]
    result = drift(judgments_frame(rows), corpus_frame(LIVE_A))
    f = result.findings
    for col in ("query_id", "doc_uri", "chunk_id", "status", "reanchor_to"):
        assert f[col].dtype == pd.StringDtype()
    assert f["judgment_index"].dtype == np.int64
    assert f["query_id"].tolist() == ["q3", "q1", "q2"]
    assert f["judgment_index"].tolist() == [0, 1, 2]


def test_fingerprints():
    corpus = corpus_frame(LIVE_A, fingerprint=None)
    same = judgments_frame([label(corpus_fingerprint="old/1"), label(corpus_fingerprint="old/1")])
    mixed = judgments_frame([label(corpus_fingerprint="old/1"), label(corpus_fingerprint="old/2")])
    partial = judgments_frame([label(corpus_fingerprint="old/1"), label()])
    assert drift(same, corpus).judgments_fingerprint == "old/1"
    assert drift(mixed, corpus).judgments_fingerprint is None
    assert drift(partial, corpus).judgments_fingerprint == "old/1"
    assert drift(judgments_frame([label()]), corpus).judgments_fingerprint is None
    assert drift(same, corpus).corpus_fingerprint is None
    assert drift(same, corpus, corpus_fingerprint="given").corpus_fingerprint == "given"
    assert drift(same, corpus_frame(LIVE_A, "attr/3"), "given").corpus_fingerprint == "attr/3"


def test_repr_html_is_compact():
    rows = [label(query_id=f"q{i}", doc="doc://gone<b>", text="x") for i in range(100)]
    result = drift(judgments_frame(rows), corpus_frame(LIVE_A))
    page = result._repr_html_()
    assert page.index("ORPHANED") < page.index("q0")  # summary first
    assert page.count("<tr>") <= 2 + 1 + 20
    assert "80 more" in page
    assert "doc://gone&lt;b&gt;" in page
    assert len(repr(result)) < 300  # never the whole frame
    fixed = fix(judgments_frame(rows), result)
    assert "100 need review" in fixed._repr_html_()
    assert fixed._repr_html_().count("<tr>") <= 21


# -- fix ---------------------------------------------------------------------------------------


def test_fix_applies_each_finding_to_its_own_judgment():
    # Same query and same stale chunk_id, different labeled text: one moves, one is orphaned,
    # one is split. Matching findings by (query_id, chunk_id) would mix them up.
    rows = [
        label(text="Alpha two.", notes="merged"),
        label(text="Nothing like it.", notes="orphaned"),
        label(text="Beta one.", notes="exact"),
        label(text="Beta one. Gamma one.", notes="split"),
    ]
    judgments = judgments_frame(rows)
    result = drift(judgments, corpus_frame(LIVE_A))
    assert statuses(result) == ["MERGED", "ORPHANED", "RE_ANCHORABLE", "SPLIT"]
    fixed = fix(judgments, result)
    out = fixed.judgments
    assert out["chunk_id"].tolist() == [LIVE_A[0]["chunk_id"], STALE, LIVE_A[1]["chunk_id"], STALE]
    assert out["notes"].tolist() == ["merged", "orphaned", "exact", "split"]
    assert fixed.reanchored == 2
    assert fixed.needs_review["judgment_index"].tolist() == [1, 3]


def test_fix_two_document_level_labels_of_one_query():
    judgments = judgments_frame([label(cid=None, corpus_fingerprint="old"), label(doc="doc://gone", cid=None)])
    fixed = fix(judgments, drift(judgments, corpus_frame(LIVE_A)))
    assert fixed.judgments["corpus_fingerprint"].tolist() == ["live/2", pd.NA]
    assert fixed.judgments["chunk_id"].isna().all()
    assert fixed.needs_review["doc_uri"].tolist() == ["doc://gone"]


def test_fix_fills_text_sha_for_exact_re_anchor_and_keeps_merged_hash():
    judgments = judgments_frame([label(text="Beta one."), label(text="Alpha two.")])
    out = fix(judgments, drift(judgments, corpus_frame(LIVE_A))).judgments
    assert out["text_sha"].iloc[0] == LIVE_A[1]["text_sha"]
    assert pd.isna(out["text_sha"].iloc[1])  # MERGED: the label's own (absent) hash is kept
    assert out["chunk_text"].tolist() == ["Beta one.", "Alpha two."]


def test_fix_without_a_known_fingerprint_leaves_fingerprints():
    judgments = judgments_frame([label(text="Beta one.", corpus_fingerprint="old/1")])
    result = drift(judgments, corpus_frame(LIVE_A, fingerprint=None))
    out = fix(judgments, result).judgments
    assert out["corpus_fingerprint"].tolist() == ["old/1"]
    assert out["chunk_id"].iloc[0] == LIVE_A[1]["chunk_id"]


def test_fix_does_not_mutate_inputs_and_keeps_extra_and_index():
    judgments = judgments_frame([label(text="Beta one.", custom={"k": [1, 2]}), label(text="Alpha two.", z=1)])
    judgments.index = pd.Index([10, 20])
    before = judgments.copy(deep=True)
    extras = copy.deepcopy(judgments["extra"].tolist())
    result = drift(judgments, corpus_frame(LIVE_A))
    findings_before = result.findings.copy(deep=True)
    out = fix(judgments, result).judgments
    pd.testing.assert_frame_equal(judgments, before)
    assert judgments["extra"].tolist() == extras
    pd.testing.assert_frame_equal(result.findings, findings_before)
    assert out is not judgments
    assert out.index.tolist() == [10, 20]
    assert out["extra"].tolist() == extras
    assert out["chunk_id"].tolist() == [LIVE_A[1]["chunk_id"], LIVE_A[0]["chunk_id"]]


def test_fix_refuses_a_result_for_other_judgments():
    judgments = judgments_frame([label(text="Beta one."), label(text="Alpha two.")])
    result = drift(judgments, corpus_frame(LIVE_A))
    with pytest.raises(ValueError, match="drift"):
        fix(judgments.iloc[:1], result)
    with pytest.raises(ValueError, match="drift"):
        fix(judgments.iloc[::-1].reset_index(drop=True).assign(query_id=["a", "b"]), result)


# -- property: re-chunk a document at random ---------------------------------------------------

SENTENCES = ["Refunds take 30 days.", "Plans renew yearly.", "Refunds take 3 days.", "Ask us."]


@st.composite
def rechunked(draw):
    """Random documents chunked twice at random boundaries, and labels on the old chunks."""
    n_docs = draw(st.integers(1, 3))
    old_chunks, new_chunks = [], []
    for d in range(n_docs):
        doc = f"doc://{d}"
        sents = draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=7))
        # A new revision changes every chunk_id, even where the text did not change.
        new_rev = draw(st.sampled_from(["r2", "r3"]))
        for version, out in (("old", old_chunks), ("new", new_chunks)):
            cuts = sorted(draw(st.sets(st.integers(1, max(1, len(sents) - 1)))))
            bounds = [0, *[c for c in cuts if c < len(sents)], len(sents)]
            pieces = [" ".join(sents[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
            for o, piece in enumerate(pieces):
                text = piece
                if version == "old":  # old text differs only in what normalize removes ...
                    pad = draw(st.sampled_from(["", " ", "\r\n", "\n\t"]))
                    text = pad + piece + pad[::-1]
                    if draw(st.integers(0, 5)) == 0:  # ... or, now and then, in its spacing
                        text = text.replace(" ", "\r\n", 1)
                out.append(chunk(doc, o, text, rev="r2" if version == "old" else new_rev))
    gone = {draw(st.sampled_from([-1, -1, -1, 0]))}
    new_chunks = [c for c in new_chunks if int(c["doc_uri"].rsplit("/", 1)[1]) not in gone]
    picks = draw(st.lists(st.integers(0, len(old_chunks) - 1), min_size=1, max_size=8))
    rows = []
    for n, i in enumerate(picks):
        c = old_chunks[i]
        with_sha = draw(st.booleans())
        rows.append(
            label(
                query_id=f"q{n % 3}",
                doc=c["doc_uri"],
                cid=c["chunk_id"],
                text=c["text"],
                sha=c["text_sha"] if with_sha else None,
                corpus_fingerprint="old/1",
            )
        )
    return judgments_frame(rows), corpus_frame(new_chunks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rechunked())
def test_fix_never_touches_split_or_orphaned_and_reanchors_to_containing_text(case):
    judgments, corpus = case
    before = judgments.copy(deep=True)
    result = drift(judgments, corpus)
    fixed = fix(judgments, result)
    out = fixed.judgments
    pd.testing.assert_frame_equal(judgments, before)
    live_text = dict(zip(corpus["chunk_id"], corpus["text"], strict=True))
    status = result.findings["status"].tolist()
    assert set(status) <= set(DRIFT_STATUSES)
    review = fixed.needs_review
    torn = set(review.loc[review["status"] == "GRADE_CONFLICT", "judgment_index"].tolist())
    kept = set(out.index.tolist())
    assert len(kept) + fixed.collapsed == len(judgments)
    for i, s in enumerate(status):
        if i not in kept:  # collapsed into an earlier label of the same query, chunk and grade
            assert s in ("RE_ANCHORABLE", "MERGED", "VALID")
            continue
        if s in ("SPLIT", "ORPHANED") or i in torn:
            pd.testing.assert_frame_equal(out.loc[[i]], judgments.iloc[[i]])
        elif s in ("RE_ANCHORABLE", "MERGED"):
            target = out.loc[i, "chunk_id"]
            assert target in live_text
            assert normalize(judgments["chunk_text"].iloc[i]) in normalize(live_text[target])
            assert out.loc[i, "corpus_fingerprint"] == "live/2"
        else:
            assert out.loc[i, "chunk_id"] == judgments["chunk_id"].iloc[i]
        if s == "SPLIT":
            pieces = result.findings["split_into"].iloc[i]
            assert len(pieces) >= 2
            labeled = normalize(judgments["chunk_text"].iloc[i])
            assert all(normalize(live_text[p]) in labeled for p in pieces)
    moved = status.count("RE_ANCHORABLE") + status.count("MERGED")
    assert fixed.reanchored <= moved - len(torn)
    # no duplicate (query, chunk) the input did not already have
    pairs = out[["query_id", "chunk_id"]].astype(object)
    assert pairs.duplicated().sum() <= judgments[["query_id", "chunk_id"]].astype(object).duplicated().sum()
    again = drift(out, corpus)
    assert again.summary.re_anchorable + again.summary.merged == len(torn)
    assert again.summary.split == result.summary.split
    assert again.summary.orphaned == result.summary.orphaned


@pytest.mark.parametrize("case", CASES)
def test_accepts_paths_and_wire_format(case):
    folder = spec_fixtures_dir() / case
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    from_paths = drift(folder / "judgments.jsonl", folder / "corpus.json")
    rows = [json.loads(line) for line in (folder / "judgments.jsonl").read_text().splitlines()]
    wire = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
    from_dicts = drift(rows, wire)
    for result in (from_paths, from_dicts):
        assert result.summary.to_dict() == expected["summary"]
        assert result.corpus_fingerprint == wire["corpus_fingerprint"]
    assert from_paths.to_dict() == from_dicts.to_dict()
    fixed = fix(rows, from_dicts)
    assert fixed.reanchored == len(expected.get("reanchor", {}))


def test_python_backed_strings_give_the_same_result():
    # pandas 2.2 without pyarrow stores "string" in Python objects; lookups must not care.
    judgments, corpus, expected = load_case("drift")
    py = pd.StringDtype("python")
    j2 = judgments.astype({c: py for c in STRING_COLUMNS})
    c2 = corpus.astype({c: py for c in ("chunk_id", "doc_uri", "doc_revision", "text", "text_sha")})
    c2.attrs = dict(corpus.attrs)
    assert drift(j2, c2).to_dict() == drift(judgments, corpus).to_dict()
    from retrieval_eval.analysis.drift.drift_match import isin as _isin

    values = pd.Series(["a", None, "b", "c"], dtype=py)
    pool = pd.Series(["c", None, "a", "a"], dtype="string")
    assert _isin(values, pool).tolist() == [True, False, False, True]
    assert _isin(values, np.array(["b"], dtype=object)).tolist() == [False, False, True, False]
