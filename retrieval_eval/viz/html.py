"""Compact HTML for notebooks: headline numbers first, warnings visible, no giant frames."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["STATUS_CLASS", "box", "esc", "evaluation_html", "report_html", "table",
           "validation_html", "warnings_html"]

_STYLE = ("<style>.re-box{font-family:system-ui,sans-serif;font-size:13px}"
          ".re-box table{border-collapse:collapse;margin:4px 0}"
          ".re-box td,.re-box th{padding:2px 8px;text-align:right;border-bottom:1px solid #8884}"
          ".re-box th:first-child,.re-box td:first-child{text-align:left}"
          ".re-pass{color:#1a7f37;font-weight:600}.re-fail{color:#cf222e;font-weight:600}"
          ".re-ind{color:#9a6700;font-weight:600}.re-warn{color:#9a6700}</style>")
STATUS_CLASS = {"PASS": "re-pass", "FAIL": "re-fail", "INDETERMINATE": "re-ind"}


def esc(x: Any) -> str:
    return html.escape(str(x))


def table(frame: pd.DataFrame, max_rows: int = 20, floatfmt: str = "{:.4f}") -> str:
    """A small HTML table; longer frames are cut with a note saying how many rows are hidden."""
    shown = frame.head(max_rows)
    head = "".join(f"<th>{esc(c)}</th>" for c in [frame.index.name or ""] + list(frame.columns))
    def fmt(v) -> str:
        if v is None or v is pd.NA or (isinstance(v, float) and pd.isna(v)):
            return ""
        if isinstance(v, (float, np.floating)):
            return floatfmt.format(v)
        return esc(v)

    columns = [shown[c].tolist() for c in shown.columns]  # per column: ints stay ints
    rows = []
    for i, idx in enumerate(shown.index):
        label = " / ".join(map(str, idx)) if isinstance(idx, tuple) else str(idx)
        cells = "".join(f"<td>{fmt(col[i])}</td>" for col in columns)
        rows.append(f"<tr><td>{esc(label)}</td>{cells}</tr>")
    more = (f"<div>… {len(frame) - max_rows} more rows (use .to_frame())</div>"
            if len(frame) > max_rows else "")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{more}"


def box(title: str, body: str) -> str:
    return f"{_STYLE}<div class='re-box'><b>{esc(title)}</b>{body}</div>"


def warnings_html(warnings) -> str:
    return "".join(f"<div class='re-warn'>⚠ {esc(w)}</div>" for w in warnings)


def evaluation_html(ev) -> str:
    metrics = ev.summary.drop(columns="n")
    counts = ", ".join(f"{esc(s)} {int(n)}" for s, n in ev.summary["n"].items())
    body = f"<div>queries scored: {counts}</div>"
    body += table(metrics.T if len(metrics) <= 6 else metrics, max_rows=40)
    pq = ev.per_query
    notes = []
    for flag, text in (("missing", "judged queries missing from the run (scored zero)"),
                       ("no_positives", "queries without positives (excluded)"),
                       ("duplicates", "rankings that repeated a key (counted once)")):
        n = int(pq[flag].sum())
        if n:
            notes.append(f"{n} {text}")
    body += warnings_html(notes)
    if ev.has_strata:
        metric = ev.metric("ndcg")
        cols = ["n", metric] if metric in ev.per_stratum.columns else ["n"]
        body += "<div>per stratum</div>" + table(ev.per_stratum[cols], max_rows=30)
    title = (f"Evaluation: {len(ev.systems)} system(s), "
             f"{pq['query_id'].nunique()} judged queries, k={list(ev.ks)}, "
             f"threshold={ev.threshold}, gain={ev.gain}")
    return box(title, body)


def validation_html(result) -> str:
    status = "ok" if result.ok else "errors"
    body = (f"<div>{result.queries} queries, {result.labels} labels "
            f"({result.human_labels} human, {result.synthetic_labels} synthetic): "
            f"<span class='{'re-pass' if result.ok else 're-fail'}'>{status}</span></div>")
    if result.issues:
        body += table(result.to_frame().set_index("severity"), max_rows=20)
    return box("Validation", body)


def report_html(data: dict) -> str:
    verdict = data["verdict"]
    status = verdict["status"]
    body = f"<div class='{STATUS_CLASS[status]}'>{esc(status)}</div>"
    body += warnings_html(verdict.get("reasons", []))
    metrics = pd.DataFrame({k: {"value": v["value"], "n": v.get("n"),
                                "ci": "" if "ci" not in v else
                                f"[{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]"}
                            for k, v in data["metrics"].items()}).T
    if len(metrics):
        metrics.index.name = "metric"
        body += table(metrics, max_rows=40)
    for gate in verdict.get("gates", []):
        body += (f"<div>gate <code>{esc(gate['expression'])}</code>: "
                 f"<span class='{STATUS_CLASS[gate['status']]}'>{esc(gate['status'])}</span></div>")
    j = data["judgments"]
    return box(f"Report ({j['queries']} queries, {j.get('queries_scored', '?')} scored, "
               f"{j['labels']} labels)", body)
