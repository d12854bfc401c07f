"""The analysis layer's old flat module paths keep working after its move into subpackages.

The public ones (named in docs/ and README.md) are checked by reading those files: a path that
is a package now (``evaluation``, ``calibration``, ``drift``, ``stats``) imports without a
warning; a moved module (``compare``, ``gates``, ``report``, ...) imports with a
DeprecationWarning naming its new path and is the moved module itself. Every name each old
module had (listed below, as they were before the move) is still there.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from retrieval_eval.analysis.moved import MOVED

ROOT = Path(__file__).resolve().parents[2]

#: The public names of every old module, as they were before the move (base and io names a
#: module only imported, e.g. ``ID`` or ``as_judgments``, are left out for the packages).
OLD_NAMES = {
    "evaluation": (
        "DEFAULT_K DEFAULT_THRESHOLD Evaluation ID Measurement Report ScoreResult StrataScores "
        "StratumScore build_report coerce dedupe evaluate evaluate_frames finish_evaluation "
        "judgment_key measurements negative_id_list query_metrics relevance_by_query score "
        "score_by_stratum stratum_scores worst_stratum"
    ),
    "result": (
        "CarriesRun Evaluation ID UNSTRATIFIED coerce finish_evaluation negative_id_list "
        "query_strata_from run_of stratum_table viz"
    ),
    "strata": (
        "ID Measurement StrataScores StratumScore UNSTRATIFIED measurements query_strata_from "
        "stratum_keys stratum_order stratum_run stratum_scores stratum_table"
    ),
    "streaming": (
        "FormatError ID JudgmentIndex Plan assemble block_heads block_metrics evaluate_streamed "
        "finish_evaluation frame_blocks is_parquet join_heads negative_id_list parquet_blocks relabel "
        "run_blocks stratum_keys stratum_run trailing_query"
    ),
    "blocks": ("FormatError ID SPACE block_bounds frame_blocks is_parquet parquet_blocks relabel trailing_query"),
    "heads": "CarriesRun HEAD_DEPTH block_heads join_heads run_of",
    "measurement": "Measurement summarize t_half_width t_ppf",
    "calibration": (
        "Calibration Guarantee ID KINDS MIN_SAMPLES SUMMARY_COLUMNS apply_cutoff as_guarantee calibrate "
        "calibrate_scores check_negatives conformal_cutoff cutoff_for cutoff_sweep fixed_systems "
        "guarantee_table jsonable judgments_frame negative_ids no_scores_message pairwise_wins "
        "queries_frame query_cutoffs query_table rank_reasons run_frame run_of score_rows scored_rows "
        "separation_figures separation_intervals wilson_interval"
    ),
    "calibration_input": (
        "FormatError ID KINDS UNSTRATIFIED check_negatives dedupe_run judgments_frame negative_ids "
        "no_scores_message queries_frame query_strata query_table relevance_table run_frame score_rows "
        "scored_rows"
    ),
    "calibration_result": "Calibration MIN_SAMPLES SUMMARY_COLUMNS jsonable viz",
    "calibration_compare": (
        "CORRECTION_LABEL CalibrationComparison ID check_choice coerce compare_calibration "
        "pick_baseline systems_in_order viz"
    ),
    "cutoffs": (
        "Calibration ID aggregate apply_cutoff check_negatives compute cutoff_for cutoff_sweep "
        "fixed_systems judgments_frame negative_ids no_scores_message queries_frame query_table "
        "relevance_table run_frame safe_quantile scored_rows stratum_limits"
    ),
    "separation": (
        "average_precision bootstrap_ci coded_auroc median_difference pairwise_wins separation_figures "
        "separation_intervals threshold_95"
    ),
    "rank_based": "difference rank_reasons",
    "guarantee": (
        "GUARANTEE_COLUMNS Guarantee ID POOLED as_guarantee beta_ppf betainc clopper_pearson_lower "
        "conformal_cutoff conformal_rank coverage_interval guarantee_table query_cutoffs stratum_limits"
    ),
    "shift": (
        "ID MIN_QUERIES SHIFT_GATE_METRICS ScoreShift as_guarantee as_judgments as_run bootstrap_ci "
        "conformal_rank jsonable ks_2samp measurement psi score_rows score_shift viz wilson_interval"
    ),
    "drift": (
        "DRIFT_STATUSES DriftResult DriftSummary FixResult as_corpus as_judgments corpus_meaning drift "
        "fix judgments_meaning match_substrings match_text_sha text_sha viz"
    ),
    "drift_match": (
        "MERGED ORPHANED RE_ANCHORABLE SPLIT UNDECIDED VALID isin match_substrings match_text_sha normalize text_sha"
    ),
    "validation": (
        "CHUNK_ID_PATTERN ID TEXT_SHA_PATTERN THIN_STRATUM UNSTRATIFIED ValidationIssue "
        "ValidationResult judgment_keys validate viz"
    ),
    "agreement": (
        "AGREEMENT_GATE_MEASURES ID LabelAgreement MIN_KAPPA MIN_UNITS UNSTRATIFIED WEIGHTS aggregate "
        "agreement_warning as_judgments as_run cohen_kappa compute confusion_counts jsonable "
        "judgment_keys kappa_from_confusion krippendorff_alpha label_agreement measurement "
        "metric_columns overlapping_labels viz"
    ),
    "gates": (
        "FormatError Gate GateError GateEvaluation GateResult apply_gates check_report evaluate_gates "
        "parse_gate strata_order worse_status worst_of"
    ),
    "report": ("Measurement Report SPEC_VERSION TOOL_NAME TOOL_VERSION report_from_evaluation stratum_scores viz"),
    "compare": (
        "CORRECTIONS CORRECTION_LABEL CalibrationComparison Comparison DEFAULT_METRICS "
        "EXACT_MAX_QUERIES Evaluation ID MIN_PAIRED_QUERIES TABLE_COLUMNS TESTS check_choice check_ks "
        "coerce compare compare_calibration pick_baseline systems_in_order viz"  # metric_name, parse_metric: the engine's, no longer imported here
    ),
}
PLUMBING = {
    "ID",
    "UNSTRATIFIED",
    "FormatError",
    "as_corpus",
    "as_judgments",
    "as_run",
    "text_sha",
    "viz",
    "jsonable",
    "corpus_meaning",
    "judgments_meaning",
}
PACKAGES = {"evaluation", "calibration", "drift"}


def test_every_old_module_is_either_moved_or_a_package():
    assert set(OLD_NAMES) == set(MOVED) | PACKAGES
    assert not set(MOVED) & PACKAGES


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_warns_and_is_the_new_module(old):
    name = f"retrieval_eval.analysis.{old}"
    new = importlib.import_module(f"retrieval_eval.analysis.{MOVED[old]}")
    sys.modules.pop(name, None)
    with pytest.warns(DeprecationWarning, match=re.escape(f"{name} moved to {new.__name__}")):
        module = importlib.import_module(name)
    assert module is new
    missing = [n for n in OLD_NAMES[old].split() if not hasattr(module, n)]
    assert not missing, missing


def test_from_the_layer_import_an_old_name_warns_too(monkeypatch):
    import retrieval_eval.analysis as layer

    monkeypatch.delattr(layer, "gates", raising=False)
    sys.modules.pop("retrieval_eval.analysis.gates", None)
    with pytest.warns(DeprecationWarning, match="decisions.gates"):
        from retrieval_eval.analysis import gates
    from retrieval_eval.analysis.decisions import gates as new

    assert gates is new


@pytest.mark.parametrize("old", sorted(PACKAGES))
def test_an_old_module_that_is_a_package_now_keeps_its_names(old):
    package = importlib.import_module(f"retrieval_eval.analysis.{old}")
    core = importlib.import_module(f"retrieval_eval.analysis.{old}.core")
    names = [n for n in OLD_NAMES[old].split() if n not in PLUMBING]
    missing = [n for n in names if not hasattr(package, n)]
    assert not missing, missing
    assert [n for n in names if hasattr(core, n) and getattr(package, n) is not getattr(core, n)] == []
    assert sorted(package.__all__) == sorted(names)


def _documented_paths() -> set[str]:
    """Every ``retrieval_eval.analysis.<name>`` that docs/ or README.md names."""
    texts = [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    found = set()
    for text in texts:
        found |= set(re.findall(r"retrieval_eval\.analysis\.([a-z_]+)", text))
    return found


def test_the_documented_old_paths_still_import():
    documented = _documented_paths()
    assert documented, "no documented path found: the test would pass vacuously"
    for name in sorted(documented):
        if name in MOVED:
            sys.modules.pop(f"retrieval_eval.analysis.{name}", None)
            with pytest.warns(DeprecationWarning, match=" moved to "):
                importlib.import_module(f"retrieval_eval.analysis.{name}")
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                importlib.import_module(f"retrieval_eval.analysis.{name}")


def test_the_packages_import_without_a_deprecation_warning():
    """A fresh interpreter: the package, its faces and the old paths that are packages now
    import with DeprecationWarning as an error (the package itself uses the new paths)."""
    code = (
        "import retrieval_eval, retrieval_eval.cli.app, retrieval_eval.viz, retrieval_eval.dask\n"
        "from retrieval_eval.analysis.evaluation import evaluate, Report\n"
        "from retrieval_eval.analysis.calibration import calibrate\n"
        "from retrieval_eval.analysis.drift import drift\n"
        "from retrieval_eval.analysis import stats\n"
        "import retrieval_eval.analysis.decisions.report\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
