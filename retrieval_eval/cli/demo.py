"""``retrieval-eval demo``: the bundled demo data end to end, written to a folder.

One call runs what a user would run on their own data: score the three demo systems (dense,
BM25, RRF) against the judgments, calibrate their top-1 scores against the out-of-distribution
queries, check the labels against a re-chunked corpus, compare the systems with paired
significance tests, apply a documented default set of gates (:data:`DEMO_GATES`), and write
the results (spec reports, tables, plots) plus ``index.html``: one self-contained page (every
plot embedded as a data URI, no script, no external file) that reads the same offline or
mailed. Everything written is listed in the returned dict, so a notebook or a test can open
exactly what was produced.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from ..io.safewrite import atomic_write_text
from .demo_figures import demo_plots

__all__ = ["DEMO_GATES", "HEADLINE_METRICS", "calibration_verdict", "run_demo"]

#: Cutoff the demo scores at.
DEMO_K = 10
#: The systems' comparison baseline: the lexical system the two others try to beat.
DEMO_BASELINE = "bm25"
#: The gates the demo applies by default, one release check each: ranking quality and recall
#: at the demo's cutoff, at least 80% of out-of-distribution queries answered with nothing at
#: the calibrated cutoff, and no stratum of queries left far behind. A system whose figure
#: cannot be trusted (rank-based scores for ``negative_satisfaction``) is INDETERMINATE, not
#: PASS. ``run_demo(..., gates=())`` applies none, and the page says so.
DEMO_GATES = ("ndcg@10:0.6", "recall@10:0.6", "negative_satisfaction:0.8", "worst-stratum:recall@10:0.4")
#: The headline's metrics (the full table lists every metric).
HEADLINE_METRICS = ("ndcg@10", "recall@10", "mrr@10", "auroc", "negative_satisfaction", "positive_retention")
#: AUROC at or above which the top-1 score is said to separate OOD queries; at or above
#: ``PARTLY`` it does so partly. Conventions for reading an AUROC, stated where they are used.
SEPARATES, PARTLY = 0.9, 0.7


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


def calibration_verdict(row: pd.Series, negative_floor: float | None = None) -> str:
    """One phrase on whether a system's top-1 score tells OOD queries apart, from its
    calibration summary row (``rank_based``, ``auroc``, ``n_positive``, ``n_negative``).

    Rank-based scores (RRF) come first: their AUROC measures rank positions, not relevance,
    so no cutoff on them means anything. Fewer than ``FEW_SAMPLES`` positives or negatives
    are too few to judge. Otherwise the AUROC is read against :data:`SEPARATES` and
    :data:`PARTLY`. With ``negative_floor`` (the floor of a ``negative_satisfaction`` gate), a
    score that separates by AUROC but whose calibrated cutoff refuses a smaller share of the
    OOD queries than the floor is not said to separate them: the AUROC grades the ranking over
    every cutoff, the gate the one cutoff production would use, and a headline must not praise
    what its own gate fails.
    """
    from ..viz.style import FEW_SAMPLES

    if bool(row["rank_based"]):
        return "cannot separate OOD queries (rank-based scores)"
    if min(int(row["n_positive"]), int(row["n_negative"])) < FEW_SAMPLES:
        return "too few samples to judge"
    auroc = float(row["auroc"])
    if not math.isfinite(auroc):
        return "no AUROC"
    refused = float(row.get("negative_satisfaction", math.nan))
    if auroc >= PARTLY and negative_floor is not None and math.isfinite(refused) and refused < negative_floor:
        return f"ranks OOD queries apart, but its cutoff refuses only {refused:.0%} (gate {negative_floor:.0%})"
    if auroc >= SEPARATES:
        return "separates OOD queries"
    if auroc >= PARTLY:
        return "separates OOD queries partly"
    return "does not separate OOD queries"


def run_demo(out_dir: str | os.PathLike[str], gates=DEMO_GATES) -> dict[str, Path]:
    """Run the demo and write its results into ``out_dir`` (created when missing).

    ``gates``: gate expressions applied to every system's report (default
    :data:`DEMO_GATES`; an empty sequence applies none, and the page then says "no gates
    applied" rather than PASS: with no gate there is nothing to pass).

    Returns ``{name: path}`` for every file written, in the order ``index.html`` lists them:
    ``report.json`` (one spec report per system, keyed by system, as ``score --out`` writes for
    a multi-system run, gates folded into each verdict), ``report-<system>.json`` (each a spec
    report on its own), ``headline.csv`` (the page's headline, one row per system),
    ``metrics.csv`` (system x metric), ``comparison.csv`` (the paired tests against
    ``bm25``), ``calibration.csv`` and ``calibration.json``, ``drift.json`` (the judgments
    against the re-chunked corpus), PNG plots (one score distribution per calibrated system),
    and ``index.html``.
    """
    from ..analysis.calibration.core import calibrate
    from ..analysis.decisions.compare import compare
    from ..analysis.decisions.gates import apply_gates
    from ..analysis.drift.core import drift
    from ..analysis.evaluation.core import evaluate
    from ..analysis.evaluation.ties import in_given_order
    from ..datasets import load_demo

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    demo = load_demo()
    gates = [str(g) for g in gates]
    written: dict[str, Path] = {}

    runs = in_given_order(demo.runs)  # the demo's ties follow its card (by chunk id): the order is meant
    calibration = calibrate(demo.judgments, runs, queries=demo.queries)
    drift_result = drift(demo.judgments, demo.corpus_v2)
    ev = evaluate(demo.judgments, runs, k=(1, 5, DEMO_K), queries=demo.queries)
    comparison = compare(
        demo.judgments,
        runs,
        baseline=DEMO_BASELINE,
        k=DEMO_K,
        metrics=("ndcg", "recall", "mrr"),
        queries=demo.queries,
        calibration=False,
    )
    # The runs were made on the original corpus, so the reports check the labels against it;
    # drift.json shows what the re-chunk (corpus_v2) does to the same labels.
    reports = {
        system: apply_gates(
            ev.report(system=system, corpus=demo.corpus, calibration=calibration, queries=demo.queries).to_dict(), gates
        )
        for system in ev.systems
    }
    headline = _headline(reports, calibration, drift_result, gates)

    written["report.json"] = _write(out / "report.json", _json({"systems": reports}))
    for system, data in reports.items():
        name = f"report-{system}.json"
        written[name] = _write(out / name, _json(data))
    written["headline.csv"] = _write(out / "headline.csv", headline.to_csv(float_format="%.12g"))
    written["metrics.csv"] = _write(out / "metrics.csv", ev.summary.to_csv(float_format="%.12g"))
    written["comparison.csv"] = _write(
        out / "comparison.csv", comparison.table.to_csv(index=False, float_format="%.12g")
    )
    written["calibration.csv"] = _write(out / "calibration.csv", calibration.summary.to_csv(float_format="%.12g"))
    written["calibration.json"] = _write(out / "calibration.json", _json(calibration.to_dict()))
    written["drift.json"] = _write(out / "drift.json", _json(drift_result.to_dict()))

    plots = demo_plots(out, ev, calibration, drift_result, comparison, DEMO_K, DEMO_BASELINE)
    written.update({name: path for name, (path, _) in plots.items()})
    page = _index_html(
        reports, headline, calibration, drift_result, comparison, gates, plots, list(written) + ["index.html"]
    )
    written["index.html"] = _write(out / "index.html", page)
    return written


def _headline(reports: dict[str, dict[str, Any]], calibration, drift_result, gates: list[str]) -> pd.DataFrame:
    """One row per system: the headline metrics, the calibration verdict, label drift (against
    the run's corpus, from the report, and against the re-chunked corpus) and the gates'
    status ("no gates applied" when there were none)."""
    from ..analysis.decisions.gates import parse_gate

    floors = [
        g.threshold for g in map(parse_gate, gates) if g.kind == "absolute" and g.metric == "negative_satisfaction"
    ]
    rows = {}
    rechunked = float(drift_result.summary["invalid_ratio"])
    for system, data in reports.items():
        row: dict[str, Any] = {}
        for name in HEADLINE_METRICS:
            m = data["metrics"].get(name)
            row[name] = float(m["value"]) if isinstance(m, dict) else math.nan
        row["calibration"] = (
            calibration_verdict(calibration.summary.loc[system], max(floors, default=None))
            if system in calibration.summary.index
            else "not calibrated"
        )
        d = (data.get("judgments") or {}).get("drift") or {}
        row["labels_not_valid"] = float(d.get("invalid_ratio", math.nan))
        row["labels_not_valid_rechunked"] = rechunked
        row["gates"] = data["verdict"]["status"] if gates else "no gates applied"
        rows[system] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.Index(list(rows), dtype=pd.StringDtype(), name="system")
    return frame


_PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em;
       color: #1f2328; line-height: 1.4; }
table { border-collapse: collapse; margin: .6em 0; font-size: .92em; }
.scroll { overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: .25em .6em; text-align: right; }
th:first-child, td.text { text-align: left; }
th { white-space: nowrap; } thead th, #ood th { white-space: normal; }
td.text { max-width: 16em; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px;
          vertical-align: -0.1em; margin-right: .35em; }
.PASS { color: #1a7f37; font-weight: 600; } .FAIL { color: #cf222e; font-weight: 600; }
.INDETERMINATE { color: #9a6700; font-weight: 600; } .none { color: #57606a; font-style: italic; }
figure { display: inline-block; vertical-align: top; margin: .6em; max-width: 34em; }
figure img { max-width: 34em; width: 100%; }
figcaption { font-size: .9em; color: #424a53; }
.legend { font-size: .9em; color: #424a53; }
.re-box td, .re-box th { border: 1px solid #d0d7de; }
"""


def _fit_headers(table_html: str, table_id: str) -> str:
    """``table_html`` with an id and headers that may wrap after ``_`` or ``@``: fourteen
    headers like ``negative_satisfaction`` held on one line each made the OOD table wider
    than the page's column."""
    out = table_html.replace("<table>", f'<table id="{table_id}">', 1)
    return re.sub(r"<th>([^<]*)</th>", lambda m: "<th>" + re.sub(r"([_@])", r"\1<wbr>", m.group(1)) + "</th>", out)


def _f4(value: Any) -> str:
    """Four decimals throughout, ``-`` where a value does not exist."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return html.escape(str(value))
    return "-" if not math.isfinite(x) else f"{x:.4f}"


def _swatch(colors: dict[str, str], system: str) -> str:
    esc = html.escape
    return (
        f'<span class="swatch" style="background:{colors[system]}" '
        f'title="{esc(system)}\'s colour in every plot"></span>{esc(system)}'
    )


def _status(text: str) -> str:
    cls = text if text in ("PASS", "FAIL", "INDETERMINATE") else "none"
    return f'<span class="{cls}">{html.escape(text)}</span>'


def _headline_html(headline: pd.DataFrame, colors: dict[str, str]) -> str:
    """The headline table: one row per system."""
    esc = html.escape
    head_cols = list(HEADLINE_METRICS) + [
        "calibration",
        "labels not VALID (run's corpus)",
        "labels not VALID (re-chunked)",
        "gates",
    ]
    head_rows = []
    system: Any  # the index's labels: system names
    for system, row in headline.iterrows():
        cells = [f"<td>{_f4(row[m])}</td>" for m in HEADLINE_METRICS]
        cells.append(f'<td class="text">{esc(row["calibration"])}</td>')
        cells.append(f"<td>{_f4(row['labels_not_valid'])}</td>")
        cells.append(f"<td>{_f4(row['labels_not_valid_rechunked'])}</td>")
        cells.append(f"<td>{_status(row['gates'])}</td>")
        head_rows.append(
            f'<tr data-system="{esc(system)}"><th>{_swatch(colors, system)}</th>' + "".join(cells) + "</tr>"
        )
    return (
        '<table id="headline"><thead><tr><th>system</th>'
        + "".join(f"<th>{esc(c.replace('_', ' '))}</th>" for c in head_cols)
        + "</tr></thead><tbody>"
        + "".join(head_rows)
        + "</tbody></table>"
    )


def _gates_html(reports: dict[str, dict[str, Any]], gates: list[str], colors: dict[str, str]) -> tuple[str, str]:
    """The gates table (or why there is none) and the verdicts' reasons."""
    esc = html.escape
    systems = list(reports)
    if gates:
        gate_rows = []
        for i, expression in enumerate(gates):
            cells = []
            for system in systems:
                result = reports[system]["verdict"]["gates"][i]
                observed = result.get("observed")
                seen = "" if observed is None else f" ({_f4(observed)})"
                cells.append(f"<td>{_status(result['status'])}{seen}</td>")
            gate_rows.append(f"<tr><th><code>{esc(expression)}</code></th>{''.join(cells)}</tr>")
        gates_html = (
            "<p>The demo's default gates (<code>retrieval_eval.demo.DEMO_GATES</code>), applied "
            "to every system's report. <code>metric:floor</code> passes at or above the floor; "
            "<code>worst-stratum:metric:floor</code> needs every stratum there. A figure that "
            "cannot be trusted makes a gate INDETERMINATE, never PASS; the verdict is the worst "
            "of its gates. The observed value is in brackets.</p>"
            '<table id="gates"><thead><tr><th>gate</th>'
            + "".join(f"<th>{_swatch(colors, s)}</th>" for s in systems)
            + "</tr></thead><tbody>"
            + "".join(gate_rows)
            + "</tbody></table>"
        )
    else:
        gates_html = (
            '<p id="gates" class="none">no gates applied: the reports carry no '
            "verdict to pass or fail (run <code>retrieval-eval score --gate ...</code> "
            "or <code>run_demo(out, gates=[...])</code> to apply some).</p>"
        )
    reasons = "".join(
        f"<li>{_swatch(colors, s)}: "
        + "<ul>"
        + "".join(f"<li>{esc(r)}</li>" for r in d["verdict"].get("reasons", []))
        + "</ul></li>"
        for s, d in reports.items()
        if d["verdict"].get("reasons")
    )
    return gates_html, (f"<h3>Why</h3><ul>{reasons}</ul>" if reasons else "")


def _metrics_html(reports: dict[str, dict[str, Any]], colors: dict[str, str]) -> tuple[str, str]:
    """Every metric of every system's report, and its legend (notes on what cannot be gated)."""
    esc = html.escape
    systems = list(reports)
    notes: list[str] = []
    metric_names: list[str] = []
    for data in reports.values():
        for name in data["metrics"]:
            if name not in metric_names:
                metric_names.append(name)

    def cell(m: Any) -> str:
        if not isinstance(m, dict):
            return "<td>-</td>"
        text = _f4(m["value"])
        if m.get("ci"):
            text += f" <small>[{_f4(m['ci'][0])}, {_f4(m['ci'][1])}]</small>"
        if m.get("indeterminate"):
            why = str(m["indeterminate"])
            if why not in notes:
                notes.append(why)
            text += f' <sup title="{esc(why)}">&dagger;{notes.index(why) + 1}</sup>'
        return f"<td>{text}</td>"

    rows = "".join(
        f"<tr><th>{esc(name)}</th>" + "".join(cell(reports[s]["metrics"].get(name)) for s in systems) + "</tr>"
        for name in metric_names
    )
    metrics_table = (
        '<table id="metrics"><thead><tr><th>metric</th>'
        + "".join(f"<th>{_swatch(colors, s)}</th>" for s in systems)
        + "</tr></thead><tbody>"
        + rows
        + "</tbody></table>"
    )
    metrics_legend = (
        '<p class="legend">Values at 4 decimals; <small>[low, high]</small> is the 95% interval '
        "where the report has one (Wilson for shares, percentile bootstrap for AUROC and the "
        "separation margin)."
        + "".join(f"<br>&dagger;{i + 1}: cannot be gated: {esc(n)}" for i, n in enumerate(notes))
        + "</p>"
    )
    return metrics_table, metrics_legend


def _calibration_html(calibration) -> tuple[str, str]:
    """The calibration summary as a table whose headers may wrap, and its warnings as list items."""
    from ..viz.html import table as html_table

    cal_table = _fit_headers(html_table(calibration.summary, max_rows=50), "ood")
    warnings = "".join(f"<li>{html.escape(w)}</li>" for w in getattr(calibration, "warnings", []) or [])
    return cal_table, warnings


def _drift_rows(drift_result) -> str:
    """The drift summary's rows: a figure or a count per line."""
    esc = html.escape
    return "".join(
        f"<tr><th>{esc(k)}</th><td>{_f4(v) if isinstance(v, float) else esc(str(v))}</td></tr>"
        for k, v in drift_result.summary.to_dict().items()
    )


def _figures_html(plots: dict[str, tuple[Path, str]]) -> str:
    """Every plot embedded as a data URI, its caption under it."""
    esc = html.escape
    return "".join(
        f'<figure id="fig-{esc(Path(name).stem)}"><img alt="{esc(caption)}" '
        f'src="data:image/png;base64,{base64.b64encode(path.read_bytes()).decode("ascii")}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
        for name, (path, caption) in plots.items()
    )


def _index_html(
    reports: dict[str, dict[str, Any]],
    headline: pd.DataFrame,
    calibration,
    drift_result,
    comparison,
    gates: list[str],
    plots: dict[str, tuple[Path, str]],
    files: list[str],
) -> str:
    """``index.html``: headline, gates, comparison, every metric, calibration, drift, plots and
    the files written, in one self-contained page."""
    from ..viz.style import system_colors

    esc = html.escape
    status = _status
    colors = system_colors(calibration.summary.index.tolist() + list(reports))
    headline_table = _headline_html(headline, colors)
    gates_html, reasons_html = _gates_html(reports, gates, colors)
    metrics_table, metrics_legend = _metrics_html(reports, colors)
    cal_table, warnings = _calibration_html(calibration)
    drift_rows = _drift_rows(drift_result)
    figures = _figures_html(plots)
    file_list = "".join(f'<li><a href="{esc(n)}">{esc(n)}</a></li>' for n in files)

    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>retrieval-eval demo</title>
<style>{_PAGE_STYLE}</style></head><body>
<h1>retrieval-eval demo</h1>
<p>Three systems scored at k={DEMO_K} on the bundled demo: Python's help topics, in-domain
queries with graded labels, and out-of-distribution queries that nothing answers. dense is an
embedding retriever, bm25 a lexical one, rrf their reciprocal-rank fusion. This page is one
self-contained file: the plots are embedded, so it reads the same offline or mailed.</p>
<h2>Headline</h2>
{headline_table}
<p class="legend">One row per system. The square beside a system's name is its colour in
every plot on this page. Metrics at 4 decimals, means over the judged queries with positives;
auroc, negative_satisfaction (share of out-of-distribution queries whose top-1 score falls
below the calibrated cutoff) and positive_retention (share of covered queries at or above it)
come from the calibration. <b>calibration</b>: whether the top-1 score tells
out-of-distribution queries apart (AUROC &ge; {SEPARATES} separates, &ge; {PARTLY} partly;
rank-based scores cannot). <b>labels not VALID</b>: the share of labels that no longer point
at the same text, against the corpus the runs were made on and against the re-chunked corpus
(see Label drift). <b>gates</b>: {status("PASS")}, {status("FAIL")} or
{status("INDETERMINATE")} (a figure too thin to trust) after the gates below; without gates,
{status("no gates applied")}.</p>
<h2>Gates applied</h2>
{gates_html}
{reasons_html}
<h2>Comparison against {esc(comparison.baseline)}</h2>
{comparison._repr_html_()}
<p class="legend">delta = system mean &minus; baseline mean over the same queries; the
interval is a 95% percentile bootstrap of the mean difference; p is the paired
randomization test, p (Holm) corrected across every row; bold deltas are significant after
correction.</p>
<h2>Every metric</h2>
{metrics_table}
{metrics_legend}
<h2>Out-of-distribution calibration</h2>
<div class="scroll">{cal_table}</div>
<p class="legend">Per system: the calibrated cutoff (the {calibration.summary["quantile"].iloc[0]:g}
quantile of the positives' top-1 scores), the shares it keeps and rejects, and how well the
score separates the classes (AUROC, AUPR, FPR at 95% TPR). rank_based: the scores come from
rank positions (RRF), so no cutoff on them means anything.</p>
<h3>Calibration warnings</h3><ul>{warnings or "<li>none</li>"}</ul>
<h2>Label drift against the re-chunked corpus</h2>
<table id="drift">{drift_rows}</table>
<h2>Plots</h2>
{figures}
<h2>Files</h2>
<p class="legend">Written beside this page (the page itself needs none of them).</p>
<ul>{file_list}</ul>
</body></html>
"""
