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
import retrieval_eval as rev  # top-level public names only: any two layouts can be timed
t1 = time.perf_counter()
d = sys.argv[1]
j = rev.read_qrels(d + "/qrels.trec")
t2 = time.perf_counter()
r = rev.read_trec_run(d + "/run.trec", order="rank")
t3 = time.perf_counter()
s = rev.evaluate(j, r, k=(10, 100), threshold=1, gain="linear").summary
t4 = time.perf_counter()
import json, resource
u = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"import": t1 - t0, "read_qrels": t2 - t1, "read_trec_run": t3 - t2,
                  "evaluate": t4 - t3, "cpu": u.ru_utime + u.ru_stime, "ndcg@10": float(s.iloc[0]["ndcg_linear@10"]),
                  "package": rev.__file__}))
"""

#: ``--all-trec``: trec_eval's whole per-query set (bench_all_trec.py's) instead of evaluate's.
CHILD_ALL_TREC = CHILD.replace(
    's = rev.evaluate(j, r, k=(10, 100), threshold=1, gain="linear").summary',
    "from retrieval_eval.engine.measures import compute\n"
    "s = compute(j, r, sys.argv[2].split(','))\n"
    's = s.assign(**{"ndcg_linear@10": s["ndcg_cut_10"]}).mean(numeric_only=True).to_frame().T',
)

PHASES = ("import", "read_qrels", "read_trec_run", "evaluate", "wall", "cpu")


def run_once(package_dir: Path, data: Path, all_trec: bool = False) -> dict:
    from bench_metrics import timed_child

    if all_trec:
        from bench_all_trec import ALL_TREC

        argv = [sys.executable, "-c", CHILD_ALL_TREC, str(data), ",".join(ALL_TREC)]
    else:
        argv = [sys.executable, "-c", CHILD, str(data)]
    # The child runs in ``package_dir``: ``python -c`` puts its working directory first on
    # sys.path, ahead of PYTHONPATH, so run from a checkout it would time that checkout's copy.
    out, out["wall"] = timed_child(
        argv, f"the run with {package_dir}", env={**os.environ, "PYTHONPATH": str(package_dir)}, cwd=package_dir
    )
    imported = Path(out.pop("package")).resolve()
    if not imported.is_relative_to(package_dir):
        raise RuntimeError(f"the run with {package_dir} imported {imported}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="directory holding the first retrieval_eval")
    parser.add_argument("b", type=Path, help="directory holding the second retrieval_eval")
    parser.add_argument("--runs", type=int, default=20, help="paired runs (default 20)")
    parser.add_argument("--size", default="wide", help="a data folder prefix under benchmarks/data (deep, wide, ...)")
    parser.add_argument(
        "--data", type=Path, help="the data folder itself (qrels.trec and run.trec), e.g. a --shuffled copy"
    )
    parser.add_argument(
        "--all-trec",
        action="store_true",
        help="compute trec_eval's whole measure set (bench_all_trec.py's) instead of evaluate's",
    )
    args = parser.parse_args(argv)
    if args.data is not None:
        data = args.data
        if not (data / "run.trec").is_file() or not (data / "qrels.trec").is_file():
            print(f"{data}: no run.trec and qrels.trec there", file=sys.stderr)
            return 2
    else:
        matches = sorted((HERE / "data").glob(f"{args.size}-*"))
        if not matches:
            print(
                f"no data for {args.size!r} under {HERE / 'data'}: run bench_metrics.py --generate-only first",
                file=sys.stderr,
            )
            return 2
        data = matches[0]
    from record import Recorder

    recorder = Recorder("ab_cold", argv)
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
            results[name].append(run_once(copies[name], data, args.all_trec))
    for name in ("A", "B"):
        runs = results[name]
        cells = " ".join(f"{p} {statistics.median(r[p] for r in runs):.3f}" for p in PHASES)
        print(f"{name} ({copies[name]}): {cells}  ndcg@10 {runs[0]['ndcg@10']:.12f}")
    diffs = " ".join(
        f"{p} {statistics.median(b[p] - a[p] for a, b in zip(results['A'], results['B'])):+.3f}" for p in PHASES
    )
    print(f"B - A, median of {args.runs} paired runs: {diffs}")
    ratio = statistics.median(b["wall"] / a["wall"] for a, b in zip(results["A"], results["B"]))
    print(f"B / A wall, median of the paired ratios: {ratio:.3f}")
    recorder.write(
        {
            "a": str(copies["A"]),
            "b": str(copies["B"]),
            "data": str(data),
            "all_trec": args.all_trec,
            "runs": results,
            "summary": {
                **{f"A {p}": statistics.median(r[p] for r in results["A"]) for p in ("read_trec_run", "wall")},
                **{f"B {p}": statistics.median(r[p] for r in results["B"]) for p in ("read_trec_run", "wall")},
                "B / A wall": ratio,
            },
        }
    )
    if results["A"][0]["ndcg@10"] != results["B"][0]["ndcg@10"]:
        print("the two copies disagree on ndcg@10", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
