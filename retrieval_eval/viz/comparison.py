"""The forest plot of a comparison: every mean difference from the baseline with its interval.

The differences, intervals and significance come from the comparison
(:mod:`retrieval_eval.analysis.compare`); nothing is computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .draw import foreground, get_axes, legend_below, system_color
from .style import system_colors

__all__ = ["ForestDisplay"]


class ForestDisplay:
    """Every comparison's mean difference with its interval, one row each (a forest plot).

    ``rows``: the comparison table's ``system``, ``metric``, ``delta``, ``ci_low``,
    ``ci_high``, ``significant``. Filled markers are significant after correction, hollow
    ones are not; the vertical line is "no difference".

    Parameters
    ----------
    rows : pandas.DataFrame
        As above, one row per (system, metric).
    baseline : str
    caption : str, default ""
        What the comparison did (its ``describe()``).
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``rows``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import ForestDisplay
    >>> demo = rev.load_demo()
    >>> cmp = rev.compare(demo.judgments, demo.runs, baseline="bm25", queries=demo.queries,
    ...                   seed=0)
    >>> disp = ForestDisplay.from_comparison(cmp).plot()
    >>> sorted(disp.errorbars_)
    ['dense', 'rrf']
    """

    def __init__(self, rows: pd.DataFrame, baseline: str, caption: str = "", colors: dict[str, str] | None = None):
        self.rows = rows
        self.baseline = baseline
        self.caption = caption
        # Each system's fixed colour (retrieval_eval.viz.style), by its place in the comparison.
        self.colors = colors

    @classmethod
    def from_comparison(cls, comparison, metric: str | None = None):
        """Every difference of a comparison, or those of one metric.

        Parameters
        ----------
        comparison : Comparison
            A :func:`~retrieval_eval.compare` result.
        metric : str, optional
            One compared metric (``ndcg`` or ``ndcg@10``); by default all.

        Returns
        -------
        ForestDisplay
        """
        t = comparison.table
        if metric is not None:
            t = t[t["metric"] == comparison.metric_column(metric)]
        rows = t[["system", "metric", "delta", "ci_low", "ci_high", "significant"]].reset_index(drop=True)
        return cls(rows, comparison.baseline, comparison.describe(), system_colors(comparison.systems))

    def plot(self, ax=None, *, title: str | None = None):
        """Draw one row per difference, its interval as an error bar.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure.
        title : str, optional
            By default "Mean difference from <baseline>".

        Returns
        -------
        ForestDisplay
            self, with ``ax_``, ``figure_``, ``errorbars_`` (one per system), ``zero_line_``
            and ``legend_``.
        """
        from matplotlib.lines import Line2D

        n = len(self.rows)
        (a,), fig = get_axes(ax, 1, size=(6.4, max(2.4, 0.32 * n + 1.4)))
        fg = foreground()
        systems = list(dict.fromkeys(self.rows["system"].astype(str)))
        y = np.arange(n)[::-1]
        self.errorbars_ = {}
        handles = []
        for i, s in enumerate(systems):
            sel = (self.rows["system"].astype(str) == s).to_numpy()
            d = self.rows["delta"].to_numpy(np.float64)[sel]
            lo = self.rows["ci_low"].to_numpy(np.float64)[sel]
            hi = self.rows["ci_high"].to_numpy(np.float64)[sel]
            sig = self.rows["significant"].to_numpy(bool)[sel]
            color = system_color(self.colors, s, i)
            eb = a.errorbar(
                d, y[sel], xerr=np.vstack([d - lo, hi - d]), fmt="none", ecolor=color, elinewidth=1.6, capsize=3
            )
            a.scatter(d[sig], y[sel][sig], color=color, zorder=3, s=30)
            a.scatter(d[~sig], y[sel][~sig], facecolors="none", edgecolors=color, zorder=3, s=30)
            handles.append(Line2D([], [], color=color, marker="o", label=s))
            self.errorbars_[s] = eb
        self.zero_line_ = a.axvline(0.0, color=fg, linewidth=1)
        labels = [f"{s} \u00b7 {m}" for s, m in zip(self.rows["system"], self.rows["metric"])]
        a.set_yticks(y, labels)
        a.set_ylim(-0.7, n - 0.3)
        a.set_xlabel(f"difference from {self.baseline} (filled: significant)")
        a.set_title(title or f"Mean difference from {self.baseline}")
        a.grid(True, axis="x", alpha=0.25)
        self.legend_ = legend_below(a, handles, ncols=min(len(systems), 4)) if len(systems) > 1 else None
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
