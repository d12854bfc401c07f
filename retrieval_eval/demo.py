"""``retrieval-eval demo``: the bundled demo data end to end, written to a folder.

One call runs what a user would run on their own data: score the three demo systems (dense,
BM25, RRF) against the judgments, calibrate their top-1 scores against the out-of-distribution
queries, check the labels against a re-chunked corpus, and write the results (spec reports,
tables, plots) plus an ``index.html`` that lists and shows them. Everything written is listed in
the returned dict, so a notebook or a test can open exactly what was produced.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from .safewrite import atomic_write_bytes, atomic_write_text

__all__ = ["run_demo"]

#: Cutoff the demo scores at.
DEMO_K = 10


def _write(path: Path, text: str) -> Path:
    atomic_write_text(path, text)
    return path


def _json(data: Any) -> str:
    return json.dumps(_clean(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            return _clean(item())
        except (TypeError, ValueError):
            return str(value)
    return value


def _save_figure(draw, path: Path, figsize=(6.4, 4.2)) -> Path:
    """Draw on a fresh Figure (no pyplot, so no GUI backend and no global state) and save it."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    draw(ax)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    atomic_write_bytes(path, buffer.getvalue())  # the one safe write path (retrieval_eval.safewrite)
    return path


def run_demo(out_dir: str | os.PathLike) -> dict[str, Path]:
    """Run the demo and write its results into ``out_dir`` (created when missing).

    Returns ``{name: path}`` for every file written, in the order ``index.html`` lists them:
    ``report.json`` (one spec report per system, keyed by system, as ``score --out`` writes for
    a multi-system run), ``report-<system>.json`` (each a spec report on its own),
    ``metrics.csv`` (system x metric), ``calibration.csv`` and ``calibration.json``,
    ``drift.json`` (the judgments against the re-chunked corpus), PNG plots, and ``index.html``.
    """
    from .calibration import calibrate
    from .datasets import load_demo
    from .drift import drift
    from .evaluation import evaluate

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    demo = load_demo()
    written: dict[str, Path] = {}

    calibration = calibrate(demo.runs, demo.judgments, queries=demo.queries)
    drift_result = drift(demo.judgments, demo.corpus_v2)
    ev = evaluate(demo.judgments, demo.runs, k=(1, 5, DEMO_K), queries=demo.queries)
    # The runs were made on the original corpus, so the reports check the labels against it;
    # drift.json shows what the re-chunk (corpus_v2) does to the same labels.
    reports = {
        system: ev.report(system=system, corpus=demo.corpus, calibration=calibration,
                          queries=demo.queries).to_dict()
        for system in ev.systems
    }

    written["report.json"] = _write(out / "report.json", _json({"systems": reports}))
    for system, data in reports.items():
        name = f"report-{system}.json"
        written[name] = _write(out / name, _json(data))
    written["metrics.csv"] = _write(out / "metrics.csv", ev.summary.to_csv(float_format="%.12g"))
    written["calibration.csv"] = _write(out / "calibration.csv",
                                        calibration.summary.to_csv(float_format="%.12g"))
    written["calibration.json"] = _write(out / "calibration.json", _json(calibration.to_dict()))
    written["drift.json"] = _write(out / "drift.json", _json(drift_result.to_dict()))

    written.update(_plots(out, ev, calibration, drift_result))
    written["index.html"] = _write(out / "index.html",
                                   _index_html(reports, calibration, drift_result, written))
    return written


def _plots(out: Path, ev, calibration, drift_result) -> dict[str, Path]:
    """The demo's figures, one PNG each, drawn by :mod:`retrieval_eval.plotting`."""
    from . import plotting

    figures = {
        "scores.png": lambda ax: plotting.plot_calibration(calibration, "distribution", ax=ax, system="dense"),
        "scores-rrf.png": lambda ax: plotting.plot_calibration(calibration, "distribution", ax=ax, system="rrf"),
        "roc.png": lambda ax: plotting.plot_calibration(calibration, "roc", ax=ax),
        "pr.png": lambda ax: plotting.plot_calibration(calibration, "pr", ax=ax),
        "tradeoff.png": lambda ax: plotting.plot_calibration(calibration, "tradeoff", ax=ax, system="dense"),
        "strata.png": lambda ax: plotting.plot_evaluation(ev, "strata", ax=ax, metric="recall"),
        "recall-at-k.png": lambda ax: plotting.plot_evaluation(ev, "metric_at_k", ax=ax, metric="recall"),
        "delta.png": lambda ax: plotting.plot_evaluation(ev, "delta", ax=ax, metric="ndcg",
                                                         baseline="bm25", candidate="dense"),
        "drift.png": lambda ax: plotting.plot_drift(drift_result, ax=ax),
    }
    square = {"roc.png", "pr.png"}  # equal-aspect curves need a square canvas
    return {name: _save_figure(draw, out / name, (5.6, 6.2) if name in square else (6.4, 4.2))
            for name, draw in figures.items()}


def _index_html(reports: dict[str, dict[str, Any]], calibration, drift_result,
                written: dict[str, Path]) -> str:
    esc = html.escape
    systems = list(reports)
    metric_names: list[str] = []
    for data in reports.values():
        for name in data["metrics"]:
            if name not in metric_names:
                metric_names.append(name)

    def cell(m: Any) -> str:
        if not isinstance(m, dict):
            return "<td>-</td>"
        text = f"{m['value']:.4f}"
        if m.get("ci"):
            text += f" <small>[{m['ci'][0]:.3f}, {m['ci'][1]:.3f}]</small>"
        if m.get("indeterminate"):
            text += f' <span title="{esc(str(m["indeterminate"]))}">&#9888;</span>'
        return f"<td>{text}</td>"

    rows = "".join(
        f"<tr><th>{esc(name)}</th>" + "".join(cell(reports[s]["metrics"].get(name)) for s in systems) + "</tr>"
        for name in metric_names
    )
    metrics_table = (
        "<table><tr><th>metric</th>" + "".join(f"<th>{esc(s)}</th>" for s in systems) + "</tr>"
        + rows + "</table>"
    )
    verdicts = "".join(
        f"<li><b>{esc(s)}</b>: {esc(d['verdict']['status'])}"
        + ("<ul>" + "".join(f"<li>{esc(r)}</li>" for r in d["verdict"].get("reasons", [])) + "</ul>"
           if d["verdict"].get("reasons") else "")
        + "</li>"
        for s, d in reports.items()
    )
    summary = drift_result.summary.to_dict()
    drift_rows = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in summary.items())
    warnings = "".join(f"<li>{esc(w)}</li>" for w in getattr(calibration, "warnings", []) or [])
    images = "".join(
        f'<figure><img src="{esc(name)}" alt="{esc(name)}"><figcaption>{esc(name)}</figcaption></figure>'
        for name in written if name.endswith(".png")
    )
    files = "".join(f'<li><a href="{esc(name)}">{esc(name)}</a></li>' for name in written)
    files += '<li><a href="index.html">index.html</a> (this page)</li>'
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>retrieval-eval demo</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: .25em .6em; text-align: right; }}
th:first-child {{ text-align: left; }}
figure {{ display: inline-block; margin: .5em; }} img {{ max-width: 32em; }}
</style></head><body>
<h1>retrieval-eval demo</h1>
<p>Three systems (dense, BM25, RRF) scored at k={DEMO_K} on the bundled demo: Python's help topics,
in-domain queries with graded labels, and out-of-distribution queries that nothing answers.</p>
<h2>Metrics</h2>{metrics_table}
<h2>Verdicts</h2><ul>{verdicts}</ul>
<h2>Calibration warnings</h2><ul>{warnings or "<li>none</li>"}</ul>
<h2>Label drift against the re-chunked corpus</h2><table>{drift_rows}</table>
<h2>Plots</h2>{images}
<h2>Files</h2><ul>{files}</ul>
</body></html>
"""
