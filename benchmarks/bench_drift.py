"""Time drift() and fix(): 100,000 judgments against a 1,000,000-chunk corpus (seeded).

    /work/venv/bin/python benchmarks/bench_drift.py [--docs 100000] [--chunks-per-doc 10]
        [--judgments 100000] [--no-text-sha]

The corpus has ``docs`` documents of ``chunks-per-doc`` chunks each. The judgments mix every
status: live ids (VALID), stale ids whose text is live (RE_ANCHORABLE), one sentence of a live
chunk (MERGED), two adjacent chunks (SPLIT), deleted documents (ORPHANED) and document-level
labels. ``--no-text-sha`` drops the corpus's text_sha column so drift hashes every chunk itself.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from retrieval_eval import drift, fix
from retrieval_eval.identity import text_sha


def make_corpus(docs: int, per_doc: int, with_sha: bool) -> pd.DataFrame:
    d = np.repeat(np.arange(docs), per_doc)
    k = np.tile(np.arange(per_doc), docs)
    texts = [f"Doc {a} says fact {b}. It adds detail {b} of {a}." for a, b in zip(d, k)]
    frame = pd.DataFrame(
        {
            "chunk_id": pd.array([f"c1:live-{a}-{b}" for a, b in zip(d, k)], dtype="string"),
            "doc_uri": pd.array([f"doc://{a}" for a in d], dtype="string"),
            "doc_revision": pd.array(["r2"] * len(d), dtype="string"),
            "ordinal": pd.array(k, dtype="Int64"),
            "text": pd.array(texts, dtype="string"),
            "text_sha": pd.array([text_sha(t) for t in texts] if with_sha else [pd.NA] * len(texts), dtype="string"),
        }
    )
    frame.attrs["corpus_fingerprint"] = "bench/2"
    frame.attrs["chunker_fingerprint"] = "bench/2"
    return frame


def make_judgments(n: int, docs: int, per_doc: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    kind = rng.choice(6, size=n, p=[0.40, 0.20, 0.15, 0.10, 0.10, 0.05])
    d = rng.integers(0, docs, size=n)
    k = rng.integers(0, per_doc - 1, size=n)
    rows_doc, rows_cid, rows_sha, rows_text = [], [], [], []
    for kd, a, b in zip(kind, d, k):
        text = f"Doc {a} says fact {b}. It adds detail {b} of {a}."
        doc, cid, sha, chunk_text = f"doc://{a}", f"c1:old-{a}-{b}", pd.NA, pd.NA
        if kd == 0:  # VALID
            cid = f"c1:live-{a}-{b}"
        elif kd == 1:  # RE_ANCHORABLE by text_sha
            sha = text_sha(text)
        elif kd == 2:  # MERGED: one sentence of a live chunk
            chunk_text = f"Doc {a} says fact {b}."
        elif kd == 3:  # SPLIT: two adjacent live chunks
            chunk_text = text + "\n\n" + f"Doc {a} says fact {b + 1}. It adds detail {b + 1} of {a}."
        elif kd == 4:  # ORPHANED: the document is gone
            doc, chunk_text = f"doc://gone-{a}", "Something that was deleted."
        else:  # document-level
            cid = pd.NA
        rows_doc.append(doc)
        rows_cid.append(cid)
        rows_sha.append(sha)
        rows_text.append(chunk_text)
    return pd.DataFrame(
        {
            "query_id": pd.array([f"q{i % 20000}" for i in range(n)], dtype="string"),
            "doc_uri": pd.array(rows_doc, dtype="string"),
            "chunk_id": pd.array(rows_cid, dtype="string"),
            "text_sha": pd.array(rows_sha, dtype="string"),
            "chunk_text": pd.array(rows_text, dtype="string"),
            "relevance": np.ones(n, dtype=np.int64),
            "corpus_fingerprint": pd.array(["bench/1"] * n, dtype="string"),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--chunks-per-doc", type=int, default=10)
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--no-text-sha", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    corpus = make_corpus(args.docs, args.chunks_per_doc, not args.no_text_sha)
    judgments = make_judgments(args.judgments, args.docs, args.chunks_per_doc)
    t1, c1 = time.perf_counter(), time.process_time()
    result = drift(judgments, corpus)
    t2, c2 = time.perf_counter(), time.process_time()
    fixed = fix(judgments, result)
    t3 = time.perf_counter()
    print(f"data: {len(judgments):,} judgments, {len(corpus):,} chunks (generated in {t1 - t0:.1f}s)")
    print(f"summary: {result.summary.to_dict()}")
    print(f"drift: {t2 - t1:.2f}s wall ({c2 - c1:.2f}s CPU)   fix: {t3 - t2:.2f}s   reanchored: {fixed.reanchored:,}")


if __name__ == "__main__":
    main()
