"""Shared test fixtures: where the normative spec fixtures live."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

# Some tests import helpers of other test modules by their package path (``tests.engine.x``),
# and some installed distributions (ppi-python, the PPI oracle) ship a top-level package named
# ``tests`` that would shadow this folder. The name ``tests`` is made to mean this folder.
_TESTS = Path(__file__).resolve().parent
if [str(_TESTS)] != list(getattr(sys.modules.get("tests"), "__path__", [])):
    _package = types.ModuleType("tests")
    _package.__path__ = [str(_TESTS)]
    sys.modules["tests"] = _package

# The spec's conformance cases (its test vectors), vendored so that a plain clone runs them.
_DEFAULT = Path(__file__).resolve().parent / "fixtures" / "spec"


def spec_fixtures_dir() -> Path:
    """The folder ``RETRIEVAL_EVAL_SPEC_FIXTURES`` names, else the vendored ``tests/fixtures/spec``.

    The vendored copy is the default so that the README's test command passes on a plain clone;
    the variable overrides it to check the package against another copy of the spec's cases
    (e.g. a newer one). A named folder that is missing fails rather than skips: a conformance
    suite that silently runs nothing is a check that cannot fail.
    """
    named = os.environ.get("RETRIEVAL_EVAL_SPEC_FIXTURES")
    if named:
        path = Path(named)
        if not path.is_dir():
            raise RuntimeError(f"RETRIEVAL_EVAL_SPEC_FIXTURES={named!r} is not a folder")
        return path
    if not _DEFAULT.is_dir():
        raise RuntimeError(f"the vendored spec fixtures are missing: {_DEFAULT}")
    return _DEFAULT


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return spec_fixtures_dir()


def load_expected(case: str) -> dict:
    return json.loads((spec_fixtures_dir() / case / "expected.json").read_text(encoding="utf-8"))


# The browser tests say why they were skipped, whatever the -r option (issue 28, item 6): the
# summary line counts skips but names no reason unless asked with -rs, so a browser test
# skipped for want of Chromium would pass unnoticed; its reason is printed beside the summary.
def pytest_terminal_summary(terminalreporter):
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if "test_browser.py" not in report.nodeid:
            continue
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"{count} browser test{'s' if count != 1 else ''} skipped: {reason}", yellow=True)


# -----------------------------------------------------------------------------------------------
# The fast tier: `pytest -m "not slow"`. The one list of slow tests, kept here rather than in
# decorators spread over the files. A test is slow when it takes seconds to minutes on a 2-core
# machine: a kernel or a browser, a Dask cluster, a child interpreter per case (each imports
# pandas and pyarrow), runs at scale, or a property test with hundreds of examples. The whole
# suite (no -m) is still what CI runs.
# -----------------------------------------------------------------------------------------------

#: Whole files, and why.
SLOW_FILES = {
    "tests/analysis/test_dask.py": "a Dask LocalCluster, millions of rows",
    "tests/analysis/test_dask_trec.py": "a Dask LocalCluster: TREC byte ranges and partitioned labels",
    "tests/analysis/test_spark.py": "the Spark recipe",
    "tests/analysis/test_streamed_results.py": "every result of a run streamed through files in blocks",
    "tests/viz/test_browser.py": "headless Chromium over the demo page and every notebook",
    "tests/cli/test_demo.py": "builds the whole demo page (plots, HTML) twice",
    "tests/io/test_safe_writes.py": "real processes killed mid-write, locks, full disks",
    "tests/cli/test_cli_reliability.py": "a child interpreter per case (pipes, FIFOs, devices)",
    "tests/viz/test_browser_failure.py": "headless Chromium over the diff page",
    "tests/analysis/test_fusion.py": "ranx compiles its numba kernels (every case against ranx.fuse)",
    "tests/io/test_ranx_inputs.py": "ranx compiles its numba kernels",
}
#: Single tests (every parametrization of each, or one with its [id]), and why.
SLOW_TESTS = {
    # oracles that compile or search on first use
    "tests/engine/test_catalogue_ranx.py::test_ranx_names_match_ranx": "ranx compiles its numba kernels",
    "tests/analysis/test_compare_pairs.py::test_means_equal_ranx_for_every_cutoff_and_name": "ranx compiles",
    "tests/analysis/test_compare_pairs.py::test_randomization_p_values_agree_with_ranx_fisher_within_monte_carlo_error": "ranx compiles; 10,000 resamples per row",
    "tests/analysis/test_judged_stats.py::test_summary_does_not_depend_on_row_order": "property test",
    "tests/viz/test_failure_pages.py::test_the_diff_page_repeats_byte_for_byte_across_hash_seeds": "a child interpreter per hash seed",
    "tests/engine/test_measures_trec.py::test_every_trec_measure_matches_pytrec_eval_on_any_small_input": "property test over every trec_eval measure",
    "tests/engine/test_metrics.py::test_row_and_query_order_change_nothing": "property test",
    "tests/engine/test_metrics.py::test_a_repeated_key_never_raises_a_metric": "property test",
    "tests/io/test_absent.py::test_property_blank_fields_change_nothing": "property test",
    "tests/io/test_trec_run_rules.py::test_property_line_order_does_not_change_a_run_read_by_rank": "property test",
    "tests/io/test_fast_jsonl.py::test_constant_and_absent_string_columns_are_compact": "large columns",
    "tests/analysis/test_stats.py::test_wilcoxon_matches_scipy_defaults[continuous-12]": "exact, 2**12 signs",
    "tests/analysis/test_stats.py::test_wilcoxon_matches_scipy_defaults[ties-12]": "exact, 2**12 signs",
    "tests/analysis/test_stats.py::test_wilcoxon_matches_scipy_defaults[zeros-12]": "exact, 2**12 signs",
    "tests/analysis/test_guarantee.py::test_apply_cutoff_applies_each_querys_stratum_cutoff": "many calibrations",
    "tests/viz/test_plot_style.py::test_no_title_or_label_is_clipped": "lays out and renders whole figures",
    "tests/viz/test_tables.py::test_every_result_writes_markdown_and_latex_without_tabulate_or_jinja2": "a child interpreter",
    "tests/architecture/test_old_paths.py::test_the_packages_import_without_a_deprecation_warning": "a child interpreter",
    "tests/cli/test_cli_streaming.py::test_chunk_rows_streams_a_small_run": "streams through the CLI",
    "tests/cli/test_cli_streaming.py::test_a_run_above_the_threshold_is_streamed_with_the_same_report": "streams through the CLI",
    # a child interpreter per case
    "tests/cli/test_cli.py::test_bad_input_is_one_line_and_exit_2": "35 console-script processes",
    "tests/cli/test_cli.py::test_every_bad_case_is_checked": "shares the 35 processes above",
    "tests/cli/test_cli.py::test_installed_console_script": "a child interpreter",
    "tests/cli/test_cli.py::test_demo_writes_report_plots_and_index": "the whole demo page",
    "tests/cli/test_cli_faults.py::test_rule16_through_the_console_script_exit_2_and_one_line": "child interpreters",
    "tests/cli/test_cli_inputs.py::test_bad_input_is_one_line_exit_2": "a child interpreter per case",
    "tests/cli/test_cli_inputs.py::test_score_reads_a_beir_folder_as_labels": "a child interpreter",
    "tests/cli/test_trust_gates_cli.py::test_score_shift_cli_fails_its_psi_gate_with_exit_1": "child interpreter",
    "tests/cli/test_trust_gates_cli.py::test_score_shift_cli_passes_a_loose_gate_and_writes_json": "child interpreter",
    "tests/cli/test_trust_gates_cli.py::test_score_shift_cli_refuses_bad_input_with_exit_2": "child interpreters",
    "tests/cli/test_trust_gates_cli.py::test_label_agreement_cli_fails_a_kappa_floor_on_the_demo": "child interpreter",
    "tests/cli/test_trust_gates_cli.py::test_label_agreement_cli_with_one_labeler_is_a_usage_error": "child interpreter",
    "tests/cli/test_trust_gates_cli.py::test_calibrate_cli_alpha_and_by_stratum_print_and_write_the_guarantee": "child interpreters",
    "tests/cli/test_trust_gates_cli.py::test_calibrate_cli_refuses_an_alpha_outside_0_1": "child interpreter",
    "tests/io/test_hostile_input.py::test_rule7_cli_exits_2_naming_the_line": "child interpreters",
    "tests/io/test_hostile_input.py::test_rule8_huge_k_is_a_usage_error_naming_the_largest_k": "child interpreters",
    "tests/io/test_hostile_input.py::test_rule8_no_numpy_warning_reaches_stderr": "child interpreters",
    "tests/io/test_hostile_input.py::test_rule9_cli_refuses_a_deeply_nested_baseline_with_exit_2": "child interpreter",
    "tests/io/test_hostile_input.py::test_rule13_to_qrels_refuses_an_id_with_whitespace_naming_the_line": "two child interpreters per case",
    "tests/io/test_hostile_input.py::test_rule14_ids_strata_and_system_names_are_escaped_in_every_table": "child interpreters",
    "tests/io/test_hostile_input.py::test_rule14_a_path_in_an_error_line_is_escaped": "child interpreter",
    "tests/io/test_hostile_input.py::test_rule15_calibrate_memory_per_query_is_a_small_constant": "scale",
    "tests/analysis/test_argument_order.py::test_the_cli_refuses_a_run_table_given_as_labels_naming_the_option": "child interpreters",
    "tests/viz/test_docstrings.py::test_the_examples_run": "runs every module's docstring examples",
    "tests/viz/test_notebook_guides.py::test_the_own_data_code_runs_as_written": "each notebook's closing code",
    "tests/engine/test_catalogue_ir_measures.py::test_err_and_exp_ndcg_match_gdeval": "gdeval in perl",
    # scale and streaming
    "tests/analysis/test_streaming.py::test_streamed_equals_in_memory_property": "property test over streamed runs",
    "tests/analysis/test_streaming.py::test_streamed_parquet_file_and_dataset_equal_in_memory": "files in blocks",
    "tests/analysis/test_streaming.py::test_streamed_trec_file_equals_in_memory": "files in blocks",
    "tests/analysis/test_streaming.py::test_streamed_jsonl_file_equals_in_memory": "files in blocks",
    "tests/analysis/test_streaming.py::test_spark_recipe_functions_equal_in_memory": "the Spark recipe's functions",
    "tests/analysis/test_streaming.py::test_a_query_longer_than_a_block_is_one_block": "files in blocks",
    "tests/analysis/test_streaming.py::test_streamed_frame_equals_in_memory_at_every_block_size[1]": "a block per row",
    "tests/analysis/test_streaming.py::test_streamed_frame_equals_in_memory_at_every_block_size[7]": "a block per 7 rows",
    "tests/analysis/test_streaming.py::test_one_stratum_per_query_and_negatives_and_queries_file": "files in blocks",
    "tests/analysis/test_streaming.py::test_a_streamed_report_equals_the_in_memory_one_given_the_calibration": "streamed report and calibration",
    # big property runs (hundreds of examples, or few slow ones)
    "tests/analysis/test_calibration.py::test_figures_match_the_written_out_definitions": "150 examples",
    "tests/analysis/test_calibration.py::test_random_continuous_scores_with_a_shift_are_never_flagged": "many draws",
    "tests/analysis/test_guarantee.py::test_marginal_coverage_lies_in_the_finite_sample_interval": "200 examples",
    "tests/analysis/test_drift.py::test_ties_follow_corpus_order_and_split_follows_ordinals": "property test",
    "tests/analysis/test_drift.py::test_fix_never_touches_split_or_orphaned_and_reanchors_to_containing_text": "property test",
    "tests/analysis/test_excluded_queries.py::test_property_per_query_means_equal_the_summary": "property test",
    "tests/analysis/test_worst_stratum.py::test_property_every_face_names_the_first_appearing_lowest_stratum": "property test",
    "tests/analysis/test_compare_rules.py::test_exact_p_values_agree_with_scipy_permutation_test": "scipy's exact permutation test",
    "tests/io/test_fast_jsonl.py::test_object_lines_counts_the_same_lines_whatever_the_blocks": "200 examples",
    "tests/io/test_fast_jsonl.py::test_read_trec_run_agrees_with_the_text_parser_on_generated_files": "150 examples",
    "tests/io/test_fast_jsonl.py::test_read_judgments_agrees_with_the_careful_pass_on_generated_files": "150 examples",
}
_ROOT = Path(__file__).resolve().parent.parent


def is_slow(item) -> bool:
    """Whether a collected test is in the slow tier: a notebook cell (nbval), a test of
    :data:`SLOW_FILES`, or one of :data:`SLOW_TESTS` (any parametrization, or the one named)."""
    path = Path(str(item.fspath)).resolve()
    if path.suffix == ".ipynb":
        return True
    try:
        rel = path.relative_to(_ROOT).as_posix()
    except ValueError:
        return False
    test = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
    return rel in SLOW_FILES or f"{rel}::{test.split('[', 1)[0]}" in SLOW_TESTS or f"{rel}::{test}" in SLOW_TESTS


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        if is_slow(item):
            item.add_marker(slow)
