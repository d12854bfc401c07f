"""The bundled demo dataset: shape, identity, labels, runs and drift, checked from the files."""

from __future__ import annotations

import importlib.util
import json
import math
import platform
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from retrieval_eval import identity
from retrieval_eval.analysis.drift import drift
from retrieval_eval.datasets import DEMO_FILES, Demo, demo_path, load_demo
from retrieval_eval.io import serialize_judgments

REPO = Path(__file__).resolve().parents[2]
SYSTEMS = {"dense", "bm25", "rrf"}
POSITIVE_STRATA = {"statements", "expressions", "data-model", "builtin-types"}
NEGATIVE_STRATA = {"off-topic", "near-miss"}


@pytest.fixture(scope="module")
def demo() -> Demo:
    return load_demo()


def _raw_corpus(name: str) -> dict:
    return json.loads(demo_path(name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ loading


def test_load_demo_returns_the_documented_frames(demo):
    assert list(demo.judgments.columns[:12]) == [
        "query_id",
        "query",
        "doc_uri",
        "chunk_id",
        "text_sha",
        "chunk_text",
        "relevance",
        "corpus_fingerprint",
        "labeled_by",
        "labeled_at",
        "stratum",
        "notes",
    ]
    assert demo.judgments["relevance"].dtype == np.int64
    assert demo.judgments["query_id"].dtype == pd.StringDtype()
    assert list(demo.runs.columns) == ["system", "query_id", "rank", "doc_id", "score"]
    assert demo.runs["score"].dtype == np.float64
    assert demo.runs["doc_id"].dtype == pd.StringDtype()
    assert list(demo.queries.columns) == ["query_id", "query", "stratum", "expect_none"]
    assert demo.queries["expect_none"].dtype == bool
    for corpus in (demo.corpus, demo.corpus_v2):
        assert list(corpus.columns) == ["chunk_id", "doc_uri", "doc_revision", "ordinal", "text", "text_sha"]
        assert corpus["ordinal"].dtype == pd.Int64Dtype()
    assert demo.path == demo_path() and demo.path.is_dir()


def test_load_demo_gives_fresh_frames_each_call(demo):
    other = load_demo()
    other.judgments.loc[0, "relevance"] = 99
    assert load_demo().judgments.loc[0, "relevance"] != 99
    assert demo.judgments.loc[0, "relevance"] != 99


def test_demo_path_names_every_shipped_file_and_refuses_others():
    for name in DEMO_FILES:
        assert demo_path(name).is_file(), name
    shipped = {p.name for p in demo_path().iterdir() if p.is_file()}
    assert shipped == set(DEMO_FILES)
    with pytest.raises(ValueError, match="no demo file 'runs.json'"):
        demo_path("runs.json")


def test_demo_stays_small():
    total = sum(demo_path(name).stat().st_size for name in DEMO_FILES)
    assert total < 2_050_000  # 2 MB, plus the simulated judge samples (19 KB, parquet)


# ------------------------------------------------------------------ corpus and identity


@pytest.mark.parametrize("name", ["corpus.json", "corpus_v2.json"])
def test_chunk_ids_recompute_from_the_corpus_text(name):
    raw = _raw_corpus(name)
    fingerprints = (
        {raw["chunker_fingerprint"]}
        if name == "corpus.json"
        else {"paragraphs/800", "paragraphs/1600", "paragraphs/400", "paragraphs/800@2"}
    )
    for c in raw["chunks"]:
        assert c["text_sha"] == identity.text_sha(c["text"])
        matches = [
            fp
            for fp in fingerprints
            if identity.chunk_id(c["doc_uri"], c["doc_revision"], c["ordinal"], c["text"], fp) == c["chunk_id"]
        ]
        assert len(matches) == 1, c["chunk_id"]


def test_corpus_is_pydoc_topics_chunked_by_paragraphs_800(demo):
    raw = _raw_corpus("corpus.json")
    assert raw["chunker_fingerprint"] == "paragraphs/800"
    chunks = raw["chunks"]
    assert 300 <= len(chunks) <= 1500
    assert {c["doc_revision"] for c in chunks} == {"3.11.7"}
    assert all(c["doc_uri"].startswith("pydoc://topics/") for c in chunks)
    assert all(0 < len(c["text"]) <= 800 for c in chunks)
    assert all(c["text"] == identity.normalize(c["text"]) for c in chunks)
    assert len({c["chunk_id"] for c in chunks}) == len(chunks)
    # ordinals run 0..n-1 within each document, in file order
    by_doc: dict[str, list[int]] = {}
    for c in chunks:
        by_doc.setdefault(c["doc_uri"], []).append(c["ordinal"])
    assert all(o == list(range(len(o))) for o in by_doc.values())
    assert demo.corpus.attrs["corpus_fingerprint"] == raw["corpus_fingerprint"]


def test_corpus_v2_drops_two_documents_and_keeps_the_rest():
    v1 = {c["doc_uri"] for c in _raw_corpus("corpus.json")["chunks"]}
    v2 = {c["doc_uri"] for c in _raw_corpus("corpus_v2.json")["chunks"]}
    assert v2 < v1
    assert v1 - v2 == {"pydoc://topics/with", "pydoc://topics/lambda"}


# ------------------------------------------------------------------ judgments


def test_every_judgment_points_at_a_corpus_chunk_with_its_text(demo):
    corpus = demo.corpus.set_index("chunk_id")
    j = demo.judgments
    assert j["chunk_id"].isin(corpus.index).all()
    texts = corpus.loc[j["chunk_id"], "text"].to_numpy()
    uris = corpus.loc[j["chunk_id"], "doc_uri"].to_numpy()
    assert (j["chunk_text"].to_numpy() == texts).all()
    assert (j["doc_uri"].to_numpy() == uris).all()
    assert (j["text_sha"] == j["chunk_text"].map(identity.text_sha)).all()
    assert (j["corpus_fingerprint"] == demo.corpus.attrs["corpus_fingerprint"]).all()


def test_labels_are_graded_synthetic_and_stratified(demo):
    j = demo.judgments
    assert set(j["relevance"]) == {0, 1, 2, 3}
    grades = Counter(j["relevance"])
    assert grades[3] >= 40 and grades[0] >= 5
    assert j["labeled_by"].str.startswith("synthetic:").all()
    assert j["labeled_at"].notna().all()
    assert set(j["stratum"]) == POSITIVE_STRATA
    assert not j.duplicated(["query_id", "chunk_id"]).any()
    # every judged query has an answer (grade 3) and its query text is consistent
    best = j.groupby("query_id")["relevance"].max()
    assert (best == 3).all()
    assert (j.groupby("query_id")["query"].nunique() == 1).all()


def test_judgments_file_is_in_canonical_form(demo):
    text = demo_path("judgments.jsonl").read_text(encoding="utf-8")
    assert serialize_judgments(demo.judgments) == text


def test_queries_positives_and_negatives(demo):
    q = demo.queries
    assert q["query_id"].is_unique
    pos, neg = q[~q["expect_none"]], q[q["expect_none"]]
    assert len(pos) >= 40 and len(neg) >= 30
    assert set(pos["stratum"]) == POSITIVE_STRATA
    assert set(neg["stratum"]) == NEGATIVE_STRATA
    assert pos["stratum"].value_counts().min() >= 10
    assert neg["stratum"].value_counts().min() >= 15
    assert set(pos["query_id"]) == set(demo.judgments["query_id"])
    # the queries file and the judgments agree on text and stratum
    first = demo.judgments.drop_duplicates("query_id").set_index("query_id")
    p = pos.set_index("query_id")
    assert (p["query"] == first.loc[p.index, "query"]).all()
    assert (p["stratum"] == first.loc[p.index, "stratum"]).all()


def test_negatives_have_no_positive_label(demo):
    neg = set(demo.queries.loc[demo.queries["expect_none"], "query_id"])
    j = demo.judgments
    assert not (j["query_id"].isin(neg) & (j["relevance"] >= 1)).any()


# ------------------------------------------------------------------ runs


def test_three_systems_rank_every_query_top_100_with_scores(demo):
    r = demo.runs
    assert set(r["system"]) == SYSTEMS
    assert np.isfinite(r["score"].to_numpy()).all()
    sizes = r.groupby(["system", "query_id"]).size()
    assert (sizes == 100).all()
    assert len(sizes) == 3 * len(demo.queries)
    assert set(r["query_id"]) == set(demo.queries["query_id"])
    assert r["doc_id"].isin(demo.corpus["chunk_id"]).all()
    assert not r.duplicated(["system", "query_id", "doc_id"]).any()
    # scores never increase down a ranking, and carry at most 6 decimals
    s = r.sort_values(["system", "query_id", "rank"])
    steps = s.groupby(["system", "query_id"])["score"].diff().dropna()
    assert (steps <= 0).all()
    assert np.allclose(s["score"], s["score"].round(6), rtol=0, atol=1e-12)


def test_dense_scores_are_cosines_and_bm25_scores_are_non_negative(demo):
    r = demo.runs
    dense = r.loc[r["system"] == "dense", "score"]
    assert dense.between(-1.0, 1.0).all()
    assert (r.loc[r["system"] == "bm25", "score"] >= 0).all()


def test_rrf_is_the_fusion_of_the_written_dense_and_bm25_lists():
    """Recompute RRF (k=60) from the file's own dense and bm25 rankings."""
    lines = [json.loads(x) for x in demo_path("runs.jsonl").read_text().splitlines()]
    by = {(x["system"], x["query_id"]): x for x in lines}
    queries = {q for _, q in by}
    for q in sorted(queries):
        fused: dict[str, float] = {}
        for system in ("dense", "bm25"):
            for rank, doc in enumerate(by[(system, q)]["ranking"], start=1):
                fused[doc] = fused.get(doc, 0.0) + 1.0 / (60 + rank)
        want = sorted(((round(s, 6), d) for d, s in fused.items()), key=lambda t: (-t[0], t[1]))
        rrf = by[("rrf", q)]
        assert rrf["ranking"] == [d for _, d in want[:100]], q
        assert rrf["scores"] == [s for s, _ in want[:100]], q


def test_dense_scores_separate_positives_from_negatives(demo):
    """The point of the demo's OOD queries: absolute dense scores tell them apart."""
    r = demo.runs
    top1 = r[(r["system"] == "dense") & (r["rank"] == 1)].set_index("query_id")["score"]
    ood = demo.queries.set_index("query_id")["expect_none"]
    pos, neg = top1[~ood.loc[top1.index]], top1[ood.loc[top1.index]]
    assert pos.median() - neg.median() > 0.2


# ------------------------------------------------------------------ drift


def test_drift_against_corpus_v2_shows_every_status(demo):
    result = drift(demo.judgments, demo.corpus_v2)
    counts = Counter(result.findings["status"])
    assert set(counts) == {"VALID", "RE_ANCHORABLE", "MERGED", "SPLIT", "ORPHANED"}
    assert all(n >= 5 for n in counts.values()), counts
    # the dropped documents' labels are orphaned
    dropped = result.findings["doc_uri"].isin(["pydoc://topics/with", "pydoc://topics/lambda"])
    assert (result.findings.loc[dropped, "status"] == "ORPHANED").all()


def test_drift_against_its_own_corpus_is_all_valid(demo):
    result = drift(demo.judgments, demo.corpus)
    assert result.summary.valid == len(demo.judgments)


# ------------------------------------------------------------------ the build script


def _build_module():
    path = REPO / "scripts" / "build_demo_dataset.py"
    if not path.is_file():
        pytest.skip("scripts/ not present (installed package)")
    spec = importlib.util.spec_from_file_location("build_demo_dataset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(
    platform.python_version() != "3.11.7", reason="the shipped texts come from CPython 3.11.7's pydoc_data"
)
def test_build_script_reproduces_corpora_queries_and_judgments():
    """Everything but the runs (which need torch) rebuilds byte for byte from the script."""
    from pydoc_data.topics import topics

    build = _build_module()
    corpus, corpus_v2 = build.build_corpora(topics, platform.python_version())
    assert corpus == _raw_corpus("corpus.json")
    assert corpus_v2 == _raw_corpus("corpus_v2.json")
    queries, judgments, _ = build.load_labels(corpus["chunks"])
    for j in judgments:
        j["corpus_fingerprint"] = corpus["corpus_fingerprint"]
    text = "".join(build.judgment_line(j) + "\n" for j in judgments)
    assert text == demo_path("judgments.jsonl").read_text(encoding="utf-8")
    qtext = "".join(build.dumps(q) + "\n" for q in queries)
    assert qtext == demo_path("queries.jsonl").read_text(encoding="utf-8")


def test_bm25_of_the_build_script_matches_a_hand_computed_score():
    build = _build_module()
    docs = ["a b a", "b c", "c c c d"]
    got = build.bm25_scores(["a c"], docs)
    n, avgdl = 3, (3 + 2 + 4) / 3
    k1, b = 0.9, 0.4

    def term(tf, dl, df):
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

    want = [term(2, 3, 1), term(1, 2, 2), term(3, 4, 2)]
    assert np.allclose(got[0], want, rtol=0, atol=1e-12)


# ------------------------------------------------------------------ the second label set


def test_lexical_labels_are_marked_synthetic_and_anchor_to_the_corpus(demo):
    lex = demo.judgments_lexical
    assert lex["labeled_by"].str.startswith("synthetic:lexical-overlap").all()
    assert not lex["labeled_by"].str.startswith("human:").any()
    chunks = demo.corpus.set_index("chunk_id")
    assert lex["chunk_id"].isin(chunks.index).all()
    assert (chunks.loc[lex["chunk_id"], "text_sha"].to_numpy() == lex["text_sha"].to_numpy()).all()
    assert lex["query_id"].nunique() == 24
    assert set(lex["query_id"]) <= set(demo.judgments["query_id"])


def test_lexical_labels_rebuild_byte_for_byte_from_their_script():
    path = Path(__file__).resolve().parents[2] / "scripts" / "build_lexical_labels.py"
    if not path.is_file():
        pytest.skip("scripts/ not present (installed package)")
    spec = importlib.util.spec_from_file_location("build_lexical_labels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == demo_path("judgments_lexical.jsonl").read_text(encoding="utf-8")


def test_lexical_grades_follow_the_documented_overlap_rule(demo):
    """Each grade recomputed from the chunk text and the query, by the rule the card states."""
    import re

    stop = {"a", "an", "and", "the", "how", "do", "i", "does", "is", "in", "of", "to", "what"}
    text = demo.corpus.set_index("chunk_id")["text"]
    lex = demo.judgments_lexical
    path = Path(__file__).resolve().parents[2] / "scripts" / "build_lexical_labels.py"
    if not path.is_file():
        pytest.skip("scripts/ not present (installed package)")
    spec = importlib.util.spec_from_file_location("build_lexical_labels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert stop <= module.STOPWORDS
    for row in lex.itertuples(index=False):
        q = {w for w in re.findall(r"[a-z0-9_]+", row.query.lower()) if len(w) >= 2 and w not in module.STOPWORDS}
        c = set(re.findall(r"[a-z0-9_]+", text[row.chunk_id].lower()))
        share = len(q & c) / len(q)
        expected = 3 if share >= 0.6 else 2 if share >= 0.4 else 1 if share >= 0.25 else 0
        assert row.relevance == expected, (row.query_id, row.chunk_id)
