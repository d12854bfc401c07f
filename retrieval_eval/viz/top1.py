"""What the out-of-distribution Displays read from a calibration: the top-1 scores of its
positives and negatives, the score's kind, and the columns of its summary they show.

Also the one place a Display turns bare (label, score) pairs into a calibration
(``from_predictions``): the pairs go to the analysis layer's :func:`calibrate
<retrieval_eval.analysis.calibration.calibrate>` as one-hit rankings, so every figure comes
from the analysis code, none from here.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..model import ID

__all__ = ["calibration_from_predictions", "class_frame", "class_scores", "score_label_of", "with_method"]


def score_label_of(cal, score_label):
    """The score's kind for axis labels: the argument, else what the calibration says.

    Parameters
    ----------
    cal : Calibration
    score_label : str, mapping or None

    Returns
    -------
    str, mapping or None

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from retrieval_eval.viz import score_label_of
    >>> cal = SimpleNamespace(settings={"score_kind": "cosine"})
    >>> score_label_of(cal, None), score_label_of(cal, "bm25")
    ('cosine', 'bm25')
    """
    if score_label is not None:
        return score_label if isinstance(score_label, Mapping) else (score_label or None)
    for source in (
        getattr(cal, "score_kind", None),
        getattr(cal, "settings", {}).get("score_kind") if isinstance(getattr(cal, "settings", None), Mapping) else None,
    ):
        if isinstance(source, str):
            return source
    return None


def class_frame(cal, systems: list[str]) -> pd.DataFrame:
    """Positives and negatives with a top-1 score, for the given systems, in calibration order.

    Parameters
    ----------
    cal : Calibration
    systems : list of str

    Returns
    -------
    pandas.DataFrame
        ``system, query_id, kind, top1_score`` (and ``stratum``, ``query`` when known).

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import class_frame
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> sorted(set(class_frame(cal, ["dense"])["kind"]))
    ['negative', 'positive']
    """
    t = cal.top1
    keep = t["system"].isin(pd.Index(systems, dtype=ID)) & t["kind"].isin(["positive", "negative"])
    score = t["top1_score"].to_numpy(np.float64)
    keep = keep.to_numpy() & np.isfinite(score)
    cols = [c for c in ("system", "query_id", "kind", "stratum", "query", "top1_score") if c in t.columns]
    out = t.loc[keep, cols].reset_index(drop=True)
    return out


def class_scores(frame: pd.DataFrame, system: str) -> tuple[np.ndarray, np.ndarray]:
    """One system's positives' and negatives' top-1 scores.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`class_frame`'s.
    system : str

    Returns
    -------
    positives, negatives : numpy.ndarray

    Examples
    --------
    >>> import retrieval_eval as rev
    >>> from retrieval_eval.viz import class_frame, class_scores
    >>> demo = rev.load_demo()
    >>> cal = rev.calibrate(demo.judgments, demo.runs, queries=demo.queries)
    >>> pos, neg = class_scores(class_frame(cal, ["dense"]), "dense")
    >>> bool(pos.mean() > neg.mean())
    True
    """
    sub = frame[frame["system"] == system]
    score = sub["top1_score"].to_numpy(np.float64)
    kind = sub["kind"].to_numpy(dtype=object)
    return score[kind == "positive"], score[kind == "negative"]


def calibration_from_predictions(y_true, y_score, cutoff=None, quantile: float = 0.10, name: str = "system"):
    """A :class:`~retrieval_eval.Calibration` of bare (label, top-1 score) pairs.

    The analysis is :func:`~retrieval_eval.analysis.calibration.calibrate_scores` (each pair a
    one-hit ranking through :func:`~retrieval_eval.calibrate`, so every figure comes from the
    same code as for a real run); the displays' ``from_predictions`` call it through here.

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
        The one system's name.

    Returns
    -------
    Calibration

    Raises
    ------
    ValueError
        When the two lengths differ or a score is not finite.

    Examples
    --------
    >>> from retrieval_eval.viz import calibration_from_predictions
    >>> cal = calibration_from_predictions([True, True, False], [0.9, 0.8, 0.3])
    >>> float(cal.summary.loc["system", "auroc"])
    1.0
    """
    from ..analysis.calibration.core import calibrate_scores

    # One bootstrap resample: a display draws the figures, not their intervals.
    return calibrate_scores(y_true, y_score, cutoff=cutoff, quantile=quantile, name=name, n_resamples=1)


def with_method(summary: pd.DataFrame, cols: list[str]) -> list[str]:
    """``cols``, plus the ``method`` column a guaranteed calibration adds.

    Parameters
    ----------
    summary : pandas.DataFrame
        A calibration's summary.
    cols : list of str

    Returns
    -------
    list of str

    Examples
    --------
    >>> import pandas as pd
    >>> from retrieval_eval.viz import with_method
    >>> with_method(pd.DataFrame(columns=["cutoff", "method"]), ["cutoff"])
    ['cutoff', 'method']
    """
    return cols + ["method"] * ("method" in summary.columns)
