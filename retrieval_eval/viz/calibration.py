"""Displays of a calibration's top-1 scores: their distributions (ROC and precision-recall
are in :mod:`retrieval_eval.viz.curves`, re-exported here).

Each Display follows scikit-learn's pattern: precomputed values (tidy frames you can read and
test without drawing), ``from_calibration`` and ``from_predictions`` constructors, and
``.plot(ax=None, **kwargs)`` that draws on the given Axes (or a new figure), keeps its artists
and returns the display. AUROC, AUPR and cutoffs come from the calibration
(:mod:`retrieval_eval.analysis.calibration`); only the histograms' bins are computed here.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

# Re-exported: the curves' Displays as callers have always imported them.
from .curves import PrecisionRecallDisplay as PrecisionRecallDisplay
from .curves import RocCurveDisplay as RocCurveDisplay
from .draw import (
    fmt_score,
    foreground,
    get_axes,
    is_dark,
    legend_below,
    note_box,
    one_or_array,
    positive_color,
    quantile_text,
    score_axis_label,
    select_systems,
    system_color,
)
from .style import FEW_SAMPLES, NEGATIVE_COLOR, system_colors
from .top1 import calibration_from_predictions, class_frame, class_scores, score_label_of, with_method

__all__ = ["RANK_BASED_NOTE", "ScoreDistributionDisplay", "few_samples_note"]

RANK_BASED_NOTE = "scores look rank-based: no absolute relevance"


def few_samples_note(n_positive: int, n_negative: int) -> str | None:
    """The on-plot caveat when a class has fewer than ``FEW_SAMPLES`` scores, else None.

    With 4 positives and 2 negatives an AUROC of 0.875 is one swapped pair away from 0.75: the
    plot says how few scores its figures rest on rather than let them read as settled.

    Parameters
    ----------
    n_positive, n_negative : int
        How many positives and negatives have a top-1 score.

    Returns
    -------
    str or None
        The two-line note, or None when both classes have at least ``FEW_SAMPLES`` scores.

    Examples
    --------
    >>> from retrieval_eval.viz import few_samples_note
    >>> print(few_samples_note(4, 2))
    few samples: 4 positives, 2 negatives
    (< 10 in a class): AUROC and cutoff are rough
    >>> few_samples_note(40, 20) is None
    True
    """
    if n_positive >= FEW_SAMPLES and n_negative >= FEW_SAMPLES:
        return None
    return (
        f"few samples: {n_positive} positives, {n_negative} negatives\n"
        f"(< {FEW_SAMPLES} in a class): AUROC and cutoff are rough"
    )


def _class_histograms(a, pos, neg, bins, min_bins: int, max_bins: int, alpha: float) -> list:
    """The two classes' histograms on common bins, each as a share of its own class; returns
    their legend handles. A rule's bin count (``bins="auto"``) is kept within
    ``min_bins`` .. ``max_bins``."""
    from matplotlib.patches import Patch

    both = np.r_[pos, neg]
    edges = np.histogram_bin_edges(both, bins=bins) if both.size else np.linspace(0.0, 1.0, 11)
    if isinstance(bins, str) and not min_bins <= len(edges) - 1 <= max_bins:
        edges = np.linspace(edges[0], edges[-1], min(max(len(edges) - 1, min_bins), max_bins) + 1)
    handles = []
    for values, color, label in (
        (pos, positive_color(), f"positives (n={pos.size})"),
        (neg, NEGATIVE_COLOR, f"negatives, expect_none (n={neg.size})"),
    ):
        if values.size == 0:
            continue
        w = np.full(values.size, 1.0 / values.size)
        a.hist(values, bins=edges, weights=w, histtype="stepfilled", color=color, alpha=alpha, linewidth=0)
        a.hist(values, bins=edges, weights=w, histtype="step", color=color, linewidth=1.8)
        handles.append(Patch(facecolor=color, edgecolor=color, alpha=0.7, label=label))
    return handles


class ScoreDistributionDisplay:
    """Positive vs negative top-1 score distributions, one axes per system.

    ``scores``: one row per (system, query) of the positives and negatives with a top-1
    score (``system``, ``query_id``, ``kind``, ``top1_score``, ...). ``stats``: indexed by
    system, with ``cutoff``, ``quantile`` (NaN for a fixed cutoff), ``separation_margin``,
    ``auroc``, ``rank_based``, ``n_positive``, ``n_negative`` (the calibration's summary).

    Each class is drawn as a share of its own queries, so 12 negatives and 400 positives are
    comparable on one axis. Rank-based systems get a note in the axes: their separation is
    not evidence of anything (their scores are 1/(k + rank), the same for any query).

    Parameters
    ----------
    scores : pandas.DataFrame
        The positives' and negatives' top-1 scores, one row per (system, query).
    stats : pandas.DataFrame
        Per system (index): the calibration's figures drawn and named on the plot.
    score_label : str or mapping, optional
        The score's kind for the axis label (``"cosine"``, or ``{system: kind}``).
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``stats``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import ScoreDistributionDisplay
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> disp = ScoreDistributionDisplay.from_calibration(cal, system="dense").plot()
    >>> sorted(disp.cutoff_lines_)
    ['dense']
    """

    def __init__(
        self,
        scores: pd.DataFrame,
        stats: pd.DataFrame,
        score_label: str | None = None,
        colors: Mapping[str, str] | None = None,
    ):
        self.scores = scores
        self.stats = stats
        self.score_label = score_label
        self.colors = dict(colors) if colors is not None else system_colors(stats.index)

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in self.stats.index]

    @classmethod
    def from_calibration(cls, calibration, system=None, score_label: str | None = None):
        """The display of a calibration's top-1 scores.

        Parameters
        ----------
        calibration : Calibration
            A :func:`~retrieval_eval.calibrate` result.
        system : str or list of str, optional
            One system, several, or None (every calibrated system).
        score_label : str or mapping, optional
            The score's kind on the axis (``"cosine"``, or ``{"dense": "cosine"}``); by
            default what the calibration says.

        Returns
        -------
        ScoreDistributionDisplay
        """
        systems = select_systems(calibration.summary.index, system)
        cols = ["cutoff", "quantile", "separation_margin", "auroc", "rank_based", "n_positive", "n_negative"]
        stats = calibration.summary.loc[systems, with_method(calibration.summary, cols)].copy()
        return cls(
            class_frame(calibration, systems),
            stats,
            score_label_of(calibration, score_label),
            system_colors(calibration.summary.index),
        )

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_score,
        *,
        cutoff=None,
        quantile: float = 0.10,
        name: str = "system",
        score_label: str | None = None,
    ):
        """The display of bare (label, top-1 score) pairs, calibrated like a run.

        Parameters
        ----------
        y_true : array-like of bool
            True for an in-distribution (positive) query, False for an ``expect_none`` one.
        y_score : array-like of float
            Each query's top-1 score (finite).
        cutoff : float, optional
            A fixed cutoff; by default the ``quantile`` of the positives' scores.
        quantile : float, default 0.10
        name : str, default "system"
            The system's name on the plot.
        score_label : str, optional
            The score's kind on the axis.

        Returns
        -------
        ScoreDistributionDisplay
        """
        cal = calibration_from_predictions(y_true, y_score, cutoff, quantile, name)
        return cls.from_calibration(cal, score_label=score_label)

    def legend_title(self, system: str) -> str:
        """The legend's title for a system: its AUROC and separation margin.

        Parameters
        ----------
        system : str

        Returns
        -------
        str
        """
        st = self.stats.loc[system]
        return f"AUROC {fmt_score(st['auroc'])}, separation margin {fmt_score(st['separation_margin'])}"

    def plot(
        self,
        ax=None,
        *,
        bins="auto",
        min_bins: int = 12,
        max_bins: int = 40,
        alpha: float | None = None,
        legend: bool = True,
    ):
        """Draw one histogram pair per system.

        Parameters
        ----------
        ax : matplotlib Axes or array of Axes, optional
            One Axes per system; by default a new figure with a row of them.
        bins : int, sequence or str, default "auto"
            As :func:`numpy.histogram_bin_edges`; a rule's bin count is kept within
            ``min_bins`` .. ``max_bins``.
        min_bins, max_bins : int, default 12, 40
        alpha : float, optional
            The fill's opacity (0.35, or 0.5 on a dark background).
        legend : bool, default True
            A legend below each axes, titled with the system's AUROC and separation margin.

        Returns
        -------
        ScoreDistributionDisplay
            self, with ``ax_`` (an Axes, or an array of them for several systems), ``axes_``
            (list), ``figure_``, and ``cutoff_lines_``, ``notes_`` (rank-based scores),
            ``few_samples_`` (fewer than ``FEW_SAMPLES`` positives or negatives), each
            ``{system: artist}``.
        """
        axes, fig = get_axes(ax, len(self.systems))
        fg = foreground()
        if alpha is None:
            alpha = 0.5 if is_dark() else 0.35
        self.cutoff_lines_, self.notes_, self.legends_, self.handles_ = {}, {}, {}, {}
        self.few_samples_ = {}
        for i, (a, s) in enumerate(zip(axes, self.systems)):
            pos, neg = class_scores(self.scores, s)
            st = self.stats.loc[s]
            handles = _class_histograms(a, pos, neg, bins, min_bins, max_bins, alpha)
            c = float(st["cutoff"])
            if np.isfinite(c):
                line = a.axvline(
                    c,
                    color=fg,
                    linestyle="--",
                    linewidth=1.5,
                    label=f"cutoff {fmt_score(c)} ({quantile_text(st['quantile'], st.get('method'))})",
                )
                self.cutoff_lines_[s] = line
                handles.append(line)
            a.set_xlabel(score_axis_label(self.score_label, system=s))
            a.set_ylabel("share of queries (per class)")
            # The title in the system's colour: the same colour as its ROC line and bars.
            a.set_title(f"{s}: top-1 scores", color=system_color(self.colors, s, i))
            a.set_ylim(bottom=0)
            few = few_samples_note(pos.size, neg.size)
            notes = int(bool(st["rank_based"])) + int(few is not None)
            if notes:
                top = a.get_ylim()[1]
                a.set_ylim(0, top * (1 + 0.3 * notes))
            if bool(st["rank_based"]):
                self.notes_[s] = note_box(a, RANK_BASED_NOTE)
            if few is not None:
                self.few_samples_[s] = note_box(a, few, 0.97 if notes == 1 else 0.82)
            self.handles_[s] = handles
            if legend:
                self.legends_[s] = legend_below(a, handles, ncols=1, title=self.legend_title(s))
        self.axes_ = axes
        self.ax_ = one_or_array(axes)
        self.figure_ = fig
        return self
