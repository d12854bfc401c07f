"""Results that save and reload (issue 33 item 5): Evaluation and Calibration through
``to_dict``/``from_dict`` (JSON text in between) and ``to_parquet``/``read_parquet``: every
frame back with its dtypes, and the reloaded result renders and plots the same."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pandas as pd
import pytest

import retrieval_eval as rev
from retrieval_eval.analysis.calibration.calibration_result import Calibration
from retrieval_eval.analysis.evaluation.persist import frame_from_dict, frame_to_dict
from retrieval_eval.analysis.evaluation.result import Evaluation

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture(scope="module")
def demo():
    return rev.load_demo()


@pytest.fixture(scope="module")
def evaluation(demo):
    return rev.evaluate(demo.judgments, demo.runs, k=(1, 5, 10), queries=demo.queries)


@pytest.fixture(scope="module")
def calibration(demo):
    return rev.calibrate(demo.judgments, demo.runs, demo.queries, n_resamples=50, guarantee=0.1)


def _through_json(d: dict) -> dict:
    return json.loads(json.dumps(d, allow_nan=False))  # JSON-safe: no NaN, no numpy scalars


def _same_frames(a, b, names) -> None:
    for n in names:
        fa, fb = getattr(a, n), getattr(b, n)
        if fa is None:
            assert fb is None, n
            continue
        pd.testing.assert_frame_equal(fa, fb, check_exact=True, obj=n)  # dtypes and index too
        assert fa.attrs == fb.attrs, n


def _png(display) -> bytes:
    buf = io.BytesIO()
    display.figure_.savefig(buf, format="png", dpi=50)
    import matplotlib.pyplot as plt

    plt.close(display.figure_)
    return buf.getvalue()


def test_evaluation_round_trips_through_json(evaluation):
    back = Evaluation.from_dict(_through_json(evaluation.to_dict()))
    _same_frames(evaluation, back, Evaluation.FRAMES)
    assert (back.ks, back.threshold, back.gain, back.negatives, back.strata) == (
        evaluation.ks,
        evaluation.threshold,
        evaluation.gain,
        evaluation.negatives,
        evaluation.strata,
    )
    assert back._repr_html_() == evaluation._repr_html_()
    assert back.to_latex() == evaluation.to_latex()
    assert back.to_markdown("per_stratum") == evaluation.to_markdown("per_stratum")
    assert repr(back) == repr(evaluation)


def test_evaluation_round_trips_through_parquet(evaluation, tmp_path):
    evaluation.to_parquet(tmp_path / "ev")
    assert sorted(os.listdir(tmp_path / "ev")) == sorted(
        [f"{n}.parquet" for n in Evaluation.FRAMES if getattr(evaluation, n) is not None] + ["result.json"]
    )
    back = Evaluation.read_parquet(tmp_path / "ev")
    _same_frames(evaluation, back, Evaluation.FRAMES)
    assert back._repr_html_() == evaluation._repr_html_()


@pytest.mark.parametrize("kind", ["strata", "metric_at_k"])
def test_reloaded_evaluation_plots_the_same(evaluation, kind, tmp_path):
    evaluation.to_parquet(tmp_path / "ev")
    for back in (Evaluation.read_parquet(tmp_path / "ev"), Evaluation.from_dict(_through_json(evaluation.to_dict()))):
        assert _png(back.plot(kind)) == _png(evaluation.plot(kind))


def test_reloaded_evaluation_compares_and_calibrates_the_same(evaluation, demo):
    back = Evaluation.from_dict(_through_json(evaluation.to_dict()))
    a = rev.compare(demo.judgments, evaluation, baseline="bm25", k=10, queries=demo.queries).table
    b = rev.compare(demo.judgments, back, baseline="bm25", k=10, queries=demo.queries).table
    pd.testing.assert_frame_equal(a, b)
    ca = rev.calibrate(demo.judgments, evaluation, demo.queries, n_resamples=20).summary
    cb = rev.calibrate(demo.judgments, back, demo.queries, n_resamples=20).summary
    pd.testing.assert_frame_equal(ca, cb)


def test_evaluation_without_its_run(evaluation):
    d = evaluation.to_dict(run=False)
    assert "run" not in d["frames"]
    back = Evaluation.from_dict(_through_json(d))
    assert back.run is None
    pd.testing.assert_frame_equal(back.summary, evaluation.summary)


def test_calibration_round_trips_through_json(calibration):
    d = calibration.to_dict(rows=True)
    back = Calibration.from_dict(_through_json(d))
    _same_frames(calibration, back, Calibration.FRAMES)
    assert back.settings == _through_json(calibration.settings)
    assert (back.warnings, back.system_warnings) == (calibration.warnings, calibration.system_warnings)
    assert back._repr_html_() == calibration._repr_html_()
    assert back.to_markdown() == calibration.to_markdown()
    assert back.metrics("rrf") == calibration.metrics("rrf")  # rank-based reasons kept
    assert "indeterminate" in back.metrics("rrf")["auroc"]
    # the report-style keys are still there, and the default leaves the scored run out
    assert {"settings", "summary", "metrics", "per_stratum", "warnings"} <= set(d)
    assert "rows" not in calibration.to_dict()["frames"]


def test_calibration_round_trips_through_parquet(calibration, tmp_path):
    calibration.to_parquet(tmp_path / "cal")
    back = Calibration.read_parquet(tmp_path / "cal")
    _same_frames(calibration, back, Calibration.FRAMES)
    assert back._repr_html_() == calibration._repr_html_()


@pytest.mark.parametrize("kind", ["distribution", "roc", "tradeoff"])
def test_reloaded_calibration_plots_the_same(calibration, kind):
    back = Calibration.from_dict(_through_json(calibration.to_dict()))
    assert _png(back.plot(kind)) == _png(calibration.plot(kind))


def test_reading_the_wrong_kind_says_so(evaluation, calibration, tmp_path):
    evaluation.to_parquet(tmp_path / "ev")
    with pytest.raises(ValueError, match="'Evaluation' result"):
        Calibration.read_parquet(tmp_path / "ev")
    with pytest.raises(ValueError, match="no result.json"):
        Evaluation.read_parquet(tmp_path)
    with pytest.raises(ValueError, match="Evaluation.to_dict"):
        Evaluation.from_dict(calibration.to_dict())


def test_frame_codec_keeps_dtypes_missing_values_and_index():
    f = pd.DataFrame(
        {
            "system": pd.array(["a", "b", "b"], dtype="string"),
            "s": pd.Series(["x", None, "z"], dtype="str"),
            "flag": pd.array([True, None, False], dtype="boolean"),
            "b": np.array([True, False, True]),
            "n": np.array([1, 2, 3], dtype=np.int64),
            "x": [0.1, np.nan, 1e-300],
            "extra": pd.Series([{"k": [1, 2]}, None, {"z": "é"}], dtype=object),
        }
    ).set_index(["system", "n"])
    f.attrs["systems"] = ["a", "b"]
    back = frame_from_dict(_through_json(frame_to_dict(f)))
    pd.testing.assert_frame_equal(back, f, check_exact=True)
    assert back.attrs == {"systems": ["a", "b"]}
    assert frame_to_dict(None) is None and frame_from_dict(None) is None
