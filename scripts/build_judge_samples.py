"""Write the demo's LLM-judge samples: a seeded SIMULATION with a known truth, not a real judge.

No language model was called. The files exist so that the judged-metric features (clustered
intervals, variance components, gates, planning, prediction-powered inference) can be shown
and tested on data whose true values are known. Everything below is drawn from one seeded
generator (``numpy.random.default_rng(SEED)``); two runs write identical bytes.

The model, per system ``s`` (``dense``, ``bm25``, ``rrf``) and in-domain query ``q`` (45):

1. Retrieval quality: ``ndcg_sq`` = nDCG@10 of the system's demo run on the query (the
   package's own ``evaluate``), so judged quality follows retrieval quality.
2. True values (the truth file): ``faithfulness = clip(0.50 + 0.30 ndcg_sq + u_q, 0, 1)`` and
   ``answer_relevancy = clip(0.45 + 0.35 ndcg_sq + v_q, 0, 1)``, with query effects
   ``u_q ~ N(0, 0.10)``, ``v_q ~ N(0, 0.08)`` shared by the systems (a hard query is hard for
   all of them). ``context_relevance`` of each of a system's top-3 passages:
   ``clip(0.10 + 0.28 grade, 0, 1)`` with ``grade`` the passage's label (0 unjudged).
3. The judge (``sim-judge-1``): ``SAMPLES`` = 3 samples per (system, query) for the two answer
   metrics and 2 per passage for context relevance, each ``clip(truth + BIAS + e, 0, 1)``,
   ``e ~ N(0, NOISE)``, rounded to 4 decimals. ``BIAS`` = +0.06: the judge is lenient, which
   is what prediction-powered inference corrects.
4. Humans (``judge_human.jsonl``): 15 queries (the first 15 in sorted order of a seeded
   permutation) of the ``dense`` system get one human faithfulness label each,
   ``clip(truth + N(0, 0.03), 0, 1)``, ``labeled_by: "human:simulated-annotator"``.

Files written to ``retrieval_eval/datasets/demo/``: ``judge_samples.parquet`` (tidy rows: system,
query_id, metric, chunk_id for passages, sample, value (3 decimals), judge, labeled_by, and
``truth``: the true per-query value of the row's (system, query, metric), context relevance
averaged over the passages; the reader ignores that column) and ``judge_human.jsonl`` (the human
labels, same shape). Parquet (zstd) keeps the bundled demo small.

Run from the repository root: ``python scripts/build_judge_samples.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import retrieval_eval as rev

DEMO = ROOT / "retrieval_eval" / "datasets" / "demo"
SEED = 20261204
SAMPLES = 3
PASSAGE_SAMPLES = 2
BIAS = 0.06
NOISE = 0.09
HUMANS = 15
JUDGE = "sim-judge-1"
SYNTHETIC = "synthetic:sim-judge-1"
HUMAN = "human:simulated-annotator"


def _line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def main() -> None:
    rng = np.random.default_rng(SEED)
    demo = SimpleNamespace(
        judgments=rev.read_judgments(DEMO / "judgments.jsonl"), runs=rev.read_run(DEMO / "runs.jsonl")
    )
    ev = rev.evaluate(demo.judgments, demo.runs, k=(10,))
    pq = ev.per_query
    queries = sorted(demo.judgments["query_id"].astype(str).unique())
    systems = ["dense", "bm25", "rrf"]
    u = dict(zip(queries, rng.normal(0, 0.10, len(queries))))
    v = dict(zip(queries, rng.normal(0, 0.08, len(queries))))
    ndcg = {(str(s), str(q)): float(x) for s, q, x in zip(pq["system"], pq["query_id"], pq["ndcg@10"].fillna(0))}
    grades = {
        (str(q), str(c)): int(g)
        for q, c, g in zip(demo.judgments["query_id"], demo.judgments["chunk_id"], demo.judgments["relevance"])
    }
    run = demo.runs.sort_values(["system", "query_id", "rank"])
    top3 = run[run["rank"] <= 3]
    samples, truth = [], []
    for s in systems:
        for q in queries:
            true = {
                "faithfulness": float(np.clip(0.50 + 0.30 * ndcg[(s, q)] + u[q], 0, 1)),
                "answer_relevancy": float(np.clip(0.45 + 0.35 * ndcg[(s, q)] + v[q], 0, 1)),
            }
            for metric, t in true.items():
                for k in range(SAMPLES):
                    x = float(np.clip(t + BIAS + rng.normal(0, NOISE), 0, 1))
                    samples.append(
                        {
                            "system": s,
                            "query_id": q,
                            "metric": metric,
                            "sample": k,
                            "value": round(x, 3),
                            "judge": JUDGE,
                            "labeled_by": SYNTHETIC,
                        }
                    )
            chunks = top3[(top3["system"] == s) & (top3["query_id"] == q)]["doc_id"].astype(str).tolist()
            passage_truth = []
            for c in chunks:
                t = float(np.clip(0.10 + 0.28 * grades.get((q, c), 0), 0, 1))
                passage_truth.append(t)
                for k in range(PASSAGE_SAMPLES):
                    x = float(np.clip(t + BIAS + rng.normal(0, NOISE), 0, 1))
                    samples.append(
                        {
                            "system": s,
                            "query_id": q,
                            "metric": "context_relevance",
                            "chunk_id": c,
                            "sample": k,
                            "value": round(x, 3),
                            "judge": JUDGE,
                            "labeled_by": SYNTHETIC,
                        }
                    )
            true["context_relevance"] = float(np.mean(passage_truth))
            truth.extend({"system": s, "query_id": q, "metric": m, "value": round(t, 6)} for m, t in true.items())
    labeled = sorted(rng.permutation(queries)[:HUMANS].tolist())
    truth_of = {(r["system"], r["query_id"], r["metric"]): r["value"] for r in truth}
    humans = [
        {
            "system": "dense",
            "query_id": q,
            "metric": "faithfulness",
            "sample": 0,
            "value": round(float(np.clip(truth_of[("dense", q, "faithfulness")] + rng.normal(0, 0.03), 0, 1)), 4),
            "labeled_by": HUMAN,
        }
        for q in labeled
    ]
    frame = pd.DataFrame(samples)
    frame["truth"] = [truth_of[(s, q, m)] for s, q, m in zip(frame["system"], frame["query_id"], frame["metric"])]
    frame = frame[["system", "query_id", "metric", "chunk_id", "sample", "value", "judge", "labeled_by", "truth"]]
    frame.to_parquet(DEMO / "judge_samples.parquet", compression="zstd", index=False)
    (DEMO / "judge_human.jsonl").write_text("".join(_line(r) + "\n" for r in humans), encoding="utf-8")
    print(f"wrote {len(frame)} samples and {len(humans)} human labels to {DEMO}")


if __name__ == "__main__":
    main()
