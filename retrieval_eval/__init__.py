"""retrieval_eval: measure retrieval, keep labels true, measure out-of-distribution robustness.

The public names, re-exported from the modules that define them. Importing the package loads
numpy and pandas only; matplotlib, ipywidgets and pyarrow's heavier parts load when used.
"""

from .analysis.calibration.core import Calibration, apply_cutoff, calibrate, cutoff_sweep, score_rows
from .analysis.calibration.guarantee import Guarantee
from .analysis.calibration.shift import ScoreShift, score_shift
from .analysis.decisions.compare import CalibrationComparison, Comparison, compare, compare_calibration
from .analysis.decisions.gates import Gate, GateError, GateResult, evaluate_gates, parse_gate, worse_status
from .analysis.decisions.report import SPEC_VERSION, TOOL_NAME, TOOL_VERSION, Report
from .analysis.drift.core import DriftResult, FixResult, drift, fix
from .analysis.evaluation.core import (
    Evaluation,
    ScoreResult,
    StratumScore,
    build_report,
    dedupe,
    evaluate,
    judgment_key,
    query_metrics,
    relevance_by_query,
    score,
    score_by_stratum,
    worst_stratum,
)
from .analysis.evaluation.measurement import Measurement, summarize
from .analysis.evaluation.ties import TiedScoresWarning, in_given_order
from .analysis.failure import (
    JudgmentBounds,
    LabelPool,
    QueryInspection,
    RunDiff,
    calibration_cases,
    diff_runs,
    inspect_query,
    judgment_bounds,
    label_pool,
)
from .analysis.fusion import fuse
from .analysis.judged import (
    compare_judged,
    judged_summary,
    minimum_detectable_difference,
    planning_table,
    ppi_from_judgments,
    ppi_mean,
    queries_needed,
)
from .analysis.trust.agreement import LabelAgreement, label_agreement
from .analysis.trust.validation import ValidationIssue, ValidationResult, validate
from .datasets import load_demo

# The measure catalogue's table and parser (rev.measures() is the table; the package itself is
# retrieval_eval.measures, reached with ``from retrieval_eval.measures import ...``).
from .engine.measures import measures, parse_measure
from .engine.measures.avgjg import evaluate_jg
from .engine.measures.prefs import evaluate_prefs
from .engine.metrics import compute, dedupe_run, metric_name
from .errors import FormatError
from .identity import chunk_id, normalize, text_sha
from .io import (
    as_corpus,
    as_judgments,
    as_queries,
    as_run,
    from_qrels,
    from_trec_run,
    parse_corpus,
    parse_judgments,
    parse_queries,
    parse_run,
    read_corpus,
    read_judgments,
    read_qrels,
    read_queries,
    read_run,
    read_trec_run,
    serialize_judgments,
    to_qrels,
    to_trec_run,
    write_corpus,
    write_judgments,
    write_queries,
    write_run,
)
from .io.interop import from_ir_datasets, read_beir, rerank_by_score, to_dict

# LLM-judged metrics: judge scores in, query-clustered Measurements, planning, PPI.
from .io.judge_scores import read_judge_scores
from .io.prefs import read_prefs, read_qrels_jg, read_qrels_prefs
from .io.writers import write_parquet

__version__ = TOOL_VERSION

__all__ = [
    "CalibrationComparison",
    "Comparison",
    "compare",
    "compare_calibration",
    "load_demo",
    "Calibration",
    "DriftResult",
    "Evaluation",
    "FixResult",
    "FormatError",
    "Gate",
    "GateError",
    "GateResult",
    "Measurement",
    "Report",
    "SPEC_VERSION",
    "ScoreResult",
    "StratumScore",
    "TOOL_NAME",
    "TOOL_VERSION",
    "ValidationIssue",
    "ValidationResult",
    "apply_cutoff",
    "as_corpus",
    "as_judgments",
    "as_queries",
    "as_run",
    "build_report",
    "calibrate",
    "chunk_id",
    "compute",
    "cutoff_sweep",
    "dedupe",
    "dedupe_run",
    "drift",
    "evaluate",
    "evaluate_gates",
    "fix",
    "fuse",
    "from_qrels",
    "from_trec_run",
    "judgment_key",
    "metric_name",
    "normalize",
    "parse_corpus",
    "parse_gate",
    "parse_judgments",
    "parse_queries",
    "parse_run",
    "query_metrics",
    "read_corpus",
    "read_judgments",
    "read_qrels",
    "read_prefs",
    "read_qrels_prefs",
    "read_qrels_jg",
    "evaluate_prefs",
    "evaluate_jg",
    "read_queries",
    "read_run",
    "read_trec_run",
    "relevance_by_query",
    "score",
    "score_by_stratum",
    "score_rows",
    "serialize_judgments",
    "summarize",
    "text_sha",
    "to_qrels",
    "to_trec_run",
    "validate",
    "worse_status",
    "worst_stratum",
    "write_corpus",
    "write_judgments",
    "write_queries",
    "write_run",
    "from_ir_datasets",
    "read_beir",
    "rerank_by_score",
    "in_given_order",
    "TiedScoresWarning",
    "to_dict",
    "write_parquet",
    "Guarantee",
    "LabelAgreement",
    "ScoreShift",
    "label_agreement",
    "score_shift",
    "measures",
    "parse_measure",
    "JudgmentBounds",
    "LabelPool",
    "QueryInspection",
    "RunDiff",
    "calibration_cases",
    "diff_runs",
    "inspect_query",
    "judgment_bounds",
    "label_pool",
    "compare_judged",
    "judged_summary",
    "minimum_detectable_difference",
    "planning_table",
    "ppi_from_judgments",
    "ppi_mean",
    "queries_needed",
    "read_judge_scores",
]
