"""How the command line shows a result in a terminal: tables, verdicts, drift and validation
summaries, with colour when it is wanted (:mod:`.term`).

Nothing here computes a number: it lays out what the library returned (a report dict, a
result's frames or its Markdown).
"""

from __future__ import annotations

import argparse
import io
import json
import re
from typing import Any, TextIO

import pandas as pd

from ..analysis.decisions.gates import strata_order, worst_of
from . import term
from .common import frame_records, jsonable, one_line

__all__ = [
    "Out",
    "markdown_to_text",
    "num",
    "plural",
    "query_lists",
    "render_calibration",
    "render_score",
    "write_per_query",
    "write_table",
]


class Out:
    """Where a command writes: stdout, with colour when it is wanted."""

    def __init__(self, stream: TextIO, color: bool) -> None:
        self.stream = stream
        self.s = term.Style(color)

    def __call__(self, text: str = "") -> None:
        # Ids, strata and paths in the text are shown with their control characters escaped.
        self.stream.write(term.escape(text, newlines=True, colors=self.s.enabled) + "\n")


def num(value: Any, decimals: int = 4) -> str:
    """``value`` as the terminal shows a number (:func:`.term.fmt_number`)."""
    return term.fmt_number(value, decimals)


def plural(count: int, one: str, many: str | None = None) -> str:
    """``1 query``, ``2 queries``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def render_score(
    out: Out,
    reports: dict[str, dict[str, Any]],
    args: argparse.Namespace,
    labels_path: str,
    calibration: Any,
    no_scores: bool = False,
) -> None:
    """The terminal report of ``score``: settings, metrics, strata, calibration, verdicts and gates.

    Parameters
    ----------
    out : Out
    reports : dict
        System name -> its spec report (gates applied).
    args : argparse.Namespace
    labels_path : str
    calibration : Calibration or None
    no_scores : bool
        ``--queries`` was given but the run has no scores (calibration skipped).
    """
    s = out.s
    first = next(iter(reports.values()))
    j = first.get("judgments", {})
    out(f"{s('score', 'bold')}  {labels_path}  {s('against', 'dim')}  {', '.join(args.run)}")
    counts = [
        plural(j.get("queries", 0), "query", "queries"),
        f"{j.get('queries_scored', 0)} scored",
        plural(j.get("labels", 0), "label"),
    ]
    if "human_labels" in j or "synthetic_labels" in j:
        counts.append(f"{j.get('human_labels', 0)} human / {j.get('synthetic_labels', 0)} synthetic")
    settings = [f"k={args.k}", f"threshold={args.threshold}"]
    if args.gain != "exponential":
        settings.append(f"gain={args.gain}")
    if args.system:
        settings.append(f"system={args.system}")
    elif len(reports) > 1:
        settings.append(f"{len(reports)} systems")
    out(f"  {', '.join(settings)}  {s('|', 'dim')}  {', '.join(counts)}")
    drift = j.get("drift")
    if drift:
        out(
            f"  drift: {drift.get('valid', 0)} VALID, {drift.get('re_anchorable', 0)} RE_ANCHORABLE, "
            f"{drift.get('merged', 0)} MERGED, {drift.get('split', 0)} SPLIT, "
            f"{drift.get('orphaned', 0)} ORPHANED ({drift.get('invalid_ratio', 0.0):.1%} not VALID)"
        )
    out()

    if len(reports) > 1:
        render_system_metrics(out, reports)
    elif first.get("metrics"):
        render_metrics(out, first["metrics"])
    else:
        out(f"  {s('no metric was computed', 'yellow')}")
    out()

    for system, data in reports.items():
        strata = data.get("per_stratum")
        if strata:
            title = "per stratum" if len(reports) == 1 else f"per stratum, {system}"
            render_strata(out, strata, title, order=strata_order(data))
            out()

    if calibration is not None:
        render_calibration(out, calibration)
        out()
    elif no_scores:
        out(
            f"{s('calibration', 'bold')}  {s('skipped: the run has no scores', 'yellow')} "
            "(calibration needs each ranking's relevance scores)"
        )
        out()

    _render_verdicts(out, reports)


def _render_verdicts(out: Out, reports: dict[str, dict[str, Any]]) -> None:
    """Each system's verdict, its reasons and its gates table."""
    s = out.s
    for system, data in reports.items():
        verdict = data.get("verdict", {})
        status = verdict.get("status", "INDETERMINATE")
        label = "verdict" if len(reports) == 1 else f"verdict, {system}"
        out(f"{s(label, 'bold')}  {s.status(status)}")
        for reason in verdict.get("reasons") or []:
            out(f"  - {reason}")
        gates = verdict.get("gates") or []
        if gates:
            out()
            rows = []
            for g in gates:
                rows.append(
                    [
                        s.status(g["status"]),
                        g["expression"],
                        num(g.get("observed")),
                        num(g.get("baseline")) if "baseline" in g else "",
                    ]
                )
            headers = ["gate", "expression", "observed", "baseline"]
            if not any(r[3] for r in rows):
                headers, rows = headers[:3], [r[:3] for r in rows]
            out(term.table(headers, rows, align=["l", "l"] + ["r"] * (len(headers) - 2), style=s))
        if len(reports) > 1:
            out()


#: What a calibration figure's ``n`` counts: the negatives (expect_none queries), the positives,
#: or both classes of queries.
_COUNTED = {
    "negative_satisfaction": "negatives",
    "fpr@95tpr": "negatives",
    "positive_retention": "positives",
    "auroc": "queries",
    "separation_margin": "queries",
    "aupr_in": "queries",
    "aupr_out": "queries",
}


def _counted(name: str, m: dict[str, Any]) -> str:
    """A measurement's ``n`` with what it counts: ``30 negatives``, ``75 queries``, ``5 samples``.

    A bare ``n`` was ambiguous (queries? negatives?); a ranking metric's ``n`` of 1 says only
    that it is one deterministic measurement (its queries are in the header line), so it is left
    blank rather than read as one query.
    """
    n = m.get("n")
    if n is None:
        return ""
    if m.get("deterministic") is False:
        return f"{n} samples"
    base = name.split(":", 1)[-1]
    if base in _COUNTED:
        return f"{n} {_COUNTED[base]}"
    return "" if n == 1 else str(n)


def _measurement_rows(metrics: dict[str, Any]) -> tuple[list[str], list[list[str]], dict[str, list[str]]]:
    any_ci = any(isinstance(m, dict) and m.get("ci") for m in metrics.values())
    any_n = any(isinstance(m, dict) and m.get("n") not in (None, 1) for m in metrics.values())
    headers = ["metric", "value"] + (["95% CI"] if any_ci else []) + (["counted over"] if any_n else [])
    rows: list[list[str]] = []
    notes: dict[str, list[str]] = {}  # reason -> the metrics it applies to
    for name, m in metrics.items():
        row = [name, num(m.get("value"))]
        if any_ci:
            ci = m.get("ci")
            row.append(f"[{num(ci[0])}, {num(ci[1])}]" if ci else "")
        if any_n:
            row.append(_counted(name, m))
        if m.get("indeterminate"):
            row[0] = name + " !"
            notes.setdefault(str(m["indeterminate"]), []).append(name)
        rows.append(row)
    return headers, rows, notes


def render_metrics(out: Out, metrics: dict[str, Any]) -> None:
    """One system's metrics table, with a note per reason a metric cannot be gated.

    Parameters
    ----------
    out : Out
    metrics : dict
        The report's ``metrics``.
    """
    headers, rows, notes = _measurement_rows(metrics)
    out(term.table(headers, rows, style=out.s))
    for why, names in notes.items():
        out(f"  ! {', '.join(names)}: a gate on {'it' if len(names) == 1 else 'these'} cannot pass: {why}")


def render_system_metrics(out: Out, reports: dict[str, dict[str, Any]]) -> None:
    """Every system's metrics side by side, one column per system.

    Parameters
    ----------
    out : Out
    reports : dict
        System name -> its spec report.
    """
    names = list(reports)
    notes: dict[str, str] = {}
    metric_names: list[str] = []
    for data in reports.values():
        for name in data.get("metrics") or {}:
            if name not in metric_names:
                metric_names.append(name)
    rows = []
    for metric in metric_names:
        row = [metric]
        for system in names:
            m = (reports[system].get("metrics") or {}).get(metric)
            if not isinstance(m, dict):
                row.append("- ")
            elif m.get("indeterminate"):
                row.append(num(m.get("value")) + "!")
                notes.setdefault(system, str(m["indeterminate"]))
            else:
                row.append(num(m.get("value")) + " ")
        rows.append(row)
    out(term.table(["metric"] + names, rows, style=out.s))
    for system, why in notes.items():
        out(f"  ! {system}: a gate on these cannot pass: {why}")


def render_strata(out: Out, strata: dict[str, Any], title: str = "per stratum", order=()) -> None:
    """The per-stratum table; ``*`` marks, per metric, the one stratum ``worst_of`` names (ties
    by first appearance, ``order``), as the worst-stratum gate does; none when all are equal."""
    s = out.s
    metric_names: list[str] = []
    for st in strata.values():
        for name in st.get("metrics") or {}:
            if name not in metric_names:
                metric_names.append(name)
    worst: dict[str, str | None] = {}
    for name in metric_names:
        values = {
            stratum: st["metrics"][name]["value"]
            for stratum, st in strata.items()
            if st.get("n", 0) > 0 and name in (st.get("metrics") or {})
        }
        if values and min(values.values()) < max(values.values()):  # a tie everywhere marks nothing
            worst[name] = worst_of(values, order)
    rows = []
    for stratum, st in strata.items():
        row = [stratum, str(st.get("n", 0))]
        for name in metric_names:
            m = (st.get("metrics") or {}).get(name)
            if m is None:
                row.append("-")
                continue
            cell = num(m.get("value"))
            if worst.get(name) == stratum:
                cell = s(cell + "*", "red")
            else:
                cell += " "
            row.append(cell)
        rows.append(row)
    out(f"{s(title, 'bold')}  (n = queries scored; * = worst stratum for the metric)")
    out(term.table(["stratum", "n"] + metric_names, rows, style=s))


def render_calibration(out: Out, calibration: Any) -> None:
    """The calibration summary table and its warnings.

    Parameters
    ----------
    out : Out
    calibration : Calibration
    """
    s = out.s
    summary = getattr(calibration, "summary", None)
    out(f"{s('calibration', 'bold')}  (top-1 scores of positives vs expect_none negatives)")
    if summary is not None and len(summary):
        frame = summary.reset_index()
        columns = [
            c
            for c in (
                "system",
                "cutoff",
                "n_positive",
                "n_negative",
                "negative_satisfaction",
                "positive_retention",
                "separation_margin",
                "auroc",
                "fpr@95tpr",
                "rank_based",
            )
            if c in frame.columns
        ]
        rows = []
        for rec in frame[columns].to_dict(orient="records"):
            rows.append([_cell(rec[c]) for c in columns])
        out(term.table(columns, rows, style=s))
    for warning in getattr(calibration, "warnings", None) or []:
        out(f"  ! {s(warning, 'yellow')}")


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    return num(jsonable(value))


def markdown_to_text(markdown: str, style: term.Style) -> str:
    """Render the pipe tables of a Markdown text as aligned terminal tables; other lines as is.

    The comparison formats its own numbers (one place decides their precision); this only
    lines them up, honouring each column's ``---:`` alignment.
    """
    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and set(lines[i + 1].replace("|", "").strip()) <= set("-: "):

            def cells(line: str) -> list[str]:  # split on unescaped pipes, then undo the Markdown escaping
                return [_md_text(c.strip()) for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]

            headers = cells(lines[i])
            spec = cells(lines[i + 1])
            align = ["r" if c.endswith(":") and not c.startswith(":") else "l" for c in spec]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                row = cells(lines[i])
                rows.append((row + [""] * len(headers))[: len(headers)])
                i += 1
            out.append(term.table(headers, rows, align=align, style=style))
        else:
            out.append(_md_text(lines[i]))
            i += 1
    return "\n".join(out)


def _md_text(markdown: str) -> str:
    """Text of a Markdown cell or line: backslash escapes and HTML entities undone (the terminal
    shows text; its control characters are escaped for it by :mod:`.term`)."""
    import html

    return html.unescape(re.sub(r"\\(.)", r"\1", markdown))


# ---------------------------------------------------------------------------------------------
# Writing tables
# ---------------------------------------------------------------------------------------------


def write_table(
    out, frame: pd.DataFrame, fmt: str, markdown: str | None = None, latex: str | None = None, warnings: Any = ()
) -> None:
    """``frame`` in ``fmt``: the result's own Markdown/LaTeX when given, else the frame's.

    ``warnings`` (the lines the terminal report prints with ``!``) follow a Markdown table as
    quoted lines and a LaTeX table as comments: a table pasted into a report must not lose the
    caveat the terminal showed beside it (a small sample, say). CSV and JSON stay data only.
    """
    from ..viz import tables

    if fmt == "markdown":
        out.stream.write(markdown if markdown is not None else tables.frame_markdown(frame))
        if warnings:
            out.stream.write("\n" + "".join(f"> **warning:** {w}\n" for w in warnings))
    elif fmt == "latex":  # control characters of ids shown escaped, as in every terminal table
        out.stream.write(term.escape(latex if latex is not None else tables.frame_latex(frame), newlines=True))
        for w in warnings:
            out.stream.write(f"% warning: {one_line(str(w))}\n")
    elif fmt == "csv":
        named = frame.index.name is not None or any(frame.index.names)
        buf = io.StringIO()
        frame.to_csv(buf, index=named, lineterminator="\n")
        out.stream.write(term.escape(buf.getvalue(), newlines=True))
    else:
        out.stream.write(json.dumps(frame_records(frame), indent=2, ensure_ascii=False) + "\n")


def query_lists(per_query: pd.DataFrame) -> dict[str, dict[str, list[str]]]:
    """Per system: ``missing`` (judged, with positives, no ranking: scored zero), ``excluded``
    (no label at the threshold, or expect_none: out of the averages), ``repeating`` (a key
    repeated in the ranking: only its first occurrence counted)."""
    negative = per_query["negative"] if "negative" in per_query.columns else False
    excluded = per_query["no_positives"] | negative
    out: dict[str, dict[str, list[str]]] = {}
    for name, mask in (
        ("missing", per_query["missing"] & ~excluded),
        ("excluded", excluded),
        ("repeating", per_query["duplicates"]),
    ):
        rows = per_query[mask]
        for system in pd.unique(per_query["system"]):
            ids = rows.loc[rows["system"] == system, "query_id"].astype(str).tolist()
            out.setdefault(str(system), {})[name] = ids
    return out


_LIST_TEXT = {
    "missing": "missing (judged, no ranking: scored zero)",
    "excluded": "excluded (no label at the threshold, or expect_none)",
    "repeating": "repeating (a key repeated in the ranking: first occurrence counted)",
}


def write_per_query(out, ev, fmt: str | None) -> None:
    """The per-query values of every system, then the lists of :func:`query_lists`."""
    from ..engine.metrics import metric_columns

    pq = ev.per_query
    metrics = metric_columns(pq)
    columns = ["system", "query_id", "stratum", *metrics, "missing", "no_positives", "negative", "duplicates"]
    frame = pq[[c for c in columns if c in pq.columns]].reset_index(drop=True)
    lists = query_lists(pq)
    if fmt == "json":
        payload = {"per_query": frame_records(frame), "queries": lists}
        out.stream.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    if fmt in ("csv", "markdown", "latex"):
        write_table(out, frame, fmt)
        return
    shown = ["system", "query_id", *metrics] if len(ev.systems) > 1 else ["query_id", *metrics]
    rows = [
        [term.fmt_number(v) if isinstance(v, float) else str(v) for v in r]
        for r in frame[shown].itertuples(index=False, name=None)
    ]
    out(term.table(shown, rows, align=["l"] * (len(shown) - len(metrics)) + ["r"] * len(metrics), style=out.s))
    for system, groups in lists.items():
        prefix = f"{system}: " if len(lists) > 1 else ""
        for name, ids in groups.items():
            out(f"  {prefix}{_LIST_TEXT[name]}: {len(ids)}" + (f": {', '.join(ids)}" if ids else ""))


def render_comparison(out: Out, args: argparse.Namespace, result: Any) -> None:
    """``compare``'s output: the table in ``--format`` (long or ``--layout wide``), JSON, or the
    terminal report (the long table, then every warning: queries left out are listed there).

    Parameters
    ----------
    out : Out
    args : argparse.Namespace
        ``format``, ``json``, ``layout``, ``run``, ``test``, ``correction``, ``pairs``.
    result : Comparison
    """
    from .common import dumps

    layout = getattr(args, "layout", "long")
    if args.format and not args.json:
        write_table(
            out,
            result.table,
            args.format,
            result.to_markdown(layout=layout),
            result.to_latex(layout=layout),
            result.warnings,
        )
    elif args.json:
        out.stream.write(dumps(result.to_dict(per_query=False)))
    else:
        pairs = "every pair" if result.pairs == "all" else f"against {result.baseline}"
        out(
            f"{out.s('compare', 'bold')}  {', '.join(args.run)}  "
            f"(k={','.join(map(str, result.ks))}, {pairs}, test={args.test}, correction={args.correction})"
        )
        out()
        out(markdown_to_text(result.to_markdown(), out.s))
        for warning in result.warnings:
            out(f"  ! {warning}")
        plans = result.planning()
        if len(plans):  # a difference that is not significant: how many queries it would take
            out()
            for row in plans.itertuples(index=False):
                out(f"  {row.system} vs {row.baseline}, {row.metric}: {row.paragraph}")
