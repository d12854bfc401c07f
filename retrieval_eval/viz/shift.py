"""Displays for trust: score drift between runs, per-stratum cutoffs, label agreement.

Each follows the scikit-learn Display pattern of :mod:`retrieval_eval.viz`: the numbers
are computed once (``from_*`` classmethods take a result object), ``.plot(ax=None)`` draws on
the given Axes or a new figure and returns ``self`` with ``ax_``/``figure_`` set, matplotlib
is imported inside ``plot`` and nothing calls ``plt.show()``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .style import NEGATIVE_COLOR, PALETTE, POSITIVE_COLOR

__all__ = [
    "AFTER_COLOR",
    "BEFORE_COLOR",
    "AgreementDisplay",
    "ScoreShiftDisplay",
    "StratumCutoffDisplay",
    "draw_stratum_cutoffs",
    "stratum_cutoff_rows",
]

BEFORE_COLOR = PALETTE[0]
AFTER_COLOR = PALETTE[4]


def _new_axes(ax, size=(6.0, 3.8)):
    if ax is not None:
        return ax, ax.figure
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size, layout="constrained")
    return ax, fig


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{x:.3g}" if abs(x) < 0.01 and x != 0 else f"{x:.3f}"


def stratum_cutoff_rows(calibration, systems) -> pd.DataFrame | None:
    """The per-stratum cutoffs (``system``, ``stratum``, ``cutoff``, ``source``) of a
    ``calibrate(..., by="stratum")`` result for ``systems``, or None without them.

    Parameters
    ----------
    calibration : Calibration
    systems : iterable of str

    Returns
    -------
    pandas.DataFrame or None

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import stratum_cutoff_rows
    >>> demo = rev.load_demo()
    >>> bm25 = demo.runs[demo.runs["system"] == "bm25"]
    >>> cal = rev.calibrate(demo.judgments, bm25, queries=demo.queries, guarantee=0.10,
    ...                     by="stratum")
    >>> len(stratum_cutoff_rows(cal, ["bm25"]))
    4
    """
    from ..analysis.calibration.guarantee import POOLED

    table = getattr(calibration, "guarantee", None)
    if table is None or calibration.settings.get("by") != "stratum":
        return None
    rows = table[(table["stratum"] != POOLED) & table["system"].isin(list(systems))]
    return rows[["system", "stratum", "cutoff", "source"]].reset_index(drop=True)


def draw_stratum_cutoffs(ax, rows: pd.DataFrame, system: str) -> list:
    """Short ticks along the top of ``ax`` at each stratum's cutoff, labeled with the stratum
    (the tradeoff plot's per-stratum cutoffs).

    Parameters
    ----------
    ax : matplotlib Axes
    rows : pandas.DataFrame
        :func:`stratum_cutoff_rows`'s.
    system : str

    Returns
    -------
    list
        The legend handle (none when the system has no per-stratum cutoff).

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import draw_stratum_cutoffs, get_axes, stratum_cutoff_rows
    >>> demo = rev.load_demo()
    >>> bm25 = demo.runs[demo.runs["system"] == "bm25"]
    >>> cal = rev.calibrate(demo.judgments, bm25, queries=demo.queries, guarantee=0.10,
    ...                     by="stratum")
    >>> (ax,), fig = get_axes(None)
    >>> len(draw_stratum_cutoffs(ax, stratum_cutoff_rows(cal, ["bm25"]), "bm25"))
    1
    """
    from matplotlib.lines import Line2D

    mine = rows[(rows["system"] == system) & np.isfinite(rows["cutoff"].to_numpy(np.float64))]
    color = PALETTE[3]
    for rec in mine.itertuples(index=False):
        ax.axvline(
            rec.cutoff,
            ymin=0.90,
            ymax=1.0,
            color=color,
            linewidth=2.2,
            linestyle="-" if rec.source != "pooled" else ":",
        )
        ax.text(
            rec.cutoff,
            0.89,
            str(rec.stratum),
            transform=ax.get_xaxis_transform(),
            rotation=90,
            ha="center",
            va="top",
            fontsize="x-small",
            color=color,
        )
    if mine.empty:
        return []
    return [Line2D([], [], color=color, linewidth=2.2, label='per-stratum cutoffs (by="stratum")')]


class ScoreShiftDisplay:
    """The top-1 score distributions of the same queries under two runs, and both cutoffs.

    Parameters
    ----------
    before, after : array-like of float
        The top-1 scores under each run.
    cutoffs : dict
        ``{"before": c, "after": c}`` (NaN when not calibrated).
    names : (str, str)
        The two runs' names.
    title : str, default ""
        The PSI and KS figures.

    Examples
    --------
    >>> import pandas as pd
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import ScoreShiftDisplay
    >>> demo = rev.load_demo()
    >>> dense = demo.runs[demo.runs["system"] == "dense"]
    >>> after = dense.assign(score=dense["score"] * 0.9,
    ...                      system=pd.array(["after"] * len(dense), dtype="string"))
    >>> shift = rev.score_shift(dense, after, judgments=demo.judgments, queries=demo.queries)
    >>> ScoreShiftDisplay.from_shift(shift).plot().names
    ('dense', 'after')
    """

    def __init__(
        self, before: np.ndarray, after: np.ndarray, cutoffs: dict[str, float], names: tuple[str, str], title: str = ""
    ):
        self.before = np.asarray(before, dtype=np.float64)
        self.after = np.asarray(after, dtype=np.float64)
        self.cutoffs = dict(cutoffs)
        self.names = names
        self.title = title

    @classmethod
    def from_shift(cls, shift) -> ScoreShiftDisplay:
        """The two distributions of a score shift.

        Parameters
        ----------
        shift : ScoreShift
            A :func:`~retrieval_eval.score_shift` result.

        Returns
        -------
        ScoreShiftDisplay
        """
        s = shift.settings
        title = (
            f"PSI {_num(shift.value('psi'))}, KS {_num(shift.value('ks'))} "
            f"(p = {_num(shift.value('ks_pvalue'))}), "
            f"flips {_num(shift.value('flip_share'))}"
        )
        return cls(
            shift.top1["top1_before"].to_numpy(),
            shift.top1["top1_after"].to_numpy(),
            {"before": shift.value("cutoff_before"), "after": shift.value("cutoff_after")},
            (s["before"], s["after"]),
            title,
        )

    def plot(self, ax=None, *, bins: int = 20, legend: bool = True):
        """Two step histograms (share of queries) on common bins, the before cutoff dashed and
        the after cutoff dotted.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        bins : int, default 20
        legend : bool, default True

        Returns
        -------
        ScoreShiftDisplay
            self, with ``ax_``, ``figure_`` and ``lines_`` (the cutoffs).
        """
        ax, fig = _new_axes(ax)
        both = np.r_[self.before, self.after]
        edges = np.histogram_bin_edges(both, bins=bins) if both.size else np.linspace(0.0, 1.0, bins + 1)
        self.lines_ = {}
        for values, color, name, key in (
            (self.before, BEFORE_COLOR, self.names[0], "before"),
            (self.after, AFTER_COLOR, self.names[1], "after"),
        ):
            if values.size:
                w = np.full(values.size, 1.0 / values.size)
                ax.hist(values, bins=edges, weights=w, histtype="stepfilled", color=color, alpha=0.2, linewidth=0)
                ax.hist(
                    values,
                    bins=edges,
                    weights=w,
                    histtype="step",
                    color=color,
                    linewidth=1.8,
                    label=f"{key}: {name} (n={values.size})",
                )
            c = self.cutoffs.get(key, math.nan)
            if math.isfinite(c):
                self.lines_[key] = ax.axvline(
                    c,
                    color=color,
                    linestyle="--" if key == "before" else ":",
                    linewidth=1.8,
                    label=f"cutoff {key} {_num(c)}",
                )
        ax.set_xlabel("top-1 score")
        ax.set_ylabel("share of queries")
        ax.set_ylim(bottom=0)
        ax.set_title(self.title, fontsize="medium")
        if legend:
            ax.legend(fontsize="small", frameon=False, loc="upper left")
        self.ax_, self.figure_ = ax, fig
        return self


class StratumCutoffDisplay:
    """Per-stratum (Mondrian) cutoffs of one system: each stratum's positives' top-1 scores as
    points, its own cutoff as a bar across its row, the pooled cutoff as a dashed line, and
    the negatives' scores in a row of their own.

    Parameters
    ----------
    points : pandas.DataFrame
        ``row, kind, score``: one point per query.
    cutoffs : pandas.DataFrame
        The guarantee table's rows of the strata.
    pooled : float
        The pooled cutoff.
    system : str

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import StratumCutoffDisplay
    >>> demo = rev.load_demo()
    >>> bm25 = demo.runs[demo.runs["system"] == "bm25"]
    >>> cal = rev.calibrate(demo.judgments, bm25, queries=demo.queries, guarantee=0.10,
    ...                     by="stratum")
    >>> list(StratumCutoffDisplay.from_calibration(cal).plot().cutoff_marks_)
    ['builtin-types', 'data-model', 'expressions', 'statements']
    """

    def __init__(self, points: pd.DataFrame, cutoffs: pd.DataFrame, pooled: float, system: str):
        self.points = points
        self.cutoffs = cutoffs
        self.pooled = float(pooled)
        self.system = system

    @classmethod
    def from_calibration(cls, calibration, system: str | None = None) -> StratumCutoffDisplay:
        """The per-stratum cutoffs of one system.

        Parameters
        ----------
        calibration : Calibration
            A :func:`~retrieval_eval.calibrate` result made with ``by="stratum"``.
        system : str, optional
            By default the first calibrated system.

        Returns
        -------
        StratumCutoffDisplay

        Raises
        ------
        ValueError
            When the calibration has no per-stratum cutoffs.
        """
        from ..analysis.calibration.guarantee import POOLED

        table = calibration.guarantee
        if table is None or calibration.settings.get("by") != "stratum":
            raise ValueError('per-stratum cutoffs need calibrate(..., by="stratum")')
        system = system or calibration.systems[0]
        t = calibration.top1
        t = t[(t["system"] == system) & ~t["missing"].to_numpy(bool) & t["kind"].isin(["positive", "negative"])]
        mine = table[table["system"] == system]
        pooled = float(mine.loc[mine["stratum"] == POOLED, "cutoff"].iloc[0])
        own = mine[mine["stratum"] != POOLED].reset_index(drop=True)
        points = pd.DataFrame(
            {
                "row": np.where(t["kind"] == "negative", "negatives (all strata)", t["stratum"].astype(str)),
                "kind": t["kind"].astype(str).to_numpy(),
                "score": t["top1_score"].to_numpy(),
            }
        )
        return cls(points, own, pooled, system)

    def plot(self, ax=None, *, legend: bool = True):
        """One row per stratum.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        legend : bool, default True

        Returns
        -------
        StratumCutoffDisplay
            self, with ``ax_``, ``figure_`` and ``cutoff_marks_`` ({stratum: Line2D}).
        """
        ax, fig = _new_axes(ax, (6.4, 0.55 * (len(self.cutoffs) + 1) + 1.8))
        rows = list(self.cutoffs["stratum"].astype(str)) + ["negatives (all strata)"]
        y = {r: i for i, r in enumerate(rows)}
        rng = np.random.default_rng(0)  # fixed jitter: the same picture every time
        for kind, color in (("positive", POSITIVE_COLOR), ("negative", NEGATIVE_COLOR)):
            p = self.points[self.points["kind"] == kind]
            yy = p["row"].map(y).to_numpy(np.float64) + rng.uniform(-0.18, 0.18, len(p))
            ax.scatter(
                p["score"], yy, s=14, color=color, alpha=0.75, label="positives" if kind == "positive" else "negatives"
            )
        self.cutoff_marks_ = {}
        rec: Any  # itertuples' rows: namedtuples whose fields the stubs cannot know
        for rec in self.cutoffs.itertuples(index=False):
            i = y[str(rec.stratum)]
            style = "-" if rec.source != "pooled" else ":"
            self.cutoff_marks_[str(rec.stratum)] = ax.plot(
                [rec.cutoff, rec.cutoff], [i - 0.38, i + 0.38], color="black", linewidth=2.4, linestyle=style
            )[0]
            cov = (
                f"  keeps >= {rec.coverage:.1%}"
                if np.isfinite(rec.coverage)
                else "  (pooled)"
                if rec.source == "pooled"
                else ""
            )
            ax.annotate(
                f"{_num(rec.cutoff)}{cov}",
                (rec.cutoff, i - 0.38),
                fontsize="x-small",
                ha="right",
                va="bottom",
                xytext=(-3, 0),
                textcoords="offset points",
            )
        if math.isfinite(self.pooled):
            ax.axvline(
                self.pooled, color="gray", linestyle="--", linewidth=1.2, label=f"pooled cutoff {_num(self.pooled)}"
            )
        ax.set_yticks(range(len(rows)), rows)
        ax.set_ylim(-0.6, len(rows) - 0.3)
        ax.invert_yaxis()
        ax.set_xlabel("top-1 score")
        ax.set_title(f"{self.system}: one cutoff per stratum", fontsize="medium")
        if legend:
            ax.legend(fontsize="small", frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=3)
        self.ax_, self.figure_ = ax, fig
        return self


def _short(name: str, width: int = 34) -> str:
    name = name.split(" (")[0]
    return name if len(name) <= width else name[: width - 1] + "…"


class AgreementDisplay:
    """The confusion matrix of two labelers' grades, as counts in a heatmap.

    Parameters
    ----------
    confusion : pandas.DataFrame
        Counts, rows the first labeler's grades, columns the second's.
    names : (str, str)
        The two labelers, for the axes.
    title : str, default ""

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import AgreementDisplay
    >>> demo = rev.load_demo()
    >>> ag = rev.label_agreement(demo.judgments, demo.judgments_lexical, run=demo.runs, k=10)
    >>> AgreementDisplay.from_agreement(ag, ("human", "lexical")).plot().confusion.shape
    (4, 4)
    """

    def __init__(self, confusion: pd.DataFrame, names: tuple[str, str], title: str = ""):
        self.confusion = confusion
        self.names = names
        self.title = title

    @classmethod
    def from_agreement(cls, agreement, short_names: tuple[str, str] | None = None) -> AgreementDisplay:
        """The confusion matrix of a label agreement.

        Parameters
        ----------
        agreement : LabelAgreement
            A :func:`~retrieval_eval.label_agreement` result.
        short_names : (str, str), optional
            The axes' labels (``labeled_by`` values are long); by default the text before the
            first ``(``, cut to 34 characters.

        Returns
        -------
        AgreementDisplay
        """
        a, b = agreement.labelers[:2]
        names = short_names or (_short(a), _short(b))
        title = (
            f"kappa {_num(agreement.value('kappa'))}, quadratic "
            f"{_num(agreement.value('kappa_quadratic'))}, binary "
            f"{_num(agreement.value('kappa_binary'))} ({len(agreement.units)} units)"
        )
        return cls(agreement.confusion, names, title)

    def plot(self, ax=None, *, cmap: str = "Blues"):
        """Counts in each cell, rows the first labeler.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        cmap : str, default "Blues"

        Returns
        -------
        AgreementDisplay
            self, with ``ax_``, ``figure_`` and ``image_``.
        """
        ax, fig = _new_axes(ax, (5.0, 4.4))
        c = self.confusion.to_numpy()
        self.image_ = ax.imshow(c, cmap=cmap, vmin=0)
        high = c.max() if c.size else 0
        for (i, j), v in np.ndenumerate(c):
            ax.text(j, i, str(int(v)), ha="center", va="center", color="white" if v > 0.6 * high else "black")
        ax.set_xticks(range(c.shape[1]), [str(x) for x in self.confusion.columns])
        ax.set_yticks(range(c.shape[0]), [str(x) for x in self.confusion.index])
        ax.set_xlabel(f"grade: {self.names[1]}", fontsize="small")
        ax.set_ylabel(f"grade: {self.names[0]}", fontsize="small")
        ax.set_title(self.title, fontsize="small")
        self.ax_, self.figure_ = ax, fig
        return self
