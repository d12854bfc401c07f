"""Markdown and LaTeX tables for every result, with the base install (no tabulate, no jinja2).

``pandas.DataFrame.to_markdown`` needs ``tabulate`` and ``Styler.to_latex`` needs ``jinja2``;
neither is a dependency, and a table of a few rows does not need either. These writers are
small and escape what each format needs escaped:

* Markdown (GitHub-flavoured pipe tables): HTML as entities, Markdown syntax (``|``, ``*``,
  backticks, brackets, ``~``) backslash-escaped and control characters as visible escapes,
  so a cell never ends a row or runs as HTML;
* LaTeX (booktabs ``tabular``): the ten special characters (``\\ & % $ # _ { } ~ ^``) and
  ``<``/``>`` are written as their text commands.

Numbers are formatted once here (:func:`cell`): floats with 4 decimals, integers as they are,
booleans as yes/no, and a missing value (NaN, None, pd.NA) as ``n/a``, never as 0, because
an absent number is not a zero. ``Evaluation``, ``Calibration``, ``DriftResult`` and
``Comparison`` all write their ``to_markdown()``/``to_latex()`` through this module.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..visible import escape

__all__ = ["cell", "frame_latex", "frame_markdown", "latex", "markdown", "md_escape", "tex"]

_TEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


#: Characters Markdown acts on inside a table cell: emphasis, code, links, strikethrough, the
#: cell separator, and the backslash that escapes them. Not ``_``: GitHub's Markdown leaves an
#: underscore inside a word alone, and metric names (``hit_rate@10``) and statuses
#: (``RE_ANCHORABLE``) are full of them; escaped, every raw table would read ``hit\_rate``.
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~])")


def md_escape(s: Any) -> str:
    """A table cell's text, inert in Markdown: HTML (``<img onerror=...>``) as entities, Markdown
    syntax backslash-escaped, control characters (a line break too) as visible escapes, so a
    cell never ends a row. A system name or stratum comes from a file anyone can write; rendered
    on a pull request or a dashboard it must show as text, never run or reformat the page.

    Parameters
    ----------
    s : object

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import md_escape
    >>> print(md_escape("a|b <i>"))
    a\\|b &lt;i&gt;
    """
    return _MD_SPECIAL.sub(r"\\\1", html.escape(escape(s), quote=False))


def tex(s: Any) -> str:
    """Text safe in LaTeX: every special character as its text command.

    Parameters
    ----------
    s : object

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import tex
    >>> print(tex("50% & _x"))
    50\\% \\& \\_x
    """
    return "".join(_TEX.get(ch, ch) for ch in str(s))


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def cell(value: Any, decimals: int = 4) -> str:
    """One value as table text: ``n/a`` for a missing value, floats to ``decimals`` places,
    booleans as yes/no, everything else as ``str``.

    Parameters
    ----------
    value : object
    decimals : int, default 4

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import cell
    >>> cell(0.123456), cell(None), cell(True), cell(3)
    ('0.1235', 'n/a', 'yes', '3')
    """
    if _missing(value):
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{decimals}f}"
    return str(value)


def _aligns(rows: Sequence[Sequence[Any]], n: int) -> list[str]:
    """Right for a column whose every present value is a number, else left."""
    out = []
    for i in range(n):
        values = [r[i] for r in rows if not _missing(r[i])]
        numeric = bool(values) and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) for v in values
        )
        out.append("r" if numeric else "l")
    return out


def markdown(
    headers: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    align: Sequence[str] | None = None,
    caption: str | None = None,
    escape: bool = True,
) -> str:
    """A pipe table: ``align`` per column is ``l``, ``r`` or ``c`` (``---``, ``---:``,
    ``:---:``); cells are already text, or values formatted by :func:`cell`. A caption is a
    paragraph after the table.

    Parameters
    ----------
    headers : sequence
    rows : sequence of sequences
    align : sequence of {"l", "r", "c"}, optional
        By default right for a column of numbers, else left.
    caption : str, optional
    escape : bool, default True
        Escape the cells (:func:`md_escape`); False when they are Markdown already.

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import markdown
    >>> print(markdown(["system", "ndcg@10"], [["dense", 0.61234], ["bm25", 0.5]]))
    | system | ndcg@10 |
    | --- | ---: |
    | dense | 0.6123 |
    | bm25 | 0.5000 |
    <BLANKLINE>
    """
    align = list(align) if align is not None else _aligns(rows, len(headers))
    spec = {"l": "---", "r": "---:", "c": ":---:"}
    esc = md_escape if escape else str

    def line(cells: Sequence[Any]) -> str:
        return "| " + " | ".join(esc(c if isinstance(c, str) else cell(c)) for c in cells) + " |"

    lines = [line(headers), "| " + " | ".join(spec[a] for a in align) + " |"]
    lines += [line(r) for r in rows]
    if caption:
        lines += ["", esc(caption)]
    return "\n".join(lines) + "\n"


def latex(
    headers: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    align: str | Sequence[str] | None = None,
    caption: str | None = None,
    label: str | None = None,
    escape: bool = True,
) -> str:
    """A booktabs ``table`` with a ``tabular`` (needs ``\\usepackage{booktabs}``); with
    ``escape=False`` the cells are LaTeX already (bold deltas, math headers).

    Parameters
    ----------
    headers : sequence
    rows : sequence of sequences
    align : str or sequence of str, optional
        The ``tabular`` column spec; by default ``r`` for a column of numbers, else ``l``.
    caption, label : str, optional
    escape : bool, default True

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import latex
    >>> print(latex(["system", "ndcg@10"], [["dense", 0.61234]]).splitlines()[2])
    \\begin{tabular}{lr}
    """
    spec = "".join(align) if align is not None else "".join(_aligns(rows, len(headers)))
    esc = tex if escape else str

    def line(cells: Sequence[Any]) -> str:
        return " & ".join(esc(c if isinstance(c, str) else cell(c)) for c in cells) + r" \\"

    out = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        line(headers),
        r"\midrule",
        *[line(r) for r in rows],
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if caption:
        out.append(rf"\caption{{{tex(caption)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def _frame_rows(df: pd.DataFrame, index: bool) -> tuple[list[str], list[list[Any]]]:
    frame = df.reset_index() if index and (df.index.name is not None or any(df.index.names)) else df
    headers = [str(c) for c in frame.columns]
    rows = [list(r) for r in frame.itertuples(index=False, name=None)]
    return headers, rows


def frame_markdown(df: pd.DataFrame, index: bool = True, caption: str | None = None) -> str:
    """A frame as a Markdown table; a named index (or MultiIndex) becomes leading columns.

    Parameters
    ----------
    df : pandas.DataFrame
    index : bool, default True
    caption : str, optional

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> from retrieval_eval.viz import frame_markdown
    >>> df = pd.DataFrame({"ndcg@10": [0.61234]}, index=pd.Index(["dense"], name="system"))
    >>> print(frame_markdown(df))
    | system | ndcg@10 |
    | --- | ---: |
    | dense | 0.6123 |
    <BLANKLINE>
    """
    headers, rows = _frame_rows(df, index)
    return markdown(headers, rows, caption=caption)


def frame_latex(df: pd.DataFrame, index: bool = True, caption: str | None = None, label: str | None = None) -> str:
    """A frame as a booktabs LaTeX table; a named index becomes leading columns.

    Parameters
    ----------
    df : pandas.DataFrame
    index : bool, default True
    caption, label : str, optional

    Returns
    -------
    str

    Examples
    --------
    >>> import pandas as pd
    >>> from retrieval_eval.viz import frame_latex
    >>> df = pd.DataFrame({"ndcg@10": [0.61234]}, index=pd.Index(["dense"], name="system"))
    >>> print(frame_latex(df).splitlines()[4])
    system & ndcg@10 \\\\
    """
    headers, rows = _frame_rows(df, index)
    return latex(headers, rows, caption=caption, label=label)
