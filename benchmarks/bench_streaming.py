#!/usr/bin/env python
"""Streamed evaluate (``chunk_rows=``) against the in-memory evaluate on the same TREC file.

Usage::

    python benchmarks/bench_streaming.py --rounds 3                  # deep: 10M rows
    python benchmarks/bench_streaming.py --size quick --rounds 1     # a smoke run

Each round runs both, each cold in a fresh process (files to summary: imports, reading,
scoring), in alternated order (memory then streamed, then streamed then memory, ...): on a
shared machine a run varies by 20-40%, so each round's ratio pairs two runs made a moment
apart, and the median of those ratios is the figure. Prints wall time, CPU time (user + sys,
every thread) and peak RSS (VmHWM) of both, and the ratio streamed / memory (goal, issue 30:
<= 1.3x; memory bounded by a block plus the judgments). The two summaries must be equal to
the last bit (exit status 1 otherwise). The data is bench_metrics.py's (``--size``, ``--seed``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_metrics as bm  # noqa: E402  (its data, RSS and child helpers)


def child(mode: str, directory: Path, chunk_rows: int) -> None:
    import resource

    t0 = time.perf_counter()
    import retrieval_eval as rev

    paths = bm.files(directory)
    judgments = rev.read_qrels(paths["qrels"])
    if mode == "memory":
        run = rev.read_trec_run(paths["trec_run"], order="rank")
        ev = rev.evaluate(judgments, run, k=(10, 100), threshold=1, gain="linear")
    else:
        ev = rev.evaluate(
            judgments, str(paths["trec_run"]), k=(10, 100), threshold=1, gain="linear", chunk_rows=chunk_rows
        )
    summary = ev.summary
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "s": time.perf_counter() - t0,
                "cpu_s": use.ru_utime + use.ru_stime,
                "peak_rss_mb": bm.peak_rss_mb(),
                "summary": {c: repr(v) for c, v in summary.iloc[0].items()},
            }
        )
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="deep", choices=sorted(bm.SIZES))
    p.add_argument("--seed", type=int, default=20261130)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--chunk-rows", type=int, default=1_000_000, help="rows per block of the streamed run")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, Path(args.dir), args.chunk_rows)
        return 0
    from record import Recorder

    recorder = Recorder("bench_streaming", argv)
    directory = bm.generate(args.size, args.seed)
    print(bm.bytecode_note())
    modes = ("memory", "streamed")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for round_ in range(args.rounds):
        for mode in modes if round_ % 2 == 0 else modes[::-1]:
            res, res["wall_s"] = bm.timed_child(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    mode,
                    "--dir",
                    str(directory),
                    "--chunk-rows",
                    str(args.chunk_rows),
                ],
                f"{mode} run",
            )
            runs[mode].append(res)
            print(
                f"  round {round_ + 1}: {mode} {res['wall_s']:.2f} s, CPU {res['cpu_s']:.2f} s, "
                f"{res['peak_rss_mb']:.0f} MiB",
                flush=True,
            )
    ratios = [s["wall_s"] / m["wall_s"] for m, s in zip(runs["memory"], runs["streamed"])]
    cpu_ratios = [s["cpu_s"] / m["cpu_s"] for m, s in zip(runs["memory"], runs["streamed"])]
    same = all(r["summary"] == runs["memory"][0]["summary"] for rs in runs.values() for r in rs)
    rows = {
        m: {
            "wall_s": statistics.median(r["wall_s"] for r in rs),
            "cpu_s": statistics.median(r["cpu_s"] for r in rs),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
        }
        for m, rs in runs.items()
    }
    print(
        f"\nstreamed (chunk_rows={args.chunk_rows:,}) vs in memory, size {args.size} {bm.SIZES[args.size]}, "
        f"median of {args.rounds} alternated rounds"
    )
    print("| evaluate | cold wall s | CPU s | peak RSS MiB |")
    print("|---|---|---|---|")
    for mode, r in rows.items():
        print(f"| {mode} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['peak_rss_mb']:.0f} |")
    ratio = statistics.median(ratios)
    print(
        f"streamed / memory (paired median): {ratio:.2f}x wall, {statistics.median(cpu_ratios):.2f}x CPU "
        f"(rounds: {', '.join(f'{x:.2f}' for x in ratios)}) goal <= 1.3x {'MET' if ratio <= 1.3 else 'MISSED'}"
    )
    print(f"summaries equal to the last bit: {same}")
    summary = {
        "memory cold s": rows["memory"]["wall_s"],
        "streamed cold s": rows["streamed"]["wall_s"],
        "streamed / memory": ratio,
        "memory peak MiB": rows["memory"]["peak_rss_mb"],
        "streamed peak MiB": rows["streamed"]["peak_rss_mb"],
    }
    recorder.write(
        {
            "size": args.size,
            "chunk_rows": args.chunk_rows,
            "rounds": args.rounds,
            "rows": rows,
            "ratios": ratios,
            "cpu_ratios": cpu_ratios,
            "equal": same,
            "runs": {m: [{k: v for k, v in r.items() if k != "summary"} for r in rs] for m, rs in runs.items()},
            "summary": summary,
        }
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
