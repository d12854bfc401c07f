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

__all__ = ["calibration_from_predictions", "class_frame", "class_scores", "score_label_of",
           "with_method"]


def score_label_of(cal, score_label):
    """The score's kind for axis labels: the argument, else what the calibration says."""
    if score_label is not None:
        return score_label if isinstance(score_label, Mapping) else (score_label or None)
    for source in (getattr(cal, "score_kind", None), getattr(cal, "settings", {}).get("score_kind")
                   if isinstance(getattr(cal, "settings", None), Mapping) else None):
        if isinstance(source, str):
            return source
    return None


def class_frame(cal, systems: list[str]) -> pd.DataFrame:
    """Positives and negatives with a top-1 score, for the given systems, in calibration order."""
    t = cal.top1
    keep = t["system"].isin(pd.Index(systems, dtype=ID)) & t["kind"].isin(["positive", "negative"])
    score = t["top1_score"].to_numpy(np.float64)
    keep = keep.to_numpy() & np.isfinite(score)
    cols = [c for c in ("system", "query_id", "kind", "stratum", "query", "top1_score")
            if c in t.columns]
    out = t.loc[keep, cols].reset_index(drop=True)
    return out


def class_scores(frame: pd.DataFrame, system: str) -> tuple[np.ndarray, np.ndarray]:
    sub = frame[frame["system"] == system]
    score = sub["top1_score"].to_numpy(np.float64)
    kind = sub["kind"].to_numpy(dtype=object)
    return score[kind == "positive"], score[kind == "negative"]


def calibration_from_predictions(y_true, y_score, cutoff=None, quantile: float = 0.10,
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



def with_method(summary: pd.DataFrame, cols: list[str]) -> list[str]:
    """``cols``, plus the ``method`` column a guaranteed calibration adds."""
    return cols + ["method"] * ("method" in summary.columns)

