"""The one plot style every figure follows: colours, and the rules for thin data.

Colours
    A system keeps one colour in every plot, the widget and the demo page, decided here only:
    a pinned system (:func:`pin_system_colors`; the bundled demo's dense, bm25 and rrf from the
    start) always takes its own slot, whatever subset a plot draws, and the others take the
    free slots by order of first appearance (the order of the run, the order ``evaluate`` and
    ``calibrate`` report systems in). So ``rrf`` is the same colour in the ROC, the stratum
    bars, the cutoff explorer and every notebook. The two
    classes of the out-of-distribution plots, positives (covered queries) and negatives
    (``expect_none`` queries), get two colours of their own that no system ever takes: a blue
    that means "positives" cannot also mean "dense". The palettes are Okabe-Ito and Paul Tol
    colour-blind-safe colours; the dark variants swap the colours that vanish on black.

Thin data
    ``THIN_STRATUM`` (5): a stratum with fewer scored queries is marked "thin" on the plot; its
    mean moves with a single query. ``FEW_SAMPLES`` (10): a score distribution with fewer
    positives or negatives says so on the plot, as its AUROC and cutoff rest on a handful of
    scores. Bounded metrics (every measure of the engine lies in [0, 1]) have their intervals
    clipped to [0, 1]: a t interval over two queries can reach -5, which no mean can.

Nothing here imports matplotlib at module level.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

__all__ = [
    "DARK_PALETTE",
    "DARK_POSITIVE_COLOR",
    "DARK_SYSTEM_COLORS",
    "DRIFT_COLORS",
    "FEW_SAMPLES",
    "HIGHLIGHT_COLOR",
    "LOSS_COLOR",
    "NEGATIVE_COLOR",
    "PALETTE",
    "POSITIVE_COLOR",
    "SYSTEM_COLORS",
    "THIN_STRATUM",
    "WIN_COLOR",
    "clip_interval",
    "color_of",
    "pin_system_colors",
    "is_bounded",
    "system_colors",
]

#: System colours in order of first appearance (light background). None of them is
#: ``POSITIVE_COLOR`` or ``NEGATIVE_COLOR``.
SYSTEM_COLORS = ("#009E73", "#CC79A7", "#D55E00", "#332288", "#999933", "#882255", "#44AA99", "#666666")
#: The same slots for dark backgrounds (indigo and wine lightened so they read on black).
DARK_SYSTEM_COLORS = ("#009E73", "#CC79A7", "#D55E00", "#AA99EE", "#DDCC77", "#EE6688", "#44AA99", "#BBBBBB")
#: In-distribution (covered) queries: positives. Reserved: no system takes it.
POSITIVE_COLOR = "#0072B2"
DARK_POSITIVE_COLOR = "#56B4E9"
#: ``expect_none`` (out-of-distribution) queries: negatives. Reserved: no system takes it.
NEGATIVE_COLOR = "#E69F00"
#: The system slots under the names the Displays have always used.
PALETTE = SYSTEM_COLORS
#: The same slots for dark backgrounds.
DARK_PALETTE = DARK_SYSTEM_COLORS
#: Bars of per-query differences won by the candidate / by the baseline (systems uncoloured).
WIN_COLOR = "#009E73"
LOSS_COLOR = "#D55E00"
#: The edge of on-plot notes (rank-based scores, few samples).
HIGHLIGHT_COLOR = "#D55E00"
#: One colour per drift status.
DRIFT_COLORS = {
    "VALID": "#009E73",
    "RE_ANCHORABLE": "#56B4E9",
    "MERGED": "#0072B2",
    "SPLIT": "#E69F00",
    "ORPHANED": "#D55E00",
}

#: A stratum with fewer scored queries than this is marked thin.
THIN_STRATUM = 5
#: A distribution with fewer positives or negatives than this says so on the plot.
FEW_SAMPLES = 10

#: Base names of the engine's measures: every one lies in [0, 1].
_BOUNDED = frozenset(
    {
        "precision",
        "recall",
        "ndcg",
        "ndcg_linear",
        "mrr",
        "map",
        "hit_rate",
        "judged",
        "r_precision",
        "rprec",
        "success",
        "negative_satisfaction",
        "positive_retention",
        "auroc",
        "aupr_in",
        "aupr_out",
        "fpr@95tpr",
    }
)


#: Systems whose colour slot is fixed wherever they appear, whatever subset a plot draws: the
#: bundled demo's, in its run order (:func:`pin_system_colors` replaces them with yours).
_PINNED: dict[str, int] = {"dense": 0, "bm25": 1, "rrf": 2}


def pin_system_colors(systems: Iterable[str]) -> dict[str, str]:
    """Fix the colour of each of ``systems`` (the i-th takes ``SYSTEM_COLORS[i]``) in every plot.

    Without pins a plot colours its systems by order of first appearance among the systems it
    draws, so a plot of a subset (the candidates of a comparison, without their baseline) could
    give ``rrf`` another system's colour. Pinned systems keep their slot in every plot of the
    session; the bundled demo's systems (dense, bm25, rrf) are pinned from the start, so every
    notebook and the demo page draw them alike. Calling this replaces the pins.

    Parameters
    ----------
    systems : iterable of str

    Returns
    -------
    dict of str to str
        The pinned colours.

    Examples
    --------
    >>> from retrieval_eval.viz import pin_system_colors, system_colors
    >>> _ = pin_system_colors(["base", "new"])
    >>> system_colors(["new"])
    {'new': '#CC79A7'}
    >>> _ = pin_system_colors(["dense", "bm25", "rrf"])
    """
    order = list(dict.fromkeys(str(s) for s in systems))
    _PINNED.clear()
    _PINNED.update({s: i % len(SYSTEM_COLORS) for i, s in enumerate(order)})
    return system_colors(order)


def system_colors(systems: Iterable[str], dark: bool = False) -> dict[str, str]:
    """``{system: colour}``: a pinned system's own colour, the others by order of first
    appearance in ``systems`` (duplicates ignored) in the slots no pinned system here takes.

    A system keeps its colour across plots that draw the same systems; a pinned one
    (:func:`pin_system_colors`; the bundled demo's dense, bm25 and rrf by default) keeps it in
    every plot, whatever subset it draws. Past the palette's length the colours repeat (a
    ninth system shares the first's colour): more lines than that on one axes are unreadable
    in any palette.

    Parameters
    ----------
    systems : iterable of str
    dark : bool, default False
        The slots for a dark background.

    Returns
    -------
    dict of str to str

    Examples
    --------
    >>> from retrieval_eval.viz import system_colors
    >>> system_colors(["dense", "bm25", "dense"])
    {'dense': '#009E73', 'bm25': '#CC79A7'}
    >>> system_colors(["rrf"])
    {'rrf': '#D55E00'}
    """
    palette = DARK_SYSTEM_COLORS if dark else SYSTEM_COLORS
    order = list(dict.fromkeys(str(s) for s in systems))
    slots = {s: _PINNED[s] for s in order if s in _PINNED}
    free = (i for i in range(10 * len(palette)) if i % len(palette) not in set(slots.values()))
    out = {}
    for s in order:
        slot = slots[s] if s in slots else next(free)
        out[s] = palette[slot % len(palette)]
    return out


def color_of(colors: Mapping[str, str] | None, system: str, index: int = 0, dark: bool = False) -> str:
    """The system's colour from a ``system_colors`` mapping (its slot ``index`` when absent).

    Parameters
    ----------
    colors : mapping or None
    system : str
    index : int, default 0
    dark : bool, default False

    Returns
    -------
    str

    Examples
    --------
    >>> from retrieval_eval.viz import color_of
    >>> color_of(None, "rrf", 1)
    '#CC79A7'
    """
    if colors is not None and str(system) in colors:
        return colors[str(system)]
    palette = DARK_SYSTEM_COLORS if dark else SYSTEM_COLORS
    return palette[index % len(palette)]


def is_bounded(metric: str) -> bool:
    """Whether ``metric`` (``recall@10``, ``ndcg_linear@5``, ``auroc``) lies in [0, 1].

    Parameters
    ----------
    metric : str

    Returns
    -------
    bool

    Examples
    --------
    >>> from retrieval_eval.viz import is_bounded
    >>> is_bounded("ndcg_linear@5"), is_bounded("dcg@10")
    (True, False)
    """
    name = str(metric)
    if name in _BOUNDED:
        return True
    return name.split("@", 1)[0] in _BOUNDED


def clip_interval(low, high, metric: str):
    """``(low, high)`` clipped to [0, 1] for a bounded metric, unchanged otherwise (NaN kept).

    A Student-t interval is symmetric around the mean, so over a few queries it leaves the
    metric's range; the part outside [0, 1] holds no possible mean and is not drawn.

    Parameters
    ----------
    low, high : array-like of float
    metric : str

    Returns
    -------
    low, high : numpy.ndarray

    Examples
    --------
    >>> from retrieval_eval.viz import clip_interval
    >>> [x.tolist() for x in clip_interval([-0.2], [1.3], "recall@10")]
    [[0.0], [1.0]]
    """
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    if not is_bounded(metric):
        return low, high
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
