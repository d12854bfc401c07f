"""Displays of an evaluation: strata, metric@k (the per-query deltas, of a comparison too, are
in :mod:`retrieval_eval.viz.delta`, re-exported here).

Metric means come from the evaluation (:mod:`retrieval_eval.analysis.evaluation`); what is
computed here is only what a picture needs on top (a t interval's half-width for the error
bars).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..engine.measures.seed import parse_metric
from ..model import ID, UNSTRATIFIED
from .delta import PerQueryDeltaDisplay as PerQueryDeltaDisplay
from .draw import foreground, get_axes, legend_below, select_systems, system_color
from .labels import display_name
from .scored import resolve_metric, scored_queries
from .style import THIN_STRATUM, clip_interval, is_bounded, system_colors

__all__ = ["MetricAtKDisplay", "StratumDisplay", "t_interval"]


def t_interval(values: pd.Series, by) -> pd.DataFrame:
    """Student-t 95% interval on the mean of ``values`` per group: mean, n, ci_low, ci_high.

    The spec's ``summarize`` rule (df = n - 1, capped at 120, not clamped): one value gives no
    interval. Vectorized over groups: one ``t_ppf`` call.

    Parameters
    ----------
    values : pandas.Series
        One value per query.
    by : array-like or list of array-like
        The groups, as ``Series.groupby`` takes them.

    Returns
    -------
    pandas.DataFrame
        Per group: ``mean``, ``n``, ``sd``, ``ci_low``, ``ci_high``.

    Examples
    --------
    >>> import pandas as pd
    >>> from retrieval_eval.viz import t_interval
    >>> t_interval(pd.Series([0.5, 0.7, 0.9, 1.0]), ["a", "a", "b", "b"])[["mean", "n"]]
       mean  n
    a  0.60  2
    b  0.95  2
    """
    from ..analysis.evaluation.measurement import t_half_width

    g = values.groupby(by, sort=False, observed=True)
    out = pd.DataFrame({"mean": g.mean(), "n": g.count().astype(np.int64), "sd": g.std(ddof=1)})
    half = t_half_width(out["sd"].to_numpy(np.float64), out["n"].to_numpy(np.float64))
    out["ci_low"] = out["mean"] - half
    out["ci_high"] = out["mean"] + half
    return out


class StratumDisplay:
    """One metric per stratum as bars (grouped by system), ``n`` beside each bar, 95% t
    intervals clipped to the metric's range, thin strata marked, the worst stratum hatched.

    ``values``: indexed by (system, stratum) with ``value`` (the evaluation's per-stratum
    mean), ``n``, ``ci_low``, ``ci_high`` (Student-t 95% over the stratum's per-query values,
    clipped to [0, 1] for the engine's bounded metrics: the spec's interval is not clamped,
    but no mean lies outside the range, so the part outside is not drawn; NaN for n < 2, and
    when a query is labelled in several strata, where the stratum's mean is not a mean of
    per-query rows), ``thin`` (n < ``THIN_STRATUM``: a mean over so few queries moves with
    one of them) and ``worst`` (the evaluation's worst stratum for this metric). Strata with
    no scored query are left out: there is no bar to draw.

    Parameters
    ----------
    values : pandas.DataFrame
        Indexed by (system, stratum), as above.
    metric : str
        The column drawn (``recall@10``).
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``values``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import StratumDisplay
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)
    >>> disp = StratumDisplay.from_evaluation(ev, "recall").plot()
    >>> disp.metric, disp.strata
    ('recall@10', ['builtin-types', 'data-model', 'expressions', 'statements'])
    """

    #: The artists :meth:`plot` keeps (its helpers fill them system by system).
    bars_: dict[str, Any]
    errorbars_: dict[str, Any]
    worst_: list[Any]
    thin_: list[Any]
    n_labels_: dict[str, list[Any]]

    def __init__(self, values: pd.DataFrame, metric: str, colors: Mapping[str, str] | None = None):
        self.values = values
        self.metric = metric
        self.colors = (
            dict(colors) if colors is not None else system_colors(pd.unique(values.index.get_level_values("system")))
        )

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in pd.unique(self.values.index.get_level_values("system"))]

    @property
    def strata(self) -> list[str]:
        return [str(s) for s in pd.unique(self.values.index.get_level_values("stratum"))]

    @classmethod
    def from_evaluation(cls, evaluation, metric: str = "recall", k: int | None = None, system=None):
        """One metric per stratum of an evaluation.

        Parameters
        ----------
        evaluation : Evaluation
            An :func:`~retrieval_eval.evaluate` result.
        metric : str, default "recall"
            A column name (``recall@10``) or a base name (``recall``, at ``k`` or the
            evaluation's largest cutoff).
        k : int, optional
        system : str or list of str, optional
            One system, several, or None (every system of the evaluation).

        Returns
        -------
        StratumDisplay
        """
        name = resolve_metric(evaluation, metric, k)
        systems = select_systems(evaluation.systems, system)
        ps = evaluation.per_stratum
        ps = ps[ps.index.get_level_values("system").isin(systems) & (ps["n"] > 0)]
        values = pd.DataFrame({"value": ps[name].astype(np.float64), "n": ps["n"].astype(np.int64)})
        scored = scored_queries(evaluation)
        ti = t_interval(scored[name].astype(np.float64), [scored["system"], scored["stratum"]])
        ti = ti.reindex(values.index)
        same = (ti["n"].to_numpy() == values["n"].to_numpy()) & np.isclose(
            ti["mean"].to_numpy(np.float64), values["value"].to_numpy(np.float64), rtol=0, atol=1e-9
        )
        low, high = clip_interval(ti["ci_low"].to_numpy(np.float64), ti["ci_high"].to_numpy(np.float64), name)
        values["ci_low"] = np.where(same, low, np.nan)
        values["ci_high"] = np.where(same, high, np.nan)
        values["thin"] = values["n"].to_numpy(np.int64) < THIN_STRATUM
        worst = np.zeros(len(values), dtype=bool)
        for s in systems:
            w = evaluation.worst_stratum(name, s)
            mine = values.index.get_level_values("system") == s
            if w is not None and (mine.sum() > 1 or w["name"] != UNSTRATIFIED):  # no strata: no worst
                worst |= mine & (values.index.get_level_values("stratum") == w["name"])
        values["worst"] = worst
        values = values.loc[[i for s in systems for i in values.index if i[0] == s]]
        return cls(values, name, system_colors(evaluation.systems))

    def plot(self, ax=None, *, legend: bool = True, interval: bool = True, labels: Mapping[str, str] | None = None):
        """Horizontal grouped bars, strata top to bottom.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure.
        legend : bool, default True
        interval : bool, default True
            Draw the 95% t intervals.
        labels : mapping, optional
            ``{system or metric: shown name}`` (:func:`~retrieval_eval.viz.labels.display_name`).

        Returns
        -------
        StratumDisplay
            self, with ``ax_``, ``figure_``, ``bars_`` ({system: BarContainer}),
            ``errorbars_``, ``worst_`` (the hatched patches), ``thin_`` (the patches of thin
            strata, drawn pale) and ``n_labels_`` ({system: [Text]}, the ``n`` beside each
            bar).
        """
        strata, systems = self.strata, self.systems
        height = max(2.6, 0.9 + 0.42 * len(strata) * max(1, 0.6 * len(systems)))
        (a,), fig = get_axes(ax, 1, size=(6.4, height))
        fg = foreground()
        y0 = np.arange(len(strata), dtype=np.float64)
        width = 0.8 / len(systems)
        bounded = is_bounded(self.metric)
        values = self.values["value"].to_numpy(np.float64)
        top = np.nanmax(np.r_[1.0 if bounded else 0.0, values, self.values["ci_high"].to_numpy(np.float64)])
        pad = 0.012 * (top if top > 0 else 1.0)
        self.bars_, self.errorbars_, self.worst_, self.thin_, self.n_labels_ = {}, {}, [], [], {}
        for i, s in enumerate(systems):
            self._draw_system(a, s, i, strata, y0 - 0.4 + width * (i + 0.5), width, fg, pad, interval)
        self._finish_axes(a, strata, y0, values, top, bounded, labels)
        if legend:
            handles = self._legend_handles(systems, fg, bounded, labels)
            self.legend_ = legend_below(a, handles, ncols=2 if len(handles) > 2 else 1)
        self.bar_ = next(iter(self.bars_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self

    def _draw_system(
        self, a, s: str, i: int, strata: list[str], y, width: float, fg, pad: float, interval: bool
    ) -> None:
        """One system's bars (thin strata pale, the worst hatched), its intervals and the ``n``
        beside each bar."""
        sub = self.values.xs(s, level="system").reindex(strata)
        color = system_color(self.colors, s, i)
        v = sub["value"].to_numpy(np.float64)
        bars = a.barh(y, v, height=width * 0.92, color=color, label=s)
        self.bars_[s] = bars
        thin = sub["thin"].fillna(False).to_numpy(bool) if "thin" in sub else np.zeros(len(v), bool)
        self._mark_bars(bars.patches, sub["worst"].fillna(False).to_numpy(bool), thin, fg)
        lo = sub["ci_low"].to_numpy(np.float64)
        hi = sub["ci_high"].to_numpy(np.float64)
        has = np.isfinite(lo) & np.isfinite(hi)
        if interval and has.any():
            err = np.vstack([v[has] - lo[has], hi[has] - v[has]])
            self.errorbars_[s] = a.errorbar(v[has], y[has], xerr=err, fmt="none", ecolor=fg, elinewidth=1, capsize=3)
        # n beside each bar (past its interval), "thin" where it is below THIN_STRATUM.
        end = np.where(interval & has, np.fmax(v, hi), v)
        n = sub["n"].to_numpy()
        self.n_labels_[s] = [
            a.text(
                np.nan_to_num(e, nan=0.0) + pad,
                yy,
                f"n={int(k)}" + (" thin" if t else ""),
                va="center",
                ha="left",
                fontsize="x-small",
                color=fg,
            )
            for e, yy, k, t in zip(end, y, n, thin)
            if pd.notna(k)
        ]

    def _mark_bars(self, patches, worst, thin, fg) -> None:
        """Thin strata's bars pale, the worst stratum's hatched (kept in ``thin_``, ``worst_``)."""
        for patch, is_worst, is_thin in zip(patches, worst, thin):
            if is_thin:
                patch.set_alpha(0.4)
                self.thin_.append(patch)
            if is_worst:
                patch.set_hatch("///")
                patch.set_edgecolor(fg)
                patch.set_linewidth(1.2)
                self.worst_.append(patch)

    def _finish_axes(self, a, strata: list[str], y0, values, top: float, bounded: bool, labels) -> None:
        """Strata top to bottom, room on the right for the ``n`` labels, titles and grid."""
        a.set_yticks(y0, strata)
        a.invert_yaxis()
        lo = np.nanmin(np.r_[0.0, self.values["ci_low"].to_numpy(np.float64), values])
        # Room on the right for the n labels; ticks only over the metric's range.
        a.set_xlim(min(0.0, lo), top * 1.2 if top > 0 else 1.0)
        if bounded:
            a.set_xticks(np.linspace(0, 1, 6))
        a.set_xlabel(f"{display_name(self.metric, labels)} (mean over the stratum's scored queries)")
        a.set_title(f"{display_name(self.metric, labels)} per stratum")
        a.grid(True, axis="x", alpha=0.25)

    def _legend_handles(self, systems: list[str], fg, bounded: bool, labels=None) -> list:
        """The legend's entries: the systems (when several), the worst stratum's hatch, the
        interval and the pale thin strata (when drawn)."""
        from matplotlib.patches import Patch

        # Plain patches: a bar container's handle would copy its first bar's hatch/alpha.
        handles: list[Any] = (
            [
                Patch(facecolor=system_color(self.colors, s, i), label=display_name(s, labels))
                for i, s in enumerate(systems)
            ]
            if len(systems) > 1
            else []
        )
        if self.worst_:  # no hatch drawn (one stratum): no legend entry for it
            handles.append(Patch(facecolor="none", edgecolor=fg, hatch="///", label="worst stratum"))
        if self.errorbars_:
            from matplotlib.lines import Line2D

            handles.append(
                Line2D(
                    [],
                    [],
                    color=fg,
                    marker="|",
                    markersize=8,
                    linewidth=1,
                    label="95% t interval" + (" (within [0, 1])" if bounded else ""),
                )
            )
        if self.thin_:
            handles.append(Patch(facecolor=fg, alpha=0.4, label=f"pale, 'thin': n < {THIN_STRATUM} queries"))
        return handles


class MetricAtKDisplay:
    """A metric at every cutoff the evaluation computed, one line per system.

    Parameters
    ----------
    values : pandas.DataFrame
        Tidy ``system, k, metric, value`` (the evaluation's macro means).
    metric : str
        The base name drawn (``recall``).
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``values``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import MetricAtKDisplay
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)
    >>> disp = MetricAtKDisplay.from_evaluation(ev, "ndcg").plot()
    >>> disp.values["k"].unique().tolist()
    [1, 5, 10]
    """

    def __init__(self, values: pd.DataFrame, metric: str, colors: Mapping[str, str] | None = None):
        self.values = values
        self.metric = metric
        self.colors = dict(colors) if colors is not None else system_colors(pd.unique(values["system"]))

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in pd.unique(self.values["system"])]

    @classmethod
    def from_evaluation(cls, evaluation, metric: str = "recall", system=None):
        """A metric at each of the evaluation's cutoffs.

        Parameters
        ----------
        evaluation : Evaluation
            An :func:`~retrieval_eval.evaluate` result.
        metric : str, default "recall"
            A base name (``recall``, ``ndcg``, ...), read at each of ``evaluation.ks``.
        system : str or list of str, optional

        Returns
        -------
        MetricAtKDisplay
        """
        base = parse_metric(metric)[0]  # ndcg_linear@5 -> ndcg (the evaluation's gain names it)
        systems = select_systems(evaluation.systems, system)
        ks = list(evaluation.ks)
        names = [evaluation.metric(base, k) for k in ks]
        if all(n in evaluation.summary.columns for n in names):
            table = evaluation.summary.loc[systems, names].astype(np.float64)
        else:  # evaluate(measures=...) without k: the summary holds what was asked, per_query all
            missing = [n for n in names if n not in evaluation.per_query.columns]
            if missing:
                raise ValueError(f"no metric {', '.join(missing)} in the evaluation")
            # the summary's mean: an excluded query's cells are NaN, so a mean that skips NaN
            means = evaluation.per_query.groupby("system", observed=True, sort=False)[names].mean()
            table = means.loc[systems].astype(np.float64)
        values = pd.DataFrame(
            {
                "system": pd.array(np.repeat(np.asarray(systems, dtype=object), len(ks)), dtype=ID),
                "k": np.tile(np.asarray(ks, dtype=np.int64), len(systems)),
                "metric": pd.array(np.tile(np.asarray(names, dtype=object), len(systems)), dtype=ID),
                "value": table.to_numpy().ravel(),
            }
        )
        label = names[0].partition(f"@{ks[0]}")[0]
        return cls(values, label, system_colors(evaluation.systems))

    def plot(self, ax=None, *, labels: Mapping[str, str] | None = None, **line_kwargs):
        """Draw one line per system.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure.
        labels : mapping, optional
            ``{system or metric: shown name}`` (:func:`~retrieval_eval.viz.labels.display_name`).
        **line_kwargs
            Passed to ``Axes.plot`` for every line.

        Returns
        -------
        MetricAtKDisplay
            self, with ``ax_``, ``figure_``, ``lines_`` ({system: Line2D}), ``line_`` and
            ``legend_``.
        """
        (a,), fig = get_axes(ax, 1, size=(5.6, 4.0))
        self.lines_ = {}
        for i, s in enumerate(self.systems):
            sub = self.values[self.values["system"] == s]
            kw = {"color": system_color(self.colors, s, i), "marker": "o", "linewidth": 2, **line_kwargs}
            (self.lines_[s],) = a.plot(sub["k"], sub["value"], label=display_name(s, labels), **kw)
        ks = np.unique(self.values["k"].to_numpy())
        a.set_xscale("log")  # k = 1, 5, 10, 100: evenly apart on a log axis, not 5 and 10 crowded
        a.set_xticks(ks, [str(k) for k in ks], minor=False)
        a.minorticks_off()
        a.set_ylim(0, 1.02)
        a.set_xlabel("cutoff k (results considered, log scale)")
        a.set_ylabel(f"{display_name(f'{self.metric}@k', labels)}\nmean over scored queries")
        a.set_title(f"{display_name(f'{self.metric}@k', labels)} by system")
        a.grid(True, alpha=0.25)
        self.legend_ = legend_below(a, ncols=min(len(self.lines_), 4))
        self.line_ = next(iter(self.lines_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
