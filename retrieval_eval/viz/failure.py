"""The pages of failure analysis: one query's ranking, two runs side by side, the judgment
bounds and the label pool, as static HTML with inline SVG (no JavaScript, no external
resource), so a page reads the same in a notebook, in a rendered notebook without a kernel and
as a file opened from disk.

Everything that comes from data (ids, query text, passages) goes through :func:`html.escape`;
passages are shortened (:func:`snippet`). Grades are coloured badges on one sequential scale
(:func:`grade_color`); an unjudged entry is a hole: a dashed, empty badge marked ``?``, because
the toolkit counts it as not relevant but nobody has said so.
"""

from __future__ import annotations

import html
import math
import os
from typing import Any

import numpy as np
import pandas as pd

from ..io.safewrite import atomic_write_text
from .html import box, table
from .style import system_colors

__all__ = [
    "GRADE_COLORS",
    "HOLE_COLOR",
    "bounds_html",
    "diff_html",
    "grade_badge",
    "inspection_html",
    "pool_html",
    "query_diff_html",
    "write_page",
]

#: Grade 0, 1, 2, 3, 4 and above: a light-to-dark blue scale (grade 0 grey: judged, not relevant).
GRADE_COLORS = ("#d9d9d9", "#c6dbef", "#6baed6", "#2171b5", "#08306b")
#: The outline of a hole (an unjudged entry).
HOLE_COLOR = "#888888"
#: Characters of a passage shown before it is cut.
SNIPPET = 160

_CSS = (
    "<style>.re-fa .badge{display:inline-block;min-width:1.6em;padding:0 4px;border-radius:3px;"
    "text-align:center;font-weight:600}.re-fa .hole{border:1px dashed #888;color:#888;background:none}"
    ".re-fa td{vertical-align:top}.re-fa .snip{color:#555;max-width:46em;text-align:left}"
    ".re-fa h4{margin:10px 0 2px}.re-fa .key{font-family:monospace;font-size:12px}"
    ".re-fa .re-box td.key,.re-fa .re-box td.snip,.re-fa .re-box th.l{text-align:left}</style>"
)


def esc(x: Any) -> str:
    """Any value as HTML text; None, NA and NaN as the empty string."""
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return ""
    return html.escape(str(x))


def snippet(text: Any, n: int = SNIPPET) -> str:
    """``text`` with its whitespace runs as single spaces, cut to ``n`` characters (``…``)."""
    if text is None or text is pd.NA or (isinstance(text, float) and math.isnan(text)):
        return ""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[: n - 1].rstrip() + "…"


def grade_color(grade: float) -> str | None:
    """The badge colour of a grade (None for an unjudged entry: a hole)."""
    if grade is None or (isinstance(grade, float) and math.isnan(grade)):
        return None
    return GRADE_COLORS[int(min(max(grade, 0), len(GRADE_COLORS) - 1))]


def _ink(fill: str) -> str:
    return "#ffffff" if fill in GRADE_COLORS[3:] else "#111111"


def grade_badge(grade: float) -> str:
    """A grade as a coloured badge; an unjudged entry as a dashed hole marked ``?``.

    Parameters
    ----------
    grade : float
        The grade; NaN for an unjudged entry.

    Returns
    -------
    str
        An HTML ``span``.

    Examples
    --------
    >>> from retrieval_eval.viz import grade_badge
    >>> "?" in grade_badge(float("nan")), ">3<" in grade_badge(3.0)
    (True, True)
    """
    fill = grade_color(grade)
    if fill is None:
        return "<span class='badge hole' title='unjudged'>?</span>"
    return (
        f"<span class='badge' style='background:{fill};color:{_ink(fill)}' "
        f"title='grade {int(grade)}'>{int(grade)}</span>"
    )


def _fmt(x: Any, spec: str = ".4f") -> str:
    if x is None or x is pd.NA or (isinstance(x, (float, np.floating)) and math.isnan(x)):
        return ""
    return format(x, spec) if isinstance(x, (float, np.floating)) else esc(x)


def page(title: str, body: str) -> str:
    """A whole HTML document around ``body``: UTF-8, a title, nothing loaded from elsewhere."""
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>"
        f"</head><body>{body}</body></html>\n"
    )


def write_page(path: str | os.PathLike, title: str, body: str) -> None:
    """Write ``body`` as a whole HTML page to ``path`` atomically (the package's safe writer).

    The page loads nothing from elsewhere (no script, no stylesheet, no font), so it opens the
    same from disk, from a CI artifact or from a mail attachment.

    Parameters
    ----------
    path : str or PathLike
    title : str
        Plain text (escaped).
    body : str
        HTML.

    Returns
    -------
    None

    Examples
    --------
    >>> import os, tempfile
    >>> from retrieval_eval.viz import write_page
    >>> path = os.path.join(tempfile.mkdtemp(), "p.html")
    >>> write_page(path, "<t>", "<p>ok</p>")
    >>> "<title>&lt;t&gt;</title>" in open(path, encoding="utf-8").read()
    True
    """
    atomic_write_text(path, page(title, body))


def inspection_html(ins) -> str:
    """One query's view (:class:`~retrieval_eval.QueryInspection`): the query, its top k with
    grade badges, holes, gains and text, and the missed positives below.

    Parameters
    ----------
    ins : QueryInspection

    Returns
    -------
    str
        Static HTML (what ``ins._repr_html_()`` shows).

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import inspection_html
    >>> d = rev.load_demo()
    >>> "missed" in inspection_html(rev.inspect_query(d.judgments, d.runs, "st-01", system="dense"))
    True
    """
    facts = [f"system <b>{esc(ins.system)}</b>", f"stratum {esc(ins.stratum)}"]
    if ins.expect_none is not None:
        facts.append("expect_none" if ins.expect_none else "covered")
    if ins.cutoff is not None:
        side = "above" if ins.above_cutoff else "below"
        facts.append(f"top-1 {_fmt(ins.top1_score)} {side} the cutoff {_fmt(ins.cutoff)}")
    metrics = ", ".join(f"{esc(k)} {_fmt(v)}" for k, v in ins.metrics.items())
    rows = "".join(
        f"<tr><td>{int(r.rank)}</td><td>{grade_badge(r.grade)}</td><td class='key'>{esc(r.key)}</td>"
        f"<td>{_fmt(r.score)}</td><td>{_fmt(r.gain, '.3g')}</td><td>{_fmt(r.discounted_gain, '.3g')}</td>"
        f"<td class='snip'>{esc(snippet(r.text))}</td></tr>"
        for r in ins.ranking.itertuples(index=False)
    )
    ranking = (
        "<table><tr><th>rank</th><th>grade</th><th class='l'>key</th><th>score</th><th>gain</th>"
        f"<th>discounted</th><th class='l'>text</th></tr>{rows}</table>"
    )
    missed = "".join(
        f"<tr><td>{grade_badge(r.grade)}</td><td class='key'>{esc(r.key)}</td>"
        f"<td>{'not retrieved' if math.isnan(r.rank) else int(r.rank)}</td>"
        f"<td class='snip'>{esc(snippet(r.text))}</td></tr>"
        for r in ins.missed.itertuples(index=False)
    )
    below = (
        f"<h4>missed: {len(ins.missed)} relevant not in the top {ins.k}</h4><table><tr><th>grade</th>"
        f"<th class='l'>key</th><th>rank</th><th class='l'>text</th></tr>{missed}</table>"
        if len(ins.missed)
        else f"<h4>missed: none (every relevant label is in the top {ins.k})</h4>"
    )
    head = f"<div><i>{esc(ins.query)}</i></div><div>{' · '.join(facts)}</div><div>{metrics}</div><div>{_legend()}</div>"
    return _CSS + f"<div class='re-fa'>{box(f'Query {ins.query_id}', head + ranking + below)}</div>"


def _legend() -> str:
    badges = " ".join(grade_badge(float(g)) for g in range(4))
    return f"grades {badges} · unjudged {grade_badge(float('nan'))}"


def diff_svg(
    top_a: pd.DataFrame, top_b: pd.DataFrame, names: tuple[str, str], k: int, moves: pd.DataFrame | None = None
) -> str:
    """Two ranked columns of one query as inline SVG: a box per entry (colour = grade, dashed
    when unjudged), a line joining the same key in both tops, and for a relevant key outside a
    top the rank where that run has it."""
    row, width, col = 20, 560, 230
    height = row * (k + 2) + 8
    colors = system_colors(names) if names[0] != names[1] else {names[0]: system_colors(names[:1])[names[0]]}
    parts = [
        (
            f"<svg width='{width}' height='{height}' role='img' "
            f"font-family='system-ui,sans-serif' font-size='11'><title>{esc(names[0])} against "
            f"{esc(names[1])}</title>"
        )
    ]
    for i, (name, x) in enumerate(((names[0], 0), (names[1], width - col))):
        parts.append(
            f"<text x='{x + 4}' y='14' font-weight='bold' fill='{colors.get(name, '#333')}'>"
            f"{esc(name)}{' (a)' if i == 0 else ' (b)'}</text>"
        )
    y_of = {}
    for side, frame, x in (("a", top_a, 0), ("b", top_b, width - col)):
        r: Any
        for r in frame.itertuples(index=False):
            y = row * (int(r.rank)) + 4
            y_of[(side, r.key)] = y + row / 2 - 2
            fill = grade_color(r.grade)
            style = (
                f"fill='{fill}' stroke='none'" if fill else f"fill='none' stroke='{HOLE_COLOR}' stroke-dasharray='3,2'"
            )
            ink = _ink(fill) if fill else HOLE_COLOR
            label = f"{int(r.rank)}. {snippet(r.key, 30)}" + ("" if fill else " ?")
            parts.append(
                f"<rect x='{x}' y='{y}' width='{col}' height='{row - 4}' rx='3' {style}>"
                f"<title>{esc(r.key)}: {'unjudged' if not fill else f'grade {int(r.grade)}'}</title></rect>"
                f"<text x='{x + 4}' y='{y + row - 9}' fill='{ink}'>{esc(label)}</text>"
            )
    in_b = set(top_b["key"])
    for key in (k_ for k_ in top_a["key"] if k_ in in_b):  # in a's rank order: the page repeats byte for byte
        ya, yb = y_of[("a", key)], y_of[("b", key)]
        parts.append(f"<line x1='{col}' y1='{ya}' x2='{width - col}' y2='{yb}' stroke='#555' stroke-width='1.2'/>")
    parts.append(_outside(moves, k, row, width, col))
    parts.append("</svg>")
    return "".join(parts)


def _outside(moves: pd.DataFrame | None, k: int, row: int, width: int, col: int) -> str:
    """Below the columns: the relevant keys outside one top k, with the rank the run has them at."""
    if moves is None or not len(moves):
        return ""
    y = row * (k + 1) + 16
    notes = []
    for side, other, x in (("rank_a", "rank_b", 0), ("rank_b", "rank_a", width - col)):
        out = moves[~(moves[side] <= k) & (moves[other] <= k)]
        ranks = ", ".join("absent" if math.isnan(v) else str(int(v)) for v in out[side].head(4))
        if len(out):
            notes.append(
                f"<text x='{x + 4}' y='{y}' fill='#555'><title>ranks of the relevant passages the "
                f"other top {k} holds</title>{len(out)} relevant below {k}: {esc(ranks)}</text>"
            )
    return "".join(notes)


def diff_html(diff, top: int = 10) -> str:
    """A diff of two runs (:class:`~retrieval_eval.RunDiff`): the headline, then the ``top``
    queries that moved most, each as two ranked columns joined by lines (static SVG).

    Parameters
    ----------
    diff : RunDiff
    top : int, default 10
        How many queries to draw.

    Returns
    -------
    str
        Static HTML with inline SVG, no script.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import diff_html
    >>> d = rev.load_demo()
    >>> diff_html(rev.diff_runs(d.judgments, d.runs, systems=("dense", "bm25")), top=2).count("<svg")
    2
    """
    a_name, b_name = (esc(n) for n in diff.names)
    head = (
        f"<div>{esc(diff.metric)}: {a_name} (a) {_fmt(diff.a)} → {b_name} (b) {_fmt(diff.b)} "
        f"over {len(diff.queries)} queries; {int((diff.queries['delta'] > 0).sum())} up, "
        f"{int((diff.queries['delta'] < 0).sum())} down</div><div>{_legend()}</div>"
    )
    blocks = []
    for q, a, b, d in diff.queries.head(top)[["query_id", "a", "b", "delta"]].itertuples(index=False):
        ta, tb = diff.top_a[diff.top_a["query_id"] == q], diff.top_b[diff.top_b["query_id"] == q]
        mv = diff.moves[diff.moves["query_id"] == q]
        blocks.append(
            f"<h4>{esc(q)}: {_fmt(a)} → {_fmt(b)} (Δ {_fmt(d, '+.4f')})</h4>" + diff_svg(ta, tb, diff.names, diff.k, mv)
        )
    more = f"<div>… {len(diff.queries) - top} more queries (diff.queries)</div>" if len(diff.queries) > top else ""
    body = head + "".join(blocks) + more
    return _CSS + f"<div class='re-fa'>{box(f'Diff: {diff.names[0]} vs {diff.names[1]}', body)}</div>"


def query_diff_html(diff, query_id: str) -> str:
    """One query of a diff: both rankings as two joined columns (static SVG) and the table of
    where each relevant passage is in each run.

    Parameters
    ----------
    diff : RunDiff
    query_id : str
        One of ``diff.queries``.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        A query the diff does not hold.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import query_diff_html
    >>> d = rev.load_demo()
    >>> query_diff_html(rev.diff_runs(d.judgments, d.runs, systems=("dense", "bm25")), "st-01").count("<svg")
    1
    """
    q = str(query_id)
    row = diff.queries[diff.queries["query_id"] == q]
    if not len(row):
        raise ValueError(f"unknown query {q!r}: the diff has {len(diff.queries)} scored queries")
    a, b, d = (float(row[c].iloc[0]) for c in ("a", "b", "delta"))
    mv = diff.moves[diff.moves["query_id"] == q]
    svg = diff_svg(
        diff.top_a[diff.top_a["query_id"] == q], diff.top_b[diff.top_b["query_id"] == q], diff.names, diff.k, mv
    )

    def rank(v):
        return "not retrieved" if math.isnan(v) else str(int(v))

    cells = "".join(
        f"<tr><td>{grade_badge(r.grade)}</td><td class='key'>{esc(r.key)}</td>"
        f"<td>{rank(r.rank_a)}</td><td>{rank(r.rank_b)}</td></tr>"
        for r in mv.itertuples(index=False)
    )
    moves = (
        f"<table><tr><th>grade</th><th class='l'>key</th><th>rank in {esc(diff.names[0])}</th>"
        f"<th>rank in {esc(diff.names[1])}</th></tr>{cells}</table>"
    )
    body = (
        f"<div>{esc(diff.metric)}: {_fmt(a)} → {_fmt(b)} (Δ {_fmt(d, '+.4f')})</div><div>{_legend()}</div>"
        + svg
        + "<h4>relevant passages</h4>"
        + moves
    )
    return _CSS + f"<div class='re-fa'>{box(f'Query {q}', body)}</div>"


def bounds_html(bounds) -> str:
    """The judgment bounds (:class:`~retrieval_eval.JudgmentBounds`): per system the mean as
    scored and the interval of possible means, then the comparisons whose sign could flip.

    Parameters
    ----------
    bounds : JudgmentBounds

    Returns
    -------
    str

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import bounds_html
    >>> d = rev.load_demo()
    >>> "could_flip" in bounds_html(rev.judgment_bounds(d.judgments, d.runs))
    True
    """
    s = bounds.summary.set_index(["system", "measure"])[["n", "mean", "mean_low", "mean_high", "unjudged"]]
    c = bounds.comparisons.set_index(["measure", "a", "b"])
    body = (
        f"<div>holes of the top {bounds.k} labelled at grade {bounds.grade}</div>{table(s, max_rows=40)}"
        f"<h4>comparisons (b - a)</h4>{table(c, max_rows=40)}"
    )
    return _CSS + f"<div class='re-fa'>{box('Judgment bounds', body)}</div>"


def pool_html(pool, rows: int = 20) -> str:
    """The label pool (:class:`~retrieval_eval.LabelPool`), best first, with shortened text.

    Parameters
    ----------
    pool : LabelPool
    rows : int, default 20

    Returns
    -------
    str

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import pool_html
    >>> d = rev.load_demo()
    >>> "Label pool" in pool_html(rev.label_pool(d.judgments, d.runs, k=3), rows=5)
    True
    """
    f = pool.frame.head(rows)
    cells = "".join(
        f"<tr><td>{esc(r.query_id)}</td><td class='key'>{esc(r.key)}</td><td>{int(r.systems)}</td>"
        f"<td>{int(r.best_rank)}</td><td>{_fmt(r.weight)}</td><td class='snip'>{esc(snippet(r.text, 100))}</td></tr>"
        for r in f.itertuples(index=False)
    )
    more = f"<div>… {len(pool.frame) - rows} more (pool.frame)</div>" if len(pool.frame) > rows else ""
    body = (
        f"<div>{len(pool.frame)} unjudged entries of the top {pool.k}, weighted by {esc(pool.measure)}</div>"
        "<table><tr><th>query</th><th class='l'>key</th><th>systems</th><th>best rank</th><th>weight</th>"
        "<th class='l'>text</th>"
        f"</tr>{cells}</table>{more}"
    )
    return _CSS + f"<div class='re-fa'>{box('Label pool', body)}</div>"
