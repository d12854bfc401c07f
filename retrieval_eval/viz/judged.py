"""Plots and HTML of LLM-judged metrics: the forest of Measurements per system and stratum, the
clustered interval beside the naive one, and the planning curves.

Every number comes from :mod:`retrieval_eval.analysis.judged` (``judged_summary``,
``planning_table``); nothing is computed here. Displays follow scikit-learn's pattern:
``from_*`` collects, ``plot(ax=None)`` draws and returns self, matplotlib is imported inside.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .draw import foreground, get_axes, legend_below, system_color
from .html import box, table
from .style import system_colors

__all__ = ["JudgedForestDisplay", "PlanningDisplay", "judged_html"]


def judged_html(judged: pd.DataFrame) -> str:
    """The judged Measurements of an evaluation as a notebook box (value, interval, n,
    samples, variance components, ICC, and the naive pooled interval beside the clustered one).

    Parameters
    ----------
    judged : DataFrame
        :func:`~retrieval_eval.analysis.judged.judged_summary` rows (``Evaluation.judged``).

    Returns
    -------
    str
        HTML.

    Examples
    --------
    >>> import pandas as pd
    >>> from retrieval_eval.analysis.judged import judged_summary
    >>> t = judged_summary(pd.DataFrame({"system": "a", "metric": "m", "query_id": ["q1", "q2"],
    ...                                  "value": [0.5, 0.7]}))
    >>> "Judged metrics" in judged_html(t)
    True
    """
    cols = [
        "value",
        "ci_low",
        "ci_high",
        "n",
        "samples",
        "var_between",
        "var_within",
        "icc",
        "naive_ci_low",
        "naive_ci_high",
    ]
    frame = judged.set_index([c for c in ("system", "stratum", "metric") if c in judged.columns])[cols]
    note = (
        "<div>interval: 95% Student-t over per-query means (clustered by query); "
        "naive_ci pools samples as if independent and is too narrow</div>"
    )
    return box("Judged metrics (LLM judge, query-clustered)", note + table(frame, max_rows=40))


class JudgedForestDisplay:
    """Each judged Measurement as a point with its interval, one row per (metric, system[,
    stratum]), systems in their fixed colours; optionally the naive pooled interval beside it.

    Parameters
    ----------
    rows : DataFrame
        :func:`~retrieval_eval.analysis.judged.judged_summary` rows (``system``, ``metric``,
        optional ``stratum``, ``value``, ``ci_low``, ``ci_high``, ``naive_ci_low``,
        ``naive_ci_high``).
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot in order of appearance.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.datasets import demo_path
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=10, judged=demo_path("judge_samples.parquet"))
    >>> disp = JudgedForestDisplay.from_evaluation(ev, metric="faithfulness").plot()
    >>> sorted(disp.errorbars_)
    ['bm25', 'dense', 'rrf']
    """

    def __init__(self, rows: pd.DataFrame, colors: dict[str, str] | None = None):
        self.rows = rows.reset_index(drop=True)
        self.colors = colors

    @classmethod
    def from_evaluation(
        cls, ev, metric: str | None = None, by_stratum: bool = False, systems: Sequence[str] | None = None
    ) -> JudgedForestDisplay:
        """The judged rows of an evaluation made with ``judged=``.

        Parameters
        ----------
        ev : Evaluation
            Made with ``evaluate(..., judged=...)``.
        metric : str, optional
            One judged metric (default: all).
        by_stratum : bool, default False
            One row per (stratum, metric, system) instead of per (metric, system).
        systems : sequence of str, optional
            Some systems (colours stay those of the evaluation's order).

        Returns
        -------
        JudgedForestDisplay
        """
        if ev.judged is None:
            raise ValueError("the evaluation has no judged metrics; pass judged= to evaluate")
        rows = ev.judged_strata if by_stratum else ev.judged
        if metric is not None:
            if metric not in set(rows["metric"].astype(str)):
                raise ValueError(f"no judged metric {metric!r}; judged: {', '.join(ev.judged_metrics)}")
            rows = rows[rows["metric"] == metric]
        if systems is not None:
            rows = rows[rows["system"].isin(list(systems))]
        # Systems side by side within each metric (and stratum), in the evaluation's order.
        order = {"metric": ev.judged_metrics, "stratum": list(ev.strata), "system": [str(s) for s in ev.systems]}
        keys = [k for k in ("stratum", "metric", "system") if k in rows.columns]
        rank = pd.DataFrame(
            {k: rows[k].astype(str).map({v: i for i, v in enumerate(order[k])}).to_numpy() for k in keys}
        )
        rows = rows.iloc[rank.sort_values(keys, kind="stable").index.to_numpy()]
        return cls(rows, system_colors([str(s) for s in ev.systems]))

    def plot(self, ax=None, *, naive: bool = False, title: str | None = None) -> JudgedForestDisplay:
        """Draw the forest.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        naive : bool, default False
            Also draw the pooled (naive) interval, thin and grey, just below each row.
        title : str, optional

        Returns
        -------
        JudgedForestDisplay
            self, with ``ax_``, ``figure_``, ``errorbars_`` (per system), ``naive_`` (list)
            and ``legend_``.
        """
        from matplotlib.lines import Line2D

        r = self.rows
        n = len(r)
        (a,), fig = get_axes(ax, 1, size=(6.8, max(2.4, 0.34 * n + 1.4)))
        systems = list(dict.fromkeys(r["system"].astype(str)))
        y = np.arange(n)[::-1].astype(float)
        value = r["value"].to_numpy(np.float64)
        lo = r["ci_low"].to_numpy(np.float64)
        hi = r["ci_high"].to_numpy(np.float64)
        self.errorbars_, self.naive_ = {}, []
        handles = []
        for i, s in enumerate(systems):
            sel = (r["system"].astype(str) == s).to_numpy()
            color = system_color(self.colors, s, i)
            err = np.vstack([value[sel] - lo[sel], hi[sel] - value[sel]])
            self.errorbars_[s] = a.errorbar(
                value[sel],
                y[sel],
                xerr=np.nan_to_num(err),
                fmt="o",
                color=color,
                elinewidth=1.8,
                capsize=3,
                markersize=5,
            )
            handles.append(Line2D([], [], color=color, marker="o", label=s))
        if naive:
            nl, nh = r["naive_ci_low"].to_numpy(np.float64), r["naive_ci_high"].to_numpy(np.float64)
            self.naive_.append(a.hlines(y - 0.28, nl, nh, color="0.55", linewidth=1.2))
            handles.append(Line2D([], [], color="0.55", label="naive (pooled samples)"))
        parts = [r["metric"].astype(str)] if r["metric"].nunique() > 1 else []
        if "stratum" in r.columns:
            parts.append(r["stratum"].astype(str))
        labels = [" \u00b7 ".join(p) for p in zip(*[list(x) for x in parts], r["system"].astype(str))]
        a.set_yticks(y, labels)
        a.set_ylim(-0.8, n - 0.3)
        a.set_xlabel("judged value (mean of per-query means), 95% clustered interval")
        a.set_title(title or "LLM-judged metrics")
        a.grid(True, axis="x", alpha=0.25)
        a.tick_params(colors=foreground())
        self.legend_ = legend_below(a, handles, ncols=min(len(handles), 4))
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


class PlanningDisplay:
    """Minimum detectable difference against the number of queries, one line per samples-per-
    query count, with an optional target difference: where the lines bunch together, more judge
    samples buy little and only queries help.

    Parameters
    ----------
    table : DataFrame
        :func:`~retrieval_eval.analysis.judged.planning_table`'s ``queries``, ``samples``, ``mdd``.
    target : float, optional
        A difference to detect, drawn as a horizontal line.

    Examples
    --------
    >>> from retrieval_eval.analysis.judged import planning_table
    >>> disp = PlanningDisplay(planning_table(0.02, 0.01), target=0.05).plot()
    >>> len(disp.lines_)
    5
    """

    def __init__(self, table: pd.DataFrame, target: float | None = None):
        self.table = table
        self.target = target

    @classmethod
    def from_components(
        cls,
        var_between: float,
        var_within: float,
        target: float | None = None,
        queries: Sequence[int] = (10, 20, 40, 80, 160, 320, 640),
        samples: Sequence[int] = (1, 2, 3, 5, 10),
        alpha: float = 0.05,
        power: float = 0.8,
    ) -> PlanningDisplay:
        """The planning table of these variance components.

        Parameters
        ----------
        var_between, var_within : float
            :func:`~retrieval_eval.analysis.judged.judged_summary`'s components.
        target : float, optional
            A difference to detect.
        queries, samples : sequence of int
            The grid (:func:`~retrieval_eval.analysis.judged.planning_table`).
        alpha, power : float
            The test's level and power.

        Returns
        -------
        PlanningDisplay
        """
        from ..analysis.judged.planning import planning_table

        return cls(planning_table(var_between, var_within, queries, samples, alpha, power), target)

    def plot(self, ax=None, *, title: str | None = None) -> PlanningDisplay:
        """Draw MDD against queries (log x), one line per samples per query.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        title : str, optional

        Returns
        -------
        PlanningDisplay
            self, with ``ax_``, ``figure_``, ``lines_`` (per samples count), ``target_line_``.
        """
        (a,), fig = get_axes(ax, 1, size=(6.0, 3.8))
        self.lines_ = {}
        samples = sorted(set(self.table["samples"].tolist()))
        shades = np.linspace(0.75, 0.1, len(samples))
        for m, shade in zip(samples, shades):
            sub = self.table[self.table["samples"] == m].sort_values("queries")
            (self.lines_[m],) = a.plot(
                sub["queries"],
                sub["mdd"],
                marker="o",
                markersize=3,
                color=str(round(float(shade), 3)),
                label=f"{m} sample{'s' if m > 1 else ''}/query",
            )
        self.target_line_ = None
        if self.target is not None:
            self.target_line_ = a.axhline(
                self.target, color="#D55E00", linestyle="--", linewidth=1.2, label=f"target {self.target:g}"
            )
        a.set_xscale("log")
        ticks = sorted(set(self.table["queries"].tolist()))
        a.set_xticks(ticks, [str(t) for t in ticks])
        a.minorticks_off()
        a.set_xlabel("queries")
        a.set_ylabel("minimum detectable difference")
        a.set_title(title or "What a judged evaluation can detect")
        a.grid(True, alpha=0.25)
        a.legend(frameon=False, fontsize="small")
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
