"""Evaluation: per-query numbers from a run and its labels, and the result that carries them.

:mod:`.core` holds ``evaluate``, ``score`` and ``build_report``; :mod:`.result` the
:class:`Evaluation` and the finish every path shares; :mod:`.strata` the per-stratum tables;
:mod:`.measurement` the Measurement (mean, interval, n) of one metric; :mod:`.streaming`,
:mod:`.blocks` and :mod:`.heads` the block-by-block path for runs larger than memory (and what a
streamed run keeps for calibration).

The old module path ``retrieval_eval.analysis.evaluation`` is this package: it re-exports the
names that module had, so ``from retrieval_eval.analysis.evaluation import evaluate`` works as
before, without a warning.
"""

from __future__ import annotations

from .core import (
    DEFAULT_K,
    DEFAULT_THRESHOLD,
    Evaluation,
    Measurement,
    ScoreResult,
    StrataScores,
    StratumScore,
    build_report,
    coerce,
    dedupe,
    evaluate,
    evaluate_frames,
    finish_evaluation,
    judgment_key,
    measurements,
    negative_id_list,
    query_metrics,
    relevance_by_query,
    score,
    score_by_stratum,
    stratum_scores,
    worst_stratum,
)

__all__ = [
    "DEFAULT_K",
    "DEFAULT_THRESHOLD",
    "Evaluation",
    "Measurement",
    "Report",
    "ScoreResult",
    "StrataScores",
    "StratumScore",
    "build_report",
    "coerce",
    "dedupe",
    "evaluate",
    "evaluate_frames",
    "finish_evaluation",
    "judgment_key",
    "measurements",
    "negative_id_list",
    "query_metrics",
    "relevance_by_query",
    "score",
    "score_by_stratum",
    "stratum_scores",
    "worst_stratum",
]


def __getattr__(name):
    # The report is built on an evaluation (decisions sit above evaluation): loaded on use.
    if name == "Report":
        from ..decisions.report import Report

        return Report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
