"""Calibration: the score cutoff that tells in-distribution queries from out-of-distribution ones.

:mod:`.core` holds ``calibrate`` (and ``calibrate_scores``); :mod:`.calibration_input` checks and
converts its inputs; :mod:`.tables` lays out its frames; :mod:`.calibration_result` the
:class:`Calibration` result; :mod:`.cutoffs` the cutoff rules and sweeps; :mod:`.separation`
how well scores separate positives from negatives; :mod:`.rank_based` the check for
rank-shaped scores; :mod:`.guarantee` the split-conformal guarantees;
:mod:`.calibration_compare` calibrations of several systems side by side; :mod:`.shift`
whether a new run's scores moved from the calibration's (its KS test and PSI in
:mod:`.shift_stats`).

The old module path ``retrieval_eval.analysis.calibration`` is this package: it re-exports the
names that module had, without a warning.
"""

from __future__ import annotations

from ..stats import wilson_interval
from .core import (
    KINDS,
    MIN_SAMPLES,
    SUMMARY_COLUMNS,
    Calibration,
    Guarantee,
    apply_cutoff,
    as_guarantee,
    calibrate,
    calibrate_scores,
    check_negatives,
    conformal_cutoff,
    cutoff_for,
    cutoff_sweep,
    fixed_systems,
    guarantee_table,
    judgments_frame,
    negative_ids,
    no_scores_message,
    pairwise_wins,
    queries_frame,
    query_cutoffs,
    query_table,
    rank_reasons,
    run_frame,
    run_of,
    score_rows,
    scored_rows,
    separation_figures,
)
from .separation import separation_intervals

__all__ = [
    "Calibration",
    "Guarantee",
    "KINDS",
    "MIN_SAMPLES",
    "SUMMARY_COLUMNS",
    "apply_cutoff",
    "as_guarantee",
    "calibrate",
    "calibrate_scores",
    "check_negatives",
    "conformal_cutoff",
    "cutoff_for",
    "cutoff_sweep",
    "fixed_systems",
    "guarantee_table",
    "judgments_frame",
    "negative_ids",
    "no_scores_message",
    "pairwise_wins",
    "queries_frame",
    "query_cutoffs",
    "query_table",
    "rank_reasons",
    "run_frame",
    "run_of",
    "score_rows",
    "scored_rows",
    "separation_figures",
    "separation_intervals",
    "wilson_interval",
]
