"""Paired cold runs of two copies of retrieval_eval on the same data: which one is faster.

A cold run on a shared 2-core machine varies by 20-40% from one run to the next, more than
most changes to the engine are worth. Timing two copies in alternation (A B, B A, A B, ...)
pairs each run of one with a run of the other made a moment apart, and the median of the
paired differences is what a change is worth.

    git worktree add /tmp/before HEAD~1          # or: git archive HEAD~1 retrieval_eval | tar -x -C /tmp/before
    python benchmarks/ab_cold.py /tmp/before . --runs 20 --size wide

Each directory must hold a ``retrieval_eval`` package (compiled to bytecode first, as an
install leaves it); each run is a fresh interpreter with that directory first on ``sys.path``, reading the TREC files ``bench_metrics.py`` generated
(``benchmarks/data``) and evaluating them as its cold run does. Prints, for each copy, the
median seconds of each phase, then the medians of the paired differences (B - A).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_metrics, beside this file

CHILD = """
import sys, time
t0 = time.perf_counter()
import retrieval_eval.evaluation as ev
import retrieval_eval.io as f
t1 = time.perf_counter()
d = sys.argv[1]
j = f.read_qrels(d + "/qrels.trec")
t2 = time.perf_counter()
r = f.read_trec_run(d + "/run.trec", order="rank")
t3 = time.perf_counter()
s = ev.evaluate(j, r, k=(10, 100), threshold=1, gain="linear").summary
t4 = time.perf_counter()
import json
print(json.dumps({"import": t1 - t0, "read_qrels": t2 - t1, "read_trec_run": t3 - t2,
                  "evaluate": t4 - t3, "ndcg@10": float(s.iloc[0]["ndcg_linear@10"])}))
"""

PHASES = ("import", "read_qrels", "read_trec_run", "evaluate", "wall")


def run_once(package_dir: Path, data: Path) -> dict:
    from bench_metrics import timed_child

    out, out["wall"] = timed_child([sys.executable, "-c", CHILD, str(data)], f"the run with {package_dir}",
                                   env={**os.environ, "PYTHONPATH": str(package_dir)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="directory holding the first retrieval_eval")
    parser.add_argument("b", type=Path, help="directory holding the second retrieval_eval")
    parser.add_argument("--runs", type=int, default=20, help="paired runs (default 20)")
    parser.add_argument("--size", default="wide", help="a data folder prefix under benchmarks/data (deep, wide, ...)")
    args = parser.parse_args(argv)
    matches = sorted((HERE / "data").glob(f"{args.size}-*"))
    if not matches:
        print(f"no data for {args.size!r} under {HERE / 'data'}: run bench_metrics.py --generate-only first",
              file=sys.stderr)
        return 2
    data = matches[0]
    copies = {"A": args.a.resolve(), "B": args.b.resolve()}
    for name, where in copies.items():
        if not (where / "retrieval_eval" / "__init__.py").is_file():
            print(f"{name}: {where} holds no retrieval_eval package", file=sys.stderr)
            return 2
    import compileall

    for where in copies.values():  # as an install leaves them: no run compiles the sources
        compileall.compile_dir(str(where / "retrieval_eval"), quiet=1)
    results: dict[str, list[dict]] = {"A": [], "B": []}
    for i in range(args.runs):
        for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
            results[name].append(run_once(copies[name], data))
    for name in ("A", "B"):
        runs = results[name]
        cells = " ".join(f"{p} {statistics.median(r[p] for r in runs):.3f}" for p in PHASES)
        print(f"{name} ({copies[name]}): {cells}  ndcg@10 {runs[0]['ndcg@10']:.12f}")
    diffs = " ".join(
        f"{p} {statistics.median(b[p] - a[p] for a, b in zip(results['A'], results['B'])):+.3f}" for p in PHASES)
    print(f"B - A, median of {args.runs} paired runs: {diffs}")
    if results["A"][0]["ndcg@10"] != results["B"][0]["ndcg@10"]:
        print("the two copies disagree on ndcg@10", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
