"""Cases shared by the streaming, Dask and CLI streaming tests: generated judgments and runs,
and the equality every streamed result must meet."""

from __future__ import annotations

import numpy as np
import pandas as pd

import retrieval_eval.io as formats


def assert_same(a, b):
    """Every frame of two Evaluations equal: values, dtypes, order, index."""
    pd.testing.assert_frame_equal(a.per_query, b.per_query, check_exact=True)
    pd.testing.assert_frame_equal(a.summary, b.summary, check_exact=True)
    pd.testing.assert_frame_equal(a.per_stratum, b.per_stratum, check_exact=True)
    assert a.per_query.attrs["systems"] == b.per_query.attrs["systems"]
    assert (a.ks, a.threshold, a.gain, a.negatives) == (b.ks, b.threshold, b.gain, b.negatives)


def make_case(
    seed: int, n_queries: int = 60, systems=("bm25", "dense", "hybrid"), depth: int = 15, long_query: int = 0
):
    """Judgments and a long run: systems one after the other (so each query's lines stand in
    as many places as there are systems, each ranking in one), repeated keys, unjudged and
    unranked queries, queries labelled in two strata, rankings without scores, and optionally one query
    ranked ``long_query`` deep (longer than a block)."""
    rng = np.random.default_rng(seed)
    parts = []
    for s in systems:
        qs = [f"q{i}" for i in range(n_queries) if rng.random() < 0.85] or ["q0"]
        d = rng.integers(1, depth + 1, len(qs))
        d[0] = max(d[0], long_query)
        q = np.repeat(qs, d)
        parts.append(
            pd.DataFrame(
                {
                    "system": s,
                    "query_id": q,
                    "rank": np.concatenate([np.arange(1, n + 1) for n in d]),
                    "doc_id": [f"d{x}" for x in rng.integers(0, 40, len(q))],
                    "score": np.where(
                        np.repeat(rng.random(len(qs)) < 0.1, d), np.nan, rng.normal(size=len(q)).round(6)
                    ),
                }
            )
        )
    run = pd.concat(parts, ignore_index=True)
    n_labels = n_queries * 6
    jq = rng.integers(0, n_queries + 10, n_labels)  # some judged queries are never ranked
    judgments = pd.DataFrame(
        {
            "query_id": [f"q{i}" for i in jq],
            "doc_uri": [f"d{x}" for x in rng.integers(0, 40, n_labels)],
            "relevance": rng.integers(0, 4, n_labels),
            "stratum": rng.choice(["faq", "howto", None], n_labels),
        }
    )
    return formats.as_judgments(judgments), formats.as_run(run)
