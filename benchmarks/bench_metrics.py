#!/usr/bin/env python
"""Benchmark retrieval_eval's metric engine against ranx and pytrec_eval on the same data.

Usage::

    python benchmarks/bench_metrics.py --size quick            # 1,000 x 100, a smoke run
    python benchmarks/bench_metrics.py --size large            # both 10M-row data sets
    python benchmarks/bench_metrics.py --size all --json out.json

Sizes (queries x ranked docs per query):

* ``quick``: 1,000 x 100 (100k run rows)
* ``small``: 10,000 x 100 (1M run rows)
* ``deep``: 10,000 x 1,000 (10M run rows)
* ``wide``: 100,000 x 100 (10M run rows)
* ``large`` = deep + wide; ``all`` = small + deep + wide.

Data is generated once per (size, seed) under ``benchmarks/data/`` (gitignored) as TREC qrels
and run files and as this project's JSONL judgments and run. Scores are distinct and strictly
decreasing within a query, and every query has at least one relevant judgment (grade >= 1), so
every tool orders and averages identically.

What is measured, per tool:

* **cold**: wall time of a fresh subprocess from files to mean metrics (interpreter start,
  imports, parsing, computing, averaging), and its peak RSS (the child's own ``VmHWM``, i.e.
  ``ru_maxrss`` without the share Linux carries over ``exec`` from the parent); the median of
  5 runs in a row (``--cold-repeat``), so that each tool's runs follow its own (see the
  README: a process that follows one that used GBs pays to fault pages back in);
* **warm**: inside a process that already holds the parsed data, the median of 3 timed
  calls after one untimed warm-up call (which also lets numba compile for ranx).

The metrics are ndcg@10 (linear gain, trec_eval's ``ndcg_cut_10``), recall@100, precision@10,
mrr@10, map@100 and hit_rate@10. trec_eval has no cutoff on ``recip_rank``: pytrec_eval is timed
with the full ``recip_rank``, and its mrr@10 is checked by a separate, untimed evaluation of the
run truncated to its top 10. Every tool's means are checked against ours to 1e-9.

Peers that are not installed are skipped with a note. ranx's numba cache is warmed before the
cold runs, so its cold figure is that of a user's second run, not the first compile.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

SIZES = {"quick": (1_000, 100), "small": (10_000, 100), "deep": (10_000, 1_000), "wide": (100_000, 100)}
GROUPS = {"large": ["deep", "wide"], "all": ["small", "deep", "wide"]}

#: Our metric names -> the metric names in ranx and pytrec_eval.
METRICS = [
    # (label, ours, ranx, pytrec_eval timed, pytrec_eval checked)
    ("ndcg@10", "ndcg_linear@10", "ndcg@10", "ndcg_cut_10", "ndcg_cut_10"),
    ("recall@100", "recall@100", "recall@100", "recall_100", "recall_100"),
    ("precision@10", "precision@10", "precision@10", "P_10", "P_10"),
    ("mrr@10", "mrr@10", "mrr@10", "recip_rank", "recip_rank@top10"),
    ("map@100", "map@100", "map@100", "map_cut_100", "map_cut_100"),
    ("hit_rate@10", "hit_rate@10", "hit_rate@10", "success_10", "success_10"),
]
PYTREC_MEASURES = {m[3] for m in METRICS}
RANX_METRICS = [m[2] for m in METRICS]
TOLERANCE = 1e-9
RUN_NAME = "bench"
UNIVERSE = 1_000_003  # a prime: (a + j*b) mod UNIVERSE is distinct for distinct j < UNIVERSE


# --------------------------------------------------------------------------- data generation


def data_dir(size: str, seed: int) -> Path:
    q, d = SIZES[size]
    return DATA / f"{size}-{q}x{d}-seed{seed}"


def files(directory: Path) -> dict[str, Path]:
    return {
        "qrels": directory / "qrels.trec",
        "trec_run": directory / "run.trec",
        "judgments": directory / "judgments.jsonl",
        "run": directory / "run.jsonl",
        "manifest": directory / "manifest.json",
    }


def generate(size: str, seed: int, force: bool = False) -> Path:
    """Write the four files for ``size`` (once; reused while the manifest matches)."""
    n_queries, depth = SIZES[size]
    directory = data_dir(size, seed)
    paths = files(directory)
    manifest = {"size": size, "queries": n_queries, "depth": depth, "seed": seed, "version": 1}
    if not force and paths["manifest"].exists():
        try:
            if json.loads(paths["manifest"].read_text()) == manifest:
                return directory
        except ValueError:
            pass
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    print(f"generating {size} ({n_queries:,} queries x {depth:,} docs) in {directory} ...", flush=True)
    _write(paths, n_queries, depth, seed)
    paths["manifest"].write_text(json.dumps(manifest) + "\n")
    print(f"  generated in {time.perf_counter() - started:.1f} s", flush=True)
    return directory


def _lines_to_file(path: Path, lines) -> None:
    """Append a pyarrow string array to ``path``, one element a line, bytes as they are."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.binary_join_element_wise(lines, "", "\n")  # each element + "\n"
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    text = text.cast(pa.large_string())
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64)[text.offset :]
    data = text.buffers()[2]
    with open(path, "ab") as sink:
        sink.write(memoryview(data)[offsets[0] : offsets[len(text)]])


def _ids(prefix: str, numbers, width: int):
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pc.utf8_lpad(pc.cast(pa.array(numbers), pa.string()), width=width, padding="0")
    return pc.binary_join_element_wise(prefix, text, "")


def _write(paths: dict[str, Path], n_queries: int, depth: int, seed: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    qwidth = len(str(n_queries - 1))
    # Each query draws its documents from an arithmetic progression modulo a prime, so its
    # ranked documents (j < depth) and its unretrieved judged documents (j >= depth) are
    # distinct without any per-query loop.
    start = rng.integers(0, UNIVERSE, n_queries)
    step = rng.integers(1, UNIVERSE, n_queries)

    # ---- judgments: 10-50 per query; ~20% of them are documents the run did not retrieve.
    judged = rng.integers(10, 51, n_queries)
    unretrieved = rng.binomial(judged, 0.2)
    retrieved = judged - unretrieved
    candidates = 60
    # Judged ranks lean to the top (as pooled judgments do): rank = depth * u**2.
    ranks = np.floor(depth * rng.random((n_queries, candidates)) ** 2).astype(np.int64)
    ranks.sort(axis=1)
    repeat = np.zeros(ranks.shape, dtype=bool)
    repeat[:, 1:] = ranks[:, 1:] == ranks[:, :-1]
    priority = rng.random(ranks.shape)
    priority[repeat] = np.inf
    pick = np.argsort(priority, axis=1, kind="stable")
    ranks = np.take_along_axis(ranks, pick, axis=1)
    n_unique = (~repeat).sum(axis=1)
    retrieved = np.minimum(retrieved, n_unique)
    take = np.arange(candidates)[None, :] < retrieved[:, None]
    ret_q = np.nonzero(take)[0]
    ret_rank = ranks[take]  # 0-based
    ret_p = 0.1 + 0.6 * np.exp(-ret_rank / (0.1 * depth))  # P(relevant) by rank
    ret_grade = np.where(rng.random(ret_rank.size) < ret_p, rng.choice([1, 2, 3], ret_rank.size, p=[0.5, 0.3, 0.2]), 0)
    un_q = np.repeat(np.arange(n_queries), unretrieved)
    un_j = depth + (np.arange(un_q.size) - np.repeat(np.cumsum(unretrieved) - unretrieved, unretrieved))
    un_grade = np.where(rng.random(un_q.size) < 0.5, rng.choice([1, 2, 3], un_q.size, p=[0.5, 0.3, 0.2]), 0)
    q_all = np.concatenate([ret_q, un_q])
    j_all = np.concatenate([ret_rank, un_j])
    g_all = np.concatenate([ret_grade, un_grade]).astype(np.int64)
    order = np.argsort(q_all, kind="stable")
    q_all, j_all, g_all = q_all[order], j_all[order], g_all[order]
    # Every query gets at least one positive, so no tool drops or zeroes a query differently.
    first = np.ones(q_all.size, dtype=bool)
    first[1:] = q_all[1:] != q_all[:-1]
    has_pos = np.bincount(q_all, weights=(g_all > 0), minlength=n_queries) > 0
    fix = first & ~has_pos[q_all]
    g_all[fix] = 1
    doc_all = (start[q_all] + j_all * step[q_all]) % UNIVERSE

    qid = _ids("q", q_all, qwidth)
    doc = _ids("D", doc_all, 7)
    grade = pc.cast(pa.array(g_all), pa.string())
    for key in ("qrels", "trec_run", "judgments", "run"):
        paths[key].unlink(missing_ok=True)
    _lines_to_file(paths["qrels"], pc.binary_join_element_wise(qid, "0", doc, grade, " "))
    _lines_to_file(
        paths["judgments"],
        pc.binary_join_element_wise('{"query_id": "', qid, '", "doc_uri": "', doc, '", "relevance": ', grade, "}", ""),
    )

    # ---- run: strictly decreasing scores with 4 decimals (exact in text, distinct).
    batch = max(1, 2_000_000 // depth)  # queries per batch: ~2M rows at a time
    for lo in range(0, n_queries, batch):
        hi = min(n_queries, lo + batch)
        nq = hi - lo
        q = np.repeat(np.arange(lo, hi), depth)
        j = np.tile(np.arange(depth), nq)
        doc_num = (start[q] + j * step[q]) % UNIVERSE
        gaps = rng.integers(1, 100, (nq, depth))
        top = rng.integers(depth * 100 + 10_000, depth * 100 + 300_000, nq)
        score = (top[:, None] - np.cumsum(gaps, axis=1)).ravel()  # units of 1e-4, > 0
        qid = _ids("q", q, qwidth)
        doc = _ids("D", doc_num, 7)
        score_txt = pc.binary_join_element_wise(
            pc.cast(pa.array(score // 10_000), pa.string()),
            ".",
            pc.utf8_lpad(pc.cast(pa.array(score % 10_000), pa.string()), width=4, padding="0"),
            "",
        )
        rank = pc.cast(pa.array(j + 1), pa.string())
        _lines_to_file(paths["trec_run"], pc.binary_join_element_wise(qid, "Q0", doc, rank, score_txt, RUN_NAME, " "))
        offsets = pa.array(np.arange(0, nq * depth + 1, depth, dtype=np.int32))
        quoted = pc.binary_join_element_wise('"', doc, '"', "")
        ranking = pc.binary_join(pa.ListArray.from_arrays(offsets, quoted), ", ")
        scores = pc.binary_join(pa.ListArray.from_arrays(offsets, score_txt), ", ")
        qid_one = _ids("q", np.arange(lo, hi), qwidth)
        _lines_to_file(
            paths["run"],
            pc.binary_join_element_wise(
                '{"query_id": "', qid_one, '", "ranking": [', ranking, '], "scores": [', scores, "]}", ""
            ),
        )


# --------------------------------------------------------------------------- tools


def available(tool: str) -> str | None:
    """None when ``tool`` can run here, else a one-line note why not."""
    import importlib.util

    module = {"ours": "retrieval_eval", "ranx": "ranx", "pytrec_eval": "pytrec_eval", "pyarrow": "pyarrow"}[tool]
    if importlib.util.find_spec(module) is None:
        return f"{tool}: not installed (pip install {module.replace('_eval', '-eval-terrier') if tool == 'pytrec_eval' else module}); skipped"
    if tool == "ours":
        try:
            from retrieval_eval import evaluate, read_qrels  # noqa: F401
        except ImportError as exc:
            return f"ours: retrieval_eval.evaluate/read_qrels not importable ({exc}); skipped"
    return None


def ours_load(paths: dict[str, Path], fmt: str):
    from retrieval_eval import read_judgments, read_qrels, read_run, read_trec_run

    if fmt == "trec":
        return read_qrels(paths["qrels"]), read_trec_run(paths["trec_run"], order="rank")
    return read_judgments(paths["judgments"]), read_run(paths["run"])


def ours_compute(data) -> dict[str, float]:
    from retrieval_eval import evaluate

    judgments, run = data
    summary = evaluate(judgments, run, k=(10, 100), threshold=1, gain="linear").summary
    if len(summary) != 1:
        raise RuntimeError(f"expected one system in the summary, got {len(summary)}")
    row = summary.iloc[0]
    return {label: float(row[name]) for label, name, *_ in METRICS}


def ranx_load(paths: dict[str, Path]):
    from ranx import Qrels, Run

    return (Qrels.from_file(str(paths["qrels"]), kind="trec"), Run.from_file(str(paths["trec_run"]), kind="trec"))


def ranx_compute(data) -> dict[str, float]:
    import warnings

    from ranx import evaluate

    qrels, run = data
    with warnings.catch_warnings():
        # numba's "unsafe cast from uint64 to int64" note from ranx's ndcg kernel
        warnings.simplefilter("ignore")
        means = evaluate(qrels, run, RANX_METRICS)
    return {label: float(means[name]) for label, _, name, *_ in METRICS}


def pytrec_load(paths: dict[str, Path]):
    import pytrec_eval

    with open(paths["qrels"]) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(paths["trec_run"]) as f:
        run = pytrec_eval.parse_run(f)
    return qrels, run


def _pytrec_means(per_query: dict, measures) -> dict[str, float]:
    n = len(per_query)
    return {m: sum(values[m] for values in per_query.values()) / n for m in measures}


def pytrec_compute(data) -> dict[str, float]:
    import pytrec_eval

    qrels, run = data
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    means = _pytrec_means(per_query, PYTREC_MEASURES)
    # recip_rank has no cutoff in trec_eval: reported under mrr@10 but only timed, not checked.
    return {label: means[name] for label, _, _, name, _ in METRICS}


def pytrec_mrr_at_10(data) -> float:
    """trec_eval recip_rank of the run cut to its top 10 (= mrr@10); untimed, for the check."""
    import pytrec_eval

    qrels, run = data
    top10 = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:10]) for q, docs in run.items()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    return _pytrec_means(per_query, ["recip_rank"])["recip_rank"]


def pyarrow_csv_load(paths: dict[str, Path], pool: str = "system"):
    """The floor: the same TREC files read by pyarrow's CSV reader (space-delimited, typed
    columns), nothing checked, grouped or computed.

    ``pool="system"`` (the ``pyarrow-csv`` tool) builds the columns in the system allocator,
    as our reader does (``io.columns.read_pool``): on this VM arrow's default pool (mimalloc)
    hands freed pages back and faults them in again, 1.6-3.3 s of system time per read of the
    deep run, which would make the floor slow and the ratio flattering. ``pool="default"`` (the
    ``pyarrow-csv-mimalloc`` tool) is that default, for reference.
    """
    import pyarrow as pa
    import pyarrow.csv as csv

    memory_pool = pa.system_memory_pool() if pool == "system" else pa.default_memory_pool()

    def read(path: Path, names: list[str], types: dict) -> pa.Table:
        return csv.read_csv(
            path,
            read_options=csv.ReadOptions(column_names=names),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=csv.ConvertOptions(column_types=types),
            memory_pool=memory_pool,
        )

    return (
        read(paths["qrels"], ["q", "it", "d", "g"], {"q": pa.string(), "d": pa.string(), "g": pa.int64()}),
        read(
            paths["trec_run"],
            ["q", "it", "d", "r", "s", "m"],
            {"q": pa.string(), "d": pa.string(), "r": pa.int64(), "s": pa.float64()},
        ),
    )


#: The parse floors: pyarrow's CSV reader in the system allocator and in its default pool.
FLOORS = ("pyarrow-csv", "pyarrow-csv-mimalloc")

TOOLS = {
    # name: (label, loader(paths) -> data, compute(data) -> means)
    "pyarrow-csv": ("pyarrow", pyarrow_csv_load, lambda data: {}),
    "pyarrow-csv-mimalloc": ("pyarrow", lambda p: pyarrow_csv_load(p, "default"), lambda data: {}),
    "ours-trec": ("ours", lambda p: ours_load(p, "trec"), ours_compute),
    "ours-jsonl": ("ours", lambda p: ours_load(p, "jsonl"), ours_compute),
    "ranx": ("ranx", ranx_load, ranx_compute),
    "pytrec_eval": ("pytrec_eval", pytrec_load, pytrec_compute),
}


# --------------------------------------------------------------------------- measuring


def child(tool: str, directory: Path) -> None:
    """The cold run: from files to means in this fresh process; prints one JSON line."""
    t0 = time.perf_counter()
    _, load, compute = TOOLS[tool]
    data = load(files(directory))
    t1 = time.perf_counter()
    means = compute(data)
    t2 = time.perf_counter()
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)  # all threads of this process
    print(
        json.dumps(
            {
                "read_s": t1 - t0,
                "compute_s": t2 - t1,
                "means": means,
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    )


def peak_rss_mb() -> float:
    """This process's peak resident set size in MiB.

    ``VmHWM`` rather than ``ru_maxrss``: Linux carries ``ru_maxrss`` over ``exec`` from the
    forking parent, so a child started by a large benchmark process would report the parent's
    size; ``VmHWM`` belongs to the new address space only. Falls back to ``ru_maxrss``
    elsewhere.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale / 1024


def bytecode_note() -> str:
    """Compile our package's bytecode, as ``pip install`` leaves it, before timing cold runs.

    The peers are installed wheels, compiled at install time. Our package may be an editable
    install in a process where PYTHONDONTWRITEBYTECODE is set (as in this project's sandbox):
    each cold run would then compile 11k lines of source (about 0.1 s) that no installed copy
    compiles. Compiling writes ``__pycache__`` next to the sources, which git ignores.
    """
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("retrieval_eval")
    if spec is None or not spec.submodule_search_locations:
        return "bytecode: retrieval_eval not found"
    where = Path(list(spec.submodule_search_locations)[0])
    try:
        ok = compileall.compile_dir(str(where), quiet=1)
    except OSError as exc:
        return f"bytecode: could not compile {where} ({exc}); cold runs compile the sources"
    return (
        f"bytecode: {where} compiled as an install would leave it"
        if ok
        else f"bytecode: compiling {where} failed; cold runs compile the sources"
    )


def timed_child(argv: list[str], what: str, env: dict | None = None, cwd: Path | None = None) -> tuple[dict, float]:
    """Run ``argv`` in a fresh process (in ``cwd``): the JSON object its last output line holds,
    and the process's wall time from start to exit."""
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def cold(tool: str, directory: Path) -> dict:
    """Run ``tool`` in a fresh interpreter: its wall time, and the peak RSS it reports."""
    result, result["wall_s"] = timed_child(
        [sys.executable, str(Path(__file__).resolve()), "--child", tool, "--dir", str(directory)], f"{tool} cold run"
    )
    return result


def warm(tool: str, directory: Path, repeat: int = 3) -> dict:
    """Load once (untimed), one untimed warm-up call, then the median of ``repeat`` calls."""
    _, load, compute = TOOLS[tool]
    data = load(files(directory))
    extra = {}
    if tool == "pytrec_eval":
        extra["mrr@10 (top-10 recip_rank)"] = pytrec_mrr_at_10(data)
    compute(data)
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        means = compute(data)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    del data
    return {
        "warm_s": statistics.median(times),
        "warm_cpu_s": statistics.median(cpu),
        "warm_all_s": times,
        "means": means,
        **extra,
    }


def profile(size: str, seed: int, fmt: str) -> None:
    """Print a pyinstrument profile of our cold path (read, then evaluate) on ``size``."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("note: --profile needs pyinstrument (pip install pyinstrument); skipped")
        return
    paths = files(generate(size, seed))
    profiler = Profiler(interval=0.002)
    profiler.start()
    c0, w0 = time.process_time(), time.perf_counter()
    data = ours_load(paths, fmt)
    c1, w1 = time.process_time(), time.perf_counter()
    ours_compute(data)
    c2, w2 = time.process_time(), time.perf_counter()
    profiler.stop()
    print(
        f"ours ({fmt}) on {size}: read {w1 - w0:.2f} s wall / {c1 - c0:.2f} s CPU, "
        f"evaluate {w2 - w1:.2f} s wall / {c2 - c1:.2f} s CPU, peak {peak_rss_mb():.0f} MB"
    )
    print(profiler.output_text(unicode=False, color=False))


def warm_ranx_cache() -> None:
    """Compile ranx's numba kernels (cached on disk) before any timed cold run."""
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 2} for i in range(20)})
    run = Run.from_dict({f"q{i}": {"a": 0.5, "c": 0.4, "b": 0.3} for i in range(20)})
    evaluate(qrels, run, RANX_METRICS)


def _comparable(tool: str, res: dict, phase: str) -> dict[str, float]:
    """A tool's means with pytrec_eval's uncut recip_rank replaced by its top-10 value."""
    means = dict(res[phase]["means"])
    if tool == "pytrec_eval":
        top10 = res.get("warm", {}).get("mrr@10 (top-10 recip_rank)")
        if top10 is None:
            means.pop("mrr@10")
        else:
            means["mrr@10"] = top10
    return means


def check(results: dict) -> list[str]:
    """Every tool's means against the reference (ours when present); the disagreements."""
    order = sorted(results, key=lambda t: not t.startswith("ours"))
    reference_tool = next((t for t in order if "warm" in results[t] or "cold" in results[t]), None)
    if reference_tool is None:
        return []
    ref_phase = "warm" if "warm" in results[reference_tool] else "cold"
    ref = _comparable(reference_tool, results[reference_tool], ref_phase)
    problems = []
    for tool, res in results.items():
        for phase in ("warm", "cold"):
            if phase not in res:
                continue
            for label, value in _comparable(tool, res, phase).items():
                if label in ref and abs(value - ref[label]) > TOLERANCE:
                    problems.append(f"{tool} {phase} {label}: {value!r} vs {reference_tool} {ref[label]!r}")
    return problems


# --------------------------------------------------------------------------- report


def table(size: str, results: dict) -> str:
    """The figures as a Markdown table; ratios are tool / ours (> 1 means ours is faster)."""
    q, d = SIZES[size]
    lines = [
        f"### {size}: {q:,} queries x {d:,} docs ({q * d:,} run rows)",
        "",
        "| tool | cold wall s (read + compute) | cold CPU s | cold peak RSS MiB "
        "| warm wall s | warm CPU s | cold wall / ours | warm wall / ours "
        "| cold CPU / ours | warm CPU / ours |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ours = results.get("ours-trec") or results.get("ours-jsonl") or {}
    oc, ow = ours.get("cold", {}), ours.get("warm", {})

    def ratio(value, base):
        return f"{value / base:.1f}x" if value is not None and base else "-"

    for tool, res in results.items():
        c, w = res.get("cold", {}), res.get("warm", {})
        cold_txt = f"{c['wall_s']:.2f} ({c['read_s']:.2f} + {c['compute_s']:.2f})" if c else "-"
        cells = [
            tool,
            cold_txt,
            f"{c['cpu_s']:.2f}" if c else "-",
            f"{c['peak_rss_mb']:.0f}" if c else "-",
            f"{w['warm_s']:.3f}" if w else "-",
            f"{w['warm_cpu_s']:.3f}" if w else "-",
            ratio(c.get("wall_s"), oc.get("wall_s")),
            ratio(w.get("warm_s"), ow.get("warm_s")),
            ratio(c.get("cpu_s"), oc.get("cpu_s")),
            ratio(w.get("warm_cpu_s"), ow.get("warm_cpu_s")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(size: str, results: dict) -> list[str]:
    """The project's targets, judged on wall time (CPU-time ratios in brackets).

    The memory target is stated for 10M run rows, so it is judged on those sizes only.
    """
    out = []
    ours = results.get("ours-trec") or results.get("ours-jsonl") or {}
    peers = [("pytrec_eval", "cold", "wall_s", "cpu_s", 5), ("ranx", "warm", "warm_s", "warm_cpu_s", 2)]
    for peer, phase, wall, cpu, goal in peers:
        theirs = results.get(peer, {}).get(phase)
        mine = ours.get(phase)
        if theirs and mine:
            ratio = theirs[wall] / mine[wall]
            cpu_ratio = theirs[cpu] / mine[cpu]
            out.append(
                f"{phase} >= {goal}x faster than {peer}: {ratio:.1f}x "
                f"(CPU {cpu_ratio:.1f}x) {'MET' if ratio >= goal else 'MISSED'}"
            )
    # The floor is the faster pyarrow read of this run (the pools' times swing from run to run).
    floors = [(results[t]["cold"], t) for t in FLOORS if "cold" in results.get(t, {})]
    mine = results.get("ours-trec", {}).get("cold")
    if floors and mine:
        floor, which = min(floors, key=lambda f: f[0]["wall_s"])
        ratio = mine["wall_s"] / floor["wall_s"]
        out.append(
            f"ours-trec cold within 2x of the pyarrow CSV floor ({which}): {ratio:.2f}x "
            f"(CPU {mine['cpu_s'] / floor['cpu_s']:.2f}x) {'MET' if ratio <= 2 else 'MISSED'}"
        )
    q, d = SIZES[size]
    for tool in ("ours-trec", "ours-jsonl"):
        if q * d >= 10_000_000 and "cold" in results.get(tool, {}):
            mb = results[tool]["cold"]["peak_rss_mb"]
            out.append(f"{tool} peak RSS < 1 GiB: {mb:.1f} MiB {'MET' if mb < 1024 else 'MISSED'}")
    return out


# --------------------------------------------------------------------------- main


def bench(
    size: str, seed: int, tools: list[str], repeat: int, do_cold: bool, do_warm: bool, cold_repeat: int = 3
) -> dict:
    directory = generate(size, seed)
    results: dict[str, dict] = {tool: {} for tool in tools}
    if "ranx" in tools and do_cold:
        warm_ranx_cache()
    # Each tool runs cold ``cold_repeat`` times in a row and its figure is the median run (by
    # wall time). In a row, each tool's runs follow its own: a fresh process that follows one
    # that used GBs (ranx, pytrec_eval) first pays to fault pages back in (on this VM, ~0.5-1 s
    # for ours), which would otherwise depend on the order of the tools. The first run of a
    # row is the one after the previous tool: it stays in the JSON (``wall_runs``, run order).
    for tool in tools if do_cold else []:
        done = []
        for run_ in range(cold_repeat):
            print(f"  {tool}: cold {run_ + 1}/{cold_repeat} ...", end=" ", flush=True)
            try:
                done.append(c := cold(tool, directory))
                print(f"{c['wall_s']:.2f} s, {c['peak_rss_mb']:.0f} MB", flush=True)
            except Exception as exc:  # one tool's failure must not lose the others' figures
                results[tool]["cold_error"] = str(exc)
                print(f"FAILED: {exc}", flush=True)
                break
        else:
            median = sorted(done, key=lambda run: run["wall_s"])[(len(done) - 1) // 2]
            results[tool]["cold"] = dict(median, wall_runs=[run["wall_s"] for run in done])
    for tool in tools:
        if do_warm:
            print(f"  {tool}: warm ...", end=" ", flush=True)
            try:
                results[tool]["warm"] = w = warm(tool, directory, repeat)
                print(f"{w['warm_s']:.3f} s", flush=True)
            except Exception as exc:
                results[tool]["warm_error"] = f"{type(exc).__name__}: {exc}"
                print(f"FAILED: {type(exc).__name__}: {exc}", flush=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="quick", choices=sorted(SIZES) + sorted(GROUPS))
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument(
        "--tools", default="ours-trec,ours-jsonl,ranx,pytrec_eval", help="comma-separated subset of " + ",".join(TOOLS)
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed warm calls (median)")
    parser.add_argument("--cold-repeat", type=int, default=5, help="cold runs of each tool in a row (median)")
    parser.add_argument("--no-cold", action="store_true")
    parser.add_argument("--no-warm", action="store_true")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--force", action="store_true", help="regenerate the data")
    parser.add_argument("--json", type=Path, help="also write all figures to this file")
    parser.add_argument(
        "--all-trec",
        action="store_true",
        help="add the all_trec row: trec_eval's whole measure set per query, ours "
        "against pytrec_eval and ir_measures (bench_all_trec.py, seed 0 data)",
    )
    parser.add_argument(
        "--profile",
        choices=["trec", "jsonl"],
        help="instead of timing, profile our read + evaluate (needs pyinstrument)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        child(args.child, args.dir)
        return 0

    sizes = GROUPS.get(args.size, [args.size])
    if args.generate_only or args.force:
        for size in sizes:
            generate(size, args.seed, force=args.force)
        if args.generate_only:
            return 0

    if args.profile:
        for size in sizes:
            profile(size, args.seed, args.profile)
        return 0

    tools = []
    for tool in args.tools.split(","):
        if tool not in TOOLS:
            parser.error(f"unknown tool {tool!r}")
        note = available(TOOLS[tool][0])
        if note:
            print(f"note: {note}")
        else:
            tools.append(tool)

    from record import Recorder

    recorder = Recorder("bench_metrics", argv)
    print(
        f"python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    if not args.no_cold:
        print(bytecode_note())
    report = {}
    failed = False
    for size in sizes:
        results = bench(
            size, args.seed, tools, args.repeat, not args.no_cold, not args.no_warm, max(args.cold_repeat, 1)
        )
        problems = check(results)
        report[size] = {"results": results}
        print()
        print(table(size, results))
        print()
        for line in targets(size, results):
            print("target: " + line)
        errors = [f"{t} {k}: {v}" for t, r in results.items() for k, v in r.items() if k.endswith("_error")]
        problems = problems + errors
        report[size]["problems"] = problems
        if problems:
            failed = True
            print(f"PROBLEMS (disagreements beyond {TOLERANCE:g}, failures):")
            for p in problems:
                print("  " + p)
        elif len(results) > 1:
            print(
                f"agreement: every tool's means match to {TOLERANCE:g} "
                "(pytrec_eval mrr@10 checked on the run cut to its top 10)"
            )
        print(flush=True)
        if args.all_trec:
            import bench_all_trec  # its own data (seed 0): the row the catalogue's targets name

            bench_all_trec.main(
                ["--size", size, "--repeat", str(max(args.cold_repeat, 1)), "--tools", "ours,pytrec_eval,ir_measures"]
            )
            print(flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    recorder.write({"sizes": report, "summary": headline(report)})
    return 1 if failed else 0


def headline(report: dict) -> dict[str, float]:
    """The figures the README's table shows: each tool's cold wall time, and the ratios."""
    out: dict[str, float] = {}
    for size, entry in report.items():
        res = entry["results"]
        for tool, r in res.items():
            if "cold" in r:
                out[f"{size} {tool} cold s"] = r["cold"]["wall_s"]
            if "warm" in r:
                out[f"{size} {tool} warm s"] = r["warm"]["warm_s"]
        ours = res.get("ours-trec", {}).get("cold")
        for peer in (*FLOORS, "pytrec_eval"):
            theirs = res.get(peer, {}).get("cold")
            if ours and theirs:
                out[f"{size} ours-trec / {peer}"] = ours["wall_s"] / theirs["wall_s"]
    return out


if __name__ == "__main__":
    sys.exit(main())
