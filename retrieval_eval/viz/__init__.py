"""Layer 4, what people see: Displays (plots), widgets, HTML and Markdown/LaTeX tables.

Draws results and arrays; never computes an analysis itself. Imports
:mod:`retrieval_eval.analysis` and the layers below it only.

Every public name of the layer is reachable from here (``from retrieval_eval.viz import
CalibrationDisplay``), loaded on first use so that ``import retrieval_eval`` stays light: the
results of the analysis layer reach their Displays and renderers through these names
(:mod:`retrieval_eval.analysis.handoff`).
"""

from __future__ import annotations

import importlib

#: public name -> the module of this package that defines it.
EXPORTS = {
    # plotting.py
    "CutoffTradeoffDisplay": "plotting",
    "DARK_PALETTE": "plotting",
    "DRIFT_COLORS": "plotting",
    "DriftDisplay": "plotting",
    "ForestDisplay": "plotting",
    "HIGHLIGHT_COLOR": "plotting",
    "LOSS_COLOR": "plotting",
    "MetricAtKDisplay": "plotting",
    "PALETTE": "plotting",
    "PerQueryDeltaDisplay": "plotting",
    "PrecisionRecallDisplay": "plotting",
    "RANK_BASED_NOTE": "plotting",
    "RocCurveDisplay": "plotting",
    "ScoreDistributionDisplay": "plotting",
    "StratumDisplay": "plotting",
    "WIN_COLOR": "plotting",
    "few_samples_note": "plotting",
    "plot_calibration": "plotting",
    "plot_comparison": "plotting",
    "plot_drift": "plotting",
    "plot_evaluation": "plotting",
    "t_interval": "plotting",
    # shift.py
    "AFTER_COLOR": "shift",
    "AgreementDisplay": "shift",
    "BEFORE_COLOR": "shift",
    "ScoreShiftDisplay": "shift",
    "StratumCutoffDisplay": "shift",
    "draw_stratum_cutoffs": "shift",
    "stratum_cutoff_rows": "shift",
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
    # style.py
    "DARK_POSITIVE_COLOR": "style",
    "DARK_SYSTEM_COLORS": "style",
    "FEW_SAMPLES": "style",
    "NEGATIVE_COLOR": "style",
    "POSITIVE_COLOR": "style",
    "SYSTEM_COLORS": "style",
    "THIN_STRATUM": "style",
    "clip_interval": "style",
    "color_of": "style",
    "is_bounded": "style",
    "system_colors": "style",
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
