"""One Dask worker process against the single-process streaming evaluate, on the same TREC file.

The run and qrels are :mod:`bench_scale`'s generated files (``benchmarks/data/``, gitignored:
``--rows`` rows, ``--depth`` entries per query, one system, 20 labels a query). Each variant
runs in a child process of its own; its scoring time starts once the labels are read (and, for
Dask, once the cluster is up) and ends when the ``Evaluation`` is built:

* ``streaming``: ``evaluate(qrels, run, chunk_rows=--chunk-rows)``;
* ``dask1``: :func:`retrieval_eval.dask.evaluate` of the path on a ``LocalCluster`` of one
  single-threaded worker process, the file cut into ``--blocksize`` byte ranges (default 128 MB,
  as :func:`retrieval_eval.dask.evaluate` cuts them) read by the
  package's TREC reader on the worker (labels broadcast); ``dask1x2``: the same worker with two
  threads (what ``LocalCluster(n_workers=1)`` and ``dask worker`` give on a 2-core machine);
* ``dask2-broadcast``, ``dask2-partitioned``: two workers, the labels sent whole to each or
  partitioned with the run on ``query_id`` (the memory per worker of both label modes).

``--rounds`` runs the variants that many times, in alternated order; it prints each run's time,
rate and peak RSS (client and workers), the paired median of each Dask rate over the streaming
rate, and whether every summary is equal to the streaming one, bit for bit, and writes the
result to ``benchmarks/results/`` (:mod:`record`).

``--worker-env`` sets the worker processes' environment: ``dask`` keeps distributed's defaults
(``OMP_NUM_THREADS=1``, which also caps arrow's CPU thread pool at one thread, and
``MALLOC_TRIM_THRESHOLD_=65536``); ``match`` (the default) gives the workers the streaming
process's: ``OMP_NUM_THREADS`` the client's value or the machine's core count (arrow parses
with as many threads), and ``MALLOC_TRIM_THRESHOLD_`` as the client has it (unset, as a rule).
Setting it at all turns off glibc's sliding mmap threshold: every allocation over 128 KiB is
then a fresh mapping, faulted in page by page and unmapped when freed (on the 2-core box,
1.4-1.7M page faults and 2.9-3.6 s of system time per 20M rows, against 0.2-0.3M and 0.7-0.9 s).

    python benchmarks/bench_dask.py --rows 2000000
    python benchmarks/bench_dask.py --rows 20000000 --rounds 4 --variants streaming,dask1,dask1x2          # 128 MB ranges
    python benchmarks/bench_dask.py --rows 20000000 --blocksize 64MB --rounds 6 --variants streaming,dask1x2,dask1
    python benchmarks/bench_dask.py --rows 2000000 --variants dask2-broadcast,dask2-partitioned
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import generate  # (the same generated files)


def _worker_env(mode: str) -> dict:
    """The worker processes' environment over distributed's defaults (see the module's notes;
    None: the variable is not set in the worker)."""
    if mode == "dask":
        return {}
    return {
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(os.cpu_count() or 1)),
        "MALLOC_TRIM_THRESHOLD_": os.environ.get("MALLOC_TRIM_THRESHOLD_"),
    }


def _warm() -> None:
    """A worker's first task pays for importing the package, pandas' and arrow's modules: done
    before the clock starts, as the streaming process has done them reading the labels."""
    import retrieval_eval as rev
    from retrieval_eval.io import from_trec_run

    demo = rev.load_demo()
    rev.evaluate(demo.judgments, demo.runs)
    from_trec_run(b"q1 Q0 d1 1 0.5 r\n")


def _dask(judgments, run_path: str, workers: int, threads: int, labels: str, blocksize: str, worker_env: str) -> tuple:
    import resource

    import dask
    from dask.distributed import Client, LocalCluster

    from retrieval_eval import dask as red

    env = _worker_env(worker_env)
    with (
        dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in env.items()}),
        LocalCluster(
            n_workers=workers, threads_per_worker=threads, processes=True, dashboard_address=None, memory_limit=0
        ) as cluster,
        Client(cluster) as c,
    ):
        c.run(_warm)
        started = time.perf_counter()
        ev = red.evaluate(judgments, run_path, blocksize=blocksize, labels=labels)
        scoring = time.perf_counter() - started
        peaks = c.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return ev, scoring, sorted(round(v / 1024) for v in peaks.values())


def child(variant: str, run_path: str, qrels_path: str, chunk_rows: int, blocksize: str, worker_env: str) -> dict:
    import resource

    import retrieval_eval as rev

    judgments = rev.read_qrels(qrels_path)
    out: dict = {}
    if variant == "streaming":
        started = time.perf_counter()
        ev = rev.evaluate(judgments, run_path, chunk_rows=chunk_rows)
        out["scoring_s"] = time.perf_counter() - started
    elif variant.startswith("dask"):
        shape = variant[4:].split("-", 1)[0]  # "1" or "1x2": workers (x threads per worker)
        workers, threads = (int(x) for x in (shape.split("x") + ["1"])[:2])
        labels = variant.split("-", 1)[1] if "-" in variant else "broadcast"
        ev, out["scoring_s"], out["worker_peak_mib"] = _dask(
            judgments, run_path, workers, threads, labels, blocksize, worker_env
        )
    else:
        raise SystemExit(f"unknown variant {variant}")
    out["client_peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    # The summary to the last bit: floats as their hex form.
    out["summary"] = {c: [float(v).hex() for v in ev.summary[c]] for c in ev.summary.columns}
    out["labels"] = len(judgments)
    return out


def measure(variant: str, args, run_path: Path, qrels_path: Path) -> dict:
    cmd = [
        sys.executable, __file__, "--child", variant, "--run", str(run_path), "--qrels", str(qrels_path),
        "--chunk-rows", str(args.chunk_rows), "--blocksize", args.blocksize, "--worker-env", args.worker_env,
    ]  # fmt: skip
    started = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    got = json.loads(out)
    got.update(variant=variant, wall_s=time.perf_counter() - started)
    return got


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--chunk-rows", type=int, default=2_000_000)
    ap.add_argument("--blocksize", default="128MB", help="byte range size (default: retrieval_eval.dask's own)")
    ap.add_argument("--variants", default="streaming,dask1")
    ap.add_argument("--rounds", type=int, default=1, help="alternated rounds (the ratios are paired)")
    ap.add_argument("--worker-env", choices=("match", "dask"), default="match")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--qrels", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.run, args.qrels, args.chunk_rows, args.blocksize, args.worker_env)))
        return
    from record import Recorder

    recorder = Recorder("bench_dask", argv)
    run_path, qrels_path = generate(args.rows, args.depth)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    print(
        f"{'round':<6}{'variant':<18} {'rows':>12} {'scoring s':>9} {'Mrows/s':>8} {'wall s':>7}  peak MiB (client; workers)"
    )
    variants = args.variants.split(",")
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    for round_ in range(args.rounds):
        for variant in variants if round_ % 2 == 0 else variants[::-1]:
            got = measure(variant, args, run_path, qrels_path)
            got["rows"] = args.rows
            runs[variant].append(got)
            rate = args.rows / got["scoring_s"] / 1e6
            print(
                f"{round_ + 1:<6}{variant:<18} {args.rows:>12,} {got['scoring_s']:>9.2f} {rate:>8.2f} "
                f"{got['wall_s']:>7.1f}  {got['client_peak_mib']}; {got.get('worker_peak_mib', '')}",
                flush=True,
            )
    base = variants[0]
    summary: dict[str, float] = {f"{v} scoring s": statistics.median(r["scoring_s"] for r in runs[v]) for v in variants}
    for variant in variants[1:]:
        same = all(r["summary"] == runs[base][0]["summary"] for r in runs[variant] + runs[base])
        ratios = [b["scoring_s"] / g["scoring_s"] for b, g in zip(runs[base], runs[variant])]
        ratio = statistics.median(ratios)
        summary[f"{variant} / {base} rate"] = ratio
        print(
            f"{variant} / {base}: {ratio:.2f}x the rate (paired median; rounds: "
            f"{', '.join(f'{x:.2f}' for x in ratios)}); summary equal to the last bit: {same}"
        )
        if not same:
            raise SystemExit(f"{variant} and {base} disagree")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    for rs in runs.values():
        for r in rs:
            r.pop("summary")
    results = {"rows": args.rows, "depth": args.depth, "blocksize": args.blocksize, "chunk_rows": args.chunk_rows,
               "worker_env": args.worker_env, "rounds": args.rounds, "runs": runs, "summary": summary}  # fmt: skip
    recorder.write(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
