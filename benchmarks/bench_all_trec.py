#!/usr/bin/env python
"""The ``all_trec`` row: trec_eval's whole per-query measure set, ours against pytrec_eval
computing the same set and against ir_measures' ``iter_calc`` on its equivalents.

Usage::

    python benchmarks/bench_all_trec.py --size quick       # 1,000 x 100, a smoke run
    python benchmarks/bench_all_trec.py --size deep        # 10,000 x 1,000 (10M rows)
    python benchmarks/bench_all_trec.py --size wide        # 100,000 x 100 (10M rows)

The data is bench_metrics.py's (generated once under ``benchmarks/data/``, reused). Each tool
runs cold, in a fresh process, from the TREC files to every per-query value (read, evaluate,
per-query values held in memory), reporting wall time and peak RSS (VmHWM); the median of
``--repeat`` rounds, each running every tool once (in reverse order every other round), with the input files read into the
page cache just before each run (see :func:`warm`). ``--shuffled`` reads a copy of the run
with its lines in random order, so that every ranking has to be sorted (a run written in score
order, the usual case, needs no sort: the catalogue checks the order and sorts only what is out
of it). Every tool's values of the measures it shares with ours are checked to 1e-9
(per-query means of each measure). Targets (issue 14): ours cold >= 5x pytrec_eval's, peak
< 1.5 GiB.
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
import bench_metrics as bm  # noqa: E402  (its data generation, RSS and child helpers)

#: trec_eval's all_trec per-query set (pytrec_eval's request names; its default parameters).
ALL_TREC = [
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
]
#: ir_measures' names of the all_trec measures it has (its pytrec_eval provider computes them).
IR_MEASURES = (
    [
        "NumRet",
        "NumRel",
        "NumRelRet",
        "AP",
        "Rprec",
        "Bpref",
        "RR",
        "infAP",
        "nDCG",
        "SetP",
        "SetR",
        "SetAP",
        "SetF",
        "SetP(relative=True)",
    ]
    + [f"{m}@{k}" for m in ("P", "R", "nDCG", "AP") for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    + [f"Success@{k}" for k in (1, 5, 10)]
    + [f"IPrec@{r / 10:.1f}" for r in range(11)]
)
CHECKED = {"map": "AP", "P_10": "P@10", "ndcg_cut_10": "nDCG@10", "bpref": "Bpref", "recip_rank": "RR", "set_F": "SetF"}


def child(tool: str, directory: Path) -> None:
    paths = bm.files(directory)
    t0 = time.perf_counter()
    if tool == "ours":
        from retrieval_eval.engine.measures import compute
        from retrieval_eval.io import read_qrels, read_trec_run

        per_query = compute(read_qrels(paths["qrels"]), read_trec_run(paths["trec_run"]), ALL_TREC)
        means = {k: float(per_query[k].mean()) for k in CHECKED}
        n_values = per_query.shape[0] * (per_query.shape[1] - 2)
    elif tool == "pytrec_eval":
        import pytrec_eval

        with open(paths["qrels"]) as f:
            qrels = pytrec_eval.parse_qrel(f)
        with open(paths["trec_run"]) as f:
            run = pytrec_eval.parse_run(f)
        per_query = pytrec_eval.RelevanceEvaluator(qrels, set(ALL_TREC)).evaluate(run)
        means = {k: sum(v[k] for v in per_query.values()) / len(per_query) for k in CHECKED}
        n_values = sum(len(v) for v in per_query.values())
    else:  # ir_measures
        import ir_measures

        qrels = ir_measures.read_trec_qrels(str(paths["qrels"]))
        run = ir_measures.read_trec_run(str(paths["trec_run"]))
        values = list(ir_measures.iter_calc([ir_measures.parse_measure(m) for m in IR_MEASURES], qrels, run))
        by = {}
        for v in values:
            by.setdefault(str(v.measure), []).append(v.value)
        means = {
            k: sum(by[str(ir_measures.parse_measure(m))]) / len(by[str(ir_measures.parse_measure(m))])
            for k, m in CHECKED.items()
        }
        n_values = len(values)
    print(
        json.dumps(
            {
                "s": time.perf_counter() - t0,
                "means": means,
                "values": n_values,
                "peak_rss_mb": bm.peak_rss_mb(),
                **cpu_seconds(),
            }
        )
    )


def cpu_seconds() -> dict[str, float]:
    """This process's CPU time so far, user and system (every thread): on this machine the
    system time of a run varies several-fold (memory handed back by the host), the user time
    does not."""
    import resource

    use = resource.getrusage(resource.RUSAGE_SELF)
    return {"user_s": use.ru_utime, "sys_s": use.ru_stime}


def warm(directory: Path) -> None:
    """Read the qrels and the run once, untimed, so that every tool starts with them in the page
    cache: a tool's process is cold, its input files are not. (This machine's memory reclaimer
    evicts a file left unread for a few seconds; without this, whichever tool runs after a long
    run reads from disk.)"""
    paths = bm.files(directory)
    for name in ("qrels", "trec_run"):
        with open(paths[name], "rb") as f:
            while f.read(1 << 24):
                pass


def hugepage_env(setting: str) -> dict[str, str]:
    """The children's environment: this one, with numpy's huge-page advice set as asked.

    numpy advises the kernel to back each array of 4 MB or more with 2 MB pages
    (``madvise(MADV_HUGEPAGE)``). On this virtual machine such a page fault costs anywhere
    from nothing to milliseconds (touching 640 MB of new arrays took 0.05-3.3 s of system
    time with the advice, 0.36 s steadily without it). The setting applies to every tool's
    process alike; pytrec_eval keeps its data in Python objects, not numpy arrays.
    """
    import os

    env = dict(os.environ)
    env.pop("NUMPY_MADVISE_HUGEPAGE", None)
    if setting != "default":
        env["NUMPY_MADVISE_HUGEPAGE"] = "1" if setting == "on" else "0"
    return env


def shuffled_copy(directory: Path, seed: int) -> Path:
    """A sibling folder with the qrels and the run's lines in a random order (made once)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    out = directory.with_name(directory.name + "-shuffled")
    paths, target = bm.files(directory), bm.files(out)
    if target["trec_run"].exists() and target["qrels"].exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    lines = csv.read_csv(
        paths["trec_run"],
        read_options=csv.ReadOptions(column_names=["line"]),
        parse_options=csv.ParseOptions(delimiter="\x01", quote_char=False),
        convert_options=csv.ConvertOptions(column_types={"line": pa.string()}),
    )
    order = np.random.default_rng(seed).permutation(lines.num_rows)
    bm._lines_to_file(target["trec_run"], lines.column("line").combine_chunks().take(pa.array(order)))
    target["qrels"].write_bytes(paths["qrels"].read_bytes())
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="quick", choices=sorted(bm.SIZES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--tools", default="ours,pytrec_eval,ir_measures")
    p.add_argument(
        "--shuffled",
        action="store_true",
        help="read a copy of the run with its lines in random order (every ranking then has to be sorted)",
    )
    p.add_argument(
        "--numpy-hugepage",
        choices=("default", "on", "off"),
        default="default",
        help="numpy's transparent-huge-page advice in every tool's process alike "
        "(NUMPY_MADVISE_HUGEPAGE; default: numpy decides, on for Linux >= 4.6); "
        "see benchmarks/README.md for what it does on a virtual machine",
    )
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, Path(args.dir))
        return 0
    from record import Recorder

    recorder = Recorder("bench_all_trec" + ("_shuffled" if args.shuffled else ""), argv)
    directory = bm.generate(args.size, args.seed)
    if args.shuffled:
        directory = shuffled_copy(directory, args.seed)
    tools = args.tools.split(",")
    env = hugepage_env(args.numpy_hugepage)
    runs: dict[str, list[dict]] = {tool: [] for tool in tools}
    for round_ in range(args.repeat):
        # Each round runs every tool once, the order reversed every other round: on this VM
        # a process started right after a big one pays for the memory that one handed back.
        for tool in tools if round_ % 2 == 0 else tools[::-1]:
            warm(directory)
            res, wall = bm.timed_child(
                [sys.executable, __file__, "--child", tool, "--dir", str(directory)], f"{tool} cold run", env=env
            )
            res["wall_s"] = wall
            runs[tool].append(res)
    rows = {
        tool: {
            "wall_s": statistics.median(r["wall_s"] for r in rs),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
            "values": rs[0]["values"],
            "means": rs[0]["means"],
            "user_s": statistics.median(r["user_s"] for r in rs),
            "sys_s": statistics.median(r["sys_s"] for r in rs),
            # per round: this tool's time over ours in the same round (paired)
            "ratio": statistics.median(r["wall_s"] / o["wall_s"] for r, o in zip(rs, runs.get("ours", rs))),
        }
        for tool, rs in runs.items()
    }
    ref = rows.get("ours", {}).get("means", {})
    print(
        f"all_trec, size {args.size} {bm.SIZES[args.size]}, cold (median of {args.repeat}), "
        f"numpy hugepage advice: {args.numpy_hugepage}"
    )
    print(
        "| tool | cold s | user s | sys s | peak RSS MiB | values | time / ours (paired median) | means agree (1e-9) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for tool, r in rows.items():
        agree = all(abs(r["means"][k] - ref[k]) <= 1e-9 for k in ref) if ref else "-"
        speed = r["ratio"] if "ours" in rows else float("nan")
        print(
            f"| {tool} | {r['wall_s']:.2f} | {r['user_s']:.2f} | {r['sys_s']:.2f} | "
            f"{r['peak_rss_mb']:.0f} | {r['values']:,} | "
            f"{speed:.1f}x | {agree} |"
        )
    if "ours" in rows:
        for tool in rows:
            if tool != "ours":
                each = [r["wall_s"] / o["wall_s"] for r, o in zip(runs[tool], runs["ours"])]
                print(f"{tool} / ours, round by round: " + ", ".join(f"{x:.1f}x" for x in each))
    summary = {f"{tool} cold s": r["wall_s"] for tool, r in rows.items()}
    summary.update({f"{tool} / ours": r["ratio"] for tool, r in rows.items() if tool != "ours" and "ours" in rows})
    recorder.write(
        {
            "size": args.size,
            "shuffled": args.shuffled,
            "repeat": args.repeat,
            "rows": rows,
            "runs": runs,
            "summary": summary,
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
