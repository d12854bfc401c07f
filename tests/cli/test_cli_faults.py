"""Inputs that used to crash the CLI or make it lie (issue 19, rules 10, 11, 12 and 16): empty
paths, an empty run, stdin named twice, gates on metrics that cannot exist, negative numbers in
exponent form, expect_none contradictions in compare, and error lines that name their file."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_eval as rev
from retrieval_eval.cli import app as cli
from retrieval_eval.io import empty_run

DEMO = Path(rev.__file__).parent / "datasets" / "demo"
J, RUN, QUERIES, CORPUS = (str(DEMO / n) for n in ("judgments.jsonl", "runs.jsonl", "queries.jsonl", "corpus.json"))


def main(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def one_error_line(err: str) -> str:
    """The one error line, after any warnings (a tied-scores warning, for one, is not an error)."""
    err = "".join(line for line in err.splitlines(True) if not line.startswith("retrieval-eval: warning: "))
    assert err.count("\n") == 1 and err.startswith("retrieval-eval: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return err


@pytest.fixture(scope="module")
def bm25(tmp_path_factory) -> str:
    """The demo run's bm25 system alone, in its own file."""
    path = tmp_path_factory.mktemp("runs") / "bm25.jsonl"
    lines = [line for line in Path(RUN).read_text().splitlines() if '"system":"bm25"' in line.replace(" ", "")]
    assert lines
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def conflicting_queries(tmp_path_factory) -> tuple[str, str]:
    """The demo queries with st-01 (which has relevant labels) marked expect_none."""
    rows = [json.loads(line) for line in Path(QUERIES).read_text().splitlines()]
    first = rows[0]["query_id"]
    rows[0]["expect_none"] = True
    path = tmp_path_factory.mktemp("queries") / "queries-ood.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path), first


# ---------------------------------------------------------------------------------------------
# Rule 10: empty things
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, option",
    [
        (["score", "--qrels", "", "--run", RUN], "--qrels"),
        (["score", "--judgments", J, "--run", RUN, "--queries", ""], "--queries"),
        (["score", "--judgments", J, "--run", RUN, "--corpus", ""], "--corpus"),
        (["score", "--judgments", J, "--run", RUN, "--baseline", ""], "--baseline"),
        (["score", "--judgments", J, "--run", ""], "--run"),
        (["score", "--judgments", J, "--run", RUN, "--out", ""], "--out"),
        (["drift", "--judgments", "", "--corpus", CORPUS], "--judgments"),
        (["calibrate", "--judgments", J, "--run", RUN, "--queries", ""], "--queries"),
        (["compare", "--judgments", J, "--run", RUN, "--baseline", ""], "--baseline"),
    ],
)
def test_rule10_an_empty_path_is_a_usage_error_naming_the_option(argv, option):
    code, out, err = main(*argv)
    assert code == 2
    assert f"{option} is empty" in one_error_line(err)


@pytest.mark.parametrize("gates", [[], ["--gate", "recall@10:0.0"]])
@pytest.mark.parametrize("empty", ["/dev/null", "file"])
def test_rule10_an_empty_run_is_indeterminate_never_pass(tmp_path, gates, empty):
    run = "/dev/null" if empty == "/dev/null" else str(tmp_path / "run.jsonl")
    if empty == "file":
        Path(run).write_text("")
    code, out, err = main("score", "--judgments", J, "--run", run, "--json", *gates)
    assert code == 1, err
    verdict = json.loads(out)["verdict"]
    assert verdict["status"] == "INDETERMINATE"
    assert any("no ranking for any judged query" in r for r in verdict["reasons"])


def test_rule10_an_empty_run_is_indeterminate_in_the_library_report():
    judgments = rev.read_judgments(J)
    report = rev.build_report(judgments, empty_run(), k=10)
    assert report.to_dict()["verdict"]["status"] == "INDETERMINATE"


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--judgments", "-", "--run", "-"],
        ["score", "--judgments", J, "--run", "-", "--queries", "-"],
        ["calibrate", "--judgments", "-", "--run", RUN, "--queries", "-"],
        ["compare", "--judgments", "-", "--run", RUN, "--run", "-"],
    ],
)
def test_rule10_stdin_named_for_two_inputs_is_refused(argv):
    code, out, err = main(*argv)
    assert code == 2
    assert "stdin" in one_error_line(err) and "only once" in err


# ---------------------------------------------------------------------------------------------
# Rule 11: gates on names that cannot exist; negative numbers in exponent form
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gate, closest",
    [
        ("foo:0.5", None),
        ("recall@abc:0.5", "recall@10"),
        ("recal@10:0.5", "recall@10"),
        ("negative_satisfction:0.9", None),
    ],
)
def test_rule11_a_gate_on_a_metric_the_report_lacks_is_indeterminate_naming_the_nearest(gate, closest):
    # SPEC A6: a well-formed gate over an absent metric is INDETERMINATE (exit 1), never a
    # usage error: the same gate is right for the next report that has it (a judged metric).
    code, out, err = main("score", "--judgments", J, "--run", RUN, "--system", "bm25", "--gate", gate, "--json")
    assert code == 1, err
    verdict = json.loads(out)["verdict"]
    assert verdict["status"] == "INDETERMINATE" and verdict["gates"][0]["status"] == "INDETERMINATE"
    reason = verdict["reasons"][-1]
    assert reason.startswith(f"{gate}: metric ") and "nearest in the report: " in reason
    if closest:
        assert closest in reason.split("nearest in the report: ")[1]


def test_rule11_a_real_metric_at_another_cutoff_stays_indeterminate():
    code, out, err = main(
        "score", "--judgments", J, "--run", RUN, "--system", "bm25", "-k", "10", "--gate", "recall@5:0.1", "--json"
    )
    assert code == 1, err
    gates = json.loads(out)["verdict"]["gates"]
    assert gates[0]["status"] == "INDETERMINATE"


@pytest.mark.parametrize("value", ["-1e308", "-2.5E+3", "-1e-3"])
def test_rule11_cutoff_accepts_negative_numbers_in_exponent_form(value):
    code, out, err = main(
        "score", "--judgments", J, "--run", RUN, "--system", "bm25", "--queries", QUERIES, "--cutoff", value, "--json"
    )
    assert code in (0, 1), err
    report = json.loads(out)
    assert report["calibration"]["cutoff"] == float(value)
    # every top-1 score is above a cutoff of -1e308: no negative is turned away
    if value == "-1e308":
        assert report["metrics"]["negative_satisfaction"]["value"] == 0.0


# ---------------------------------------------------------------------------------------------
# Rule 12 and rule 16: expect_none contradictions; every error line names its file
# ---------------------------------------------------------------------------------------------


def test_rule12_compare_refuses_an_expect_none_query_with_a_positive_label(conflicting_queries):
    queries, qid = conflicting_queries
    code, out, err = main("compare", "--judgments", J, "--run", RUN, "--queries", queries)
    assert code == 2
    line = one_error_line(err)
    assert f"{J}:" in line and queries in line and repr(qid) in line
    with pytest.raises(rev.FormatError, match="expect_none"):
        rev.compare(rev.read_judgments(J), rev.read_run(RUN), queries=rev.read_queries(queries))


@pytest.mark.parametrize("verb", ["score", "calibrate", "compare"])
def test_rule16_the_expect_none_conflict_names_both_files_and_the_line(conflicting_queries, verb):
    queries, qid = conflicting_queries
    code, out, err = main(verb, "--judgments", J, "--run", RUN, "--queries", queries)
    assert code == 2
    line = one_error_line(err)
    first = next(i for i, row in enumerate(Path(J).read_text().splitlines(), 1) if f'"{qid}"' in row)
    assert f"{J}:{first}: query {qid!r} is marked expect_none in {queries}" in line


def test_rule16_empty_input_messages_name_the_file(tmp_path, bm25):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    cases = [
        (["calibrate", "--judgments", J, "--run", empty, "--queries", QUERIES], "the run is empty"),
        (["compare", "--judgments", empty, "--run", RUN], "nothing to compare"),
        (["compare", "--judgments", J, "--run", bm25], "at least two systems"),
    ]
    for argv, what in cases:
        code, out, err = main(*argv)
        assert code == 2
        named = str(empty) if empty in argv else bm25
        assert f"{named}: " in one_error_line(err) and what in err, err


def test_rule16_a_whitespace_id_message_names_the_file(tmp_path):
    run = tmp_path / "spaced.jsonl"
    run.write_text('{"query_id": "q 1", "ranking": ["d1"]}\n')
    code, out, err = main("convert", "--run", run, "--to", "trec-run")
    assert code == 2
    assert f"{run}: " in one_error_line(err) and "whitespace" in err


def test_rule16_through_the_console_script_exit_2_and_one_line():
    """The same refusals through the installed entry point: exit 2, one line, no traceback."""
    done = subprocess.run(
        [sys.executable, "-m", "retrieval_eval", "score", "--qrels", "", "--run", RUN], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "--qrels is empty" in one_error_line(done.stderr)
