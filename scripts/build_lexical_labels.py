"""Write the demo's second label set, ``judgments_lexical.jsonl``: a lexical-overlap labeler.

A deliberately simple, fully deterministic *synthetic* labeler, so that the demo has a second,
independently produced label set to measure agreement against (``label_agreement``). It is
not a person and is not presented as one: every label says
``labeled_by: "synthetic:lexical-overlap ..."``.

The procedure (no randomness, no model, no look at any run):

1. Queries: the first six in-domain queries of each of the four strata (``st-01``..``st-06``,
   ``ex-01``.., ``dm-01``.., ``bt-01``..), 24 of the 45.
2. Words: lowercase runs of ``[a-z0-9_]``; a query's *content words* are its distinct words
   of two or more characters that are not in :data:`STOPWORDS`.
3. Overlap of a chunk: the share of the query's content words that occur among the chunk's
   words.
4. Units labeled per query: every chunk the demo's first label set names for that query (so
   the two sets overlap there), plus the five chunks of ``corpus.json`` with the highest
   overlap (ties by chunk id) that it does not name.
5. Grade from the overlap: >= 0.6 -> 3, >= 0.4 -> 2, >= 0.25 -> 1, else 0. The thresholds
   were fixed before looking at any agreement figure.

Run from the repository root (``python scripts/build_lexical_labels.py``); two runs write
identical bytes. ``chunk_text`` is left out (the chunk id and ``text_sha`` anchor each label,
and the demo stays small).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from retrieval_eval import read_judgments, serialize_judgments

DEMO = ROOT / "retrieval_eval" / "datasets" / "demo"
OUT = DEMO / "judgments_lexical.jsonl"
LABELED_BY = "synthetic:lexical-overlap of query words (scripts/build_lexical_labels.py)"
LABELED_AT = "2026-12-01"
PER_STRATUM = 6
EXTRA = 5
GRADES = ((0.6, 3), (0.4, 2), (0.25, 1))
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "get",
        "gets",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "it's",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "use",
        "used",
        "using",
        "way",
        "ways",
    ]
)
WORD = re.compile(r"[a-z0-9_]+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def content_words(query: str) -> set[str]:
    return {w for w in words(query) if len(w) >= 2 and w not in STOPWORDS}


def overlap(query_words: set[str], chunk_words: set[str]) -> float:
    return len(query_words & chunk_words) / len(query_words) if query_words else 0.0


def grade(score: float) -> int:
    for floor, g in GRADES:
        if score >= floor:
            return g
    return 0


def chosen_queries(queries: list[dict]) -> list[dict]:
    seen: dict[str, int] = {}
    out = []
    for q in queries:
        if q.get("expect_none"):
            continue
        s = q["stratum"]
        if seen.get(s, 0) < PER_STRATUM:
            out.append(q)
            seen[s] = seen.get(s, 0) + 1
    return out


def build() -> str:
    corpus = json.loads((DEMO / "corpus.json").read_text(encoding="utf-8"))
    chunks = corpus["chunks"]
    chunk_words = {c["chunk_id"]: words(c["text"]) for c in chunks}
    by_id = {c["chunk_id"]: c for c in chunks}
    queries = [json.loads(line) for line in (DEMO / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    first = read_judgments(DEMO / "judgments.jsonl")
    rows = []
    for q in chosen_queries(queries):
        qw = content_words(q["query"])
        named = list(dict.fromkeys(first.loc[first["query_id"] == q["query_id"], "chunk_id"]))
        scored = sorted(
            ((overlap(qw, chunk_words[c["chunk_id"]]), c["chunk_id"]) for c in chunks if c["chunk_id"] not in named),
            key=lambda t: (-t[0], t[1]),
        )
        units = named + [cid for _, cid in scored[:EXTRA]]
        for cid in units:
            c = by_id[cid]
            rows.append(
                {
                    "query_id": q["query_id"],
                    "query": q["query"],
                    "doc_uri": c["doc_uri"],
                    "chunk_id": cid,
                    "text_sha": c["text_sha"],
                    "relevance": grade(overlap(qw, chunk_words[cid])),
                    "corpus_fingerprint": corpus["corpus_fingerprint"],
                    "labeled_by": LABELED_BY,
                    "labeled_at": LABELED_AT,
                    "stratum": q["stratum"],
                }
            )
    from retrieval_eval import as_judgments

    return serialize_judgments(as_judgments(rows))


def main() -> None:
    text = build()
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(OUT)
    print(f"wrote {OUT.relative_to(ROOT)} ({text.count(chr(10))} labels, {len(text.encode())} bytes)")


if __name__ == "__main__":
    main()
