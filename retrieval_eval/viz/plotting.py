"""Shortcuts the result objects' ``.plot()`` call: one function per result, one Display each.

:func:`plot_calibration`, :func:`plot_evaluation`, :func:`plot_drift` and
:func:`plot_comparison` pick the Display (scikit-learn's pattern: precomputed values,
``from_*`` constructors, ``.plot(ax=None)`` returning the display, matplotlib imported inside
``plot`` only, never ``plt.show()``) and pass the keywords on. The Displays live in the module
of their subject: :mod:`~retrieval_eval.viz.calibration`, :mod:`~retrieval_eval.viz.curves`,
:mod:`~retrieval_eval.viz.tradeoff`, :mod:`~retrieval_eval.viz.evaluation`,
:mod:`~retrieval_eval.viz.delta`, :mod:`~retrieval_eval.viz.drift`; all are importable from
:mod:`retrieval_eval.viz`.
"""

from __future__ import annotations

from typing import Any

from .calibration import ScoreDistributionDisplay
from .curves import PrecisionRecallDisplay, RocCurveDisplay
from .delta import PerQueryDeltaDisplay
from .drift import DriftDisplay
from .evaluation import MetricAtKDisplay, StratumDisplay
from .tradeoff import CutoffTradeoffDisplay

__all__ = ["plot_calibration", "plot_comparison", "plot_drift", "plot_evaluation"]

_CALIBRATION_KINDS = ("distribution", "roc", "pr", "tradeoff")
_EVALUATION_KINDS = ("strata", "metric_at_k", "delta")


def plot_calibration(calibration, kind: str = "distribution", ax=None, system=None, **kwargs):
    """Draw a calibration; returns the display (what ``Calibration.plot`` returns).

    Parameters
    ----------
    calibration : Calibration
        A :func:`~retrieval_eval.calibrate` result.
    kind : {"distribution", "roc", "pr", "tradeoff"}, default "distribution"
        :class:`ScoreDistributionDisplay`, :class:`RocCurveDisplay`,
        :class:`PrecisionRecallDisplay` (AUPR-in; pass ``positive="out"`` for AUPR-out) or
        :class:`CutoffTradeoffDisplay`.
    ax : matplotlib Axes, optional
    system : str or list of str, optional
    **kwargs
        To the constructor (``score_label``, ``positive``, ``cutoffs``, ``grid_size``) or to
        ``plot``.

    Returns
    -------
    ScoreDistributionDisplay, RocCurveDisplay, PrecisionRecallDisplay or CutoffTradeoffDisplay

    Raises
    ------
    ValueError
        For an unknown ``kind``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import plot_calibration
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> type(plot_calibration(cal, "roc")).__name__
    'RocCurveDisplay'
    """
    build_keys = {
        "distribution": {"score_label"},
        "roc": set(),
        "pr": {"positive"},
        "tradeoff": {"score_label", "cutoffs", "grid_size"},
    }
    if kind not in build_keys:
        raise ValueError(f"kind must be one of {', '.join(_CALIBRATION_KINDS)}, got {kind!r}")
    build = {k: kwargs.pop(k) for k in list(kwargs) if k in build_keys[kind]}
    cls: Any = {
        "distribution": ScoreDistributionDisplay,
        "roc": RocCurveDisplay,
        "pr": PrecisionRecallDisplay,
        "tradeoff": CutoffTradeoffDisplay,
    }[kind]
    return cls.from_calibration(calibration, system=system, **build).plot(ax=ax, **kwargs)


def plot_evaluation(evaluation, kind: str = "strata", ax=None, metric: str | None = None, **kwargs):
    """Draw an evaluation; returns the display (what ``Evaluation.plot`` returns).

    Parameters
    ----------
    evaluation : Evaluation
        An :func:`~retrieval_eval.evaluate` result.
    kind : {"strata", "metric_at_k", "delta"}, default "strata"
        :class:`StratumDisplay` (default metric recall at the largest k),
        :class:`MetricAtKDisplay` (default recall) or :class:`PerQueryDeltaDisplay` of two
        systems (default nDCG).
    ax : matplotlib Axes, optional
    metric : str, optional
    **kwargs
        ``k``, ``system``, ``baseline``, ``candidate`` to the constructor, the rest to
        ``plot``.

    Returns
    -------
    StratumDisplay, MetricAtKDisplay or PerQueryDeltaDisplay

    Raises
    ------
    ValueError
        For an unknown ``kind``.

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import plot_evaluation
    >>> demo = rev.load_demo()
    >>> ev = rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)
    >>> plot_evaluation(ev, "metric_at_k", metric="ndcg").metric
    'ndcg'
    """
    build: dict[str, Any]
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
    """Draw a drift result's status counts (what ``DriftResult.plot`` returns).

    Parameters
    ----------
    result : DriftResult
        A :func:`~retrieval_eval.drift` result.
    ax : matplotlib Axes, optional

    Returns
    -------
    DriftDisplay

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import plot_drift
    >>> demo = rev.load_demo()
    >>> round(plot_drift(rev.drift(demo.judgments, demo.corpus_v2)).invalid_ratio, 3)
    0.367
    """
    return DriftDisplay.from_drift(result).plot(ax=ax)


def plot_comparison(comparison, ax=None, metric: str | None = None, system: str | None = None, **kwargs):
    """Draw a comparison's per-query differences for one candidate.

    Parameters
    ----------
    comparison : Comparison
        A :func:`~retrieval_eval.compare` result.
    ax : matplotlib Axes, optional
    metric : str, optional
        A compared metric (default: the first).
    system : str, optional
        A candidate (default: the first).
    **kwargs
        To :meth:`PerQueryDeltaDisplay.plot`.

    Returns
    -------
    PerQueryDeltaDisplay

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import plot_comparison
    >>> demo = rev.load_demo()
    >>> cmp = rev.compare(demo.judgments, demo.runs, baseline="bm25", queries=demo.queries,
    ...                   seed=0)
    >>> plot_comparison(cmp).candidate
    'dense'
    """
    return PerQueryDeltaDisplay.from_comparison(comparison, metric, system).plot(ax=ax, **kwargs)
