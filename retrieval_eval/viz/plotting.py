"""Plots for every result: compute once, draw many times (scikit-learn's Display pattern).

Each helper is a ``XxxDisplay`` class that holds precomputed values (tidy frames you can read
and test without drawing anything), built by a classmethod (``from_calibration``,
``from_evaluation``, ``from_drift``, ``from_predictions``, ...). ``.plot(ax=None, **kwargs)``
draws on the given Axes (or a new figure), keeps its artists (``ax_``, ``figure_``, ``line_``,
``bars_``, ...) and returns the display, so a notebook can keep restyling it. Nothing here calls
``plt.show()``; matplotlib is imported inside ``plot`` only, so importing the package never
loads a GUI stack.

Colours and the rules for thin data come from :mod:`retrieval_eval._style`: a system keeps
one colour in every plot (by its order of first appearance in the evaluation or calibration,
whatever subset a plot draws), positives and negatives have two colours no system takes,
intervals on [0, 1] metrics are clipped to [0, 1], thin strata and small score samples are
marked on the plot. Text, reference lines and edges take their colour from ``rcParams``
(``text.color``, ``axes.edgecolor``), so ``plt.style.context("dark_background")`` works
unchanged. Legends sit below their axes so they never cover data.

Nothing here computes a number the report carries: AUROC, AUPR, cutoffs, shares at the chosen
cutoff come from :mod:`retrieval_eval.calibration`; metric means from
:mod:`retrieval_eval.evaluation`. What is computed here is only what a picture needs on top
(curve points, a step function over a grid of cutoffs, a t interval's half-width).

Shortcuts for result objects' ``.plot()``: :func:`plot_calibration`, :func:`plot_evaluation`,
:func:`plot_drift`, :func:`plot_comparison`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .style import (
    DARK_POSITIVE_COLOR,
    DARK_SYSTEM_COLORS,
    FEW_SAMPLES,
    NEGATIVE_COLOR,
    POSITIVE_COLOR,
    SYSTEM_COLORS,
    THIN_STRATUM,
    clip_interval,
    color_of,
    system_colors,
)

__all__ = [
    "PALETTE",
    "CutoffTradeoffDisplay",
    "DriftDisplay",
    "MetricAtKDisplay",
    "PerQueryDeltaDisplay",
    "PrecisionRecallDisplay",
    "RocCurveDisplay",
    "ScoreDistributionDisplay",
    "StratumDisplay",
    "plot_calibration",
    "plot_comparison",
    "plot_drift",
    "plot_evaluation",
]

from ..model import ID

#: System colours by order of first appearance (see :mod:`retrieval_eval._style`).
PALETTE = SYSTEM_COLORS
#: The same slots for dark backgrounds.
DARK_PALETTE = DARK_SYSTEM_COLORS
# POSITIVE_COLOR (in-distribution, covered queries) and NEGATIVE_COLOR (expect_none queries)
# are reserved: no system takes them.
WIN_COLOR = "#009E73"
LOSS_COLOR = "#D55E00"
HIGHLIGHT_COLOR = "#D55E00"
DRIFT_COLORS = {
    "VALID": "#009E73",
    "RE_ANCHORABLE": "#56B4E9",
    "MERGED": "#0072B2",
    "SPLIT": "#E69F00",
    "ORPHANED": "#D55E00",
}
RANK_BASED_NOTE = "scores look rank-based: no absolute relevance"


# --------------------------------------------------------------------------------------------
# Shared drawing helpers (matplotlib imported lazily inside each).


def _rc(name: str) -> Any:
    import matplotlib as mpl

    return mpl.rcParams[name]


def _fg() -> Any:
    """The theme's foreground colour (text), for reference lines and annotations."""
    return _rc("text.color")


def _is_dark() -> bool:
    """Whether the current style draws on a dark background (axes face luminance < 0.5)."""
    from matplotlib.colors import to_rgba

    face = _rc("axes.facecolor")
    try:
        r, g, b, alpha = to_rgba(face)
    except ValueError:
        return False
    if alpha == 0:
        r, g, b, _ = to_rgba(_rc("figure.facecolor"))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5


def _palette() -> tuple[str, ...]:
    """Okabe-Ito, with the dark blue moved back and the sky blue forward on a dark background."""
    return DARK_PALETTE if _is_dark() else PALETTE


def _positive_color() -> str:
    return DARK_POSITIVE_COLOR if _is_dark() else POSITIVE_COLOR


def _color(colors: Mapping[str, str] | None, system: str, index: int) -> str:
    """The system's fixed colour (its slot in ``colors``), for the current background."""
    if colors is not None and _is_dark():
        order = list(colors)
        colors = system_colors(order, dark=True)
    return color_of(colors, system, index, dark=_is_dark())


def _note(ax, text: str, y: float = 0.97):
    """A boxed note at the top of the axes (rank-based scores, few samples)."""
    return ax.text(0.5, y, text, transform=ax.transAxes, ha="center", va="top",
                   fontsize="small", color=_fg(), wrap=False,
                   bbox=dict(boxstyle="round,pad=0.3", facecolor=_rc("axes.facecolor"),
                             edgecolor=HIGHLIGHT_COLOR, linewidth=1.2))


def _axes(ax, n: int = 1, size: tuple[float, float] = (5.2, 3.8)):
    """``n`` Axes: the given one(s), or a new row of subplots with constrained layout."""
    if ax is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, n, figsize=(size[0] * n, size[1]), layout="constrained",
                                 squeeze=False)
        return list(axes[0]), fig
    axes = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n:
        raise ValueError(f"ax holds {len(axes)} Axes but this plot needs {n} (one per system)")
    return axes, axes[0].figure


def _one_or_array(axes: list):
    return axes[0] if len(axes) == 1 else np.asarray(axes, dtype=object)


def _points(size) -> float:
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=size).get_size_in_points())


def _legend_below(ax, handles=None, labels=None, ncols: int = 2, title: str | None = None,
                  extra_points: float = 0.0, ticklabels: bool = True, **kwargs):
    """A legend under the axes (below the x label), so it never hides data.

    Placed at a fixed offset in points from the axes' bottom edge (tick labels plus the x
    label), so it stays put when constrained layout resizes the axes.
    """
    from matplotlib.transforms import offset_copy

    drop = (_rc("xtick.major.size") + _rc("xtick.major.pad") + _points(_rc("xtick.labelsize"))
            + _rc("axes.labelpad") + _points(_rc("axes.labelsize")) * 1.25 + 2 + extra_points)
    if not ticklabels:
        drop -= _rc("xtick.major.size") + _rc("xtick.major.pad") + _points(_rc("xtick.labelsize"))
    if not ax.get_xlabel():
        drop -= _rc("axes.labelpad") + _points(_rc("axes.labelsize")) * 1.25
    transform = offset_copy(ax.transAxes, fig=ax.figure, x=0, y=-drop, units="points")
    args = () if handles is None else (handles, labels if labels is not None
                                       else [h.get_label() for h in handles])
    return ax.legend(*args, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                     bbox_transform=transform, ncols=ncols, frameon=False, title=title,
                     fontsize="small", title_fontsize="small", **kwargs)


def _fmt(x) -> str:
    """A score for a label: 3 decimals for cosine-like values, 3 significant digits when tiny."""
    if x is None or not np.isfinite(x):
        return "n/a"
    a = abs(float(x))
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:.1f}"
    if a >= 0.1:
        return f"{x:.3f}"
    return f"{x:.3g}"


def _score_axis_label(score_label, prefix: str = "top-1 score", system: str | None = None) -> str:
    """``"top-1 score (cosine)"`` when the score's kind is known, else ``"top-1 score"``.

    ``score_label`` is one kind for every system or a mapping ``{system: kind}`` (a hybrid
    run mixes cosines, BM25 and RRF, and only some are cosines)."""
    if isinstance(score_label, Mapping):
        score_label = score_label.get(system)
    return f"{prefix} ({score_label})" if score_label else prefix


def _quantile_text(quantile, method=None) -> str:
    if isinstance(method, str) and method == "conformal":  # calibrate(..., guarantee=...)
        return "split conformal"
    if quantile is None or not np.isfinite(quantile):
        return "fixed"
    return f"p{float(quantile) * 100:g} of positives"


def _select_systems(available: Sequence[str], system) -> list[str]:
    available = [str(s) for s in available]
    if system is None:
        return available
    wanted = [system] if isinstance(system, str) else [str(s) for s in system]
    unknown = [s for s in wanted if s not in available]
    if unknown:
        raise ValueError(f"no system {', '.join(map(repr, unknown))}; "
                         f"available: {', '.join(available)}")
    return wanted


def _score_label_of(cal, score_label):
    """The score's kind for axis labels: the argument, else what the calibration says."""
    if score_label is not None:
        return score_label if isinstance(score_label, Mapping) else (score_label or None)
    for source in (getattr(cal, "score_kind", None), getattr(cal, "settings", {}).get("score_kind")
                   if isinstance(getattr(cal, "settings", None), Mapping) else None):
        if isinstance(source, str):
            return source
    return None


def _classes(cal, systems: list[str]) -> pd.DataFrame:
    """Positives and negatives with a top-1 score, for the given systems, in calibration order."""
    t = cal.top1
    keep = t["system"].isin(pd.Index(systems, dtype=ID)) & t["kind"].isin(["positive", "negative"])
    score = t["top1_score"].to_numpy(np.float64)
    keep = keep.to_numpy() & np.isfinite(score)
    cols = [c for c in ("system", "query_id", "kind", "stratum", "query", "top1_score")
            if c in t.columns]
    out = t.loc[keep, cols].reset_index(drop=True)
    return out


def _class_scores(frame: pd.DataFrame, system: str) -> tuple[np.ndarray, np.ndarray]:
    sub = frame[frame["system"] == system]
    score = sub["top1_score"].to_numpy(np.float64)
    kind = sub["kind"].to_numpy(dtype=object)
    return score[kind == "positive"], score[kind == "negative"]


def _calibration_from_predictions(y_true, y_score, cutoff=None, quantile: float = 0.10,
                                  name: str = "system"):
    """A :class:`~retrieval_eval.calibration.Calibration` of bare (label, top-1 score) pairs.

    ``y_true`` is True for an in-distribution (positive) query, False for an ``expect_none``
    one. Each pair becomes a one-hit ranking, so every figure (cutoff, AUROC, AUPR, the
    rank-based check) comes from the same code as for a real run.
    """
    from ..analysis.calibration import calibrate

    y = np.asarray(y_true, dtype=bool).ravel()
    s = np.asarray(y_score, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"y_true has {y.size} values but y_score has {s.size}")
    if not np.all(np.isfinite(s)):
        raise ValueError("y_score must be finite numbers")
    n = y.size
    qids = np.char.add("q", np.arange(n).astype(str)).astype(object)
    docs = np.char.add("d", np.arange(n).astype(str)).astype(object)
    run = pd.DataFrame({
        "system": pd.array([name] * n, dtype=ID),
        "query_id": pd.array(qids, dtype=ID),
        "rank": np.ones(n, dtype=np.int64),
        "doc_id": pd.array(docs, dtype=ID),
        "score": s,
    })
    judgments = pd.DataFrame({
        "query_id": pd.array(qids[y], dtype=ID),
        "doc_uri": pd.array(docs[y], dtype=ID),
        "chunk_id": pd.array([pd.NA] * int(y.sum()), dtype=ID),
        "relevance": np.ones(int(y.sum()), dtype=np.int64),
        "stratum": pd.array([pd.NA] * int(y.sum()), dtype=ID),
        "query": pd.array([pd.NA] * int(y.sum()), dtype=ID),
        "line": np.zeros(int(y.sum()), dtype=np.int64),
    })
    return calibrate(judgments, run, negatives=list(qids[~y]), quantile=quantile,
                     cutoff=cutoff, n_resamples=1)


# --------------------------------------------------------------------------------------------
# Calibration: score distributions.


def few_samples_note(n_positive: int, n_negative: int) -> str | None:
    """The on-plot caveat when a class has fewer than ``FEW_SAMPLES`` scores, else None.

    With 4 positives and 2 negatives an AUROC of 0.875 is one swapped pair away from 0.75: the
    plot says how few scores its figures rest on rather than let them read as settled.
    """
    if n_positive >= FEW_SAMPLES and n_negative >= FEW_SAMPLES:
        return None
    return (f"few samples: {n_positive} positives, {n_negative} negatives\n"
            f"(< {FEW_SAMPLES} in a class): AUROC and cutoff are rough")


class ScoreDistributionDisplay:
    """Positive vs negative top-1 score distributions, one axes per system.

    ``scores``: one row per (system, query) of the positives and negatives with a top-1
    score (``system``, ``query_id``, ``kind``, ``top1_score``, ...). ``stats``: indexed by
    system, with ``cutoff``, ``quantile`` (NaN for a fixed cutoff), ``separation_margin``,
    ``auroc``, ``rank_based``, ``n_positive``, ``n_negative`` (the calibration's summary).

    Each class is drawn as a share of its own queries, so 12 negatives and 400 positives are
    comparable on one axis. Rank-based systems get a note in the axes: their separation is
    not evidence of anything (their scores are 1/(k + rank), the same for any query).
    """

    def __init__(self, scores: pd.DataFrame, stats: pd.DataFrame, score_label: str | None = None,
                 colors: Mapping[str, str] | None = None):
        self.scores = scores
        self.stats = stats
        self.score_label = score_label
        self.colors = dict(colors) if colors is not None else system_colors(stats.index)

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in self.stats.index]

    @classmethod
    def from_calibration(cls, calibration, system=None, score_label: str | None = None):
        """From a :class:`~retrieval_eval.calibration.Calibration`; ``system``: one name, a list,
        or None (every calibrated system). ``score_label`` (e.g. ``"cosine"``, or
        ``{"dense": "cosine"}``) names the score's kind on the axis."""
        systems = _select_systems(calibration.summary.index, system)
        cols = ["cutoff", "quantile", "separation_margin", "auroc", "rank_based", "n_positive",
                "n_negative"]
        stats = calibration.summary.loc[systems, _with_method(calibration.summary, cols)].copy()
        return cls(_classes(calibration, systems), stats, _score_label_of(calibration, score_label),
                   system_colors(calibration.summary.index))

    @classmethod
    def from_predictions(cls, y_true, y_score, *, cutoff=None, quantile: float = 0.10,
                         name: str = "system", score_label: str | None = None):
        """From labels (True = in-distribution) and top-1 scores; calibrated like a run."""
        cal = _calibration_from_predictions(y_true, y_score, cutoff, quantile, name)
        return cls.from_calibration(cal, score_label=score_label)

    def legend_title(self, system: str) -> str:
        """The legend's title for a system: its AUROC and separation margin."""
        st = self.stats.loc[system]
        return f"AUROC {_fmt(st['auroc'])}, separation margin {_fmt(st['separation_margin'])}"

    def plot(self, ax=None, *, bins="auto", min_bins: int = 12, max_bins: int = 40,
             alpha: float | None = None, legend: bool = True):
        """Draw one histogram pair per system; returns self.

        Sets ``ax_`` (an Axes, or an array of them for several systems), ``axes_`` (list),
        ``figure_``, ``cutoff_lines_``, ``notes_`` (rank-based scores) and ``few_samples_``
        (fewer than ``FEW_SAMPLES`` positives or negatives), each ``{system: artist}``.
        """
        from matplotlib.patches import Patch

        axes, fig = _axes(ax, len(self.systems))
        fg = _fg()
        if alpha is None:
            alpha = 0.5 if _is_dark() else 0.35
        self.cutoff_lines_, self.notes_, self.legends_, self.handles_ = {}, {}, {}, {}
        self.few_samples_ = {}
        for i, (a, s) in enumerate(zip(axes, self.systems)):
            pos, neg = _class_scores(self.scores, s)
            st = self.stats.loc[s]
            both = np.r_[pos, neg]
            edges = (np.histogram_bin_edges(both, bins=bins) if both.size
                     else np.linspace(0.0, 1.0, 11))
            if isinstance(bins, str) and not min_bins <= len(edges) - 1 <= max_bins:
                edges = np.linspace(edges[0], edges[-1],
                                    min(max(len(edges) - 1, min_bins), max_bins) + 1)
            handles = []
            for values, color, label in (
                (pos, _positive_color(), f"positives (n={pos.size})"),
                (neg, NEGATIVE_COLOR, f"negatives, expect_none (n={neg.size})"),
            ):
                if values.size == 0:
                    continue
                w = np.full(values.size, 1.0 / values.size)
                a.hist(values, bins=edges, weights=w, histtype="stepfilled", color=color,
                       alpha=alpha, linewidth=0)
                a.hist(values, bins=edges, weights=w, histtype="step", color=color, linewidth=1.8)
                handles.append(Patch(facecolor=color, edgecolor=color, alpha=0.7, label=label))
            c = float(st["cutoff"])
            if np.isfinite(c):
                line = a.axvline(c, color=fg, linestyle="--", linewidth=1.5,
                                 label=f"cutoff {_fmt(c)} "
                                       f"({_quantile_text(st['quantile'], st.get('method'))})")
                self.cutoff_lines_[s] = line
                handles.append(line)
            a.set_xlabel(_score_axis_label(self.score_label, system=s))
            a.set_ylabel("share of queries (per class)")
            # The title in the system's colour: the same colour as its ROC line and bars.
            a.set_title(f"{s}: top-1 scores", color=_color(self.colors, s, i))
            a.set_ylim(bottom=0)
            few = few_samples_note(pos.size, neg.size)
            notes = int(bool(st["rank_based"])) + int(few is not None)
            if notes:
                top = a.get_ylim()[1]
                a.set_ylim(0, top * (1 + 0.3 * notes))
            if bool(st["rank_based"]):
                self.notes_[s] = _note(a, RANK_BASED_NOTE)
            if few is not None:
                self.few_samples_[s] = _note(a, few, 0.97 if notes == 1 else 0.82)
            self.handles_[s] = handles
            if legend:
                self.legends_[s] = _legend_below(a, handles, ncols=1, title=self.legend_title(s))
        self.axes_ = axes
        self.ax_ = _one_or_array(axes)
        self.figure_ = fig
        return self


# --------------------------------------------------------------------------------------------
# Calibration: ROC and precision-recall of the top-1 score.


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
    """

    def __init__(self, curve: pd.DataFrame, auroc: pd.Series, rank_based: pd.Series | None = None,
                 colors: Mapping[str, str] | None = None):
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
            pos, neg = _class_scores(frame, s)
            p = _curve_points(pos, neg)
            with np.errstate(invalid="ignore", divide="ignore"):
                tpr = np.r_[0.0, p["tp"] / pos.size] if pos.size else np.full(p["tp"].size + 1, np.nan)
                fpr = np.r_[0.0, p["fp"] / neg.size] if neg.size else np.full(p["fp"].size + 1, np.nan)
            pieces.append(pd.DataFrame({"system": s, "threshold": np.r_[np.inf, p["threshold"]],
                                        "fpr": fpr, "tpr": tpr}))
        out = pd.concat(pieces, ignore_index=True)
        out["system"] = out["system"].astype(ID)
        return out

    @classmethod
    def from_calibration(cls, calibration, system=None):
        systems = _select_systems(calibration.summary.index, system)
        curve = cls._frame(_classes(calibration, systems), systems)
        return cls(curve, calibration.summary.loc[systems, "auroc"].astype(np.float64),
                   calibration.summary.loc[systems, "rank_based"].astype(bool),
                   system_colors(calibration.summary.index))

    @classmethod
    def from_predictions(cls, y_true, y_score, *, name: str = "system"):
        """From labels (True = in-distribution) and top-1 scores."""
        return cls.from_calibration(_calibration_from_predictions(y_true, y_score, name=name))

    def plot(self, ax=None, *, chance: bool = True, **line_kwargs):
        """Draw every system's curve on one axes; returns self with ``lines_`` ({system: Line2D})."""
        (a,), fig = _axes(ax, 1, size=(5.2, 5.0))
        self.lines_ = {}
        for i, s in enumerate(self.systems):
            sub = self.curve[self.curve["system"] == s]
            note = " (rank-based)" if bool(self.rank_based.get(s, False)) else ""
            kw = {"color": _color(self.colors, s, i), "linewidth": 2,
                  "drawstyle": "default", **line_kwargs}
            (line,) = a.plot(sub["fpr"], sub["tpr"],
                             label=f"{s}: AUROC {_fmt(self.auroc[s])}{note}", **kw)
            self.lines_[s] = line
        if chance:
            self.chance_line_ = a.plot([0, 1], [0, 1], linestyle=":", color=_fg(), alpha=0.6,
                                       linewidth=1, label="chance (AUROC 0.5)")[0]
        a.set_xlim(-0.01, 1.01)
        a.set_ylim(-0.01, 1.01)
        a.set_aspect("equal")
        a.set_xlabel("false positive rate (share of negatives kept)")
        a.set_ylabel("true positive rate (share of positives kept)")
        a.set_title("ROC of the top-1 score\n(positive class: in-distribution queries)")
        self.legend_ = _legend_below(a, ncols=1)
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
    """

    def __init__(self, curve: pd.DataFrame, aupr: pd.Series, prevalence: pd.Series,
                 positive: str = "in", colors: Mapping[str, str] | None = None):
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
        if positive not in ("in", "out"):
            raise ValueError(f"positive must be 'in' or 'out', got {positive!r}")
        systems = _select_systems(calibration.summary.index, system)
        frame = _classes(calibration, systems)
        pieces, prev = [], {}
        for s in systems:  # one vectorized pass per system
            pos, neg = _class_scores(frame, s)
            if positive == "out":
                pos, neg = -neg, -pos
            p = _curve_points(pos, neg)
            with np.errstate(invalid="ignore", divide="ignore"):
                precision = p["tp"] / (p["tp"] + p["fp"])
                recall = p["tp"] / pos.size if pos.size else np.full(p["tp"].size, np.nan)
            threshold = -p["threshold"] if positive == "out" else p["threshold"]
            pieces.append(pd.DataFrame({
                "system": s,
                "threshold": np.r_[np.inf if positive == "in" else -np.inf, threshold],
                "precision": np.r_[1.0, precision], "recall": np.r_[0.0, recall]}))
            total = pos.size + neg.size
            prev[s] = pos.size / total if total else math.nan
        curve = pd.concat(pieces, ignore_index=True)
        curve["system"] = curve["system"].astype(ID)
        column = "aupr_in" if positive == "in" else "aupr_out"
        return cls(curve, calibration.summary.loc[systems, column].astype(np.float64),
                   pd.Series(prev, dtype=np.float64), positive,
                   system_colors(calibration.summary.index))

    @classmethod
    def from_predictions(cls, y_true, y_score, *, name: str = "system", positive: str = "in"):
        """From labels (True = in-distribution) and top-1 scores."""
        return cls.from_calibration(_calibration_from_predictions(y_true, y_score, name=name),
                                    positive=positive)

    def plot(self, ax=None, *, chance: bool = True, **line_kwargs):
        """Draw every system's step curve on one axes; returns self with ``lines_``."""
        (a,), fig = _axes(ax, 1, size=(5.2, 5.0))
        self.lines_, self.chance_lines_ = {}, {}
        name = "AUPR-in" if self.positive == "in" else "AUPR-out"
        for i, s in enumerate(self.systems):
            sub = self.curve[self.curve["system"] == s]
            color = _color(self.colors, s, i)
            kw = {"color": color, "linewidth": 2, "drawstyle": "steps-post", **line_kwargs}
            (line,) = a.plot(sub["recall"], sub["precision"],
                             label=f"{s}: {name} {_fmt(self.aupr[s])}", **kw)
            self.lines_[s] = line
            if chance and np.isfinite(self.prevalence[s]):
                self.chance_lines_[s] = a.axhline(self.prevalence[s], color=color, linestyle=":",
                                                  linewidth=1, alpha=0.8)
        if chance and self.chance_lines_:
            from matplotlib.lines import Line2D

            handles = list(self.lines_.values()) + [
                Line2D([], [], color=_fg(), linestyle=":", linewidth=1,
                       label="chance (the class's share)")]
        else:
            handles = list(self.lines_.values())
        a.set_xlim(-0.01, 1.01)
        a.set_ylim(0, 1.03)
        a.set_aspect("equal")
        cls_name = "positives" if self.positive == "in" else "negatives"
        what = ("in-distribution queries (positives)" if self.positive == "in"
                else "out-of-distribution queries (negatives)")
        a.set_xlabel(f"recall (share of {cls_name} found)")
        a.set_ylabel(f"precision (share of {cls_name} among kept)")
        a.set_title(f"precision-recall of the top-1 score\nfinding {what}")
        self.legend_ = _legend_below(a, handles, ncols=1)
        self.line_ = next(iter(self.lines_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


# --------------------------------------------------------------------------------------------
# Calibration: the cutoff trade-off.


def _tradeoff_values(pos: np.ndarray, neg: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of negatives with top1 < c and of positives with top1 >= c, for every c in grid.

    Two ``searchsorted`` calls on the sorted classes: ``#{neg < c}`` is the left insertion
    point of c, ``#{pos >= c}`` is n minus it.
    """
    neg_s, pos_s = np.sort(neg), np.sort(pos)
    with np.errstate(invalid="ignore", divide="ignore"):
        ns = (np.searchsorted(neg_s, grid, side="left") / neg_s.size if neg_s.size
              else np.full(grid.size, np.nan))
        pr = ((pos_s.size - np.searchsorted(pos_s, grid, side="left")) / pos_s.size if pos_s.size
              else np.full(grid.size, np.nan))
    return ns, pr


_CHOSEN = ["cutoff", "quantile", "negative_satisfaction", "positive_retention", "rank_based"]


def _with_method(summary: pd.DataFrame, cols: list[str]) -> list[str]:
    """``cols``, plus the ``method`` column a guaranteed calibration adds."""
    return cols + ["method"] * ("method" in summary.columns)


class CutoffTradeoffDisplay:
    """Negative satisfaction and positive retention against the cutoff, one axes per system.

    Raising the cutoff rejects more out-of-distribution queries and drops more covered ones;
    this draws both shares over a grid of cutoffs with the chosen one marked. ``curve``: tidy
    ``system, cutoff, negative_satisfaction, positive_retention`` (plus ``recall@k`` and the
    other :func:`~retrieval_eval.calibration.cutoff_sweep` columns when built ``from_sweep``).
    ``chosen``: per system, the calibration's ``cutoff``, ``quantile`` and shares at it.

    Both shares are step functions of the cutoff that jump only at observed scores; the grid
    holds every observed top-1 score, so drawing steps between grid points is exact.
    """

    def __init__(self, curve: pd.DataFrame, chosen: pd.DataFrame, score_label: str | None = None,
                 colors: Mapping[str, str] | None = None):
        self.curve = curve
        self.chosen = chosen
        self.score_label = score_label
        self.colors = (dict(colors) if colors is not None
                       else system_colors(pd.unique(curve["system"])))

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in pd.unique(self.curve["system"])]

    @classmethod
    def from_calibration(cls, calibration, system=None, cutoffs=None, grid_size: int = 200,
                         score_label: str | None = None):
        """Curves from the calibration's top-1 scores.

        ``cutoffs``: the grid to evaluate (numbers, or ``{system: numbers}``); by default every
        observed top-1 score plus ``grid_size`` evenly spaced points over their range (5%
        padding each side).
        """
        systems = _select_systems(calibration.summary.index, system)
        frame = _classes(calibration, systems)
        pieces = []
        for s in systems:  # one vectorized pass per system
            pos, neg = _class_scores(frame, s)
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
            ns, pr = _tradeoff_values(pos, neg, grid)
            pieces.append(pd.DataFrame({"system": s, "cutoff": grid,
                                        "negative_satisfaction": ns, "positive_retention": pr}))
        curve = pd.concat(pieces, ignore_index=True)
        curve["system"] = curve["system"].astype(ID)
        chosen = calibration.summary.loc[systems, _with_method(calibration.summary, _CHOSEN)].copy()
        out = cls(curve, chosen, _score_label_of(calibration, score_label),
                  system_colors(calibration.summary.index))
        from .shift import stratum_cutoff_rows  # by="stratum": one cutoff per stratum

        out.stratum_cutoffs = stratum_cutoff_rows(calibration, systems)
        return out

    @classmethod
    def from_sweep(cls, sweep: pd.DataFrame, calibration=None, system=None,
                   score_label: str | None = None):
        """From :func:`~retrieval_eval.calibration.cutoff_sweep`'s frame (which adds
        ``recall@k`` after the cutoff, computed by the metric engine); the chosen cutoff comes
        from ``calibration`` when given."""
        systems = _select_systems(pd.unique(sweep["system"]), system)
        curve = sweep[sweep["system"].isin(pd.Index(systems, dtype=ID))].sort_values(
            ["cutoff"], kind="stable").reset_index(drop=True)
        curve = pd.concat([curve[curve["system"] == s] for s in systems], ignore_index=True)
        colors = system_colors(pd.unique(sweep["system"]))
        if calibration is not None:
            chosen = calibration.summary.loc[
                systems, _with_method(calibration.summary, _CHOSEN)].copy()
            score_label = _score_label_of(calibration, score_label)
            colors = system_colors(calibration.summary.index)
        else:
            chosen = pd.DataFrame(
                {"cutoff": np.nan, "quantile": np.nan, "negative_satisfaction": np.nan,
                 "positive_retention": np.nan, "rank_based": False},
                index=pd.Index(systems, dtype=ID, name="system"))
        return cls(curve, chosen, score_label, colors)

    @classmethod
    def from_predictions(cls, y_true, y_score, *, cutoff=None, quantile: float = 0.10,
                         name: str = "system", cutoffs=None, score_label: str | None = None):
        cal = _calibration_from_predictions(y_true, y_score, cutoff, quantile, name)
        return cls.from_calibration(cal, cutoffs=cutoffs, score_label=score_label)

    def plot(self, ax=None, *, legend: bool = True):
        """Draw the curves per system; returns self with ``lines_`` ({system: {column: Line2D}})
        and ``cutoff_lines_``."""
        axes, fig = _axes(ax, len(self.systems))
        fg = _fg()
        self.lines_, self.cutoff_lines_, self.notes_ = {}, {}, {}
        recall_cols = [c for c in self.curve.columns if c.startswith("recall@")]
        series = [("negative_satisfaction", "negative satisfaction (negatives < c)", NEGATIVE_COLOR, "-"),
                  ("positive_retention", "positive retention (positives \u2265 c)", _positive_color(), "-")]
        for i, (a, s) in enumerate(zip(axes, self.systems)):
            sub = self.curve[self.curve["system"] == s]
            lines = {}
            # recall after the cutoff is the system's own measure: drawn in its colour.
            recall = [(c, f"{c} after the cutoff", _color(self.colors, s, i), "--")
                      for c in recall_cols]
            for col, label, color, style in series + recall:
                (lines[col],) = a.plot(sub["cutoff"], sub[col], drawstyle="steps-pre",
                                       color=color, linestyle=style, linewidth=2, label=label)
            self.lines_[s] = lines
            handles = list(lines.values())
            if s in self.chosen.index and np.isfinite(self.chosen.loc[s, "cutoff"]):
                ch = self.chosen.loc[s]
                c = float(ch["cutoff"])
                line = a.axvline(c, color=fg, linestyle=":", linewidth=1.5,
                                 label=(f"cutoff {_fmt(c)} "
                                        f"({_quantile_text(ch['quantile'], ch.get('method'))}):\n"
                                        f"{ch['negative_satisfaction']:.0%} negatives below, "
                                        f"{ch['positive_retention']:.0%} positives kept"))
                a.plot([c, c], [ch["negative_satisfaction"], ch["positive_retention"]],
                       linestyle="none", marker="o", color=fg, markersize=5)
                self.cutoff_lines_[s] = line
                handles.append(line)
            if getattr(self, "stratum_cutoffs", None) is not None:
                from .shift import draw_stratum_cutoffs

                handles += draw_stratum_cutoffs(a, self.stratum_cutoffs, s)
            if s in self.chosen.index and bool(self.chosen.loc[s].get("rank_based", False)):
                a.set_ylim(-0.02, 1.25)
                self.notes_[s] = a.text(
                    0.5, 0.97, RANK_BASED_NOTE, transform=a.transAxes, ha="center", va="top",
                    fontsize="small", color=fg,
                    bbox=dict(boxstyle="round,pad=0.3", facecolor=_rc("axes.facecolor"),
                              edgecolor=HIGHLIGHT_COLOR, linewidth=1.2))
            else:
                a.set_ylim(-0.02, 1.02)
            a.set_yticks(np.linspace(0, 1, 6))
            a.set_xlabel(_score_axis_label(self.score_label, "cutoff c on the top-1 score", s))
            a.set_ylabel("share of queries" + "".join(f"; {c}" for c in recall_cols))
            a.set_title(f"{s}: what a cutoff keeps and rejects", color=_color(self.colors, s, i))
            a.grid(True, alpha=0.25)
            if legend:
                _legend_below(a, handles, ncols=1)
        self.axes_ = axes
        self.ax_ = _one_or_array(axes)
        self.figure_ = fig
        return self


# --------------------------------------------------------------------------------------------
# Evaluation: strata, metric@k, per-query deltas.


def _resolve_metric(ev, metric: str, k: int | None = None) -> str:
    """A column name (``recall@10``) from a name with or without its cutoff."""
    if "@" in metric:
        if metric not in ev.per_query.columns:
            raise ValueError(f"no metric {metric!r}; available: "
                             f"{', '.join(c for c in ev.per_query.columns if '@' in c)}")
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
    """
    from ..analysis.measurement import t_half_width

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
    """

    def __init__(self, values: pd.DataFrame, metric: str, colors: Mapping[str, str] | None = None):
        self.values = values
        self.metric = metric
        self.colors = (dict(colors) if colors is not None else
                       system_colors(pd.unique(values.index.get_level_values("system"))))

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in pd.unique(self.values.index.get_level_values("system"))]

    @property
    def strata(self) -> list[str]:
        return [str(s) for s in pd.unique(self.values.index.get_level_values("stratum"))]

    @classmethod
    def from_evaluation(cls, evaluation, metric: str = "recall", k: int | None = None,
                        system=None):
        """``metric``: a column name (``recall@10``) or a base name (``recall``, at ``k`` or
        the evaluation's largest cutoff)."""
        name = _resolve_metric(evaluation, metric, k)
        systems = _select_systems(evaluation.systems, system)
        ps = evaluation.per_stratum
        ps = ps[ps.index.get_level_values("system").isin(systems) & (ps["n"] > 0)]
        values = pd.DataFrame({"value": ps[name].astype(np.float64),
                               "n": ps["n"].astype(np.int64)})
        scored = _scored_queries(evaluation)
        ti = t_interval(scored[name].astype(np.float64), [scored["system"], scored["stratum"]])
        ti = ti.reindex(values.index)
        same = (ti["n"].to_numpy() == values["n"].to_numpy()) & np.isclose(
            ti["mean"].to_numpy(np.float64), values["value"].to_numpy(np.float64),
            rtol=0, atol=1e-9)
        low, high = clip_interval(ti["ci_low"].to_numpy(np.float64),
                                  ti["ci_high"].to_numpy(np.float64), name)
        values["ci_low"] = np.where(same, low, np.nan)
        values["ci_high"] = np.where(same, high, np.nan)
        values["thin"] = values["n"].to_numpy(np.int64) < THIN_STRATUM
        worst = np.zeros(len(values), dtype=bool)
        for s in systems:
            w = evaluation.worst_stratum(name, s)
            if w is not None:
                worst |= (values.index.get_level_values("system") == s) & (
                    values.index.get_level_values("stratum") == w["name"])
        values["worst"] = worst
        values = values.loc[[i for s in systems for i in values.index if i[0] == s]]
        return cls(values, name, system_colors(evaluation.systems))

    def plot(self, ax=None, *, legend: bool = True, interval: bool = True):
        """Horizontal grouped bars (strata top to bottom); returns self with ``bars_``
        ({system: BarContainer}), ``errorbars_``, ``worst_`` (the hatched patches), ``thin_``
        (the patches of thin strata, drawn pale) and ``n_labels_`` ({system: [Text]}, the
        ``n`` beside each bar)."""
        from matplotlib.patches import Patch

        from .style import is_bounded

        strata, systems = self.strata, self.systems
        height = max(2.6, 0.9 + 0.42 * len(strata) * max(1, 0.6 * len(systems)))
        (a,), fig = _axes(ax, 1, size=(6.4, height))
        fg = _fg()
        y0 = np.arange(len(strata), dtype=np.float64)
        width = 0.8 / len(systems)
        bounded = is_bounded(self.metric)
        values = self.values["value"].to_numpy(np.float64)
        top = np.nanmax(np.r_[1.0 if bounded else 0.0, values,
                              self.values["ci_high"].to_numpy(np.float64)])
        pad = 0.012 * (top if top > 0 else 1.0)
        self.bars_, self.errorbars_, self.worst_, self.thin_, self.n_labels_ = {}, {}, [], [], {}
        for i, s in enumerate(systems):
            sub = self.values.xs(s, level="system").reindex(strata)
            y = y0 - 0.4 + width * (i + 0.5)
            color = _color(self.colors, s, i)
            v = sub["value"].to_numpy(np.float64)
            bars = a.barh(y, v, height=width * 0.92, color=color, label=s)
            self.bars_[s] = bars
            thin = sub["thin"].fillna(False).to_numpy(bool) if "thin" in sub else np.zeros(len(v), bool)
            for patch, is_worst, is_thin in zip(bars.patches, sub["worst"].fillna(False).to_numpy(bool),
                                                thin):
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
                self.errorbars_[s] = a.errorbar(v[has], y[has], xerr=err, fmt="none",
                                                ecolor=fg, elinewidth=1, capsize=3)
            # n beside each bar (past its interval), "thin" where it is below THIN_STRATUM.
            end = np.where(interval & has, np.fmax(v, hi), v)
            n = sub["n"].to_numpy()
            self.n_labels_[s] = [
                a.text(np.nan_to_num(e, nan=0.0) + pad, yy,
                       f"n={int(k)}" + (" thin" if t else ""), va="center", ha="left",
                       fontsize="x-small", color=fg)
                for e, yy, k, t in zip(end, y, n, thin) if pd.notna(k)]
        a.set_yticks(y0, strata)
        a.invert_yaxis()
        lo = np.nanmin(np.r_[0.0, self.values["ci_low"].to_numpy(np.float64), values])
        # Room on the right for the n labels; ticks only over the metric's range.
        a.set_xlim(min(0.0, lo), top * 1.2 if top > 0 else 1.0)
        if bounded:
            a.set_xticks(np.linspace(0, 1, 6))
        a.set_xlabel(f"{self.metric} (mean over the stratum's scored queries)")
        a.set_title(f"{self.metric} per stratum")
        a.grid(True, axis="x", alpha=0.25)
        if legend:
            # Plain patches: a bar container's handle would copy its first bar's hatch/alpha.
            handles = ([Patch(facecolor=_color(self.colors, s, i), label=s)
                        for i, s in enumerate(systems)] if len(systems) > 1 else [])
            handles.append(Patch(facecolor="none", edgecolor=fg, hatch="///", label="worst stratum"))
            if self.errorbars_:
                from matplotlib.lines import Line2D

                handles.append(Line2D([], [], color=fg, marker="|", markersize=8, linewidth=1,
                                      label="95% t interval" + (" (within [0, 1])"
                                                                if bounded else "")))
            if self.thin_:
                handles.append(Patch(facecolor=fg, alpha=0.4,
                                     label=f"pale, 'thin': n < {THIN_STRATUM} queries"))
            self.legend_ = _legend_below(a, handles, ncols=2 if len(handles) > 2 else 1)
        self.bar_ = next(iter(self.bars_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


class MetricAtKDisplay:
    """A metric at every cutoff the evaluation computed, one line per system.

    ``values``: tidy ``system, k, metric, value`` (the evaluation's macro means).
    """

    def __init__(self, values: pd.DataFrame, metric: str, colors: Mapping[str, str] | None = None):
        self.values = values
        self.metric = metric
        self.colors = (dict(colors) if colors is not None
                       else system_colors(pd.unique(values["system"])))

    @property
    def systems(self) -> list[str]:
        return [str(s) for s in pd.unique(self.values["system"])]

    @classmethod
    def from_evaluation(cls, evaluation, metric: str = "recall", system=None):
        """``metric``: a base name (``recall``, ``ndcg``, ...), read at each of ``evaluation.ks``."""
        base = metric.split("@", 1)[0]
        if base == "ndcg_linear":
            base = "ndcg"
        systems = _select_systems(evaluation.systems, system)
        ks = list(evaluation.ks)
        names = [evaluation.metric(base, k) for k in ks]
        missing = [n for n in names if n not in evaluation.summary.columns]
        if missing:
            raise ValueError(f"no metric {', '.join(missing)} in the evaluation")
        table = evaluation.summary.loc[systems, names].astype(np.float64)
        values = pd.DataFrame({
            "system": pd.array(np.repeat(np.asarray(systems, dtype=object), len(ks)), dtype=ID),
            "k": np.tile(np.asarray(ks, dtype=np.int64), len(systems)),
            "metric": pd.array(np.tile(np.asarray(names, dtype=object), len(systems)), dtype=ID),
            "value": table.to_numpy().ravel(),
        })
        label = names[0].split("@", 1)[0]
        return cls(values, label, system_colors(evaluation.systems))

    def plot(self, ax=None, **line_kwargs):
        """Draw one line per system; returns self with ``lines_`` ({system: Line2D})."""
        (a,), fig = _axes(ax, 1, size=(5.6, 4.0))
        self.lines_ = {}
        for i, s in enumerate(self.systems):
            sub = self.values[self.values["system"] == s]
            kw = {"color": _color(self.colors, s, i), "marker": "o", "linewidth": 2, **line_kwargs}
            (self.lines_[s],) = a.plot(sub["k"], sub["value"], label=s, **kw)
        ks = np.unique(self.values["k"].to_numpy())
        a.set_xticks(ks)
        a.set_ylim(0, 1.02)
        a.set_xlabel("cutoff k (results considered)")
        a.set_ylabel(f"{self.metric}@k (mean over scored queries)")
        a.set_title(f"{self.metric}@k by system")
        a.grid(True, alpha=0.25)
        self.legend_ = _legend_below(a, ncols=min(len(self.lines_), 4))
        self.line_ = next(iter(self.lines_.values()), None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


class PerQueryDeltaDisplay:
    """Per-query differences of one metric between two systems, sorted, wins and losses coloured.

    ``deltas``: one row per scored query, ``query_id``, ``baseline``, ``candidate`` (the two
    systems' per-query values), ``delta`` = candidate - baseline, sorted by delta descending
    (ties keep the evaluation's query order). A mean can hide that a change helps a few
    queries a lot and hurts many a little; this shows which.
    """

    def __init__(self, deltas: pd.DataFrame, metric: str, baseline: str, candidate: str,
                 colors: Mapping[str, str] | None = None):
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
        return {"wins": int((d > 0).sum()), "losses": int((d < 0).sum()),
                "ties": int((d == 0).sum())}

    @classmethod
    def from_values(cls, query_ids, baseline_values, candidate_values, metric: str,
                    baseline: str = "baseline", candidate: str = "candidate"):
        """From two aligned arrays of per-query values."""
        b = np.asarray(baseline_values, dtype=np.float64)
        c = np.asarray(candidate_values, dtype=np.float64)
        frame = pd.DataFrame({"query_id": pd.array(list(query_ids), dtype=ID),
                              "baseline": b, "candidate": c, "delta": c - b})
        frame = frame.sort_values("delta", ascending=False, kind="stable").reset_index(drop=True)
        return cls(frame, metric, baseline, candidate)

    @classmethod
    def from_evaluation(cls, evaluation, metric: str = "ndcg", k: int | None = None,
                        baseline: str | None = None, candidate: str | None = None):
        """Two systems of one evaluation: by default the first is the baseline, the second the
        candidate (an evaluation with other than two systems needs both named)."""
        name = _resolve_metric(evaluation, metric, k)
        systems = evaluation.systems
        if baseline is None or candidate is None:
            if len(systems) != 2:
                raise ValueError(f"the evaluation has {len(systems)} systems "
                                 f"({', '.join(systems)}); name baseline= and candidate=")
            baseline = baseline or next(s for s in systems if s != candidate)
            candidate = candidate or next(s for s in systems if s != baseline)
        _select_systems(systems, [baseline, candidate])
        scored = _scored_queries(evaluation)
        wide = scored.pivot(index="query_id", columns="system", values=name)
        order = pd.unique(scored["query_id"])
        wide = wide.reindex(order)
        disp = cls.from_values(wide.index, wide[baseline].to_numpy(np.float64),
                               wide[candidate].to_numpy(np.float64), name, baseline, candidate)
        disp.colors = system_colors(systems)
        return disp

    @classmethod
    def from_comparison(cls, comparison, metric: str | None = None, system: str | None = None):
        """From a :class:`retrieval_eval.compare.Comparison`: one candidate (default: the
        first) against the baseline on one metric (default: the first compared)."""
        pq = comparison.per_query
        if metric is None:
            metric = comparison.metrics[0]
        elif metric not in set(pq["metric"]):
            named = f"{metric}@{comparison.k}"
            if named not in set(pq["metric"]):
                raise ValueError(f"metric {metric!r} was not compared; compared: "
                                 f"{', '.join(comparison.metrics)}")
            metric = named
        candidates = list(comparison.candidates)
        system = system or (candidates[0] if candidates else None)
        if system not in candidates:
            raise ValueError(f"no candidate {system!r}; candidates: {', '.join(candidates)}")
        sub = pq[(pq["system"] == system) & (pq["metric"] == metric)]
        disp = cls.from_values(sub["query_id"], sub["baseline"].to_numpy(np.float64),
                               sub["candidate"].to_numpy(np.float64), metric,
                               str(comparison.baseline), str(system))
        disp.colors = system_colors(comparison.systems)
        return disp

    def plot(self, ax=None, *, max_labels: int = 40):
        """Bars per query (sorted), wins and losses coloured; returns self with ``bars_``."""
        from matplotlib.patches import Patch

        n = len(self.deltas)
        label_queries = 0 < n <= max_labels
        (a,), fig = _axes(ax, 1, size=(max(5.6, min(12.0, 0.22 * n + 2.5)), 4.0))
        fg = _fg()
        d = self.deltas["delta"].to_numpy(np.float64)
        if self.colors is not None:
            win = _color(self.colors, self.candidate, 0)
            loss = _color(self.colors, self.baseline, 1)
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
            a.set_xticks(x, self.deltas["query_id"].astype(str).tolist(), rotation=90,
                         fontsize="small")
            a.set_xlabel("query (sorted by difference)")
        else:
            a.set_xticks([])
            a.set_xlabel(f"queries, sorted by difference (n={n})")
        a.set_xlim(-0.8, n - 0.2 if n else 1)
        a.set_ylabel(f"\u0394 {self.metric} ({self.candidate} \u2212 {self.baseline})")
        a.set_title(f"{self.metric} per query: {self.candidate} vs {self.baseline}")
        a.grid(True, axis="y", alpha=0.25)
        handles = [Patch(color=win, label=f"{self.candidate} better ({cnt['wins']})"),
                   Patch(color=loss, label=f"{self.baseline} better ({cnt['losses']})"),
                   Patch(color="#999999", label=f"tied ({cnt['ties']})")]
        extra = 0.0
        if label_queries:
            longest = max((len(str(q)) for q in self.deltas["query_id"]), default=0)
            extra = 0.6 * _points("small") * longest
        self.legend_ = _legend_below(a, handles, ncols=3, extra_points=extra,
                                     ticklabels=label_queries)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


# --------------------------------------------------------------------------------------------
# Drift.


def _share(p: float) -> str:
    """A share as a whole percentage, never rounding a non-empty class to 0% or a partial to 100%."""
    if 0 < p < 0.005:
        return "<1%"
    if 0.995 <= p < 1:
        return ">99%"
    return f"{p:.0%}"


class DriftDisplay:
    """How many labels are in each drift status, in the order VALID, RE_ANCHORABLE, MERGED,
    SPLIT, ORPHANED. RE_ANCHORABLE and MERGED are fixable by ``fix``; SPLIT and ORPHANED need a
    person. ``counts``: a Series over the five statuses; ``invalid_ratio``: the share not VALID.
    """

    def __init__(self, counts: pd.Series, invalid_ratio: float):
        self.counts = counts
        self.invalid_ratio = invalid_ratio

    @classmethod
    def from_drift(cls, result):
        """From a :class:`~retrieval_eval.drift.DriftResult` (its summary counts)."""
        from ..analysis.drift import DRIFT_STATUSES

        s = result.summary
        counts = pd.Series([int(s[name.lower()]) for name in DRIFT_STATUSES],
                           index=pd.Index(DRIFT_STATUSES, dtype=ID, name="status"),
                           dtype=np.int64, name="labels")
        return cls(counts, float(s["invalid_ratio"]))

    def plot(self, ax=None):
        """Bars per status with counts; returns self with ``bars_``."""
        (a,), fig = _axes(ax, 1, size=(6.4, 3.8))
        names = [str(x) for x in self.counts.index]
        values = self.counts.to_numpy(np.int64)
        total = int(values.sum())
        self.bars_ = a.bar(np.arange(len(names)), values,
                           color=[DRIFT_COLORS.get(n, PALETTE[0]) for n in names], width=0.7)
        shares = values / total if total else np.zeros(len(values))
        self.bar_labels_ = a.bar_label(self.bars_, labels=[f"{v}\n{_share(p)}" if total else str(v)
                                                           for v, p in zip(values, shares)],
                                       padding=2, fontsize="small", color=_fg())
        sub = {"VALID": "", "RE_ANCHORABLE": "\n(fixable)", "MERGED": "\n(fixable)",
               "SPLIT": "\n(review)", "ORPHANED": "\n(review)"}
        a.set_xticks(np.arange(len(names)), [n + sub.get(n, "") for n in names],
                     fontsize="small")
        a.set_ylim(0, max(1, values.max(initial=0)) * 1.22)
        a.set_ylabel("labels (judgments)")
        a.set_title(f"label drift: {self.invalid_ratio:.1%} not VALID (of {total})")
        a.grid(True, axis="y", alpha=0.25)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self


# --------------------------------------------------------------------------------------------
# Shortcuts the result objects' .plot() methods call.

_CALIBRATION_KINDS = ("distribution", "roc", "pr", "tradeoff")
_EVALUATION_KINDS = ("strata", "metric_at_k", "delta")


def plot_calibration(calibration, kind: str = "distribution", ax=None, system=None, **kwargs):
    """Draw a :class:`~retrieval_eval.calibration.Calibration`; returns the display.

    ``kind``: ``"distribution"`` (:class:`ScoreDistributionDisplay`), ``"roc"``, ``"pr"``
    (AUPR-in; pass ``positive="out"`` for AUPR-out) or ``"tradeoff"``
    (:class:`CutoffTradeoffDisplay`). Extra keywords go to the constructor (``score_label``,
    ``positive``, ``cutoffs``) or to ``plot``.
    """
    build_keys = {"distribution": {"score_label"}, "roc": set(), "pr": {"positive"},
                  "tradeoff": {"score_label", "cutoffs", "grid_size"}}
    if kind not in build_keys:
        raise ValueError(f"kind must be one of {', '.join(_CALIBRATION_KINDS)}, got {kind!r}")
    build = {k: kwargs.pop(k) for k in list(kwargs) if k in build_keys[kind]}
    cls = {"distribution": ScoreDistributionDisplay, "roc": RocCurveDisplay,
           "pr": PrecisionRecallDisplay, "tradeoff": CutoffTradeoffDisplay}[kind]
    return cls.from_calibration(calibration, system=system, **build).plot(ax=ax, **kwargs)


def plot_evaluation(evaluation, kind: str = "strata", ax=None, metric: str | None = None,
                    **kwargs):
    """Draw an :class:`~retrieval_eval.evaluation.Evaluation`; returns the display.

    ``kind``: ``"strata"`` (:class:`StratumDisplay`, default metric recall at the largest k),
    ``"metric_at_k"`` (:class:`MetricAtKDisplay`, default recall) or ``"delta"``
    (:class:`PerQueryDeltaDisplay` of two systems, default nDCG). Keywords ``k``, ``system``,
    ``baseline``, ``candidate`` go to the constructor, the rest to ``plot``.
    """
    if kind == "strata":
        build = {k: kwargs.pop(k) for k in ("k", "system") if k in kwargs}
        disp = StratumDisplay.from_evaluation(evaluation, metric or "recall", **build)
    elif kind == "metric_at_k":
        build = {k: kwargs.pop(k) for k in ("system",) if k in kwargs}
        disp = MetricAtKDisplay.from_evaluation(evaluation, metric or "recall", **build)
    elif kind == "delta":
        build = {k: kwargs.pop(k) for k in ("k", "baseline", "candidate") if k in kwargs}
        disp = PerQueryDeltaDisplay.from_evaluation(evaluation, metric or "ndcg", **build)
    else:
        raise ValueError(f"kind must be one of {', '.join(_EVALUATION_KINDS)}, got {kind!r}")
    return disp.plot(ax=ax, **kwargs)


def plot_drift(result, ax=None):
    """Draw a :class:`~retrieval_eval.drift.DriftResult`'s status counts; returns the display."""
    return DriftDisplay.from_drift(result).plot(ax=ax)


def plot_comparison(comparison, ax=None, metric: str | None = None, system: str | None = None,
                    **kwargs):
    """Draw a comparison's per-query deltas for one candidate (:class:`PerQueryDeltaDisplay`);
    returns the display."""
    return PerQueryDeltaDisplay.from_comparison(comparison, metric, system).plot(ax=ax, **kwargs)


# --------------------------------------------------------------------------------------------
# Forest plot.


class ForestDisplay:
    """Every comparison's mean difference with its interval, one row each (a forest plot).

    ``rows``: the comparison table's ``system``, ``metric``, ``delta``, ``ci_low``,
    ``ci_high``, ``significant``. Filled markers are significant after correction, hollow
    ones are not; the vertical line is "no difference".
    """

    def __init__(self, rows: pd.DataFrame, baseline: str, caption: str = "",
                 colors: dict[str, str] | None = None):
        self.rows = rows
        self.baseline = baseline
        self.caption = caption
        # Each system's fixed colour (retrieval_eval._style), by its place in the comparison.
        self.colors = colors

    @classmethod
    def from_comparison(cls, comparison, metric: str | None = None):
        t = comparison.table
        if metric is not None:
            t = t[t["metric"] == comparison._metric(metric)]
        rows = t[["system", "metric", "delta", "ci_low", "ci_high", "significant"]].reset_index(drop=True)
        return cls(rows, comparison.baseline, comparison.describe(),
                   system_colors(comparison.systems))

    def plot(self, ax=None, *, title: str | None = None):
        """Draw on ``ax`` (or a new figure); returns self with ``ax_``, ``figure_``,
        ``errorbars_`` (one per system), ``zero_line_``."""
        from matplotlib.lines import Line2D

        n = len(self.rows)
        (a,), fig = _axes(ax, 1, size=(6.4, max(2.4, 0.32 * n + 1.4)))
        fg = _fg()
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
            color = _color(self.colors, s, i)
            eb = a.errorbar(d, y[sel], xerr=np.vstack([d - lo, hi - d]), fmt="none",
                            ecolor=color, elinewidth=1.6, capsize=3)
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
        self.legend_ = (_legend_below(a, handles, ncols=min(len(systems), 4))
                        if len(systems) > 1 else None)
        self.ax_, self.axes_, self.figure_ = a, [a], fig
        return self
