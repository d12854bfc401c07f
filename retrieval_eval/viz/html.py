"""Compact HTML for notebooks: headline numbers first, warnings visible, no giant frames."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["STATUS_CLASS", "box", "esc", "evaluation_html", "report_html", "table", "validation_html", "warnings_html"]

_STYLE = (
    "<style>.re-box{font-family:system-ui,sans-serif;font-size:13px}"
    ".re-box table{border-collapse:collapse;margin:4px 0}"
    ".re-box td,.re-box th{padding:2px 8px;text-align:right;border-bottom:1px solid #8884}"
    ".re-box th:first-child,.re-box td:first-child{text-align:left}"
    ".re-pass{color:#1a7f37;font-weight:600}.re-fail{color:#cf222e;font-weight:600}"
    ".re-ind{color:#9a6700;font-weight:600}.re-warn{color:#9a6700}</style>"
)
STATUS_CLASS = {"PASS": "re-pass", "FAIL": "re-fail", "INDETERMINATE": "re-ind"}


def esc(x: Any) -> str:
    """Any value as HTML text (``<``, ``>``, ``&`` and quotes as entities).

    Parameters
    ----------
    x : object

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import esc
    >>> esc("<b>")
    '&lt;b&gt;'
    """
    return html.escape(str(x))


def table(frame: pd.DataFrame, max_rows: int = 20, floatfmt: str = "{:.4f}") -> str:
    """A small HTML table; longer frames are cut with a note saying how many rows are hidden.

    Parameters
    ----------
    frame : pandas.DataFrame
        Its index becomes the first column (a MultiIndex joined with `` / ``).
    max_rows : int, default 20
    floatfmt : str, default "{:.4f}"

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> from retrieval_eval.viz import table
    >>> table(pd.DataFrame({"ndcg@10": [0.61234]}, index=pd.Index(["dense"], name="system")))
    '<table><tr><th>system</th><th>ndcg@10</th></tr><tr><td>dense</td><td>0.6123</td></tr></table>'
    """
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
    more = f"<div>… {len(frame) - max_rows} more rows (use .to_frame())</div>" if len(frame) > max_rows else ""
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{more}"


def box(title: str, body: str) -> str:
    """A titled box (with its style sheet) around rendered HTML, as every result shows itself.

    Parameters
    ----------
    title : str
        Plain text (escaped).
    body : str
        HTML.

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import box
    >>> box("Evaluation", "<div>ok</div>").endswith("<b>Evaluation</b><div>ok</div></div>")
    True
    """
    return f"{_STYLE}<div class='re-box'><b>{esc(title)}</b>{body}</div>"


def warnings_html(warnings) -> str:
    """One visible line per warning.

    Parameters
    ----------
    warnings : iterable of str

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import warnings_html
    >>> warnings_html(["2 queries without positives"])
    "<div class='re-warn'>⚠ 2 queries without positives</div>"
    """
    return "".join(f"<div class='re-warn'>⚠ {esc(w)}</div>" for w in warnings)


def evaluation_html(ev) -> str:
    """An evaluation's notebook view: queries scored, the summary, what was excluded, strata.

    Parameters
    ----------
    ev : Evaluation

    Returns
    -------
    str

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import evaluation_html
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(10,), queries=demo.queries)
    >>> "Evaluation: 3 system(s)" in evaluation_html(ev)
    True
    """
    metrics = ev.summary.drop(columns="n")
    counts = ", ".join(f"{esc(s)} {int(n)}" for s, n in ev.summary["n"].items())
    body = f"<div>queries scored: {counts}</div>"
    body += table(metrics.T if len(metrics) <= 6 else metrics, max_rows=40)
    pq = ev.per_query
    notes = []
    for flag, text in (
        ("missing", "judged queries missing from the run (scored zero)"),
        ("no_positives", "queries without positives (excluded)"),
        ("duplicates", "rankings that repeated a key (counted once)"),
    ):
        n = int(pq[flag].sum())
        if n:
            notes.append(f"{n} {text}")
    unjudged = getattr(ev, "unjudged_queries", [])
    if unjudged:
        notes.append(
            f"{len(unjudged)} run queries without judgments left out (as ranx's "
            f"make_comparable=True): {', '.join(unjudged[:5])}{', ...' if len(unjudged) > 5 else ''}"
        )
    if getattr(ev, "counts_differ", False):
        notes.append(counts_note(ev))
    body += warnings_html(notes)
    if ev.has_strata:
        metric = ev.metric("ndcg")
        cols = ["n", metric] if metric in ev.per_stratum.columns else ["n"]
        body += "<div>per stratum</div>" + table(ev.per_stratum[cols], max_rows=30)
    title = (
        f"Evaluation: {len(ev.systems)} system(s), "
        f"{pq['query_id'].nunique()} judged queries, k={list(ev.ks)}, "
        f"threshold={ev.threshold}, gain={ev.gain}"
    )
    return box(title, body)


def validation_html(result) -> str:
    """A validation's notebook view: the counts, ok or errors, and the issues.

    Parameters
    ----------
    result : ValidationResult

    Returns
    -------
    str

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import validation_html
    >>> demo = rev.load_demo()
    >>> "<b>Validation</b>" in validation_html(rev.validate(demo.judgments))
    True
    """
    status = "ok" if result.ok else "errors"
    body = (
        f"<div>{result.queries} queries, {result.labels} labels "
        f"({result.human_labels} human, {result.synthetic_labels} synthetic): "
        f"<span class='{'re-pass' if result.ok else 're-fail'}'>{status}</span></div>"
    )
    if result.issues:
        body += table(result.to_frame().set_index("severity"), max_rows=20)
    return box("Validation", body)


def report_html(data: dict) -> str:
    """A report's notebook view: the verdict first, its reasons, the metrics, the gates.

    Parameters
    ----------
    data : dict
        The report's JSON data (``Report.to_dict()``).

    Returns
    -------
    str

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import report_html
    >>> demo = rev.load_demo()
    >>> report = rev.build_report(demo.judgments, demo.runs[demo.runs["system"] == "dense"])
    >>> "Report (" in report_html(report.to_dict())
    True
    """
    verdict = data["verdict"]
    status = verdict["status"]
    body = f"<div class='{STATUS_CLASS[status]}'>{esc(status)}</div>"
    body += warnings_html(verdict.get("reasons", []))
    metrics = pd.DataFrame(
        {
            k: {
                "value": v["value"],
                "n": v.get("n"),
                "ci": "" if "ci" not in v else f"[{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]",
            }
            for k, v in data["metrics"].items()
        }
    ).T
    if len(metrics):
        metrics.index.name = "metric"
        body += table(metrics, max_rows=40)
    for gate in verdict.get("gates", []):
        body += (
            f"<div>gate <code>{esc(gate['expression'])}</code>: "
            f"<span class='{STATUS_CLASS[gate['status']]}'>{esc(gate['status'])}</span></div>"
        )
    j = data["judgments"]
    return box(f"Report ({j['queries']} queries, {j.get('queries_scored', '?')} scored, {j['labels']} labels)", body)


def counts_note(ev) -> str:
    """The one line that says which columns average another number of queries than ``n``."""
    n = int(ev.summary["n"].max()) if len(ev.summary) else 0
    other = [f"{m} {int(c)}" for m, c in ev.counts.items() if int(c) != n]
    return (
        f"columns averaged over other numbers of queries than n = {n} (the queries with positives): "
        f"{', '.join(other)} (a catalogue measure averages every judged query, as trec_eval does)"
    )
