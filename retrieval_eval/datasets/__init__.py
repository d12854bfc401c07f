"""Bundled datasets: a small, real demo to try every feature on without bringing data.

``load_demo()`` returns the demo as DataFrames (``docs/data-model.md``); ``demo_path(name)``
gives the path of one of its files, for the CLI or for reading it yourself. The dataset card
is ``demo/README.md``: Python's own help topics (CPython 3.11.7, PSF licence) chunked into
passages, 45 in-domain queries with graded synthetic labels in four strata, 30
out-of-distribution queries, runs of three real systems (dense, BM25, RRF) with scores, and a
second chunking of the corpus for drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..io import read_corpus, read_judgments, read_queries, read_run
from ..io.judge_scores import read_judge_scores
from ..model import ID

DEMO_DIR = Path(__file__).resolve().parent / "demo"

DEMO_FILES = (
    "judgments.jsonl",
    "queries.jsonl",
    "corpus.json",
    "corpus_v2.json",
    "runs.jsonl",
    "judgments_lexical.jsonl",
    "judge_samples.parquet",
    "judge_human.jsonl",
    "README.md",
)


def demo_path(name: str = "") -> Path:
    """The path of a demo file (``"judgments.jsonl"``, ``"runs.jsonl"``, …), or of the folder.

    Only the files the demo ships are accepted, so a typo fails here with the list of names
    rather than later as a missing file.
    """
    if not name:
        return DEMO_DIR
    if name not in DEMO_FILES:
        raise ValueError(f"no demo file {name!r}; the demo has {', '.join(DEMO_FILES)}")
    return DEMO_DIR / name


@dataclass(frozen=True)
class Demo:
    """The demo dataset, one DataFrame per file, read by the package's own readers.

    - ``judgments``: graded labels of the in-domain queries (chunk-level, with chunk_text).
    - ``queries``: every query, in-domain (``expect_none`` False) and out-of-distribution.
    - ``corpus``: the chunks the labels and runs point at (``paragraphs/800``).
    - ``corpus_v2``: the same documents after a partial re-chunk, for ``drift``.
    - ``runs``: the long run frame of the systems ``dense``, ``bm25`` and ``rrf``.
    - ``path``: the folder holding the files.
    - ``judgments_lexical``: a second, synthetic label set for 24 of the in-domain queries,
      written by a lexical-overlap labeler (``scripts/build_lexical_labels.py``), to measure
      label agreement against (``label_agreement``).
    - ``judge_samples``, ``judge_human``, ``judge_truth``: a seeded SIMULATION of an LLM judge
      (3 samples per system and query of faithfulness and answer relevancy, 2 per top-3
      passage of context relevance), human labels on 15 queries, and the true values
      (``scripts/build_judge_samples.py``; the truth is ``judge_truth``'s ``value``): for judged
      metrics, their intervals and PPI.
    """

    judgments: pd.DataFrame
    queries: pd.DataFrame
    corpus: pd.DataFrame
    corpus_v2: pd.DataFrame
    runs: pd.DataFrame
    path: Path
    judgments_lexical: pd.DataFrame | None = None
    judge_samples: pd.DataFrame | None = None
    judge_human: pd.DataFrame | None = None
    judge_truth: pd.DataFrame | None = None

    def __repr__(self) -> str:
        j, q, r = self.judgments, self.queries, self.runs
        return (
            f"Demo({j['query_id'].nunique()} judged queries, {len(j)} labels, "
            f"{int(q['expect_none'].sum())} OOD queries, {len(self.corpus)} chunks, "
            f"systems {sorted(r['system'].unique().tolist())}, path={str(self.path)!r})"
        )


def load_demo() -> Demo:
    """Read the bundled demo dataset; returns a :class:`Demo` of fresh DataFrames.

    Each call reads the files again, so a caller may change the frames it gets without
    affecting the next caller.
    """
    return Demo(
        judgments=read_judgments(demo_path("judgments.jsonl")),
        queries=read_queries(demo_path("queries.jsonl")),
        corpus=read_corpus(demo_path("corpus.json")),
        corpus_v2=read_corpus(demo_path("corpus_v2.json")),
        runs=read_run(demo_path("runs.jsonl")),
        path=DEMO_DIR,
        judgments_lexical=read_judgments(demo_path("judgments_lexical.jsonl")),
        judge_samples=read_judge_scores(demo_path("judge_samples.parquet")),
        judge_human=read_judge_scores(demo_path("judge_human.jsonl")),
        judge_truth=_judge_truth(),
    )


def _judge_truth() -> pd.DataFrame:
    """The simulation's true value of every (system, query, metric): the samples' ``truth``."""
    t = pd.read_parquet(demo_path("judge_samples.parquet"), columns=["system", "query_id", "metric", "truth"])
    t = t.drop_duplicates(["system", "query_id", "metric"]).rename(columns={"truth": "value"})
    for c in ("system", "query_id", "metric"):
        t[c] = t[c].astype(ID)
    return t.reset_index(drop=True)


__all__ = ["DEMO_DIR", "DEMO_FILES", "Demo", "demo_path", "load_demo"]
