"""Layer 5, what people see: Displays (plots), widgets, HTML and Markdown/LaTeX tables.

Draws results and arrays; never computes an analysis itself. Imports
:mod:`retrieval_eval.analysis` and the layers below it only.

Every public name of the layer is reachable from here (``from retrieval_eval.viz import
ScoreDistributionDisplay``), loaded on first use so that ``import retrieval_eval`` stays light:
the results of the analysis layer reach their Displays and renderers through these names
(:mod:`retrieval_eval.analysis.handoff`). Import them from here, not from the module that
defines them today:

- ``calibration``, ``curves``, ``tradeoff``: the Displays of a calibration's top-1 scores
  (distributions; ROC, precision-recall; the cutoff trade-off); ``top1``: what they read from a
  calibration.
- ``evaluation``, ``delta``, ``comparison``, ``drift``, ``shift``: the Displays of the other
  results; ``scored``: what the evaluation Displays read from an evaluation.
- ``plotting``: the ``plot_*`` shortcuts the results' ``.plot()`` call.
- ``draw``: the drawing helpers every Display shares; ``style``: colours and thin-data rules.
- ``widgets``: the cutoff explorer; ``html``, ``tables``: notebook HTML, Markdown and LaTeX.
"""

from __future__ import annotations

import importlib

#: public name -> the module of this package that defines it.
EXPORTS = {
    # calibration.py: the top-1 scores of a calibration
    "RANK_BASED_NOTE": "calibration",
    "ScoreDistributionDisplay": "calibration",
    "few_samples_note": "calibration",
    # curves.py: ROC and precision-recall of a calibration's top-1 score
    "PrecisionRecallDisplay": "curves",
    "RocCurveDisplay": "curves",
    # tradeoff.py
    "CutoffTradeoffDisplay": "tradeoff",
    "tradeoff_values": "tradeoff",
    # evaluation.py: evaluations
    "MetricAtKDisplay": "evaluation",
    "StratumDisplay": "evaluation",
    "t_interval": "evaluation",
    # delta.py: per-query differences (of an evaluation's two systems or a comparison)
    "PerQueryDeltaDisplay": "delta",
    # scored.py: what the evaluation Displays read from an evaluation
    "resolve_metric": "scored",
    "scored_queries": "scored",
    # comparison.py
    "ForestDisplay": "comparison",
    # judged.py: LLM-judged metrics
    "JudgedForestDisplay": "judged",
    "PlanningDisplay": "judged",
    "judged_html": "judged",
    # drift.py
    "DriftDisplay": "drift",
    # paper.py: a comparison's long and wide (paper) tables
    "comparison_html": "paper",
    "comparison_table": "paper",
    "metric_label": "paper",
    "paper_table": "paper",
    # plotting.py: the shortcuts result objects' .plot() call
    "plot_calibration": "plotting",
    "plot_comparison": "plotting",
    "plot_drift": "plotting",
    "plot_evaluation": "plotting",
    # top1.py: what the calibration Displays read from a calibration
    "calibration_from_predictions": "top1",
    "class_frame": "top1",
    "class_scores": "top1",
    "score_label_of": "top1",
    "with_method": "top1",
    # draw.py: the drawing helpers every Display shares
    "fmt_score": "draw",
    "font_points": "draw",
    "foreground": "draw",
    "get_axes": "draw",
    "is_dark": "draw",
    "legend_below": "draw",
    "note_box": "draw",
    "one_or_array": "draw",
    "palette": "draw",
    "positive_color": "draw",
    "quantile_text": "draw",
    "rc_param": "draw",
    "score_axis_label": "draw",
    "select_systems": "draw",
    "system_color": "draw",
    # shift.py
    "AFTER_COLOR": "shift",
    "AgreementDisplay": "shift",
    "BEFORE_COLOR": "shift",
    "ScoreShiftDisplay": "shift",
    "StratumCutoffDisplay": "shift",
    "draw_stratum_cutoffs": "shift",
    "stratum_cutoff_rows": "shift",
    # failure.py: the failure-analysis pages (query, diff, bounds, pool)
    "GRADE_COLORS": "failure",
    "HOLE_COLOR": "failure",
    "bounds_html": "failure",
    "diff_html": "failure",
    "grade_badge": "failure",
    "inspection_html": "failure",
    "pool_html": "failure",
    "query_diff_html": "failure",
    "write_page": "failure",
    # query_browser.py: choose a query of a diff, see both rankings
    "BROWSER_NEEDS_IPYWIDGETS": "query_browser",
    "QueryBrowser": "query_browser",
    "browse_queries": "query_browser",
    "ipywidgets_module": "query_browser",
    # widgets.py
    "CutoffExplorer": "widgets",
    "MISSING_IPYWIDGETS": "widgets",
    "SWEEP_ROWS": "widgets",
    "explore_cutoff": "widgets",
    # html.py
    "STATUS_CLASS": "html",
    "box": "html",
    "esc": "html",
    "evaluation_html": "html",
    "report_html": "html",
    "table": "html",
    "validation_html": "html",
    "warnings_html": "html",
    # tables.py
    "cell": "tables",
    "frame_latex": "tables",
    "frame_markdown": "tables",
    "latex": "tables",
    "markdown": "tables",
    "md_escape": "tables",
    "tex": "tables",
    # labels.py
    "display_name": "labels",
    # style.py
    "DARK_PALETTE": "style",
    "DARK_POSITIVE_COLOR": "style",
    "DARK_SYSTEM_COLORS": "style",
    "DRIFT_COLORS": "style",
    "FEW_SAMPLES": "style",
    "HIGHLIGHT_COLOR": "style",
    "LOSS_COLOR": "style",
    "NEGATIVE_COLOR": "style",
    "PALETTE": "style",
    "POSITIVE_COLOR": "style",
    "SYSTEM_COLORS": "style",
    "THIN_STRATUM": "style",
    "WIN_COLOR": "style",
    "clip_interval": "style",
    "color_of": "style",
    "is_bounded": "style",
    "system_colors": "style",
    "pin_system_colors": "style",
}

__all__ = sorted(EXPORTS)


def __getattr__(name: str):
    module = EXPORTS.get(name)
    if module is None:
        try:  # a submodule: retrieval_eval.viz.html
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
