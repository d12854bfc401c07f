"""The demo's figures (``retrieval-eval demo``): one PNG each, drawn by
:mod:`retrieval_eval.viz.plotting` on a fresh Figure, with the caption the page shows under it.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ..io.safewrite import atomic_write_bytes

__all__ = ["demo_plots", "save_figure"]

#: A figure: its file name, what draws it on an Axes, its size (inches) and its caption.
FigureSpec = tuple[str, Any, tuple[float, float], str]


def save_figure(draw, path: Path, figsize=(6.4, 4.2)) -> Path:
    """Draw on a fresh Figure (no pyplot, so no GUI backend and no global state) and save it."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    draw(ax)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    atomic_write_bytes(path, buffer.getvalue())  # the one safe write path (retrieval_eval.safewrite)
    return path


def demo_plots(
    out: Path, ev, calibration, drift_result, comparison, k: int, baseline: str
) -> dict[str, tuple[Path, str]]:
    """The demo's figures, one PNG each in ``out``, with captions: ``{name: (path, caption)}``.

    ``k`` is the demo's cutoff and ``baseline`` its comparison baseline (named in captions and
    the per-query differences).
    """
    figures = _calibration_figures(calibration) + _evaluation_figures(ev, comparison, drift_result, k, baseline)
    return {name: (save_figure(draw, out / name, size), caption) for name, draw, size, caption in figures}


def _calibration_figures(calibration) -> list[FigureSpec]:
    """A score distribution per calibrated system, then ROC, precision-recall and dense's
    cutoff trade-off."""
    from ..viz import plotting

    figures: list[FigureSpec] = []
    for system in calibration.summary.index:
        figures.append(
            (
                f"scores-{system}.png",
                lambda ax, s=system: plotting.plot_calibration(calibration, "distribution", ax=ax, system=s),
                (6.4, 4.4),
                f"Top-1 scores of {system}: in-distribution queries (positives, blue) against "
                "out-of-distribution ones (negatives, orange), each as a share of its own class. "
                "The dashed line is the calibrated cutoff; the less the two shapes overlap, the "
                "better a cutoff separates them. The title is in the system's colour.",
            )
        )
    figures += [
        (
            "roc.png",
            lambda ax: plotting.plot_calibration(calibration, "roc", ax=ax),
            (5.6, 6.2),
            "ROC of the top-1 score, one line per system in its colour: the share of positives "
            "kept (up) against the share of negatives kept (right) as the cutoff falls. A curve "
            "hugging the top-left corner separates well; the dotted diagonal is chance.",
        ),
        (
            "pr.png",
            lambda ax: plotting.plot_calibration(calibration, "pr", ax=ax),
            (5.6, 6.2),
            "Precision-recall of the top-1 score for finding in-distribution queries: how many "
            "of the queries kept are covered (up) against how many covered ones are kept "
            "(right). Dotted lines: the positives' share, what a random score would reach.",
        ),
        (
            "tradeoff.png",
            lambda ax: plotting.plot_calibration(calibration, "tradeoff", ax=ax, system="dense"),
            (6.4, 4.6),
            "What a cutoff on dense's top-1 score keeps and rejects: the share of negatives "
            "below it (orange, rises) and of positives at or above it (blue, falls). The dotted "
            "line and dots mark the calibrated cutoff.",
        ),
    ]
    return figures


def _evaluation_figures(ev, comparison, drift_result, k: int, baseline: str) -> list[FigureSpec]:
    """Recall per stratum, recall@k, the comparison, dense's per-query differences from the
    baseline and the label drift."""
    from ..viz import plotting

    return [
        (
            "strata.png",
            lambda ax: plotting.plot_evaluation(ev, "strata", ax=ax, metric="recall"),
            (6.4, 5.2),
            f"recall@{k} per stratum of queries, one bar per system in its colour, n (queries) "
            "beside each bar, the 95% t interval clipped to [0, 1]. The hatched bar is each "
            "system's worst stratum, the one a worst-stratum gate watches; pale bars are thin "
            "strata (fewer than 5 queries).",
        ),
        (
            "recall-at-k.png",
            lambda ax: plotting.plot_evaluation(ev, "metric_at_k", ax=ax, metric="recall"),
            (6.4, 4.4),
            "recall@k at each cutoff k the demo computed (1, 5, 10), one line per system: how "
            "much of what is relevant each system finds as it shows more results.",
        ),
        (
            "comparison.png",
            lambda ax: comparison.plot(ax=ax),
            (6.4, 4.4),
            f"Mean difference from {comparison.baseline} per system and metric with its 95% "
            "bootstrap interval; filled markers are significant after the Holm correction, hollow "
            "ones are not. Right of the vertical line: better than the baseline.",
        ),
        (
            "delta.png",
            lambda ax: plotting.plot_evaluation(
                ev, "delta", ax=ax, metric="ndcg", baseline=baseline, candidate="dense"
            ),
            (6.4, 4.4),
            f"nDCG@{k} per query, dense minus bm25, sorted: bars in dense's colour are "
            "queries where dense ranks better, bars in bm25's colour those where bm25 does, grey "
            "dots ties. A mean can hide many small losses behind a few large wins; this shows "
            "which it is.",
        ),
        (
            "drift.png",
            lambda ax: plotting.plot_drift(drift_result, ax=ax),
            (6.4, 4.2),
            "What re-chunking the corpus does to the labels: how many stay VALID, how many a "
            "tool can re-anchor (RE_ANCHORABLE, MERGED) and how many need a person (SPLIT, "
            "ORPHANED).",
        ),
    ]
