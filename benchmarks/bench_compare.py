#!/usr/bin/env python
"""Benchmark the randomization test of :func:`retrieval_eval.compare` against ranx.

Usage::

    python benchmarks/bench_compare.py                         # 10,000 queries, 5 systems
    python benchmarks/bench_compare.py --queries 2000 --resamples 2000 --ranx-permutations 1000
    python benchmarks/bench_compare.py --json out.json

Data: ``--queries`` queries, each with 10 judged documents (binary relevance, 1 to 4 relevant)
and ``--systems`` runs of depth 20 with distinct, decreasing scores; each system moves the
relevant documents up with its own probability, so the systems differ by small, realistic
amounts. Binary relevance makes ranx's nDCG (linear gain) equal to ours (exponential gain).

Measured (wall time and process CPU time; the machine may be shared, so CPU time is the
steadier figure):

* ``randomization``: :func:`retrieval_eval.analysis.stats.paired_randomization` on the (4, n) matrix of
  per-query nDCG@10 differences against the baseline, ``--resamples`` sign flips: one
  ``(resamples, n)`` sign matrix times the difference matrix, in blocks.
* ``randomization_all_pairs``: the same over all 10 unordered pairs of the 5 systems (ranx's
  ``compare`` tests every ordered pair, i.e. each unordered pair twice, so this is half its
  statistical work).
* ``compare``: the whole :func:`compare` call (engine + randomization + bootstrap intervals +
  Holm), ``metrics=("ndcg",)``.
* ranx (in ``/work/venv-bench`` when it has ranx; never installed into the dev venv):
  ``ranx.compare(qrels, runs, metrics=["ndcg@10"], stat_test="fisher", max_p=0.05,
  n_permutations=N)``, timed after a warm-up call on small data so numba's compile is not
  counted, and ranx's ``fisher_randomization_test`` alone on one pair. When
  ``--ranx-permutations`` is below ``--resamples`` the ranx time is also extrapolated
  linearly to ``--resamples`` (its cost is linear in permutations) and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
BENCH_PY = Path(os.environ.get("RETRIEVAL_EVAL_BENCH_PYTHON", "/work/venv-bench/bin/python"))


def make_data(n_queries: int, n_systems: int, seed: int = 0):
    """Judgments and run frames (data-model shape) for ``n_systems`` systems."""
    rng = np.random.default_rng(seed)
    depth, judged = 20, 10
    q = np.repeat(np.arange(n_queries), judged)
    d = np.tile(np.arange(judged), n_queries)
    n_rel = rng.integers(1, 5, size=n_queries)
    rel = (d < np.repeat(n_rel, judged)).astype(np.int64)
    qid = pd.array([f"q{i}" for i in range(n_queries)], dtype="string")
    judgments = pd.DataFrame(
        {"query_id": qid[q], "doc_uri": pd.array([f"d{j}" for j in range(judged)], dtype="string")[d], "relevance": rel}
    )
    runs = []
    docs = np.array([f"d{j}" for j in range(depth * 2)], dtype=object)
    for s in range(n_systems):
        boost = 0.15 + 0.05 * s
        # A random permutation of 2*depth documents per query, relevant ones (d0..d3) moved up
        # with probability `boost` each, then cut at `depth`.
        keys = rng.uniform(size=(n_queries, depth * 2))
        keys[:, :4] -= boost * (rng.uniform(size=(n_queries, 4)) < 0.8)
        order = np.argsort(keys, axis=1, kind="stable")[:, :depth]
        runs.append(
            pd.DataFrame(
                {
                    "system": pd.array([f"sys{s}"] * (n_queries * depth), dtype="string"),
                    "query_id": qid[np.repeat(np.arange(n_queries), depth)],
                    "rank": np.tile(np.arange(1, depth + 1), n_queries).astype(np.int64),
                    "doc_id": pd.array(docs[order.ravel()], dtype="string"),
                    "score": np.tile(np.linspace(1.0, 0.05, depth), n_queries),
                }
            )
        )
    return judgments, pd.concat(runs, ignore_index=True)


def timed(fn, repeat: int = 1):
    """(result, best wall seconds, CPU seconds of that call)."""
    best = None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        if best is None or wall < best[0]:
            best = (wall, cpu)
    return out, best[0], best[1]


RANX_SCRIPT = textwrap.dedent("""
    import json, sys, time, resource
    import numpy as np, pandas as pd
    from ranx import Qrels, Run, compare
    from ranx.statistical_tests.fisher_randomization_test import fisher_randomization_test
    from ranx import evaluate
    folder, n_perm = sys.argv[1], int(sys.argv[2])
    qrels_df = pd.read_parquet(folder + "/qrels.parquet")
    run_df = pd.read_parquet(folder + "/run.parquet")
    for df in (qrels_df, run_df):  # ranx wants object-dtype id columns
        for col in ("system", "query_id", "doc_id"):
            if col in df:
                df[col] = df[col].astype(object)
    qrels = Qrels.from_df(qrels_df, q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
    runs = []
    for name, sub in run_df.groupby("system", sort=True):
        r = Run.from_df(sub, q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        r.name = name
        runs.append(r)
    # Warm-up on 50 queries: numba compiles (or loads its cache) outside the timing.
    small_q = sorted(qrels_df["query_id"].unique())[:50]
    sq = Qrels.from_df(qrels_df[qrels_df["query_id"].isin(small_q)], q_id_col="query_id",
                       doc_id_col="doc_id", score_col="relevance")
    sr = []
    for name, sub in run_df[run_df["query_id"].isin(small_q)].groupby("system", sort=True):
        r = Run.from_df(sub, q_id_col="query_id", doc_id_col="doc_id", score_col="score"); r.name = name
        sr.append(r)
    compare(sq, sr, metrics=["ndcg@10"], stat_test="fisher", max_p=0.05, n_permutations=100)
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.perf_counter()
    report = compare(qrels, runs, metrics=["ndcg@10"], stat_test="fisher", max_p=0.05,
                     n_permutations=n_perm)
    wall = time.perf_counter() - w0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    means = {r.name: float(report.results[r.name]["ndcg@10"]) for r in runs}
    a = np.asarray(evaluate(qrels, runs[0], "ndcg@10", return_mean=False), dtype=np.float64)
    b = np.asarray(evaluate(qrels, runs[1], "ndcg@10", return_mean=False), dtype=np.float64)
    fisher_randomization_test(a[:50], b[:50], 100, 0.05, 42)
    w1 = time.perf_counter()
    p, _ = fisher_randomization_test(a, b, n_perm, 0.05, 42)
    one = time.perf_counter() - w1
    pvals = {}
    for pair, res in report.comparisons.items():
        key = "|".join(sorted(pair))
        pvals[key] = float(res["ndcg@10"]["p_value"])
    from importlib.metadata import version
    print(json.dumps({"version": version("ranx"), "wall": wall, "cpu": cpu,
                      "one_pair_wall": one, "one_pair_p": float(p), "means": means,
                      "pvalues": pvals}))
""")


def run_ranx(judgments, run, n_perm: int) -> dict | None:
    if not BENCH_PY.exists():
        return {"skipped": f"{BENCH_PY} not found"}
    check = subprocess.run([str(BENCH_PY), "-c", "import ranx"], capture_output=True, text=True)
    if check.returncode != 0:
        return {"skipped": "ranx is not installed in " + str(BENCH_PY.parent.parent)}
    with tempfile.TemporaryDirectory() as tmp:
        q = judgments.rename(columns={"doc_uri": "doc_id"})[["query_id", "doc_id", "relevance"]]
        q.astype({"query_id": str, "doc_id": str}).to_parquet(f"{tmp}/qrels.parquet")
        run[["system", "query_id", "doc_id", "score"]].astype(
            {"system": str, "query_id": str, "doc_id": str}
        ).to_parquet(f"{tmp}/run.parquet")
        script = Path(tmp) / "ranx_bench.py"
        script.write_text(RANX_SCRIPT)
        proc = subprocess.run([str(BENCH_PY), str(script), tmp, str(n_perm)], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"skipped": "ranx run failed: " + proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--ranx-permutations", type=int, default=None, help="permutations for ranx (default: --resamples)")
    ap.add_argument("--no-ranx", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    from retrieval_eval import compare, evaluate
    from retrieval_eval.analysis import stats

    judgments, run = make_data(args.queries, args.systems, args.seed)
    out: dict = {"queries": args.queries, "systems": args.systems, "resamples": args.resamples}

    ev, w, c = timed(lambda: evaluate(judgments, run, k=(10,)))
    out["evaluate"] = {"wall": w, "cpu": c}
    pq = ev.per_query
    wide = pq.pivot(index="query_id", columns="system", values="ndcg@10")
    names = list(ev.systems)
    values = wide[names].to_numpy(np.float64).T  # (systems, queries)
    diff = values[1:] - values[0]
    res, w, c = timed(lambda: stats.paired_randomization(diff, n_resamples=args.resamples, seed=0))
    out["randomization"] = {
        "wall": w,
        "cpu": c,
        "comparisons": int(diff.shape[0]),
        "pvalues": [float(p) for p in res.pvalue],
    }
    i, j = np.triu_indices(len(names), 1)
    pairs = values[j] - values[i]
    res_all, w, c = timed(lambda: stats.paired_randomization(pairs, n_resamples=args.resamples, seed=0))
    out["randomization_all_pairs"] = {"wall": w, "cpu": c, "comparisons": int(pairs.shape[0])}
    cmp_, w, c = timed(
        lambda: compare(judgments, run, metrics=("ndcg",), n_resamples=args.resamples, seed=0, calibration=False)
    )
    out["compare"] = {"wall": w, "cpu": c}
    out["means"] = {s: float(m) for s, m in zip(names, values.mean(axis=1))}

    print(f"data: {args.queries:,} queries x {args.systems} systems, nDCG@10, {args.resamples:,} resamples")
    print(
        f"  evaluate (engine)                 {out['evaluate']['wall']:8.2f} s wall {out['evaluate']['cpu']:8.2f} s CPU"
    )
    print(
        f"  randomization, 4 vs baseline      {out['randomization']['wall']:8.2f} s wall "
        f"{out['randomization']['cpu']:8.2f} s CPU"
    )
    print(
        f"  randomization, all 10 pairs       {out['randomization_all_pairs']['wall']:8.2f} s wall "
        f"{out['randomization_all_pairs']['cpu']:8.2f} s CPU"
    )
    print(
        f"  compare() end to end              {out['compare']['wall']:8.2f} s wall "
        f"{out['compare']['cpu']:8.2f} s CPU  (engine + test + bootstrap CI + Holm)"
    )

    if not args.no_ranx:
        n_perm = args.ranx_permutations or args.resamples
        rx = run_ranx(judgments, run, n_perm)
        out["ranx"] = rx
        if "skipped" in rx:
            print(f"  ranx: skipped ({rx['skipped']})")
        else:
            scale = args.resamples / n_perm
            rx["n_permutations"] = n_perm
            rx["wall_at_resamples"] = rx["wall"] * scale
            note = "" if scale == 1 else f" (measured at {n_perm:,} permutations, x{scale:g})"
            print(
                f"  ranx {rx['version']} compare, fisher   {rx['wall_at_resamples']:8.2f} s wall"
                f"{note}; CPU {rx['cpu'] * scale:.2f} s"
            )
            print(f"  ranx fisher test, one pair        {rx['one_pair_wall'] * scale:8.2f} s wall")
            mean_err = max(abs(rx["means"][s] - out["means"][s]) for s in names)
            print(f"  max |mean nDCG@10 ranx - ours|    {mean_err:.2e}")
            ratio_pairs = rx["wall_at_resamples"] / (2 * out["randomization_all_pairs"]["wall"])
            ratio_compare = rx["wall_at_resamples"] / out["compare"]["wall"]
            out["ratio"] = {
                "ranx_compare_over_ours_same_tests": ratio_pairs,
                "ranx_compare_over_our_compare": ratio_compare,
            }
            print(f"  ratio ranx / ours, same 20 tests  {ratio_pairs:8.1f}x")
            print(
                f"  ratio ranx compare / our compare  {ratio_compare:8.1f}x "
                "(ours tests 4 pairs vs baseline and adds bootstrap CIs)"
            )
            # p-values agree within Monte Carlo error (different random streams).
            ours = dict(zip((f"{names[a]}|{names[b]}" for a, b in zip(i, j)), res_all.pvalue))
            diffs = [abs(ours[k] - rx["pvalues"][k]) for k in ours if k in rx["pvalues"]]
            if diffs:
                print(
                    f"  max |p ranx - p ours| over pairs  {max(diffs):.4f} "
                    f"(Monte Carlo error ~ {2 * (0.25 / n_perm) ** 0.5:.4f})"
                )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
