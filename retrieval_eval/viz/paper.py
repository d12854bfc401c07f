"""A comparison as tables: the long one (a row a comparison) and the paper's wide one.

The wide table is the one a paper prints (ranx's ``compare(...).to_latex()`` shape): a row a
system, a column a metric (grouped by cutoff), the best value of each column in bold, and
superscript letters naming the systems a value is significantly better than at the corrected
alpha. Every number comes from the comparison (:mod:`retrieval_eval.analysis.compare`); nothing
is computed here but the layout. A column named ``nDCG`` says its gain wherever it is not
trec_eval's linear one (``nDCG@10 (exp)``), and the caption states every nDCG's gain, because
``ndcg@10`` here is the spec's exponential gain while most papers mean the linear one.
"""

from __future__ import annotations

import math
from typing import Any

from ..engine.measures import parse_measure
from ..engine.measures.seed import parse_metric
from .html import box, esc, warnings_html
from .tables import latex, markdown, md_escape, tex

__all__ = ["comparison_html", "comparison_table", "metric_label", "paper_table"]

#: The catalogue's families a paper names otherwise (``P_5`` is ``P@5``).
_SHORT = {"P": "P", "recall": "Recall", "map_cut": "MAP", "success": "Success"}
_SEED_SHORT = {"precision": "P", "recall": "Recall", "map": "MAP", "mrr": "MRR", "hit_rate": "Hit"}
_CORR_SHORT = {"holm": "Holm", "bonferroni": "Bonf.", "fdr_bh": "BH", "none": "adj."}


def metric_label(column: str) -> tuple[str, int | None, str | None]:
    """A metric column's display name, its cutoff (None: the whole ranking) and its nDCG gain.

    Parameters
    ----------
    column : str
        A compared column: a spec metric (``ndcg@10``, ``ndcg_linear@10``, ``map@100``), a
        catalogue measure (``ndcg_cut_10``, ``P_5``) or any other column (``faithfulness``).

    Returns
    -------
    tuple
        ``(label, cutoff, gain)``: the spec's ``ndcg@10`` is ``nDCG@10 (exp)`` (exponential
        gain ``2**g - 1``), ``ndcg_linear@10`` and the catalogue's ``ndcg_cut_10`` are
        ``nDCG@10`` (trec_eval's linear gain ``g``); other names are kept; ``gain`` is None
        for a measure that is not an nDCG.

    Examples
    --------
    >>> metric_label("ndcg@10"), metric_label("ndcg_cut_10")[0], metric_label("P_5")[1]
    (('nDCG@10 (exp)', 10, 'exponential'), 'nDCG@10', 5)
    """
    try:
        base, k, gain = parse_metric(column)
    except ValueError:
        try:
            found = parse_measure(column)
        except ValueError:
            return column, None, None
        k = found[0].depth if len(found) == 1 else None
        if found[0].family.startswith("ndcg"):  # by the measure, not its spelling (nDCG@10 is ndcg_cut_10)
            gain = "exponential" if "exp" in found[0].family else "linear"
            label = f"nDCG@{k}" if k is not None else "nDCG"
            return (label if gain == "linear" else f"{label} (exp)"), k, gain
        short = _SHORT.get(found[0].family) if len(found) == 1 and found[0].rel is None else None
        return (
            (f"{short}@{k}" if short and k is not None and found[0].name == f"{found[0].family}_{k}" else column),
            k,
            None,
        )
    if base != "ndcg":
        return (f"{_SEED_SHORT[base]}@{k}" if base in _SEED_SHORT and k is not None else column), k, None
    if gain == "linear":
        return f"nDCG@{k}", k, "linear"
    return f"nDCG@{k} (exp)", k, "exponential"


def _columns(metrics: list[str], labels: dict[str, str]) -> list[tuple[str, str, int | None, str | None]]:
    """(column, header, cutoff, gain) per metric, grouped by cutoff (whole-ranking ones last),
    in the given order within a cutoff; a header two columns would share keeps the column name."""
    out, seen = [], set()
    for m in metrics:
        label, k, gain = metric_label(m)
        label = labels.get(m, label)
        if label in seen:
            label = m
        seen.add(label)
        out.append((m, label, k, gain))
    order = {m: i for i, m in enumerate(metrics)}
    return sorted(out, key=lambda c: (c[2] is None, c[2] or 0, order[c[0]]))


def _letters(n: int) -> list[str]:
    return [chr(ord("a") + i) if i < 26 else f"s{i + 1}" for i in range(n)]


def _cells(comparison) -> tuple[dict, dict]:
    """Each (system, metric)'s mean, and the systems each (system, metric) is significantly
    better than (a significant row whose delta favours it)."""
    means: dict[tuple[str, str], float] = {}
    beats: dict[tuple[str, str], set[str]] = {}
    for r in comparison.table.itertuples(index=False):
        s, b, m = str(r.system), str(r.baseline), str(r.metric)
        means[(s, m)], means[(b, m)] = float(r.mean), float(r.baseline_mean)
        if r.significant and r.delta != 0:
            win, lose = (s, b) if r.delta > 0 else (b, s)
            beats.setdefault((win, m), set()).add(lose)
    return means, beats


def _caption(comparison, cols, gains_named: bool = True) -> str:
    """What the wide table shows and how its marks were decided."""
    c = comparison
    m = len(c.table)
    test = c.describe().split(" against ")[0].split(" between ")[0]
    pairs = "every pair of systems" if c.pairs != "baseline" else f"each system against {c.baseline}"
    text = (
        f"Mean over {c.n_queries} queries with positives; best of each column in bold. A superscript "
        f"letter marks a value significantly better than that system's: {test}, {pairs}, "
        f"{'no' if c.correction == 'none' else _CORR_SHORT[c.correction]} correction across "
        f"{m} comparison{'s' if m != 1 else ''}, alpha {c.alpha:g}."
    )
    named = {"exponential": "exponential gain 2^g - 1 (the spec's)", "linear": "linear gain g (trec_eval's)"}
    gains = [(g, [h for _, h, _, gg in cols if gg == g]) for g in named]
    if gains_named and any(hs for _, hs in gains):
        text += " " + "; ".join(f"{', '.join(hs)}: {named[g]}" for g, hs in gains if hs) + "."
    return text


def _grid(comparison, labels: dict[str, str], decimals: int):
    """The wide table's pieces: columns, the rows ``(letter, name, [(text, bold, marks)])``."""
    cols = _columns(list(comparison.metrics), labels)
    means, beats = _cells(comparison)
    systems = [s for s in comparison.systems if any((s, m) in means for m, *_ in cols)]
    letter = dict(zip(systems, _letters(len(systems))))
    best = {}
    for m, *_ in cols:
        vals = [means[(s, m)] for s in systems if (s, m) in means and not math.isnan(means[(s, m)])]
        best[m] = round(max(vals), decimals) if vals else None
    rows = []
    for s in systems:
        cells = []
        for m, *_ in cols:
            v = means.get((s, m), math.nan)
            text = "n/a" if math.isnan(v) else f"{v:.{decimals}f}"
            marks = "".join(sorted(letter[o] for o in beats.get((s, m), ())))
            cells.append((text, best[m] is not None and not math.isnan(v) and round(v, decimals) == best[m], marks))
        rows.append((letter[s], labels.get(s, s), cells))
    return cols, rows


def paper_table(
    comparison,
    fmt: str = "latex",
    labels: dict[str, str] | None = None,
    caption: str | None = None,
    label: str | None = None,
    decimals: int = 4,
) -> str:
    """The paper's table of a comparison: a row a system, a column a metric, in LaTeX or Markdown.

    Parameters
    ----------
    comparison : Comparison
        A :func:`~retrieval_eval.compare` result (``pairs="all"`` marks every pair; with a
        baseline only the pairs with the baseline can be marked).
    fmt : {"latex", "markdown"}
    labels : mapping, optional
        Display names for systems and metrics (``{"bm25": "BM25", "ndcg@10": "nDCG@10"}``).
    caption : str, optional
        By default what the table shows: the test, the pairs, the correction and the number of
        comparisons it ran over, alpha, the number of queries and every nDCG's gain.
    label : str, optional
        LaTeX ``\\label``.
    decimals : int, default 4

    Returns
    -------
    str
        A booktabs ``table`` (bold via ``\\textbf``, marks as ``$^{ab}$``; a header row of
        cutoffs over the columns when there are several) or a pipe table (marks as
        ``<sup>ab</sup>``, which GitHub renders) with the caption as a paragraph after it.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> c = rev.compare(demo.judgments, demo.runs, metrics=["ndcg@10"], pairs="all", test="t")
    >>> print(paper_table(c, "markdown").splitlines()[0])
    | # | System | nDCG@10 (exp) |
    """
    labels = dict(labels or {})
    if fmt not in ("latex", "markdown"):
        raise ValueError(f"fmt must be 'latex' or 'markdown', got {fmt!r}")
    cols, rows = _grid(comparison, labels, int(decimals))
    cap = caption if caption is not None else _caption(comparison, cols)
    if fmt == "markdown":
        return _paper_markdown(cols, rows, cap)
    return _paper_latex(cols, rows, cap, label)


def _paper_markdown(cols: list, rows: list, cap: str) -> str:
    """The wide table as a pipe table (marks as ``<sup>ab</sup>``), the caption a paragraph after it."""
    body = [
        [letter, md_escape(name)]
        + [(f"**{t}**" if bold else t) + (f"<sup>{marks}</sup>" if marks else "") for t, bold, marks in cells]
        for letter, name, cells in rows
    ]
    return (
        markdown(
            ["#", "System"] + [md_escape(h) for _, h, _, _ in cols], body, align="cl" + "r" * len(cols), escape=False
        )
        + "\n"
        + md_escape(cap)
        + "\n"
    )


def _paper_latex(cols: list, rows: list, cap: str, label: str | None) -> str:
    """The wide table as a booktabs ``table`` (bold via ``\\textbf``, marks as ``$^{ab}$``),
    the cutoffs' header row over the columns when there are several, caption and label."""
    body = [
        [letter, tex(name)]
        + [(rf"\textbf{{{t}}}" if bold else t) + (f"$^{{{marks}}}$" if marks else "") for t, bold, marks in cells]
        for letter, name, cells in rows
    ]
    text = latex(
        [r"\#", "System"] + [tex(h) for _, h, _, _ in cols],
        body,
        align="cl" + "r" * len(cols),
        caption=None,
        label=None,
        escape=False,
    )
    text = _cutoff_header(text, cols)
    caption = tex(cap).replace("2" + tex("^") + "g - 1", "$2^g - 1$")
    tail = rf"\caption{{{caption}}}" + "\n" + (rf"\label{{{label}}}" + "\n" if label else "")
    return text.replace(r"\end{table}", tail + r"\end{table}")


def _cutoff_header(text: str, cols: list) -> str:
    """A header row of cutoffs (``@10``, ``whole ranking``) over their columns, with
    ``\\cmidrule``s, when the columns have several cutoffs; else ``text`` as it is."""
    groups = [(k, sum(1 for c in cols if c[2] == k)) for k in dict.fromkeys(c[2] for c in cols)]
    if len(groups) <= 1:
        return text
    head, rules, at = [], [], 3
    for k, n in groups:
        head.append(rf"\multicolumn{{{n}}}{{c}}{{{'@' + str(k) if k is not None else 'whole ranking'}}}")
        rules.append(rf"\cmidrule(lr){{{at}-{at + n - 1}}}")
        at += n
    return text.replace(
        r"\toprule" + "\n", r"\toprule" + "\n" + " & & " + " & ".join(head) + r" \\" + "\n" + " ".join(rules) + "\n", 1
    )


def _fmt_p(p: Any) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _long(comparison, escape) -> tuple[list[str], list[list[str]], list[bool]]:
    """The long table's headers, rows (cells escaped by ``escape``) and which rows are significant."""
    c = comparison
    both = c.pairs != "baseline"
    headers = (
        ["system"]
        + (["baseline"] if both else [])
        + [
            "metric",
            "mean",
            "baseline mean" if both else f"baseline ({c.baseline})",
            "delta",
            f"{c.confidence:.0%} CI",
            "p",
            f"p ({_CORR_SHORT[c.correction]})",
            "significant",
            "n",
        ]
    )
    rows = []
    for r in c.table.itertuples(index=False):
        rows.append(
            [escape(str(r.system))]
            + ([escape(str(r.baseline))] if both else [])
            + [
                escape(str(r.metric)),
                f"{r.mean:.4f}",
                f"{r.baseline_mean:.4f}",
                f"{r.delta:+.4f}",
                f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]",
                escape(_fmt_p(r.p_value)),
                escape(_fmt_p(r.p_adjusted)),
                "yes" if r.significant else "no",
                str(int(r.n)),
            ]
        )
    return headers, rows, [bool(s) for s in c.table["significant"]]


def comparison_table(
    comparison,
    fmt: str,
    layout: str = "long",
    labels: dict[str, str] | None = None,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """A comparison as a Markdown or LaTeX table, long (a row a comparison) or wide (:func:`paper_table`).

    Parameters
    ----------
    comparison : Comparison
    fmt : {"markdown", "latex"}
    layout : {"long", "wide"}
    labels : mapping, optional
        Display names of systems and metrics (the wide layout).
    caption, label : str, optional
        LaTeX caption (default: the comparison's ``describe()``) and label.

    Returns
    -------
    str
        The long layout bolds the significant deltas in LaTeX; its caption says how the numbers
        were made.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> c = rev.compare(demo.judgments, demo.runs, baseline="bm25", metrics=["ndcg"], test="t")
    >>> comparison_table(c, "markdown").splitlines()[0].split(" | ")[:3]
    ['| system', 'metric', 'mean']
    """
    if layout == "wide":
        return paper_table(comparison, fmt, labels=labels, caption=caption, label=label)
    if layout != "long":
        raise ValueError(f"layout must be 'long' or 'wide', got {layout!r}")
    extra = 1 if comparison.pairs != "baseline" else 0
    if fmt == "markdown":
        headers, rows, _ = _long(comparison, str)
        return markdown(headers, rows, align="ll" + "l" * extra + "rrrrrrcr", caption=comparison.describe())
    headers, rows, sig = _long(comparison, tex)
    delta_at = headers.index("delta")
    body = [
        [rf"\textbf{{{c}}}" if (s and i == delta_at) else c for i, c in enumerate(row) if i != len(row) - 2]
        for row, s in zip(rows, sig)
    ]
    headers = [tex(h) for i, h in enumerate(headers) if i != len(headers) - 2]
    cap = caption if caption is not None else comparison.describe() + " Bold: significant after correction."
    return latex(headers, body, align="ll" + "l" * extra + "rrrcrrr", caption=cap, label=label, escape=False)


def comparison_html(comparison) -> str:
    """A comparison as notebook HTML: the long table, how it was made, what was left out, warnings.

    Parameters
    ----------
    comparison : Comparison

    Returns
    -------
    str
        A titled box; significant deltas in bold.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> demo = rev.load_demo()
    >>> c = rev.compare(demo.judgments, demo.runs, metrics=["ndcg"], pairs="all", test="t")
    >>> "Comparison of every pair" in comparison_html(c)
    True
    """
    c = comparison
    headers, rows, sig = _long(c, str)
    delta_at = headers.index("delta")
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td><b>{esc(x)}</b></td>" if (s and i == delta_at) else f"<td>{esc(x)}</td>" for i, x in enumerate(row)
        )
        + "</tr>"
        for row, s in zip(rows, sig)
    )
    missing = {s: n for s, n in c.missing.items() if n}
    notes = [f"<p>{esc(c.describe())}</p>"]
    if missing:
        notes.append(
            "<p>Queries scored zero because the system had no ranking: "
            + esc(", ".join(f"{s}: {n}" for s, n in missing.items()))
            + "</p>"
        )
    html = (
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        + "".join(notes)
        + warnings_html(c.warnings)
    )
    if c.calibration is not None:
        html += c.calibration._body_html()
    title = f"Comparison against {esc(c.baseline)}" if c.pairs == "baseline" else "Comparison of every pair"
    return box(f"{title} at k={', '.join(map(str, c.ks))}", html)
