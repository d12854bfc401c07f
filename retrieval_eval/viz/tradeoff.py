"""The cutoff trade-off: negative satisfaction and positive retention against the cutoff.

:func:`tradeoff_values` is the one step function both this Display and the cutoff explorer
(:mod:`retrieval_eval.viz.widgets`) read the two shares from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..model import ID
from .calibration import RANK_BASED_NOTE
from .draw import (
    fmt_score,
    foreground,
    get_axes,
    legend_below,
    one_or_array,
    positive_color,
    quantile_text,
    rc_param,
    score_axis_label,
    select_systems,
    system_color,
)
from .shift import draw_stratum_cutoffs, stratum_cutoff_rows
from .style import HIGHLIGHT_COLOR, NEGATIVE_COLOR, system_colors
from .top1 import calibration_from_predictions, class_frame, class_scores, score_label_of, with_method

__all__ = ["CutoffTradeoffDisplay", "tradeoff_values"]


def tradeoff_values(pos: np.ndarray, neg: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of negatives with top1 < c and of positives with top1 >= c, for every c in grid.

    Two ``searchsorted`` calls on the sorted classes: ``#{neg < c}`` is the left insertion
    point of c, ``#{pos >= c}`` is n minus it.

    Parameters
    ----------
    pos, neg : numpy.ndarray
        The positives' and the negatives' top-1 scores.
    grid : numpy.ndarray
        The cutoffs.

    Returns
    -------
    negative_satisfaction, positive_retention : numpy.ndarray
        One share per cutoff (NaN for a class with no score).

    Examples
    --------
    >>> import numpy as np
    >>> from retrieval_eval.viz import tradeoff_values
    >>> ns, pr = tradeoff_values(np.array([0.9, 0.8, 0.7, 0.6]), np.array([0.2, 0.6, 0.1]),
    ...                          np.array([0.5, 0.65]))
    >>> ns.round(3).tolist(), pr.tolist()
    ([0.667, 1.0], [1.0, 0.75])
    """
    neg_s, pos_s = np.sort(neg), np.sort(pos)
    with np.errstate(invalid="ignore", divide="ignore"):
        ns = np.searchsorted(neg_s, grid, side="left") / neg_s.size if neg_s.size else np.full(grid.size, np.nan)
        pr = (
            (pos_s.size - np.searchsorted(pos_s, grid, side="left")) / pos_s.size
            if pos_s.size
            else np.full(grid.size, np.nan)
        )
    return ns, pr


_CHOSEN = ["cutoff", "quantile", "negative_satisfaction", "positive_retention", "rank_based"]


class CutoffTradeoffDisplay:
    """Negative satisfaction and positive retention against the cutoff, one axes per system.

    Raising the cutoff rejects more out-of-distribution queries and drops more covered ones;
    this draws both shares over a grid of cutoffs with the chosen one marked. ``curve``: tidy
    ``system, cutoff, negative_satisfaction, positive_retention`` (plus ``recall@k`` and the
    other :func:`~retrieval_eval.cutoff_sweep` columns when built ``from_sweep``).
    ``chosen``: per system, the calibration's ``cutoff``, ``quantile`` and shares at it.

    Both shares are step functions of the cutoff that jump only at observed scores; the grid
    holds every observed top-1 score, so drawing steps between grid points is exact.

    Parameters
    ----------
    curve : pandas.DataFrame
        ``system, cutoff, negative_satisfaction, positive_retention`` (and ``recall@k``).
    chosen : pandas.DataFrame
        Per system (index): ``cutoff``, ``quantile``, ``negative_satisfaction``,
        ``positive_retention``, ``rank_based``.
    score_label : str or mapping, optional
        The score's kind for the axis label.
    colors : mapping, optional
        ``{system: colour}``; by default each system's slot by its order in ``curve``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import CutoffTradeoffDisplay
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> disp = CutoffTradeoffDisplay.from_calibration(cal, system="dense").plot()
    >>> list(disp.cutoff_lines_)
    ['dense']
    """

    #: Per-stratum cutoffs (set by :meth:`from_calibration`; None or absent without them).
    stratum_cutoffs: Any
    #: The rank-based notes drawn by :meth:`plot`, per system.
    notes_: dict[str, Any]

    def __init__(
        self,
        curve: pd.DataFrame,
        chosen: pd.DataFrame,
        score_label: str | None = None,
        colors: Mapping[str, str] | None = None,
    ):
        self.curve = curve
        self.chosen = chosen
        self.score_label = score_label
        self.colors = dict(colors) if colors is not None else system_colors(pd.unique(curve["system"]))

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in pd.unique(self.curve["system"])]

    @classmethod
    def from_calibration(
        cls, calibration, system=None, cutoffs=None, grid_size: int = 200, score_label: str | None = None
    ):
        """Curves from the calibration's top-1 scores.

        Parameters
        ----------
        calibration : Calibration
            A :func:`~retrieval_eval.calibrate` result; made with ``by="stratum"``, each
            stratum's cutoff is marked along the top (``stratum_cutoffs``).
        system : str or list of str, optional
            One system, several, or None (every calibrated system).
        cutoffs : sequence of float or mapping, optional
            The grid to evaluate (numbers, or ``{system: numbers}``); by default every
            observed top-1 score plus ``grid_size`` evenly spaced points over their range (5%
            padding each side).
        grid_size : int, default 200
        score_label : str or mapping, optional
            The score's kind on the axis; by default what the calibration says.

        Returns
        -------
        CutoffTradeoffDisplay
        """
        systems = select_systems(calibration.summary.index, system)
        frame = class_frame(calibration, systems)
        pieces = []
        for s in systems:  # one vectorized pass per system
            pos, neg = class_scores(frame, s)
            if cutoffs is None:
                observed = np.unique(np.r_[pos, neg])
                if observed.size:
                    lo, hi = float(observed[0]), float(observed[-1])
                    pad = 0.05 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1.0)
                    grid = np.unique(np.r_[np.linspace(lo - pad, hi + pad, grid_size), observed])
                else:
                    grid = np.zeros(0)
            else:
                values = cutoffs.get(s, []) if isinstance(cutoffs, Mapping) else cutoffs
                grid = np.unique(np.asarray(list(values), dtype=np.float64))
            ns, pr = tradeoff_values(pos, neg, grid)
            pieces.append(
                pd.DataFrame({"system": s, "cutoff": grid, "negative_satisfaction": ns, "positive_retention": pr})
            )
        curve = pd.concat(pieces, ignore_index=True)
        curve["system"] = curve["system"].astype(ID)
        chosen = calibration.summary.loc[systems, with_method(calibration.summary, _CHOSEN)].copy()
        out = cls(curve, chosen, score_label_of(calibration, score_label), system_colors(calibration.summary.index))
        # by="stratum": one cutoff per stratum
        out.stratum_cutoffs = stratum_cutoff_rows(calibration, systems)
        return out

    @classmethod
    def from_sweep(cls, sweep: pd.DataFrame, calibration=None, system=None, score_label: str | None = None):
        """Curves from a cutoff sweep, which adds ``recall@k`` after the cutoff.

        Parameters
        ----------
        sweep : pandas.DataFrame
            :func:`~retrieval_eval.cutoff_sweep`'s frame (recall computed by the engine).
        calibration : Calibration, optional
            Where the chosen cutoff comes from; without it none is marked.
        system : str or list of str, optional
            One system, several, or None (every system of the sweep).
        score_label : str or mapping, optional

        Returns
        -------
        CutoffTradeoffDisplay
        """
        systems = select_systems(pd.unique(sweep["system"]), system)
        curve = (
            sweep[sweep["system"].isin(pd.Index(systems, dtype=ID))]
            .sort_values(["cutoff"], kind="stable")
            .reset_index(drop=True)
        )
        curve = pd.concat([curve[curve["system"] == s] for s in systems], ignore_index=True)
        colors = system_colors(pd.unique(sweep["system"]))
        if calibration is not None:
            chosen = calibration.summary.loc[systems, with_method(calibration.summary, _CHOSEN)].copy()
            score_label = score_label_of(calibration, score_label)
            colors = system_colors(calibration.summary.index)
        else:
            chosen = pd.DataFrame(
                {
                    "cutoff": np.nan,
                    "quantile": np.nan,
                    "negative_satisfaction": np.nan,
                    "positive_retention": np.nan,
                    "rank_based": False,
                },
                index=pd.Index(systems, dtype=ID, name="system"),
            )
        return cls(curve, chosen, score_label, colors)

    @classmethod
    def from_predictions(
        cls,
        y_true,
        y_score,
        *,
        cutoff=None,
        quantile: float = 0.10,
        name: str = "system",
        cutoffs=None,
        score_label: str | None = None,
    ):
        """Curves from bare (label, top-1 score) pairs, calibrated like a run.

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
        cutoffs : sequence of float, optional
            The grid (see :meth:`from_calibration`).
        score_label : str, optional

        Returns
        -------
        CutoffTradeoffDisplay
        """
        cal = calibration_from_predictions(y_true, y_score, cutoff, quantile, name)
        return cls.from_calibration(cal, cutoffs=cutoffs, score_label=score_label)

    def plot(self, ax=None, *, legend: bool = True):
        """Draw the curves per system, the chosen cutoff marked.

        Parameters
        ----------
        ax : matplotlib Axes or array of Axes, optional
            One Axes per system; by default a new figure with a row of them.
        legend : bool, default True

        Returns
        -------
        CutoffTradeoffDisplay
            self, with ``ax_``, ``axes_``, ``figure_``, ``lines_`` ({system: {column:
            Line2D}}), ``cutoff_lines_`` and ``notes_`` ({system: artist}).
        """
        axes, fig = get_axes(ax, len(self.systems))
        fg = foreground()
        self.lines_, self.cutoff_lines_, self.notes_ = {}, {}, {}
        recall_cols = [c for c in self.curve.columns if c.startswith("recall@")]
        series = [
            ("negative_satisfaction", "negative satisfaction (negatives < c)", NEGATIVE_COLOR, "-"),
            ("positive_retention", "positive retention (positives \u2265 c)", positive_color(), "-"),
        ]
        for i, (a, s) in enumerate(zip(axes, self.systems)):
            lines = self._draw_curves(a, s, i, series, recall_cols)
            self.lines_[s] = lines
            handles = list(lines.values())
            line = self._mark_cutoff(a, s, fg)
            if line is not None:
                self.cutoff_lines_[s] = line
                handles.append(line)
            if getattr(self, "stratum_cutoffs", None) is not None:
                handles += draw_stratum_cutoffs(a, self.stratum_cutoffs, s)
            self._rank_based_note(a, s, fg)
            a.set_yticks(np.linspace(0, 1, 6))
            a.set_xlabel(score_axis_label(self.score_label, "cutoff c on the top-1 score", s))
            a.set_ylabel("share of queries" + "".join(f"; {c}" for c in recall_cols))
            a.set_title(f"{s}: what a cutoff keeps and rejects", color=system_color(self.colors, s, i))
            a.grid(True, alpha=0.25)
            if legend:
                legend_below(a, handles, ncols=1)
        self.axes_ = axes
        self.ax_ = one_or_array(axes)
        self.figure_ = fig
        return self

    def _draw_curves(self, a, s: str, i: int, series: list, recall_cols: list[str]) -> dict:
        """One system's step curves: negative satisfaction, positive retention and each recall
        after the cutoff (the system's own measure: drawn in its colour, dashed)."""
        sub = self.curve[self.curve["system"] == s]
        lines = {}
        recall = [(c, f"{c} after the cutoff", system_color(self.colors, s, i), "--") for c in recall_cols]
        for col, label, color, style in series + recall:
            (lines[col],) = a.plot(
                sub["cutoff"], sub[col], drawstyle="steps-pre", color=color, linestyle=style, linewidth=2, label=label
            )
        return lines

    def _mark_cutoff(self, a, s: str, fg):
        """The chosen cutoff as a dotted line (its legend says what it keeps) and its two
        curves' values as dots; None when the system has no finite cutoff."""
        if not (s in self.chosen.index and np.isfinite(self.chosen.loc[s, "cutoff"])):  # type: ignore[arg-type]
            return None
        ch = self.chosen.loc[s]
        c = float(ch["cutoff"])
        line = a.axvline(
            c,
            color=fg,
            linestyle=":",
            linewidth=1.5,
            label=(
                f"cutoff {fmt_score(c)} "
                f"({quantile_text(ch['quantile'], ch.get('method'))}):\n"
                f"{ch['negative_satisfaction']:.0%} negatives below, "
                f"{ch['positive_retention']:.0%} positives kept"
            ),
        )
        a.plot(
            [c, c],
            [ch["negative_satisfaction"], ch["positive_retention"]],
            linestyle="none",
            marker="o",
            color=fg,
            markersize=5,
        )
        return line

    def _rank_based_note(self, a, s: str, fg) -> None:
        """The y range; for a rank-based system, room at the top for the note that says so."""
        if not (s in self.chosen.index and bool(self.chosen.loc[s].get("rank_based", False))):
            a.set_ylim(-0.02, 1.02)
            return
        a.set_ylim(-0.02, 1.25)
        self.notes_[s] = a.text(
            0.5,
            0.97,
            RANK_BASED_NOTE,
            transform=a.transAxes,
            ha="center",
            va="top",
            fontsize="small",
            color=fg,
            bbox=dict(
                boxstyle="round,pad=0.3", facecolor=rc_param("axes.facecolor"), edgecolor=HIGHLIGHT_COLOR, linewidth=1.2
            ),
        )
