"""Runs larger than memory: wall time and peak RSS of streamed, Dask and in-memory evaluation.

Generates (once, under ``benchmarks/data/``, gitignored) a TREC run of ``--rows`` rows
(``--depth`` entries per query, one system) and qrels with 20 labels per query, then runs each
variant in a child process of its own and reports its wall time and peak resident memory
(``ru_maxrss`` of that child, from ``os.wait4``, which for Dask is the largest of the client
and its worker processes; then the client's and each worker's own peak):

* ``streaming``: ``evaluate(qrels, run, chunk_rows=--chunk-rows)`` in one process;
* ``dask1``, ``dask2``: :func:`retrieval_eval.dask.evaluate` on a ``LocalCluster`` of 1 or 2
  single-threaded worker processes, the run read in 64 MB byte ranges by the package's TREC reader;
* ``memory``: in-memory ``evaluate`` on the ``--memory-rows`` file.

Every variant checks its summary against the streamed one of the same file when both ran.

    python benchmarks/bench_scale.py --rows 10000000 --variants streaming,memory
    python benchmarks/bench_scale.py --rows 100000000 --memory-rows 30000000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
LABELS_PER_QUERY = 20
GEN_ROWS = 4_000_000  # rows generated and written per step


def _doc(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The doc at rank ``r`` of query ``q``: a fixed scramble, so qrels can name ranked docs."""
    return (q.astype(np.int64) * 1_000_003 + r.astype(np.int64) * 7_919) % 2_000_000


def paths(rows: int, depth: int) -> tuple[Path, Path]:
    tag = f"{rows // 1_000_000}M-d{depth}" if rows % 1_000_000 == 0 else f"{rows}-d{depth}"
    return DATA / f"scale-{tag}.trec", DATA / f"scale-{tag}.qrels"


def generate(rows: int, depth: int) -> tuple[Path, Path]:
    """Write the run and the qrels (atomically) unless they exist."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    run_path, qrels_path = paths(rows, depth)
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    DATA.mkdir(parents=True, exist_ok=True)
    n_queries = rows // depth
    options = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    rng = np.random.default_rng(2026)

    def ids(prefix: str, values: np.ndarray) -> pa.Array:
        return pc.binary_join_element_wise(prefix, pa.array(values).cast(pa.string()), "")

    started = time.perf_counter()
    tmp = run_path.with_suffix(".tmp")
    with pa.OSFile(str(tmp), "wb") as sink:
        per_step = max(GEN_ROWS // depth, 1)
        for q0 in range(0, n_queries, per_step):
            q = np.repeat(np.arange(q0, min(q0 + per_step, n_queries), dtype=np.int64), depth)
            r = np.tile(np.arange(1, depth + 1, dtype=np.int64), len(q) // depth)
            score = np.round(100.0 - r * (50.0 / depth) + rng.random(len(q)), 3)
            n = len(q)
            table = pa.table(
                {
                    "q": ids("q", q),
                    "it": pa.array(np.full(n, "Q0")),
                    "d": ids("d", _doc(q, r)),
                    "r": r,
                    "s": score,
                    "m": pa.array(np.full(n, "bench")),
                }
            )
            pcsv.write_csv(table, sink, options)
    tmp.replace(run_path)
    # Qrels: 20 labels per query at ranks drawn from 1..3*depth (so about a third are ranked).
    q = np.repeat(np.arange(n_queries, dtype=np.int64), LABELS_PER_QUERY)
    r = rng.integers(1, 3 * depth + 1, len(q))
    rel = rng.integers(0, 4, len(q))
    table = pa.table(
        {"q": ids("q", q), "z": pa.array(np.zeros(len(q), dtype=np.int64)), "d": ids("d", _doc(q, r)), "rel": rel}
    )
    tmp = qrels_path.with_suffix(".tmp")
    pcsv.write_csv(table, str(tmp), options)
    tmp.replace(qrels_path)
    print(
        f"generated {run_path.name} ({run_path.stat().st_size / 2**30:.2f} GiB) in "
        f"{time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    return run_path, qrels_path


# --------------------------------------------------------------------------------------------
# The variants, each run in a child process of its own.


def child(variant: str, run_path: str, qrels_path: str, chunk_rows: int) -> dict:
    import retrieval_eval as re_
    from retrieval_eval import read_qrels

    started = time.perf_counter()
    judgments = read_qrels(qrels_path)
    out: dict = {}
    if variant == "streaming":
        ev = re_.evaluate(judgments, run_path, chunk_rows=chunk_rows)
    elif variant == "memory":
        ev = re_.evaluate(judgments, run_path)
    elif variant.startswith("dask"):
        import resource

        from dask.distributed import Client, LocalCluster

        from retrieval_eval import dask as red

        workers = int(variant[4:])
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0
            ) as cluster,
            Client(cluster) as c,
        ):
            ready = time.perf_counter()
            ev = red.evaluate(judgments, run_path, blocksize="64MB")  # byte ranges, the package's reader
            out["cluster_start_s"] = ready - started
            peaks = c.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
            out["worker_peak_mib"] = sorted(round(v / 1024) for v in peaks.values())
        out["client_peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    else:
        raise SystemExit(f"unknown variant {variant}")
    out["inner_s"] = time.perf_counter() - started
    out["summary"] = ev.summary.round(12).to_dict()
    out["queries"] = len(ev.per_query)
    return out


def measure(variant: str, run_path: Path, qrels_path: Path, chunk_rows: int) -> dict:
    """Run one variant in a child process: its wall time and its own peak RSS."""
    cmd = [
        sys.executable,
        __file__,
        "--child",
        variant,
        "--run",
        str(run_path),
        "--qrels",
        str(qrels_path),
        "--chunk-rows",
        str(chunk_rows),
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out_text = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{variant} failed (exit {proc.returncode})")
    got = json.loads(out_text)
    got.update(variant=variant, wall_s=wall, peak_mib=usage.ru_maxrss / 1024)
    return got


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--memory-rows", type=int, default=10_000_000)
    ap.add_argument("--chunk-rows", type=int, default=2_000_000)
    ap.add_argument("--variants", default="streaming,dask1,dask2,memory")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--qrels", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.run, args.qrels, args.chunk_rows)))
        return
    results = []
    print(f"{'variant':<10} {'rows':>12} {'wall s':>8} {'Mrows/s':>8} {'peak MiB':>9}  (dask: client, workers)")
    for variant in args.variants.split(","):
        rows = args.memory_rows if variant == "memory" else args.rows
        run_path, qrels_path = generate(rows, args.depth)
        got = measure(variant, run_path, qrels_path, args.chunk_rows)
        got["rows"] = rows
        results.append(got)
        workers = f"{got['client_peak_mib']}, {got['worker_peak_mib']}" if "worker_peak_mib" in got else ""
        print(
            f"{variant:<10} {rows:>12,} {got['wall_s']:>8.1f} {rows / got['wall_s'] / 1e6:>8.2f} "
            f"{got['peak_mib']:>9.0f}  {workers}",
            flush=True,
        )
    by_rows: dict = {}
    for got in results:  # every variant on one file must agree with the others
        first = by_rows.setdefault(got["rows"], got)
        if got["summary"] != first["summary"]:
            raise SystemExit(f"{got['variant']} and {first['variant']} disagree")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
