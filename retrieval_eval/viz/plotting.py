"""Shortcuts the result objects' ``.plot()`` call: one function per result, one Display each.

:func:`plot_calibration`, :func:`plot_evaluation`, :func:`plot_drift` and
:func:`plot_comparison` pick the Display (scikit-learn's pattern: precomputed values,
``from_*`` constructors, ``.plot(ax=None)`` returning the display, matplotlib imported inside
``plot`` only, never ``plt.show()``) and pass the keywords on. The Displays live in the module
of their subject: :mod:`~retrieval_eval.viz.calibration`, :mod:`~retrieval_eval.viz.tradeoff`,
:mod:`~retrieval_eval.viz.evaluation`, :mod:`~retrieval_eval.viz.drift`; all are importable
from :mod:`retrieval_eval.viz`.
"""

from __future__ import annotations

from .calibration import PrecisionRecallDisplay, RocCurveDisplay, ScoreDistributionDisplay
from .drift import DriftDisplay
from .evaluation import MetricAtKDisplay, PerQueryDeltaDisplay, StratumDisplay
from .tradeoff import CutoffTradeoffDisplay

__all__ = ["plot_calibration", "plot_comparison", "plot_drift", "plot_evaluation"]

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
