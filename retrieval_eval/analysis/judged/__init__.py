"""LLM-judged metrics: judge samples turned into Measurements with honest error bars.

:mod:`.measurement` (query-clustered summaries with variance components and the intraclass
correlation), :mod:`.paired` (paired comparison of two systems judged on the same queries),
:mod:`.planning` (minimum detectable difference, queries and samples needed) and :mod:`.ppi`
(prediction-powered inference with human labels on a subset). The formulas are in
``docs/judged-metrics.md``.
"""

from __future__ import annotations

from .measurement import JUDGED_COLUMNS, judged_measurements, judged_summary, naive_summary, query_means
from .paired import compare_judged
from .planning import minimum_detectable_difference, planning_paragraph, planning_table, queries_needed
from .ppi import ppi_from_judgments, ppi_mean

__all__ = [
    "JUDGED_COLUMNS",
    "compare_judged",
    "judged_measurements",
    "judged_summary",
    "minimum_detectable_difference",
    "naive_summary",
    "planning_paragraph",
    "planning_table",
    "ppi_from_judgments",
    "ppi_mean",
    "queries_needed",
    "query_means",
]
