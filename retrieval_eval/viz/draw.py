"""Drawing helpers the Displays share: axes, the theme's colours, notes, legends, labels.

Text, reference lines and edges take their colour from ``rcParams`` (``text.color``,
``axes.edgecolor``), so ``plt.style.context("dark_background")`` works unchanged; a system's
colour is its slot in :mod:`retrieval_eval.viz.style`, in the dark variant on a dark
background. Legends sit below their axes so they never cover data. matplotlib is imported
inside each helper, never at module level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .style import DARK_PALETTE, DARK_POSITIVE_COLOR, HIGHLIGHT_COLOR, PALETTE, POSITIVE_COLOR, color_of, system_colors

__all__ = [
    "fmt_score",
    "font_points",
    "foreground",
    "get_axes",
    "is_dark",
    "legend_below",
    "note_box",
    "one_or_array",
    "palette",
    "positive_color",
    "quantile_text",
    "rc_param",
    "score_axis_label",
    "select_systems",
    "system_color",
]


def rc_param(name: str) -> Any:
    """The current value of a matplotlib ``rcParams`` entry (styles included).

    Parameters
    ----------
    name : str
        An ``rcParams`` key (``"text.color"``).

    Returns
    -------
    object

    Examples
    --------
    >>> from retrieval_eval.viz import rc_param
    >>> rc_param("axes.labelpad") >= 0
    True
    """
    import matplotlib as mpl

    return mpl.rcParams[name]  # type: ignore[index]


def foreground() -> Any:
    """The theme's foreground colour (text), for reference lines and annotations.

    Returns
    -------
    colour
        ``rcParams["text.color"]``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from retrieval_eval.viz import foreground
    >>> with plt.style.context("dark_background"):
    ...     foreground()
    'white'
    """
    return rc_param("text.color")


def is_dark() -> bool:
    """Whether the current style draws on a dark background (axes face luminance < 0.5).

    Returns
    -------
    bool

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from retrieval_eval.viz import is_dark
    >>> with plt.style.context("dark_background"):
    ...     is_dark()
    True
    """
    from matplotlib.colors import to_rgba

    face = rc_param("axes.facecolor")
    try:
        r, g, b, alpha = to_rgba(face)
    except ValueError:
        return False
    if alpha == 0:
        r, g, b, _ = to_rgba(rc_param("figure.facecolor"))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5


def palette() -> tuple[str, ...]:
    """The system colours for the current background.

    Returns
    -------
    tuple of str
        ``PALETTE``, or ``DARK_PALETTE`` on a dark background.

    Examples
    --------
    >>> from retrieval_eval.viz import PALETTE, palette
    >>> palette() == PALETTE
    True
    """
    return DARK_PALETTE if is_dark() else PALETTE


def positive_color() -> str:
    """The positives' colour for the current background.

    Returns
    -------
    str
        ``POSITIVE_COLOR``, or ``DARK_POSITIVE_COLOR`` on a dark background.

    Examples
    --------
    >>> from retrieval_eval.viz import POSITIVE_COLOR, positive_color
    >>> positive_color() == POSITIVE_COLOR
    True
    """
    return DARK_POSITIVE_COLOR if is_dark() else POSITIVE_COLOR


def system_color(colors: Mapping[str, str] | None, system: str, index: int) -> str:
    """The system's fixed colour (its slot in ``colors``), for the current background.

    Parameters
    ----------
    colors : mapping or None
        ``{system: colour}`` in the order systems first appeared (:func:`system_colors`).
    system : str
    index : int
        The slot to take when ``system`` is not in ``colors``.

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import system_color, system_colors
    >>> system_color(system_colors(["dense", "bm25"]), "bm25", 0)
    '#CC79A7'
    """
    if colors is not None and is_dark():
        order = list(colors)
        colors = system_colors(order, dark=True)
    return color_of(colors, system, index, dark=is_dark())


def note_box(ax, text: str, y: float = 0.97):
    """A boxed note at the top of the axes (rank-based scores, few samples).

    Parameters
    ----------
    ax : matplotlib Axes
    text : str
    y : float, default 0.97
        Its top, in axes coordinates.

    Returns
    -------
    matplotlib.text.Text

    Examples
    --------
    >>> from retrieval_eval.viz import get_axes, note_box
    >>> (ax,), fig = get_axes(None)
    >>> note_box(ax, "few samples").get_text()
    'few samples'
    """
    return ax.text(
        0.5,
        y,
        text,
        transform=ax.transAxes,
        ha="center",
        va="top",
        fontsize="small",
        color=foreground(),
        wrap=False,
        bbox=dict(
            boxstyle="round,pad=0.3", facecolor=rc_param("axes.facecolor"), edgecolor=HIGHLIGHT_COLOR, linewidth=1.2
        ),
    )


def get_axes(ax, n: int = 1, size: tuple[float, float] = (5.2, 3.8)):
    """``n`` Axes: the given one(s), or a new row of subplots with constrained layout.

    Parameters
    ----------
    ax : matplotlib Axes, array of Axes or None
    n : int, default 1
    size : (float, float), default (5.2, 3.8)
        One new subplot's size in inches.

    Returns
    -------
    axes : list of matplotlib Axes
    figure : matplotlib Figure

    Raises
    ------
    ValueError
        When ``ax`` does not hold ``n`` Axes.

    Examples
    --------
    >>> from retrieval_eval.viz import get_axes
    >>> axes, fig = get_axes(None, 2)
    >>> len(axes), fig.get_size_inches().tolist()
    (2, [10.4, 3.8])
    """
    axes: Any  # a grid of Axes, or the list of the ones given
    if ax is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, n, figsize=(size[0] * n, size[1]), layout="constrained", squeeze=False)
        return list(axes[0]), fig
    axes = list(np.ravel(np.asarray(ax, dtype=object)))
    if len(axes) != n:
        raise ValueError(f"ax holds {len(axes)} Axes but this plot needs {n} (one per system)")
    return axes, axes[0].figure


def one_or_array(axes: list):
    """One Axes as itself, several as an array (a Display's ``ax_``, as scikit-learn's).

    Parameters
    ----------
    axes : list of matplotlib Axes

    Returns
    -------
    matplotlib Axes or numpy.ndarray

    Examples
    --------
    >>> from retrieval_eval.viz import get_axes, one_or_array
    >>> type(one_or_array(get_axes(None, 2)[0])).__name__
    'ndarray'
    """
    return axes[0] if len(axes) == 1 else np.asarray(axes, dtype=object)


def font_points(size) -> float:
    """A font size (``"small"``, 10) in points.

    Parameters
    ----------
    size : str or float

    Returns
    -------
    float

    Examples
    --------
    >>> from retrieval_eval.viz import font_points
    >>> font_points(12)
    12.0
    """
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=size).get_size_in_points())


def legend_below(
    ax,
    handles=None,
    labels=None,
    ncols: int = 2,
    title: str | None = None,
    extra_points: float = 0.0,
    ticklabels: bool = True,
    **kwargs,
):
    """A legend under the axes (below the x label), so it never hides data.

    Placed at a fixed offset in points from the axes' bottom edge (tick labels plus the x
    label), so it stays put when constrained layout resizes the axes.

    Parameters
    ----------
    ax : matplotlib Axes
    handles, labels : list, optional
        As ``Axes.legend`` takes them; by default the axes' labelled artists.
    ncols : int, default 2
    title : str, optional
    extra_points : float, default 0.0
        Further down by this much (rotated tick labels).
    ticklabels : bool, default True
        Whether the x axis shows tick labels (room for them).
    **kwargs
        To ``Axes.legend``.

    Returns
    -------
    matplotlib.legend.Legend

    Examples
    --------
    >>> from retrieval_eval.viz import get_axes, legend_below
    >>> (ax,), fig = get_axes(None)
    >>> _ = ax.plot([0, 1], label="dense")
    >>> [t.get_text() for t in legend_below(ax).get_texts()]
    ['dense']
    """
    from matplotlib.transforms import offset_copy

    drop = (
        rc_param("xtick.major.size")
        + rc_param("xtick.major.pad")
        + font_points(rc_param("xtick.labelsize"))
        + rc_param("axes.labelpad")
        + font_points(rc_param("axes.labelsize")) * 1.25
        + 2
        + extra_points
    )
    if not ticklabels:
        drop -= rc_param("xtick.major.size") + rc_param("xtick.major.pad") + font_points(rc_param("xtick.labelsize"))
    if not ax.get_xlabel():
        drop -= rc_param("axes.labelpad") + font_points(rc_param("axes.labelsize")) * 1.25
    transform = offset_copy(ax.transAxes, fig=ax.figure, x=0, y=-drop, units="points")
    args = () if handles is None else (handles, labels if labels is not None else [h.get_label() for h in handles])
    return ax.legend(
        *args,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=transform,
        ncols=ncols,
        frameon=False,
        title=title,
        fontsize="small",
        title_fontsize="small",
        **kwargs,
    )


def fmt_score(x) -> str:
    """A score for a label: 3 decimals for cosine-like values, 3 significant digits when tiny.

    Parameters
    ----------
    x : float or None

    Returns
    -------
    str
        ``"n/a"`` for a missing or infinite value.

    Examples
    --------
    >>> from retrieval_eval.viz import fmt_score
    >>> fmt_score(0.61234), fmt_score(0.0123456), fmt_score(1234.5), fmt_score(None)
    ('0.612', '0.0123', '1234.5', 'n/a')
    """
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


def score_axis_label(score_label, prefix: str = "top-1 score", system: str | None = None) -> str:
    """``"top-1 score (cosine)"`` when the score's kind is known, else ``"top-1 score"``.

    Parameters
    ----------
    score_label : str, mapping or None
        One kind for every system or a mapping ``{system: kind}`` (a hybrid run mixes
        cosines, BM25 and RRF, and only some are cosines).
    prefix : str, default "top-1 score"
    system : str, optional
        The system whose kind a mapping gives.

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import score_axis_label
    >>> score_axis_label({"dense": "cosine"}, system="dense"), score_axis_label(None)
    ('top-1 score (cosine)', 'top-1 score')
    """
    if isinstance(score_label, Mapping):
        score_label = score_label.get(system)
    return f"{prefix} ({score_label})" if score_label else prefix


def quantile_text(quantile, method=None) -> str:
    """How a cutoff was chosen, for its label.

    Parameters
    ----------
    quantile : float or None
        The positives' quantile (NaN or None for a fixed cutoff).
    method : str, optional
        ``"conformal"`` for ``calibrate(..., guarantee=...)``.

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import quantile_text
    >>> quantile_text(0.1), quantile_text(float("nan")), quantile_text(0.1, "conformal")
    ('p10 of positives', 'fixed', 'split conformal')
    """
    if isinstance(method, str) and method == "conformal":  # calibrate(..., guarantee=...)
        return "split conformal"
    if quantile is None or not np.isfinite(quantile):
        return "fixed"
    return f"p{float(quantile) * 100:g} of positives"


def select_systems(available: Iterable[Any], system) -> list[str]:
    """The systems a Display draws: all, or the ones named (refusing an unknown one).

    Parameters
    ----------
    available : sequence of str
    system : str, list of str or None

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        Naming the unknown systems and the available ones.

    Examples
    --------
    >>> from retrieval_eval.viz import select_systems
    >>> select_systems(["dense", "bm25"], None), select_systems(["dense", "bm25"], "bm25")
    (['dense', 'bm25'], ['bm25'])
    """
    available = [str(s) for s in available]
    if system is None:
        return available
    wanted = [system] if isinstance(system, str) else [str(s) for s in system]
    unknown = [s for s in wanted if s not in available]
    if unknown:
        raise ValueError(f"no system {', '.join(map(repr, unknown))}; available: {', '.join(available)}")
    return wanted
