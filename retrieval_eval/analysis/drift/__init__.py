"""Drift: which labels still point at the text they were given for, and re-anchoring them.

:mod:`.core` holds ``drift`` and ``fix`` and their results; :mod:`.drift_match` how a stale
label's text is found again in the live corpus.

The old module path ``retrieval_eval.analysis.drift`` is this package: it re-exports the names
that module had, without a warning.
"""

from __future__ import annotations

from .core import DRIFT_STATUSES, DriftResult, DriftSummary, FixResult, drift, fix, match_substrings, match_text_sha

__all__ = [
    "DRIFT_STATUSES",
    "DriftResult",
    "DriftSummary",
    "FixResult",
    "drift",
    "fix",
    "match_substrings",
    "match_text_sha",
]
