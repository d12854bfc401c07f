"""Displays of an evaluation: strata, metric@k, per-query deltas (of a comparison too).

Metric means come from the evaluation (:mod:`retrieval_eval.analysis.evaluation`); what is
computed here is only what a picture needs on top (a t interval's half-width for the error
bars, the per-query differences to sort).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..engine.measures.seed import parse_metric
from ..model import ID, UNSTRATIFIED
from .draw import font_points, foreground, get_axes, legend_below, select_systems, system_color
from .labels import display_name
from .style import LOSS_COLOR, THIN_STRATUM, WIN_COLOR, clip_interval, is_bounded, system_colors

__all__ = ["MetricAtKDisplay", "PerQueryDeltaDisplay", "StratumDisplay", "t_interval"]


def _resolve_metric(ev, metric: str, k: int | None = None) -> str:
    """A column name (``recall@10``) from a name with or without its cutoff."""
    if "@" in metric:
        if metric not in ev.per_query.columns:
            raise ValueError(
                f"no metric {metric!r}; available: {', '.join(c for c in ev.per_query.columns if '@' in c)}"
            )
        return metric
    return ev.metric(metric, k)


def _scored_queries(ev) -> pd.DataFrame:
    """Per-query rows that enter the averages (positives present, not an expect_none query)."""
    pq = ev.per_query
    keep = ~pq["no_positives"].to_numpy(bool)
    if "negative" in pq.columns:
        keep &= ~pq["negative"].to_numpy(bool)
    return pq[keep]


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
        name = _resolve_metric(evaluation, metric, k)
        systems = select_systems(evaluation.systems, system)
        ps = evaluation.per_stratum
        ps = ps[ps.index.get_level_values("system").isin(systems) & (ps["n"] > 0)]
        values = pd.DataFrame({"value": ps[name].astype(np.float64), "n": ps["n"].astype(np.int64)})
        scored = _scored_queries(evaluation)
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

    def plot(
        self,
        ax=None,
        *,
        legend: bool = True,
        interval: bool = True,  # long: numpydoc, one figure
        labels: Mapping[str, str] | None = None,
    ):
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
            sub = self.values.xs(s, level="system").reindex(strata)
            y = y0 - 0.4 + width * (i + 0.5)
            color = system_color(self.colors, s, i)
            v = sub["value"].to_numpy(np.float64)
            bars = a.barh(y, v, height=width * 0.92, color=color, label=s)
            self.bars_[s] = bars
            thin = sub["thin"].fillna(False).to_numpy(bool) if "thin" in sub else np.zeros(len(v), bool)
            for patch, is_worst, is_thin in zip(bars.patches, sub["worst"].fillna(False).to_numpy(bool), thin):
                if is_thin:
                    patch.set_alpha(0.4)
                    self.thin_.append(patch)
                if is_worst:
                    patch.set_hatch("///")
                    patch.set_edgecolor(fg)
                    patch.set_linewidth(1.2)
                    self.worst_.append(patch)
            lo = sub["ci_low"].to_numpy(np.float64)
            hi = sub["ci_high"].to_numpy(np.float64)
            has = np.isfinite(lo) & np.isfinite(hi)
            if interval and has.any():
                err = np.vstack([v[has] - lo[has], hi[has] - v[has]])
                self.errorbars_[s] = a.errorbar(
                    v[has], y[has], xerr=err, fmt="none", ecolor=fg, elinewidth=1, capsize=3
                )
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
        if legend:
            handles = self._legend_handles(systems, fg, bounded, labels)
            self.legend_ = legend_below(a, handles, ncols=2 if len(handles) > 2 else 1)
        self.bar_ = next(iter(self.bars_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self

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
        missing = [n for n in names if n not in evaluation.summary.columns]
        if missing:
            raise ValueError(f"no metric {', '.join(missing)} in the evaluation")
        table = evaluation.summary.loc[systems, names].astype(np.float64)
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


class PerQueryDeltaDisplay:
    """Per-query differences of one metric between two systems, sorted, wins and losses coloured.

    ``deltas``: one row per scored query, ``query_id``, ``baseline``, ``candidate`` (the two
    systems' per-query values), ``delta`` = candidate - baseline, sorted by delta descending
    (ties keep the evaluation's query order). A mean can hide that a change helps a few
    queries a lot and hurts many a little; this shows which.

    Parameters
    ----------
    deltas : pandas.DataFrame
        ``query_id, baseline, candidate, delta``, sorted.
    metric : str
    baseline, candidate : str
        The two systems' names.
    colors : mapping, optional
        ``{system: colour}``: a bar takes the colour of the system that did better; without
        it ``WIN_COLOR`` and ``LOSS_COLOR``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import PerQueryDeltaDisplay
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)
    >>> disp = PerQueryDeltaDisplay.from_evaluation(
    ...     ev, "ndcg", baseline="bm25", candidate="dense").plot()
    >>> disp.counts
    {'wins': 26, 'losses': 12, 'ties': 7}
    """

    def __init__(
        self, deltas: pd.DataFrame, metric: str, baseline: str, candidate: str, colors: Mapping[str, str] | None = None
    ):
        self.deltas = deltas
        self.metric = metric
        self.baseline = baseline
        self.candidate = candidate
        # With the systems' colours known, a bar takes the colour of the system that did
        # better (wins: the candidate's, losses: the baseline's); else WIN/LOSS_COLOR.
        self.colors = dict(colors) if colors is not None else None

    @property
    def counts(self) -> dict[str, int]:
        d = self.deltas["delta"].to_numpy(np.float64)
        return {"wins": int((d > 0).sum()), "losses": int((d < 0).sum()), "ties": int((d == 0).sum())}

    @classmethod
    def from_values(
        cls,
        query_ids,
        baseline_values,
        candidate_values,
        metric: str,
        baseline: str = "baseline",
        candidate: str = "candidate",
        colors: Mapping[str, str] | None = None,
    ):
        """From two aligned arrays of per-query values.

        Parameters
        ----------
        query_ids : array-like of str
        baseline_values, candidate_values : array-like of float
            The two systems' values, aligned with ``query_ids``.
        metric : str
        baseline, candidate : str, default "baseline", "candidate"
        colors : mapping, optional
            ``{system: colour}`` keyed by ``baseline`` / ``candidate`` (the systems' colours).

        Returns
        -------
        PerQueryDeltaDisplay
        """
        b = np.asarray(baseline_values, dtype=np.float64)
        c = np.asarray(candidate_values, dtype=np.float64)
        frame = pd.DataFrame(
            {"query_id": pd.array(list(query_ids), dtype=ID), "baseline": b, "candidate": c, "delta": c - b}
        )
        frame = frame.sort_values("delta", ascending=False, kind="stable").reset_index(drop=True)
        return cls(frame, metric, baseline, candidate, colors)

    @classmethod
    def from_evaluation(
        cls,
        evaluation,
        metric: str = "ndcg",
        k: int | None = None,
        baseline: str | None = None,
        candidate: str | None = None,
    ):
        """Two systems of one evaluation.

        Parameters
        ----------
        evaluation : Evaluation
            An :func:`~retrieval_eval.evaluate` result.
        metric : str, default "ndcg"
            A column name (``ndcg@10``) or a base name (at ``k`` or the largest cutoff).
        k : int, optional
        baseline, candidate : str, optional
            By default the first system is the baseline, the second the candidate (an
            evaluation with other than two systems needs both named).

        Returns
        -------
        PerQueryDeltaDisplay
        """
        name = _resolve_metric(evaluation, metric, k)
        systems = evaluation.systems
        if baseline is None or candidate is None:
            if len(systems) != 2:
                raise ValueError(
                    f"the evaluation has {len(systems)} systems ({', '.join(systems)}); name baseline= and candidate="
                )
            baseline = baseline or next(s for s in systems if s != candidate)
            candidate = candidate or next(s for s in systems if s != baseline)
        select_systems(systems, [baseline, candidate])
        scored = _scored_queries(evaluation)
        wide = scored.pivot(index="query_id", columns="system", values=name)
        order = pd.unique(scored["query_id"])
        wide = wide.reindex(order)
        disp = cls.from_values(
            wide.index,
            wide[baseline].to_numpy(np.float64),
            wide[candidate].to_numpy(np.float64),
            name,
            baseline,
            candidate,
        )
        disp.colors = system_colors(systems)
        return disp

    @classmethod
    def from_comparison(cls, comparison, metric: str | None = None, system: str | None = None):
        """One candidate of a comparison against its baseline.

        Parameters
        ----------
        comparison : Comparison
            A :func:`~retrieval_eval.compare` result.
        metric : str, optional
            A compared metric (default: the first).
        system : str, optional
            A candidate (default: the first).

        Returns
        -------
        PerQueryDeltaDisplay
        """
        pq = comparison.per_query
        if metric is None:
            metric = comparison.metrics[0]
        elif metric not in set(pq["metric"]):
            named = f"{metric}@{comparison.k}"
            if named not in set(pq["metric"]):
                raise ValueError(f"metric {metric!r} was not compared; compared: {', '.join(comparison.metrics)}")
            metric = named
        candidates = list(comparison.candidates)
        system = system or (candidates[0] if candidates else None)
        if system not in candidates:
            raise ValueError(f"no candidate {system!r}; candidates: {', '.join(candidates)}")
        sub = pq[(pq["system"] == system) & (pq["metric"] == metric)]
        disp = cls.from_values(
            sub["query_id"],
            sub["baseline"].to_numpy(np.float64),
            sub["candidate"].to_numpy(np.float64),
            metric,
            str(comparison.baseline),
            str(system),
        )
        disp.colors = system_colors(comparison.systems)
        return disp

    def plot(self, ax=None, *, max_labels: int = 40, labels: Mapping[str, str] | None = None):
        """Bars per query (sorted), wins and losses coloured.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure, wider with more queries.
        max_labels : int, default 40
            Label each bar with its query up to this many queries.
        labels : mapping, optional
            ``{system or metric: shown name}`` (:func:`~retrieval_eval.viz.labels.display_name`).

        Returns
        -------
        PerQueryDeltaDisplay
            self, with ``ax_``, ``figure_``, ``bars_``, ``zero_line_`` and ``legend_``.
        """
        from matplotlib.patches import Patch

        n = len(self.deltas)
        label_queries = 0 < n <= max_labels
        (a,), fig = get_axes(ax, 1, size=(max(5.6, min(12.0, 0.22 * n + 2.5)), 4.0))
        fg = foreground()
        d = self.deltas["delta"].to_numpy(np.float64)
        if self.colors is not None:
            win = system_color(self.colors, self.candidate, 0)
            loss = system_color(self.colors, self.baseline, 1)
        else:
            win, loss = WIN_COLOR, LOSS_COLOR
        colors = np.where(d > 0, win, np.where(d < 0, loss, "#999999"))
        x = np.arange(n)
        self.bars_ = a.bar(x, d, width=0.85 if n < 200 else 1.0, color=list(colors))
        self.zero_line_ = a.axhline(0.0, color=fg, linewidth=1)
        tied = d == 0
        if tied.any():  # a zero-height bar is invisible: mark ties on the zero line
            a.plot(x[tied], d[tied], linestyle="none", marker="o", markersize=4, color="#999999")
        cnt = self.counts
        if label_queries:
            a.set_xticks(x, self.deltas["query_id"].astype(str).tolist(), rotation=90, fontsize="small")
            a.set_xlabel("query (sorted by difference)")
        else:
            a.set_xticks([])
            a.set_xlabel(f"queries, sorted by difference (n={n})")
        a.set_xlim(-0.8, n - 0.2 if n else 1)
        m, c, b = (display_name(x, labels) for x in (self.metric, self.candidate, self.baseline))
        a.set_ylabel(f"\u0394 {m} ({c} \u2212 {b})")
        a.set_title(f"{m} per query: {c} vs {b}")
        a.grid(True, axis="y", alpha=0.25)
        handles = [
            Patch(color=win, label=f"{c} better ({cnt['wins']})"),
            Patch(color=loss, label=f"{b} better ({cnt['losses']})"),
            Patch(color="#999999", label=f"tied ({cnt['ties']})"),
        ]
        extra = 0.0
        if label_queries:
            longest = max((len(str(q)) for q in self.deltas["query_id"]), default=0)
            extra = 0.6 * font_points("small") * longest
        self.legend_ = legend_below(a, handles, ncols=3, extra_points=extra, ticklabels=label_queries)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
