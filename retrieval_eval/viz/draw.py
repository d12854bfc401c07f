"""Drawing helpers the Displays share: axes, the theme's colours, notes, legends, labels.

Text, reference lines and edges take their colour from ``rcParams`` (``text.color``,
``axes.edgecolor``), so ``plt.style.context("dark_background")`` works unchanged; a system's
colour is its slot in :mod:`retrieval_eval.viz.style`, in the dark variant on a dark
background. Legends sit below their axes so they never cover data. matplotlib is imported
inside each helper, never at module level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .style import (
    DARK_PALETTE,
    DARK_POSITIVE_COLOR,
    HIGHLIGHT_COLOR,
    PALETTE,
    POSITIVE_COLOR,
    color_of,
    system_colors,
)

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
    import matplotlib as mpl

    return mpl.rcParams[name]


def foreground() -> Any:
    """The theme's foreground colour (text), for reference lines and annotations."""
    return rc_param("text.color")


def is_dark() -> bool:
    """Whether the current style draws on a dark background (axes face luminance < 0.5)."""
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
    """Okabe-Ito, with the dark blue moved back and the sky blue forward on a dark background."""
    return DARK_PALETTE if is_dark() else PALETTE


def positive_color() -> str:
    return DARK_POSITIVE_COLOR if is_dark() else POSITIVE_COLOR


def system_color(colors: Mapping[str, str] | None, system: str, index: int) -> str:
    """The system's fixed colour (its slot in ``colors``), for the current background."""
    if colors is not None and is_dark():
        order = list(colors)
        colors = system_colors(order, dark=True)
    return color_of(colors, system, index, dark=is_dark())


def note_box(ax, text: str, y: float = 0.97):
    """A boxed note at the top of the axes (rank-based scores, few samples)."""
    return ax.text(0.5, y, text, transform=ax.transAxes, ha="center", va="top",
                   fontsize="small", color=foreground(), wrap=False,
                   bbox=dict(boxstyle="round,pad=0.3", facecolor=rc_param("axes.facecolor"),
                             edgecolor=HIGHLIGHT_COLOR, linewidth=1.2))


def get_axes(ax, n: int = 1, size: tuple[float, float] = (5.2, 3.8)):
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


def one_or_array(axes: list):
    return axes[0] if len(axes) == 1 else np.asarray(axes, dtype=object)


def font_points(size) -> float:
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=size).get_size_in_points())


def legend_below(ax, handles=None, labels=None, ncols: int = 2, title: str | None = None,
                  extra_points: float = 0.0, ticklabels: bool = True, **kwargs):
    """A legend under the axes (below the x label), so it never hides data.

    Placed at a fixed offset in points from the axes' bottom edge (tick labels plus the x
    label), so it stays put when constrained layout resizes the axes.
    """
    from matplotlib.transforms import offset_copy

    drop = (rc_param("xtick.major.size") + rc_param("xtick.major.pad") + font_points(rc_param("xtick.labelsize"))
            + rc_param("axes.labelpad") + font_points(rc_param("axes.labelsize")) * 1.25 + 2 + extra_points)
    if not ticklabels:
        drop -= rc_param("xtick.major.size") + rc_param("xtick.major.pad") + font_points(rc_param("xtick.labelsize"))
    if not ax.get_xlabel():
        drop -= rc_param("axes.labelpad") + font_points(rc_param("axes.labelsize")) * 1.25
    transform = offset_copy(ax.transAxes, fig=ax.figure, x=0, y=-drop, units="points")
    args = () if handles is None else (handles, labels if labels is not None
                                       else [h.get_label() for h in handles])
    return ax.legend(*args, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                     bbox_transform=transform, ncols=ncols, frameon=False, title=title,
                     fontsize="small", title_fontsize="small", **kwargs)


def fmt_score(x) -> str:
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


def score_axis_label(score_label, prefix: str = "top-1 score", system: str | None = None) -> str:
    """``"top-1 score (cosine)"`` when the score's kind is known, else ``"top-1 score"``.

    ``score_label`` is one kind for every system or a mapping ``{system: kind}`` (a hybrid
    run mixes cosines, BM25 and RRF, and only some are cosines)."""
    if isinstance(score_label, Mapping):
        score_label = score_label.get(system)
    return f"{prefix} ({score_label})" if score_label else prefix


def quantile_text(quantile, method=None) -> str:
    if isinstance(method, str) and method == "conformal":  # calibrate(..., guarantee=...)
        return "split conformal"
    if quantile is None or not np.isfinite(quantile):
        return "fixed"
    return f"p{float(quantile) * 100:g} of positives"


def select_systems(available: Sequence[str], system) -> list[str]:
    available = [str(s) for s in available]
    if system is None:
        return available
    wanted = [system] if isinstance(system, str) else [str(s) for s in system]
    unknown = [s for s in wanted if s not in available]
    if unknown:
        raise ValueError(f"no system {', '.join(map(repr, unknown))}; "
                         f"available: {', '.join(available)}")
    return wanted
