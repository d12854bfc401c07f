"""Failure analysis: from "the metric dropped" to the queries, the documents and the labels that
explain it (issue 29).

- :func:`inspect_query`: one query's top k with grades, gains and text, and what it missed;
- :func:`diff_runs`: two systems per query, sorted by how much they moved, with each relevant
  passage's rank in both;
- :func:`judgment_bounds`: each number as scored and with the holes of the top k labelled at
  the top grade, the interval of a mean, and whether a difference could flip;
- :func:`label_pool`: the holes worth labelling next, as a to-label judgments file;
- :func:`calibration_cases`: the queries on the wrong side of a calibrated cutoff, with text.

Every number comes from the engine (:mod:`retrieval_eval.engine`); these modules join, sort and
show.
"""

from .bounds import JudgmentBounds, judgment_bounds
from .calibration_cases import calibration_cases
from .diff import RunDiff, diff_runs
from .inspect import QueryInspection, entry_gains, inspect_query
from .pool import LabelPool, label_pool

__all__ = [
    "JudgmentBounds",
    "LabelPool",
    "QueryInspection",
    "RunDiff",
    "calibration_cases",
    "diff_runs",
    "entry_gains",
    "inspect_query",
    "judgment_bounds",
    "label_pool",
]
