"""Gates, CLI verbs and the validate warning for score drift and label agreement."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from retrieval_eval import load_demo, validate, write_run
from retrieval_eval.analysis.decisions.gates import GateError, evaluate_gates, parse_gate
from retrieval_eval.datasets import demo_path

PY = sys.executable
ID = pd.StringDtype()


def cli(*argv, cwd=None):
    proc = subprocess.run([PY, "-m", "retrieval_eval", *map(str, argv)], capture_output=True, text=True, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The demo's dense run, and the same run with its scores squeezed (0.9 s + 0.03)."""
    tmp = tmp_path_factory.mktemp("shift")
    dense = load_demo().runs
    dense = dense[dense["system"] == "dense"]
    after = dense.assign(
        score=(dense["score"] * 0.9 + 0.03).round(6), system=pd.array(["dense-v2"] * len(dense), dtype=ID)
    )
    write_run(dense, tmp / "before.jsonl")
    write_run(after, tmp / "after.jsonl")
    return tmp / "before.jsonl", tmp / "after.jsonl"


# -- gates -------------------------------------------------------------------------------------


def test_score_shift_gate_is_a_ceiling():
    report = {"score_shift": {"psi": {"value": 0.1, "n": 75}, "ks": {"value": 0.31, "n": 75}}}
    ev = evaluate_gates(report, ["score-shift:psi:0.1", "score-shift:ks:0.3"])
    assert [r.status for r in ev.results] == ["PASS", "FAIL"]  # at the ceiling passes
    assert "above the ceiling" in ev.reasons[0]


def test_cutoff_shift_gate_reads_the_size_of_the_move_either_way():
    report = {"score_shift": {"cutoff_shift": {"value": -0.05, "n": 45}}}
    assert evaluate_gates(report, ["score-shift:cutoff_shift:0.02"]).status == "FAIL"
    assert evaluate_gates(report, ["score-shift:cutoff_shift:0.06"]).status == "PASS"


def test_label_agreement_gate_is_a_floor():
    report = {"label_agreement": {"kappa_binary": {"value": 0.55, "n": 118}}}
    assert evaluate_gates(report, ["label-agreement:kappa_binary:0.6"]).status == "FAIL"
    assert evaluate_gates(report, ["label-agreement:kappa_binary:0.5"]).status == "PASS"


def test_trust_gates_without_their_number_are_indeterminate():
    ev = evaluate_gates({"metrics": {}}, ["score-shift:psi:0.1", "label-agreement:alpha:0.6"])
    assert [r.status for r in ev.results] == ["INDETERMINATE", "INDETERMINATE"]
    marked = {"score_shift": {"psi": {"value": 0.0, "n": 5, "indeterminate": "only 5 queries"}}}
    assert evaluate_gates(marked, ["score-shift:psi:0.1"]).status == "INDETERMINATE"


@pytest.mark.parametrize(
    "expression", ["score-shift:psi", "score-shift:psy:0.1", "label-agreement:kappa:x", "score-shift:psi:nan"]
)
def test_malformed_trust_gates_are_refused(expression):
    with pytest.raises(GateError):
        parse_gate(expression)


# -- CLI ---------------------------------------------------------------------------------------


def test_score_shift_cli_fails_its_psi_gate_with_exit_1(runs):
    before, after = runs
    code, out, err = cli(
        "score-shift",
        "--run-before",
        before,
        "--run-after",
        after,
        "--judgments",
        demo_path("judgments.jsonl"),
        "--queries",
        demo_path("queries.jsonl"),
        "--gate",
        "score-shift:psi:0.1",
    )
    assert code == 1, err
    assert "psi" in out and "FAIL" in out


def test_score_shift_cli_passes_a_loose_gate_and_writes_json(runs, tmp_path):
    before, after = runs
    code, out, err = cli(
        "score-shift",
        "--run-before",
        before,
        "--run-after",
        after,
        "--gate",
        "score-shift:psi:0.5",
        "--json",
        "--out",
        tmp_path / "s.json",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["verdict"]["status"] == "PASS"
    assert json.loads((tmp_path / "s.json").read_text()) == data


def test_score_shift_cli_refuses_bad_input_with_exit_2(runs, tmp_path):
    before, _ = runs
    code, _, err = cli("score-shift", "--run-before", before, "--run-after", tmp_path / "none.jsonl")
    assert code == 2 and err.count("\n") == 1 and "none.jsonl" in err
    code, _, err = cli("score-shift", "--run-before", demo_path("runs.jsonl"), "--run-after", before)
    assert code == 2 and "--system" in err and "Traceback" not in err
    code, _, err = cli("score-shift", "--run-before", before, "--run-after", before, "--gate", "recall@10:0.5")
    assert code == 2 and "score-shift:... gates only" in err


def test_label_agreement_cli_fails_a_kappa_floor_on_the_demo():
    code, out, err = cli(
        "label-agreement",
        "--judgments",
        demo_path("judgments.jsonl"),
        "--other",
        demo_path("judgments_lexical.jsonl"),
        "--gate",
        "label-agreement:kappa_binary:0.6",
        "--json",
    )
    assert code == 1, err
    data = json.loads(out)
    assert data["label_agreement"]["kappa_binary"]["value"] < 0.6
    assert data["verdict"]["status"] == "FAIL"


def test_label_agreement_cli_with_one_labeler_is_a_usage_error():
    code, _, err = cli("label-agreement", "--judgments", demo_path("judgments.jsonl"))
    assert code == 2 and "two labelers" in err


# -- validate ----------------------------------------------------------------------------------


def test_validate_warns_when_two_labelers_agree_too_little():
    demo = load_demo()
    result = validate(demo.judgments, demo.judgments_lexical)
    codes = [i.code for i in result.issues]
    assert codes[-1] == "low-label-agreement" and result.ok
    assert [i.code for i in validate(demo.judgments).issues] == ["no-human-labels"]


def test_validate_is_quiet_when_labelers_agree():
    demo = load_demo()
    copy = demo.judgments.assign(labeled_by="human:second-reader")
    assert "low-label-agreement" not in [i.code for i in validate(demo.judgments, copy).issues]


def test_calibrate_cli_alpha_and_by_stratum_print_and_write_the_guarantee():
    args = (
        "calibrate",
        "--run",
        demo_path("runs.jsonl"),
        "--judgments",
        demo_path("judgments.jsonl"),
        "--queries",
        demo_path("queries.jsonl"),
        "--system",
        "bm25",
        "--alpha",
        "0.1",
        "--by-stratum",
    )
    code, out, err = cli(*args, "--color", "never")
    assert code == 0, err
    assert "guarantee" in out and "statements" in out
    code, out, err = cli(*args, "--json")
    rows = {r["stratum"]: r for r in json.loads(out)["guarantee"]}
    assert rows["_pooled"]["rank"] == 4 and rows["statements"]["source"] == "conformal"


def test_calibrate_cli_refuses_an_alpha_outside_0_1():
    code, _, err = cli(
        "calibrate",
        "--run",
        demo_path("runs.jsonl"),
        "--judgments",
        demo_path("judgments.jsonl"),
        "--queries",
        demo_path("queries.jsonl"),
        "--alpha",
        "1.5",
    )
    assert code == 2 and "--alpha" in err
