"""Displays that moved to a sibling module keep their old import path (issue 31's splits):
``viz.calibration`` re-exports the ROC and precision-recall Displays of ``viz.curves``,
``viz.evaluation`` the per-query differences of ``viz.delta``; the same objects, not copies."""

from __future__ import annotations

import importlib

import pytest

import retrieval_eval.viz as viz


@pytest.mark.parametrize(
    "old, new, name",
    [
        ("calibration", "curves", "RocCurveDisplay"),
        ("calibration", "curves", "PrecisionRecallDisplay"),
        ("evaluation", "delta", "PerQueryDeltaDisplay"),
    ],
)
def test_the_old_module_still_gives_the_moved_display(old, new, name):
    moved = getattr(importlib.import_module(f"retrieval_eval.viz.{old}"), name)
    assert moved is getattr(importlib.import_module(f"retrieval_eval.viz.{new}"), name)
    assert moved is getattr(viz, name)
    assert viz.EXPORTS[name] == new
    assert moved.__module__ == f"retrieval_eval.viz.{new}"
