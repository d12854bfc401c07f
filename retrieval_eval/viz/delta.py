"""The per-query differences of one metric between two systems (of an evaluation or a
comparison), sorted, wins and losses coloured.

Re-exported by :mod:`retrieval_eval.viz.evaluation`, where it was first defined.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..model import ID
from .draw import font_points, foreground, get_axes, legend_below, select_systems, system_color
from .labels import display_name
from .scored import resolve_metric, scored_queries
from .style import LOSS_COLOR, WIN_COLOR, system_colors

__all__ = ["PerQueryDeltaDisplay"]


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
        name = resolve_metric(evaluation, metric, k)
        systems = evaluation.systems
        if baseline is None or candidate is None:
            if len(systems) != 2:
                raise ValueError(
                    f"the evaluation has {len(systems)} systems ({', '.join(systems)}); name baseline= and candidate="
                )
            baseline = baseline or next(s for s in systems if s != candidate)
            candidate = candidate or next(s for s in systems if s != baseline)
        select_systems(systems, [baseline, candidate])
        scored = scored_queries(evaluation)
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
