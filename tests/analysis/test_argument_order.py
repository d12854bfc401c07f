"""One argument order, (judgments, run), for every public function that takes both (issue 15
item 2), and a swapped pair refused with one line that says so."""

from __future__ import annotations

import inspect
import re

import pandas as pd
import pytest

import retrieval_eval as rev
from retrieval_eval import FormatError
from retrieval_eval.analysis.evaluation import build_report
from retrieval_eval.datasets import demo_path
from retrieval_eval.viz.widgets import explore_cutoff

ORDER = "the order is (judgments, run)"


def _public_functions():
    names = sorted(set(rev.__all__) | {"explore_cutoff"})
    out = []
    for name in names:
        obj = explore_cutoff if name == "explore_cutoff" else getattr(rev, name)
        if inspect.isfunction(obj):
            out.append((name, obj))
    return out


def test_every_public_function_taking_labels_and_a_run_takes_judgments_before_run():
    checked = []
    for name, fn in _public_functions():
        params = list(inspect.signature(fn).parameters)
        assert "runs" not in params, name
        if "judgments" in params and "run" in params:
            assert params.index("judgments") < params.index("run"), name
            checked.append(name)
    assert {
        "evaluate",
        "score",
        "score_by_stratum",
        "build_report",
        "calibrate",
        "cutoff_sweep",
        "score_rows",
        "compare",
        "compare_calibration",
        "explore_cutoff",
    } <= set(checked)


@pytest.mark.parametrize(
    "fn",
    [rev.calibrate, rev.cutoff_sweep, rev.score_rows, rev.evaluate, rev.compare, rev.compare_calibration, build_report],
)
def test_judgments_and_run_are_the_first_two_parameters(fn):
    assert list(inspect.signature(fn).parameters)[:2] == ["judgments", "run"]


def test_score_shift_takes_two_runs_and_its_labels_by_keyword_only():
    params = inspect.signature(rev.score_shift).parameters
    assert list(params)[:2] == ["run_before", "run_after"]
    for name in ("judgments", "queries", "negatives"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    demo = rev.load_demo()
    with pytest.raises(TypeError):
        rev.score_shift(demo.runs, demo.runs, demo.judgments, system=("dense", "dense"))


def test_the_keyword_names_are_judgments_and_run_everywhere():
    demo = rev.load_demo()
    cal = rev.calibrate(run=demo.runs, judgments=demo.judgments, queries=demo.queries, n_resamples=10)
    assert cal.summary.equals(rev.calibrate(demo.judgments, demo.runs, demo.queries, n_resamples=10).summary)
    cmp = rev.compare(run=demo.runs, judgments=demo.judgments, n_resamples=100, calibration=False)
    assert cmp.table.equals(rev.compare(demo.judgments, demo.runs, n_resamples=100, calibration=False).table)


# -- a swapped pair is refused ------------------------------------------------------------------


def _call(fn, judgments, run):
    if fn is rev.compare:
        return fn(judgments, run, n_resamples=10, calibration=False)
    if fn in (rev.calibrate, rev.compare_calibration):
        return fn(judgments, run, n_resamples=10)
    return fn(judgments, run)


FUNCTIONS = [rev.evaluate, rev.calibrate, rev.compare, rev.cutoff_sweep, rev.score_rows, build_report]
IDS = ["evaluate", "calibrate", "compare", "cutoff_sweep", "score_rows", "build_report"]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=IDS)
def test_a_run_frame_given_as_judgments_is_refused_naming_the_order(fn):
    demo = rev.load_demo()
    with pytest.raises(FormatError) as err:
        _call(fn, demo.runs, demo.judgments)  # the old (run, judgments) order
    message = str(err.value)
    assert message.startswith("judgments: this looks like a run (columns doc_id, rank, score), not labels")
    assert message.endswith(ORDER) and "\n" not in message


@pytest.mark.parametrize("fn", FUNCTIONS, ids=IDS)
def test_a_labels_frame_given_as_the_run_is_refused_naming_the_order(fn):
    demo = rev.load_demo()
    with pytest.raises(FormatError) as err:
        _call(fn, demo.judgments, demo.judgments)
    message = str(err.value)
    assert message.startswith("run: this looks like labels (columns doc_uri, relevance), not a run")
    assert message.endswith(ORDER) and "\n" not in message


@pytest.mark.parametrize("fn", FUNCTIONS, ids=IDS)
def test_a_run_file_given_as_judgments_is_refused_naming_the_order(fn):
    runs, judgments = str(demo_path("runs.jsonl")), str(demo_path("judgments.jsonl"))
    with pytest.raises(FormatError) as err:
        _call(fn, runs, judgments)
    message = str(err.value)
    assert message.startswith(f"{runs}: looks like a JSONL run (run), not labels")
    assert message.endswith(ORDER) and "\n" not in message


@pytest.mark.parametrize("fn", FUNCTIONS, ids=IDS)
def test_a_labels_file_given_as_the_run_is_refused_naming_the_order(fn):
    judgments = str(demo_path("judgments.jsonl"))
    with pytest.raises(FormatError) as err:
        _call(fn, judgments, judgments)
    message = str(err.value)
    assert message.startswith(f"{judgments}: looks like judgments JSONL (labels), not a run")
    assert message.endswith(ORDER) and "\n" not in message


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    demo, folder = rev.load_demo(), tmp_path_factory.mktemp("tables")
    paths = {}
    for kind in ("parquet", "csv"):
        run, labels = folder / f"run.{kind}", folder / f"judgments.{kind}"
        if kind == "parquet":
            rev.write_parquet(demo.runs, run)
            rev.write_parquet(demo.judgments, labels)
        else:
            demo.runs.to_csv(run, index=False)
            demo.judgments[["query_id", "doc_uri", "relevance"]].to_csv(labels, index=False)
        paths[kind] = (str(run), str(labels))
    return paths


@pytest.mark.parametrize("kind", ["parquet", "csv"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=IDS)
def test_a_run_table_given_as_judgments_is_refused_naming_the_order(fn, kind, tables):
    run, labels = tables[kind]
    with pytest.raises(FormatError) as err:
        _call(fn, run, labels)
    assert str(err.value) == (
        f"{run}: this looks like a run (columns doc_id, rank, score), not labels; pass it with --run (as_run); {ORDER}"
    )


@pytest.mark.parametrize("kind", ["parquet", "csv"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=IDS)
def test_a_labels_table_given_as_the_run_is_refused_naming_the_order(fn, kind, tables):
    run, labels = tables[kind]
    with pytest.raises(FormatError) as err:
        _call(fn, labels, labels)
    assert str(err.value) == (
        f"{labels}: this looks like labels (columns doc_uri, relevance), not a run; "
        f"pass it with --judgments or --qrels (as_judgments); {ORDER}"
    )


def test_pyterrier_frames_swapped_are_refused_in_their_own_column_names():
    run = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [2.0, 1.0], "rank": [0, 1]})
    qrels = pd.DataFrame({"qid": ["q1"], "docno": ["d1"], "label": [1]})
    with pytest.raises(FormatError, match=r"^judgments: this looks like a run \(columns docno, rank, score\)"):
        rev.as_judgments(run)
    with pytest.raises(FormatError, match=r"^run: this looks like labels \(columns docno, label\)"):
        rev.as_run(qrels)
    assert rev.evaluate(qrels, run, k=(1,)).summary["recall@1"].iloc[0] == 1.0


def test_lists_of_dicts_swapped_are_refused_naming_the_order():
    run = [{"query_id": "q1", "ranking": [{"doc_id": "d1", "score": 1.0}]}]
    labels = [{"query_id": "q1", "doc_uri": "d1", "relevance": 1}]
    with pytest.raises(
        FormatError,
        match=r"^judgments: this looks like a run \(columns ranking\), not labels; " + re.escape(ORDER) + "$",
    ):
        rev.evaluate(run, labels)
    with pytest.raises(
        FormatError,
        match=r"^run: this looks like labels \(columns doc_uri, relevance\), not a run; " + re.escape(ORDER) + "$",
    ):
        rev.calibrate(labels, labels)


def test_frames_that_are_not_swapped_still_read():
    """The rule refuses only a clear swap: ir_measures' qrels columns (query_id, doc_id,
    relevance) are labels, and a run without rank or score is still a run (ranked in row
    order)."""
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [2]})
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d1"]})
    assert rev.as_judgments(qrels)["doc_uri"].tolist() == ["d1"]
    assert rev.as_run(run)["rank"].tolist() == [1, 2]
    assert rev.evaluate(qrels, run, k=(2,)).summary["recall@2"].iloc[0] == 1.0


def test_the_cli_message_for_a_file_of_the_other_kind_names_the_option_not_the_order():
    from retrieval_eval.io.convert import read_labels

    runs = str(demo_path("runs.jsonl"))
    with pytest.raises(FormatError) as err:
        read_labels(runs, label=runs)
    assert str(err.value).endswith("pass it with --run (as_run)")


def test_the_cli_refuses_a_run_table_given_as_labels_naming_the_option(tables):
    import subprocess
    import sys

    run, labels = tables["parquet"]
    done = subprocess.run(
        [sys.executable, "-m", "retrieval_eval", "score", "--judgments", run, "--run", labels],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        f"{run}: this looks like a run (columns doc_id, rank, score), not labels; pass it with --run (as_run)"
    ) in done.stderr and "the order" not in done.stderr
