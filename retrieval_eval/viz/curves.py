"""ROC and precision-recall curves of a calibration's top-1 score as an in-distribution detector.

Displays in scikit-learn's pattern (see :mod:`retrieval_eval.viz.calibration`): the curve
points are computed here in one vectorized pass per system; AUROC and AUPR come from the
calibration (:mod:`retrieval_eval.analysis.calibration`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..model import ID
from .draw import fmt_score, foreground, get_axes, legend_below, select_systems, system_color
from .style import system_colors
from .top1 import calibration_from_predictions, class_frame, class_scores

__all__ = ["PrecisionRecallDisplay", "RocCurveDisplay"]


def _curve_points(pos: np.ndarray, neg: np.ndarray) -> dict[str, np.ndarray]:
    """True/false positives when a query counts as in-distribution iff top1 >= t, for every
    distinct observed t (highest first), ties grouped. Vectorized: one sort, one cumsum."""
    scores = np.r_[pos, neg]
    labels = np.r_[np.ones(pos.size, bool), np.zeros(neg.size, bool)]
    order = np.argsort(-scores, kind="mergesort")
    s, y = scores[order], labels[order]
    last = np.r_[s[1:] != s[:-1], True] if s.size else np.zeros(0, bool)
    tp = np.cumsum(y)[last].astype(np.float64)
    fp = np.cumsum(~y)[last].astype(np.float64)
    return {"threshold": s[last], "tp": tp, "fp": fp}


class RocCurveDisplay:
    """ROC curve of the top-1 score as an in-distribution detector, several systems on one axes.

    Positives (covered queries) are the positive class; a query counts as "in-distribution"
    when its top-1 score is at or above the threshold, as production keeps a hit at the
    cutoff. ``curve``: tidy frame ``system, threshold, fpr, tpr`` starting at (0, 0) with
    threshold +inf. ``auroc``: per system, the calibration's (equal to the area under these
    points, ties counted 1/2).

    Parameters
    ----------
    curve : pandas.DataFrame
        ``system, threshold, fpr, tpr``.
    auroc : pandas.Series
        Per system, the calibration's AUROC.
    rank_based : pandas.Series of bool, optional
        Per system, whether its scores look rank-based (noted in the legend).
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``auroc``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import RocCurveDisplay
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> disp = RocCurveDisplay.from_calibration(cal).plot()
    >>> list(disp.lines_)
    ['dense', 'bm25', 'rrf']
    """

    def __init__(
        self,
        curve: pd.DataFrame,
        auroc: pd.Series,
        rank_based: pd.Series | None = None,
        colors: Mapping[str, str] | None = None,
    ):
        self.curve = curve
        self.auroc = auroc
        self.rank_based = rank_based if rank_based is not None else pd.Series(False, index=auroc.index)
        self.colors = dict(colors) if colors is not None else system_colors(auroc.index)

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in self.auroc.index]

    @staticmethod
    def _frame(frame: pd.DataFrame, systems: list[str]) -> pd.DataFrame:
        pieces = []
        for s in systems:  # one vectorized pass per system
            pos, neg = class_scores(frame, s)
            p = _curve_points(pos, neg)
            with np.errstate(invalid="ignore", divide="ignore"):
                tpr = np.r_[0.0, p["tp"] / pos.size] if pos.size else np.full(p["tp"].size + 1, np.nan)
                fpr = np.r_[0.0, p["fp"] / neg.size] if neg.size else np.full(p["fp"].size + 1, np.nan)
            pieces.append(
                pd.DataFrame({"system": s, "threshold": np.r_[np.inf, p["threshold"]], "fpr": fpr, "tpr": tpr})
            )
        out = pd.concat(pieces, ignore_index=True)
        out["system"] = out["system"].astype(ID)
        return out

    @classmethod
    def from_calibration(cls, calibration, system=None):
        """The ROC curves of a calibration's systems.

        Parameters
        ----------
        calibration : Calibration
            A :func:`~retrieval_eval.calibrate` result.
        system : str or list of str, optional
            One system, several, or None (every calibrated system).

        Returns
        -------
        RocCurveDisplay
        """
        systems = select_systems(calibration.summary.index, system)
        curve = cls._frame(class_frame(calibration, systems), systems)
        return cls(
            curve,
            calibration.summary.loc[systems, "auroc"].astype(np.float64),
            calibration.summary.loc[systems, "rank_based"].astype(bool),
            system_colors(calibration.summary.index),
        )

    @classmethod
    def from_predictions(cls, y_true, y_score, *, name: str = "system"):
        """The ROC curve of bare (label, top-1 score) pairs.

        Parameters
        ----------
        y_true : array-like of bool
            True for an in-distribution (positive) query, False for an ``expect_none`` one.
        y_score : array-like of float
            Each query's top-1 score (finite).
        name : str, default "system"

        Returns
        -------
        RocCurveDisplay
        """
        return cls.from_calibration(calibration_from_predictions(y_true, y_score, name=name))

    def plot(self, ax=None, *, chance: bool = True, **line_kwargs):
        """Draw every system's curve on one axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure.
        chance : bool, default True
            Draw the diagonal (AUROC 0.5).
        **line_kwargs
            Passed to ``Axes.plot`` for every curve.

        Returns
        -------
        RocCurveDisplay
            self, with ``ax_``, ``figure_``, ``lines_`` ({system: Line2D}), ``line_`` (the
            first) and ``legend_``.
        """
        (a,), fig = get_axes(ax, 1, size=(5.2, 5.0))
        self.lines_ = {}
        for i, s in enumerate(self.systems):
            sub = self.curve[self.curve["system"] == s]
            note = " (rank-based)" if bool(self.rank_based.get(s, False)) else ""
            kw = {"color": system_color(self.colors, s, i), "linewidth": 2, "drawstyle": "default", **line_kwargs}
            (line,) = a.plot(sub["fpr"], sub["tpr"], label=f"{s}: AUROC {fmt_score(self.auroc[s])}{note}", **kw)
            self.lines_[s] = line
        if chance:
            self.chance_line_ = a.plot(
                [0, 1], [0, 1], linestyle=":", color=foreground(), alpha=0.6, linewidth=1, label="chance (AUROC 0.5)"
            )[0]
        a.set_xlim(-0.01, 1.01)
        a.set_ylim(-0.01, 1.01)
        a.set_aspect("equal")
        a.set_xlabel("false positive rate (share of negatives kept)")
        a.set_ylabel("true positive rate (share of positives kept)")
        a.set_title("ROC of the top-1 score\n(positive class: in-distribution queries)")
        self.legend_ = legend_below(a, ncols=1)
        self.line_ = next(iter(self.lines_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


class PrecisionRecallDisplay:
    """Precision-recall curve of the top-1 score, several systems on one axes.

    ``positive="in"`` (default): positives are the class, high scores predict it (AUPR-in).
    ``positive="out"``: negatives are the class and low scores predict it (AUPR-out).
    ``curve``: tidy ``system, threshold, precision, recall`` from (recall 0, precision 1), the
    step curve whose area is the average precision. ``aupr``: the calibration's figure.
    ``prevalence``: the class's share, the precision of a random ranking.

    Parameters
    ----------
    curve : pandas.DataFrame
        ``system, threshold, precision, recall``.
    aupr : pandas.Series
        Per system, the calibration's AUPR-in or AUPR-out.
    prevalence : pandas.Series
        Per system, the class's share of the queries.
    positive : {"in", "out"}, default "in"
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``aupr``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import PrecisionRecallDisplay
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> disp = PrecisionRecallDisplay.from_calibration(cal, positive="out").plot()
    >>> disp.curve.columns.tolist()
    ['system', 'threshold', 'precision', 'recall']
    """

    def __init__(
        self,
        curve: pd.DataFrame,
        aupr: pd.Series,
        prevalence: pd.Series,
        positive: str = "in",
        colors: Mapping[str, str] | None = None,
    ):
        self.curve = curve
        self.aupr = aupr
        self.prevalence = prevalence
        self.positive = positive
        self.colors = dict(colors) if colors is not None else system_colors(aupr.index)

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in self.aupr.index]

    @classmethod
    def from_calibration(cls, calibration, system=None, positive: str = "in"):
        """The precision-recall curves of a calibration's systems.

        Parameters
        ----------
        calibration : Calibration
            A :func:`~retrieval_eval.calibrate` result.
        system : str or list of str, optional
            One system, several, or None (every calibrated system).
        positive : {"in", "out"}, default "in"
            Find the positives (AUPR-in) or the negatives (AUPR-out).

        Returns
        -------
        PrecisionRecallDisplay
        """
        if positive not in ("in", "out"):
            raise ValueError(f"positive must be 'in' or 'out', got {positive!r}")
        systems = select_systems(calibration.summary.index, system)
        frame = class_frame(calibration, systems)
        pieces, prev = [], {}
        for s in systems:  # one vectorized pass per system
            pos, neg = class_scores(frame, s)
            if positive == "out":
                pos, neg = -neg, -pos
            p = _curve_points(pos, neg)
            with np.errstate(invalid="ignore", divide="ignore"):
                precision = p["tp"] / (p["tp"] + p["fp"])
                recall = p["tp"] / pos.size if pos.size else np.full(p["tp"].size, np.nan)
            threshold = -p["threshold"] if positive == "out" else p["threshold"]
            pieces.append(
                pd.DataFrame(
                    {
                        "system": s,
                        "threshold": np.r_[np.inf if positive == "in" else -np.inf, threshold],
                        "precision": np.r_[1.0, precision],
                        "recall": np.r_[0.0, recall],
                    }
                )
            )
            total = pos.size + neg.size
            prev[s] = pos.size / total if total else math.nan
        curve = pd.concat(pieces, ignore_index=True)
        curve["system"] = curve["system"].astype(ID)
        column = "aupr_in" if positive == "in" else "aupr_out"
        return cls(
            curve,
            calibration.summary.loc[systems, column].astype(np.float64),
            pd.Series(prev, dtype=np.float64),
            positive,
            system_colors(calibration.summary.index),
        )

    @classmethod
    def from_predictions(cls, y_true, y_score, *, name: str = "system", positive: str = "in"):
        """The precision-recall curve of bare (label, top-1 score) pairs.

        Parameters
        ----------
        y_true : array-like of bool
            True for an in-distribution (positive) query, False for an ``expect_none`` one.
        y_score : array-like of float
            Each query's top-1 score (finite).
        name : str, default "system"
        positive : {"in", "out"}, default "in"

        Returns
        -------
        PrecisionRecallDisplay
        """
        return cls.from_calibration(calibration_from_predictions(y_true, y_score, name=name), positive=positive)

    def plot(self, ax=None, *, chance: bool = True, **line_kwargs):
        """Draw every system's step curve on one axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            By default a new figure.
        chance : bool, default True
            Draw each class's share (the precision of a random score) as a dotted line.
        **line_kwargs
            Passed to ``Axes.plot`` for every curve.

        Returns
        -------
        PrecisionRecallDisplay
            self, with ``ax_``, ``figure_``, ``lines_`` ({system: Line2D}), ``chance_lines_``,
            ``line_`` (the first) and ``legend_``.
        """
        (a,), fig = get_axes(ax, 1, size=(5.2, 5.0))
        self.lines_, self.chance_lines_ = {}, {}
        name = "AUPR-in" if self.positive == "in" else "AUPR-out"
        for i, s in enumerate(self.systems):
            sub = self.curve[self.curve["system"] == s]
            color = system_color(self.colors, s, i)
            kw = {"color": color, "linewidth": 2, "drawstyle": "steps-post", **line_kwargs}
            (line,) = a.plot(sub["recall"], sub["precision"], label=f"{s}: {name} {fmt_score(self.aupr[s])}", **kw)
            self.lines_[s] = line
            if chance and np.isfinite(self.prevalence[s]):
                self.chance_lines_[s] = a.axhline(
                    self.prevalence[s], color=color, linestyle=":", linewidth=1, alpha=0.8
                )
        if chance and self.chance_lines_:
            from matplotlib.lines import Line2D

            handles = list(self.lines_.values()) + [
                Line2D([], [], color=foreground(), linestyle=":", linewidth=1, label="chance (the class's share)")
            ]
        else:
            handles = list(self.lines_.values())
        a.set_xlim(-0.01, 1.01)
        a.set_ylim(0, 1.03)
        a.set_aspect("equal")
        cls_name = "positives" if self.positive == "in" else "negatives"
        what = (
            "in-distribution queries (positives)"
            if self.positive == "in"
            else "out-of-distribution queries (negatives)"
        )
        a.set_xlabel(f"recall (share of {cls_name} found)")
        a.set_ylabel(f"precision (share of {cls_name} among kept)")
        a.set_title(f"precision-recall of the top-1 score\nfinding {what}")
        self.legend_ = legend_below(a, handles, ncols=1)
        self.line_ = next(iter(self.lines_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
